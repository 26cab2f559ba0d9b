"""Triton's ``tl.sort``, ``tl.topk``, ``tl.bitonic_merge`` and ``tl.flip``, written in the language on its
reshapes, splits and joins.

All work along the last axis of a vector or a tile (each row on its own), of a power-of-two extent.
``flip`` swaps the halves of every block of 2j elements, for j = n/2 .. 1 (which reverses every bit of
an index: log2(n) steps). ``sort`` is a bitonic network: for each block size k = 2, 4 .. n and each
distance j = k/2 .. 1, the element at i and the one at i + j (i's bit j clear) are ordered, ascending
where i's bit k is clear (the last merge: everywhere), by a compare and a select that keep both values
(so the result is a permutation of the input). Floats are sorted as integer keys in their order, with NaN
the largest (:func:`_as_keys`): numpy's and torch's order, NaN last (first when descending). Each step reads the axis as pairs of
blocks of j (``x.reshape(r, 2, j)``: ``tile.split`` of the rows of a (2r, j) tile) and puts them back
(``tile.join``); where every thread holds both elements of its pairs these move no data, else they go
through shared memory (tile-layout and tile-distribute decide, as for any reshape). ``topk`` sorts runs of
k, then halves the rows until k are left (:func:`topk`); ``bitonic_merge`` is the network's last merge.
"""

from __future__ import annotations

from typing import Any

from tilec.lang import ops
from tilec.lang.dtypes import int8, int16, int32, int64
from tilec.lang.shapes import _as_tile, _describe, _joined, _split, reshape
from tilec.lang.tracing import error
from tilec.lang.values import Expanded, Tile, Vector, where


def _last_axis(x: Any, what: str, dim: Any) -> tuple[Tile, int, int]:
    """``x`` as a tile of rows to work on, its rows and their length; an error unless ``dim`` is the last
    axis and its extent a power of two."""
    if isinstance(x, Expanded):
        x = x.tile()
    if not isinstance(x, (Tile, Vector)):
        raise error(f"{what} takes a tile or a vector, got {_describe(x)}")
    rank = len(x.shape)
    if dim is not None and (isinstance(dim, bool) or dim not in (rank - 1, -1)):
        raise error(f"{what} works along the last axis (dim=None or {rank - 1}, as Triton's), got dim={dim!r}: "
                    "transpose the tile first (tl.trans)")
    n = x.shape[-1]
    if n & (n - 1):
        raise error(f"{what} of {_describe(x)}: the last extent, {n}, must be a power of two")
    rows = 1 if isinstance(x, Vector) else x.shape[0]
    return _as_tile(reshape(x, (rows, n))), rows, n


