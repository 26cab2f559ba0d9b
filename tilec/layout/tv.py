"""Thread–value layouts: which thread holds which element of a tile.

A ``TVLayout`` is a rank-2 layout ``(thread, value) -> offset`` whose offsets
index a tile colexicographically (column-major), exactly like CuTe's TV layouts
for MMA and copy atoms. The questions a compiler asks of it, "where does
thread t's value v live" and "who holds element (m, n)", are methods here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from tilec.layout.algebra import composition
from tilec.layout.int_tuple import IntTuple, compact_idx, flatten, idx2crd, product
from tilec.layout.layout import Layout


@dataclass(frozen=True)
class TVLayout:
    """``layout``: ``(thread, value) -> offset`` into a tile of shape ``tile``."""

    layout: Layout
    tile: tuple[int, ...]

    def __post_init__(self):
        if not isinstance(self.layout, Layout) or len(self.layout) != 2:
            raise ValueError(f"TV layout {self.layout}: must be a rank-2 layout (thread, value)")
        tile = tuple(self.tile) if isinstance(self.tile, (tuple, list)) else (self.tile,)
        object.__setattr__(self, "tile", tile)
        n = product(tile)
        bad = [o for o in self._offset_list() if not 0 <= o < n]
        if bad:
            raise ValueError(f"TV layout {self.layout}: offset {bad[0]} falls outside the tile {tile} of {n} elements")

    def _offset_list(self) -> list[int]:
        """Every offset, ``(t, v)`` at ``t + num_threads * v`` (the layout's own colexicographic order)."""
        return self.layout.values()

    @cached_property
    def num_threads(self) -> int:
        return self.layout[0].size()

    @cached_property
    def num_values(self) -> int:
        return self.layout[1].size()

    def offset(self, thread: int, value: int) -> int:
        return self.layout((thread, value))

    def coord(self, thread: int, value: int) -> IntTuple:
        """The tile coordinate (e.g. ``(m, n)``) of ``thread``'s ``value``."""
        if type(thread) is int and type(value) is int:
            threads = self.num_threads
            if 0 <= thread < threads and 0 <= value < self.num_values:
                return self._coords[thread + threads * value]
        return idx2crd(self.offset(thread, value), self.tile)

    @cached_property
    def _coords(self) -> list[IntTuple]:
        """``coord(t, v)`` at ``t + num_threads * v``, computed once."""
        tile = self.tile
        offsets = self._offset_list()
        if len(tile) == 2 and all(type(s) is int for s in tile):
            rows = tile[0]
            return [(o % rows, o // rows) for o in offsets]
        return [idx2crd(o, tile) for o in offsets]

    def thread_coords(self, thread: int) -> list[IntTuple]:
        """Every coordinate ``thread`` holds, in value order."""
        if not 0 <= thread < self.num_threads:
            raise ValueError(f"TV layout {self.layout}: thread {thread} is outside 0..{self.num_threads - 1}")
        return [self.coord(thread, v) for v in range(self.num_values)]

    @cached_property
    def _owners(self) -> dict[int, list[tuple[int, int]]]:
        table: dict[int, list[tuple[int, int]]] = {}
        offsets = self._offset_list()
        threads = self.num_threads
        for t in range(threads):
            for v in range(self.num_values):
                table.setdefault(offsets[t + threads * v], []).append((t, v))
        return table

    def owners(self, coord: IntTuple) -> list[tuple[int, int]]:
        """Every ``(thread, value)`` holding the element at ``coord`` (several under broadcast)."""
        flat = flatten(coord) if isinstance(coord, tuple) else (coord,)
        if len(flat) != len(self.tile) or not all(0 <= c < s for c, s in zip(flat, self.tile)):
            raise ValueError(f"coordinate {coord} is outside the tile {self.tile}")
        return list(self._owners.get(compact_idx(tuple(flat), self.tile), []))

    def owner(self, coord: IntTuple) -> tuple[int, int]:
        """The single ``(thread, value)`` holding ``coord`` (for layouts that cover once)."""
        found = self.owners(coord)
        if len(found) != 1:
            raise ValueError(f"TV layout {self.layout}: element {coord} is held {len(found)} times, not once")
        return found[0]

    def same_function(self, other: "TVLayout") -> bool:
        """Whether both give every ``(thread, value)`` the same element: two spellings of one
        fragment (e.g. ``(4,8):(1,4)`` and ``32:1`` for the threads) need no conversion."""
        if self.tile != other.tile or self.num_threads != other.num_threads or self.num_values != other.num_values:
            return False
        return self.layout == other.layout or self._offset_list() == other._offset_list()

    def transposed(self) -> "TVLayout":
        """The same threads and values over the transposed tile: thread ``t``'s value ``v`` is at
        ``(n, m)`` of the ``N x M`` tile where it was at ``(m, n)`` of the ``M x N`` one. It is the
        layout composed with the transposition ``(M,N):(N,1)`` (column-major offsets of the one
        tile to those of the other), so holding a tile transposed moves no data. ValueError for a
        tile that is not 2-D or a layout the composition cannot express."""
        if len(self.tile) != 2:
            raise ValueError(f"TV layout {self.layout}: only a 2-D tile has a transpose, not {self.tile}")
        m, n = self.tile
        try:
            layout = composition(Layout((m, n), (n, 1)), self.layout)
            result = TVLayout(layout, (n, m))
        except ValueError as e:
            raise ValueError(f"TV layout {self.layout} over {m}x{n}: no layout for its transpose ({e})") from None
        # the composition's shape may regroup modes: check it is the function wanted, element by element
        if [(c[1], c[0]) for c in result._coords] != self._coords:
            raise ValueError(f"TV layout {self.layout} over {m}x{n}: the composition {layout} is not its transpose")
        return result

    def covers(self) -> bool:
        """Whether every tile element is held by at least one (thread, value) (broadcast allowed)."""
        return len(set(self._offset_list())) == product(self.tile)

    def covers_once(self) -> bool:
        """Whether every tile element is held by exactly one (thread, value)."""
        n = product(self.tile)
        # every offset is in the tile (checked at construction): once each <=> n offsets, n distinct
        offsets = self._offset_list()
        return len(offsets) == n and len(set(offsets)) == n

    def __str__(self) -> str:
        return f"{self.layout} over {'x'.join(map(str, self.tile))}"
