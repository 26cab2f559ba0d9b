"""Traced values of the kernel language and their elementwise algebra.

- :class:`Scalar`: one SSA value (index, i32, i1 or a float), e.g. ``tl.block_id(0) * BM``;
- :class:`Tile`: a register tile ``!tile.rt<RxCxT>`` (the block's, distributed by ``tile-layout``);
- :class:`Vector`: a register vector ``!tile.rv<NxT, row|col>`` (a row reduction gives a ``row``
  vector: one value per row), and ``v[:, None]`` / ``v[None, :]`` (:class:`Expanded`), a vector
  standing for a tile it is broadcast to;
- :class:`View`: a kernel's array argument, a global view ``!tile.gl<?x?xT>``.

Operators broadcast as numpy does: a tile with an expanded vector (``t - m[:, None]``), a 1-D
vector with a tile along its last axis (``t * w``), Python numbers with anything. Operands of one
operation share an element type (Python numbers take it; ``.to(...)`` converts). What the tile
dialect has as an op (``tile.add`` ... ``tile.exp``) is emitted as that op; everything else
(comparisons, ``where``, ``sqrt``, integer math ...) is a ``tile.map`` whose body is the same
operation on scalars, so one definition per operation serves scalars, vectors and tiles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from xdsl.dialects import arith, math, scf
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, BlockArgument, OpResult, Region, SSAValue
from xdsl.transforms.dead_code_elimination import region_dce
from xdsl.utils.exceptions import VerifyException

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import FLOAT8_TYPES, GlobalType, RegisterType, RegisterVectorType
from tilec.lang import dtypes
from tilec.lang.dtypes import DType, dtype_of
from tilec.lang.tracing import LangError, current, element_type, error
from tilec.lang.unsigned import holds_booleans, is_unsigned, mark

Number = int | float | bool


# ---------------------------------------------------------------- the values


class Value:
    """A traced SSA value; operators build ops through :func:`elementwise`."""

    __slots__ = ("value",)

    def __init__(self, value: SSAValue):
        self.value = value

    @property
    def type(self) -> Attribute:
        return self.value.type

    @property
    def dtype(self) -> DType:
        return _dtype(self.value)

    def __bool__(self) -> bool:
        raise error(f"a {self.describe()} is known only when the kernel runs: Python cannot decide on it here "
                    "(a while loop, an if in a helper that is not a @tl.func, or an if whose branch leaves a "
                    "tl.range loop with break/continue/return); an if in a kernel or a @tl.func traces both "
                    "branches (scf.if); use tl.where for tiles, tl.range for loops, or make the value a "
                    "tl.constexpr")

    def __index__(self) -> int:
        raise error(f"a {self.describe()} is known only when the kernel runs; this needs a Python int "
                    "(pass it as a tl.constexpr)")

    def __iter__(self):
        raise error(f"a {self.describe()} cannot be iterated in Python")

    def describe(self) -> str:
        unsigned = f" of {self.dtype.name}" if self.dtype.is_unsigned else ""  # the IR's integers are signless
        return f"{type(self).__name__.lower()} {self.type}{unsigned}"

    def __repr__(self) -> str:
        """What the value is (a traced value has no number yet): shows in messages that print it."""
        return f"<{self.describe()}>"

    # arithmetic
    def __add__(self, o): return elementwise("add", self, o)
    def __radd__(self, o): return elementwise("add", o, self)
    def __sub__(self, o): return elementwise("sub", self, o)
    def __rsub__(self, o): return elementwise("sub", o, self)
    def __mul__(self, o): return elementwise("mul", self, o)
    def __rmul__(self, o): return elementwise("mul", o, self)
    def __truediv__(self, o): return elementwise("div", self, o)
    def __rtruediv__(self, o): return elementwise("div", o, self)
    def __floordiv__(self, o): return elementwise("floordiv", self, o)
    def __rfloordiv__(self, o): return elementwise("floordiv", o, self)
    def __mod__(self, o): return elementwise("mod", self, o)
    def __rmod__(self, o): return elementwise("mod", o, self)
    def __neg__(self): return elementwise("neg", self)
    def __pos__(self): return self
    def __abs__(self): return elementwise("abs", self)
    def __and__(self, o): return elementwise("and", self, o)
    def __rand__(self, o): return elementwise("and", o, self)
    def __or__(self, o): return elementwise("or", self, o)
    def __ror__(self, o): return elementwise("or", o, self)
    def __xor__(self, o): return elementwise("xor", self, o)
    def __rxor__(self, o): return elementwise("xor", o, self)
    def __invert__(self): return elementwise("not", self)
    def __lshift__(self, o): return elementwise("shl", self, o)
    def __rlshift__(self, o): return elementwise("shl", o, self)
    def __rshift__(self, o): return elementwise("shr", self, o)
    def __rrshift__(self, o): return elementwise("shr", o, self)

    def __pow__(self, exponent):
        """``x ** n`` for a constant n: repeated products for small whole n, ``sqrt`` for 0.5, ``1 / x`` for -1."""
        if not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
            raise error(f"x ** y: the exponent is a Python number (a whole number 1 to 8, 0.5 or -1), not "
                        f"{getattr(exponent, 'describe', lambda: repr(exponent))()} (else write tl.exp2(y * tl.log2(x)))")
        if isinstance(exponent, int) and 1 <= exponent <= 8:
            out = self
            for _ in range(exponent - 1):
                out = out * self
            return out
        if exponent == 0.5:
            return elementwise("sqrt", self)
        if exponent == -1:
            return 1.0 / self
        raise error(f"x ** {exponent!r}: the exponent is a whole number 1 to 8, 0.5 or -1 (else write tl.exp2(y * tl.log2(x)))")
    # comparisons give i1 values (masks)
    def __lt__(self, o): return elementwise("lt", self, o)
    def __le__(self, o): return elementwise("le", self, o)
    def __gt__(self, o): return elementwise("gt", self, o)
    def __ge__(self, o): return elementwise("ge", self, o)
    def __eq__(self, o): return elementwise("eq", self, o)  # type: ignore[override]
    def __ne__(self, o): return elementwise("ne", self, o)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]

    def to(self, dtype: Any, fp_downcast_rounding: str | None = None, bitcast: bool = False) -> Value:
        """The same values as ``dtype`` (floats round to nearest even; floats to integers truncate);
        ``bitcast=True``: the same bits read as ``dtype`` (of the same width), as Triton's."""
        if fp_downcast_rounding not in (None, "rtne"):
            raise error(f".to(fp_downcast_rounding={fp_downcast_rounding!r}): tilec rounds to nearest even ('rtne')")
        if bitcast:
            return bitcast_to(self, element_type(dtype))
        return convert(self, element_type(dtype))


class Scalar(Value):
    """One value of a scalar type: index arithmetic, a kernel's number argument, an element in ``tl.map``."""

    __slots__ = ()

    # ``__tl_if__``, which the rewritten ``if`` of a kernel's body calls on a traced condition, comes
    # from tilec.lang.branch (which builds on this module)


class Tile(Value):
    """A register tile of the block."""

    __slots__ = ()

    # ``reshape``, ``view``, ``ravel`` (Triton's tensor methods) come from tilec.lang.shapes, and ``sort`` and
    # ``flip`` from tilec.lang.sorting (which build on this module), as Vector's do

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.dims)

    @property
    def T(self) -> "Tile":  # noqa: N802 - numpy's and torch's name
        """The tile transposed (``tile.transpose``): no data moves, each lane keeps its values."""
        return Tile(current().value(t.TransposeOp(self.value)))

    def trans(self, *dims: Any) -> "Tile":
        """Triton's ``x.trans()``: the tile transposed; with ``dims``, :meth:`permute`'s."""
        return self.permute(*dims) if dims else self.T

    def permute(self, *dims: Any) -> "Tile":
        """Triton's ``x.permute(1, 0)`` (or ``(0, 1)``: the tile itself)."""
        order = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else tuple(dims)
        if order not in ((0, 1), (1, 0)):
            raise error(f"a permutation {order} of a tile: it has two axes, so (0, 1) or (1, 0)")
        return self if order == (0, 1) else self.T


class Vector(Value):
    """A register vector: one value per row (``row``) or per column (``col``) of the tiles it meets."""

    __slots__ = ()

    @property
    def shape(self) -> tuple[int]:
        return (self.type.length.data,)

    @property
    def orientation(self) -> str:
        return self.type.orientation.data

    def __getitem__(self, key: Any) -> Expanded:
        if key == (slice(None), None):
            return Expanded(self, 0)
        if key == (None, slice(None)):
            return Expanded(self, 1)
        raise error(f"a vector is indexed v[:, None] (one value per row) or v[None, :] (one per column), got {key!r}")


