"""The memories a tile program touches, modelled on numpy.

- :class:`GlobalView` (``!tile.gl``): a view over a caller's numpy array
  (1-D or 2-D, any strides); windows are addressed by the element coordinates
  of their origin; reads outside the array's shape give zero and writes there
  are dropped (ragged edges).
- :class:`SharedTile` (``!tile.st``): shared memory modelled physically, a flat
  buffer of ``cosize`` elements where element ``(i, j)`` lives at offset
  ``layout((i, j))``. The (layout, shape) → offsets table is computed once and
  cached, so a wrong swizzle in a pass shows up as wrong data.
- :func:`copy_owner_mask`: which elements of a tile the threads of one warp move
  in a tiled copy with CuTe thread and value layouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type
from xdsl.ir import Attribute

from tilec.dialects.tile.attributes import DYNAMIC
from tilec.dialects.tile.types import GlobalType, SharedType, element_bits
from tilec.interp.dtypes import FLOAT8_FORMATS, nan_fill, numpy_dtype, round_bf16, round_f8, stored_f8
from tilec.interp.errors import OpError
from tilec.layout import ComposedLayout, Layout, Swizzle

# -- global memory --------------------------------------------------------------


def _window(origin: tuple[int, ...], dims: tuple[int, ...], shape: tuple[int, ...]):
    """Slices (into the tile, into the array) of the part of a window inside the array, or None."""
    tile_sl, arr_sl = [], []
    for o, d, n in zip(origin, dims, shape):
        lo, hi = max(0, -o), min(d, n - o)
        if hi <= lo:
            return None
        tile_sl.append(slice(lo, hi))
        arr_sl.append(slice(o + lo, o + hi))
    return tuple(tile_sl), tuple(arr_sl)


@dataclass(eq=False)
class GlobalView:
    """A ``!tile.gl`` value: ``array`` is the caller's memory, written in place."""

    array: np.ndarray
    element_type: Attribute

    @classmethod
    def bind(cls, value: Any, gl_type: GlobalType, what: str) -> GlobalView:
        """Check a caller's argument against ``gl_type`` (rank, static extents, dtype)."""
        if isinstance(value, GlobalView):
            value = value.array
        if not isinstance(value, np.ndarray):
            raise OpError(f"{what} is {gl_type}: expected a numpy array, got {type(value).__name__}")
        dtype = numpy_dtype(gl_type.element_type)
        if value.dtype != dtype:
            narrow = isinstance(gl_type.element_type, BFloat16Type) or gl_type.element_type.name in FLOAT8_FORMATS
            note = f" ({gl_type.element_type} is held in float32 arrays)" if narrow else ""
            raise OpError(f"{what} is {gl_type}: expected a numpy array of {dtype}{note}, got {value.dtype}")
        if value.ndim != gl_type.rank:
            raise OpError(f"{what} is {gl_type}: expected a {gl_type.rank}-D array, got shape {value.shape}")
        for axis, (d, n) in enumerate(zip(gl_type.dims, value.shape)):
            if d != DYNAMIC and d != n:
                raise OpError(f"{what} is {gl_type}: extent {axis} must be {d}, got shape {value.shape}")
        return cls(value, gl_type.element_type)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    def _fill(self, other: Any) -> Any:
        """``other`` as the elements outside the array read: converted to an FP8 type as the compiled kernel
        converts a number (saturating: :func:`round_f8`); the array's own bytes are read as they are."""
        if self.element_type.name in FLOAT8_FORMATS:
            return round_f8(np.asarray(other, dtype=np.float32), self.element_type.name)
        return other

    def read(self, origin, dims, other: float = 0.0) -> np.ndarray:
        """The ``dims`` window at ``origin``; ``other`` outside the array."""
        origin, dims = tuple(int(o) for o in origin), tuple(dims)
        out = np.full(dims, self._fill(other), dtype=self.array.dtype)
        w = _window(origin, dims, self.shape)
        if w is not None:
            out[w[0]] = self.array[w[1]]
        if isinstance(self.element_type, BFloat16Type):
            out = round_bf16(out)
        elif self.element_type.name in FLOAT8_FORMATS:
            out = stored_f8(out, self.element_type.name)
        return out

    def write(self, origin, values: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Store ``values`` at ``origin`` (only where ``mask``); nothing outside the array."""
        origin = tuple(int(o) for o in origin)
        w = _window(origin, values.shape, self.shape)
        if w is None:
            return
        if not self.array.flags.writeable:
            raise OpError("the global array is read-only")
        src = values[w[0]].astype(self.array.dtype, copy=False)
        if mask is None:
            self.array[w[1]] = src
        else:
            dst = self.array[w[1]]
            m = mask[w[0]]
            dst[m] = src[m]  # dst is a view: this writes the caller's array

    def inside(self, indices: list[np.ndarray], linear: bool) -> np.ndarray:
        """Which elements of ``indices`` (index arrays, one per dimension, or one of offsets in memory
        with ``linear``) fall inside the view."""
        extents = (self.span().shape[0],) if linear else self.shape
        inside = np.ones(np.shape(indices[0]), dtype=bool)
        for i, n in zip(indices, extents):
            c = np.asarray(i, dtype=np.int64)
            inside &= (c >= 0) & (c < n)
        return inside

    def span(self) -> np.ndarray:
        """The elements the view spans in memory, from its first one, as a 1-D array over the same
        memory (what a ``linear`` offset counts)."""
        a = self.array
        if any(s < 0 for s in a.strides):
            raise OpError(f"linear offsets into a view of negative strides {a.strides} are not modelled")
        size = 0 if 0 in a.shape else 1 + sum((n - 1) * s for n, s in zip(a.shape, a.strides)) // a.itemsize
        return np.lib.stride_tricks.as_strided(a, shape=(size,), strides=(a.itemsize,))

    def gather(self, indices: list[np.ndarray], linear: bool = False, mask: np.ndarray | None = None,
               other: Any = 0.0) -> np.ndarray:
        """The elements at ``indices``; ``other`` (a number, or an array of their shape) where they fall
        outside the view or ``mask`` is false."""
        inside = self.inside(indices, linear)
        keep = inside if mask is None else inside & mask
        source = self.span() if linear else self.array
        out = np.array(np.broadcast_to(self._fill(other), keep.shape), dtype=self.array.dtype)
        out[keep] = source[tuple(np.asarray(i, dtype=np.int64)[keep] for i in indices)]
        if isinstance(self.element_type, BFloat16Type):
            out = round_bf16(out)
        elif self.element_type.name in FLOAT8_FORMATS:
            out = stored_f8(out, self.element_type.name)
        return out

    def scatter(self, indices: list[np.ndarray], values: np.ndarray, mask: np.ndarray | None = None,
                linear: bool = False) -> None:
        """``values`` written at ``indices`` (where ``mask``); nothing outside the view."""
        inside = self.inside(indices, linear)
        keep = inside if mask is None else inside & mask
        if not keep.any():
            return
        if not self.array.flags.writeable:
            raise OpError("the global array is read-only")
        target = self.span() if linear else self.array  # a view: this writes the caller's array
        places = tuple(np.asarray(i, dtype=np.int64)[keep] for i in indices)
        target[places] = values[keep].astype(self.array.dtype, copy=False)

    def __repr__(self) -> str:
        return f"GlobalView({self.element_type}, shape={self.shape}, strides={self.array.strides})"


# -- shared memory ---------------------------------------------------------------


def _apply_inner(inner, offsets: np.ndarray) -> np.ndarray:
    if isinstance(inner, Swizzle):
        moved = offsets & inner.yyy_mask
        moved = moved >> inner.shift if inner.shift >= 0 else moved << -inner.shift
        return offsets ^ moved
    uniq, inv = np.unique(offsets, return_inverse=True)
    return np.array([inner(int(u)) for u in uniq], dtype=np.int64)[inv].reshape(offsets.shape)


@lru_cache(maxsize=512)
def shared_offsets(layout: Layout | ComposedLayout, dims: tuple[int, ...]) -> np.ndarray:
    """``offsets[i, j] == layout((i, j))`` for every coordinate of a ``dims`` tile (read-only, cached).

    A layout is linear in its modes, so each mode is evaluated along its own
    axis and the results summed; a composed layout's swizzle (or inner layout)
    is then applied to the whole table at once.
    """
    base = layout.layout if isinstance(layout, ComposedLayout) else layout
    if len(dims) == 1:
        modes = [base]
    else:
        modes = [base[k] for k in range(len(dims))]
    total = np.zeros(dims, dtype=np.int64)
    for axis, (mode, n) in enumerate(zip(modes, dims)):
        along = np.array([mode(i) for i in range(n)], dtype=np.int64)
        shape = [1] * len(dims)
        shape[axis] = n
        total = total + along.reshape(shape)
    if isinstance(layout, ComposedLayout):
        total = _apply_inner(layout.inner, total + layout.offset)
    total.setflags(write=False)
    return total


@dataclass(eq=False)
class SharedTile:
    """A ``!tile.st`` value: ``buffer`` is the flat shared memory, ``offsets`` the layout's table."""

    tile_type: SharedType
    buffer: np.ndarray
    offsets: np.ndarray

    @classmethod
    def allocate(cls, tile_type: SharedType) -> SharedTile:
        """Fresh shared memory of ``cosize`` elements, all NaN (unwritten memory shows up)."""
        offsets = shared_offsets(tile_type.layout, tile_type.dims)
        if offsets.size and int(offsets.min()) < 0:
            bad = np.unravel_index(int(np.argmin(offsets)), offsets.shape)
            raise OpError(
                f"layout {tile_type.layout} maps coordinate {tuple(int(b) for b in bad)} to offset "
                f"{int(offsets.min())}, outside the shared buffer"
            )
        cosize = max(int(offsets.max()) + 1 if offsets.size else 0, 0)
        return cls(tile_type, nan_fill(cosize, tile_type.element_type), offsets)

    @classmethod
    def from_logical(cls, values: np.ndarray, tile_type: SharedType) -> SharedTile:
        tile = cls.allocate(tile_type)
        tile.write(np.asarray(values))
        return tile

    @property
    def dims(self) -> tuple[int, ...]:
        return self.tile_type.dims

    @property
    def size_bytes(self) -> int:
        """Bytes of shared memory the tile occupies on the device (``cosize`` elements)."""
        return self.buffer.size * element_bits(self.tile_type.element_type) // 8

    def _window(self, origin: tuple[int, ...] | None, dims: tuple[int, ...] | None) -> np.ndarray:
        """The offsets of a window of the tile (the whole tile without an origin)."""
        if origin is None:
            return self.offsets
        dims = tuple(dims)
        if any(o < 0 or o + d > t for o, d, t in zip(origin, dims, self.dims)):
            raise OpError(f"window {dims} at {origin} falls outside the shared tile of {self.dims}")
        return self.offsets[tuple(slice(o, o + d) for o, d in zip(origin, dims))]

    def read(self, origin: tuple[int, ...] | None = None, dims: tuple[int, ...] | None = None) -> np.ndarray:
        """The logical tile (or a window of it): element ``(i, j)`` read from ``buffer[layout((i, j))]``."""
        return self.buffer[self._window(origin, dims)]

    def write(self, values: np.ndarray, mask: np.ndarray | None = None, origin: tuple[int, ...] | None = None) -> None:
        values = np.asarray(values).astype(self.buffer.dtype, copy=False)
        offsets = self._window(origin, values.shape if origin is not None else None)
        if values.shape != offsets.shape:
            raise OpError(f"writes a {values.shape} array into a shared tile of {self.dims}")
        if mask is None:
            self.buffer[offsets] = values
        else:
            self.buffer[offsets[mask]] = values[mask]

    def __repr__(self) -> str:
        return f"SharedTile({self.tile_type})"


# -- tiled copies ---------------------------------------------------------------


@lru_cache(maxsize=256)
def copy_thread_map(thr: Layout, val: Layout, dims: tuple[int, ...]) -> np.ndarray:
    """The thread (index) that moves each element of a ``dims`` tile in a tiled copy.

    CuTe's ``make_tiled_copy(atom, thr, val)``: ``thr`` maps a thread coordinate
    ``(tm, tn)`` to a thread index, ``val`` is the block of values one thread
    moves; thread ``thr((tm, tn))`` moves the elements
    ``(tm*VM + vm, tn*VN + vn)``. The ``(TM*VM) x (TN*VN)`` copy tile repeats
    over the whole tile.
    """
    rank = len(dims)
    thr_modes = [thr] if rank == 1 else [thr[k] for k in range(rank)]
    val_modes = [val] if rank == 1 else [val[k] for k in range(rank)]
    tshape = tuple(m.size() for m in thr_modes)
    vshape = tuple(m.size() for m in val_modes)
    thread_of = np.zeros(tshape, dtype=np.int64)
    for tc in np.ndindex(*tshape):
        thread_of[tc] = thr(tc[0]) if rank == 1 else thr(tuple(int(c) for c in tc))
    # expand each thread coordinate over its value block, then repeat over the tile
    block = thread_of
    for axis, v in enumerate(vshape):
        block = np.repeat(block, v, axis=axis)
    reps = tuple(d // b for d, b in zip(dims, block.shape))
    out = np.tile(block, reps)
    out.setflags(write=False)
    return out


def copy_owner_mask(thr: Layout, val: Layout, dims: tuple[int, ...], warp: int, threads: int) -> np.ndarray:
    """The elements the 32 threads of ``warp`` move (threads past ``threads`` do not exist: error)."""
    tmap = copy_thread_map(thr, val, tuple(dims))
    top = int(tmap.max())
    if top >= threads:
        raise OpError(f"thread layout {thr} uses thread {top}, but the block has {threads} threads")
    return (tmap // 32) == warp
