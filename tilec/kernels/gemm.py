"""``tilec.matmul``: C = act(op(A) @ op(B) + bias) on torch / cupy / numpy arrays.

::

    c = tilec.matmul(a, b)                                   # f16/bf16 (tensor cores) or f32 (SIMT FMA)
    c = tilec.matmul(a, b, bias=bias, activation="relu")     # bias per column of C (length N)
    c = tilec.matmul(a, b, trans_b=True, out_dtype=torch.float32, allow_tf32=True)
    tilec.matmul(a, b, out=c)                                # write into c (M x N, its dtype = out_dtype)

How a call runs:

1. **Checks** (:func:`plan_matmul` in :mod:`tilec.kernels.gemm_plan`, pure: no GPU, no compile): 2-D operands
   of one dtype among f16/bf16/f32, K of op(A) = K of op(B), a bias of N
   elements, an ``out`` of shape M x N and dtype ``out_dtype`` (default: the
   inputs'), all device arrays on one CUDA device (numpy arrays are copied;
   CPU torch tensors are refused), no negative strides. Every problem is a
   TypeError (kind, dtype) or ValueError (shape, device, strides) that
   names the argument and the numbers.
2. **Layouts**, per operand, without copying or padding: op(A) is M x K with
   element strides (sm, sk). Row-major (``sk == 1``) is handed to the
   kernel as is; column-major (``sm == 1``, e.g. ``x.T`` of a contiguous
   ``x``) as its K x M transpose with ``transpose_a`` (so the kernel's
   copies read contiguous rows); anything else as the M x K view with both
   strides (the kernel's element-wise copy paths). ``trans_a``/``trans_b``
   only say which matrix the user means; they compose with this.
3. **Config** (:mod:`tilec.kernels.gemm_config`): a table per (M, N, K, dtype),
   only configurations whose registers ptxas fits without spills. A config
   is the ``tile-to-ptx`` pass with its options set; it is compiled as is.
4. **IR** (:func:`build_module` in :mod:`tilec.kernels.gemm_ir`): ``func.func`` with one ``tile.matmul`` and
   its epilogue built op by op with xDSL's builders (``arith.extf`` of the
   bias element if it is not f32, ``arith.addf``, ``arith.maximumf`` with 0.0
   for ReLU, ``arith.truncf`` to the output type, ``tile.yield``).
5. **Compile** once per (input dtype, output dtype, bias dtype, activation,
   kernel transposes, config, arch) — strides and alignment are runtime
   arguments that the kernel checks in its prologue, so they need no kernel
   of their own — kept in a process-wide dict (:func:`compile_matmul`), on
   top of the on-disk cubin cache of :func:`tilec.compile`.
6. **Launch** on ``ceil(M/BM) * ceil(N/BN)`` blocks; each array becomes
   pointer + extents + strides (the gl ABI, :mod:`tilec.dialects.abi`, and
   :mod:`tilec.runtime.gl_views`). torch
   inputs run on torch's current stream unless ``stream=`` is given.
7. **Again, faster**: when every array is a torch tensor, the checked call
   is kept, keyed by what steps 1-5 decided from (each tensor's class,
   shape, strides, dtype and device, and every option; :func:`_fast_key`),
   with its launch prepared (:meth:`tilec.runtime.Kernel.prepare`: grid,
   block, shared memory, extents and strides in place). A later call with
   the same key only reads the tensors' addresses (each checked for
   alignment), gets torch's current stream and launches: a few
   microseconds of Python instead of a few hundred. Any other call, or a
   new key, takes steps 1-6 (which also give every error its message).

``autotune=True`` replaces the table of step 3 by :func:`autotune`
(``tilec.autotune``: timed once per problem and GPU with the shared tuner
:mod:`tilec.kernels.autotune`, then remembered in memory and on disk; the
GEMM's key, candidates and measure are :mod:`tilec.kernels.gemm_tune`).

``tilec.matmul``, ``tilec.matmul_kernel`` and ``tilec.autotune`` are
:func:`matmul`, :func:`matmul_kernel` and :func:`autotune`; the parts
(:func:`plan_matmul`, :func:`compile_matmul`, ...) are reached here, as
``tilec.kernels.gemm.plan_matmul``.

Without a GPU, :func:`matmul` raises :class:`tilec.runtime.NoDeviceError`
after the checks; :func:`matmul_kernel` (same arguments) still returns the
:class:`~tilec.api.CompiledKernel`, so its PTX can be read and assembled.
"""


