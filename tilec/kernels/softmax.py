"""``tilec.softmax``: the softmax of every row of an array, on torch / cupy / numpy arrays.

    y = tilec.softmax(x)              # over the last dimension, like torch.softmax(x, -1)
    y = tilec.softmax(x, dim=0)       # over columns: the same kernel on the transposed view (no copy)
    k = tilec.softmax_kernel(x)       # the compiled kernel, without a GPU

``x`` is f32, f16 or bf16, 1-D or 2-D, with any strides (rows need not be contiguous); the
result has ``x``'s dtype unless ``dtype=`` says otherwise, and f32 math is used inside. The
kernel (:mod:`tilec.kernels.softmax_ir`) goes through the general passes; it reads ``x`` twice
(an online max and sum, then the normalised exponentials), so it moves 1.5x the bytes of a
single pass: rows of any length, no row held in registers.
"""

from __future__ import annotations

import threading
from typing import Any

from tilec.api import compile as tilec_compile
from tilec.api import default_arch
from tilec.kernels.gemm_plan import Operand, describe_operand
from tilec.kernels.outputs import allocate_like, torch_stream
from tilec.kernels.softmax_ir import SoftmaxSpec, build_module
from tilec.runtime import NoDeviceError, has_device, no_device_reason
from tilec.runtime.gl_views import GlView, expand

_KERNELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()
DTYPES = ("float32", "float16", "bfloat16")


def _check(x: Any, dim: int, dtype: str | None) -> tuple[Operand, int, int, tuple[int, int], str]:
    """(operand, rows, row length, (row stride, column stride) of the rows view, output dtype)."""
    op = describe_operand("x", x, "tilec.softmax")
    if op.info.dtype not in DTYPES:
        raise TypeError(f"tilec.softmax: x has dtype {op.info.dtype}; expected one of {', '.join(DTYPES)}")
    out_dtype = op.info.dtype if dtype is None else str(dtype).removeprefix("torch.")
    if out_dtype not in DTYPES:
        raise TypeError(f"tilec.softmax: dtype={dtype!r}; expected one of {', '.join(DTYPES)}")
    shape, strides = op.info.shape, op.strides
    if len(shape) not in (1, 2):
        raise ValueError(f"tilec.softmax: x has shape {tuple(shape)}; expected 1 or 2 dimensions")
    if not -len(shape) <= dim < len(shape):
        raise ValueError(f"tilec.softmax: dim={dim} is not a dimension of x (shape {tuple(shape)})")
    if any(s == 0 for s in shape):
        raise ValueError(f"tilec.softmax: x is empty (shape {tuple(shape)})")
    if len(shape) == 1:
        return op, 1, shape[0], (0, strides[0]), out_dtype
    if dim % 2 == 1:
        return op, shape[0], shape[1], (strides[0], strides[1]), out_dtype
    return op, shape[1], shape[0], (strides[1], strides[0]), out_dtype  # the columns as rows


def _kernel(spec: SoftmaxSpec, arch: str | None) -> Any:
    arch = arch or default_arch()
    key = (spec, arch)
    with _LOCK:
        kernel = _KERNELS.get(key)
        if kernel is None:
            kernel = _KERNELS[key] = tilec_compile(build_module(spec), arch=arch)
    return kernel


def softmax_kernel(x: Any, *, dim: int = -1, dtype: str | None = None, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` :func:`softmax` runs for ``x`` (compiled once per process)."""
    op, _, _, _, out_dtype = _check(x, dim, dtype)
    return _kernel(SoftmaxSpec(op.info.dtype, out_dtype), arch)


def softmax(x: Any, dim: int = -1, *, out: Any = None, dtype: str | None = None, stream: Any = None) -> Any:
    """``exp(x - max) / sum(exp(x - max))`` along ``dim``; into ``out`` when given (``x``'s shape)."""
    op, rows, n, (row_stride, col_stride), out_dtype = _check(x, dim, dtype)
    if not has_device():
        raise NoDeviceError(f"{no_device_reason() or 'none found'} (tilec.softmax checked its arguments; "
                            "tilec.softmax_kernel(...) gives the compiled kernel without a GPU)")
    shape = tuple(op.info.shape)
    if out is None:
        out = allocate_like(x, shape, out_dtype, "tilec.softmax")
    o = describe_operand("out", out, "tilec.softmax")
    if tuple(o.info.shape) != shape or o.info.dtype != out_dtype:
        raise ValueError(f"tilec.softmax: out has shape {tuple(o.info.shape)} and dtype {o.info.dtype}; expected "
                         f"{shape} and {out_dtype}")
    o_strides = (0, o.strides[0]) if len(shape) == 1 else \
        (o.strides[0], o.strides[1]) if dim % 2 == 1 else (o.strides[1], o.strides[0])
    spec = SoftmaxSpec(op.info.dtype, out_dtype)
    kernel = _kernel(spec, None)
    views = [GlView(x, (rows, n), (row_stride, col_stride)), GlView(out, (rows, n), o_strides)]
    grid = -(-rows // spec.rows_per_block)
    kernel(*expand(kernel, *views), grid=(grid, 1, 1), stream=torch_stream(x) if stream is None else stream)
    return out


__all__ = ["softmax", "softmax_kernel"]
