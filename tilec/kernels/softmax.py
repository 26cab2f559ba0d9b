"""``tilec.softmax``: the softmax of every row of an array, on torch / cupy / numpy arrays.

    y = tilec.softmax(x)              # over the last dimension, like torch.softmax(x, -1)
    y = tilec.softmax(x, dim=0)       # over columns: the same kernel on the transposed view (no copy)
    k = tilec.softmax_kernel(x)       # the compiled kernel, without a GPU

``x`` is f32, f16 or bf16, 1-D or 2-D, with any strides (rows need not be contiguous); the
result has ``x``'s dtype unless ``dtype=`` says otherwise, and f32 math is used inside. The
kernel (:mod:`tilec.kernels.softmax_ir`) goes through the general passes; a block holds its rows
in registers (one pass) up to 32k elements a row, longer rows are read twice
(:mod:`tilec.kernels.row_tiling`). Kernels are specialised on the tiling and on the rows'
alignment (``tile.aligned_rows``), like ``tilec.matmul``.
"""

from __future__ import annotations

from typing import Any

from tilec.kernels.fast_path import FastCache
from tilec.kernels.gemm_plan import check_output_memory
from tilec.kernels.row_kernels import (
    DTYPES,
    allocate_like,
    check_allocatable,
    compile_once,
    launch,
    replay,
    row_alignment_of,
    row_call_key,
    row_view,
)
from tilec.kernels.row_tiling import row_tiling
from tilec.kernels.softmax_ir import SoftmaxSpec, build_module
from tilec.runtime import NoDeviceError, has_device, no_device_reason
from tilec.runtime.gl_views import GlView
from tilec.runtime.dtypes import canonical

OWNER = "tilec.softmax"


def _output_dtype(x_dtype: str, dtype: Any) -> str:
    try:
        out = x_dtype if dtype is None else canonical(dtype)  # "float32", np.float32, torch.float32 ...
    except TypeError:
        out = None
    if out not in DTYPES:
        raise TypeError(f"{OWNER}: dtype={dtype!r}; expected one of {', '.join(DTYPES)}")
    return out


def softmax_kernel(x: Any, *, dim: int = -1, dtype: str | None = None, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` :func:`softmax` runs for ``x`` (compiled once per process)."""
    op, rows, n, x_strides = row_view(OWNER, "x", x, dim)
    out_dtype = _output_dtype(op.info.dtype, dtype)
    # the output softmax() allocates: row-major like x, its rows contiguous when dim is the last
    fresh = None if dim % len(op.info.shape) == len(op.info.shape) - 1 else x_strides
    align = (row_alignment_of(op, rows, n, x_strides), row_alignment_of(None, rows, n, fresh, out_dtype))
    return compile_once(build_module, SoftmaxSpec(op.info.dtype, out_dtype, row_tiling(n, op.info.dtype), align), arch)


_FAST = FastCache()
"""Prepared calls of :func:`softmax` (:mod:`tilec.kernels.fast_path`)."""


def _checked_out(out: Any, x: Any, shape: tuple[int, ...], dtype: str, dim: int):
    """``out``'s :func:`row_view`, checked: ``x``'s shape, the output dtype, its own memory."""
    view = row_view(OWNER, "out", out, dim)
    o = view[0]
    if tuple(o.info.shape) != shape or o.info.dtype != dtype:
        raise ValueError(f"{OWNER}: out has shape {tuple(o.info.shape)} and dtype {o.info.dtype}; expected "
                         f"{shape} and {dtype}")
    check_output_memory(o, [x], OWNER, in_place=x)  # out=x: each block writes the rows it read
    return view


def softmax(x: Any, dim: int = -1, *, out: Any = None, dtype: str | None = None, stream: Any = None) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``; into ``out`` when given (``x``'s shape).

    A call whose torch tensors have the kinds of an earlier call's, with the same options, replays
    its checked launch (:mod:`tilec.kernels.fast_path`)."""
    key = row_call_key(OWNER, (x, out), dim, None if dtype is None else str(dtype))
    result = replay(_FAST, key, (x,), out, stream)
    if result is not None:
        return result
    op, rows, n, x_strides = row_view(OWNER, "x", x, dim)
    out_dtype = _output_dtype(op.info.dtype, dtype)
    shape = tuple(op.info.shape)
    if out is not None:
        _checked_out(out, op, shape, out_dtype, dim)
    else:
        check_allocatable(x, out_dtype, OWNER)
    if not has_device():
        raise NoDeviceError(f"{no_device_reason() or 'none found'} ({OWNER} checked its arguments; "
                            "tilec.softmax_kernel(...) gives the compiled kernel without a GPU)")
    if out is None:
        out = allocate_like(x, shape, out_dtype, OWNER)
    o, _, _, o_strides = _checked_out(out, op, shape, out_dtype, dim)
    align = (row_alignment_of(op, rows, n, x_strides), row_alignment_of(o, rows, n, o_strides))
    spec = SoftmaxSpec(op.info.dtype, out_dtype, row_tiling(n, op.info.dtype), align)
    kernel = compile_once(build_module, spec, None)
    views = [GlView(x, (rows, n), x_strides), GlView(out, (rows, n), o_strides)]
    launch(kernel, views, -(-rows // spec.rows_per_block), stream, x, _FAST, key)
    return out


__all__ = ["softmax", "softmax_kernel"]