def _halves(x: Tile, j: int) -> tuple[Tile, Tile]:
    """The elements at ``i`` and ``i + j`` (``i``'s bit ``j`` clear) of a tile's rows, as two tiles of
    ``(rows * n / 2j, j)``: the rows of ``x`` read as ``(rows * n / j, j)``, even and odd."""
    rows, n = x.shape
    return _split(_as_tile(reshape(x, (rows * n // j, j))), 0, True)


def _together(low: Tile, high: Tile, rows: int, n: int) -> Tile:
    """:func:`_halves`'s inverse: the (rows, n) tile with ``low`` at ``i`` and ``high`` at ``i + j``."""
    return reshape(_joined(low, high, 0, True), (rows, n))


def _back(x: Tile, like: Tile | Vector | Expanded) -> Any:
    """The result in ``like``'s shape (a vector keeps its orientation)."""
    if isinstance(like, Expanded):
        return x
    return reshape(x, like.shape, orientation=like.orientation if isinstance(like, Vector) else None)


def flip(x: Any, dim: Any = None) -> Tile | Vector:
    """Triton's ``tl.flip``: ``x`` reversed along ``dim`` (the last axis by default; each row of a tile on
    its own), of a power-of-two extent. A tile's first axis is flipped as its transpose's last."""
    if isinstance(x, Expanded):
        x = x.tile()
    if isinstance(x, Tile) and not isinstance(dim, bool) and dim in (0, -2):
        return flip(x.T).T
    tile, rows, n = _last_axis(x, "tl.flip", dim)
    j = n // 2
    while j >= 1:
        low, high = _halves(tile, j)
        tile = _together(high, low, rows, n)
        j //= 2
    return _back(tile, x)


_INFINITY_BITS = {"float64": (64, 0x7FF0000000000000), "float32": (32, 0x7F800000), "float16": (16, 0x7C00),
                  "bfloat16": (16, 0x7F80), "float8_e5m2": (8, 0x7C), "float8_e4m3fn": (8, 0x7E)}
"""Each float's width and largest magnitude that is not a NaN, as bits (e4m3fn has no infinity: its
largest finite value)."""


def _as_keys(x: Tile) -> tuple[Tile, Any]:
    """Floats as integer keys in the same order, and the function that gives them back: a float's bits with
    its magnitude bits flipped where it is negative compare as signed integers as the floats do (-0.0 just
    below +0.0), and a NaN is the largest key (numpy's and torch's order: last, first when descending),
    read back as the NaN of all ones. Integers are their own keys. A network of integer compares keeps
    every value and orders NaN too (float compares with a NaN are all false)."""
    dtype = x.dtype
    if not (dtype.is_float or dtype.is_fp8):
        return x, lambda keys: keys
    width, infinity = _INFINITY_BITS[dtype.name]
    kind = {8: int8, 16: int16, 32: int32, 64: int64}[width]
    magnitude = (1 << (width - 1)) - 1

    def flipped(bits: Tile) -> Tile:  # its own inverse: the sign bit stays
        return bits ^ ((bits >> (width - 1)) & magnitude)

    bits = x.to(kind, bitcast=True)
    keys = where((bits & magnitude) > infinity, magnitude, flipped(bits))
    return keys, lambda keys: flipped(keys).to(dtype, bitcast=True)


def _order(descending: Any, what: str) -> bool:
    if not isinstance(descending, bool) and descending not in (0, 1):
        raise error(f"{what}'s descending is a Python bool (a tl.constexpr), got {descending!r}")
    return bool(descending)


def _merge(tile: Tile, rows: int, n: int, size: int, descending: bool) -> Tile:
    """One merge of a bitonic network on rows of ``n``: for each distance j = size/2 .. 1 the elements at i
    and i + j (i's bit j clear) ordered, ascending where i's bit ``size`` is clear (everywhere when
    ``size`` is ``n``; each direction the other way round with ``descending``), by compares and selects."""
    j = size // 2
    while j >= 1:
        low, high = _halves(tile, j)
        shape = low.shape
        # each pair's first index along the row: group g of 2j, offset o < j
        first = (ops.iota(shape, 0) * (2 * j) + ops.iota(shape, 1)) % n
        ascending = (first & size) == 0  # everywhere in the last merge (size = n)
        if descending:
            ascending = ~ascending
        swap = where(ascending, low > high, low < high)
        tile = _together(where(swap, high, low), where(swap, low, high), rows, n)
        j //= 2
    return tile


def sort(x: Any, dim: Any = None, descending: bool = False) -> Tile | Vector:
    """Triton's ``tl.sort``: ``x`` sorted along its last axis (each row of a tile on its own), ascending or
    ``descending``. A bitonic network of compares and selects (see the module docstring)."""
    descending = _order(descending, "tl.sort")
    tile, rows, n = _last_axis(x, "tl.sort", dim)
    tile, restore = _as_keys(tile)
    size = 2
    while size <= n:
        tile = _merge(tile, rows, n, size, descending)
        size *= 2
    return _back(restore(tile), x)


def bitonic_merge(x: Any, dim: Any = None, descending: bool = False) -> Tile | Vector:
    """Triton's ``tl.bitonic_merge``: the last merge of a bitonic sort, which sorts each row along the last
    axis where it is bitonic (rises then falls, or falls then rises: two sorted halves, one reversed)."""
    descending = _order(descending, "tl.bitonic_merge")
    tile, rows, n = _last_axis(x, "tl.bitonic_merge", dim)
    keys, restore = _as_keys(tile)
    return _back(restore(_merge(keys, rows, n, n, descending)), x)


def topk(x: Any, k: Any, dim: Any = None, descending: bool = True) -> Tile | Vector:
    """Triton's ``tl.topk``: the ``k`` largest elements of each row along the last axis, largest first (with
    ``descending=False`` the ``k`` smallest, smallest first); ``k`` a power of two up to the extent. A
    bitonic top-k: rows sorted in runs of ``k`` (alternating ascending and descending), then, while the
    rows are longer than ``k``, each pair of neighbouring runs kept as their elementwise larger (smaller)
    elements, a bitonic run of ``k`` that holds the pair's top ``k``, which one merge sorts again."""
    descending = _order(descending, "tl.topk")
    tile, rows, n = _last_axis(x, "tl.topk", dim)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1 or k & (k - 1) or k > n:
        raise error(f"tl.topk's k is a power of two (a tl.constexpr) no larger than the extent, {n}, got {k!r}")
    tile, restore = _as_keys(tile)
    size = 2
    while size <= k:
        tile = _merge(tile, rows, n, size, descending)
        size *= 2
    while n > k:
        low, high = _halves(tile, k)  # runs 2b and 2b + 1 of each row, element by element
        keep = where(high > low, high, low) if descending else where(high < low, high, low)
        n //= 2
        tile = _merge(reshape(keep, (rows, n)), rows, n, k, descending)
    tile = restore(tile)
    if isinstance(x, Expanded) or isinstance(x, Tile):
        return tile
    return reshape(tile, (k,), orientation=x.orientation)


for _cls in (Tile, Vector):  # Triton's tensor methods: x.sort(), x.flip(), x.topk(k)
    _cls.sort = lambda self, dim=None, descending=False: sort(self, dim, descending)
    _cls.flip = lambda self, dim=None: flip(self, dim)
    _cls.topk = lambda self, k, dim=None, descending=True: topk(self, k, dim, descending)


__all__ = ["bitonic_merge", "flip", "sort", "topk"]
