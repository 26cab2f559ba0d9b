"""A plain Triton GEMM to compare tilec against: C = A @ B, f32 accumulation, C in the inputs' dtype.

    from triton_matmul import triton_matmul, winning_kernel
    triton_matmul(a, b, c)          # a: M x K, b: K x N, c: M x N (torch CUDA tensors, any strides)
    winning_kernel(a, b, c)         # which autotune config won for this shape, and wgmma or mma.sync

One program per BLOCK_M x BLOCK_N tile of C, tiles visited in groups of
GROUP_M rows of tiles (programs that run together share columns of B in L2),
a K loop of ``tl.dot`` into an f32 accumulator, masked loads and stores on
every edge. The autotune set is small on purpose (every config costs a
compile of 1-2 s, per dtype): large tiles for big squares and the LLM shapes,
smaller ones for the decode shapes (M = 16, 128), where large tiles leave
most SMs idle.

Which tensor-core instruction Triton picks is its own decision: on sm_90,
``wgmma`` when the block has whole warpgroups (num_warps % 4 == 0) and
BLOCK_M is a multiple of 64, else ``mma.sync``; with ``DISABLE_MMA_V3=1`` in
the environment at compile time, always ``mma.sync``. :func:`winning_kernel`
reads the answer out of the compiled kernel's PTX rather than guessing.

``bench/gemm.py`` uses this in worker processes (one per DISABLE_MMA_V3
setting, each with its own TRITON_CACHE_DIR).
"""

from __future__ import annotations

import math
import re
from typing import Any

import triton
import triton.language as tl

# (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages)
CONFIG_TABLE = (
    (128, 256, 64, 8, 3),
    (256, 128, 64, 8, 3),
    (128, 128, 64, 4, 4),
    (128, 128, 32, 4, 4),
    (64, 128, 64, 4, 4),
    (64, 64, 64, 4, 4),
    (32, 64, 128, 4, 4),
    (16, 32, 128, 4, 4),
)
GROUP_M = 8


def _configs() -> list[triton.Config]:
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": GROUP_M},
                          num_warps=w, num_stages=s) for bm, bn, bk, w, s in CONFIG_TABLE]


@triton.autotune(configs=_configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Map the 1-D program id to a tile (tm, tn): programs walk down GROUP_M tile rows
    # before moving one tile column right, so a wave of programs reuses the same B columns.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    group_first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - group_first_m, GROUP_M)
    in_group = pid % per_group
    tm = group_first_m + in_group % group_rows
    tn = in_group // group_rows

    rows = tm * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tn * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_ok = rows[:, None] < M
    col_ok = cols[None, :] < N
    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        k_left = K - k0
        a = tl.load(a_tile, mask=row_ok & (ks[None, :] < k_left), other=0.0)
        b = tl.load(b_tile, mask=(ks[:, None] < k_left) & col_ok, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    c_tile = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=row_ok & col_ok)


def _grid(m: int, n: int):
    return lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)


def _args(a, b, c) -> tuple:
    m, k = a.shape
    kb, n = b.shape
    if k != kb or tuple(c.shape) != (m, n):
        raise ValueError(f"triton_matmul: shapes a {tuple(a.shape)}, b {tuple(b.shape)}, c {tuple(c.shape)} "
                         "do not make C = A @ B")
    return (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))


def launch(a, b, c) -> Any:
    """Run the autotuned kernel (tuning on the first call per shape and dtype); returns Triton's
    return value, the CompiledKernel of the config that ran in Triton 3.x."""
    m, n = c.shape
    return matmul_kernel[_grid(m, n)](*_args(a, b, c))


def triton_matmul(a, b, c):
    """C = A @ B into ``c``; returns ``c``."""
    launch(a, b, c)
    return c


def fixed_config_launcher(a, b, c, config: "triton.Config"):
    """A zero-argument launcher of the plain JIT kernel with one config (no autotuner in the call path),
    for measuring the launch cost of the kernel itself."""
    jit_fn = matmul_kernel.fn
    m, n = c.shape
    args = _args(a, b, c)
    kwargs = config.all_kwargs()
    grid = _grid(m, n)(kwargs)
    return lambda: jit_fn[grid](*args, **kwargs)


# ---------------------------------------------------------------- what ran


_WGMMA = re.compile(r"\bwgmma\.mma_async\b")
_MMA_SYNC = re.compile(r"(?<![\w.])mma\.sync\.aligned\b")


