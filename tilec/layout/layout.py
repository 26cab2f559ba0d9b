"""The ``Layout`` value: a function from coordinates to offsets, ``shape:stride``.

Layouts are immutable and hashable so that IR attributes can hold them and
caches can key on them. ``str`` prints CuTe's notation, which ``parse`` reads
back exactly.
"""

from __future__ import annotations

from collections.abc import Iterator

from tilec.layout.int_tuple import (
    IntTuple,
    congruent,
    crd2idx,
    depth as tuple_depth,
    fill_none,
    flatten,
    has_none,
    is_int,
    is_tuple,
    prefix_product,
    product,
    slice_modes,
    to_text,
)


def _as_int_tuple(x: object, what: str) -> IntTuple:
    """Normalise lists to tuples and reject anything that is not an IntTuple."""
    if isinstance(x, (list, tuple)):
        return tuple(_as_int_tuple(m, what) for m in x)
    if is_int(x):
        return x
    raise ValueError(f"{what} must be an int or a nested tuple of ints, got {x!r}")


class Layout:
    """A CuTe layout: a hierarchical ``shape`` and a congruent ``stride``.

    ``Layout(shape)`` gets compact column-major strides. Calling a layout with a
    linear index or a (possibly partial) coordinate gives the offset; a
    coordinate holding ``None`` (CuTe's ``_``) slices out the sub-layout.
    """

    __slots__ = ("shape", "stride", "_hash", "_values", "_mode_values")

    shape: IntTuple
    stride: IntTuple

    def __init__(self, shape: IntTuple, stride: IntTuple | None = None):
        shape = _as_int_tuple(shape, "layout shape")
        stride = prefix_product(shape) if stride is None else _as_int_tuple(stride, "layout stride")
        text = f"{to_text(shape)}:{to_text(stride)}"
        if not congruent(shape, stride):
            raise ValueError(f"layout {text}: shape and stride have different ranks or nesting")
        if any(s <= 0 for s in flatten(shape)):
            raise ValueError(f"layout {text}: every extent of the shape must be positive")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "_hash", hash((shape, stride)))
        object.__setattr__(self, "_values", None)
        object.__setattr__(self, "_mode_values", None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Layout is immutable")

    # -- the function ---------------------------------------------------------
    def __call__(self, *coord: object) -> int | "Layout":
        crd = coord[0] if len(coord) == 1 else coord
        # Fast paths (same values as crd2idx): an int index in the domain, or one int
        # per top-level mode, each in its mode's domain, read from tables of the
        # layout's values built once (compilers evaluate the same layout many times).
        kind = type(crd)
        if kind is int:
            values = self._values
            if values is None:
                values = self._table()
            if 0 <= crd < len(values):
                return values[crd]
        elif kind is tuple:
            modes = self._mode_values
            if modes is None:
                modes = self._mode_tables()
            if modes and len(crd) == len(modes):
                total = 0
                for c, values in zip(crd, modes):
                    if type(c) is not int or not 0 <= c < len(values):
                        break
                    total += values[c]
                else:
                    return total
        if has_none(crd):
            return self.slice(crd)
        return crd2idx(crd, self.shape, self.stride)

    def _table(self) -> list[int] | tuple[()]:
        """Every value in colexicographic order (empty if the domain is too large to tabulate)."""
        values = _tabulate(self.shape, self.stride)
        object.__setattr__(self, "_values", values)
        return values

    def _mode_tables(self) -> tuple[list[int] | tuple[()], ...]:
        """Each top-level mode's values (none for a rank-1 layout, whose ints use :meth:`_table`)."""
        if is_tuple(self.shape):
            tables = tuple(_tabulate(s, d) for s, d in zip(self.shape, self.stride))
        else:
            tables = ()
        object.__setattr__(self, "_mode_values", tables)
        return tables

    def values(self) -> list[int]:
        """``[self(i) for i in range(self.size())]``, computed once and shared: do not modify it."""
        values = self._values
        if values is None:
            values = self._table()
        if len(values) != self.size():  # past the table limit: the caller asks for all of them anyway
            if self.size() > MAX_ENUMERATED:
                raise ValueError(f"layout {self} has {self.size()} elements: more than {MAX_ENUMERATED} cannot be "
                                 "enumerated")
            values = _tabulate(self.shape, self.stride, limit=None)
            object.__setattr__(self, "_values", values)
        return values

    def slice(self, crd: object) -> "Layout":
        """The sub-layout over the modes where ``crd`` is ``None``."""
        return self.slice_and_offset(crd)[0]

    def slice_and_offset(self, crd: object) -> tuple["Layout", int]:
        """Split ``crd`` into the sub-layout it leaves free and the offset it fixes."""
        if not is_tuple(crd) and crd is not None and is_tuple(self.shape):
            raise ValueError(f"slice of {self}: an int coordinate {crd} fixes every mode")
        offset = crd2idx(fill_none(crd), self.shape, self.stride)
        sub = Layout(slice_modes(crd, self.shape), slice_modes(crd, self.stride))
        return sub, offset

    # -- modes ----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.shape) if is_tuple(self.shape) else 1

    def __getitem__(self, i: int) -> "Layout":
        if is_tuple(self.shape):
            return Layout(self.shape[i], self.stride[i])
        if i not in (0, -1):
            raise IndexError(f"layout {self} has a single mode; mode {i} does not exist")
        return self

    def __iter__(self) -> Iterator["Layout"]:
        return (self[i] for i in range(len(self)))

    def modes(self) -> tuple["Layout", ...]:
        return tuple(self)

    # -- measures -------------------------------------------------------------
    def size(self) -> int:
        return product(self.shape)

    def cosize(self) -> int:
        """One past the offset of the last coordinate: the codomain size for non-negative strides."""
        return crd2idx(self.size() - 1, self.shape, self.stride) + 1

    def rank(self) -> int:
        return len(self)

    def depth(self) -> int:
        return tuple_depth(self.shape)

    # -- value semantics ------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and (self.shape, self.stride) == (other.shape, other.stride)

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return f"{to_text(self.shape)}:{to_text(self.stride)}"

    def __repr__(self) -> str:
        return f"Layout.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> "Layout":
        from tilec.layout.parse import parse_layout  # cycle: the parser builds Layouts

        return parse_layout(text)


MAX_ENUMERATED = 1 << 24
"""The most elements :meth:`Layout.values` lists (a tile of registers or shared memory is far smaller)."""

_TABLE_LIMIT = 1 << 14
"""Layouts (and modes) with more elements than this are evaluated without a table."""


def _tabulate(shape: IntTuple, stride: IntTuple, limit: int | None = _TABLE_LIMIT) -> list[int] | tuple[()]:
    """``[crd2idx(i, shape, stride) for i in range(size)]``, or ``()`` past ``limit`` elements."""
    leaves = list(zip(flatten(shape), flatten(stride)))
    size = 1
    for s, _ in leaves:
        size *= s
    if limit is not None and size > limit:
        return ()
    values = [0]
    for s, d in leaves:
        if s == 1:
            continue
        # colexicographic: the modes seen so far vary fastest
        values = [v + c * d for c in range(s) for v in values] if d else values * s
    return values


def make_layout(*layouts: Layout | IntTuple) -> Layout:
    """Concatenate layouts as the modes of a new layout (ints are compact layouts)."""
    if len(layouts) == 1 and isinstance(layouts[0], (list, tuple)) and not is_int(layouts[0]):
        layouts = tuple(layouts[0])
    modes = [m if isinstance(m, Layout) else Layout(m) for m in layouts]
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def as_layout(x: Layout | IntTuple) -> Layout:
    return x if isinstance(x, Layout) else Layout(x)


def append_modes(layout: Layout, n: int) -> Layout:
    """``layout`` as a rank-``n`` layout, padded with ``1:0`` modes."""
    modes = list(layout) if is_tuple(layout.shape) else [layout]
    if len(modes) > n:
        raise ValueError(f"layout {layout} has rank {len(modes)}, more than {n}")
    modes += [Layout(1, 0)] * (n - len(modes))
    return make_layout(*modes)


def size(x: object) -> int:
    """Domain size of a layout-like value or product of an IntTuple."""
    if hasattr(x, "size"):
        return x.size()
    return product(x)


def cosize(x: object) -> int:
    """The codomain size of a layout-like value (one past its largest offset)."""
    if not hasattr(x, "cosize"):
        raise TypeError(f"cosize: expected a layout, got {type(x).__name__} {x!r}")
    return x.cosize()


def rank(x: object) -> int:
    if hasattr(x, "rank"):
        return x.rank()
    return len(x) if is_tuple(x) else 1


def depth(x: object) -> int:
    if hasattr(x, "depth"):
        return x.depth()
    return tuple_depth(x)


def shape(x: object) -> IntTuple:
    return x.shape


def stride(x: object) -> IntTuple:
    return x.stride
