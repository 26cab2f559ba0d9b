"""CuTe-style tensors: an engine (storage), a layout (coordinates → offsets) and an offset.

A layout says where an element lives; a tensor adds *what* it lives in, so that
tiling and partitioning can be checked on real values: ``local_tile`` and
``local_partition`` (and the tiled copies and MMAs of ``tilec.layout.tiled``)
only ever change the layout and the offset, never the engine.

The engine is anything indexable by an int: a 1-D numpy array or list (the
tensor reads ``engine[offset + layout(coord)]``), an object that acts as a
pointer into some storage, or ``None``: then the element *is* the index
``offset + layout(coord)``. ``make_identity_tensor(shape)`` holds coordinates:
partitioning it tells which element of the original tile each slot refers to.
No numpy is imported unless a numpy-backed fragment is made.
"""

from __future__ import annotations

from collections.abc import Sequence

from tilec.layout.algebra import composition
from tilec.layout.int_tuple import IntTuple, flatten, has_none, idx2crd, is_int, is_tuple, product
from tilec.layout.layout import Layout
from tilec.layout.tiling import local_partition as _layout_local_partition
from tilec.layout.tiling import local_tile as _layout_local_tile

__all__ = [
    "Coordinates",
    "Tensor",
    "copy",
    "local_partition",
    "local_tile",
    "make_fragment_like",
    "make_identity_tensor",
    "make_tensor",
]


class Coordinates:
    """An engine whose element ``i`` is the natural coordinate of index ``i`` in ``shape``.

    It backs the identity tensor: a layout that reaches index ``i`` reads the
    coordinate ``idx2crd(i, shape)``, so a partitioned identity tensor lists
    the tile coordinates a thread touches.
    """

    __slots__ = ("shape",)

    def __init__(self, shape: IntTuple):
        object.__setattr__(self, "shape", shape)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Coordinates is immutable")

    def __len__(self) -> int:
        return product(self.shape)

    def __getitem__(self, index: int) -> IntTuple:
        if not is_int(index) or not 0 <= index < len(self):
            raise IndexError(f"coordinate index {index!r} is outside 0..{len(self) - 1} of shape {self.shape}")
        return idx2crd(index, self.shape)

    def __setitem__(self, index: int, value: object) -> None:
        raise TypeError("an identity tensor's coordinates are read-only; copy into a fragment instead")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Coordinates) and other.shape == self.shape

    def __hash__(self) -> int:
        return hash(("Coordinates", self.shape))

    def __repr__(self) -> str:
        return f"Coordinates({self.shape!r})"


def _normalise_key(key: object) -> object:
    """``:`` (``slice(None)``) becomes ``None`` (CuTe's ``_``); lists become tuples."""
    if isinstance(key, slice):
        if key != slice(None):
            raise ValueError(f"tensor index: only a whole-mode slice ':' is supported, got {key!r}")
        return None
    if isinstance(key, (tuple, list)):
        return tuple(_normalise_key(k) for k in key)
    if key is None or is_int(key):
        return key
    if hasattr(key, "__index__") and not isinstance(key, bool):  # numpy integers
        return key.__index__()
    raise TypeError(f"tensor index: expected ints, None or ':' (nested in tuples), got {key!r}")


def _in_bounds(crd: IntTuple, shape: IntTuple) -> bool:
    """Whether every part of ``crd`` lies in its mode of ``shape`` (an int may index a whole tuple mode)."""
    if is_tuple(crd):
        return is_tuple(shape) and len(crd) == len(shape) and all(_in_bounds(c, s) for c, s in zip(crd, shape))
    return 0 <= crd < product(shape)


