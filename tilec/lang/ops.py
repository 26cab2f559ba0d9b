"""The ``tl.*`` functions: ids, loads and stores, tiles made from scratch, reductions, math.

Each builds tile-dialect ops through the current trace (:mod:`tilec.lang.tracing`); none lowers
anything itself: the passes that compile hand-written tile IR compile these kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Operation, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, RegisterVectorType
from tilec.lang.dtypes import as_dtype, int32
from tilec.lang.tracing import current, error
from tilec.lang.values import (
    Expanded,
    Scalar,
    Tile,
    Value,
    Vector,
    View,
    checked_type,
    elementwise,
    tile_map,
    where,
    wrap,
)

# ---------------------------------------------------------------- where am I


def block_id(axis: int = 0) -> Scalar:
    """This block's index along launch axis 0, 1 or 2 (Triton's ``program_id``)."""
    _check_axis(axis)
    return Scalar(current().value(t.BlockIdOp(axis), f"block{'xyz'[axis]}"))


program_id = block_id


def thread_id(axis: int = 0) -> Scalar:
    """This thread's index in the block along ``axis`` (for experts: tiles are the block's)."""
    _check_axis(axis)
    return Scalar(current().value(t.ThreadIdOp(axis), f"tid{'xyz'[axis]}"))


def warp_id() -> Scalar:
    """This warp's index in the block (per-warp tiles, as ThunderKittens writes them)."""
    return Scalar(current().value(t.WarpIdOp(), "warp"))


def lane_id() -> Scalar:
    """This thread's lane in its warp."""
    return Scalar(current().value(t.LaneIdOp(), "lane"))


def barrier() -> None:
    """Every thread of the block waits here."""
    current().emit(t.BarrierOp())


def _check_axis(axis: Any) -> None:
    if axis not in (0, 1, 2):
        raise error(f"axis must be 0, 1 or 2, got {axis!r}")


# ---------------------------------------------------------------- indices


def index(value: Any, what: str = "an index") -> SSAValue:
    """An ``index`` SSA value from a Python int or a traced integer scalar."""
    trace = current()
    if isinstance(value, bool) or not isinstance(value, (int, Scalar)):
        raise error(f"{what} must be an int or an integer scalar, got {_describe(value)}")
    if isinstance(value, int):
        return trace.constant(value, IndexType())
    ty = value.type
    if isinstance(ty, IndexType):
        return value.value
    if isinstance(ty, IntegerType) and ty.width.data > 1:
        return trace.value(arith.IndexCastOp(value.value, IndexType()))
    raise error(f"{what} must be an integer, got a {value.describe()}")


def _describe(value: Any) -> str:
    return value.describe() if isinstance(value, Value) else f"{type(value).__name__} {value!r}"


def _static_shape(shape: Any, what: str) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise error(f"{what} must be a tuple of Python ints (tl.constexpr values), got {shape!r}")
    if any(d <= 0 for d in shape):
        raise error(f"{what} {tuple(shape)} must be positive")
    return tuple(shape)


# ---------------------------------------------------------------- memory


def load(view: View, offsets: Sequence[Any], shape: Any, *, other: float = 0.0, axis: int = 1) -> Tile | Vector:
    """The ``shape`` window of ``view`` at ``offsets`` (its first element's coordinates).

    Elements outside the array read as ``other`` (``float("-inf")`` keeps them out of a maximum).
    A rank-2 window gives a tile; a rank-1 window a vector with one value per column (``axis=1``,
    for ``v[None, :]``) or per row (``axis=0``, for ``v[:, None]``).
    """
    if not isinstance(view, View):
        raise error(f"tl.load reads an array argument of the kernel, got {_describe(view)}")
    dims = _static_shape(shape, "tl.load's shape")
    offsets = _offsets(view, offsets, "tl.load")
    if len(dims) != view.ndim:
        raise error(f"tl.load of {view.name!r} ({view.ndim}-D): the shape {dims} has {len(dims)} dimensions")
    if not isinstance(other, (int, float)) or isinstance(other, bool):
        raise error(f"other= must be a number, got {other!r}")
    element = view.type.element_type
    if len(dims) == 1:
        if axis not in (0, 1):
            raise error(f"axis= of a 1-D tl.load is 0 (one value per row) or 1 (per column), got {axis!r}")
        ty = checked_type(RegisterVectorType, dims[0], element, "row" if axis == 0 else "col")
    elif len(dims) == 2:
        ty = checked_type(RegisterType, list(dims), element)
    else:
        raise error(f"tl.load makes 1-D vectors and 2-D tiles, got shape {dims}")
    return wrap(current().value(t.LoadOp(view.value, offsets, ty, other=float(other)), f"{view.name}_t"))