@dataclass(frozen=True, eq=False)
class Expanded:
    """``v[:, None]`` (``axis`` 0: ``v`` runs down the rows) or ``v[None, :]`` (``axis`` 1: along the columns)."""

    vector: Vector
    axis: int

    @property
    def dtype(self) -> DType:
        return self.vector.dtype

    def __bool__(self) -> bool:
        return self.vector.__bool__()

    __add__, __radd__, __sub__, __rsub__ = Value.__add__, Value.__radd__, Value.__sub__, Value.__rsub__
    __mul__, __rmul__, __truediv__, __rtruediv__ = Value.__mul__, Value.__rmul__, Value.__truediv__, Value.__rtruediv__
    __lt__, __le__, __gt__, __ge__ = Value.__lt__, Value.__le__, Value.__gt__, Value.__ge__
    __eq__, __ne__, __neg__ = Value.__eq__, Value.__ne__, Value.__neg__  # type: ignore[assignment]
    __floordiv__, __mod__, __abs__, __invert__ = Value.__floordiv__, Value.__mod__, Value.__abs__, Value.__invert__
    __pow__ = Value.__pow__
    __and__, __rand__, __or__, __ror__ = Value.__and__, Value.__rand__, Value.__or__, Value.__ror__
    __xor__, __rxor__ = Value.__xor__, Value.__rxor__
    __lshift__, __rlshift__, __rshift__, __rrshift__ = Value.__lshift__, Value.__rlshift__, Value.__rshift__, Value.__rrshift__
    __hash__ = None  # type: ignore[assignment]

    def to(self, dtype: Any, fp_downcast_rounding: str | None = None, bitcast: bool = False) -> Expanded:
        """The expanded vector converted (``m[:, None].to(tl.float16)``; ``bitcast``: its bits read as ``dtype``)."""
        return Expanded(self.vector.to(dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast), self.axis)

    def tile(self) -> Tile:
        """The tile of one column (``v[:, None]``) or one row (``v[None, :]``) it stands for, numpy's
        (n, 1) or (1, n): what a store into a 2-D array writes."""
        return Tile(_materialize(self, _Shape("tile", self.shape), self.vector.type.element_type))

    @property
    def shape(self) -> tuple[int, int]:
        n = self.vector.shape[0]
        return (n, 1) if self.axis == 0 else (1, n)

    def __getattr__(self, name: str) -> Any:
        """A tile's method (``m[:, None].sum(axis=1)``, ``.cumsum``, ``.max`` ...): on the tile it stands for."""
        if name.startswith("_") or not hasattr(Tile, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.tile(), name)


class Shared:
    """A shared-memory tile of the block (``tl.alloc``): filled by ``tl.copy``, read by ``tl.load``."""

    __slots__ = ("value",)

    def __init__(self, value: SSAValue):
        self.value = value

    @property
    def type(self):
        return self.value.type

    @property
    def dtype(self) -> DType:
        return _dtype(self.value)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.type.dims)

    def describe(self) -> str:
        return f"shared tile {self.type}"

    def __bool__(self) -> bool:
        raise error("a shared tile has no truth value")


class ArgumentType:
    """An array argument's type: its IR type (``!tile.gl<...>``, whose attributes it has), read also as
    Triton's pointer type, whose ``element_ty`` is the element type (vLLM's ``x.to(out_ptr.type.element_ty)``)."""

    __slots__ = ("ir", "element_ty")

    def __init__(self, ir: GlobalType, element_ty: DType):
        self.ir, self.element_ty = ir, element_ty

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ir, name)

    def __eq__(self, other: object) -> bool:
        return self.ir == (other.ir if isinstance(other, ArgumentType) else other)

    def __hash__(self) -> int:
        return hash(self.ir)

    def __str__(self) -> str:
        return str(self.ir)

    __repr__ = __str__


class View:
    """A kernel's array argument: a global view, read and written by ``tl.load``/``tl.store`` windows."""

    __slots__ = ("value", "name", "unit_dim")

    def __init__(self, value: SSAValue, name: str, unit_dim: int | None = None):
        self.value = value
        self.name = name
        self.unit_dim = unit_dim
        """The dimension whose stride is 1 in the call's array (None: unknown, or none is)."""

    @property
    def type(self) -> ArgumentType:
        """The IR type (``!tile.gl``), which also reads as Triton's pointer type: ``x_ptr.type.element_ty``."""
        return ArgumentType(self.value.type, self.dtype)

    @property
    def dtype(self) -> DType:
        """The arrays' element type (a ``bool`` array's: ``tl.int1``, what its loads give)."""
        return dtypes.int1 if holds_booleans(self.value) else _dtype(self.value)

    @property
    def ndim(self) -> int:
        return self.type.rank

    @property
    def shape(self) -> ViewShape:
        """The run-time extents: ``x.shape[1]`` is an index scalar (a ``tile.dim``, made when asked for)."""
        return ViewShape(self)

    def __getitem__(self, key: Any) -> View:
        """``x[b, h]``: the view of the trailing dimensions at leading coordinates (CuTe's slice, a
        ``tile.subview``): ``q[b, h]`` of a (B, H, S, D) array is that head's S x D matrix."""
        keys = key if isinstance(key, tuple) else (key,)
        if not 1 <= len(keys) < self.ndim or any(isinstance(k, slice) or k is None for k in keys):
            raise error(f"{self.name}[...] fixes 1 to {self.ndim - 1} leading coordinates of the {self.ndim}-D "
                        f"array (ints or integer scalars), got {key!r}")
        indices = [index(k, f"{self.name}[...] coordinate {i}") for i, k in enumerate(keys)]
        unit = self.unit_dim - len(keys) if self.unit_dim is not None and self.unit_dim >= len(keys) else None
        return View(current().value(t.SubviewOp(self.value, indices), f"{self.name}_sub"), f"{self.name}_sub", unit)

    def __bool__(self) -> bool:
        raise error(f"array argument {self.name!r} has no truth value")

    def pointer_error(self) -> Exception:
        """What arithmetic on a view other than ``x + offsets`` (Triton's pointer arithmetic) gets."""
        n = self.name
        return error(f"{n!r} is an array argument: {n} + offsets points at the elements offsets elements in memory "
                     f"from its first one (Triton's pointers: tl.load({n} + offsets, mask=...)); other arithmetic on "
                     f"it has no meaning. A window of it: tl.load({n}, (row0, col0), shape=(BM, BN), mask=...)")

    def __add__(self, o):
        """``x + offsets``: Triton's pointer arithmetic, the elements ``offsets`` elements in memory from
        the array's first one (:class:`tilec.lang.pointers.Pointer`)."""
        return Pointer(self, 0) + o

    __radd__ = __add__

    def __sub__(self, o): raise self.pointer_error()
    __rsub__ = __mul__ = __rmul__ = __sub__

    def __repr__(self) -> str:
        return f"View({self.name}: {self.type})"


class ViewShape:
    """``view.shape``: indexing it reads one extent (``tile.dim``, once per view and axis)."""

    __slots__ = ("view",)

    def __init__(self, view: View):
        self.view = view

    def __len__(self) -> int:
        return self.view.ndim

    def __getitem__(self, axis: int) -> Scalar:
        n = self.view.ndim
        if not isinstance(axis, int) or not -n <= axis < n:
            raise error(f"{self.view.name!r} has {n} dimensions: shape[{axis!r}] does not exist")
        return Scalar(current().dim(self.view.value, axis % n, f"{self.view.name}_dim{axis % n}"))

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])


def _dtype(value: SSAValue) -> DType:
    """The language's type of ``value``'s elements: its IR type's, unsigned where the language reads it so."""
    ty = value.type
    dt = dtype_of(getattr(ty, "element_type", ty))
    return dt.unsigned if dt.is_int and is_unsigned(value) else dt


def describe(value: Any) -> str:
    """``value`` as an error message names it (a traced value by its type, else Python's repr)."""
    if isinstance(value, Expanded):
        return f"{value.vector.describe()} as {'v[:, None]' if value.axis == 0 else 'v[None, :]'}"
    # the class's attribute: a NoValue (an unusable name) raises on any attribute of its own
    return value.describe() if callable(getattr(type(value), "describe", None)) else f"{type(value).__name__} {value!r}"


_INDEX_WIDTHS = (8, 16, 32, 64)


def offset_width(o: Any, who: str) -> int:
    """The width of an offset's integers (0 for a Python int or an index scalar; a ``uint32`` one's 64, as
    Triton zero-extends it: past 2^31 it is no negative offset); an error naming ``who`` for anything else
    (a float, a mask)."""
    if isinstance(o, int) and not isinstance(o, bool):
        return 0
    ty = o.vector.type.element_type if isinstance(o, Expanded) else (
        o.type.element_type if isinstance(o, (Tile, Vector)) else getattr(o, "type", None))
    if isinstance(o, Scalar) and isinstance(ty, IndexType):
        return 0  # an index scalar (a block id, a loop counter)
    if isinstance(o, (Tile, Vector, Expanded, Scalar)) and isinstance(ty, IntegerType) and ty.width.data in _INDEX_WIDTHS:
        return 64 if ty.width.data == 32 and _operand_dtype(o).is_unsigned else ty.width.data
    raise error(f"{who}: offsets are integers (ints, integer scalars, or tiles and vectors of them), got {describe(o)}")