class Tensor:
    """``engine[offset + layout(coord)]`` for every coordinate of ``layout``.

    ``t[i, j]`` reads an element, ``t[i, j] = x`` writes one, and a coordinate
    holding ``None`` or ``:`` gives the sub-tensor over those modes
    (``t[:, 2]`` is column 2), sharing the engine.
    """

    __slots__ = ("engine", "layout", "offset")

    engine: object
    layout: Layout
    offset: int

    def __init__(self, engine: object, layout: Layout, offset: int = 0):
        if not isinstance(layout, Layout):
            raise TypeError(f"Tensor: layout must be a Layout, got {layout!r}")
        if not is_int(offset):
            raise TypeError(f"Tensor: offset must be an int, got {offset!r}")
        object.__setattr__(self, "engine", engine)
        object.__setattr__(self, "layout", layout)
        object.__setattr__(self, "offset", offset)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Tensor is immutable (its elements are not: assign through t[coord] = x)")

    # -- the layout's measures ------------------------------------------------
    @property
    def shape(self) -> IntTuple:
        return self.layout.shape

    @property
    def stride(self) -> IntTuple:
        return self.layout.stride

    def size(self) -> int:
        return self.layout.size()

    def rank(self) -> int:
        return self.layout.rank()

    def __len__(self) -> int:
        """The number of elements (CuTe's ``size``), so ``len(t) == t.size()``."""
        return self.layout.size()

    # -- elements and sub-tensors ----------------------------------------------
    def index_of(self, coord: IntTuple) -> int:
        """The engine index of the element at ``coord`` (an int is a colexicographic index)."""
        crd = _normalise_key(coord)
        if has_none(crd):
            raise ValueError(f"tensor {self}: index_of needs a full coordinate, got {coord!r}")
        if is_tuple(crd) and len(crd) == 1 and not is_tuple(self.layout.shape):
            crd = crd[0]
        if not _in_bounds(crd, self.layout.shape):
            raise IndexError(f"tensor {self}: coordinate {coord!r} is outside the shape {self.layout.shape}")
        return self.offset + self.layout(crd)

    def __getitem__(self, key: object) -> object:
        crd = _normalise_key(key)
        if has_none(crd):
            return self._slice(crd)
        index = self.index_of(crd)
        return index if self.engine is None else self.engine[index]

    def __setitem__(self, key: object, value: object) -> None:
        crd = _normalise_key(key)
        if has_none(crd):
            raise TypeError(f"tensor {self}: assign element by element; slice {key!r} gives a sub-tensor")
        if self.engine is None:
            raise TypeError(f"tensor {self}: has no engine to write to (its elements are its indices)")
        self.engine[self.index_of(crd)] = value

    def _slice(self, crd: object) -> "Tensor":
        if crd is None:
            return self
        if len(crd) != self.layout.rank() and not (self.layout.rank() == 1 and len(crd) == 1):
            raise ValueError(f"tensor {self}: slice {crd!r} has {len(crd)} modes, the tensor {self.layout.rank()}")
        layout = self.layout
        if self.layout.rank() == 1 and not is_tuple(self.layout.shape):
            layout = Layout((layout.shape,), (layout.stride,))
        sub, offset = layout.slice_and_offset(crd)
        return Tensor(self.engine, sub, self.offset + offset)

    def values(self) -> list:
        """Every element in colexicographic order of the coordinates (mode 0 fastest)."""
        return [self[i] for i in range(self.size())]

    def fill(self, value: object) -> "Tensor":
        """Set every element to ``value`` (CuTe's ``fill``; returns the tensor)."""
        for i in range(self.size()):
            self[i] = value
        return self

    # -- new views ------------------------------------------------------------
    def with_layout(self, layout: Layout, offset: int | None = None) -> "Tensor":
        """The same engine under another layout (and offset, default unchanged)."""
        return Tensor(self.engine, layout, self.offset if offset is None else offset)

    def compose(self, tiler: object) -> "Tensor":
        """The tensor whose layout is ``layout o tiler`` (a reshaping or reordering view)."""
        return self.with_layout(composition(self.layout, tiler))

    def __str__(self) -> str:
        where = "" if self.offset == 0 else f" + {self.offset}"
        return f"tensor({_engine_name(self.engine)}{where} o {self.layout})"

    def __repr__(self) -> str:
        return f"Tensor({_engine_name(self.engine)}, {self.layout!r}, offset={self.offset})"


def _engine_name(engine: object) -> str:
    if engine is None:
        return "index"
    if isinstance(engine, Coordinates):
        return f"coord{engine.shape}"
    return type(engine).__name__


# -- making tensors -------------------------------------------------------------------


def _is_array(x: object) -> bool:
    """Duck-typed numpy array (no numpy import needed to recognise one)."""
    return all(hasattr(x, a) for a in ("ndim", "strides", "itemsize", "ravel", "flags"))