def instruction_kind(ptx: str | None) -> dict:
    """Count tensor-core instructions in PTX: ``kind`` is wgmma, mma.sync, none or unknown (no PTX)."""
    if not ptx:
        return {"kind": "unknown", "wgmma": None, "mma_sync": None}
    wg = len(_WGMMA.findall(ptx))
    ms = len(_MMA_SYNC.findall(ptx))
    kind = "wgmma" if wg else ("mma.sync" if ms else "none")
    return {"kind": kind, "wgmma": wg, "mma_sync": ms}


def describe_config(config: Any) -> str:
    """``128x256x64 w8 s3`` for a triton.Config of this kernel."""
    try:
        kw = config.kwargs
        return f"{kw['BLOCK_M']}x{kw['BLOCK_N']}x{kw['BLOCK_K']} w{config.num_warps} s{config.num_stages}"
    except (AttributeError, KeyError, TypeError):
        return str(config)


def chosen_config(a, b, c) -> Any:
    """The autotuner's choice for this call's key: ``best_config`` of the last run, checked against
    the autotuner's cache (its key is M, N, K and then the dtypes of the tensor arguments)."""
    cache = getattr(matmul_kernel, "cache", {}) or {}
    m, k = a.shape
    n = b.shape[1]
    for key, config in cache.items():
        if tuple(key[:3]) == (m, n, k) and all(str(a.dtype) == str(x) for x in key[3:4]):
            return config
    return getattr(matmul_kernel, "best_config", None)


def _ptx_of(compiled: Any) -> str | None:
    try:
        return compiled.asm["ptx"]
    except (AttributeError, KeyError, TypeError):
        return None


def _compiled_in_jit_cache(config: Any) -> Any:
    """Fallback when the call did not return a CompiledKernel: the one kernel in the JIT's cache whose
    warps and stages match ``config`` (None if there are none or several). Triton 3.0 keeps
    ``jit.cache[device][key]``; 3.1+ ``jit.device_caches[device][0][key]``."""
    jit_fn = matmul_kernel.fn
    kernels = []
    for per_device in (getattr(jit_fn, "device_caches", None) or {}).values():
        kernels += list(per_device[0].values()) if isinstance(per_device, tuple) else []
    for per_device in (getattr(jit_fn, "cache", None) or {}).values():
        kernels += list(per_device.values()) if isinstance(per_device, dict) else []
    found = []
    for k in kernels:
        md = getattr(k, "metadata", None)
        if md is not None and getattr(md, "num_warps", None) == config.num_warps \
                and getattr(md, "num_stages", None) == config.num_stages:
            found.append(k)
    return found[0] if len(found) == 1 else None


def _finite(t: Any) -> Any:
    """Timings as plain JSON: a config that failed to compile is timed as inf by the autotuner; None here."""
    values = list(t) if isinstance(t, (list, tuple)) else [t]
    values = [float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None for x in values]
    return values if isinstance(t, (list, tuple)) else values[0]


def winning_kernel(a, b, c) -> dict:
    """Which config the autotuner chose for this shape/dtype, the instruction its PTX uses, and its
    registers/spills. Runs the kernel once more (writes ``c``). Never raises: missing pieces are
    reported as unknown, with the reason under ``note``."""
    info: dict = {"config": "unknown", "instr": instruction_kind(None)}
    try:
        compiled = launch(a, b, c)
    except Exception as e:  # noqa: BLE001 - a report, not a check
        info["note"] = f"launch failed: {type(e).__name__}: {e}"
        return info
    config = chosen_config(a, b, c)
    if config is not None:
        info["config"] = describe_config(config)
    ptx = _ptx_of(compiled)
    if ptx is None and config is not None:
        compiled = _compiled_in_jit_cache(config)
        ptx = _ptx_of(compiled)
        info["note"] = "PTX from the JIT cache" if ptx else "no PTX found (call returned no CompiledKernel)"
    info["instr"] = instruction_kind(ptx)
    for attr in ("n_regs", "n_spills"):
        value = getattr(compiled, attr, None)
        if isinstance(value, int):
            info[attr] = value
    timings = getattr(matmul_kernel, "configs_timings", None)
    if isinstance(timings, dict):
        # the last tuning run's timings (ms: median, p20, p80), only meaningful right after tuning this key
        info["tuning_ms"] = {describe_config(cfg): _finite(t) for cfg, t in timings.items()}
    return info


__all__ = ["CONFIG_TABLE", "chosen_config", "describe_config", "fixed_config_launcher", "instruction_kind", "launch",
           "matmul_kernel", "triton_matmul", "winning_kernel"]
