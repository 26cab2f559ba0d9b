"""Checking a :func:`tilec.matmul` call: shapes, dtypes, devices, layouts, the kernel and config it needs.

:func:`plan_matmul` is steps 1-3 of :mod:`tilec.kernels.gemm` (pure: no GPU,
no compile): it describes each array, orients each operand for the kernel
without copying (row-major as is, column-major as its transpose, anything
else strided), measures the row alignments the kernel may be specialised
for, and chooses the config; the result, a :class:`MatmulPlan`, turns the
arrays into the kernel's flat arguments. Every problem is a TypeError or a
ValueError that names the argument and the numbers.
"""

from __future__ import annotations

import math

import sys
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from tilec.api import target_arch
from tilec.kernels.gemm_config import (
    FLOAT_DTYPES,
    FP8_DTYPES,
    INPUT_DTYPES,
    MatmulConfig,
    check_config,
    choose_config,
    device_sm_count,
)
from tilec.kernels.gemm_ir import ACTIVATIONS, ALIGN_BYTES, ITEMSIZE, MatmulSpec
from tilec.kernels.splitk import MAX_SPLIT, ReduceSpec, choose_split
from tilec.runtime import dtypes as _dtypes
from tilec.runtime.arrays import ArrayInfo, NotAnArray, describe_array
from tilec.runtime.gl_views import GlView, expand


def _where(name: str) -> str:
    return f"tilec.matmul: {name}"


@dataclass(frozen=True)
class Operand:
    """One array argument as checked: what it is and its element strides."""

    name: str
    value: Any = field(repr=False)
    info: ArrayInfo = field(repr=False)
    strides: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.info.shape

    @property
    def dtype(self) -> str:
        return self.info.dtype

    @property
    def on_host(self) -> bool:
        return self.info.on_host


