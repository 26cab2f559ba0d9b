"""Values in other shapes: Triton's ``tl.reshape`` (``tl.view``, ``tl.ravel``), ``tl.join`` and
``tl.split``, ``tl.interleave`` and ``tl.cat``.

A reshape keeps the elements in row-major order, as numpy's and Triton's do (Triton's
``can_reorder=True`` allows any order; tilec keeps this one). It is ``tile.reshape``: tile-layout
gives the result the input's registers reread in the new shape where a layout expresses that, so
most reshapes of power-of-two tiles move no data; the others go through shared memory
(tile-distribute). Two tiles side by side, or taking turns, along an axis are ``tile.join``: each
thread holds both parts' elements of what it holds, or (an mma operand decided first) the parts are
held as the result's halves, so again no data moves. Tiles have two dimensions and vectors one;
``tl.join`` of two tiles is the one value of three (:class:`Joined`), held as its two parts until
it is permuted, reshaped to a tile or split: the forms Triton's kernels use it in (4-bit weights
unpacked into rows taking turns, pairs stored side by side).
"""

from __future__ import annotations

import math
from typing import Any

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, RegisterVectorType
from tilec.lang import ops
from tilec.lang.dtypes import dtype_of, int1, int8, int32
from tilec.lang.tracing import current, error
from tilec.lang.values import (Expanded, Pointer, Tile, Vector, _element_type, _reoriented, _unsigned_result, checked_type, convert, where,
                               wrap)


def _describe(x: Any) -> str:
    return x.describe() if hasattr(x, "describe") else repr(x)


def _shape(shape: tuple, what: str) -> tuple[int, ...]:
    """``shape`` given as ``f(x, (a, b))`` or ``f(x, a, b)``: a tuple of Python ints."""
    dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else tuple(shape)
    if not dims or any(isinstance(d, bool) or not isinstance(d, int) for d in dims):
        raise error(f"{what}'s shape is one or two Python ints (tl.constexpr), got {dims}")
    return dims


