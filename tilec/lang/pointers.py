"""Elements at coordinates held in tiles: numpy's fancy indexing and Triton's pointer arithmetic.

A window (``tl.load(x, (r, c), shape=(BM, BN))``) reads the elements ``x[r + i, c + j]``. Where an
offset is a tile or a vector instead of a number, the load reads ``x`` at each element's own
coordinates, the index values broadcast together as the operators broadcast them (numpy's
``x[rows[:, None], cols[None, :]]``): an embedding's rows are ``tl.load(table, (ids[:, None],
tl.arange(0, D)[None, :]))``. ``tl.store`` writes the same way. Both are ``tile.gather`` and
``tile.scatter``, which move an element at a time (a window moves rows as vectors).

``x + offsets`` is Triton's ``x_ptr + offsets``: a :class:`Pointer`, whose offsets count elements in
memory from the array's first one (a 2-D array's element ``(r, c)`` is at ``r * x.stride(0) + c *
x.stride(1)``, the strides passed as arguments, as Triton's kernels take them). ``tl.load(ptr,
mask=m, other=o)`` and ``tl.store(ptr, v, mask=m)`` read and write it; offsets outside the memory the
array spans read ``other`` and are not written, so a wrong offset cannot touch another array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import SSAValue

from tilec.dialects.tile import ops as t
from tilec.lang.tracing import current, error
from tilec.lang.unsigned import holds_booleans, mark
from tilec.lang.values import (Expanded, Pointer, Scalar, Tile, Value, Vector, View, _materialize, _result_shape,
                               broadcast_dims,
                               _Shape, describe, fill_number, as_loaded, mask_bits, offset_width, stored_as,
                               wrap)

_ONE = _Shape("vector", (1, "col"))
"""One element's shape where a scalar pointer is read, written or combined: a vector of one."""


def has_index_tiles(offsets: Any) -> bool:
    """Whether a load's or store's offsets hold a tile or a vector (coordinates per element)."""
    parts = offsets if isinstance(offsets, (tuple, list)) else (offsets,)
    return any(isinstance(o, (Tile, Vector, Expanded)) for o in parts)


def _index_tiles(parts: Sequence[Any], extra: Sequence[Any], who: str) -> tuple[_Shape, list[SSAValue]]:
    """The offsets ``parts`` broadcast with each other (and with ``extra``: a mask) as register tiles of
    i32, or i64 where one of them is 64-bit; and their shape (an expanded vector alone is a 1 x N tile)."""
    width = max(offset_width(p, who) for p in parts)
    shape = _result_shape([*parts, *extra])  # a LangError at the line where they do not broadcast
    expanded = [p for p in (*parts, *extra) if isinstance(p, Expanded)]
    if shape.kind == "vector" and expanded:  # x + v[None, :] alone: a tile of one row (Triton's 1 x N pointers)
        n = expanded[0].vector.shape[0]
        shape = _Shape("tile", (n, 1) if expanded[0].axis == 0 else (1, n))
    if shape.kind == "scalar":
        raise error(f"{who}: the offsets are all numbers; give a window's shape=(...) or a tile of offsets")
    element = IntegerType(64 if width == 64 else 32)
    return shape, [_materialize(p, shape, element) for p in parts]


def _number_for(value: Any, view: View) -> Any:
    """A Python number written into ``view``: a bool as 0 / 1 (Triton's int1), into a ``bool`` array as its truth."""
    if isinstance(value, (bool, np.bool_)) or holds_booleans(view.value) and isinstance(value, (int, float)):
        return int(bool(value))
    return value


def _in_array_type(value: SSAValue, view: View) -> Value:
    """A number materialised in ``view``'s element type, read as the array reads it (unsigned)."""
    return wrap(mark(value) if view.dtype.is_unsigned else value)


def _check_fits(value: Any, shape: _Shape, who: str) -> None:
    """A stored value broadcasts to the pointers' shape, as Triton's does (a (1, n) tile along the rows too);
    it does not widen it."""
    fits = isinstance(value, Tile) and shape.kind == "tile" and broadcast_dims(value.shape, shape.dims) == tuple(shape.dims)
    if isinstance(value, Tile) and not fits or \
            isinstance(value, Vector) and shape.kind == "vector" and value.shape[0] != shape.dims[0]:
        dims = tuple(shape.dims) if shape.kind == "tile" else (shape.dims[0],)
        raise error(f"{who}: a {describe(value)} does not fit the {dims} offsets it is written at")


