"""What the row-wise kernels (softmax, the norms) share: an array as rows, the output allocated like
the input, the stream to launch on, one compile per kernel spec and arch."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tilec.api import compile as tilec_compile
from tilec.api import default_arch
from tilec.kernels.gemm_plan import ITEMSIZE, KernelView, Operand, array_library, describe_operand, row_alignment
from tilec.kernels.gemm_plan import fresh_row_alignment

DTYPES = ("float32", "float16", "bfloat16")
"""The element types the row kernels take and give."""


def row_view(owner: str, name: str, value: Any, dim: int = -1) -> tuple[Operand, int, int, tuple[int, int]]:
    """``value`` (1-D or 2-D, non-empty, of :data:`DTYPES`) as rows along ``dim``: (operand, rows, row
    length, (row stride, column stride)). Along dim 0 the rows are the columns: no copy."""
    op = describe_operand(name, value, owner)
    shape, strides = tuple(op.info.shape), op.strides
    if op.info.dtype not in DTYPES:
        raise TypeError(f"{owner}: {name} has dtype {op.info.dtype}; expected one of {', '.join(DTYPES)}")
    if len(shape) not in (1, 2):
        raise ValueError(f"{owner}: {name} has shape {shape}; expected 1 or 2 dimensions")
    if not -len(shape) <= dim < len(shape):
        raise ValueError(f"{owner}: dim={dim} is not a dimension of {name} (shape {shape})")
    if any(d == 0 for d in shape):
        raise ValueError(f"{owner}: {name} is empty (shape {shape})")
    if len(shape) == 1:
        return op, 1, shape[0], (0, strides[0])
    if dim % 2 == 1:
        return op, shape[0], shape[1], (strides[0], strides[1])
    return op, shape[1], shape[0], (strides[1], strides[0])


def row_alignment_of(op: Operand | None, rows: int, n: int, strides: tuple[int, int] | None,
                     dtype: str | None = None) -> int:
    """The ``tile.aligned_rows`` a row kernel may assume of ``op`` seen as ``rows x n`` with ``strides``
    (0 for none). ``op=None``: an output :func:`allocate_like` will make, row-major, of ``dtype``
    (``strides=None`` when its rows are the array's rows, else it has none)."""
    if op is None:
        return fresh_row_alignment(n, ITEMSIZE[dtype]) if strides is None else 0
    return row_alignment(KernelView(op, (rows, n), strides))


_KERNELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def compile_once(build: Callable[[Any], Any], spec: Any, arch: str | None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` of ``build(spec)`` for ``arch`` (the GPU's by default),
    compiled once per process (and cached on disk by :func:`tilec.compile`)."""
    key = (spec, arch or default_arch())
    with _LOCK:
        if key not in _KERNELS:
            _KERNELS[key] = tilec_compile(build(spec), arch=key[1])
        return _KERNELS[key]


def allocate_like(like: Any, shape: tuple[int, ...], dtype: str, owner: str) -> Any:
    """An uninitialised ``shape`` array of ``dtype`` from ``like``'s library and device."""
    lib = array_library(like)
    if lib == "torch":
        # optional: torch is installed when an input is a torch tensor
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        raise TypeError(f"{owner}: {lib} has no bfloat16: pass out= a bf16 device array or another dtype")
    if lib == "cupy":
        # optional: cupy is installed when an input is a cupy array
        import cupy

        return cupy.empty(shape, dtype)
    return np.empty(shape, dtype)


def torch_stream(like: Any) -> int | None:
    """torch's current stream for a torch input (so the launch orders with torch's work), else None."""
    if array_library(like) != "torch":
        return None
    # optional: torch is installed when an input is a torch tensor
    import torch

    return torch.cuda.current_stream(like.device).cuda_stream


__all__ = ["DTYPES", "allocate_like", "compile_once", "row_alignment_of", "row_view", "torch_stream"]