def _array_layout(array) -> Layout:
    """An n-D array's shape and element strides as a layout (numpy's own strides, in elements)."""
    if array.ndim == 0:
        raise ValueError("make_tensor: engine is a 0-d array; expected an array with at least one dimension")
    strides = tuple(s // array.itemsize for s in array.strides)
    shape = tuple(array.shape)
    if len(shape) == 1:
        return Layout(shape[0], 1)
    return Layout(shape, strides)


def _flat_engine(array):
    """A 1-D view of a contiguous array whose index ``i`` is the element at byte ``i * itemsize``."""
    if array.ndim == 1:
        return array
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        raise ValueError(
            "make_tensor: engine is a non-contiguous array; expected a contiguous one (np.ascontiguousarray)"
        )
    if any(s < 0 for s in array.strides):
        raise ValueError("make_tensor: engine has negative strides; expected a contiguous array")
    return array.ravel(order="K")


def _as_layout(layout: object, what: str) -> Layout:
    if isinstance(layout, Layout):
        return layout
    if is_int(layout) or isinstance(layout, (tuple, list)):
        return Layout(layout)
    raise TypeError(f"{what}: layout must be a Layout or a shape (int or tuple of ints), got {layout!r}")


def _check_reach(engine: object, layout: Layout, offset: int, what: str) -> None:
    """Refuse a layout that reaches past the end of an engine that knows its length."""
    if engine is None or not hasattr(engine, "__len__"):
        return
    if any(d < 0 for d in flatten(layout.stride)):
        raise ValueError(f"{what}: layout {layout} has negative strides; expected non-negative ones")
    last = offset + layout.cosize() - 1
    if offset < 0 or last >= len(engine):
        raise ValueError(
            f"{what}: layout {layout} at offset {offset} reaches index {last}, "
            f"but the engine has {len(engine)} elements"
        )


def make_tensor(engine: object, layout: Layout | IntTuple | None = None, offset: int = 0) -> Tensor:
    """A tensor over ``engine``.

    ``layout`` may be a Layout, a shape (compact column-major, as CuTe) or
    ``None``: then an n-D numpy array keeps its own shape and strides (so
    ``t[i, j] == array[i, j]``) and a sequence is a rank-1 tensor over all of
    it. ``engine=None`` makes a tensor whose elements are their own indices.
    """
    what = "make_tensor"
    if _is_array(engine):
        natural = _array_layout(engine)
        engine = _flat_engine(engine)
        layout = natural if layout is None else _as_layout(layout, what)
    elif layout is None:
        if engine is None or not isinstance(engine, Sequence):
            raise TypeError(f"{what}: without a layout the engine must be an array or a sequence, got {engine!r}")
        layout = Layout(len(engine))
    else:
        layout = _as_layout(layout, what)
    _check_reach(engine, layout, offset, what)
    return Tensor(engine, layout, offset)


def make_identity_tensor(shape: IntTuple) -> Tensor:
    """The tensor whose element at every coordinate is that coordinate (CuTe's identity tensor).

    Partitioning it the way data is partitioned says which coordinates of the
    original tile each thread's slots refer to, e.g. for predication.
    """
    if not (is_int(shape) or isinstance(shape, (tuple, list))):
        raise TypeError(f"make_identity_tensor: shape must be an int or a tuple of ints, got {shape!r}")
    layout = Layout(shape)
    return Tensor(Coordinates(layout.shape), layout, 0)


def make_fragment_like(x: Tensor | Layout | IntTuple) -> Tensor:
    """A fresh register-like tensor of ``x``'s shape: compact column-major, filled with zeros.

    A numpy-backed tensor gets a numpy fragment of the same dtype; anything
    else (index or identity tensors, layouts, shapes) gets a Python list.
    """
    if isinstance(x, Tensor):
        shape, engine = x.shape, x.engine
    elif isinstance(x, Layout):
        shape, engine = x.shape, None
    elif is_int(x) or isinstance(x, (tuple, list)):
        shape, engine = Layout(x).shape, None
    else:
        raise TypeError(f"make_fragment_like: expected a Tensor, Layout or shape, got {x!r}")
    layout = Layout(shape)
    if _is_array(engine) and hasattr(engine, "dtype"):
        # lazy: numpy takes ~80 ms to import and only numpy-backed tensors need it here
        import numpy as np

        storage = np.zeros(layout.size(), dtype=engine.dtype)
    else:
        storage = [0] * layout.size()
    return Tensor(storage, layout, 0)


# -- tiles and partitions ---------------------------------------------------------------


def _require_tensor(x: object, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: tensor must be a Tensor (see make_tensor), got {x!r}")
    return x


def _tiler_sizes(tiler: object, what: str) -> tuple:
    """The extent of each mode of a tiler (``None`` keeps a mode whole)."""
    if isinstance(tiler, Layout):
        return tuple(m.size() for m in tiler) if is_tuple(tiler.shape) else (tiler.size(),)
    if is_int(tiler):
        return (tiler,)
    if isinstance(tiler, (tuple, list)):
        sizes = []
        for t in tiler:
            if t is None:
                sizes.append(None)
            elif isinstance(t, Layout):
                sizes.append(t.size())
            elif is_int(t) or isinstance(t, tuple):
                sizes.append(product(t))
            else:
                raise TypeError(f"{what}: tiler modes must be ints, Layouts or None, got {t!r}")
        return tuple(sizes)
    raise TypeError(f"{what}: tiler must be an int, a Layout or a tuple of those, got {tiler!r}")


def check_tiles_divide(layout: Layout, tiler: object, what: str) -> None:
    """Refuse tilers that do not divide the layout's modes (CuTe would need predication there)."""
    sizes = _tiler_sizes(tiler, what)
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    if len(sizes) > len(modes):
        raise ValueError(f"{what}: tiler {tiler!r} has {len(sizes)} modes, more than the tensor's {len(modes)}")
    for i, (n, mode) in enumerate(zip(sizes, modes)):
        if n is None:
            continue
        if n <= 0 or mode.size() % n:
            raise ValueError(
                f"{what}: mode {i} of the tensor has {mode.size()} elements, not a multiple of the tile's {n}"
            )


def local_tile(tensor: Tensor, tiler: object, coord: object, proj: Sequence[bool] | None = None) -> Tensor:
    """The tile of ``tensor`` at tile coordinate ``coord`` (``None`` keeps that mode's tiles).

    ``local_tile(A, (2, 2), (0, 1))`` is the 2x2 block in rows 0-1, columns 2-3.
    ``proj`` (CuTe's ``Step<_1, X, _1>``) keeps only the tiler and coordinate
    modes marked True, so one (M, N, K) tiler serves A, B and C. Given a bare
    Layout it is ``tilec.layout.tiling.local_tile``: ``(tile layout, offset)``.
    """
    if isinstance(tensor, Layout) and proj is None:
        return _layout_local_tile(tensor, tiler, coord)  # the layout-level form: (layout, offset)
    tensor = _require_tensor(tensor, "local_tile")
    if proj is not None:
        tiler, coord = _project(tiler, coord, proj)
    check_tiles_divide(tensor.layout, tiler, "local_tile")
    layout = tensor.layout
    if not is_tuple(layout.shape):
        layout = Layout((layout.shape,), (layout.stride,))
    sub, offset = _layout_local_tile(layout, tiler, coord)
    return Tensor(tensor.engine, sub, tensor.offset + offset)


def _project(tiler: object, coord: object, proj: Sequence[bool]) -> tuple:
    if not isinstance(tiler, tuple) or len(tiler) != len(proj):
        raise ValueError(f"local_tile: proj {tuple(proj)} needs a tuple tiler of {len(proj)} modes, got {tiler!r}")
    if not isinstance(coord, tuple) or len(coord) != len(proj):
        raise ValueError(f"local_tile: proj {tuple(proj)} needs a coordinate of {len(proj)} modes, got {coord!r}")
    keep = [i for i, p in enumerate(proj) if p]
    return tuple(tiler[i] for i in keep), tuple(coord[i] for i in keep)


def local_partition(tensor: Tensor, thr_layout: Layout | IntTuple, thread_index: int) -> Tensor:
    """What thread ``thread_index`` of ``thr_layout`` owns of ``tensor``.

    The tensor is cut into tiles of ``thr_layout``'s shape; in each tile the
    thread takes the element at its own coordinate (its strided share, as
    CuTe's ``local_partition``), so the result's shape is the number of tiles.
    """
    if isinstance(tensor, Layout) and isinstance(thr_layout, Layout):
        return _layout_local_partition(tensor, thr_layout, thread_index)  # the layout-level form: (layout, offset)
    tensor = _require_tensor(tensor, "local_partition")
    thr_layout = _as_layout(thr_layout, "local_partition")
    if not is_int(thread_index):
        raise TypeError(f"local_partition: thread_index must be an int, got {thread_index!r}")
    tile = tuple(m.size() for m in thr_layout) if is_tuple(thr_layout.shape) else (thr_layout.size(),)
    check_tiles_divide(tensor.layout, tile, "local_partition")
    layout = tensor.layout
    if not is_tuple(layout.shape):
        layout = Layout((layout.shape,), (layout.stride,))
    sub, offset = _layout_local_partition(layout, thr_layout, thread_index)
    return Tensor(tensor.engine, sub, tensor.offset + offset)


def copy(src: Tensor, dst: Tensor) -> Tensor:
    """``dst[i] = src[i]`` for every index ``i`` (CuTe's ``copy``): same number of elements needed."""
    src = _require_tensor(src, "copy (src)")
    dst = _require_tensor(dst, "copy (dst)")
    if src.size() != dst.size():
        raise ValueError(f"copy: src {src} has {src.size()} elements, dst {dst} has {dst.size()}; expected the same")
    for i in range(dst.size()):
        dst[i] = src[i]
    return dst
