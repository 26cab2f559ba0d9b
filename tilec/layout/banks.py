"""Shared-memory bank conflicts, counted by brute force over the lanes of a warp.

The model (NVIDIA sm_80/sm_90 shared memory):

- 32 banks of 4-byte words; word ``w`` (byte address ``4w .. 4w+3``) is in bank
  ``w % 32``.
- A warp-wide access is served in *phases* of 128 bytes: 16-byte accesses
  (``cp.async`` 16 B, ``st.shared.v4``, one row of an ``ldmatrix`` matrix) take
  8 lanes per phase, 8-byte accesses 16 lanes, 4-byte and narrower all 32.
- In one phase each bank serves one word per cycle: the phase costs the largest
  number of *distinct* words any bank is asked for (lanes reading the same word
  share it: broadcast, free). A phase of cost ``n`` is an ``n``-way conflict.
- The ideal is one wavefront per phase that has an active lane; the conflicts
  are ``wavefronts - ideal``.

:func:`conflicts` scores one warp instruction (a byte address per lane).
The pattern builders turn a shared layout (a :class:`Layout` or
:class:`ComposedLayout` from coordinates to element offsets) into the warp
instructions a kernel issues on it, each address computed by evaluating the
layout, so the counts are right by construction:

- :func:`copy_stores`: the global→shared vector stores of a tiled copy
  (CuTe's row-by-row thread order, or explicit ``thr``/``val`` layouts with the
  semantics of ``tile.copy``);
- :func:`ldmatrix_reads`: ``ldmatrix.x4`` over every 16-line × 32-byte sub-tile
  (lane ``l`` points at line ``l % 16``, 16-byte block ``l / 16``). The A
  operand (``M x K``), the B operand stored ``K x N`` and read with ``.trans``
  and the B operand stored ``N x K`` all read 16-byte pieces of 8 consecutive
  lines of the stored tile per phase, so one builder covers them;
- :func:`fragment_reads_32`: the mma.sync fragments read with 32-bit loads
  (lane ``4g+q`` reads word ``q`` of line ``g`` of each 8-line × 16-byte block:
  the tf32 A fragment, or f16 fragments without ``ldmatrix``);
- :func:`warp_reads`: SIMT reads, 32 lanes along a row or down a column.

A *line* is a run of the tile along its contiguous axis (a row of a row-major
tile, a column of a column-major one); the builders find the axis from the
layout. :func:`choose_swizzle` searches ``Swizzle(B, M, S)`` for a compact tile
and picks the conflict-free one with the fewest bits; :func:`triton_swizzle`
is Triton's formula (vec, perPhase, maxPhase) in CuTe terms, for comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from tilec.layout.layout import Layout
from tilec.layout.swizzle import ComposedLayout, Swizzle

BANKS = 32
BANK_BYTES = 4
WARP_SIZE = 32
PHASE_BYTES = BANKS * BANK_BYTES  # 128
VECTOR_BYTES = 16

AnyLayout = Layout | ComposedLayout


def lanes_per_phase(access_bytes: int) -> int:
    """8 lanes for 16-byte accesses, 16 for 8-byte, 32 for 4 bytes or fewer."""
    if access_bytes not in (1, 2, 4, 8, 16):
        raise ValueError(f"bank model: a lane accesses 1, 2, 4, 8 or 16 bytes, not {access_bytes}")
    return WARP_SIZE * BANK_BYTES // max(BANK_BYTES, access_bytes)


@dataclass(frozen=True)
class ConflictReport:
    """The bank-conflict count of one or more warp instructions.

    ``phases``: phases with at least one active lane; ``wavefronts``: what they
    cost; ``ideal``: one per phase; ``ways``: the cost of the worst phase
    ("8-way"); ``worst_phase``/``worst_bank``: where that worst cost first
    occurred (phase index over the whole pattern, bank), None if nothing ran.
    """

    phases: int = 0
    wavefronts: int = 0
    ideal: int = 0
    ways: int = 0
    worst_phase: int | None = None
    worst_bank: int | None = None

    @property
    def conflicts(self) -> int:
        """Extra wavefronts over the ideal: ``sum(cost - 1)`` over phases."""
        return self.wavefronts - self.ideal

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal

    def __add__(self, other: "ConflictReport") -> "ConflictReport":
        if not isinstance(other, ConflictReport):
            return NotImplemented
        worst = self
        if other.ways > self.ways:
            shifted = None if other.worst_phase is None else other.worst_phase + self.phases
            worst = ConflictReport(ways=other.ways, worst_phase=shifted, worst_bank=other.worst_bank)
        return ConflictReport(
            self.phases + other.phases,
            self.wavefronts + other.wavefronts,
            self.ideal + other.ideal,
            worst.ways,
            worst.worst_phase,
            worst.worst_bank,
        )

    def __str__(self) -> str:
        return f"{self.ways}-way ({self.wavefronts} wavefronts, ideal {self.ideal})"


def phase_cost(addresses: Iterable[int], access_bytes: int) -> tuple[int, int | None]:
    """``(cost, bank)`` of one phase: the most distinct words one bank serves, and that bank
    (the lowest-numbered one on a tie)."""
    words: set[int] = set()
    for addr in addresses:
        first = addr // BANK_BYTES
        last = (addr + access_bytes - 1) // BANK_BYTES
        if first == last:
            words.add(first)
        else:
            words.update(range(first, last + 1))
    if not words:
        return 0, None
    banks = {w % BANKS for w in words}
    if len(banks) == len(words):  # one word per bank: no conflict
        return 1, min(banks)
    count: dict[int, int] = {}
    for w in words:
        count[w % BANKS] = count.get(w % BANKS, 0) + 1
    cost = max(count.values())
    return cost, min(b for b, n in count.items() if n == cost)


def conflicts(byte_addresses_per_lane: Sequence[int | None], access_bytes: int) -> ConflictReport:
    """Score one warp instruction: lane ``i`` accesses ``access_bytes`` at ``byte_addresses_per_lane[i]``.

    ``None`` marks an idle lane. Addresses must be aligned to the access size
    (the hardware requires it).
    """
    if len(byte_addresses_per_lane) > WARP_SIZE:
        raise ValueError(f"bank model: a warp has {WARP_SIZE} lanes, got {len(byte_addresses_per_lane)} addresses")
    per_phase = lanes_per_phase(access_bytes)
    # the sum of one report per phase (see ConflictReport.__add__), accumulated in place
    phases = wavefronts = ways = 0
    worst_phase: int | None = None
    worst_bank: int | None = None
    for start in range(0, WARP_SIZE, per_phase):
        lanes = [a for a in byte_addresses_per_lane[start : start + per_phase] if a is not None]
        for a in lanes:
            if a < 0 or a % access_bytes:
                raise ValueError(f"bank model: a {access_bytes}-byte access at byte {a} is not aligned")
        cost, bank = phase_cost(lanes, access_bytes)
        if cost == 0:
            continue
        if cost > ways:
            ways, worst_phase, worst_bank = cost, phases, bank
        phases += 1
        wavefronts += cost
    return ConflictReport(phases, wavefronts, phases, ways, worst_phase, worst_bank)


@dataclass(frozen=True)
class WarpAccess:
    """One warp-wide instruction: a byte address per lane (None: idle), ``nbytes`` each."""

    addresses: tuple[int | None, ...]
    nbytes: int

    def report(self) -> ConflictReport:
        return conflicts(self.addresses, self.nbytes)


def analyze(accesses: Iterable[WarpAccess]) -> ConflictReport:
    """The summed report of a sequence of warp instructions."""
    total = ConflictReport()
    for access in accesses:
        total = total + access.report()
    return total


# -- layouts ----------------------------------------------------------------------------


def tile_dims(layout: AnyLayout, dims: Sequence[int] | None = None) -> tuple[int, int]:
    """The ``(rows, cols)`` a rank-2 layout covers (or ``dims`` when given)."""
    if dims is not None:
        dims = tuple(dims)
        if len(dims) != 2:
            raise ValueError(f"bank model: 2-D tiles only, got dims {dims}")
        return dims
    if layout.rank() != 2:
        raise ValueError(f"bank model: layout {layout} is not rank 2")
    return layout[0].size(), layout[1].size()


def contiguous_axis(layout: AnyLayout, dims: Sequence[int] | None = None) -> int:
    """The axis along which neighbouring coordinates are neighbouring offsets (1: rows, 0: columns)."""
    r, c = tile_dims(layout, dims)
    o = layout((0, 0))
    if c > 1 and layout((0, 1)) == o + 1:
        return 1
    if r > 1 and layout((1, 0)) == o + 1:
        return 0
    if r == 1 or c == 1:
        return 1 if c > 1 else 0
    raise ValueError(f"bank model: layout {layout} has no contiguous axis (no stride-1 mode at the origin)")


@lru_cache(maxsize=64)
def offset_table(layout: AnyLayout, dims: tuple[int, int]) -> tuple[tuple[int, ...], ...]:
    """``table[i][j] == layout((i, j))`` for every coordinate of the tile.

    A flat ``(R,C):(s0,s1)`` layout, bare or under a swizzle, is evaluated by
    its formula (the same function, computed faster); anything else by calling it.
    """
    r, c = dims
    base = layout.layout if isinstance(layout, ComposedLayout) else layout
    flat = isinstance(base.shape, tuple) and len(base.shape) == 2 and all(isinstance(x, int) for x in base.shape + base.stride)
    if not flat or base.shape != (r, c):
        return tuple(tuple(layout((i, j)) for j in range(c)) for i in range(r))
    s0, s1 = base.stride
    rows = [[i * s0 + j * s1 for j in range(c)] for i in range(r)]
    if isinstance(layout, ComposedLayout):
        inner, off = layout.inner, layout.offset
        if isinstance(inner, Swizzle) and inner.shift >= 0:
            # Swizzle.__call__ inlined: o ^ ((o & yyy) >> S)
            mask, shift = inner.yyy_mask, inner.shift
            rows = [[(off + o) ^ (((off + o) & mask) >> shift) for o in row] for row in rows]
        else:
            rows = [[inner(off + o) for o in row] for row in rows]
    return tuple(tuple(row) for row in rows)


@lru_cache(maxsize=64)
def offset_array(layout: AnyLayout, dims: tuple[int, int]) -> np.ndarray:
    """:func:`offset_table` as a read-only ``int64`` array, computed on whole arrays where it can be.

    A rank-2 layout is additive in its modes (``L((i, j)) == L((i, 0)) + L((0, j))``),
    so a bare one, or one under a swizzle with a non-negative shift, takes
    ``R + C`` calls (shared by every swizzle of one layout) and the swizzle's
    formula on the array; anything else, or offsets near the ``int64`` limit,
    is :func:`offset_table`'s values.
    """
    base, offset, swizzle = layout, 0, None
    if isinstance(layout, ComposedLayout) and isinstance(layout.inner, Swizzle) and layout.inner.shift >= 0:
        base, offset, swizzle = layout.layout, layout.offset, layout.inner
    out = None
    modes = _mode_offsets(base, dims) if isinstance(base, Layout) and base.rank() == 2 else None
    if modes is not None and abs(offset) < _SMALL:
        out = np.add.outer(modes[0] + offset, modes[1])
        if swizzle is not None:
            out ^= (out & swizzle.yyy_mask) >> swizzle.shift
    if out is None:
        out = np.asarray(offset_table(layout, dims), dtype=np.int64).reshape(dims)
    out.setflags(write=False)
    return out


_SMALL = 1 << 60
"""Offsets below this in magnitude, sums of three of them fit ``int64``."""


@lru_cache(maxsize=64)
def _mode_offsets(base: Layout, dims: tuple[int, int]) -> tuple[np.ndarray, np.ndarray] | None:
    """``L((i, 0))`` and ``L((0, j))`` over the tile (shared by every swizzle of ``base``); None if too large."""
    rows = [base((i, 0)) for i in range(dims[0])]
    cols = [base((0, j)) for j in range(dims[1])]
    if any(abs(o) >= _SMALL for o in rows + cols):
        return None
    return np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)


class _Lines:
    """A tile seen as lines (runs along the contiguous axis) of ``length`` elements."""

    def __init__(self, layout: AnyLayout, elem_bytes: int, dims: Sequence[int] | None, axis: int | None):
        if elem_bytes not in (1, 2, 4, 8, 16):
            raise ValueError(f"bank model: element width {elem_bytes} bytes is not 1, 2, 4, 8 or 16")
        self.layout = layout
        self.elem_bytes = elem_bytes
        self.dims = tile_dims(layout, dims)
        self.axis = contiguous_axis(layout, self.dims) if axis is None else axis
        if self.axis not in (0, 1):
            raise ValueError(f"bank model: axis must be 0 or 1, got {axis}")
        self.length = self.dims[self.axis]
        self.count = self.dims[1 - self.axis]
        array = offset_array(layout, self.dims)
        # the offsets line by line: runs[line, pos] (the table's rows, or its columns for axis 0)
        self.runs = array if self.axis == 1 else array.T

    def coord(self, line: int, pos: int) -> tuple[int, int]:
        return (line, pos) if self.axis == 1 else (pos, line)

    def offset(self, line: int, pos: int) -> int:
        return int(self.runs[line, pos])

    def vector_address(self, line: int, pos: int, n: int) -> int:
        """Byte address of the ``n`` elements at ``(line, pos..pos+n-1)``; they must be one aligned vector."""
        first = self.offset(line, pos)
        if first % n or any(self.offset(line, pos + i) != first + i for i in range(1, n)):
            raise ValueError(
                f"bank model: layout {self.layout}: the {n} elements from {self.coord(line, pos)} along axis "
                f"{self.axis} are not one aligned {n * self.elem_bytes}-byte vector"
            )
        return first * self.elem_bytes

    def vector_elems(self, vector_bytes: int = VECTOR_BYTES) -> int:
        """Elements per vector: ``vector_bytes`` worth, or the whole line if it is shorter."""
        n = max(1, vector_bytes // self.elem_bytes)
        while n > 1 and self.length % n:
            n //= 2
        return n


Coord = tuple[int, int] | None
"""A lane's vector as ``(line, pos)`` of a :class:`_Lines`, or None for an idle lane."""