def reshape(x: Any, *shape: Any, can_reorder: bool = False, orientation: str | None = None) -> Tile | Vector | Expanded:
    """``x`` (a tile or vector) with its elements, in row-major order, in ``shape``: one or two extents
    whose product is ``x``'s number of elements (one extent may be -1, inferred). A vector keeps its
    orientation; a tile flattened to a vector runs along the columns (as ``tl.arange``'s); a vector to
    (n, 1) or (1, n) is ``v[:, None]`` or ``v[None, :]``. ``can_reorder`` (Triton's permission to reorder)
    changes nothing: the order is kept. ``orientation`` (tilec's, for a vector result): ``"row"`` or ``"col"``."""
    if isinstance(x, Joined):
        return x.reshape(*shape)
    if isinstance(x, Pointer) and isinstance(x.offset, (Tile, Vector, Expanded)):  # Triton's tensor of pointers
        if len(_shape(shape, "tl.reshape")) > 2:
            raise error(f"tl.reshape of {_describe(x)} to {_shape(shape, 'tl.reshape')}: a tensor of pointers has one or "
                        "two axes (tl.split takes an (n, 2) one apart)")
        return Pointer(x.view, reshape(x.offset, *shape, orientation=orientation))
    dims = _shape(shape, "tl.reshape")
    if isinstance(x, Expanded):
        x = x.tile()
    if not isinstance(x, (Tile, Vector)):
        raise error(f"tl.reshape takes a tile or a vector, got {_describe(x)}")
    count = math.prod(x.shape)
    if dims.count(-1) == 1 and all(d > 0 for d in dims if d != -1):
        known = math.prod(d for d in dims if d != -1)
        if count % known == 0:
            dims = tuple(count // known if d == -1 else d for d in dims)
    if len(dims) == 3 and 2 in dims and math.prod(dims) == count and all(d > 0 for d in dims):
        return _pairs(x, dims)
    if len(dims) > 2:
        raise error(f"tl.reshape of {_describe(x)} to {dims}: tilec's values have one or two dimensions (or three "
                    "with an extent of 2: tl.join's pairs)")
    if any(d <= 0 for d in dims) or math.prod(dims) != count:
        raise error(f"tl.reshape of {_describe(x)} ({count} elements) to {dims}: the shape must hold as many")
    if dims == x.shape:
        return x
    if isinstance(x, Vector) and dims in ((count, 1), (1, count)):  # v[:, None] / v[None, :]: no op, no data moved
        return x[:, None] if dims[1] == 1 else x[None, :]
    element = x.type.element_type
    if len(dims) == 2:
        ty = checked_type(RegisterType, list(dims), element)
    else:
        orientation = orientation or (x.orientation if isinstance(x, Vector) else "col")
        ty = checked_type(RegisterVectorType, dims[0], element, orientation)
    return wrap(current().value(t.ReshapeOp(x.value, ty)))


def _split(x: Tile, dim: int, interleaved: bool) -> tuple[Tile, Tile]:
    half = tuple(d // 2 if i == dim else d for i, d in enumerate(x.shape))
    ty = checked_type(RegisterType, list(half), x.type.element_type)
    op = current().emit(t.SplitOp(x.value, dim, interleaved, ty))
    return wrap(op.first), wrap(op.second)


def _pairs(x: Tile | Vector, dims: tuple[int, int, int]) -> "Joined":
    """``x`` read as three axes, one of them of 2 (the last such): the :class:`Joined` value of its two
    halves along it, taken apart with ``tile.split``."""
    if dims[2] == 2:
        parts, order = _split(_as_tile(reshape(x, (dims[0], 2 * dims[1]))), 1, True), (0, 1, 2)
    elif dims[1] == 2:
        parts, order = _split(_as_tile(reshape(x, (2 * dims[0], dims[2]))), 0, True), (0, 2, 1)
    else:
        parts, order = _split(_as_tile(reshape(x, (2 * dims[1], dims[2]))), 0, False), (2, 0, 1)
    return Joined(parts, order)


def _as_tile(x: Any) -> Tile:
    """A tile of ``x`` (a vector expanded with ``[None, :]`` or ``[:, None]`` becomes its one-row or
    one-column tile)."""
    return x.tile() if isinstance(x, Expanded) else x


def view(x: Any, *shape: Any) -> Tile | Vector:
    """Triton's older name for a reshape that may reorder: :func:`reshape` (which keeps the order)."""
    return reshape(x, *shape)


def ravel(x: Any, can_reorder: bool = False) -> Vector:
    """``x``'s elements as one vector, in row-major order (Triton's ``tl.ravel``)."""
    if isinstance(x, Vector):
        return x
    if isinstance(x, Expanded):
        return x.vector
    if isinstance(x, Joined):
        return reshape(x, (math.prod(x.shape),))
    if not isinstance(x, Tile):
        raise error(f"tl.ravel takes a tile or a vector, got {_describe(x)}")
    return reshape(x, (math.prod(x.shape),))


def join(a: Any, b: Any) -> "Tile | Joined":
    """Triton's ``tl.join`` of two vectors of n values: the (n, 2) tile whose columns they are (``a`` first),
    in their promoted type, e.g. the real and imaginary parts stored back through ``ptr + offs[:, None] * 2 +
    tl.arange(0, 2)[None, :]``. Of two tiles: the (m, n, 2) value :class:`Joined`."""
    if isinstance(a, Expanded) and isinstance(b, Expanded) or isinstance(a, Tile) and isinstance(b, (Tile, Expanded)) \
            or isinstance(b, Tile) and isinstance(a, Expanded):
        a, b = _as_tile(a), _as_tile(b)
        if a.shape != b.shape:
            raise error(f"tl.join of tiles of shapes {a.shape} and {b.shape}: they must have one shape")
        return Joined(_promoted(a, b))
    if isinstance(a, Expanded) or isinstance(b, Expanded) or not (isinstance(a, Vector) and isinstance(b, Vector)):
        raise error(f"tl.join joins two vectors of one length into an (n, 2) tile, or two tiles of one shape, got "
                    f"{_describe(a)} and {_describe(b)}")
    if a.shape != b.shape:
        raise error(f"tl.join of vectors of {a.shape[0]} and {b.shape[0]} values: they must have one length")
    return reshape(interleave(a, b), (a.shape[0], 2))  # the pairs in row-major order


def split(x: Any) -> tuple[Any, Any]:
    """Triton's ``tl.split`` of an (n, 2) tile: its two columns as vectors of n values (one a row). Each is the
    column's elements exactly (a maximum over the row with the other element at the type's lowest value; FP8
    as bytes). Of tl.join's (m, n, 2) value, or an (n, 2) tensor of pointers: its two parts."""
    if isinstance(x, Joined):
        return x.split()
    if isinstance(x, Pointer) and isinstance(x.offset, (Tile, Expanded)):  # an (n, 2) tensor of pointers
        first, second = split(x.offset)
        return Pointer(x.view, first), Pointer(x.view, second)
    x = _as_tile(x)
    if not isinstance(x, Tile) or x.shape[1] != 2:
        raise error(f"tl.split takes a tile whose last extent is 2 (an (n, 2) tile, e.g. tl.join's), got "
                    f"{_describe(x)}")
    if x.dtype == int1:
        first, second = split(x.to(int32))
        return first != 0, second != 0
    if x.dtype.is_fp8:  # as bytes: a maximum of FP8 values would be computed in f32 and rounded back
        return tuple(v.to(x.dtype, bitcast=True) for v in split(x.to(int8, bitcast=True)))
    column = ops.iota(x.shape, 1)
    if x.dtype.is_float:
        lowest = float("-inf")
    else:
        lowest = 0 if x.dtype.is_unsigned else -(1 << (x.dtype.bits - 1))
    return tuple(ops.max(where(column == k, x, lowest), axis=1) for k in (0, 1))


def _pair(a: Any, b: Any, what: str) -> tuple[Tile | Vector, Tile | Vector]:
    a = a.tile() if isinstance(a, Expanded) else a
    b = b.tile() if isinstance(b, Expanded) else b
    if not (isinstance(a, (Tile, Vector)) and isinstance(b, (Tile, Vector))) or a.shape != b.shape:
        raise error(f"{what} takes two tiles or two vectors of one shape, got {_describe(a)} and {_describe(b)}")
    return a, b


def _joined(a: Tile | Vector, b: Tile | Vector, dim: int, interleaved: bool) -> Tile | Vector:
    if isinstance(a, Vector):  # two vectors of one orientation: one of twice the length
        b = b if b.orientation == a.orientation else _reoriented(b, a.orientation)
        ty = checked_type(RegisterVectorType, 2 * a.shape[0], a.type.element_type, a.orientation)
        return wrap(current().value(t.JoinOp(a.value, b.value, 0, interleaved, ty)))
    dims = tuple(2 * d if i == dim else d for i, d in enumerate(a.shape))
    ty = checked_type(RegisterType, list(dims), a.type.element_type)
    return wrap(current().value(t.JoinOp(a.value, b.value, dim, interleaved, ty)))


def _promoted(a: Tile | Vector, b: Tile | Vector) -> tuple[Tile | Vector, Tile | Vector]:
    """The two in their promoted element type (Triton's, as the operators promote: u8 with i8 is u8)."""
    element = _element_type((a, b), "tl.join")
    to = dtype_of(element).unsigned if _unsigned_result((a, b), element) else dtype_of(element)
    # a signed integer read as the unsigned one of its width keeps its bits (convert's)
    first, second = (x if x.dtype == to else convert(x, to) for x in (a, b))
    return first, second


def interleave(a: Any, b: Any) -> Tile | Vector:
    """Triton's ``tl.interleave``: ``a``'s and ``b``'s elements taking turns along the last axis,
    ``tl.join(a, b)`` read as one axis: (n,) and (n,) give (2n,), (m, n) and (m, n) give (m, 2n)."""
    a, b = _promoted(*_pair(a, b, "tl.interleave"))
    return _joined(a, b, len(a.shape) - 1, True)


def cat(input: Any, other: Any, can_reorder: bool = False, dim: int = 0) -> Tile | Vector:  # noqa: A002 - Triton's name
    """Triton's ``tl.cat``: ``other`` after ``input`` along ``dim`` (0; 1 for tiles side by side), in that
    order (Triton's ``can_reorder=True`` allows any; tilec keeps this one)."""
    a, b = _promoted(*_pair(input, other, "tl.cat"))
    rank = len(a.shape)
    if isinstance(dim, bool) or dim not in range(-rank, rank):
        raise error(f"tl.cat of {_describe(a)} along dim {dim!r}: 0 (one below the other) or, for tiles, 1")
    return _joined(a, b, dim % rank, False)


class Joined:
    """Triton's ``tl.join`` of two tiles of (m, n): an (m, n, 2) value, each element's pair on the last
    axis, held as its two parts. It is read as a tile by a reshape (the parts taking turns along the
    rows for ``.reshape(m, 2 * n)``; ``.permute(0, 2, 1).reshape(2 * m, n)`` makes them take turns down
    the columns: 4-bit weights packed two rows a byte), split back by ``tl.split``, and permuted; other
    operations apply to the parts before the join."""

    __slots__ = ("parts", "order")

    def __init__(self, parts: tuple[Tile, Tile], order: tuple[int, int, int] = (0, 1, 2)):
        self.parts, self.order = parts, order

    @property
    def shape(self) -> tuple[int, int, int]:
        full = (*self.parts[0].shape, 2)
        return tuple(full[i] for i in self.order)

    @property
    def dtype(self):
        return self.parts[0].dtype

    def describe(self) -> str:
        return f"tl.join of two tiles, shape {self.shape} (tilec holds its parts)"

    def permute(self, *dims: Any) -> "Joined":
        order = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else tuple(dims)
        if sorted(order) != [0, 1, 2]:
            raise error(f"permute of {self.describe()}: a permutation of (0, 1, 2), got {order}")
        return Joined(self.parts, tuple(self.order[i] for i in order))

    @property
    def T(self) -> "Joined":  # noqa: N802 - numpy's name
        return self.trans()

    def trans(self, *dims: Any) -> "Joined":
        if not dims:  # Triton's tl.trans without dims transposes a 2-D value only
            raise error(f"tl.trans of {self.describe()} needs its axes' order, e.g. tl.trans(x, (0, 2, 1))")
        return self.permute(*dims)

    def _tile(self) -> Tile:
        """A tile whose row-major order is the value's: the parts (transposed where the value's axes are)
        joined along the axis the pair axis stands before."""
        a, b = self.parts
        axes = [i for i in self.order if i != 2]
        if axes == [1, 0]:
            a, b = a.T, b.T
        pair = self.order.index(2)
        return _joined(a, b, 0 if pair == 0 else 1, pair == 2)

    def reshape(self, *shape: Any, can_reorder: bool = False) -> Tile | Vector:
        dims = _shape(shape, "tl.reshape")
        a, b = self.parts
        if self.order.index(2) == 1 and len(dims) == 2:  # (r, 2, c) as (2r, c): rows taking turns, at once
            first = a if self.order[0] == 0 else a.T
            if dims == (2 * first.shape[0], first.shape[1]):
                return _joined(first, b if self.order[0] == 0 else b.T, 0, True)
        return reshape(self._tile(), dims)

    view = reshape

    def split(self) -> tuple[Tile, Tile]:
        if self.order[-1] != 2:
            if self.shape[-1] == 2:  # another axis of 2 moved last: the value's elements split along it
                return reshape(self._tile(), self.shape).split()
            raise error(f"tl.split of {self.describe()}: its last axis must have an extent of 2")
        a, b = self.parts
        return (a, b) if self.order[:2] == (0, 1) else (a.T, b.T)

    def __bool__(self) -> bool:
        raise error(f"{self.describe()} has no truth value")


def _refuse(name: str):
    def refused(self, *args: Any, **kwargs: Any) -> Any:
        if name in ("eq", "ne"):  # also what a loop asks of a value it might carry
            raise error(f"{self.describe()} is neither compared nor carried by a loop: reshape it to a tile first")
        raise error(f"{name} of {self.describe()}: tilec holds tl.join's three axes as its two parts; compute on "
                    "the parts before the join, or reshape it to a tile first")
    return refused


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__neg__", "__lt__", "__le__", "__gt__",
              "__ge__", "__eq__", "__ne__", "__getitem__", "to"):
    setattr(Joined, _name, _refuse(_name.strip("_") if _name != "to" else ".to"))
Joined.__hash__ = None  # type: ignore[assignment]


def _method(fn):
    def method(self, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)
    method.__doc__ = fn.__doc__
    return method


for _cls in (Tile, Vector):  # Triton's tensor methods: x.reshape(m, n), x.view(...), x.ravel()
    _cls.reshape, _cls.view, _cls.ravel = _method(reshape), _method(view), _method(ravel)


__all__ = ["Joined", "cat", "interleave", "join", "ravel", "reshape", "split", "view"]