from __future__ import annotations

import dataclasses
import functools
import math
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from tilec.api import compile as tilec_compile
from tilec.api import target_arch
from tilec.kernels import gemm_tune
from tilec.kernels.autotune import TuneResult, tune
from tilec.kernels.gemm_config import (
    MatmulConfig,
    SplitConfig,
    choose_config,
    device_sm_count,
    device_smem_limit,
    has_bulk_copies,
)
from tilec.kernels.gemm_ir import ACTIVATIONS, MatmulSpec, build_epilogue, build_module
from tilec.kernels.gemm_plan import (
    KernelView,
    MatmulPlan,
    Operand,
    allocate_output,
    default_stream,
    orient,
    plan_matmul,
)
from tilec.kernels.fast_path import LOW_MASK, FastCache, OutputGuard, tensor_key
from tilec.kernels.fast_path import prepare as prepare_fast_call
from tilec.runtime import NoDeviceError, has_device, no_device_reason
from tilec.runtime.arrays import is_torch_tensor
from tilec.runtime.gl_views import GlView, expand


def _where(name: str) -> str:
    return f"tilec.matmul: {name}"


# ---------------------------------------------------------------- compiling, cached


_KERNELS: dict[tuple, Any] = {}
_KERNELS_LOCK = threading.Lock()