class Pointer:
    """``x + offsets``: the elements of array ``x`` at ``offsets`` elements in memory from its first one
    (an int, an integer scalar, or a tile or vector of them: Triton's pointer or tensor of pointers)."""

    __slots__ = ("view", "offset")
    carried_as_offsets = True
    """Carried through loops and ``if``\\ s as its offsets (:func:`tilec.lang.block_ptr.flatten_carried`);
    read and written by :mod:`tilec.lang.pointers`."""

    def __init__(self, view: View, offset: Any):
        self.view, self.offset = view, offset

    @property
    def dtype(self) -> DType:
        """The array's element type (``ptr.dtype.element_ty`` too, as Triton's pointer types spell it)."""
        return self.view.dtype

    def _moved(self, delta: Any, sign: int) -> Pointer:
        offset_width(delta, f"{self.view.name} + offsets")
        if isinstance(delta, int) and isinstance(self.offset, int):
            return Pointer(self.view, self.offset + sign * delta)
        if isinstance(self.offset, int) and self.offset == 0 and sign > 0:
            offset = delta
        else:
            offset = self.offset + delta if sign > 0 else self.offset - delta
        if isinstance(offset, Scalar) and not isinstance(offset.type, IndexType):
            # one element's offset is an index (64 bits), however computed: an if's branches and a loop's
            # carried value (a Python 0 carried as an index) agree
            offset = offset.to(dtypes.index)
        return Pointer(self.view, offset)

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
        kind = "tile of pointers" if isinstance(self.offset, (Tile, Vector, Expanded)) else "pointer"
        return f"{kind} into {self.view.name!r} ({self.view.dtype})"

    def __bool__(self) -> bool:
        raise error(f"{self.describe()} has no truth value")

    def __repr__(self) -> str:
        return f"<{self.describe()}>"


def index(value: Any, what: str = "an index") -> SSAValue:
    """An ``index`` SSA value from a Python int or a traced integer scalar."""
    trace = current()
    if isinstance(value, bool) or not isinstance(value, (int, Scalar)):
        got = value.describe() if isinstance(value, Value) else f"{type(value).__name__} {value!r}"
        raise error(f"{what} must be an int or an integer scalar, got {got}")
    if isinstance(value, int):
        return trace.constant(value, IndexType())
    ty = value.type
    if isinstance(ty, IndexType):
        return value.value
    if isinstance(ty, IntegerType) and ty.width.data > 1:  # an unsigned one zero-extended
        return _convert_scalar(value.value, IndexType(), is_unsigned(value.value))
    raise error(f"{what} must be an integer, got a {value.describe()}")


def wrap(value: SSAValue) -> Value:
    """The language value of an SSA value, by its type."""
    ty = value.type
    if isinstance(ty, RegisterType):
        return Tile(value)
    if isinstance(ty, RegisterVectorType):
        return Vector(value)
    return Scalar(value)


# ---------------------------------------------------------------- broadcasting


@dataclass(frozen=True)
class _Shape:
    """Where an elementwise result lives: a scalar, a vector (length, orientation) or a tile (rows, cols)."""

    kind: str  # "scalar" | "vector" | "tile"
    dims: tuple = ()

    def register_type(self, element: Attribute) -> Attribute:
        if self.kind == "tile":
            return checked_type(RegisterType, list(self.dims), element)
        if self.kind == "vector":
            return checked_type(RegisterVectorType, self.dims[0], element, self.dims[1])
        return element


def checked_type(make: Callable[..., Attribute], *args: Any) -> Attribute:
    """A register type, or a LangError at the user's line saying why it cannot be one (too large ...)."""
    try:
        return make(*args)
    except (VerifyException, ValueError) as e:
        raise error(str(e)) from None


def _result_shape(operands: Sequence[Any]) -> _Shape:
    tiles = [o for o in operands if isinstance(o, Tile)]
    expanded = [o for o in operands if isinstance(o, Expanded)]
    vectors = [o for o in operands if isinstance(o, Vector)]
    if tiles:
        dims = tiles[0].shape
        for other in tiles[1:]:
            merged = broadcast_dims(dims, other.shape)
            if merged is None:
                raise error(f"tiles of shapes {dims} and {other.shape} do not broadcast")
            dims = merged
        if 1 in dims:  # a (1, n) or (n, 1) tile meeting a vector that gives the other extent
            for o in operands:
                wide = o.shape if isinstance(o, Expanded) else (1, o.shape[0]) if isinstance(o, Vector) else None
                if wide is not None:
                    dims = broadcast_dims(dims, wide) or dims  # a mismatch is _materialize's to report
        return _Shape("tile", dims)
    if expanded:
        rows = [e for e in expanded if e.axis == 0]
        cols = [e for e in expanded if e.axis == 1]
        if rows and cols:
            return _Shape("tile", (rows[0].vector.shape[0], cols[0].vector.shape[0]))
        e = expanded[0]
        if vectors:
            raise error("a vector and an expanded vector (v[:, None]) meet without a tile to give their shape")
        return _Shape("vector", (e.vector.shape[0], e.vector.orientation))
    if vectors:
        v = vectors[0]
        for other in vectors[1:]:
            if other.shape != v.shape:
                raise error(f"vectors {v.type} and {other.type} differ in length")
        return _Shape("vector", (v.shape[0], _agreed_orientation(vectors)))
    return _Shape("scalar")


