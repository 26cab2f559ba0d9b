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

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import SSAValue

from tilec.dialects.tile import ops as t
from tilec.lang.dtypes import DType
from tilec.lang.tracing import current, error
from tilec.lang.values import (Expanded, Scalar, Tile, Value, Vector, View, _materialize, _result_shape, _Shape,
                               index, where, wrap)

_INDEX_WIDTHS = (8, 16, 32, 64)


def _describe(x: Any) -> str:
    return x.describe() if hasattr(x, "describe") else f"{type(x).__name__} {x!r}"


def has_index_tiles(offsets: Any) -> bool:
    """Whether a load's or store's offsets hold a tile or a vector (coordinates per element)."""
    parts = offsets if isinstance(offsets, (tuple, list)) else (offsets,)
    return any(isinstance(o, (Tile, Vector, Expanded)) for o in parts)


def _integer_width(o: Any, who: str) -> int:
    """The width of an index's integers (0 for a Python int or an index scalar); an error for anything else."""
    if isinstance(o, int) and not isinstance(o, bool):
        return 0
    ty = o.vector.type.element_type if isinstance(o, Expanded) else (
        o.type.element_type if isinstance(o, (Tile, Vector)) else getattr(o, "type", None))
    if isinstance(o, Scalar) and not isinstance(ty, IntegerType):
        return 0  # an index scalar (a block id, a loop counter)
    if isinstance(o, (Tile, Vector, Expanded, Scalar)) and isinstance(ty, IntegerType) and ty.width.data in _INDEX_WIDTHS:
        return ty.width.data
    raise error(f"{who}: offsets are integers (ints, integer scalars, or tiles and vectors of them), got {_describe(o)}")


def _index_tiles(parts: Sequence[Any], extra: Sequence[Any], who: str) -> tuple[_Shape, list[SSAValue]]:
    """The offsets ``parts`` broadcast with each other (and the shape of ``extra``: a stored value) as
    register tiles of i32, or i64 where one of them is 64-bit."""
    width = max(_integer_width(p, who) for p in parts)
    try:
        shape = _result_shape([*parts, *extra])
    except Exception as e:  # a LangError naming the shapes that do not broadcast
        raise error(f"{who}: {e}") from None
    if shape.kind == "scalar":
        raise error(f"{who}: the offsets are all numbers; give a window's shape=(...) or a tile of offsets")
    element = IntegerType(64 if width == 64 else 32)
    return shape, [_materialize(p, shape, element) for p in parts]


def _bits(mask: Any, like: SSAValue, who: str) -> Any:
    """``mask`` as i1 of the shape of ``like`` (True / False for a Python bool)."""
    from tilec.lang.ops import _mask  # the loads' and stores' own rule for masks

    return _mask(mask, wrap(like), who)


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
    if shape is not None and tuple(shape) != (result.dims if result.kind == "tile" else result.dims[:1]):
        raise error(f"{who}: shape={tuple(shape)} is not the shape of the offsets, {result.dims[:2 if result.kind == 'tile' else 1]}")
    element = view.type.element_type
    bits = True if mask is None else _bits(mask, indices[0], who)
    number = isinstance(other, (int, float)) and not isinstance(other, bool)
    if not number and mask is None:
        raise error(f"{who}'s other= is a tile, vector or scalar only with mask= (it fills where the mask is "
                    "false); without one, elements outside the array read as a number")
    fill = 0.0 if not number else float(other)
    if number and isinstance(element, IntegerType) and not (
            fill.is_integer() and -(1 << (element.width.data - 1)) <= fill < (1 << (element.width.data - 1))):
        raise error(f"other={other!r} is not an int{element.width.data} value for {view.name!r} of {view.dtype}")
    if bits is False:  # nothing is read: other everywhere
        if number and isinstance(element, IntegerType):
            other = int(fill)
        return wrap(_materialize(other, result, element))
    fill_mask = None if bits is True else bits.value
    loaded = wrap(current().value(t.GatherOp(view.value, indices, result.register_type(element), linear,
                                             fill_mask, fill), f"{view.name}_g"))
    if number:
        return loaded
    return where(bits, loaded, other.to(loaded.dtype) if isinstance(other, Value) else other)