def compile_matmul(spec: MatmulSpec, config: MatmulConfig, *, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` of ``spec`` with ``config`` for ``arch``, compiled once per process."""
    arch = target_arch(arch)
    if config.wgmma and arch == "sm_90":
        arch = "sm_90a"  # the warpgroup MMA is an sm_90a instruction
    if config.wgmma and arch != "sm_90a":
        raise ValueError(f"tilec.matmul: config {config.describe()} uses the warpgroup MMA, which needs sm_90a; "
                         f"the target is {arch}")
    if config.bulk and not has_bulk_copies(arch):
        raise ValueError(f"tilec.matmul: config {config.describe()} uses bulk tensor copies, which need sm_90; "
                         f"the target is {arch}")
    key = (spec, config, arch)
    with _KERNELS_LOCK:
        kernel = _KERNELS.get(key)
        if kernel is None:
            kernel = tilec_compile(build_module(spec), pipeline=config, arch=arch)
            _KERNELS[key] = kernel
    return kernel


def compile_reduce(spec: Any, *, arch: str | None = None) -> Any:
    """The split-K reduction kernel of ``spec`` (:class:`~tilec.kernels.splitk.ReduceSpec`), compiled once."""
    from tilec.kernels.splitk_ir import build_reduce_module  # lazy: ~20 ms (tilec.lang), only split calls need it

    arch = target_arch(arch)
    key = ("splitk_reduce", spec, arch)
    with _KERNELS_LOCK:
        kernel = _KERNELS.get(key)
        if kernel is None:
            kernel = _KERNELS[key] = tilec_compile(build_reduce_module(spec), arch=arch)
    return kernel


def _split_launches(plan: MatmulPlan, result: Any, workspace: Any) -> list[tuple[Any, list[Any], tuple, list[str]]]:
    """The two launches of a split call: (kernel, flat arguments, grid, gl parameter names) each."""
    va, vb = plan.slice_views()
    gemm_kernel = compile_matmul(plan.gemm_spec(), plan.config)
    # N columns in rows of N rounded up to whole 16-byte vectors (plan.workspace_align: 16-byte rows when N
    # is a multiple of 4); the batched matmul's C and the reduction's input, both M x N
    row = plan.workspace_row()
    ws = GlView(workspace, (plan.split_k, plan.m, plan.n), (plan.m * row, row, 1))
    first = (gemm_kernel, expand(gemm_kernel, va.gl(), vb.gl(), ws), (plan.config.grid(plan.m, plan.n), plan.split_k, 1),
             ["a", "b", "c"])
    rspec = plan.reduce_spec(result)
    reduce_kernel = compile_reduce(rspec)
    views = [ws, plan.output_view(result).gl()]
    names = ["ws", "c"]
    for name, view in (("bias", plan.bias), *zip(("scale_a", "scale_b"), plan.scales)):
        if view is not None:
            views.append(view.gl())
            names.append(name)
    second = (reduce_kernel, expand(reduce_kernel, *views), (rspec.grid(plan.m, plan.n), 1, 1), names)
    return [first, second]


def allocate_workspace(plan: MatmulPlan, like: Any) -> Any:
    """The f32 ``split_k x M x N`` partial products on ``like``'s device, from torch's caching allocator on
    the current stream (split calls take torch tensors only); rows of :meth:`MatmulPlan.workspace_row`."""
    torch = sys.modules["torch"]
    return torch.empty((plan.split_k, plan.m, plan.workspace_row()), dtype=torch.float32, device=like.device)


def cached_kernels() -> dict[tuple, Any]:
    """A copy of the in-process cache: (spec, config, arch) → CompiledKernel."""
    with _KERNELS_LOCK:
        return dict(_KERNELS)


def clear_cache() -> None:
    """Forget the compiled kernels and the prepared calls of this process (the disk cubin cache stays)."""
    with _KERNELS_LOCK:
        _KERNELS.clear()
    _FAST.clear()


def launch_grid(plan: MatmulPlan, kernel: Any) -> int:
    """Blocks to launch: the plan's, for clusters no more whole clusters than run at once (a persistent
    kernel's clusters stride over the tiles, so fewer is as right, and none waits for a free GPC)."""
    c = math.prod(plan.config.cluster)
    if c <= 1 or not plan.config.persistent:  # a block a tile: every tile needs its block
        return plan.grid
    return min(plan.grid, c * max(1, kernel.max_active_clusters()))


# ---------------------------------------------------------------- the entry points


def _unsplit(config: Any, split_k: Any) -> tuple[Any, Any]:
    """``(config, split_k)`` with a :class:`SplitConfig` taken apart (its ``split_k`` must agree with one given)."""
    if not isinstance(config, SplitConfig):
        return config, split_k
    if split_k is not None and split_k != config.split_k:
        raise ValueError(f"{_where('split_k')}={split_k!r} but config={config.describe()!r} runs "
                         f"{config.split_k} slices; pass one of them")
    return config.config, config.split_k


def matmul_kernel(a: Any, b: Any, *, out: Any = None, bias: Any = None, activation: str | None = None,
                  out_dtype: Any = None, trans_a: bool = False, trans_b: bool = False, allow_tf32: bool = False,
                  config: MatmulConfig | SplitConfig | None = None, arch: str | None = None, scale_a: Any = None,
                  scale_b: Any = None, split_k: int | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` that :func:`matmul` would launch for these arguments.

    Works without a GPU (the arrays may be numpy arrays standing in for the
    shapes and dtypes); ``arch`` defaults to the GPU's, else sm_80. A split
    call (``split_k``, or the heuristic's) launches two: this gives the first,
    the batched matmul of K's slices (the second is :func:`compile_reduce` of
    ``plan_matmul(...).reduce_spec(out)``).
    """
    config, split_k = _unsplit(config, split_k)
    plan = plan_matmul(a, b, out=out, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a,
                       trans_b=trans_b, allow_tf32=allow_tf32, config=config, arch=arch, scale_a=scale_a,
                       scale_b=scale_b, split_k=split_k)
    if plan.split_k > 1:
        return compile_matmul(plan.gemm_spec(), plan.config, arch=arch)
    return compile_matmul(plan.spec, plan.config, arch=arch)


def matmul(a: Any, b: Any, *, out: Any = None, bias: Any = None, activation: str | None = None,
           out_dtype: Any = None, trans_a: bool = False, trans_b: bool = False, allow_tf32: bool = False,
           config: MatmulConfig | SplitConfig | None = None, stream: Any = None, autotune: bool = False,
           scale_a: Any = None, scale_b: Any = None, split_k: int | None = None) -> Any:
    """``act(scale_a * scale_b * (op(a) @ op(b)) + bias)`` with f32 accumulation; returns ``out`` (allocated
    when None).

    ``a``, ``b``: 2-D torch/cupy CUDA tensors or numpy arrays (copied to the
    GPU and back), both float16, bfloat16 or float32, or both FP8
    (``float8_e4m3fn`` / ``float8_e5m2``); ``op(x)`` is ``x.T``
    with ``trans_a``/``trans_b``. f16/bf16 use mma.sync tensor cores (wgmma
    on sm_90); f32 uses SIMT FMAs, or tf32 tensor cores with ``allow_tf32=True``;
    FP8 uses sm_90's wgmma and needs op(a) M x K with contiguous rows and
    op(b) stored N x K (``w.t()``, as ``torch._scaled_mm``), 16-byte aligned
    rows; its output defaults to bfloat16. ``scale_a``/``scale_b``: float32
    device arrays of one element (per-tensor scales, read by the kernel: no
    host synchronisation), for any input dtype. ``split_k``: slices of K run
    side by side then added in order (:mod:`tilec.kernels.splitk`; None: the
    heuristic's choice, which splits problems whose tiles fill at most half
    the SMs; 1: never); on torch's current stream only.
    ``bias``: N elements added to each row of the product (dtype: the
    inputs', the output's or float32); ``activation``: None, ``"relu"``, ``"gelu"`` (exact, with erf) or ``"silu"``;
    ``out_dtype``: float16, bfloat16 or float32 (default: the inputs');
    ``out``: an M x N array of that dtype to write into; ``config``: a
    :class:`~tilec.kernels.gemm_config.MatmulConfig` instead of the heuristic's
    (a :class:`~tilec.kernels.gemm_config.SplitConfig`: that config on slices of K);
    ``autotune``: choose the config (and whether to split K) by timing candidates on the GPU
    (:func:`autotune`; once per problem, then remembered in memory
    and on disk); ``stream``: a CUDA stream (default: torch's current stream
    for torch inputs, else the default stream).

    Raises TypeError/ValueError for bad arguments before compiling or
    launching, and :class:`~tilec.runtime.NoDeviceError` without a GPU.

    A call whose torch tensors have the class, shape, strides, dtype and
    device of an earlier successful call, with the same options, replays
    that call's checked plan (:mod:`tilec.kernels.fast_path`): only the addresses and the
    stream are new.
    """
    scales = (scale_a, scale_b)
    key = _fast_key(a, b, out, bias, activation, out_dtype, trans_a, trans_b, allow_tf32, config, autotune, scales,
                    split_k)
    fast = _FAST.get(key)
    if fast is not None:
        result = _fast_matmul(fast, a, b, out, bias, stream, scales)
        if result is not None:
            return result
    return _matmul_checked(key, a, b, out=out, bias=bias, activation=activation, out_dtype=out_dtype,
                           trans_a=trans_a, trans_b=trans_b, allow_tf32=allow_tf32, config=config, stream=stream,
                           tuned=autotune, scale_a=scale_a, scale_b=scale_b, split_k=split_k)


def _matmul_checked(key: tuple | None, a: Any, b: Any, *, out: Any, bias: Any, activation: str | None,
                    out_dtype: Any, trans_a: bool, trans_b: bool, allow_tf32: bool, config: MatmulConfig | None,
                    stream: Any, tuned: bool, scale_a: Any = None, scale_b: Any = None,
                    split_k: int | None = None) -> Any:
    """:func:`matmul` with every check; remembers the call for the fast path when ``key`` is given.

    ``tuned``: :func:`matmul`'s ``autotune`` (the name here is the function :func:`autotune`).
    """
    if not isinstance(tuned, bool):
        raise TypeError(f"{_where('autotune')} must be a bool, got {tuned!r}")
    if tuned and config is not None:
        raise ValueError(f"{_where('autotune')}=True chooses the config itself; pass config= or autotune=True, "
                         "not both")
    if tuned and split_k not in (None, 1):
        raise ValueError(f"{_where('split_k')}={split_k} with autotune=True: the autotuner chooses the slices "
                         "too; pass split_k=None (or 1: no split)")
    given_split = f"config={config.describe()!r}" if isinstance(config, SplitConfig) else f"split_k={split_k}"
    config, split_k = _unsplit(config, split_k)
    if tuned and stream is not None:
        key = None  # tuned without splits (a split runs on torch's stream): not the entry of the stream-less call
    plan = plan_matmul(a, b, out=out, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a,
                       trans_b=trans_b, allow_tf32=allow_tf32, config=config, scale_a=scale_a, scale_b=scale_b,
                       split_k=1 if tuned else split_k)
    if not has_device():
        raise NoDeviceError(f"{no_device_reason() or 'none found'} (tilec.matmul checked its arguments; "
                            "tilec.matmul_kernel(...) gives the compiled kernel without a GPU)")
    result = out if out is not None else allocate_output(plan)
    if plan.m == 0 or plan.n == 0:
        return result
    if tuned:
        winner = autotune(a, b, out=result, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a,
                          trans_b=trans_b, allow_tf32=allow_tf32, scale_a=scale_a, scale_b=scale_b,
                          allow_split=split_k is None and stream is None).config
        if isinstance(winner, SplitConfig):
            plan = plan_matmul(a, b, out=out, bias=bias, activation=activation, out_dtype=out_dtype,
                               trans_a=trans_a, trans_b=trans_b, allow_tf32=allow_tf32, config=winner.config,
                               scale_a=scale_a, scale_b=scale_b, split_k=winner.split_k)
        else:
            plan = dataclasses.replace(plan, config=winner)
    launch_stream = default_stream(plan) if stream is None else stream
    if plan.split_k > 1:
        # the workspace comes from torch's caching allocator and is freed on torch's current stream: a split
        # runs there, on torch tensors only (cupy's pool and stream 0 would not order its reuse)
        torch_only = all(op.info.source == "torch" for op in plan.operands)
        if stream is not None or not torch_only:
            if split_k is not None:
                raise ValueError(f"tilec.matmul: {given_split} splits K, which runs on torch tensors and torch's "
                                 "current stream (its workspace is freed there); pass torch tensors and "
                                 "stream=None, or leave the split out")
            plan = dataclasses.replace(plan, split_k=1)
            key = None  # this call's plan is not the one later calls of the same key (on torch's stream) get
        else:
            workspace = allocate_workspace(plan, plan.a.operand.value)
            launches = _split_launches(plan, result, workspace)
            for kernel, flat, grid, _ in launches:
                kernel(*flat, grid=grid, stream=launch_stream)
            if key is not None:
                try:
                    _remember_split(key, plan, launches, result, workspace)
                except Exception:  # launched; without a prepared call the next one is checked again
                    pass
            return result
    kernel = compile_matmul(plan.spec, plan.config)
    flat = plan.kernel_args(kernel, result)
    grid = launch_grid(plan, kernel)
    kernel(*flat, grid=(grid, 1, 1), stream=launch_stream)
    if key is not None:
        try:
            _remember(key, plan, kernel, flat, result, grid)
        except Exception:  # the product is launched; without a prepared call the next one is checked again
            pass
    return result


# ---------------------------------------------------------------- the fast path


_FAST = FastCache()
"""Prepared calls of :func:`matmul` (:mod:`tilec.kernels.fast_path`)."""


def _fast_key(a: Any, b: Any, out: Any, bias: Any, activation: Any, out_dtype: Any, trans_a: Any, trans_b: Any,
              allow_tf32: Any, config: Any, autotune: Any, scales: tuple = (None, None),
              split_k: Any = None) -> tuple | None:
    """The key of a call in :data:`_FAST`, or None when the call has to take the checked path.

    Everything :func:`plan_matmul` decides from is in it: per array its class,
    shape, strides, dtype and device (torch tensors only), and every option.
    The flags must be real bools: ``1 == True`` would otherwise find the entry
    of a call that checked ``trans_a=True``. An unhashable option (e.g. a
    list) makes a key that the dict lookup rejects; :func:`matmul` then checks.
    """
    if type(trans_a) is not bool or type(trans_b) is not bool or type(allow_tf32) is not bool \
            or type(autotune) is not bool:
        return None
    ka, kb = tensor_key(a), tensor_key(b)
    if ka is None or kb is None:
        return None
    ko = kbias = None
    if out is not None and (ko := tensor_key(out)) is None:
        return None
    if bias is not None and (kbias := tensor_key(bias)) is None:
        return None
    kscales = tuple(None if s is None else tensor_key(s) for s in scales)
    if any(k is None and s is not None for k, s in zip(kscales, scales)):
        return None
    return (ka, kb, ko, kbias, activation, out_dtype, trans_a, trans_b, allow_tf32, config, autotune, kscales,
            split_k)


def _fast_matmul(fast: Any, a: Any, b: Any, out: Any, bias: Any, stream: Any, scales: tuple = (None, None)) -> Any:
    """The prepared call ``fast`` for these tensors: the product, or None when it cannot take them."""
    result = out if out is not None else fast.allocate()
    pointers = [a.data_ptr(), b.data_ptr(), result.data_ptr()]
    for x in (bias, *scales):
        if x is not None:
            pointers.append(x.data_ptr())
    return result if fast.launch(tuple(pointers), stream) else None


def _remember(key: tuple, plan: MatmulPlan, kernel: Any, flat: list[Any], result: Any, grid: int) -> None:
    """Prepare ``plan``'s launch for the fast path, when every array is a torch tensor."""
    if not all(op.info.source == "torch" for op in plan.operands) or not is_torch_tensor(result):
        return
    names = list(plan.spec.argument_names())
    pointers = [plan.a.operand.info.ptr, plan.b.operand.info.ptr, result.data_ptr()]
    for view in (plan.bias, *plan.scales):
        if view is not None:
            pointers.append(view.operand.info.ptr)
    torch = sys.modules["torch"]
    device = plan.a.operand.value.device
    allocate = functools.partial(torch.empty, (plan.m, plan.n), dtype=getattr(torch, plan.spec.out_dtype),
                                 device=device)
    _FAST.put(key, prepare_fast_call(kernel, flat, (grid, 1, 1), names, pointers, device, allocate,
                                     _output_guard(plan, result)))


def _output_guard(plan: MatmulPlan, result: Any) -> OutputGuard:
    """The fast path's overlap test of C against A, B, the bias and the scales (in the pointers' order)."""
    rest = [v.operand.value for v in (plan.bias, *plan.scales) if v is not None]
    return OutputGuard([plan.a.operand.value, plan.b.operand.value, result, *rest], 2)


class _SplitCall:
    """A split call made ready: the batched matmul's and the reduction's prepared launches, with a new
    workspace each call (torch's caching allocator, on the current stream, orders its reuse)."""

    __slots__ = ("first", "second", "workspace", "allocate", "guard")

    def __init__(self, first: Any, second: Any, workspace: Any, allocate: Any, guard: OutputGuard):
        self.first, self.second, self.workspace, self.allocate = first, second, workspace, allocate
        self.guard = guard

    def launch(self, pointers: tuple[int, ...], stream: Any) -> bool:
        """``pointers``: a, b, c[, bias][, scales] as :func:`_fast_matmul` gives them. A call on a stream
        it was not planned for (``stream=``) goes back to the checked path, which does not split."""
        if stream is not None:
            return False
        low = LOW_MASK
        if any(p & low != bit for p, bit in zip(pointers[:2], self.first.low_bits[:2])) or \
                any(p & low != bit for p, bit in zip(pointers[2:], self.second.low_bits[1:])) or \
                self.guard.meets(pointers):
            return False
        workspace = self.workspace()  # held until both launches are queued: freed after, on this stream
        ws = workspace.data_ptr()
        self.first.launch((pointers[0], pointers[1], ws), stream)
        self.second.launch((ws, *pointers[2:]), stream)
        return True


def _remember_split(key: tuple, plan: MatmulPlan, launches: list, result: Any, workspace: Any) -> None:
    """Prepare both launches of a split call for the fast path (torch tensors only)."""
    if not all(op.info.source == "torch" for op in plan.operands) or not is_torch_tensor(result):
        return
    torch = sys.modules["torch"]
    device = plan.a.operand.value.device
    (k1, flat1, grid1, names1), (k2, flat2, grid2, names2) = launches
    ws = workspace.data_ptr()
    rest = [v.operand.info.ptr for v in (plan.bias, *plan.scales) if v is not None]
    first = prepare_fast_call(k1, flat1, grid1, names1, [plan.a.operand.info.ptr, plan.b.operand.info.ptr, ws],
                              device, None)
    second = prepare_fast_call(k2, flat2, grid2, names2, [ws, result.data_ptr(), *rest], device, None)
    if first is None or second is None:
        return
    allocate = functools.partial(torch.empty, (plan.m, plan.n), dtype=getattr(torch, plan.spec.out_dtype),
                                 device=device)
    make_ws = functools.partial(torch.empty, tuple(workspace.shape), dtype=torch.float32, device=device)
    _FAST.put(key, _SplitCall(first, second, make_ws, allocate, _output_guard(plan, result)))


# ---------------------------------------------------------------- autotuning


def autotune(a: Any, b: Any, *, out: Any = None, bias: Any = None, activation: str | None = None,
             out_dtype: Any = None, trans_a: bool = False, trans_b: bool = False, allow_tf32: bool = False,
             candidates: Sequence[MatmulConfig | SplitConfig] | None = None, reps: int = 20, warmup: int = 3,
             progress: bool = True, retune: bool = False,
             measure: Callable[[MatmulConfig], float] | None = None,
             timer: Callable[[Callable[[], None], int, int], float] | None = None,
             path: str | os.PathLike | None = None, scale_a: Any = None, scale_b: Any = None,
             allow_split: bool = True) -> TuneResult[MatmulConfig | SplitConfig]:
    """Choose the :class:`MatmulConfig` for ``tilec.matmul(a, b, ...)`` by timing candidates; remember it.

    ::

        r = tilec.autotune(a, b, bias=bias, activation="relu")   # times the candidates, stores the winner
        r.config, r.source, r.timings                            # the winner, "timed"/"disk"/"memory", per candidate
        tilec.matmul(a, b, bias=bias, activation="relu", autotune=True)  # the same, then the product

    The heuristic of :mod:`tilec.kernels.gemm_config` is right without tuning
    for the common shapes; tuning is for the rest (odd aspect ratios, a
    given GPU). How a problem is tuned: :mod:`tilec.kernels.gemm_tune`.

    The arguments up to ``allow_tf32`` are :func:`matmul`'s (checked the same
    way; ``out``, if given, is overwritten while timing). ``candidates``: the
    configs to time (default :func:`~tilec.kernels.gemm_tune.candidates_for`
    the problem, the heuristic's first); ``reps``/``warmup``: timed
    repetitions (the median counts) and launches before; ``progress``: a
    progress bar on stderr; ``retune``: time again even if a winner is
    remembered; ``measure``: ``config -> seconds`` instead of compiling,
    checking and timing on the GPU (then no GPU is needed; raise
    :class:`~tilec.kernels.autotune.SkipCandidate` to skip one: for tests, or
    to tune by another measure); ``timer``: ``timer(run, warmup, reps) ->
    seconds`` instead of CUDA events; ``path``: the winners file (default
    :func:`~tilec.kernels.gemm_tune.winners_path`); ``allow_split``: time
    split-K candidates too (:class:`~tilec.kernels.gemm_config.SplitConfig`:
    the ladder's tile for K / S, S = 2 .. 4, where the unsplit tiles do not
    fill the SMs), on torch tensors only (a split runs on torch's current
    stream). A split winner is what ``tilec.matmul(config=r.config)`` runs.

    Tune with device arrays: numpy inputs are copied to the GPU and back in
    every timed run, and the copies are timed too.

    Returns a :class:`~tilec.kernels.autotune.TuneResult`; raises
    TypeError/ValueError for bad arguments,
    :class:`~tilec.runtime.NoDeviceError` without a GPU (unless ``measure``
    is given), :class:`~tilec.kernels.autotune.AutotuneError` if no
    candidate works.
    """
    if not isinstance(allow_split, bool):
        raise TypeError(f"tilec.autotune: allow_split must be a bool, got {allow_split!r}")
    args = dict(out=out, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a, trans_b=trans_b,
                allow_tf32=allow_tf32, scale_a=scale_a, scale_b=scale_b)
    plan = plan_matmul(a, b, **args, split_k=1)
    for what, v in (("reps", reps), ("warmup", warmup)):
        if type(v) is not int or v < 0:
            raise ValueError(f"tilec.autotune: {what} must be a non-negative int, got {v!r}")
    splits = allow_split and all(op.info.source == "torch" and not op.on_host for op in plan.operands)
    configs = None if candidates is None else gemm_tune.checked_candidates(candidates, plan, allow_tf32, splits)
    if measure is None and not has_device():
        raise NoDeviceError(f"{no_device_reason() or 'none found'} (tilec.autotune checked its arguments; "
                            "pass measure= to tune without a GPU)")
    key = gemm_tune.tune_key(plan, gemm_tune.gpu_name(), allow_tf32, splits=splits)
    if plan.m == 0 or plan.n == 0:
        return TuneResult(plan.config, key, "trivial", (), path if path is not None else gemm_tune.winners_path())
    limit = device_smem_limit()

    def split_candidates() -> tuple[list[SplitConfig], SplitConfig | None]:
        """The splits worth timing, each with the ladder's tile for its slices, and the heuristic's choice
        when it splits (then it is the first candidate)."""
        if not splits:
            return [], None
        found = [SplitConfig(plan_matmul(a, b, **args, split_k=s).config, s)
                 for s in gemm_tune.split_factors(plan, device_sm_count())]
        heuristic = plan_matmul(a, b, **args)
        return found, SplitConfig(heuristic.config, heuristic.split_k) if heuristic.split_k > 1 else None

    def compile_candidate(config: MatmulConfig | SplitConfig) -> Any:
        if isinstance(config, SplitConfig):
            sliced = plan_matmul(a, b, **args, config=config.config, split_k=config.split_k)
            return compile_matmul(sliced.gemm_spec(), config.config)
        return compile_matmul(plan.spec, config)

    def make_measure() -> Callable[[MatmulConfig], float]:
        if measure is not None:
            return measure

        def run(config: MatmulConfig | SplitConfig, into: Any) -> Any:
            return matmul(a, b, out=into, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a,
                          trans_b=trans_b, allow_tf32=allow_tf32, config=config, scale_a=scale_a, scale_b=scale_b)

        return gemm_tune.gpu_measure(
            plan, run=run, compile=compile_candidate,
            out=out if out is not None else allocate_output(plan), allow_tf32=allow_tf32, timer=timer,
            warmup=warmup, reps=reps, smem_limit=limit,
            reference_args=dict(a=a, b=b, trans_a=trans_a, trans_b=trans_b, bias=bias, activation=activation,
                                scale_a=scale_a, scale_b=scale_b))

    problem = gemm_tune.problem(plan, key, allow_tf32=allow_tf32, smem_limit=limit, configs=configs,
                                measure=make_measure, splits=split_candidates)
    return tune(problem, retune=retune, progress=progress, path=path)


__all__ = [
    "ACTIVATIONS",
    "KernelView",
    "MatmulConfig",
    "MatmulPlan",
    "MatmulSpec",
    "Operand",
    "autotune",
    "build_epilogue",
    "build_module",
    "cached_kernels",
    "choose_config",
    "clear_cache",
    "compile_matmul",
    "compile_reduce",
    "matmul",
    "matmul_kernel",
    "orient",
    "plan_matmul",
]