def broadcast_dims(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """numpy's broadcast of two 2-D shapes (an extent of 1 stretches to the other's), None where they clash."""
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def spread(tile: Tile, dims: Sequence[int]) -> Any:
    """A (1, n), (m, 1) or (1, 1) tile as what broadcasts it to ``dims`` (numpy's stretching of extents of 1):
    ``v[None, :]`` / ``v[:, None]`` of its one row or column, or its one element. The row or column is read out
    as a maximum over one element (exact; no op of its own: tile-layout converts the fragments it must)."""
    shape = tuple(tile.shape)
    if broadcast_dims(shape, dims) != tuple(dims) or 1 not in shape:
        raise error(f"a tile of shape {shape} does not broadcast to {tuple(dims)}")
    trace = current()
    if shape == (1, 1):
        return Scalar(trace.value(t.ExtractOp(trace.value(t.RowMaxOp(tile.value)))))
    if shape[0] == 1:
        return Expanded(Vector(trace.value(t.ColMaxOp(tile.value))), 1)
    return Expanded(Vector(trace.value(t.RowMaxOp(tile.value))), 0)


def _element_type(operands: Sequence[Any], op: str) -> Attribute | None:
    """The element type the traced operands are computed in (None: Python numbers only), by Triton's
    promotion: floats meeting floats take the wider (f16 with bf16: f32), integers meeting floats take
    the float type, integers meeting integers the wider (an index scalar, a coordinate, meets i32). FP8, as
    Triton types it: FP8 with the same FP8 type stays that type, with the other FP8 type is f16, with wider
    floats takes theirs (and with integers, f32); :func:`elementwise` computes an FP8 result in f32 and
    rounds it back (PTX has no arithmetic on 8-bit floats)."""
    types = []
    for o in operands:
        if isinstance(o, Expanded):
            types.append(o.vector.type.element_type)
        elif isinstance(o, (Tile, Vector)):
            types.append(o.type.element_type)
        elif isinstance(o, Scalar):
            types.append(o.type)
    if not types:
        return None
    fp8 = {ty for ty in types if isinstance(ty, FLOAT8_TYPES)}
    if fp8 and len(fp8) == len(set(types)):  # FP8 only
        return next(iter(fp8)) if len(fp8) == 1 else Float16Type()
    if fp8:  # with other types: as f16 would be with them (exact), f32 with integers
        wider = [ty for ty in types if not isinstance(ty, FLOAT8_TYPES)]
        types = wider + ([Float16Type()] if any(_is_float(ty) for ty in wider) else [Float32Type()])
    if len(set(types)) == 1:
        return types[0]
    floats = [ty for ty in types if _is_float(ty)]
    if floats:
        return _wider_float(floats)
    if IntegerType(1) in types:  # a mask meeting integers counts as one (0 or 1), as numpy's booleans
        types = [ty for ty in types if ty != IntegerType(1)]
    widths = [ty.width.data for ty in types if isinstance(ty, IntegerType)]
    return IntegerType(max(widths)) if widths else types[0]


def _operand_dtype(o: Any) -> DType | None:
    if isinstance(o, Expanded):
        return o.vector.dtype
    return o.dtype if isinstance(o, Value) else None


def _unsigned_result(operands: Sequence[Any], element: Attribute | None) -> bool:
    """Whether integers of type ``element`` computed from ``operands`` are unsigned, by Triton's promotion:
    an unsigned operand as wide as the result makes it unsigned; a signed one wins only where it is wider
    (``u8 + i32`` is i32, ``u32 + i32`` u32). Python numbers take the traced values' type."""
    if not isinstance(element, IntegerType) or element.width.data == 1:
        return False
    return any((d := _operand_dtype(o)) is not None and d.is_unsigned and d.bits == element.width.data
               for o in operands)


def _wider_float(floats: Sequence[Attribute]) -> Attribute:
    """The float type floats of these types meet in: the widest; f16 with bf16 in f32 (neither holds the other)."""
    names = {dtype_of(ty).name for ty in floats}
    if "float64" in names:
        return next(ty for ty in floats if dtype_of(ty).name == "float64")
    if "float32" in names or len(names) > 1:
        return Float32Type()
    return floats[0]


def _number_type(value: Number) -> Attribute:
    if isinstance(value, bool):
        return IntegerType(1)
    return IndexType() if isinstance(value, int) else Float32Type()


def _materialize(o: Any, shape: _Shape, element: Attribute, unsigned: bool = False) -> SSAValue:
    """``o`` as a value of ``shape`` with ``element``: broadcasts and fills as needed (a Python int meeting
    unsigned values as one: ``x & 0xFFFFFFFF`` of a ``tl.uint32``)."""
    trace = current()
    if isinstance(o, (int, float, bool)):
        if isinstance(o, float) and not _is_float(element) and not isinstance(element, FLOAT8_TYPES):
            raise error(f"the float {o!r} meets {dtype_of(element)} values: convert them with .to(tl.float32)")
        scalar = trace.constant(o, element, unsigned=unsigned)
        return scalar if shape.kind == "scalar" else trace.value(t.FillOp(scalar, shape.register_type(element)))
    if isinstance(o, Scalar):
        value = o.value
        if value.type != element:
            value = _cast_scalar(value, element)
        return value if shape.kind == "scalar" else trace.value(t.FillOp(value, shape.register_type(element)))
    if isinstance(o, Expanded):
        v = _promoted(o.vector, element, unsigned)
        need = "row" if o.axis == 0 else "col"
        if shape.kind != "tile":
            return v.value
        length = shape.dims[o.axis]
        if v.orientation != need:
            v = _reoriented(v, need)
        if v.shape[0] != length:
            raise error(f"a vector of {v.shape[0]} values does not fit {'rows' if o.axis == 0 else 'columns'} "
                        f"of length {length} (tile {shape.dims})")
        return trace.value(t.BroadcastOp(v.value, shape.register_type(element)))
    if isinstance(o, Vector) and shape.kind == "tile":
        return _materialize(Expanded(o, 1), shape, element, unsigned)  # numpy: a 1-D array runs along the last axis
    if isinstance(o, Tile) and shape.kind == "tile" and tuple(o.shape) != tuple(shape.dims):
        return _materialize(spread(o, shape.dims), shape, element, unsigned)  # a (1, n) tile stretched
    if isinstance(o, Vector) and shape.kind == "vector" and o.orientation != shape.dims[1]:
        o = _reoriented(o, shape.dims[1])  # made again, or turned, in the orientation agreed (_agreed_orientation)
    if isinstance(o, (Tile, Vector)):
        return _promoted(o, element, unsigned).value
    if isinstance(o, View):
        raise o.pointer_error()
    if callable(getattr(type(o), "describe", None)):  # a value of the language's own (tl.join's pairs)
        raise error(f"expected a tile, vector, scalar or number, got {o.describe()}")
    text = repr(o)  # short ones name the value (an unbound loop name says which)
    raise error(f"expected a tile, vector, scalar or number, got {type(o).__name__}"
                + (f" {text}" if len(text) <= 100 else ""))


def _promoted(x: Tile | Vector, element: Attribute, unsigned: bool) -> Tile | Vector:
    """``x`` in the type its operation computes in (:func:`_element_type`): itself where its IR type is that
    (the operation reads it as signed or unsigned), else converted (widened as the number it is)."""
    if x.type.element_type == element:
        return x
    dt = dtype_of(element)
    return convert(x, dt.unsigned if unsigned else dt)


_REORIENTABLE = (t.LoadOp, t.IotaOp, t.FillOp, t.ZerosOp)
"""Ops that make a vector from nothing of either orientation: one of the other orientation is the same op again."""


_ELEMENTWISE = (t.MapOp, t.ConvertOp, t.AddOp, t.SubOp, t.MulOp, t.DivOp, t.MaxOp, t.MinOp, t.ExpOp, t.Exp2Op, t.ScanOp)
"""Ops computing a vector from vectors element by element (a scan along it too): of the other
orientation when their inputs are."""


class OrientationConflict(LangError):
    """Vectors of one length but both orientations meet, and ``value`` (a ``tl.range`` loop's carried
    vector) would have to be the other one, ``orientation``: the loop whose block argument it is makes
    its initial value again in that orientation when it can (a ``tl.zeros((n,))`` before the loop
    whose body adds row sums to it) and traces its body again; uncaught, it is the error it says."""

    def __init__(self, message: str, value: SSAValue, orientation: str):
        super().__init__(message)
        self.value, self.orientation = value, orientation


def _agreed_orientation(vectors: Sequence[Vector]) -> str:
    """The orientation vectors of one length meet in: that of those made in one (reductions, loop-carried
    values), the others (made from nothing: tl.zeros, tl.full, loads, tl.arange ...) made again in it;
    the first one's when every one could be either."""
    fixed = [v for v in vectors if not _can_reorient(v.value)]
    if not fixed:
        return vectors[0].orientation
    for v in fixed[1:]:
        if v.orientation != fixed[0].orientation:
            # a loop's carried vector first asks its loop to make its initial value in the other
            # orientation (no conversion each iteration); else the others are turned (_turned)
            carried = next((x for x in (v, fixed[0]) if isinstance(x.value, BlockArgument)
                            and isinstance(x.value.owner.parent_op(), scf.ForOp)), None)
            if carried is not None:
                other = "row" if carried.orientation == "col" else "col"
                raise OrientationConflict(error(f"{carried.type} is carried through a loop and used as a vector "
                                                f"with one value per {'row' if other == 'row' else 'column'}").args[0],
                                          carried.value, other)
            break
    return fixed[0].orientation


def _can_reorient(value: SSAValue) -> bool:
    """Whether :func:`_reoriented_value` can make ``value`` again in the other orientation (no side effect)."""
    if not isinstance(value.type, RegisterVectorType):
        return True
    op = value.owner
    return isinstance(op, _REORIENTABLE + _ELEMENTWISE) and all(_can_reorient(x) for x in op.operands)


def _reoriented(v: Vector, orientation: str) -> Vector:
    """``v`` with one value per row (``row``) or per column (``col``).

    A vector is made with one orientation (a 1-D load along the columns, a row reduction along
    the rows). Used the other way, the ops that made it are made again with the other
    orientation, each right after its original: a load, iota, fill or zeros, and the elementwise
    ops on such vectors (``tl.arange(n).to(tl.float32)[:, None]``). A reduction's vector, which has
    the orientation of the tile it reduced, is turned instead (:func:`_turned`: a conversion).
    """
    twin = _reoriented_value(v.value, orientation)
    return Vector(twin) if twin is not None else _turned(v)


def _turned(v: Vector) -> Vector:
    """``v`` in the other orientation when it cannot be made again in it (a reduction's vector): as a
    tile of one row (a column vector) or one column, transposed, and reduced along its one element
    (``max``: exact, NaN kept). No op of its own; tile-layout converts the fragments it must."""
    n, element = v.shape[0], v.type.element_type
    trace = current()
    if v.orientation == "col":
        tile = trace.value(t.BroadcastOp(v.value, RegisterType([1, n], element)))
        return Vector(trace.value(t.RowMaxOp(trace.value(t.TransposeOp(tile)))))
    tile = trace.value(t.BroadcastOp(v.value, RegisterType([n, 1], element)))
    return Vector(trace.value(t.ColMaxOp(trace.value(t.TransposeOp(tile)))))


def reoriented(v: Vector, orientation: str) -> Vector:
    """``v`` with one value per row (``row``) or per column (``col``): made again, or turned."""
    return _reoriented(v, orientation)


def can_reorient(v: Vector) -> bool:
    """Whether ``v`` can be made again in the other orientation (no conversion)."""
    return _can_reorient(v.value)


def reoriented_or_none(v: Vector, orientation: str) -> Vector | None:
    """``v`` made again in ``orientation`` (no conversion), or None when it cannot be (a reduction's)."""
    if not _can_reorient(v.value):
        return None
    return Vector(_reoriented_value(v.value, orientation))


def _reoriented_value(value: SSAValue, orientation: str) -> SSAValue | None:
    ty = value.type
    if not isinstance(ty, RegisterVectorType):
        return value  # a scalar operand (a fill's value) stays
    if ty.orientation.data == orientation:
        return value
    op = value.owner
    if not isinstance(op, _REORIENTABLE + _ELEMENTWISE):
        return None
    operands = []
    for operand in op.operands:
        twin = _reoriented_value(operand, orientation)
        if twin is None:
            return None
        operands.append(twin)
    new = type(op).create(operands=operands, properties=dict(op.properties), attributes=dict(op.attributes),
                          result_types=[RegisterVectorType(ty.length.data, ty.element_type, orientation)],
                          regions=[r.clone() for r in op.regions])
    new.location = op.location
    op.parent_block().insert_op_after(new, op)
    return mark(new.results[0]) if is_unsigned(value) else new.results[0]


def _is_float(ty: Attribute) -> bool:
    return dtype_of(ty).is_float if not isinstance(ty, (IndexType, IntegerType)) else False


def _cast_scalar(value: SSAValue, to: Attribute) -> SSAValue:
    """A run-time scalar as ``to``, the type it is promoted to where it meets other values (index casts,
    and widening only: :func:`_element_type` never promotes to a narrower type)."""
    trace = current()
    src = value.type
    if isinstance(src, IndexType) and isinstance(to, IntegerType):
        return trace.value(arith.IndexCastOp(value, to))
    unsigned = is_unsigned(value)
    if isinstance(src, IntegerType) and isinstance(to, IndexType):
        return _convert_scalar(value, to, unsigned)
    if isinstance(src, IndexType | IntegerType) and src != IntegerType(1) and _is_float(to):
        if isinstance(src, IndexType):  # ids and sizes: the signed 64-bit integer, then the float
            value = trace.value(arith.IndexCastOp(value, IntegerType(64)))
        return trace.value((arith.UIToFPOp if unsigned else arith.SIToFPOp)(value, to))
    wider_int = isinstance(to, IntegerType) and isinstance(src, IntegerType) and to.width.data > src.width.data
    if isinstance(src, FLOAT8_TYPES) and _is_float(to):  # FP8 computes in f32 (or wider): exact
        return _convert_scalar(value, to)
    if isinstance(src, IntegerType) and (_is_float(to) or wider_int) \
            or _is_float(src) and _is_float(to) and dtype_bits(to) > dtype_bits(src):
        return _convert_scalar(value, to, unsigned)  # promoted where it meets wider values: a mask as 0 / 1
    raise error(f"cannot use a {dtype_of(src)} scalar as {dtype_of(to)} (convert it with .to(...))")


# ---------------------------------------------------------------- the operations on scalars

_INDEX_UNSIGNED = {"floordiv": arith.DivUIOp, "mod": arith.RemUIOp, "min": arith.MinUIOp, "shr": arith.ShRUIOp}
"""Index values are mostly ids, extents and offsets: where both operands are provably not negative
(:func:`nonnegative`), ``//``, ``%``, ``min`` and ``>>`` are the unsigned ops, as in the compiler's own
index math. They tell LLVM the values' ranges: with a signed ``min`` bounding a block-order group, the
GEMM's prologue kept a 64-bit division and its main loop lost 18% (measured twice on the H100). A
difference (``pid - 3``) may be negative: there they are the signed ops (C's and Triton's rounding
toward zero). ``max`` stays signed: a window start clamped with ``tl.maximum(start - w, 0)`` may be
below zero before the clamp."""

_NONNEGATIVE_SOURCES = (t.BlockIdOp, t.ThreadIdOp, t.GridDimOp, t.ClusterIdOp, t.ClusterCountOp, t.WarpIdOp, t.LaneIdOp,
                        t.BlockRankOp, t.DimOp)
_NONNEGATIVE_IF_ALL = (arith.AddiOp, arith.MuliOp, arith.DivUIOp, arith.DivSIOp, arith.RemUIOp, arith.RemSIOp,
                       arith.CeilDivUIOp, arith.MinUIOp, arith.MinSIOp, arith.MaxUIOp, arith.SelectOp)
_NONNEGATIVE_IF_ANY = (arith.MaxSIOp, arith.AndIOp)


def nonnegative(v: SSAValue, depth: int = 24) -> bool:
    """Whether the integer ``v`` is provably >= 0 (as a signed number): ids, extents, non-negative
    constants, and sums, products, quotients, remainders, minima of such values, a loop's counter from
    such a start upward. False where unknown (a difference, a kernel argument, a loaded value)."""
    if depth == 0:
        return False
    op = v.op if isinstance(v, OpResult) else None
    if op is None:  # a block argument: a loop counter going up from a non-negative start (tilec.lang.loop)
        return v in current().nonnegative
    if isinstance(op, _NONNEGATIVE_SOURCES) or isinstance(op, arith.ExtUIOp):
        return True
    if isinstance(op, arith.ConstantOp):
        return isinstance(op.value, IntegerAttr) and op.value.value.data >= 0
    operands = op.operands[1:] if isinstance(op, arith.SelectOp) else op.operands
    if isinstance(op, _NONNEGATIVE_IF_ALL):
        return all(nonnegative(x, depth - 1) for x in operands)
    if isinstance(op, _NONNEGATIVE_IF_ANY):
        return any(nonnegative(x, depth - 1) for x in operands)
    if isinstance(op, arith.ShRUIOp | arith.ShRSIOp):
        return nonnegative(op.lhs, depth - 1)
    if isinstance(op, arith.IndexCastOp):
        return nonnegative(op.input, depth - 1)
    return False

_APPROXIMATED = frozenset({"exp", "exp2", "log", "log2", "rsqrt", "tanh", "erf", "sin", "cos"})
"""The math functions tilec computes with PTX's f32 approximations (16-bit floats through f32); f64 has none."""

def _check_precision(op: str, ty: Attribute) -> None:
    if isinstance(ty, Float64Type) and op in _APPROXIMATED:
        raise error(f"tl.{op} of float64 values: the GPU's {op} is an f32 approximation, with no f64 form in "
                    "tilec; convert to float32 first (x.to(tl.float32))")


_CMPF = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_CMPI = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_CMPI_UNSIGNED = {"lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge", "eq": "eq", "ne": "ne"}
COMPARISONS = frozenset(_CMPF)

_UNSIGNED = {"floordiv": arith.DivUIOp, "mod": arith.RemUIOp, "max": arith.MaxUIOp, "min": arith.MinUIOp,
             "shr": arith.ShRUIOp}
"""The integer ops that read their operands as unsigned numbers (``tl.uint32`` values)."""


def scalar_op(op: str, args: Sequence[SSAValue], unsigned: bool = False) -> SSAValue:
    """``op`` on scalar SSA values of one type, emitted into the current block (arith / math);
    ``unsigned``: integers read as unsigned numbers (:mod:`tilec.lang.unsigned`)."""
    trace = current()
    ty = args[0].type
    is_float = _is_float(ty)
    a = args[0]
    if op in COMPARISONS:
        if is_float:
            return trace.value(arith.CmpfOp(a, args[1], _CMPF[op]))
        # a mask orders as 0 < 1 (Triton's): a signed i1 would read true as -1
        unsigned = unsigned or ty == IntegerType(1)
        return trace.value(arith.CmpiOp(a, args[1], (_CMPI_UNSIGNED if unsigned else _CMPI)[op]))
    if unsigned and op in _UNSIGNED:
        return trace.value(_UNSIGNED[op](a, args[1]))
    if unsigned and op == "abs":
        return a
    if op == "select":
        return trace.value(arith.SelectOp(args[0], args[1], args[2]))
    table_f = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp,
               "max": arith.MaximumfOp, "min": arith.MinimumfOp}
    table_i = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "floordiv": arith.DivSIOp,
               "mod": arith.RemSIOp, "max": arith.MaxSIOp, "min": arith.MinSIOp, "and": arith.AndIOp,
               "or": arith.OrIOp, "xor": arith.XOrIOp, "shl": arith.ShLIOp, "shr": arith.ShRSIOp}
    unary_f = {"exp": math.ExpOp, "exp2": math.Exp2Op, "log": math.LogOp, "log2": math.Log2Op,
               "sqrt": math.SqrtOp, "rsqrt": math.RsqrtOp, "tanh": math.TanhOp, "erf": math.ErfOp,
               "sin": math.SinOp, "cos": math.CosOp, "floor": math.FloorOp, "ceil": math.CeilOp,
               "trunc": math.TruncOp, "rint": math.RoundEvenOp,
               "abs": math.AbsFOp, "neg": arith.NegfOp}
    if is_float and op in table_f:
        return trace.value(table_f[op](a, args[1]))
    if is_float and op == "mod":  # Triton's float %: fmod (the sign of a; a for an infinite b), as the GPU's frem:
        # a - trunc(a / b) * b, exact while a / b is (not for quotients past 2^24 in f32)
        b = args[1]
        whole = trace.value(math.TruncOp(trace.value(arith.DivfOp(a, b))))
        rest = trace.value(arith.SubfOp(a, trace.value(arith.MulfOp(whole, b))))
        infinite = trace.value(arith.CmpfOp(trace.value(math.AbsFOp(b)), trace.constant(float("inf"), ty), "oeq"))
        return trace.value(arith.SelectOp(infinite, a, rest))
    if isinstance(ty, IndexType) and op in _INDEX_UNSIGNED and nonnegative(a) and nonnegative(args[1]):
        return trace.value(_INDEX_UNSIGNED[op](a, args[1]))
    if not is_float and op in table_i:
        return trace.value(table_i[op](a, args[1]))
    if is_float and op in unary_f:
        _check_precision(op, ty)
        return trace.value(unary_f[op](a))
    if not is_float and op == "neg":
        return trace.value(arith.SubiOp(trace.constant(0, ty), a))
    if not is_float and op == "not":  # a mask's negation; an integer's bits flipped (xor with all ones)
        return trace.value(arith.XOrIOp(a, trace.constant(1 if ty == IntegerType(1) else -1, ty)))
    if not is_float and op == "abs":
        return trace.value(arith.MaxSIOp(a, trace.value(arith.SubiOp(trace.constant(0, ty), a))))
    kind = "floats" if is_float else "integers"
    raise error(f"'{op}' is not defined on {kind} ({dtype_of(ty)})")