def describe_operand(name: str, value: Any, owner: str = "tilec.matmul") -> Operand:
    """An array argument read once (address, shape, element strides, dtype); errors name ``owner`` and ``name``."""
    try:
        info = describe_array(value)
    except NotAnArray:
        raise TypeError(f"{owner}: {name} must be an array (a torch/cupy CUDA tensor or a numpy array), "
                        f"got {type(value).__name__}") from None
    except (TypeError, ValueError) as e:
        raise type(e)(f"{owner}: {name}: {e}") from None
    strides = []
    for s in info.byte_strides():
        if s % info.itemsize:
            raise ValueError(f"{owner}: {name}: byte strides {info.byte_strides()} are not whole "
                             f"{info.itemsize}-byte elements")
        strides.append(s // info.itemsize)
    if info.has_negative_strides():
        raise ValueError(f"{owner}: {name}: negative strides {tuple(strides)} (elements) are not supported; "
                         "pass a copy with positive strides")
    return Operand(name, value, info, tuple(strides))


def _dtype_name(value: Any, what: str) -> str:
    try:
        name = _dtypes.canonical(value)
    except TypeError:
        raise TypeError(f"{_where(what)}={value!r} is not a dtype") from None
    if name not in FLOAT_DTYPES:
        raise TypeError(f"{_where(what)}={value!r}: expected float16, bfloat16 or float32")
    return name


def _round_up(x: int, m: int) -> int:
    return -(-x // m) * m


@dataclass(frozen=True)
class KernelView:
    """How the kernel sees one operand: the user's array (element (0, 0) is the pointer), extents, strides."""

    operand: Operand
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    transposed: bool = False
    layout: str = "row"
    """``row`` (last dimension contiguous), ``col`` (given as the transpose), ``strided``, ``vector``."""

    def gl(self) -> GlView:
        return GlView(self.operand.value, self.shape, self.strides)


def orient(op: Operand, rows: int, cols: int, strides: tuple[int, int]) -> KernelView:
    """The kernel view of a logical ``rows x cols`` matrix with element ``strides``.

    Row-major (unit stride along the columns) → as is; column-major (unit
    stride along the rows) → its transpose, flagged; a single column or row
    whose elements are not adjacent → the same, with its one stride;
    otherwise the strided view. The stride of an extent-1 dimension is never
    used by the kernel; it is set so that the view's rows count as
    vector-aligned.
    """
    sr, sc = strides

    def row() -> KernelView:
        return KernelView(op, (rows, cols), (sr if rows > 1 else _round_up(cols, 8), 1 if cols == 1 else sc),
                          False, "row" if sc == 1 or cols == 1 else "strided")

    def col() -> KernelView:
        return KernelView(op, (cols, rows), (sc if cols > 1 else _round_up(rows, 8), 1), True, "col")

    if sc == 1 and cols > 1:
        return row()
    if sr == 1 and rows > 1:
        return col()
    if cols == 1:
        return row()
    if rows == 1:
        return col()
    return row()


@dataclass(frozen=True)
class MatmulPlan:
    """A checked call: the problem, the kernel it needs and how each array is handed over."""

    m: int
    n: int
    k: int
    spec: MatmulSpec
    config: MatmulConfig
    a: KernelView
    b: KernelView
    out: KernelView | None
    """None when the output is to be allocated (its shape is M x N, row-major)."""
    bias: KernelView | None
    operands: tuple[Operand, ...] = field(default=(), repr=False)
    scales: tuple[KernelView, ...] = ()
    """The per-tensor scales given (scale_a, then scale_b): one number each, as views of one element."""
    split_k: int = 1
    """Slices of K (:mod:`tilec.kernels.splitk`): > 1 runs ``config`` on a batch of K's slices into an f32
    workspace, then the reduction with the epilogue."""

    @property
    def grid(self) -> int:
        return self.config.grid(self.m, self.n)

    # ------------------------------------------------------------ split-K

    def slice_views(self) -> tuple[KernelView, KernelView]:
        """op(A) and op(B) as batches of K's ``split_k`` slices: K's extent divided, the batch stride
        the slice's length times K's stride."""
        return _sliced(self.a, self.k, self.split_k, k_last=not self.a.transposed), \
            _sliced(self.b, self.k, self.split_k, k_last=self.b.transposed)

    def workspace_row(self) -> int:
        """The workspace's row stride in elements: N rounded up to whole 16-byte vectors."""
        return -(-self.n // 4) * 4

    def workspace_align(self) -> int:
        """The ``tile.aligned_rows`` of the workspace view (``split_k x M x N``, rows of
        :meth:`workspace_row`, a fresh allocation): 16 bytes when N is a multiple of 4, else 4."""
        row = self.workspace_row()
        return _largest_alignment(4, self.n * 4, row * 4, self.m * row * 4)

    def gemm_spec(self) -> MatmulSpec:
        """The batched matmul of the slices: f32 partial products, no epilogue."""
        va, vb = self.slice_views()
        return MatmulSpec(self.spec.dtype, "float32", transpose_a=self.spec.transpose_a,
                          transpose_b=self.spec.transpose_b,
                          align=(row_alignment(va), row_alignment(vb), self.workspace_align()), batched=True)

    def reduce_spec(self, out: Any) -> ReduceSpec:
        """The reduction into ``out`` with this call's epilogue."""
        out_align = row_alignment(self.output_view(out))
        bias_align = 0 if self.bias is None else row_alignment(self.bias)
        return ReduceSpec(self.spec.out_dtype, self.spec.bias_dtype, self.spec.activation,
                          self.spec.scale_a, self.spec.scale_b, (self.workspace_align(), out_align, bias_align))

    @property
    def layouts(self) -> str:
        """e.g. ``row/col``: how A and B are given (row, col or strided)."""
        return f"{self.a.layout}/{self.b.layout}"

    def output_view(self, out: Any) -> KernelView:
        if self.out is not None:
            return self.out
        op = describe_operand("out", out)
        return KernelView(op, (self.m, self.n), _out_strides(op, self.m, self.n), False, "row")

    def views(self, out: Any) -> list[GlView]:
        """One :class:`GlView` per kernel argument (a, b, c[, bias][, scale_a][, scale_b])."""
        views = [self.a.gl(), self.b.gl(), self.output_view(out).gl()]
        if self.bias is not None:
            views.append(self.bias.gl())
        views += [s.gl() for s in self.scales]
        return views

    def kernel_args(self, kernel: Any, out: Any) -> list[Any]:
        """The flat launch arguments of ``kernel`` (pointer, extents, strides per view)."""
        return expand(kernel, *self.views(out))


def _sliced(view: KernelView, k: int, split: int, k_last: bool) -> KernelView:
    """``view`` (a kernel view holding K along its last dimension if ``k_last``, else its first) as
    ``split`` slices of K: a 3-D view, the slice the leading index."""
    (r, c), (sr, sc) = view.shape, view.strides
    part = k // split
    shape, batch = ((r, part), part * sc) if k_last else ((part, c), part * sr)
    return KernelView(view.operand, (split, *shape), (batch, sr, sc), view.transposed, view.layout)


def _out_strides(op: Operand, m: int, n: int) -> tuple[int, int]:
    s0, s1 = op.strides
    if n == 1:
        s1 = 1
    if m == 1:
        s0 = _round_up(n, 8)
    return s0, s1


def _check_no_overlap(op: Operand, owner: str = "tilec.matmul") -> None:
    """An output must not have two elements at one address (broadcast or overlapping strides)."""
    dims = sorted((s, d) for s, d in zip(op.strides, op.shape) if d > 1)
    span = 1
    for s, d in dims:
        if s < span:
            raise ValueError(f"{owner}: {op.name}: shape {op.shape} with element strides {op.strides} has "
                             "elements that share memory; the output needs one address per element")
        span = s * d


def _byte_range(op: Operand) -> tuple[int, int]:
    """[lowest, highest + 1) bytes an array's elements occupy (negative strides included)."""
    size = op.info.itemsize
    lo = hi = op.info.ptr
    for d, s in zip(op.shape, op.strides):
        if d > 1:
            reach = (d - 1) * s * size
            lo, hi = (lo + reach, hi) if reach < 0 else (lo, hi + reach)
    return lo, hi + size


def _check_disjoint(out: Operand, inputs: list[Operand], owner: str = "tilec.matmul") -> None:
    """The output shares no memory with an input: the kernel reads inputs while it writes the output, so
    any overlap (``out=a``, a view of ``b``) would read values it already overwrote."""
    lo, hi = _byte_range(out)
    for op in inputs:
        if op.on_host != out.on_host or op.info.device_id != out.info.device_id:
            continue
        a, b = _byte_range(op)
        if a < hi and lo < b and not _interleaved(out, op):
            raise ValueError(f"{owner}: {out.name} overlaps {op.name} in memory; pass an output that shares no "
                             "memory with the inputs")


def _interleaved(x: Operand, y: Operand) -> bool:
    """Whether arrays of one element size, shape and strides whose spans meet still share no element
    (two halves of one wide buffer, ``buf[:, :n]`` and ``buf[:, n:]``): the address difference is not a
    step of the grid. Strides that nest (each at least the span of the smaller ones) write each offset
    one way, so the greedy digits decide; other strides count as sharing (False)."""
    size = x.info.itemsize
    if size != y.info.itemsize or tuple(x.shape) != tuple(y.shape) or tuple(x.strides) != tuple(y.strides):
        return False
    delta = y.info.ptr - x.info.ptr
    if delta % size:
        return True  # not on an element boundary of x: no element starts at the same byte
    delta //= size
    dims = sorted(((abs(s), d) for s, d in zip(x.strides, x.shape) if d > 1), reverse=True)
    span = 1
    for s, d in reversed(dims):
        if s < span:
            return False
        span = s * d
    rest = abs(delta)
    for s, d in dims:
        digit = rest // s
        if digit >= d:
            return True
        rest -= digit * s
    return rest != 0


def check_output_memory(out: Operand, inputs: list[Operand], owner: str, in_place: Operand | None = None) -> None:
    """``out`` has one address per element and shares none with ``inputs`` (every kernel that writes an
    output while blocks still read the inputs needs both; errors name ``owner``). ``in_place``: an input
    ``out`` may be exactly (same address, shape and strides), for kernels whose blocks read each element
    before writing it and no other block reads it."""
    _check_no_overlap(out, owner)
    same = in_place is not None and (in_place.info.ptr, tuple(in_place.shape), tuple(in_place.strides)) == \
        (out.info.ptr, tuple(out.shape), tuple(out.strides)) and in_place.info.itemsize == out.info.itemsize
    _check_disjoint(out, [op for op in inputs if op is not None and not (same and op is in_place)], owner)


def _check_devices(operands: list[Operand]) -> None:
    device = [op for op in operands if not op.on_host]
    ids = {op.name: op.info.device_id for op in device if op.info.device_id is not None}
    if len(set(ids.values())) > 1:
        where = ", ".join(f"{n} on cuda:{d}" for n, d in ids.items())
        raise ValueError(f"tilec.matmul: the arrays are on different CUDA devices ({where})")
    for name, d in ids.items():
        if d != 0:
            raise ValueError(f"{_where(name)} is on cuda:{d}; tilec launches on device 0 (cuda:0) for now")


_LAYOUT_WORDS = {"row": "with contiguous rows", "col": "with contiguous columns", "strided": "with no contiguous "
                 "dimension", "vector": "a vector"}


def plan_matmul(a: Any, b: Any, *, out: Any = None, bias: Any = None, activation: str | None = None,
                out_dtype: Any = None, trans_a: bool = False, trans_b: bool = False, allow_tf32: bool = False,
                config: MatmulConfig | None = None, sm_count: int | None = None, arch: str | None = None,
                scale_a: Any = None, scale_b: Any = None, split_k: int | None = None) -> MatmulPlan:
    """Check a :func:`matmul` call and decide everything about it, without a GPU or a compile.

    ``arch`` is the target the configuration is chosen for (default: the GPU's, else sm_80).
    FP8 inputs (``float8_e4m3fn``, ``float8_e5m2``): op(A) M x K with contiguous rows, op(B) K x N
    stored N x K (``w.t()`` of a contiguous ``w``, as ``torch._scaled_mm`` takes it); the output
    defaults to bfloat16. ``scale_a``/``scale_b``: one float32 number each (per-tensor scales, any
    dtype of inputs) multiplying the product before the bias.
    """
    if activation not in ACTIVATIONS:
        raise ValueError(f"{_where('activation')}={activation!r} is not supported; expected one of {ACTIVATIONS}")
    for flag, v in (("trans_a", trans_a), ("trans_b", trans_b), ("allow_tf32", allow_tf32)):
        if not isinstance(v, bool):
            raise TypeError(f"{_where(flag)} must be a bool, got {v!r}")
    A, B = describe_operand("a", a), describe_operand("b", b)
    for op in (A, B):
        if len(op.shape) != 2:
            raise ValueError(f"{_where(op.name)} must be a 2-D matrix, got shape {op.shape}")
    dtype = A.dtype
    if dtype not in INPUT_DTYPES:
        raise TypeError(f"{_where('a')} has dtype {dtype}; expected float16, bfloat16, float32, float8_e4m3fn or "
                        "float8_e5m2")
    if B.dtype != dtype:
        raise TypeError(f"tilec.matmul: a has dtype {dtype} but b has dtype {B.dtype}: mixed input dtypes; "
                        "convert one of them")
    fp8 = dtype in FP8_DTYPES
    out_dt = ("bfloat16" if fp8 else dtype) if out_dtype is None else _dtype_name(out_dtype, "out_dtype")

    # op(A) is M x K with element strides (sm, sk); op(B) is K x N with (sk, sn)
    (m, k), a_strides = (A.shape[::-1], A.strides[::-1]) if trans_a else (A.shape, A.strides)
    (kb, n), b_strides = (B.shape[::-1], B.strides[::-1]) if trans_b else (B.shape, B.strides)
    if k != kb:
        raise ValueError(
            f"tilec.matmul: K differs: op(a) is {m}x{k} (a has shape {A.shape}, trans_a={trans_a}) but "
            f"op(b) is {kb}x{n} (b has shape {B.shape}, trans_b={trans_b})"
        )
    operands = [A, B]

    bias_view = None
    bias_dtype = None
    if bias is not None:
        Bias = describe_operand("bias", bias)
        if len(Bias.shape) != 1:
            raise ValueError(f"{_where('bias')} must be 1-D with N = {n} elements (one per column of C), "
                             f"got shape {Bias.shape}")
        if Bias.shape[0] != n:
            raise ValueError(f"{_where('bias')} has {Bias.shape[0]} elements, expected N = {n} "
                             f"(one per column of the {m}x{n} result)")
        allowed = sorted({out_dt, "float32"} | ({dtype} & set(FLOAT_DTYPES)), key=FLOAT_DTYPES.index)
        if Bias.dtype not in allowed:
            raise TypeError(f"{_where('bias')} has dtype {Bias.dtype}; expected one of {', '.join(allowed)} "
                            + ("(the output's or float32)" if fp8 else "(the inputs', the output's, or float32)"))
        bias_dtype = Bias.dtype
        stride = Bias.strides[0] if n > 1 else 1
        bias_view = KernelView(Bias, (n,), (stride,), False, "vector")
        operands.append(Bias)

    scale_views = []
    for name, value in (("scale_a", scale_a), ("scale_b", scale_b)):
        if value is None:
            continue
        Scale = describe_operand(name, value)
        if math.prod(Scale.shape) != 1:
            raise ValueError(f"{_where(name)} must hold one number (a per-tensor scale), got shape {Scale.shape}")
        if Scale.dtype != "float32":
            raise TypeError(f"{_where(name)} has dtype {Scale.dtype}; expected float32")
        scale_views.append(KernelView(Scale, (1,), (1,), False, "vector"))
        operands.append(Scale)

    out_view = None
    if out is not None:
        Out = describe_operand("out", out)
        if Out.shape != (m, n):
            raise ValueError(f"{_where('out')} has shape {Out.shape}, expected ({m}, {n}) = (M, N)")
        if Out.dtype != out_dt:
            default = "bfloat16 for FP8 inputs" if fp8 else "the inputs' dtype"
            hint = "" if out_dtype is not None else f" (the default, {default}; pass out_dtype={Out.dtype!r} to change it)"
            raise TypeError(f"{_where('out')} has dtype {Out.dtype}, expected {out_dt}{hint}")
        if Out.info.readonly:
            raise ValueError(f"{_where('out')} is read-only")
        _check_no_overlap(Out)
        _check_disjoint(Out, operands)
        out_view = KernelView(Out, (m, n), _out_strides(Out, m, n), False, "row")
        operands.append(Out)
    _check_devices(operands)
    if out is None:
        _check_allocatable(operands, out_dt)

    va = orient(A, m, k, a_strides)
    # op(B) is K x N; the kernel's B without transpose is K x N, with transpose_b N x K
    vb = orient(B, k, n, b_strides)
    if fp8 and (va.transposed or not vb.transposed or "strided" in (va.layout, vb.layout)) and m * n * k:
        raise ValueError(f"tilec.matmul: {dtype} inputs are read K-major: op(a) must be M x K with contiguous rows "
                         f"and op(b) K x N stored N x K (b = w.t() of a contiguous N x K w, as torch._scaled_mm "
                         f"takes it); got op(a) {_LAYOUT_WORDS[va.layout]} and op(b) {_LAYOUT_WORDS[vb.layout]}")
    if out_view is not None:
        out_align = row_alignment(out_view)
    else:  # allocated like the inputs: a device array is fresh row-major memory, a numpy one is staged
        out_align = 0 if _output_like(operands) is None else fresh_row_alignment(n, ITEMSIZE[out_dt])
    align = (row_alignment(va), row_alignment(vb), out_align)
    if bias_view is not None:
        align += (row_alignment(bias_view),)
    align += (0,) * len(scale_views)
    spec = MatmulSpec(dtype, out_dt, transpose_a=va.transposed, transpose_b=vb.transposed,
                      bias_dtype=bias_dtype, activation=activation, align=align,
                      scale_a=scale_a is not None, scale_b=scale_b is not None)
    arch = target_arch(arch)
    given = config
    if config is None:
        config = choose_config(m, n, k, dtype, allow_tf32=allow_tf32, sm_count=sm_count, row_align=spec.row_align,
                               arch=arch, transpose_a=va.transposed)
    else:
        check_config(config, dtype, allow_tf32, transpose_a=va.transposed)
    split = _split(split_k, m, n, k, dtype, config, given, operands, sm_count)
    plan = MatmulPlan(m, n, k, spec, config, va, vb, out_view, bias_view, tuple(operands), tuple(scale_views), split)
    if split > 1 and given is None:  # the tiles of one slice: the ladder's choice for K / split
        gemm = plan.gemm_spec()
        plan = replace(plan, config=choose_config(m, n, k // split, dtype, allow_tf32=allow_tf32, sm_count=sm_count,
                                                  row_align=min(gemm.align), arch=arch, transpose_a=va.transposed))
    return plan


def _split(split_k: Any, m: int, n: int, k: int, dtype: str, config: MatmulConfig, given: Any,
           operands: list[Operand], sm_count: int | None) -> int:
    """The slices of K: ``split_k`` if given (checked), else :func:`~tilec.kernels.splitk.choose_split`'s
    for device arrays and the heuristic's config (numpy inputs, staged through the host, never split)."""
    size = ITEMSIZE[dtype]
    if split_k is not None:
        if isinstance(split_k, (bool, np.bool_)) or not isinstance(split_k, (int, np.integer)) \
                or not 1 <= split_k <= MAX_SPLIT:
            raise ValueError(f"{_where('split_k')}={split_k!r}: expected an int from 1 to {MAX_SPLIT}")
        split_k = int(split_k)
        if split_k > 1 and (k % split_k or (k // split_k * size) % 16):
            raise ValueError(f"{_where('split_k')}={split_k}: K = {k} must divide into {split_k} slices of whole "
                             f"16-byte rows ({16 // size} elements of {dtype})")
        if split_k > 1 and any(op.on_host for op in operands):
            raise ValueError(f"{_where('split_k')}={split_k} needs device arrays (its workspace lives on the GPU); "
                             "numpy inputs are not split")
        return split_k if k else 1  # K = 0: nothing to split
    if given is not None or any(op.on_host for op in operands) or m * n * k == 0:
        return 1
    sms = device_sm_count() if sm_count is None else sm_count
    return choose_split(m, n, k, size, config.tiles(m, n), sms)


def row_alignment(view: KernelView) -> int:
    """The ``tile.aligned_rows`` the kernel may assume of a view (see :class:`MatmulSpec`), 0 for none.

    The largest of 16, 8, 4 and 2 bytes (at least the element size) that the
    address, the outer strides and the row length are multiples of, when the
    rows are contiguous. Only device arrays qualify (numpy arrays are staged
    into fresh memory by the launcher, with strides of their own).
    """
    op = view.operand
    size = op.info.itemsize
    if op.on_host or view.strides[-1] != 1:
        return 0
    return _largest_alignment(size, op.info.ptr, view.shape[-1] * size, *(s * size for s in view.strides[:-1]))


def staged_row_alignment(shape: tuple[int, ...], strides: tuple[int, ...], size: int) -> int:
    """:func:`row_alignment` of a host array's view, which the launcher copies from its first element into
    fresh (aligned) device memory, keeping its strides: the row length and outer strides decide."""
    if not shape or strides[-1] != 1:
        return 0
    return _largest_alignment(size, shape[-1] * size, *(s * size for s in strides[:-1]))


def fresh_row_alignment(n: int, size: int) -> int:
    """:func:`row_alignment` of an output still to be allocated: a fresh row-major array of rows of ``n``."""
    return _largest_alignment(size, n * size)


def _largest_alignment(size: int, *byte_counts: int) -> int:
    """The largest power of two from ``size`` to 16 dividing every count, 0 if ``size`` does not."""
    align = ALIGN_BYTES
    while align >= size and any(x % align for x in byte_counts):
        align //= 2
    return align if align >= size else 0


# ---------------------------------------------------------------- output allocation, streams


def array_library(value: Any) -> str:
    mod = type(value).__module__.split(".", 1)[0]
    return mod


def _output_like(operands) -> Any:
    """The array whose library (and device) the output is allocated with: the first device array, else None (numpy)."""
    device_ops = [op for op in operands if not op.on_host]
    return device_ops[0].value if device_ops else None


def _check_allocatable(operands, dtype: str) -> None:
    """Whether :func:`allocate_output` can make the result (before anything runs)."""
    like = _output_like(operands)
    lib = "numpy" if like is None else array_library(like)
    if (lib == "cupy" or lib == "numpy" and _dtypes.numpy_dtype(dtype) is None) and dtype == "bfloat16":
        why = "install ml_dtypes for numpy's, or " if lib == "numpy" else ""
        raise TypeError(f"tilec.matmul: {lib} has no bfloat16, so a bf16 result cannot be returned as a {lib} "
                        f"array; {why}pass out= a bf16 device array (e.g. a torch tensor) or another out_dtype")
    if lib not in ("numpy", "cupy", "torch"):
        raise TypeError(f"tilec.matmul: cannot allocate the output like a {type(like).__name__}; pass out=")


def allocate_output(plan: MatmulPlan) -> Any:
    """An M x N array of the output dtype, from the library (and device) of the inputs."""
    shape, dtype = (plan.m, plan.n), plan.spec.out_dtype
    like = _output_like(plan.operands)
    _check_allocatable(plan.operands, dtype)
    if like is None:
        return np.empty(shape, _dtypes.numpy_dtype(dtype))  # bf16: ml_dtypes' type
    lib = array_library(like)
    if lib == "torch":
        torch = sys.modules["torch"]
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(0):
        return cupy.empty(shape, dtype)


def default_stream(plan: MatmulPlan) -> Any:
    """torch's current stream when an input is a torch tensor (so the call orders with torch's work)."""
    for op in plan.operands:
        if not op.on_host and array_library(op.value) == "torch":
            torch = sys.modules["torch"]
            return torch.cuda.current_stream(op.value.device).cuda_stream
    return None


__all__ = ["KernelView", "MatmulPlan", "Operand", "allocate_output", "array_library", "default_stream", "describe_operand",
           "orient", "plan_matmul"]
