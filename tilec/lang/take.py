"""Triton's ``tl.gather(src, index, axis)``: elements of a tile (vector) picked along one axis by an index.

``out[i, j] = src[i, index[i, j]]`` along axis 1, ``src[index[i, j], j]`` along axis 0 (numpy's
``take_along_axis``); ``index`` has the extents of ``src`` but along ``axis``, and gives the result its
shape. It is ``tile.take``: the index and the result share a fragment, and tile-distribute moves the source
through shared memory (the places an index names are known at run time only). An index outside the axis
(a negative one too) reads 0, where Triton leaves it undefined.
"""

from __future__ import annotations

from typing import Any

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, RegisterVectorType
from tilec.lang.dtypes import int8, int32, int64
from tilec.lang.shapes import _as_tile, _describe
from tilec.lang.tracing import current, error
from tilec.lang.values import Expanded, Tile, Vector, checked_type, wrap


def _index(index: Any, src: Tile | Vector) -> Tile | Vector:
    """The index as i32 (i64 stays): narrower and unsigned integers are widened as the numbers they are."""
    index = _as_tile(index)
    if not isinstance(index, (Tile, Vector)) or type(index) is not type(src):
        raise error(f"tl.gather's index is a {'tile' if isinstance(src, Tile) else 'vector'} of integers like its "
                    f"source, {_describe(src)}; got {_describe(index)}")
    dtype = index.dtype
    if not dtype.is_int or dtype.bits == 1:
        raise error(f"tl.gather's index holds integers, got {_describe(index)}")
    if dtype.bits == 64:
        return index if dtype == int64 else index.to(int64, bitcast=True)  # past 2^63: negative, outside
    return index if dtype == int32 else index.to(int32)


def gather(src: Any, index: Any, axis: int) -> Tile | Vector:
    """Triton's ``tl.gather``: ``src``'s elements picked along ``axis`` by ``index`` (see the module
    docstring); the result has ``index``'s shape and ``src``'s element type."""
    src = _as_tile(src)
    if not isinstance(src, (Tile, Vector)):
        raise error(f"tl.gather takes a tile or a vector to pick from, got {_describe(src)}")
    rank = len(src.shape)
    if isinstance(axis, bool) or not isinstance(axis, int) or axis not in range(-rank, rank):
        raise error(f"tl.gather's axis is one of {_describe(src)}'s {rank} axes (a Python int), got {axis!r}")
    axis %= rank
    index = _index(index, src)
    if any(a != b for d, (a, b) in enumerate(zip(src.shape, index.shape)) if d != axis):
        raise error(f"tl.gather along axis {axis}: the index, {_describe(index)}, must have the extents of "
                    f"{_describe(src)} but along that axis")
    if src.dtype.is_fp8:  # FP8 values move as their bytes
        return gather(src.to(int8, bitcast=True), index, axis).to(src.dtype, bitcast=True)
    element = src.type.element_type
    if isinstance(index, Tile):
        ty = checked_type(RegisterType, list(index.shape), element)
    else:
        ty = checked_type(RegisterVectorType, index.shape[0], element, index.orientation)
    return wrap(current().value(t.TakeOp(src.value, index.value, axis, ty)))


for _cls in (Tile, Vector, Expanded):  # Triton's tensor method: x.gather(index, axis)
    _cls.gather = lambda self, index, axis: gather(self, index, axis)


__all__ = ["gather"]