def _bits(mask: Any, like: SSAValue, who: str) -> Any:
    """``mask`` as i1 of the shape of ``like`` (True / False for a Python bool), as loads and stores take it."""
    return mask_bits(mask, wrap(like), who)


def gather(view: View, offsets: Any, shape: Any = None, *, mask: Any = None, other: Any = 0.0,
           linear: bool = False, who: str = "tl.load") -> Tile | Vector:
    """``view``'s elements at the coordinates in ``offsets`` (one per dimension; with ``linear``, one of
    offsets in memory): ``other`` where they fall outside the array or ``mask`` is false."""
    parts = list(offsets) if isinstance(offsets, (tuple, list)) else [offsets]
    want = 1 if linear else view.ndim
    if len(parts) != want:
        raise error(f"{who} of {view.name!r} ({view.ndim}-D) at coordinates held in tiles takes {want} "
                    f"offset{'s' if want > 1 else ''} (one per dimension), got {len(parts)}")
    result, indices = _index_tiles(parts, (), who)
    dims = tuple(result.dims) if result.kind == "tile" else tuple(result.dims[:1])
    if shape is not None and tuple(shape) != dims:
        raise error(f"{who}: shape={tuple(shape)} is not the shape of the offsets, {dims}")
    element = view.type.element_type
    bits = True if mask is None else _bits(mask, indices[0], who)
    number = isinstance(other, (int, float)) and not isinstance(other, bool)
    if not number and mask is None:
        raise error(f"{who}'s other= is a tile, vector or scalar only with mask= (it fills where the mask is "
                    "false); without one, elements outside the array read as a number")
    fill = 0.0 if not number else fill_number(other, view, who)
    if bits is False:  # nothing is read: other everywhere
        if number and isinstance(element, IntegerType):
            other = int(fill)
        return as_loaded(_materialize(other, result, element), view)
    fill_mask = None if bits is True else bits.value
    # a tile-valued other fills the elements not read (outside the array, or masked off) element by element
    fill_tile = None if number else _materialize(other, result, element)
    return as_loaded(current().value(t.GatherOp(view.value, indices, result.register_type(element), linear,
                                             fill_mask, None if fill_tile is not None else fill, fill_tile),
                                  f"{view.name}_g"), view)


def scatter(view: View, offsets: Any, value: Any, *, mask: Any = None, linear: bool = False,
            who: str = "tl.store") -> None:
    """``value`` (broadcast to the offsets' shape) into ``view`` at the coordinates in ``offsets``; elements
    outside the array, or where ``mask`` is false, are not written."""
    parts = list(offsets) if isinstance(offsets, (tuple, list)) else [offsets]
    want = 1 if linear else view.ndim
    if len(parts) != want:
        raise error(f"{who} into {view.name!r} ({view.ndim}-D) at coordinates held in tiles takes {want} "
                    f"offset{'s' if want > 1 else ''} (one per dimension), got {len(parts)}")
    if not isinstance(value, (Tile, Vector, Expanded, Scalar, int, float)):
        raise error(f"{who} writes a tile, a vector or a scalar, got {describe(value)}")
    value = _number_for(value, view)
    result, indices = _index_tiles(parts, [mask] if isinstance(mask, (Tile, Vector, Expanded)) else [], who)
    _check_fits(value, result, who)
    element = view.type.element_type
    if isinstance(value, (int, float)) or isinstance(value, Scalar) and isinstance(value.type, IndexType):
        # a number, or an index scalar (tl.store(o + pid, pid)), in the array's type (an unsigned one's range)
        data = _in_array_type(_materialize(value, result, element, view.dtype.is_unsigned), view)
    else:
        own = value.vector.type.element_type if isinstance(value, Expanded) else (
            value.type.element_type if isinstance(value, (Tile, Vector)) else value.type)
        data = wrap(_materialize(value, result, own))
    if data.type.element_type != element:
        data = stored_as(data, view)
    bits = True if mask is None else _bits(mask, data.value, who)
    if bits is False:
        return
    current().emit(t.ScatterOp(data.value, view.value, indices, None if bits is True else bits.value, linear))