# ---------------------------------------------------------------- the operations on tiles and vectors

_NATIVE_BINARY = {"add": t.AddOp, "sub": t.SubOp, "mul": t.MulOp, "div": t.DivOp, "max": t.MaxOp, "min": t.MinOp}
_NATIVE_UNARY = {"exp": t.ExpOp, "exp2": t.Exp2Op}
_NATIVE_BINARY_NAMES = {cls: name for name, cls in _NATIVE_BINARY.items()}
"""The native ops a map's body can take in (:func:`_fusable`), by the name :func:`scalar_op` knows them.
Only with a number: fused with another tile's op (attention's ``s - m[:, None]``, ``acc * alpha[:, None]``),
measured on an H200, the product attention kernels were 2-4% slower at some shapes."""


def elementwise(op: str, *operands: Any) -> Any:
    """``op`` applied elementwise to ``operands`` after numpy-style broadcasting (see the module doc)."""
    if op == "add" and len(operands) == 2 and isinstance(operands[1], View) and not isinstance(operands[0], View):
        return operands[1] + operands[0]  # offsets + x: Triton's pointer arithmetic either way round
    shape = _result_shape(operands)
    element = _element_type(operands, op)
    if element is None:
        own = [o for o in operands if callable(getattr(type(o), "describe", None)) and not isinstance(o, (int, float))]
        if own:  # a value of the language's own that is no tile, vector or scalar (tl.join's pairs)
            raise error(f"'{op}' takes tiles, vectors, scalars and numbers, got {own[0].describe()}")
        raise error(f"'{op}' needs at least one traced value (got Python numbers {operands!r})")
    if isinstance(element, FLOAT8_TYPES):  # computed in f32, the result rounded back to FP8 (as Triton does)
        wide = elementwise(op, *(o.to(dtypes.float32) if isinstance(o, (Value, Expanded)) else o for o in operands))
        return wide if op in COMPARISONS else wide.to(dtype_of(element))
    if not _is_float(element) and (op == "div" or any(isinstance(o, float) for o in operands)):
        element = Float32Type()  # integers divided, or meeting a Python float: f32, as Triton computes them
    if isinstance(element, IndexType) and shape.kind != "scalar":
        element = IntegerType(32)  # index scalars spread over a tile or vector: i32, a tile's coordinates
    if element == IntegerType(1) and op in ("add", "sub", "mul", "floordiv", "mod", "neg", "max", "min", "abs"):
        # masks count as integers, as numpy's booleans do: True + True is 2
        operands = tuple(o.to(dtypes.int32) if isinstance(o, (Value, Expanded)) else o for o in operands)
        return elementwise(op, *operands)
    _check_precision(op, element)
    unsigned = _unsigned_result(operands, element)
    values = [_materialize(o, shape, element, unsigned) for o in operands]
    keeps_sign = unsigned and op not in COMPARISONS  # an unsigned result (a comparison's is a mask)
    if shape.kind == "scalar":
        result = Scalar(scalar_op(op, values, unsigned))
        return Scalar(mark(result.value)) if keeps_sign else result
    trace = current()
    # a traced scalar (tl.load_scalar, a number argument) goes into a map's body as itself; a native op
    # would take it as a tile filled with copies of it (registers a lane for every element it holds)
    by_scalar = any(isinstance(o, Scalar) for o in operands)
    after_map = _fusing_saves_a_tile(values)
    if _is_float(element) and op in _NATIVE_BINARY and not by_scalar and not after_map:
        result = trace.value(_NATIVE_BINARY[op](values[0], values[1]))
    elif _is_float(element) and op in _NATIVE_UNARY and not after_map:
        result = trace.value(_NATIVE_UNARY[op](values[0]))
    else:
        out = IntegerType(1) if op in COMPARISONS else (values[1].type.element_type if op == "select" else element)
        result = map_values(lambda *xs: scalar_op(op, xs, unsigned), values, shape.register_type(out))
        if keeps_sign:
            mark(result)
    return _expanded_like(operands, shape, wrap(result))


