"""What the row-wise kernels (softmax, the norms) share: an array as rows, the output allocated like
the input, the stream to launch on, one compile per kernel spec and arch."""

from __future__ import annotations

import functools
import numbers
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from tilec.api import compile as tilec_compile
from tilec.api import target_arch
from tilec.kernels.fast_path import FastCache, OutputGuard, tensor_key
from tilec.kernels.fast_path import prepare as prepare_fast_call
from tilec.kernels.gemm_plan import ITEMSIZE, KernelView, Operand, array_library, describe_operand, row_alignment
from tilec.kernels.gemm_plan import fresh_row_alignment
from tilec.runtime.arrays import is_torch_tensor
from tilec.runtime.dtypes import numpy_dtype
from tilec.runtime.gl_views import GlView, expand

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
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
        raise TypeError(f"{owner}: dim must be an integer, got {dim!r}")
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


def row_call_key(name: str, arrays: tuple, *options: Any) -> tuple | None:
    """The fast-path key of a row kernel call (:mod:`tilec.kernels.fast_path`): each array's kinds
    (None stays None: an absent optional array), and the options; None unless every given array is a
    torch tensor and every option is an int, float, str or None (``True == 1`` must not meet)."""
    keys = []
    for a in arrays:
        k = None if a is None else tensor_key(a)
        if a is not None and k is None:
            return None
        keys.append(k)
    if any(o is not None and type(o) not in (int, float, str) for o in options):
        return None
    return (name, *keys, *((type(o), o) for o in options))


def replay(cache: FastCache, key: tuple | None, arrays: tuple, out: Any, stream: Any) -> Any:
    """The result of the prepared call for ``key`` with ``arrays`` (inputs, in the kernel's order) and
    ``out`` (allocated when None, last), or None when there is none or it cannot take them."""
    fast = cache.get(key)
    if fast is None:
        return None
    result = out if out is not None else fast.allocate()
    pointers = tuple(a.data_ptr() for a in arrays if a is not None) + (result.data_ptr(),)
    return result if fast.launch(pointers, stream) else None


def launch(kernel: Any, views: list, grid: int, stream: Any, like: Any, cache: FastCache, key: tuple | None) -> None:
    """Launch ``kernel`` on ``views`` (its arguments; the output's view last of the arrays) over ``grid``
    blocks, on ``stream`` (default: torch's current for a torch ``like``); remember the call in
    ``cache`` under ``key`` when it has one (every array a torch tensor)."""
    flat = expand(kernel, *views)
    kernel(*flat, grid=(grid, 1, 1), stream=torch_stream(like) if stream is None else stream)
    if key is None:
        return
    arrays = [v.array for v in views if isinstance(v, GlView)]
    if not all(is_torch_tensor(a) for a in arrays):
        return
    out = arrays[-1]
    # optional: torch is installed when the arrays are torch tensors
    import torch

    allocate = functools.partial(torch.empty, tuple(out.shape), dtype=out.dtype, device=out.device)
    try:
        guard = OutputGuard(arrays, len(arrays) - 1)
        cache.put(key, prepare_fast_call(kernel, flat, (grid, 1, 1), [g.name for g in kernel.gl_params],
                                         [a.data_ptr() for a in arrays], out.device, allocate, guard))
    except Exception:  # launched; without a prepared call the next one is checked again
        pass


_KERNELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def compile_once(build: Callable[[Any], Any], spec: Any, arch: str | None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` of ``build(spec)`` for ``arch`` (the GPU's by default),
    compiled once per process (and cached on disk by :func:`tilec.compile`)."""
    key = (spec, target_arch(arch))
    with _LOCK:
        if key not in _KERNELS:
            _KERNELS[key] = tilec_compile(build(spec), arch=key[1])
        return _KERNELS[key]


def check_allocatable(like: Any, dtype: str, owner: str) -> None:
    """Whether :func:`allocate_like` can make an output like ``like`` (checked with the arguments, before
    any GPU is needed): torch, cupy (not bf16) or numpy (not bf16)."""
    lib = array_library(like)
    if lib not in ("torch", "cupy", "numpy"):  # a device array of another library: numpy would be host memory
        raise TypeError(f"{owner}: cannot allocate the output like a {type(like).__name__}; pass out=")
    if dtype == "bfloat16" and (lib == "cupy" or lib == "numpy" and numpy_dtype(dtype) is None):
        raise TypeError(f"{owner}: {lib} has no bfloat16: pass out= a bf16 device array or another dtype")


def allocate_like(like: Any, shape: tuple[int, ...], dtype: str, owner: str) -> Any:
    """An uninitialised ``shape`` array of ``dtype`` from ``like``'s library and device."""
    check_allocatable(like, dtype, owner)
    lib = array_library(like)
    if lib == "torch":
        # optional: torch is installed when an input is a torch tensor
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if lib == "cupy":
        # optional: cupy is installed when an input is a cupy array
        import cupy

        return cupy.empty(shape, dtype)
    return np.empty(shape, numpy_dtype(dtype))  # bf16: ml_dtypes' type


def torch_stream(like: Any) -> int | None:
    """torch's current stream for a torch input (so the launch orders with torch's work), else None."""
    if array_library(like) != "torch":
        return None
    # optional: torch is installed when an input is a torch tensor
    import torch

    return torch.cuda.current_stream(like.device).cuda_stream


__all__ = ["DTYPES", "allocate_like", "compile_once", "launch", "replay", "row_alignment_of", "row_call_key", "row_view",
           "torch_stream"]