def scatter(view: View, offsets: Any, value: Any, *, mask: Any = None, linear: bool = False,
            who: str = "tl.store") -> None:
    """``value`` (broadcast to the offsets' shape) into ``view`` at the coordinates in ``offsets``; elements
    outside the array, or where ``mask`` is false, are not written."""
    from tilec.lang.ops import _stored_as

    parts = list(offsets) if isinstance(offsets, (tuple, list)) else [offsets]
    want = 1 if linear else view.ndim
    if len(parts) != want:
        raise error(f"{who} into {view.name!r} ({view.ndim}-D) at coordinates held in tiles takes {want} "
                    f"offset{'s' if want > 1 else ''} (one per dimension), got {len(parts)}")
    if not isinstance(value, (Tile, Vector, Expanded, Scalar, int, float)) or isinstance(value, bool):
        raise error(f"{who} writes a tile, a vector or a scalar, got {_describe(value)}")
    result, indices = _index_tiles(parts, (value,), who)
    element = view.type.element_type
    if isinstance(value, (int, float)):
        data = wrap(_materialize(value, result, element))
    else:
        own = value.vector.type.element_type if isinstance(value, Expanded) else (
            value.type.element_type if isinstance(value, (Tile, Vector)) else value.type)
        data = wrap(_materialize(value, result, own))
    if data.type.element_type != element:
        data = _stored_as(data, view)
    bits = True if mask is None else _bits(mask, data.value, who)
    if bits is False:
        return
    current().emit(t.ScatterOp(data.value, view.value, indices, None if bits is True else bits.value, linear))


class Pointer:
    """``x + offsets``: the elements of array ``x`` at ``offsets`` elements in memory from its first one
    (an int, an integer scalar, or a tile or vector of them: Triton's pointer or tensor of pointers)."""

    __slots__ = ("view", "offset")
    carried_as_offsets = True
    """Carried through loops and ``if``\\ s as its offsets (:func:`tilec.lang.block_ptr.flatten_carried`)."""

    def __init__(self, view: View, offset: Any):
        self.view, self.offset = view, offset

    @property
    def dtype(self) -> DType:
        """The array's element type (``ptr.dtype.element_ty`` too, as Triton's pointer types spell it)."""
        return self.view.dtype

    def _moved(self, delta: Any, sign: int) -> Pointer:
        _integer_width(delta, f"{self.view.name} + offsets")
        if isinstance(delta, int) and isinstance(self.offset, int):
            return Pointer(self.view, self.offset + sign * delta)
        if isinstance(self.offset, int) and self.offset == 0 and sign > 0:
            return Pointer(self.view, delta)
        return Pointer(self.view, self.offset + delta if sign > 0 else self.offset - delta)

    def __add__(self, delta: Any) -> Pointer:
        return self._moved(delta, 1)

    __radd__ = __add__

    def __sub__(self, delta: Any) -> Pointer:
        return self._moved(delta, -1)

    @property
    def offsets(self) -> tuple[Any, ...]:
        return (self.offset,)

    def with_offsets(self, offsets: Sequence[Any]) -> Pointer:
        return Pointer(self.view, offsets[0])

    def same_window_shape(self, other: Any) -> bool:
        return isinstance(other, Pointer) and other.view is self.view

    def describe(self) -> str:
        kind = "pointers" if isinstance(self.offset, (Tile, Vector, Expanded)) else "pointer"
        return f"{kind} into {self.view.name!r} ({self.view.dtype})"

    def __bool__(self) -> bool:
        raise error(f"{self.describe()} has no truth value")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


def load(ptr: Pointer, mask: Any = None, other: Any = None, who: str = "tl.load") -> Tile | Vector | Scalar:
    """``tl.load(x + offsets, mask=..., other=...)``: the elements at the pointers (a scalar for one)."""
    other = 0.0 if other is None else other
    if isinstance(ptr.offset, (Tile, Vector, Expanded)):
        return gather(ptr.view, (ptr.offset,), mask=mask, other=other, linear=True, who=who)
    # one element: a scalar, as Triton's load of a pointer
    _integer_width(ptr.offset, who)
    op = t.LoadScalarOp(ptr.view.value, [index(ptr.offset, f"{who}'s offset")], linear=True)
    value = Scalar(current().value(op, f"{ptr.view.name}_s"))
    if mask is None or mask is True:
        return value
    if not (mask is False or isinstance(mask, Scalar) and mask.type == IntegerType(1)):
        raise error(f"{who} of one element takes a boolean scalar as mask=, got {_describe(mask)}")
    return where(mask, value, other)


def store(ptr: Pointer, value: Any, mask: Any = None, who: str = "tl.store") -> None:
    """``tl.store(x + offsets, value, mask=...)``: ``value`` written at the pointers."""
    offset = ptr.offset
    if not isinstance(offset, (Tile, Vector, Expanded)):  # one element: a vector of one
        _integer_width(offset, who)
        offset = wrap(_materialize(offset, _Shape("vector", (1, "col")), IntegerType(64)))
        if isinstance(value, (Tile, Vector, Expanded)):
            raise error(f"{who} of a {_describe(value)} at one pointer: give a tile of pointers (x + offsets)")
        if isinstance(mask, Scalar):
            mask = wrap(_materialize(mask, _Shape("vector", (1, "col")), IntegerType(1)))
    scatter(ptr.view, (offset,), value, mask=mask, linear=True, who=who)


__all__ = ["Pointer", "gather", "has_index_tiles", "load", "scatter", "store"]