def where(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` (an i1 mask) holds, else ``b``; broadcast like the operators."""
    shape = _result_shape((cond, a, b))
    element = _element_type((a, b), "where")
    if element is not None and not _is_float(element) and not isinstance(element, FLOAT8_TYPES) \
            and (isinstance(a, float) or isinstance(b, float)):
        element = Float32Type()
    if isinstance(element, IndexType) and shape.kind != "scalar":
        element = IntegerType(32)  # index scalars chosen between per element: i32, as elementwise ops take them
    if element is None:  # two Python numbers: f32 if either is a float, else i32 (an index tile has no meaning)
        element = Float32Type() if isinstance(a, float) or isinstance(b, float) else IntegerType(32)
        if shape.kind == "scalar":
            element = _number_type(a if not isinstance(a, bool) else 0.0) if not isinstance(element, Float32Type) \
                else element
    if isinstance(element, FLOAT8_TYPES) and shape.kind != "scalar":
        # a choice moves bits: FP8 values are chosen as bytes (computed in f32 they would be rounded back
        # through satfinite, and e5m2's infinities would become its largest finite value)
        fp8, byte = dtype_of(element), dtype_of(IntegerType(8))

        def as_bytes(o: Any) -> Any:
            if isinstance(o, (Value, Expanded)) and not isinstance(o, Scalar):
                return o.to(fp8).to(byte, bitcast=True)
            return bitcast_to(wrap(_materialize(o, shape, element)), byte)

        chosen = where(cond, as_bytes(a), as_bytes(b))
        return chosen.to(fp8, bitcast=True)
    unsigned = _unsigned_result((a, b), element)
    c = _materialize(cond, shape, IntegerType(1))
    x, y = _materialize(a, shape, element, unsigned), _materialize(b, shape, element, unsigned)
    if shape.kind == "scalar":
        chosen = scalar_op("select", [c, x, y])
    else:
        chosen = map_values(lambda *xs: scalar_op("select", xs), [c, x, y], shape.register_type(element))
    if unsigned:
        mark(chosen)
    return _expanded_like((cond, a, b), shape, wrap(chosen))


def mask_bits(mask: Any, value: Tile | Vector, who: str) -> Any:
    """``mask=`` of ``who`` for ``value``: True or False (a Python bool), else an i1 value of ``value``'s
    shape (a comparison's tile, vector, ``v[:, None]`` or scalar, broadcast as the operators do)."""
    if isinstance(mask, (bool, np.bool_)):
        return bool(mask)
    if isinstance(mask, Expanded):
        element = mask.vector.type.element_type
    elif isinstance(mask, Value):
        element = mask.type.element_type if isinstance(mask, (Tile, Vector)) else mask.type
    else:
        raise error(f"{who}'s mask= is a boolean tile, vector or scalar (a comparison) or a Python bool, got "
                    f"{describe(mask)}")
    if element != IntegerType(1):
        raise error(f"{who}'s mask= must be boolean (a comparison, e.g. cols < n), got {describe(mask)}")
    def mismatch() -> LangError:
        return error(f"{who}'s mask= ({describe(mask)}) does not broadcast to the value's shape {value.shape}")

    try:
        shape = _result_shape((value, mask))
    except LangError:
        raise mismatch() from None
    if shape.kind != ("vector" if isinstance(value, Vector) else "tile") or \
            tuple(shape.dims[:len(value.shape)]) != tuple(value.shape):
        raise mismatch()
    if isinstance(value, Vector) and shape.dims[1] != value.orientation:
        shape = _Shape("vector", (value.shape[0], value.orientation))
    try:
        return wrap(_materialize(mask, shape, IntegerType(1)))
    except LangError:  # a vector along an axis of another length
        raise mismatch() from None


def stored_as(value: Tile | Vector, view: View) -> Tile | Vector:
    """``value`` in ``view``'s element type (a mask as 0 / 1; into FP8 rounded and saturated, as Triton's
    ``tl.store`` converts; into a ``bool`` array as a mask, nonzero true, held as the byte 0 / 1)."""
    if holds_booleans(view.value):
        return value.to(dtypes.int1).to(dtypes.int8)
    return value.to(view.dtype)


def fill_number(other: Any, view: View, who: str) -> float:
    """A load's ``other=`` number as the element the array holds (an unsigned one's bits as the signed number
    the IR holds; a ``bool`` array's 0 or 1), or an error naming what the array's type takes."""
    element = view.type.element_type
    if holds_booleans(view.value):
        return float(bool(other))
    if not isinstance(element, IntegerType):
        return float(other)
    bits, dt = element.width.data, view.dtype
    # a signed fill of the width (a sentinel such as -1) or, for an unsigned array, any value of its range
    high = 1 << bits if dt.is_unsigned else 1 << (bits - 1)
    if not (float(other).is_integer() and -(1 << (bits - 1)) <= other < high):
        article = "an" if dt.name.startswith("int") else "a"
        smallest = 0 if dt.is_unsigned else f"-2**{bits - 1}"
        raise error(f"{who}: other={other!r} is not {article} {dt.name} value for {view.name!r} of {dt}: give an integer "
                    f"(the smallest, {smallest}, keeps elements out of a maximum)")
    number = int(other)
    return float(number - (1 << bits) if number >= 1 << (bits - 1) else number)


def as_loaded(value: SSAValue, view: View | Shared) -> Any:
    """A load's (or gather's) result as the language reads it: a ``bool`` array's bytes as a mask (nonzero)."""
    got = wrap(value)
    return got.to(dtypes.int1) if isinstance(view, View) and holds_booleans(view.value) else got


def _expanded_like(operands: Sequence[Any], shape: _Shape, result: Value) -> Any:
    """``result`` as ``v[:, None]`` / ``v[None, :]`` when it is a vector computed from expanded ones."""
    axes = [o.axis for o in operands if isinstance(o, Expanded)]
    return Expanded(result, axes[0]) if shape.kind == "vector" and axes else result


FUSE_LIMIT = 48
"""Ops a producing ``tile.map`` may have for its body to be copied into a consumer's."""


def map_values(body: Callable[..., SSAValue], inputs: Sequence[SSAValue], result_type: Attribute) -> SSAValue:
    """A ``tile.map`` over ``inputs`` whose body ``body(*scalars)`` builds (in the map's block).

    Elementwise work is fused as it is built: an input made by another ``tile.map`` brings that
    map's body in (its inputs become this map's), and a tile filled with a constant becomes the
    constant inside the body, one filled with a traced scalar that scalar (read from outside it). ``tl.where(cols < n, x - m, 0.0)`` is then one map of ``cols`` and
    ``x - m``, not a mask tile, a tile of zeros and a select: fewer registers live, which a kernel
    that holds whole rows needs. Maps left without uses are removed when the kernel is finished
    (:func:`remove_dead_ops`).
    """
    trace = current()
    leaves: list[SSAValue] = []
    for v in inputs:
        _collect_leaves(v, leaves)
    if not leaves:  # only constants: a tile.map needs one input tile, so the first stays one
        leaves = [inputs[0]]
    block = Block(arg_types=[v.type.element_type for v in leaves])
    args = dict(zip(leaves, block.args))
    with trace.inside(block, isolated=True):
        out = body(*(_scalar_in_body(v, args) for v in inputs))
        trace.emit(t.YieldOp(out))
    return trace.value(t.MapOp(leaves, result_type, Region(block)))


def _fusing_saves_a_tile(values: Sequence[SSAValue]) -> bool:
    """Whether an op of ``values`` reads no more tiles as a map that brings in an operand's producing
    ``tile.map`` than as itself: ``acc * tl.sigmoid(acc)`` then holds ``acc`` alone, not a second tile as
    large beside it (what made a SiLU epilogue spill), and ``1 + tl.erf(x)`` extends the erf's map
    instead of adding a tile. A fusion that would read more tiles is left to the op."""
    if not any(_fusable(v) in ("map", "native") for v in values):
        return False
    leaves: list[SSAValue] = []
    for v in values:
        _collect_leaves(v, leaves)
    return len(leaves) <= len({v for v in values if _fusable(v) not in ("constant", "scalar")})


def _fusable(v: SSAValue) -> str | None:
    op = v.owner
    if isinstance(op, t.FillOp) and isinstance(op.value.owner, arith.ConstantOp):
        return "constant"
    if isinstance(op, t.FillOp):  # a traced scalar (tl.load_scalar, an argument): the body reads it directly
        return "scalar"
    if isinstance(op, t.MapOp) and len(op.body.block.ops) <= FUSE_LIMIT:
        return "map"
    if type(op) in _NATIVE_BINARY_NAMES and _is_float(v.type.element_type) \
            and any(_fusable(x) in ("constant", "scalar") for x in op.operands):
        return "native"  # 0.5 * acc: one arith op with a number, which a body takes in as a map's
    return None


def _collect_leaves(v: SSAValue, leaves: list[SSAValue]) -> None:
    kind = _fusable(v)
    if kind == "map":
        for i in v.owner.inputs:
            _collect_leaves(i, leaves)
    elif kind == "native":
        for i in v.owner.operands:
            _collect_leaves(i, leaves)
    elif kind is None and v not in leaves:
        leaves.append(v)


def _scalar_in_body(v: SSAValue, args: dict[SSAValue, SSAValue]) -> SSAValue:
    """``v``'s element inside the map being built: a block argument, a constant, or a producer's body."""
    if v in args:
        return args[v]
    kind = _fusable(v)
    trace = current()
    if kind == "constant":
        const = v.owner.value.owner
        return trace.value(arith.ConstantOp(const.value, const.result.type))
    if kind == "scalar":
        return v.owner.value
    if kind is None:
        return args[v]
    if kind == "native":
        return scalar_op(_NATIVE_BINARY_NAMES[type(v.owner)], [_scalar_in_body(i, args) for i in v.owner.operands])
    producer = v.owner
    mapping: dict[SSAValue, SSAValue] = {a: _scalar_in_body(i, args) for a, i in zip(producer.body.block.args,
                                                                                        producer.inputs)}
    for op in producer.body.block.ops:
        if isinstance(op, t.YieldOp):
            return mapping[op.values[0]]
        copy = op.clone(value_mapper=mapping)
        copy.location = op.location
        trace.blocks[-1].add_op(copy)
        mapping.update(zip(op.results, copy.results))
    raise AssertionError("a tile.map body ends with tile.yield")


def remove_dead_ops(region: Region) -> None:
    """Drop the ops whose results nothing uses and that have no other effect (fused maps, unused loads), and
    the identity maps that gave a value another reading while tracing (:func:`_reinterpreted`: the IR's
    integers are signless, so once the ops are chosen the copy is its input, which tile-stage can then stage
    as the mma operand it is)."""
    for op in list(region.walk()):
        if isinstance(op, t.MapOp) and len(op.inputs) == 1 and op.inputs[0].type == op.results[0].type:
            ops = list(op.body.block.ops)
            if len(ops) == 1 and isinstance(ops[0], t.YieldOp) and ops[0].values[0] is op.body.block.args[0]:
                op.results[0].replace_all_uses_with(op.inputs[0])
    region_dce(region)


def tile_map(fn: Callable[..., Any], *inputs: Any) -> Any:
    """``fn`` on each element of ``inputs`` (broadcast like the operators): ``fn`` receives scalars and
    returns one, built with the same operators and ``tl`` functions; one ``tile.map`` op."""
    shape = _result_shape(inputs)
    if shape.kind == "scalar":
        return fn(*inputs)
    traced = [_elem(o) if isinstance(o, (Tile, Vector, Expanded)) else o.type for o in inputs if isinstance(o, Value | Expanded)]
    number_type = traced[0] if traced else Float32Type()  # Python numbers take the first traced element type
    values = [_materialize(o, shape, _elem(o) if isinstance(o, (Tile, Vector, Expanded)) else
                           (o.type if isinstance(o, Scalar) else number_type)) for o in inputs]
    trace = current()
    block = Block(arg_types=[v.type.element_type for v in values])
    for arg, v in zip(block.args, values):  # the elements read as their tiles' are
        if is_unsigned(v):
            mark(arg)
    with trace.inside(block, isolated=True):
        out = fn(*(Scalar(a) for a in block.args))
        if isinstance(out, (int, float, bool)):
            out = Scalar(trace.constant(out, block.args[0].type))
        if not isinstance(out, Scalar):
            raise error(f"the function given to tl.map must return one scalar, got {type(out).__name__}")
        trace.emit(t.YieldOp(out.value))
    result = trace.value(t.MapOp(values, shape.register_type(out.type), Region(block)))
    return _expanded_like(inputs, shape, wrap(mark(result) if is_unsigned(out.value) else result))


def _elem(o: Any) -> Attribute:
    return (o.vector if isinstance(o, Expanded) else o).type.element_type


def convert(x: Value, to: DType) -> Value:
    """``x`` with element type ``to`` (integers widened, and converted to floats, as the signed or unsigned
    numbers they are; a signed integer read as the unsigned one of its width keeps its bits, as C's do)."""
    trace = current()
    src = x.type.element_type if isinstance(x, (Tile, Vector)) else x.type
    dst = to.ir
    from_unsigned = is_unsigned(x.value)
    if src == dst:
        if not isinstance(dst, IntegerType) or from_unsigned == to.is_unsigned:
            return x
        return _reinterpreted(x, to.is_unsigned)
    if isinstance(x, Scalar):
        out = _convert_scalar(x.value, dst, from_unsigned, to.is_unsigned)
    elif _is_float(src) and _is_float(dst):
        ty = checked_type(RegisterType, list(x.type.dims), dst) if isinstance(x, Tile) else \
            checked_type(RegisterVectorType, x.type.length.data, dst, x.orientation)
        return wrap(trace.value(t.ConvertOp(x.value, ty)))
    else:
        shape = _Shape("tile", x.shape) if isinstance(x, Tile) else _Shape("vector", (x.shape[0], x.orientation))
        out = map_values(lambda v: _convert_scalar(v, dst, from_unsigned, to.is_unsigned), [x.value],
                         shape.register_type(dst))
    return wrap(mark(out) if to.is_unsigned else out)


def _reinterpreted(x: Value, unsigned: bool) -> Value:
    """``x``'s bits as a new value that the language reads as unsigned (or signed): a value of its own, so
    that ``x`` keeps its reading (an identity ``tile.map``, which fuses into its consumers; a scalar ``+ 0``)."""
    ty = x.type
    if isinstance(x, Scalar):
        out = current().value(arith.AddiOp(x.value, current().constant(0, ty)))
    else:
        out = map_values(lambda v: v, [x.value], ty)
    return wrap(mark(out) if unsigned else out)


def bitcast_to(x: Value, to: DType) -> Value:
    """``x``'s bits read as ``to`` (``arith.bitcast`` of each element; the widths must agree)."""
    src = x.type.element_type if isinstance(x, (Tile, Vector)) else x.type
    dst = to.ir
    if src == dst:  # the same bits, perhaps read with the other signedness: convert's
        return convert(x, to)
    widths = [ty.width.data if isinstance(ty, IntegerType) else {8: 8, 16: 16, 32: 32, 64: 64}.get(_float_bits(ty))
              for ty in (src, dst)]
    if None in widths or widths[0] != widths[1] or IntegerType(1) in (src, dst):
        raise error(f"a bitcast keeps the bits: {dtype_of(src)} and {dtype_of(dst)} differ in width")
    cast = lambda v: current().value(arith.BitcastOp(v, dst))  # noqa: E731
    if isinstance(x, Scalar):
        out = cast(x.value)
    else:
        shape = _Shape("tile", x.shape) if isinstance(x, Tile) else _Shape("vector", (x.shape[0], x.orientation))
        out = map_values(lambda v: cast(v), [x.value], shape.register_type(dst))
    return wrap(mark(out) if to.is_unsigned else out)


def _float_bits(ty: Attribute) -> int | None:
    if isinstance(ty, FLOAT8_TYPES):
        return 8
    return {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}.get(dtype_of(ty).name) if _is_float(ty) \
        else None


def _convert_scalar(value: SSAValue, dst: Attribute, from_unsigned: bool = False, to_unsigned: bool = False) -> SSAValue:
    """``value`` as ``dst``; ``from_unsigned`` / ``to_unsigned``: an integer source or result read as unsigned."""
    trace = current()
    src = value.type
    if src == dst:
        return value
    # FP8 converts to and from f16 and f32 (PTX's cvt, saturating into FP8), anything else through f32
    if isinstance(src, FLOAT8_TYPES) and not isinstance(dst, (Float16Type, Float32Type)):
        return _convert_scalar(trace.value(arith.ExtFOp(value, Float32Type())), dst, to_unsigned=to_unsigned)  # exact
    if isinstance(dst, FLOAT8_TYPES) and not isinstance(src, (Float16Type, Float32Type)):
        return trace.value(arith.TruncFOp(_convert_scalar(value, Float32Type(), from_unsigned), dst))
    if isinstance(src, FLOAT8_TYPES) or isinstance(dst, FLOAT8_TYPES):  # PTX's cvt (saturating into FP8)
        return trace.value(arith.ExtFOp(value, dst) if isinstance(src, FLOAT8_TYPES) else arith.TruncFOp(value, dst))
    if dst == IntegerType(1):  # a truth value: nonzero, as numpy's astype(bool)
        if isinstance(src, IndexType):
            value, src = trace.value(arith.IndexCastOp(value, IntegerType(64))), IntegerType(64)
        zero = trace.constant(0, src) if not _is_float(src) else trace.constant(0.0, src)
        return trace.value(arith.CmpfOp(value, zero, "une") if _is_float(src) else arith.CmpiOp(value, zero, "ne"))
    if _is_float(src) and _is_float(dst):
        if dtype_bits(dst) == dtype_bits(src):  # f16 <-> bf16: neither holds the other; LLVM casts through f32
            value = trace.value(arith.ExtFOp(value, Float32Type()))
            return trace.value(arith.TruncFOp(value, dst))
        wider = dtype_bits(dst) > dtype_bits(src)
        return trace.value(arith.ExtFOp(value, dst) if wider else arith.TruncFOp(value, dst))
    if isinstance(src, IndexType):  # an integer directly (64 bits kept for i64), a float from the i64
        value = trace.value(arith.IndexCastOp(value, dst if isinstance(dst, IndexType | IntegerType) else IntegerType(64)))
        return value if value.type == dst else _convert_scalar(value, dst)
    zero_extended = src == IntegerType(1) or from_unsigned  # a mask is 0 / 1, not the sign-extended -1
    if isinstance(src, IntegerType) and isinstance(dst, IndexType):
        if zero_extended and src.width.data < 64:
            value = trace.value(arith.ExtUIOp(value, IntegerType(64)))
        return trace.value(arith.IndexCastOp(value, dst))
    if isinstance(src, IntegerType) and _is_float(dst):
        cls = arith.UIToFPOp if zero_extended else arith.SIToFPOp
        return trace.value(cls(value, dst))
    if _is_float(src) and isinstance(dst, IntegerType) and dst != IntegerType(1):
        bits = dst.width.data
        if bits < 16:  # PTX converts into 16 bits at least: clamped first, so 8 bits saturate as 16 do
            lowest, highest = (0, (1 << bits) - 1) if to_unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
            low, high = trace.constant(float(lowest), src), trace.constant(float(highest), src)
            value = trace.value(arith.MaximumfOp(trace.value(arith.MinimumfOp(value, high)), low))
        return trace.value(arith.FPToUIOp(value, dst) if to_unsigned else arith.FPToSIOp(value, dst))
    if isinstance(src, IntegerType) and isinstance(dst, IntegerType):
        if dst.width.data > src.width.data:  # a mask or an unsigned integer widens with zeros, a signed one its sign
            return trace.value(arith.ExtUIOp(value, dst) if zero_extended else arith.ExtSIOp(value, dst))
        return trace.value(arith.TruncIOp(value, dst))
    raise error(f"cannot convert {dtype_of(src)} to {dtype_of(dst)}")


def dtype_bits(ty: Attribute) -> int:
    return {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[dtype_of(ty).name]


__all__ = ["Expanded", "Scalar", "Shared", "Tile", "Value", "Vector", "View", "convert", "dtypes", "elementwise",
           "index", "map_values", "remove_dead_ops", "scalar_op", "tile_map", "where", "wrap"]
