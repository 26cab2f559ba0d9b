"""``tilec.attention``: flash attention (forward), written in tilec.lang.

    o = tilec.attention(q, k, v, causal=False, scale=None)            # like F.scaled_dot_product_attention
    o, lse = tilec.attention(q, k, v, return_lse=True)                # lse: (B, H, Sq) f32, natural log
    k = tilec.attention_kernel(q, k, v, arch="sm_80")                 # the compiled kernel, no GPU needed

q is (B, Hq, Sq, D), k and v (B, Hkv, Sk, D) with Hq a multiple of Hkv (GQA/MQA), any strides
(e.g. (B, S, H, D) tensors transposed), f16 or bf16. Causal masking is top-left aligned, like
``is_causal=True`` of PyTorch's SDPA: query i sees keys 0..i.

The kernel (:data:`attention_fwd`) is FlashAttention-2's schedule on the register algebra. Each
block owns BM query rows of one (batch, head), and each warp owns 16 of those rows. The K/V tiles
of a ``tl.range`` loop are staged through shared memory: ``num_stages`` turns them into a
``cp.async`` pipeline and ``tile-swizzle`` picks conflict-free layouts. Per K/V tile:

- ``S = q @ k.T`` on the tensor cores (``tl.mma``, ``trans_b``);
- the online softmax: a row maximum and a rescaled row sum, carried as register vectors;
- ``O = O * alpha + P @ V``, where P goes from the accumulator's fragment to the A operand's (a
  layout conversion that ``tile-layout`` places).

With causal masking, the tiles past the block's last row are not visited. Nothing below the
language is specific to attention.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import tilec.lang as tl
from tilec.runtime.arrays import is_torch_tensor

LOG2E = 1.4426950408889634


@tl.kernel(num_warps=4, num_stages=2)
def attention_fwd(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
                  GROUP: tl.constexpr, CAUSAL: tl.constexpr):
    """``o[b, h] = softmax(q[b, h] @ k[b, h // GROUP].T * scale) @ v[b, h // GROUP]``, BM query rows a block."""
    heads = q.shape[1]
    bh = tl.block_id(1)
    b, h = bh // heads, bh % heads
    qh, kh, vh, oh = q[b, h], k[b, h // GROUP], v[b, h // GROUP], o[b, h]
    n = kh.shape[0]
    row0 = tl.block_id(0) * BM
    wrow = row0 + tl.warp_id() * 16  # this warp's 16 query rows
    qt = tl.load(qh, (wrow, 0), shape=(16, D))
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m = tl.full((16,), float("-inf"), axis=0)  # running maximum of each row (log2 units)
    l = tl.zeros((16,), axis=0)  # running sum of each row
    acc = tl.zeros((16, D))
    qk_scale = scale * LOG2E  # exp(x) = exp2(x log2 e): the exponent is one multiply-add and an ex2
    hi = tl.minimum(n, row0 + BM) if CAUSAL else n  # causal: no tile past the block's last row
    for n0 in tl.range(0, hi, BN):
        tl.copy(kh, (n0, 0), sk)
        tl.copy(vh, (n0, 0), sv)
        tl.barrier()
        s = tl.mma(qt, tl.load(sk), tl.zeros((16, BN)), trans_b=True) * qk_scale
        cols = tl.iota((16, BN), 1, n0)
        keep = cols < n
        if CAUSAL:
            keep = keep & (cols <= tl.iota((16, BN), 0, wrow))
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.row_max(s))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row masked so far: e^(-inf - -inf) is NaN
        p = tl.exp2(s - m_safe[:, None])
        alpha = tl.exp2(m - m_safe)
        l = l * alpha + tl.row_sum(p)
        acc = tl.mma(p.to(q.dtype), tl.load(sv), acc * alpha[:, None])
        m = m_new
        tl.barrier()
    tl.store(oh, (wrow, 0), (acc / l[:, None]).to(o.dtype))
    if lse is not None:
        tl.store(lse[b, h], (wrow,), (m + tl.log2(l)) * (1.0 / LOG2E))


HEAD_DIMS = (64, 128)
"""Head dimensions the kernel is tuned and tested for (any multiple of 16 up to 256 compiles)."""

DTYPES = ("float16", "bfloat16")

OWNER = "tilec.attention"


def config(d: int) -> dict[str, int]:
    """Block sizes for head dimension ``d``: 64 query rows a block (4 warps of 16), K/V tiles of 64 rows
    for d <= 64, else 32: each warp holds its K and V operand tiles whole in registers (a 64 x 128 f16
    tile is 128 registers a thread, past the budget with the accumulator and the stages' addresses)."""
    return {"BM": 64, "BN": 64 if d <= 64 else 32, "D": d}


def _check(q: Any, k: Any, v: Any) -> tuple[int, int, int, int, int, int]:
    """(B, Hq, Hkv, Sq, Sk, D), or a TypeError/ValueError naming the argument."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        shape = getattr(x, "shape", None)
        if shape is None or len(shape) != 4:
            raise ValueError(f"{OWNER}: {name} must be a 4-D array (B, H, S, D), got shape {shape}")
        dtype = str(getattr(x, "dtype", "")).removeprefix("torch.")
        if dtype not in DTYPES:
            raise TypeError(f"{OWNER}: {name} has dtype {dtype or type(x).__name__}; expected float16 or bfloat16")
    if not (str(q.dtype) == str(k.dtype) == str(v.dtype)):
        raise TypeError(f"{OWNER}: q, k and v must share a dtype, got {q.dtype}, {k.dtype}, {v.dtype}")
    b, hq, sq, d = (int(x) for x in q.shape)
    bk, hkv, sk, dk = (int(x) for x in k.shape)
    if tuple(k.shape) != tuple(v.shape):
        raise ValueError(f"{OWNER}: k and v must have one shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    if bk != b or dk != d:
        raise ValueError(f"{OWNER}: k is {tuple(k.shape)}, expected batch {b} and head dimension {d} like q")
    if hq % hkv:
        raise ValueError(f"{OWNER}: q has {hq} heads, k and v {hkv}: q's heads must be a multiple of k's (GQA)")
    if d % 16 or not 16 <= d <= 256:
        raise ValueError(f"{OWNER}: head dimension {d}; expected a multiple of 16 up to 256 (64 and 128 are tuned)")
    if min(b, hq, sq, sk) == 0:
        raise ValueError(f"{OWNER}: empty input (q {tuple(q.shape)}, k {tuple(k.shape)})")
    return b, hq, hkv, sq, sk, d


def _arguments(q: Any, k: Any, v: Any, out: Any, lse: Any, causal: bool, scale: float | None) -> tuple[tuple, dict]:
    b, hq, hkv, sq, sk, d = _check(q, k, v)
    scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    return (q, k, v, out, lse, scale), {**config(d), "GROUP": hq // hkv, "CAUSAL": bool(causal)}


def grid(q: Any) -> tuple[int, int]:
    b, hq, sq, d = (int(x) for x in q.shape)
    return (-(-sq // config(d)["BM"]), b * hq)


def attention_kernel(q: Any, k: Any, v: Any, *, causal: bool = False, scale: float | None = None,
                     return_lse: bool = False, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` :func:`attention` runs for these arguments (no GPU needed)."""
    lse = _lse_like(q) if return_lse else None
    args, constexprs = _arguments(q, k, v, q, lse, causal, scale)
    return attention_fwd.compile(*args, arch=arch, **constexprs)


def _lse_like(q: Any) -> Any:
    """An f32 (B, H, Sq) array from q's library and device, for the log-sum-exp of each row."""
    shape = tuple(int(x) for x in q.shape[:3])
    if is_torch_tensor(q):
        # optional: torch is installed when q is a torch tensor
        import torch

        return torch.empty(shape, dtype=torch.float32, device=q.device)
    return np.empty(shape, np.float32)


def attention(q: Any, k: Any, v: Any, causal: bool = False, scale: float | None = None, return_lse: bool = False,
              *, out: Any = None, stream: Any = None) -> Any:
    """Scaled dot-product attention of q over k, v (see the module docstring); ``out`` (q's shape and
    dtype) is written when given. Returns ``out``, or ``(out, lse)`` with ``return_lse``."""
    if out is None:
        out = q.new_empty(tuple(q.shape)) if hasattr(q, "new_empty") else None
        if out is None:
            raise TypeError(f"{OWNER}: pass torch tensors (or out= for other arrays)")
    elif tuple(out.shape) != tuple(q.shape) or str(out.dtype) != str(q.dtype):
        raise ValueError(f"{OWNER}: out is {tuple(out.shape)} {out.dtype}; expected q's {tuple(q.shape)} {q.dtype}")
    lse = _lse_like(q) if return_lse else None
    args, constexprs = _arguments(q, k, v, out, lse, causal, scale)
    attention_fwd[grid(q)](*args, stream=stream, **constexprs)
    return (out, lse) if return_lse else out


__all__ = ["attention", "attention_fwd", "attention_kernel", "config", "grid"]