def atomic(kind: str, view: View, offsets: Any, value: Any, cmp: Any, mask: Any, linear: bool, ordered: bool,
           who: str) -> Tile | Vector | Scalar:
    """``tile.scatter_atomic`` of ``kind``: ``value`` (and ``cas``'s ``cmp``) broadcast to the offsets' shape,
    combined into ``view`` at them; the old values in that shape (a scalar for one scalar offset)."""
    kinds = t.ATOMIC_KINDS[kind]
    if view.type.element_type not in kinds:
        raise error(f"{who} combines {' or '.join(str(k) for k in kinds)} elements atomically; {view.name!r} holds "
                    f"{view.dtype}")
    parts = list(offsets) if isinstance(offsets, (tuple, list)) else [offsets]
    one = not has_index_tiles(parts)
    if one:  # one element (x + i with a scalar i): a vector of one
        parts = [wrap(_materialize(p, _ONE, IntegerType(64))) for p in parts]
        if isinstance(mask, Scalar):
            mask = wrap(_materialize(mask, _ONE, IntegerType(1)))
    for what, x in (("value", value), ("cmp", cmp)):
        if x is not None and (not isinstance(x, (Tile, Vector, Expanded, Scalar, int, float)) or isinstance(x, bool)):
            raise error(f"{who} combines a tile, a vector or a scalar, got {describe(x)} as its {what}")
    result, indices = _index_tiles(parts, [mask] if isinstance(mask, (Tile, Vector, Expanded)) else [], who)
    for x in (value, cmp):
        _check_fits(x, result, who)
    element = view.type.element_type

    def as_data(x: Any) -> Value:
        x = _number_for(x, view)
        number = isinstance(x, (int, float)) or isinstance(x, Scalar) and isinstance(x.type, IndexType)
        own = element if number else (
            x.vector.type.element_type if isinstance(x, Expanded) else
            x.type.element_type if isinstance(x, (Tile, Vector)) else x.type)
        data = wrap(_materialize(x, result, own, number and view.dtype.is_unsigned))
        if number:
            data = _in_array_type(data.value, view)
        return data if data.type.element_type == element else stored_as(data, view)

    data = as_data(value)
    compared = None if cmp is None else as_data(cmp)
    bits = True if mask is None else _bits(mask, data.value, who)
    if bits is False:
        from_nothing = wrap(_materialize(0, result, element))
        return Scalar(current().value(t.ExtractOp(from_nothing.value))) if one else from_nothing
    op = t.ScatterAtomicOp(kind, data.value, view.value, indices, None if compared is None else compared.value,
                           returns=True, mask=None if bits is True else bits.value, ordered=ordered, linear=linear)
    old = wrap(current().value(op))
    return Scalar(current().value(t.ExtractOp(old.value))) if one else old


def load(ptr: Pointer, mask: Any = None, other: Any = None, who: str = "tl.load") -> Tile | Vector | Scalar:
    """``tl.load(x + offsets, mask=..., other=...)``: the elements at the pointers (a scalar for one)."""
    other = 0 if other is None else other
    if isinstance(ptr.offset, (Tile, Vector, Expanded)):
        return gather(ptr.view, (ptr.offset,), mask=mask, other=other, linear=True, who=who)
    # one element: a gather of one (outside the array, or masked off, it reads other), as a scalar
    offset_width(ptr.offset, who)
    if mask is not None and not isinstance(mask, bool):
        if not (isinstance(mask, Scalar) and mask.type == IntegerType(1)):
            raise error(f"{who} of one element takes a boolean scalar as mask=, got {describe(mask)}")
        mask = wrap(_materialize(mask, _ONE, IntegerType(1)))
    at = wrap(_materialize(ptr.offset, _ONE, IntegerType(64)))
    got = gather(ptr.view, (at,), mask=mask, other=other, linear=True, who=who)
    return Scalar(current().value(t.ExtractOp(got.value), f"{ptr.view.name}_s"))


def store(ptr: Pointer, value: Any, mask: Any = None, who: str = "tl.store") -> None:
    """``tl.store(x + offsets, value, mask=...)``: ``value`` written at the pointers."""
    offset = ptr.offset
    if not isinstance(offset, (Tile, Vector, Expanded)):  # one element: a vector of one
        offset_width(offset, who)
        offset = wrap(_materialize(offset, _ONE, IntegerType(64)))
        if isinstance(value, (Tile, Vector, Expanded)):
            raise error(f"{who} of a {describe(value)} at one pointer: give a tile of pointers (x + offsets)")
        if isinstance(mask, Scalar):
            mask = wrap(_materialize(mask, _ONE, IntegerType(1)))
    scatter(ptr.view, (offset,), value, mask=mask, linear=True, who=who)


__all__ = ["atomic", "gather", "has_index_tiles", "load", "scatter", "store"]