class _Plan:
    """Warp instructions as coordinates, independent of the layout they run on.

    Lane ``l`` of instruction ``k`` accesses the ``n``-element vector at
    ``(line[k, l], pos[k, l])`` of the tile's lines (``nbytes`` bytes; idle
    where ``active`` is false); ``widths[k]`` is how many lanes instruction
    ``k`` has (the last warp of a copy may have fewer than 32). Evaluated on
    a layout it gives every address at once (:meth:`addresses`), the
    :class:`WarpAccess` list the builders return (:meth:`accesses`), or the
    summed :class:`ConflictReport` without making that list (:meth:`report`).
    """

    def __init__(self, instructions: Sequence[Sequence[Coord]], n: int, nbytes: int):
        self.n, self.nbytes = n, nbytes
        self.widths = tuple(len(lanes) for lanes in instructions)
        k = len(instructions)
        line = np.zeros((k, WARP_SIZE), dtype=np.int64)
        pos = np.zeros((k, WARP_SIZE), dtype=np.int64)
        active = np.zeros((k, WARP_SIZE), dtype=bool)
        for i, lanes in enumerate(instructions):
            for lane, coord in enumerate(lanes):
                if coord is not None:
                    line[i, lane], pos[i, lane] = coord
                    active[i, lane] = True
        self.line, self.pos, self.active = line, pos, active

    def addresses(self, lines: _Lines) -> np.ndarray:
        """Byte address of every lane (anything where idle); the :meth:`_Lines.vector_address`
        error of the first lane whose elements are not one aligned vector."""
        runs, n = lines.runs, self.n
        first = runs[self.line, self.pos]
        ok = first % n == 0
        for i in range(1, n):
            ok &= runs[self.line, self.pos + i] == first + i
        bad = self.active & ~ok
        if bad.any():
            k, lane = np.argwhere(bad)[0]
            lines.vector_address(int(self.line[k, lane]), int(self.pos[k, lane]), n)  # raises
        return first * lines.elem_bytes

    def accesses(self, lines: _Lines) -> list[WarpAccess]:
        addresses = self.addresses(lines).tolist()
        active = self.active.tolist()
        return [
            WarpAccess(tuple(a if on else None for a, on in zip(row[:width], flags)), self.nbytes)
            for row, flags, width in zip(addresses, active, self.widths)
        ]

    def report(self, lines: _Lines) -> ConflictReport:
        """``analyze(self.accesses(lines))``, counted on whole arrays."""
        nbytes = self.nbytes
        addresses = self.addresses(lines)
        misaligned = self.active & ((addresses < 0) | (addresses % nbytes != 0))
        if misaligned.any():
            k, lane = np.argwhere(misaligned)[0]
            raise ValueError(f"bank model: a {nbytes}-byte access at byte {addresses[k, lane]} is not aligned")
        per_phase = lanes_per_phase(nbytes)
        # An aligned access covers whole units: one word (4 bytes or fewer) or nbytes / 4
        # consecutive banks. Distinct units of a phase in the same bank group are distinct
        # words of the same banks, so a phase costs the most distinct units of one group.
        unit = max(BANK_BYTES, nbytes)
        groups = PHASE_BYTES // unit
        shape = (len(self.widths), WARP_SIZE // per_phase, per_phase)
        units = np.where(self.active, addresses // unit, -1).reshape(shape)
        units.sort(axis=-1)
        distinct = units >= 0
        distinct[..., 1:] &= units[..., 1:] != units[..., :-1]
        in_group = (units % groups)[..., None] == np.arange(groups)
        counts = (in_group & distinct[..., None]).sum(axis=-2)
        costs = counts.max(axis=-1)
        banks = counts.argmax(axis=-1) * (unit // BANK_BYTES)
        ran = costs > 0
        costs, banks = costs[ran], banks[ran]
        if not len(costs):
            return ConflictReport()
        worst = int(costs.argmax())
        phases = len(costs)
        return ConflictReport(phases, int(costs.sum()), phases, int(costs[worst]), worst, int(banks[worst]))


def _warp_chunks(lanes: list[Coord]) -> list[list[Coord]]:
    return [lanes[i : i + WARP_SIZE] for i in range(0, len(lanes), WARP_SIZE)]


class AccessPattern:
    """One builder (:func:`copy_stores`, :func:`ldmatrix_reads`, :func:`fragment_reads_32`)
    bound to everything but the layout.

    Called on a layout it returns what the builder returns; :meth:`report` is
    ``analyze`` of that, counted on whole arrays without making the list
    (what :func:`choose_swizzle_for` scores every candidate with).
    """

    def __init__(self, builder: Callable[..., list[WarpAccess]], *args: object, **kwargs: object):
        if builder not in _PLANNERS:
            raise ValueError(f"AccessPattern: {getattr(builder, '__name__', builder)} is not a pattern builder")
        self.builder, self.args, self.kwargs = builder, args, kwargs

    def __call__(self, layout: AnyLayout) -> list[WarpAccess]:
        return self.builder(layout, *self.args, **self.kwargs)

    def report(self, layout: AnyLayout) -> ConflictReport:
        plan, lines = _PLANNERS[self.builder](layout, *self.args, **self.kwargs)
        return plan.report(lines)


class Patterns:
    """Several patterns issued one after the other, as one pattern (the same callable/report pair)."""

    def __init__(self, patterns: Sequence[Callable[[AnyLayout], list[WarpAccess]]]):
        self.patterns = tuple(patterns)

    def __call__(self, layout: AnyLayout) -> list[WarpAccess]:
        return [a for p in self.patterns for a in p(layout)]

    def report(self, layout: AnyLayout) -> ConflictReport:
        total = ConflictReport()
        for p in self.patterns:
            total = total + report_of(p, layout)
        return total


def report_of(pattern: Callable[[AnyLayout], list[WarpAccess]], layout: AnyLayout) -> ConflictReport:
    """``analyze(pattern(layout))``, through the pattern's own ``report`` when it has one."""
    fast = getattr(pattern, "report", None)
    return fast(layout) if fast is not None else analyze(pattern(layout))


def copy_stores(
    layout: AnyLayout,
    elem_bytes: int,
    dims: Sequence[int] | None = None,
    *,
    thr: Layout | None = None,
    val: Layout | None = None,
    vector_bytes: int = VECTOR_BYTES,
    axis: int | None = None,
) -> list[WarpAccess]:
    """The vector stores of a tiled global→shared copy into ``layout`` (also its reads, for shared→global).

    Without ``thr``/``val``: CuTe's thread order for a compact tile, each lane
    moving one ``vector_bytes`` vector, consecutive lanes taking consecutive
    vectors along the contiguous axis, line by line (``(T/8, 8):(8, 1)`` threads
    × ``(1, 8)`` values for f16 rows of 64); warp ``w`` moves vectors
    ``32w .. 32w+31``. With them: ``tile.copy``'s semantics, thread
    ``thr((tm, tn))`` moves the ``val``-shaped block at ``(tm*VM, tn*VN)`` of
    each repetition of the ``(TM*VM) x (TN*VN)`` copy tile; its block is cut into
    the widest vectors (up to ``vector_bytes``) that are contiguous in
    ``layout``, and the ``j``-th vector of every lane of a warp is one
    instruction.
    """
    plan, lines = _copy_stores(layout, elem_bytes, dims, thr=thr, val=val, vector_bytes=vector_bytes, axis=axis)
    return plan.accesses(lines)


def _copy_stores(
    layout: AnyLayout,
    elem_bytes: int,
    dims: Sequence[int] | None = None,
    *,
    thr: Layout | None = None,
    val: Layout | None = None,
    vector_bytes: int = VECTOR_BYTES,
    axis: int | None = None,
) -> tuple[_Plan, _Lines]:
    lines = _Lines(layout, elem_bytes, dims, axis)
    if (thr is None) != (val is None):
        raise ValueError("copy_stores: give both thr and val layouts or neither")
    if thr is None:
        plan = _row_copy_plan(lines.count, lines.length, lines.vector_elems(vector_bytes), elem_bytes)
    else:
        plan = _tiled_copy_plan(thr, val, lines.dims, lines.axis, elem_bytes, vector_bytes)
    return plan, lines


@lru_cache(maxsize=64)
def _row_copy_plan(count: int, length: int, n: int, elem_bytes: int) -> _Plan:
    coords: list[Coord] = [(line, pos) for line in range(count) for pos in range(0, length, n)]
    return _Plan(_warp_chunks(coords), n, n * elem_bytes)


@lru_cache(maxsize=64)
def _tiled_copy_plan(
    thr: Layout, val: Layout, dims: tuple[int, int], axis: int, elem_bytes: int, vector_bytes: int
) -> _Plan:
    if thr.rank() != 2 or val.rank() != 2:
        raise ValueError(f"copy_stores: thr {thr} and val {val} must be rank 2")
    tshape = (thr[0].size(), thr[1].size())
    vshape = (val[0].size(), val[1].size())
    block = (tshape[0] * vshape[0], tshape[1] * vshape[1])
    if dims[0] % block[0] or dims[1] % block[1]:
        raise ValueError(f"copy_stores: thr {thr} × val {val} covers {block}, which does not tile {dims}")
    threads = max(thr(i) for i in range(thr.size())) + 1
    owner = {thr((tm, tn)): (tm, tn) for tm in range(tshape[0]) for tn in range(tshape[1])}
    # A thread's block as (line, pos) runs along the contiguous axis.
    v_along = vshape[axis]
    v_lines = vshape[1 - axis]
    n = max(1, vector_bytes // elem_bytes)
    while n > 1 and v_along % n:
        n //= 2
    instructions: list[list[Coord]] = []
    for rm in range(dims[0] // block[0]):
        for rn in range(dims[1] // block[1]):
            for j_line in range(v_lines):
                for j_pos in range(0, v_along, n):
                    coords: list[Coord] = []
                    for t in range(threads):
                        if t not in owner:
                            coords.append(None)
                            continue
                        tm, tn = owner[t]
                        row0, col0 = rm * block[0] + tm * vshape[0], rn * block[1] + tn * vshape[1]
                        if axis == 1:
                            coords.append((row0 + j_line, col0 + j_pos))
                        else:
                            coords.append((col0 + j_line, row0 + j_pos))
                    instructions.extend(_warp_chunks(coords))
    return _Plan(instructions, n, n * elem_bytes)


def ldmatrix_reads(
    layout: AnyLayout,
    elem_bytes: int = 2,
    dims: Sequence[int] | None = None,
    *,
    axis: int | None = None,
) -> list[WarpAccess]:
    """``ldmatrix.x4`` over every 16-line × 32-byte sub-tile of the tile (each 8-lane phase: 8 lines × 16 bytes).

    Lane ``l`` points at line ``l % 16``, 16-byte block ``l / 16`` of the
    sub-tile: for an f16 A tile (``M x K``, row-major) that is row ``l % 16``,
    column ``8 (l / 16)`` of each 16×16 sub-tile. Tiles of 8 lines or of one
    16-byte block per line use ``.x2``/``.x1`` (fewer active lanes). The B
    operand read as ``K x N`` with ``.trans`` or as ``N x K`` without issues the
    same phases (8 consecutive lines, one 16-byte block). Elements other than
    16-bit ones are counted in 16-byte rows too (``ldmatrix`` b16 loads the tf32
    A fragment that way).
    """
    plan, lines = _ldmatrix_reads(layout, elem_bytes, dims, axis=axis)
    return plan.accesses(lines)


def _ldmatrix_reads(
    layout: AnyLayout, elem_bytes: int = 2, dims: Sequence[int] | None = None, *, axis: int | None = None
) -> tuple[_Plan, _Lines]:
    lines = _Lines(layout, elem_bytes, dims, axis)
    n = VECTOR_BYTES // elem_bytes if elem_bytes <= VECTOR_BYTES else 0
    if n == 0 or lines.length % n or lines.count % 8:
        raise ValueError(
            f"ldmatrix: needs lines of a multiple of 16 bytes and a multiple of 8 lines; "
            f"the tile has {lines.count} lines of {lines.length * elem_bytes} bytes"
        )
    return _ldmatrix_plan(lines.count, lines.length, n), lines


@lru_cache(maxsize=64)
def _ldmatrix_plan(count: int, length: int, n: int) -> _Plan:
    blocks = length // n
    h = 16 if count % 16 == 0 else 8
    w = 2 if blocks % 2 == 0 else 1
    matrices = (h // 8) * w
    instructions = []
    for line0 in range(0, count, h):
        for block0 in range(0, blocks, w):
            coords: list[Coord] = []
            for lane in range(WARP_SIZE):
                i = lane // 8
                if i >= matrices:
                    coords.append(None)
                    continue
                coords.append((line0 + 8 * (i % (h // 8)) + lane % 8, (block0 + i // (h // 8)) * n))
            instructions.append(coords)
    return _Plan(instructions, n, VECTOR_BYTES)


def fragment_reads_32(
    layout: AnyLayout,
    elem_bytes: int = 4,
    dims: Sequence[int] | None = None,
    *,
    axis: int | None = None,
) -> list[WarpAccess]:
    """mma.sync fragments read with 32-bit loads: per 8-line × 16-byte block, lane ``4g+q`` reads word ``q`` of line ``g``.

    For f32 that is the tf32 ``m16n8k8`` A fragment (lane ``4g+q`` holds
    ``(g, q)``, ``(g+8, q)``, ``(g, q+4)``, ``(g+8, q+4)``), one block per load;
    for f16 it is the ``m16n8k16`` fragment loaded without ``ldmatrix``
    (lane holds ``(g, 2q..2q+1)``).
    """
    plan, lines = _fragment_reads_32(layout, elem_bytes, dims, axis=axis)
    return plan.accesses(lines)


def _fragment_reads_32(
    layout: AnyLayout, elem_bytes: int = 4, dims: Sequence[int] | None = None, *, axis: int | None = None
) -> tuple[_Plan, _Lines]:
    lines = _Lines(layout, elem_bytes, dims, axis)
    if elem_bytes > BANK_BYTES:
        raise ValueError(f"fragment_reads_32: {elem_bytes}-byte elements do not fit a 32-bit load")
    n = VECTOR_BYTES // elem_bytes
    if lines.length % n or lines.count % 8:
        raise ValueError(
            f"fragment_reads_32: needs lines of a multiple of 16 bytes and a multiple of 8 lines; "
            f"the tile has {lines.count} lines of {lines.length * elem_bytes} bytes"
        )
    return _fragment_plan(lines.count, lines.length, n, BANK_BYTES // elem_bytes), lines


@lru_cache(maxsize=64)
def _fragment_plan(count: int, length: int, n: int, per_word: int) -> _Plan:
    instructions = [
        [(line0 + lane // 4, pos0 + per_word * (lane % 4)) for lane in range(WARP_SIZE)]
        for line0 in range(0, count, 8)
        for pos0 in range(0, length, n)
    ]
    return _Plan(instructions, per_word, BANK_BYTES)


_PLANNERS: dict[Callable[..., list[WarpAccess]], Callable[..., tuple[_Plan, _Lines]]] = {
    copy_stores: _copy_stores,
    ldmatrix_reads: _ldmatrix_reads,
    fragment_reads_32: _fragment_reads_32,
}
"""Each builder → the same checks, returning its plan and the tile's lines instead of the list."""


def warp_reads(
    layout: AnyLayout, elem_bytes: int = 4, dims: Sequence[int] | None = None, *, direction: str = "row"
) -> list[WarpAccess]:
    """SIMT element reads: lane ``l`` reads ``(i, j0 + l)`` (``direction="row"``) or ``(i0 + l, j)`` (``"col"``).

    Every row (column) of the tile is read in runs of 32 elements (the last run
    of a short row has idle lanes); ``direction`` is about the tile's logical
    rows and columns, whatever its layout.
    """
    if direction not in ("row", "col"):
        raise ValueError(f"warp_reads: direction is 'row' or 'col', not {direction!r}")
    r, c = tile_dims(layout, dims)
    if elem_bytes not in (1, 2, 4, 8, 16):
        raise ValueError(f"bank model: element width {elem_bytes} bytes is not 1, 2, 4, 8 or 16")
    accesses = []
    outer, inner = (r, c) if direction == "row" else (c, r)
    for i in range(outer):
        for j0 in range(0, inner, WARP_SIZE):
            addrs: list[int | None] = []
            for lane in range(WARP_SIZE):
                j = j0 + lane
                if j >= inner:
                    addrs.append(None)
                    continue
                coord = (i, j) if direction == "row" else (j, i)
                addrs.append(layout(coord) * elem_bytes)
            accesses.append(WarpAccess(tuple(addrs), elem_bytes))
    return accesses


# -- choosing a swizzle --------------------------------------------------------------

Pattern = Callable[[AnyLayout], list[WarpAccess]]
"""A layout → the warp instructions a kernel issues on it (elem width and dims bound).
An :class:`AccessPattern` (or :class:`Patterns` of them) is scored without making the list."""


def default_patterns(elem_bytes: int, dims: Sequence[int], axis: int) -> dict[str, Pattern]:
    """What a GEMM does to a shared tile of this element width.

    16-bit: the 16-byte copy stores and ``ldmatrix``; 32-bit: the stores, 16-byte
    row reads (``ldmatrix`` b16 of the tf32 A fragment, ``ld.shared.v4``) and the
    32-bit fragment reads; wider: the stores.
    """
    dims = tuple(dims)
    patterns: dict[str, Pattern] = {"stores": AccessPattern(copy_stores, elem_bytes, dims, axis=axis)}
    lines, length = dims[1 - axis], dims[axis]
    rows_ok = lines % 8 == 0 and elem_bytes <= VECTOR_BYTES and (length * elem_bytes) % VECTOR_BYTES == 0
    if elem_bytes <= 4 and rows_ok:
        patterns["ldmatrix"] = AccessPattern(ldmatrix_reads, elem_bytes, dims, axis=axis)
    if elem_bytes == 4 and rows_ok:
        patterns["lds32"] = AccessPattern(fragment_reads_32, elem_bytes, dims, axis=axis)
    return patterns


def compact_layout(rows: int, cols: int, order: str = "row") -> Layout:
    """``(R,C):(C,1)`` (``order="row"``) or ``(R,C):(1,R)`` (``"col"``)."""
    if order == "row":
        return Layout((rows, cols), (cols, 1))
    if order == "col":
        return Layout((rows, cols), (1, rows))
    raise ValueError(f"order is 'row' or 'col', not {order!r}")


def compact_order(layout: AnyLayout, dims: Sequence[int] | None = None) -> str | None:
    """``"row"``/``"col"`` when ``layout`` is a plain compact row-/column-major layout of ``dims``, else None."""
    if not isinstance(layout, Layout) or layout.rank() != 2:
        return None
    r, c = tile_dims(layout, dims)
    for order in ("row", "col"):
        if _same_function(layout, compact_layout(r, c, order), r, c):
            return order
    return None


def _same_function(a: AnyLayout, b: AnyLayout, r: int, c: int) -> bool:
    if a == b:
        return True
    return all(a((i, j)) == b((i, j)) for i in range(r) for j in range(c))


def _log2(n: int) -> int | None:
    return n.bit_length() - 1 if n > 0 and n & (n - 1) == 0 else None


def swizzle_candidates(rows: int, cols: int, elem_bytes: int, order: str = "row", max_bits: int = 3) -> list[Swizzle]:
    """``Swizzle(B, M, S)`` worth trying on a compact tile: the identity first.

    ``M = log2(16 / e)`` keeps 16-byte vectors whole; ``B`` from 1 to
    ``min(max_bits, log2(16-byte vectors per line))``; ``S`` from ``B`` to
    ``max(3, log2(vectors per line)) + 1`` (the bits just above a line, or above
    128 bytes, hold the phase). Candidates that would make the tile's storage
    larger (a swizzle period past the tile) are left out.
    """
    m = _log2(VECTOR_BYTES // elem_bytes) if elem_bytes <= VECTOR_BYTES else None
    if m is None:
        return [Swizzle(0, 0, 0)]
    length = cols if order == "row" else rows
    vectors = (length * elem_bytes) // VECTOR_BYTES
    log_u = vectors.bit_length() - 1 if vectors >= 1 else 0
    total = rows * cols
    found = [Swizzle(0, m, 0)]
    for b in range(1, min(max_bits, log_u) + 1):
        for s in range(b, max(3, log_u) + 2):
            # the period 2^(B+M+S) must divide the tile, so the swizzle permutes its offsets
            if total % (1 << (b + m + s)) == 0:
                found.append(Swizzle(b, m, s))
    return found


def triton_swizzle(rows: int, cols: int, elem_bytes: int, order: str = "row") -> Swizzle:
    """Triton's mma-v2 shared encoding as a CuTe swizzle on a compact tile.

    ``vec = 16 / e``, ``perPhase = max(1, 128 / line bytes)``, ``maxPhase = 8 /
    perPhase``; row ``r``'s vector index is XORed with ``(r / perPhase) %
    maxPhase``. That is ``Swizzle(log2 maxPhase, log2 vec, log2(line) +
    log2 perPhase - log2 vec)`` on element offsets.
    """
    length = cols if order == "row" else rows
    vec = VECTOR_BYTES // elem_bytes
    per_phase = max(1, PHASE_BYTES // (length * elem_bytes))
    max_phase = max(1, 8 // per_phase)
    m = _log2(vec)
    b = _log2(max_phase)
    s = _log2(length) + _log2(per_phase) - m
    if None in (m, b, s):
        raise ValueError(f"triton_swizzle: {rows}x{cols} of {elem_bytes}-byte elements has no power-of-two swizzle")
    return Swizzle(b, m, s)


def swizzled(swizzle: Swizzle, base: Layout) -> AnyLayout:
    """``Sw<B,M,S> o 0 o base``, or ``base`` itself for the identity (``B = 0``)."""
    return base if swizzle.bits == 0 else ComposedLayout(swizzle, 0, base)


def score(layout: AnyLayout, patterns: Mapping[str, Pattern]) -> dict[str, ConflictReport]:
    """The report of each named pattern on ``layout``."""
    return {name: report_of(pattern, layout) for name, pattern in patterns.items()}


@dataclass(frozen=True)
class SwizzleChoice:
    """What :func:`choose_swizzle` found.

    ``layout`` is the chosen layout (``base`` itself when no swizzle helps),
    ``swizzle`` its swizzle (``None`` then); ``before``/``after`` the reports of
    each pattern on ``base`` and on ``layout``; ``conflict_free`` whether
    ``after`` has no conflicts; ``tried`` the candidates scored.
    """

    base: Layout
    layout: AnyLayout
    swizzle: Swizzle | None
    before: tuple[tuple[str, ConflictReport], ...]
    after: tuple[tuple[str, ConflictReport], ...]
    conflict_free: bool
    tried: int

    def summary(self) -> str:
        """``"stores 1-way -> 1-way, ldmatrix 8-way -> 1-way"`` (and a note when conflicts remain)."""
        after = dict(self.after)
        text = ", ".join(f"{name} {b.ways}-way -> {after[name].ways}-way" for name, b in self.before)
        if not self.conflict_free:
            text += "; no conflict-free swizzle, fewest wavefronts"
        return text


def choose_swizzle_for(
    base: Layout,
    elem_bytes: int,
    patterns: Mapping[str, Pattern] | None = None,
    dims: Sequence[int] | None = None,
    max_bits: int = 3,
) -> SwizzleChoice:
    """The best ``Sw<B,M,S> o 0 o base`` for a compact row- or column-major ``base``.

    Every candidate of :func:`swizzle_candidates` is scored with ``patterns``
    (default: :func:`default_patterns`); the winner has the fewest wavefronts
    over all patterns (so a conflict-free one when there is one), then the
    fewest bits ``B``, then the smallest shift ``S``. On the usual GEMM tiles
    this is Triton's choice (see :func:`triton_swizzle`).
    """
    r, c = tile_dims(base, dims)
    order = compact_order(base, (r, c))
    if order is None:
        raise ValueError(f"choose_swizzle: {base} is not a compact row- or column-major layout of {r}x{c}")
    axis = 1 if order == "row" else 0
    if patterns is None:
        patterns = default_patterns(elem_bytes, (r, c), axis)
    candidates = swizzle_candidates(r, c, elem_bytes, order, max_bits)
    before = score(base, patterns)
    best: tuple | None = None
    for sw in candidates:
        layout = swizzled(sw, base)
        try:
            reports = before if sw.bits == 0 else score(layout, patterns)
        except ValueError:
            continue  # a pattern cannot run on it (e.g. a vector it splits): not a candidate
        key = (sum(rep.wavefronts for rep in reports.values()), sw.bits, sw.shift)
        if best is None or key < best[0]:
            best = (key, sw, layout, reports)
    _, sw, layout, after = best
    return SwizzleChoice(
        base=base,
        layout=layout,
        swizzle=None if sw.bits == 0 else sw,
        before=tuple(before.items()),
        after=tuple(after.items()),
        conflict_free=all(rep.conflict_free for rep in after.values()),
        tried=len(candidates),
    )


@lru_cache(maxsize=256)
def choose_swizzle(rows: int, cols: int, elem_bytes: int, order: str = "row") -> SwizzleChoice:
    """The swizzle for a compact ``rows x cols`` tile of ``elem_bytes`` elements under the default patterns."""
    return choose_swizzle_for(compact_layout(rows, cols, order), elem_bytes)


__all__ = [
    "AccessPattern",
    "BANKS",
    "BANK_BYTES",
    "ConflictReport",
    "Pattern",
    "Patterns",
    "SwizzleChoice",
    "WarpAccess",
    "analyze",
    "choose_swizzle",
    "choose_swizzle_for",
    "compact_layout",
    "compact_order",
    "conflicts",
    "contiguous_axis",
    "copy_stores",
    "default_patterns",
    "fragment_reads_32",
    "lanes_per_phase",
    "ldmatrix_reads",
    "phase_cost",
    "report_of",
    "score",
    "swizzle_candidates",
    "swizzled",
    "tile_dims",
    "triton_swizzle",
    "warp_reads",
]
