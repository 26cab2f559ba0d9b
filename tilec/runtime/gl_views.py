"""Launching kernels with the gl ABI: one array → pointer, extents, strides (and tensor maps).

The ABI itself (which parameters a ``!tile.gl`` view becomes, and reading
them from a lowered kernel) is :mod:`tilec.dialects.abi`; this is its launch
side. :func:`expand` turns one Python value per view into the flat argument
list the launcher takes::

    k = tilec.compile("examples/gemm.mlir")
    k(*expand(k, a, b, c), grid=(blocks, 1, 1))     # a, b, c: torch/cupy/numpy arrays

An array's own shape and strides are used (any strides, so transposed and
sliced views need no copy); :class:`GlView` gives the extents and strides
explicitly (e.g. a transposed view of an array whose library cannot make
one). Parameters outside the groups (scalars) take the next value as is.
A view's tensor maps become :class:`~tilec.runtime.tensor_map.TensorMapArg`\\ s
of the same array as its pointer, extents and strides; the launcher encodes
them. :func:`check_aligned_rows` checks a view's ``tile.aligned_rows``
promise before a launch. Nothing here touches the GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tilec.dialects.abi import GlParam
from tilec.dialects.tile.types import EXTENT_LIMIT
from tilec.runtime.arrays import NotAnArray, describe_array, is_torch_tensor
from tilec.runtime.tensor_map import TensorMapArg


@dataclass(frozen=True)
class GlView:
    """An array with explicit extents and strides (in elements) for a gl parameter."""

    array: Any
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def __post_init__(self):
        for d in self.shape:
            if not 0 <= int(d) < EXTENT_LIMIT:
                raise ValueError(f"GlView: extent {d} of shape {tuple(self.shape)} must be in [0, 2^62)")


def view_of(value: Any, what: str = "argument") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(extents, strides in elements) of an array, or of a :class:`GlView`."""
    if isinstance(value, GlView):
        return tuple(int(d) for d in value.shape), tuple(int(s) for s in value.strides)
    if is_torch_tensor(value) and getattr(value, "is_cuda", False):
        # torch gives element strides itself: no ArrayInfo per call (a CPU tensor goes on to the error below)
        return tuple(value.shape), tuple(value.stride())
    try:
        info = describe_array(value)
    except NotAnArray:
        raise TypeError(f"{what}: expected an array (torch/cupy/numpy), got {type(value).__name__}") from None
    except (TypeError, ValueError) as e:
        raise type(e)(f"{what}: {e}") from None
    strides = []
    for s in info.byte_strides():
        if s % info.itemsize:
            raise ValueError(f"{what}: byte strides {info.byte_strides()} are not whole elements of {info.itemsize} bytes")
        strides.append(s // info.itemsize)
    return info.shape, tuple(strides)


def expand(kernel_or_params: Any, *args: Any, signature_length: int | None = None) -> list[Any]:
    """The flat launch arguments: each gl group's value → array, extents..., strides...

    ``kernel_or_params``: a :class:`~tilec.api.CompiledKernel` (its
    ``gl_params`` and ``signature``) or a sequence of :class:`GlParam` (then
    ``signature_length`` is the number of kernel parameters). ``args``: one
    value per gl group and one per other parameter, in signature order.
    """
    params: Sequence[GlParam]
    if hasattr(kernel_or_params, "gl_params"):
        params = kernel_or_params.gl_params
        n = len(kernel_or_params.signature)
    else:
        params = tuple(kernel_or_params)
        if signature_length is None:
            raise TypeError("expand: give signature_length with a list of GlParam")
        n = signature_length
    by_pointer = {g.pointer: g for g in params}
    skipped = {i for g in params for i in (*g.dims, *g.strides, *(m[0] for m in g.tensor_maps))}
    slots = [i for i in range(n) if i not in skipped]
    if len(args) != len(slots):
        names = [by_pointer[i].name if i in by_pointer else f"#{i}" for i in slots]
        raise TypeError(f"expected {len(slots)} argument(s) ({', '.join(names)}): one array per gl view "
                        f"and one value per other parameter; got {len(args)}")
    flat: list[Any] = [None] * n
    for i, value in zip(slots, args):
        g = by_pointer.get(i)
        if g is None:
            flat[i] = value
            continue
        shape, strides = view_of(value, f"gl argument '{g.name}'")
        if len(shape) != g.rank:
            raise ValueError(f"gl argument '{g.name}': expected a {g.rank}-d array, got shape {shape}")
        flat[i] = value.array if isinstance(value, GlView) else value
        for j in range(g.rank):
            flat[g.dims[j]] = shape[j]
            flat[g.strides[j]] = strides[j]
        if g.tensor_maps:
            try:
                address = _address(flat[i])
            except NotAnArray:
                raise TypeError(f"gl argument '{g.name}': expected an array, got {type(flat[i]).__name__}") from None
            for index, rows, inner, swizzle in g.tensor_maps:
                flat[index] = TensorMapArg.of(address, g.dtype, shape, strides, (rows, inner), swizzle)
    return flat


def _address(value: Any) -> int:
    if is_torch_tensor(value):
        return int(value.data_ptr())
    if isinstance(value, int):
        return value
    return describe_array(value).ptr


def aligned_rows_problem(g: GlParam, address: int, shape: Sequence[int], strides: Sequence[int]) -> str | None:
    """What breaks ``g``'s ``tile.aligned_rows`` promise for a view, or None when it holds.

    The promise: the innermost stride is 1, and the address, every outer
    stride and the row length are whole multiples of ``aligned_rows`` bytes.
    """
    align, size = g.aligned_rows, g.element_bytes
    if not align:
        return None
    if strides[-1] != 1:
        return f"its innermost stride is {strides[-1]} elements, not 1"
    if address % align:
        return f"its address {address:#x} is not a multiple of {align} bytes"
    for d, s in enumerate(strides[:-1]):
        if (s * size) % align:
            return f"stride {d} is {s} elements = {s * size} bytes, not a multiple of {align}"
    if (shape[-1] * size) % align:
        return f"its rows are {shape[-1]} elements = {shape[-1] * size} bytes, not a multiple of {align}"
    return None


def check_aligned_rows(params: Sequence[GlParam], args: Sequence[Any], kernel: str) -> None:
    """Raise ValueError naming the argument when a flat launch breaks a ``tile.aligned_rows`` promise."""
    for g in params:
        if not g.aligned_rows or max(g.pointer, *g.dims, *g.strides) >= len(args) \
                or isinstance(args[g.pointer], GlView):
            continue
        try:
            address = _address(args[g.pointer])
            shape = [int(args[i]) for i in g.dims]
            strides = [int(args[i]) for i in g.strides]
        except (NotAnArray, TypeError, ValueError, IndexError):
            continue  # not an array, or too few arguments: the signature check names that
        problem = aligned_rows_problem(g, address, shape, strides)
        if problem is not None:
            raise ValueError(
                f"kernel '{kernel}': gl argument '{g.name}' was compiled with tile.aligned_rows = {g.aligned_rows} "
                f"(contiguous rows, {g.aligned_rows}-byte aligned and a whole number of {g.aligned_rows}-byte "
                f"vectors) but {problem}; pass such a view or compile without tile.aligned_rows"
            )


__all__ = ["GlView", "aligned_rows_problem", "check_aligned_rows", "expand", "view_of"]