def store(view: View, offsets: Sequence[Any], value: Any) -> None:
    """Write ``value`` (a tile, or a vector into a 1-D array) into ``view`` at ``offsets``; elements
    outside the array are dropped."""
    if not isinstance(view, View):
        raise error(f"tl.store writes an array argument of the kernel, got {_describe(view)}")
    if isinstance(value, Expanded):
        value = value.vector
    if not isinstance(value, (Tile, Vector)):
        raise error(f"tl.store writes a tile or a vector, got {_describe(value)}")
    if value.type.element_type != view.type.element_type:
        raise error(f"tl.store of {value.dtype} values into {view.name!r} of {view.dtype}: "
                    f"convert with .to({view.name}.dtype)")
    rank = 1 if isinstance(value, Vector) else 2
    if rank != view.ndim:
        raise error(f"tl.store of a {rank}-D value into {view.ndim}-D {view.name!r}")
    current().emit(t.StoreOp(value.value, view.value, _offsets(view, offsets, "tl.store")))


def _offsets(view: View, offsets: Any, who: str) -> list[SSAValue]:
    if not isinstance(offsets, (tuple, list)):
        offsets = (offsets,)
    if len(offsets) != view.ndim:
        raise error(f"{who} of {view.name!r} ({view.ndim}-D) needs {view.ndim} offsets, got {len(offsets)}")
    return [index(o, f"{who} offset {i}") for i, o in enumerate(offsets)]


# ---------------------------------------------------------------- tiles from scratch


def zeros(shape: Any, dtype: Any = "float32", *, axis: int = 1) -> Tile | Vector:
    """A tile (2-D ``shape``) or vector (1-D; ``axis`` as in :func:`load`) of zeros."""
    return wrap(current().value(t.ZerosOp(_register_type(shape, dtype, axis))))


def full(shape: Any, value: Any, dtype: Any = "float32", *, axis: int = 1) -> Tile | Vector:
    """A tile or vector with every element ``value`` (a number or a scalar)."""
    ty = _register_type(shape, dtype, axis)
    trace = current()
    if isinstance(value, Scalar):
        if value.type != ty.element_type:
            value = value.to(as_dtype(dtype))
        scalar = value.value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        scalar = trace.constant(value, ty.element_type)
    else:
        raise error(f"tl.full's value must be a number or a scalar, got {_describe(value)}")
    return wrap(trace.value(t.FillOp(scalar, ty)))


def arange(start: Any, end: int | None = None, *, axis: int = 1) -> Vector:
    """``start, start + 1, ... end - 1`` as an int32 vector (``arange(n)`` starts at 0), one value per
    column (``axis=1``) or per row (``axis=0``); a run-time start is :func:`iota`'s offset."""
    if end is None:
        start, end = 0, start
    if not isinstance(start, int) or not isinstance(end, int):
        raise error("tl.arange(start, end) takes Python ints; for a run-time start use tl.iota((n,), 0, start)")
    return iota((end - start,), 0, start, axis=axis)


def iota(shape: Any, dim: int, offset: Any = 0, *, axis: int = 1) -> Tile | Vector:
    """Each element's coordinate along ``dim`` plus ``offset`` (int32): with a window's origin as the
    offset, the element's row or column in the array, what a mask compares."""
    dims = _static_shape(shape, "tl.iota's shape")
    if dim not in range(len(dims)):
        raise error(f"dim {dim!r} is not a dimension of shape {dims}")
    ty = _register_type(dims, int32, axis)
    return wrap(current().value(t.IotaOp(index(offset, "tl.iota's offset"), dim, ty)))


def _register_type(shape: Any, dtype: Any, axis: int):
    dims = _static_shape(shape, "the shape")
    element = as_dtype(dtype).ir
    if len(dims) == 1:
        if axis not in (0, 1):
            raise error(f"axis= of a vector is 0 (one value per row) or 1 (per column), got {axis!r}")
        return checked_type(RegisterVectorType, dims[0], element, "row" if axis == 0 else "col")
    if len(dims) == 2:
        return checked_type(RegisterType, list(dims), element)
    raise error(f"register values are 1-D vectors or 2-D tiles, got shape {dims}")


# ---------------------------------------------------------------- reductions


def _reduce(kind: str, x: Any, axis: int) -> Vector:
    if not isinstance(x, Tile):
        raise error(f"tl.{kind} reduces a tile, got {_describe(x)}")
    if axis not in (0, 1):
        raise error(f"tl.{kind}'s axis is 0 (down the columns) or 1 (along the rows), got {axis!r}")
    op: dict[tuple[str, int], type[Operation]] = {
        ("sum", 1): t.RowSumOp, ("max", 1): t.RowMaxOp, ("min", 1): t.RowMinOp,
        ("sum", 0): t.ColSumOp, ("max", 0): t.ColMaxOp, ("min", 0): t.ColMinOp,
    }
    if not x.dtype.is_float:
        raise error(f"tl.{kind} reduces float tiles, got {x.describe()}")
    return Vector(current().value(op[(kind, axis)](x.value)))


def sum(x: Tile, axis: int = 1) -> Vector:  # noqa: A001 - numpy's name
    """The sum along ``axis``: 1 gives one value per row (a ``row`` vector), 0 one per column."""
    return _reduce("sum", x, axis)


def max(x: Tile, axis: int = 1) -> Vector:  # noqa: A001
    """The maximum along ``axis`` (see :func:`sum`)."""
    return _reduce("max", x, axis)


def min(x: Tile, axis: int = 1) -> Vector:  # noqa: A001
    """The minimum along ``axis`` (see :func:`sum`)."""
    return _reduce("min", x, axis)


def row_sum(x: Tile) -> Vector:
    """One sum per row (ThunderKittens' ``row_sum``)."""
    return _reduce("sum", x, 1)


def row_max(x: Tile) -> Vector:
    """One maximum per row."""
    return _reduce("max", x, 1)


def row_min(x: Tile) -> Vector:
    """One minimum per row."""
    return _reduce("min", x, 1)


def col_sum(x: Tile) -> Vector:
    """One sum per column."""
    return _reduce("sum", x, 0)


def col_max(x: Tile) -> Vector:
    """One maximum per column."""
    return _reduce("max", x, 0)


def col_min(x: Tile) -> Vector:
    """One minimum per column."""
    return _reduce("min", x, 0)


# ---------------------------------------------------------------- math


def _unary(name: str) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return elementwise(name, x)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of a tile, vector or scalar."
    return fn


exp, exp2, log, log2 = _unary("exp"), _unary("exp2"), _unary("log"), _unary("log2")
sqrt, rsqrt, tanh, abs = _unary("sqrt"), _unary("rsqrt"), _unary("tanh"), _unary("abs")  # noqa: A001


def maximum(a: Any, b: Any) -> Any:
    """The larger of ``a`` and ``b``, elementwise (NaN if either is)."""
    return elementwise("max", a, b)


def minimum(a: Any, b: Any) -> Any:
    """The smaller of ``a`` and ``b``, elementwise (NaN if either is)."""
    return elementwise("min", a, b)


def sigmoid(x: Any) -> Any:
    """``1 / (1 + e^-x)``, elementwise: one ``tile.map``."""
    return tile_map(lambda v: 1.0 / (1.0 + exp(-v)), x)


def map(fn: Callable[..., Any], *inputs: Any) -> Any:  # noqa: A001 - the op's name
    """``fn`` on each element of ``inputs`` (broadcast like the operators), as one ``tile.map``: ``fn``
    takes and returns scalars, built with the same operators and functions."""
    return tile_map(fn, *inputs)


__all__ = [
    "abs", "arange", "barrier", "block_id", "col_max", "col_min", "col_sum", "exp", "exp2", "full", "index",
    "iota", "lane_id", "load", "log", "log2", "map", "max", "maximum", "min", "minimum", "program_id",
    "row_max", "row_min", "row_sum", "rsqrt", "sigmoid", "sqrt", "store", "sum", "tanh", "thread_id",
    "warp_id", "where", "zeros",
]
