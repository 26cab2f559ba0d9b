"""Fragments: which lane holds which element of a register tile or vector.

``tile-layout`` chooses them (and writes them into the types), ``tile-distribute``
reads them back from the types and writes per-lane code.

Everything here is plain Python on :mod:`tilec.layout` values (no IR), so it
can be tested lane by lane against the PTX ISA's fragment tables.

A :class:`Fragment` is a thread–value layout ``(lane, value) -> offset`` into a
register tile's column-major coordinates, over a warp's 32 lanes or, for a
tile of the block (:func:`block_fragment`), over all the block's threads (bits
0-4 of the thread the lane, the rest the warp). The mma fragments are built
with the layout algebra from the MMA atom the tile feeds:

- the atom's TV layout (``tilec.layout.atoms``) is composed with the
  embedding of the atom's tile into the register tile (``(P,Q):(1,M)``, or
  ``(P,Q):(N,1)`` when the tile holds the operand transposed, e.g. a ``K x N``
  B tile for the atom's ``N x K`` B);
- the atom repeats over the tile: the value mode becomes
  ``(atom values, (TP, TQ))`` with the strides of the atom origins.

So a 32x32 f32 accumulator of ``mma_m16n8k16`` is the C atom tiled 2x4: each
lane holds 4 * 8 = 32 values; a 32x32 f16 A operand is the A atom tiled 2x2:
32 values = 16 registers (two 16-bit values per 32-bit register, ``packing =
2``, the pair being consecutive values).

For code generation a fragment is split into a lane part and a value part:
``coord(lane, v) = lane_coord(lane) + value_coord(v)`` (checked for every lane
and value), where each coordinate of ``lane_coord`` is a sum of bit fields of
the lane id (``((lane >> s) & (2^w - 1)) * scale``); see :class:`BitField`.

:func:`plan_ldmatrix` finds the ``ldmatrix`` instructions that fill an
operand fragment from a shared tile: which registers form each 8x8 matrix,
whether ``.trans`` is needed, and the row each lane points at.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np

from tilec.layout import MMA_M16N8K16_F16, ComposedLayout, Layout, MMAAtom, Swizzle, TVLayout, composition, make_layout
from tilec.layout.int_tuple import flatten

WARP = 32


MAX_TAKE_SHUFFLES = 4
"""Source values a thread holds up to which ``tile.take`` shuffles each (and selects) rather than going through
shared memory (tile-layout spreads a table that small over each warp's lanes)."""


class FragmentError(ValueError):
    """A register tile has no fragment the pass can build or use."""


def thread_bits(threads: int) -> int | None:
    """``log2(threads)`` for a fragment's thread count: a warp (32 lanes) or a block of ``2**k`` warps
    (a block tile: thread ``t`` is lane ``t % 32`` of warp ``t // 32``); None for any other count."""
    if threads < WARP or threads & (threads - 1):
        return None
    return threads.bit_length() - 1


# ---------------------------------------------------------------- lane functions


@dataclass(frozen=True)
class BitField:
    """``((lane >> shift) & (2**width - 1)) * scale``: one term of a lane coordinate."""

    shift: int
    width: int
    scale: int

    def __call__(self, lane: int) -> int:
        return ((lane >> self.shift) & ((1 << self.width) - 1)) * self.scale


def linear_fields(values: list[int]) -> tuple[int, tuple[BitField, ...]] | None:
    """``values[t] == base + sum(fields(t))`` for t < 2**n: (base, fields), or None if not bit-linear."""
    n = len(values).bit_length() - 1
    if n < 0 or 1 << n != len(values):
        return None
    base = values[0]
    coef = [values[1 << b] - base for b in range(n)]
    for t, v in enumerate(values):
        if base + sum(c for b, c in enumerate(coef) if t >> b & 1) != v:
            return None
    fields: list[BitField] = []
    b = 0
    while b < n:
        if coef[b] == 0:
            b += 1
            continue
        w = 1
        while b + w < n and coef[b + w] == coef[b] << w:
            w += 1
        fields.append(BitField(b, w, coef[b]))
        b += w
    return base, tuple(fields)


def bit_fields(values: list[int]) -> tuple[BitField, ...] | None:
    """Bit fields of a lane function that is 0 at lane 0 (None if it is not bit-linear)."""
    found = linear_fields(values)
    if found is None or found[0] != 0:
        return None
    return found[1]


# ---------------------------------------------------------------- fragments


@dataclass(frozen=True)
class Fragment:
    """A warp-level fragment of a ``dims`` register tile.

    ``tv`` maps (lane, value) to the tile's column-major offset. ``packing``
    values share one 32-bit register (2 for 16-bit mma operands, else 1).
    ``atom``/``operand``/``tiles``/``transposed`` record where it came from:
    value ``v`` of atom tile ``(tp, tq)`` is ``a + atom_values * (tp + TP * tq)``.
    """

    dims: tuple[int, int]
    tv: TVLayout
    packing: int = 1
    atom: MMAAtom | None = None
    operand: str = ""
    tiles: tuple[int, int] = (1, 1)
    transposed: bool = False
    name: str = field(default="", compare=False)
    warp_split: tuple[int, int, int] | None = None
    """For an mma operand split over the block's warps: :func:`mma_fragment`'s ``warps`` (WM, WN, copies);
    ``tiles`` and the atom values are then those of one warp's part."""

    @property
    def layout(self) -> Layout:
        return self.tv.layout

    @property
    def num_values(self) -> int:
        return self.tv.num_values

    @property
    def num_registers(self) -> int:
        return self.num_values // self.packing

    @property
    def atom_values(self) -> int:
        return self.num_values // (self.tiles[0] * self.tiles[1])

    def atom_value_range(self, tp: int, tq: int) -> range:
        """The values (in order) of atom tile ``(tp, tq)``."""
        n = self.atom_values
        start = n * (tp + self.tiles[0] * tq)
        return range(start, start + n)

    def coord(self, lane: int, value: int) -> tuple[int, int]:
        m, n = self.tv.coord(lane, value)
        return int(m), int(n)

    @cached_property
    def value_coords(self) -> tuple[tuple[int, int], ...]:
        """The static part of each value's coordinate (lane 0's coordinates)."""
        return tuple(self.coord(0, v) for v in range(self.num_values))

    @cached_property
    def lane_fields(self) -> tuple[tuple[BitField, ...], tuple[BitField, ...]]:
        """Bit fields of the lane giving the row and column offsets of its values."""
        split = self._split()
        if split is None:
            raise FragmentError(f"fragment {self.layout} of a {self.dims[0]}x{self.dims[1]} tile is not "
                                "lane + value additive with bit-linear lanes")
        return split

    @cached_property
    def is_additive(self) -> bool:
        return self._split() is not None

    @property
    def warps(self) -> int:
        """Warps the fragment spans: 1 for a warp's tile, more for a tile of the block (:func:`thread_bits`)."""
        return self.tv.num_threads // WARP

    def _split(self):
        threads = self.tv.num_threads
        if thread_bits(threads) is None:
            return None
        lane_m = [self.coord(t, 0)[0] for t in range(threads)]
        lane_n = [self.coord(t, 0)[1] for t in range(threads)]
        vm0, vn0 = self.value_coords[0]
        lane_m = [m - vm0 for m in lane_m]
        lane_n = [n - vn0 for n in lane_n]
        for t in range(threads):
            for v, (vm, vn) in enumerate(self.value_coords):
                if self.coord(t, v) != (lane_m[t] + vm, lane_n[t] + vn):
                    return None
        fm, fn = bit_fields(lane_m), bit_fields(lane_n)
        if fm is None or fn is None:
            return None
        return fm, fn

    def lane_coord(self, lane: int) -> tuple[int, int]:
        fm, fn = self.lane_fields
        return sum(f(lane) for f in fm), sum(f(lane) for f in fn)

    def register_values(self, r: int) -> range:
        return range(r * self.packing, (r + 1) * self.packing)

    def describe(self) -> str:
        return f"{self.layout} over {self.dims[0]}x{self.dims[1]}"

    def with_packing(self, packing: int) -> "Fragment":
        """The same fragment held ``packing`` values per 32-bit register."""
        return self if packing == self.packing else replace(self, packing=packing)


def window_values(tile: Fragment, window: Fragment, offsets: tuple[int, int]) -> list[int] | None:
    """For each value of ``window`` (the fragment of a window of ``tile`` at ``offsets``), the value of
    ``tile`` every lane holds that element in; None unless every lane holds all its window elements
    among its tile values, at the same value indices (then a slice is a choice of registers): the
    windowed counterpart of ``tile_distribute.convert.lane_permutation``."""
    if tile.tv.num_threads != window.tv.num_threads:
        return None
    r0, c0 = offsets
    held = [{tile.coord(lane, v): v for v in range(tile.num_values)} for lane in range(tile.tv.num_threads)]
    out: list[int] = []
    for v in range(window.num_values):
        found = None
        for lane, values in enumerate(held):
            m, n = window.coord(lane, v)
            u = values.get((m + r0, n + c0))
            if u is None or (found is not None and u != found):
                return None
            found = u
        out.append(found)
    return out


def column_window(tile: Fragment, col0: int, cols: int) -> Fragment | None:
    """The fragment of the ``rows x cols`` window at column ``col0`` of ``tile`` (all its rows) whose
    values are a part of each lane's tile values, so that :func:`window_values` picks its registers: the
    tile's layout with one value mode that steps along whole columns cut down to the window's columns.
    None when no value mode does (a fragment that spreads a lane's values over the columns otherwise).

    An mma or wgmma accumulator ``(lane, ((2, 2), (1, N/8))):(.., ((M, 8), (M, 8M)))`` over ``M x N``
    has the mode ``N/8 : 8M`` (eight columns a step): its window of 64 columns keeps ``8 : 8M``."""
    rows, width = tile.dims
    if not (0 <= col0 and 0 < cols and col0 + cols <= width):
        return None
    thr, val = tile.tv.layout[0], tile.tv.layout[1]
    shapes, strides = list(flatten(val.shape)), list(flatten(val.stride))
    for i, (n, s) in enumerate(zip(shapes, strides)):
        step = s // rows  # the columns one step of this mode moves
        if s % rows or step == 0 or col0 % step or cols % step or n * step != width:
            continue
        cut = Layout((thr.shape, tuple(shapes[:i] + [cols // step] + shapes[i + 1:])),
                     (thr.stride, tuple(strides)))
        try:
            window = Fragment((rows, cols), TVLayout(cut, (rows, cols)), tile.packing, name=tile.name)
        except ValueError:  # an offset outside the window: the other modes reach past these columns
            continue
        if window_values(tile, window, (0, col0)) is not None:
            return window
    return None


def _atom_layouts(atom: MMAAtom, operand: str) -> tuple[TVLayout, tuple[int, int]]:
    m, n, k = atom.shape_mnk
    return {"A": (atom.a, (m, k)), "B": (atom.b, (n, k)), "C": (atom.c, (m, n))}[operand]


def mma_fragment(atom: MMAAtom, operand: str, dims: tuple[int, int], transposed: bool = False, name: str = "",
                 warps: tuple[int, int, int] | None = None) -> Fragment:
    """The fragment of a ``dims`` register tile that is operand ``operand`` (A, B or C) of ``atom``.

    The tile holds the operand in the atom's coordinates (A: M x K, B: N x K,
    C: M x N), or transposed (``transposed``: e.g. B as K x N).

    ``warps = (WM, WN, R)``: the mma is split over the block's warps, CuTe's tiled MMA with a
    ``WM x WN`` layout of warps (warp ``w`` takes part ``(w % WM, w // WM % WN)``; ``R`` more copies of
    that grid hold the same parts): each warp holds the warp fragment of its ``M/WM x N/WN`` part of
    C, the ``M/WM`` rows of A it needs (every ``WN`` warps of a row of the grid hold them) and the
    ``N/WN`` columns of B. The thread mode gains the warp modes; values stay one warp's.
    """
    if warps is not None and warps[:2] != (1, 1):
        return _split_mma_fragment(atom, operand, dims, transposed, name, warps)
    atom_tv, (p, q) = _atom_layouts(atom, operand)
    rows, cols = dims
    pt, qt = (cols, rows) if transposed else (rows, cols)
    if pt % p or qt % q:
        shape = f"{rows}x{cols}"
        raise FragmentError(f"the {shape} {operand} tile is not a multiple of {atom.name}'s {p}x{q} {operand} atom"
                            + (" (transposed)" if transposed else ""))
    tp, tq = pt // p, qt // q
    # atom tile (col-major p + P*q) -> register tile (col-major r + rows*c)
    emb = Layout((p, q), (rows, 1)) if transposed else Layout((p, q), (1, rows))
    frag_atom = composition(emb, atom_tv.layout)
    reps = Layout((tp, tq), (rows * p, q)) if transposed else Layout((tp, tq), (p, rows * q))
    layout = make_layout(frag_atom[0], make_layout(frag_atom[1], reps))
    packing = 32 // _type_bits(atom.a_type if operand == "A" else atom.b_type) if operand in "AB" else 1
    tv = TVLayout(layout, dims)
    if not tv.covers_once() and atom.name != "fma_f32":
        raise FragmentError(f"fragment {layout} does not cover the {rows}x{cols} tile once (a bug in tilec)")
    return Fragment(tuple(dims), tv, packing, atom, operand, (tp, tq), transposed, name)


def _split_mma_fragment(atom: MMAAtom, operand: str, dims: tuple[int, int], transposed: bool, name: str,
                        warps: tuple[int, int, int]) -> Fragment:
    """:func:`mma_fragment` of one warp's part, embedded in the whole tile, with the warps' modes."""
    wm, wn, copies = warps
    rows, cols = dims
    # which tile dimension each warp-grid axis splits (M of A and C, N of B and C), and by how much
    m_dim = {"A": 1 if transposed else 0, "C": 0, "B": None}[operand]
    n_dim = {"B": 1 if transposed else 0, "C": 1, "A": None}[operand]
    part = [rows, cols]
    for d, w in ((m_dim, wm), (n_dim, wn)):
        if d is not None:
            if part[d] % w:
                raise FragmentError(f"the {rows}x{cols} {operand} tile does not split over {w} warps")
            part[d] //= w
    sub = mma_fragment(atom, operand, (part[0], part[1]), transposed, name)
    embed = Layout((part[0], part[1]), (1, rows))  # the part's column-major offsets in the whole tile's
    values = composition(embed, sub.layout[1])
    lanes = composition(embed, sub.layout[0])
    step_m = (part[0] if m_dim == 0 else rows * part[1]) if m_dim is not None else 0
    step_n = (part[0] if n_dim == 0 else rows * part[1]) if n_dim is not None else 0
    threads = make_layout(lanes, Layout((wm, wn, copies), (step_m, step_n, 0)))
    tv = TVLayout(make_layout(threads, values), dims)
    return Fragment(tuple(dims), tv, sub.packing, atom, operand, sub.tiles, transposed, name, tuple(warps))


def wgmma_block_fragment(atom: MMAAtom, dims: tuple[int, int], groups: tuple[int, int], name: str = "",
                         operand: str = "C") -> Fragment:
    """The block's ``M x N`` accumulator of a ``tile.wgmma`` shared by ``GM x GN`` warpgroups (its block
    form): warpgroup ``g`` holds the ``M/GM`` rows at ``(g % GM) M/GM`` and the ``N/GN`` columns at
    ``(g // GM) N/GN``; warp ``w`` of it the rows ``16 (w % 4)`` of each 64-row band, in ``atom``'s C
    fragment (the m16n8 C of a wgmma's registers). Atom tile ``(tp, tq)`` is band ``tp``, columns ``8 tq``.

    ``operand="A"``: the block's ``M x K`` A from registers, each warp its 16 rows of each band in the
    A fragment (atom tile ``(band, K step)``); the ``GN`` warpgroups of a row of the grid hold copies."""
    gm, gn = groups
    rows, cols = dims
    band = 64
    width = cols if operand == "A" else cols // gn
    if rows % (band * gm) or (operand == "C" and cols % gn) or width % 8 or gm < 1 or gn < 1:
        raise FragmentError(f"the {rows}x{cols} {operand} tile does not split into {gm}x{gn} warpgroups of "
                            f"{band}-row bands")
    atom_tv, (p, q) = _atom_layouts(atom, operand)
    if width % q:
        raise FragmentError(f"the {rows}x{cols} {operand} tile is not a multiple of {atom.name}'s {p}x{q} atom")
    embed = Layout((p, q), (1, rows))  # the atom's column-major offsets in the whole tile's
    per_group = rows // gm
    tiles = (per_group // band, width // q)
    values = make_layout(composition(embed, atom_tv.layout[1]), Layout(tiles, (band, q * rows)))
    across_n = 0 if operand == "A" else rows * width  # the groups along N: copies of A, columns of C
    threads = make_layout(composition(embed, atom_tv.layout[0]),
                          Layout((band // p, gm, gn), (p, per_group, across_n)))
    tv = TVLayout(make_layout(threads, values), dims)
    if operand == "C" and not tv.covers_once():
        raise FragmentError(f"fragment {tv.layout} does not cover the {rows}x{cols} tile once (a bug in tilec)")
    packing = 2 if operand == "A" else 1
    return Fragment(tuple(dims), tv, packing, atom, operand, tiles, False, name)


def _type_bits(name: str) -> int:
    return {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "s8": 8, "e4m3": 8, "e5m2": 8, "s32": 32}[name]


def fma_fragment(operand: str, dims: tuple[int, int], lanes: tuple[int, int], thread_tile: tuple[int, int],
                 transposed: bool = False, name: str = "") -> Fragment:
    """A SIMT (``fma_f32``) fragment: an ``LM x LN`` grid of lanes numbered row-major
    (lane ``i * LN + j``), each owning a ``TM x TN`` block of C.

    C (M x N): lane (i, j) holds rows ``i*TM ..``, columns ``j*TN ..``; value
    ``a + TM*b`` is element ``(i*TM + a, j*TN + b)``. A (M x K, or K x M
    ``transposed``): the lane's TM rows at every k (value ``a + TM*k``; the LN
    lanes of a row hold the same values: stride 0). B (N x K in the atom's
    coordinates; a K x N tile is ``transposed``): its TN columns at every k
    (value ``b + TN*k``).
    """
    lm, ln = lanes
    tm, tn = thread_tile
    rows, cols = dims
    if lm * ln != WARP:
        raise FragmentError(f"fma lanes {lm}x{ln} are not a warp")
    if operand == "C":
        if (rows, cols) != (lm * tm, ln * tn):
            raise FragmentError(f"fma C tile {rows}x{cols} is not {lm}x{ln} lanes of {tm}x{tn}")
        thr = Layout((ln, lm), (rows * tn, tm))
        val = Layout((tm, tn), (1, rows))
    else:
        # the operand's coordinates (p, k): p is m for A, n for B
        pt, kt = (cols, rows) if transposed else (rows, cols)
        sp, sk = (rows, 1) if transposed else (1, rows)
        if operand == "A":
            if pt != lm * tm:
                raise FragmentError(f"fma A tile {rows}x{cols}: {lm} lane rows x {tm} != {pt}")
            thr = Layout((ln, lm), (0, tm * sp))
            val = Layout((tm, kt), (sp, sk))
        else:
            if pt != ln * tn:
                raise FragmentError(f"fma B tile {rows}x{cols}: {ln} lane columns x {tn} != {pt}")
            thr = Layout((ln, lm), (tn * sp, 0))
            val = Layout((tn, kt), (sp, sk))
    return Fragment(tuple(dims), TVLayout(make_layout(thr, val), dims), 1, None, operand, (1, 1), transposed, name)


def tile_fragment(dims: tuple[int, int], layout: Layout, packing: int = 1, name: str = "") -> Fragment:
    """The fragment a register tile type carries (``!tile.rt<MxNxT, LAYOUT>``), as tile-distribute uses it."""
    return Fragment(tuple(dims), TVLayout(layout, tuple(dims)), packing, name=name)


def transposed_fragment(frag: Fragment, name: str = "") -> Fragment:
    """The fragment of the transposed tile that keeps every lane's values in order (``tile.transpose``:
    no data moves); FragmentError where no layout expresses it."""
    try:
        tv = frag.tv.transposed()
    except ValueError as e:
        raise FragmentError(str(e)) from None
    return Fragment(tv.tile, tv, frag.packing, name=name or frag.name)


def row_major_index(coord: tuple[int, ...], dims: tuple[int, ...]) -> int:
    """The position of ``coord`` in a ``dims`` tile read row by row (numpy's order)."""
    index = 0
    for c, d in zip(coord, dims):
        index = index * d + c
    return index


def _bit_linear_fragment(coord, threads: int, values: int, dims: tuple[int, int], what: str, name: str) -> Fragment:
    """The fragment of a ``dims`` tile whose thread ``t`` holds ``coord(t, v)`` as value ``v``, where a layout
    expresses it: the column-major offsets bit-linear in the thread and the value (FragmentError else)."""
    if thread_bits(threads) is None or values & (values - 1):
        raise FragmentError(f"{what}: {threads} threads and {values} values are not powers of two")
    rows = dims[0]

    def offset(t: int, v: int) -> int:
        r, c = coord(t, v)
        return r + rows * c  # column-major, as TV layouts are

    by_thread = linear_fields([offset(t, 0) for t in range(threads)])
    by_value = linear_fields([offset(0, v) for v in range(values)])
    if by_thread is None or by_value is None or by_thread[0] != 0:
        raise FragmentError(f"{what} as a {dims[0]}x{dims[1]} tile is not bit-linear in the thread and the value")
    tv = TVLayout(make_layout(_field_layout(by_thread[1], threads.bit_length() - 1),
                              _field_layout(by_value[1], values.bit_length() - 1)), tuple(dims))
    if any(tv.offset(t, v) != offset(t, v) for t in range(threads) for v in range(values)):
        raise FragmentError(f"{what} as a {dims[0]}x{dims[1]} tile is not additive in the thread and the value")
    return Fragment(tuple(dims), tv, name=name)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def reshaped_fragment(frag: Fragment, dims: tuple[int, int], name: str = "") -> Fragment:
    """The fragment of the ``dims`` tile that holds ``frag``'s elements in the same registers, each at
    the coordinates of its row-major index in the new shape (``tile.reshape``: no data moves);
    FragmentError where no layout expresses it."""

    def coord(t: int, v: int) -> tuple[int, int]:
        return divmod(row_major_index(frag.tv.coord(t, v), frag.dims), dims[1])

    return _bit_linear_fragment(coord, frag.tv.num_threads, frag.num_values, dims, frag.describe(), name or frag.name)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def reshaped_vector_fragment(frag: Fragment, length: int, orientation: str) -> "VectorFragment":
    """The fragment of the vector that holds ``frag``'s elements (a tile's, flattened in row-major order)
    in the same registers (``tile.reshape`` of a tile to a vector: no data moves); FragmentError where no
    vector fragment expresses it."""
    threads, values = frag.tv.num_threads, frag.num_values
    if thread_bits(threads) is None or values & (values - 1) or frag.dims[0] * frag.dims[1] != length:
        raise FragmentError(f"{frag.describe()} has no vector of {length} in its registers")
    index = [[row_major_index(frag.tv.coord(t, v), frag.dims) for v in range(values)] for t in range(threads)]
    return _bit_linear_vector(index, length, orientation, f"{frag.describe()} read as a vector of {length}")


def _bit_linear_vector(index: list[list[int]], length: int, orientation: str, what: str) -> "VectorFragment":
    """The vector fragment whose thread ``t`` holds element ``index[t][v]`` as value ``v``, where a layout
    expresses it (bit-linear in the thread and the value), else FragmentError."""
    threads, values = len(index), len(index[0])
    by_thread = linear_fields([index[t][0] for t in range(threads)])
    by_value = linear_fields(index[0])
    if by_thread is None or by_value is None or by_thread[0] != 0:
        raise FragmentError(f"{what} is not bit-linear")
    tv = TVLayout(make_layout(_field_layout(by_thread[1], threads.bit_length() - 1),
                              _field_layout(by_value[1], values.bit_length() - 1)), (length,))
    if any(tv.offset(t, v) != index[t][v] for t in range(threads) for v in range(values)):
        raise FragmentError(f"{what} is not additive")
    vf = VectorFragment(tv, orientation)
    vf.lane_fields  # noqa: B018 - raises FragmentError where tile-distribute could not address it
    return vf


@lru_cache(maxsize=4096)
def joined_vector_fragment(part: "VectorFragment", interleaved: bool) -> "VectorFragment":
    """The fragment of ``tile.join`` of two vectors held in ``part``: each thread holds both parts' elements
    of its ``part`` values, value ``2 u + p`` being part ``p``'s value ``u`` (:func:`joined_fragment`'s rule
    for vectors); FragmentError where no layout expresses it."""
    threads, values, n = part.tv.num_threads, part.num_values, part.length
    if thread_bits(threads) is None or values & (values - 1):
        raise FragmentError(f"vector fragment {part.layout} joined: {threads} threads and {values} values")
    index = [[joined_coord(part.tv.coord(t, v // 2), v % 2, 0, n, interleaved)[0] for v in range(2 * values)]
             for t in range(threads)]
    return _bit_linear_vector(index, 2 * n, part.orientation, f"vector fragment {part.layout} joined")


def joined_coord(coord: tuple[int, int], part: int, dim: int, extent: int, interleaved: bool) -> tuple[int, int]:
    """Where element ``coord`` of part ``part`` (0 or 1) of ``tile.join`` lands in the result: along ``dim``
    at ``2 x + part`` (``interleaved``) or ``x + part * extent`` (one part after the other; ``extent``
    is a part's extent along ``dim``)."""
    x = 2 * coord[dim] + part if interleaved else coord[dim] + part * extent
    if len(coord) == 1:  # a vector's
        return (x,)
    return (x, coord[1]) if dim == 0 else (coord[0], x)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def joined_fragment(part: Fragment, dim: int, interleaved: bool, name: str = "") -> Fragment:
    """The fragment of ``tile.join`` of two tiles held in ``part``: each thread holds both parts' elements
    of its ``part`` values, value ``2 u + p`` being part ``p``'s value ``u`` (the registers are the
    parts', side by side); FragmentError where no layout expresses it."""
    extent = part.dims[dim]
    dims = (2 * part.dims[0], part.dims[1]) if dim == 0 else (part.dims[0], 2 * part.dims[1])

    def coord(t: int, v: int) -> tuple[int, int]:
        return joined_coord(part.tv.coord(t, v // 2), v % 2, dim, extent, interleaved)

    return _bit_linear_fragment(coord, part.tv.num_threads, 2 * part.num_values, dims, f"{part.describe()} joined",
                                name or part.name)


def _split_coord(coord: tuple[int, int], dim: int, extent: int, interleaved: bool) -> tuple[int, tuple[int, int]]:
    """The inverse of :func:`joined_coord`: (part, coordinate in the part) of a result coordinate."""
    x = coord[dim]
    part, y = (x % 2, x // 2) if interleaved else (x // extent, x % extent)
    if len(coord) == 1:  # a vector's
        return part, (y,)
    return part, ((y, coord[1]) if dim == 0 else (coord[0], y))


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def join_plan(parts: tuple[Fragment, Fragment], whole: Fragment, dim: int, interleaved: bool) -> list[tuple[int, int]] | None:
    """For each value ``v`` of ``whole`` (the result of ``tile.join`` of tiles held in ``parts``), the
    ``(part, value)`` every thread holds its element in, or None where that differs between threads
    (then the values move through shared memory). A warp's parts feed a block's result by each warp's copy.
    Vectors' fragments too (``dim`` 0)."""
    threads, part_threads = whole.tv.num_threads, parts[0].tv.num_threads
    if threads % part_threads or parts[1].tv.num_threads != part_threads:
        return None
    extent = parts[0].tv.tile[dim]

    def found(t: int, v: int) -> tuple[int, tuple[int, int]]:
        return _split_coord(whole.tv.coord(t, v), dim, extent, interleaved)

    where = [{parts[p].tv.coord(0, u): u for u in range(parts[p].num_values)} for p in (0, 1)]
    plan = []
    for v in range(whole.num_values):
        p, at = found(0, v)
        if at not in where[p]:
            return None
        plan.append((p, where[p][at]))
    for t in range(1, threads):
        for v, (p, u) in enumerate(plan):
            if found(t, v) != (p, parts[p].tv.coord(t % part_threads, u)):
                return None
    return tuple(plan)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def paired_fragment(whole: Fragment, dim: int, interleaved: bool, name: str = "") -> Fragment:
    """``whole`` with the bit that tells ``tile.split``'s two parts apart (the lowest bit of the coordinate
    along ``dim`` for ``interleaved``, else its highest) moved from the thread into the value: the thread bit
    that sets it and the lowest value bit exchange places, so each thread holds both elements of its pairs
    (a conversion to it is one exchange between lanes ``lane ^ 2**k``: shuffles within a warp).
    FragmentError where no single thread bit sets it, or no value bit can take its place."""
    threads, values = whole.tv.num_threads, whole.num_values
    extent = whole.dims[dim]
    if thread_bits(threads) is None or values & (values - 1) or values < 2 or extent & (extent - 1):
        raise FragmentError(f"{whole.describe()}: no bit of the thread or value to exchange")
    pair = 1 if interleaved else extent // 2
    step = (pair, 0) if dim == 0 else (0, pair)  # the coordinate the pair bit adds
    origin = whole.tv.coord(0, 0)

    def added(thread: int, value: int) -> tuple[int, int]:
        r, c = whole.tv.coord(thread, value)
        return r - origin[0], c - origin[1]

    lane = next((k for k in range(threads.bit_length() - 1) if added(1 << k, 0) == step), None)
    if lane is None:
        raise FragmentError(f"{whole.describe()}: no thread bit alone sets the split's pair bit")
    for m in range(values.bit_length() - 1):
        v_bit, t_bit = 1 << m, 1 << lane

        def coord(t: int, v: int, v_bit=v_bit, t_bit=t_bit) -> tuple[int, int]:
            t2 = (t & ~t_bit) | (t_bit if v & v_bit else 0)
            v2 = (v & ~v_bit) | (v_bit if t & t_bit else 0)
            return whole.tv.coord(t2, v2)

        try:
            return _bit_linear_fragment(coord, threads, values, whole.dims, f"{whole.describe()} paired",
                                        name or whole.name)
        except FragmentError:
            continue
    raise FragmentError(f"{whole.describe()}: no value bit takes the split's pair bit")


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def part_fragment(whole: Fragment, dim: int, interleaved: bool, name: str = "") -> Fragment:
    """The fragment of both parts of ``tile.join`` whose result is held in ``whole`` such that the join
    moves no data: each thread holds the parts' elements of the result values it holds, in their order
    (value ``u`` of the parts is the ``u``-th result value of part 0); FragmentError where no layout
    expresses it or the threads do not hold both parts of each element."""
    dims = (whole.dims[0] // 2, whole.dims[1]) if dim == 0 else (whole.dims[0], whole.dims[1] // 2)
    extent = dims[dim]
    firsts = [v for v in range(whole.num_values) if _split_coord(whole.tv.coord(0, v), dim, extent, interleaved)[0] == 0]
    if 2 * len(firsts) != whole.num_values:
        raise FragmentError(f"{whole.describe()}: a thread does not hold both parts of its elements")
    frag = _bit_linear_fragment(lambda t, u: _split_coord(whole.tv.coord(t, firsts[u]), dim, extent, interleaved)[1],
                                whole.tv.num_threads, len(firsts), dims, f"{whole.describe()} split", name or whole.name)
    if join_plan((frag, frag), whole, dim, interleaved) is None:
        raise FragmentError(f"{whole.describe()}: its threads do not hold both parts of each element they hold")
    return frag


# ---------------------------------------------------------------- register vectors


@dataclass(frozen=True)
class VectorFragment:
    """A register vector's fragment: ``(lane, value) -> index`` into the vector, a TV layout over
    ``(length,)``. Lanes that hold the same rows (``row``) or columns (``col``) of the tile the
    vector belongs to hold the same values (stride 0 in their lane bits).

    For code generation it is split like a tile fragment: ``index(lane, v) = lane_part(lane) +
    positions[v]``, the lane part a sum of bit fields of the lane id (:attr:`lane_fields`).
    """

    tv: TVLayout
    orientation: str

    @property
    def layout(self) -> Layout:
        return self.tv.layout

    @property
    def length(self) -> int:
        return self.tv.tile[0]

    @property
    def axis(self) -> int:
        """The tile dimension the vector runs along: 0 for ``row`` vectors (one value per row)."""
        return 0 if self.orientation == "row" else 1

    @property
    def num_values(self) -> int:
        return self.tv.num_values

    @property
    def num_registers(self) -> int:
        return self.tv.num_values

    packing = 1

    def with_packing(self, packing: int) -> "VectorFragment":
        if packing != 1:
            raise FragmentError("register vectors hold one value per register")
        return self

    @cached_property
    def positions(self) -> tuple[int, ...]:
        """Lane 0's index of each value."""
        return tuple(self.tv.offset(0, v) for v in range(self.num_values))

    @property
    def warps(self) -> int:
        return self.tv.num_threads // WARP

    @cached_property
    def lane_fields(self) -> tuple[BitField, ...]:
        """Bit fields of the lane (of the thread, for a block's vector) giving the index of its value 0."""
        threads = self.tv.num_threads
        lanes = [self.tv.offset(t, 0) for t in range(threads)]
        fields = bit_fields(lanes) if thread_bits(threads) is not None else None
        if fields is None or any(self.tv.offset(t, v) != lanes[t] + p for t in range(threads)
                                 for v, p in enumerate(self.positions)):
            raise FragmentError(f"vector fragment {self.layout} of {self.length} is not lane + value additive "
                                "with bit-linear lanes")
        return fields

    def values_of(self, tile: Fragment) -> tuple[int, ...]:
        """For each value of the tile fragment ``tile``, the vector value (of the same lane) at its
        row (``row``) or column (``col``): what a broadcast of this vector over the tile reads."""
        axis = self.axis
        fields = tile.lane_fields[axis]
        if fields != self.lane_fields:
            raise FragmentError(f"vector fragment {self.layout} does not live in the lanes of the tile fragment "
                                f"{tile.layout} (its lanes hold other {'rows' if axis == 0 else 'columns'})")
        where = {p: v for v, p in enumerate(self.positions)}
        try:
            return tuple(where[c[axis]] for c in tile.value_coords)
        except KeyError as missing:
            raise FragmentError(f"vector fragment {self.layout} holds no value at lane 0's "
                                f"{'row' if axis == 0 else 'column'} {missing} of the tile fragment "
                                f"{tile.layout}") from None


def _field_layout(fields: tuple[BitField, ...], bits: int) -> Layout:
    """``sum(field(i))`` for ``i < 2**bits`` as a layout: each field one mode, the bits between stride 0."""
    shape: list[int] = []
    stride: list[int] = []
    at = 0
    for f in sorted(fields, key=lambda f: f.shift):
        if f.shift > at:
            shape.append(1 << (f.shift - at))
            stride.append(0)
        shape.append(1 << f.width)
        stride.append(f.scale)
        at = f.shift + f.width
    if at < bits:
        shape.append(1 << (bits - at))
        stride.append(0)
    if not shape:
        return Layout(1, 0)
    return Layout(shape[0], stride[0]) if len(shape) == 1 else Layout(tuple(shape), tuple(stride))


def vector_fragment(tile: Fragment, orientation: str) -> VectorFragment:
    """The fragment of a ``row`` (``col``) vector that lives in the lanes of ``tile``: each lane
    holds the values of the rows (columns) its tile values are in, in increasing order."""
    axis = 0 if orientation == "row" else 1
    lane = _field_layout(tile.lane_fields[axis], thread_bits(tile.tv.num_threads))
    positions = sorted({c[axis] for c in tile.value_coords})
    found = linear_fields(positions)
    if found is not None and found[0] == 0:
        value = _field_layout(found[1], len(positions).bit_length() - 1)
    elif (value := _enumerating_layout(positions)) is None:
        raise FragmentError(f"the {orientation}s the lanes of fragment {tile.layout} hold, {positions}, are "
                            "not a layout")
    layout = make_layout(lane, value)
    vf = VectorFragment(TVLayout(layout, (tile.dims[axis],)), orientation)
    if vf.positions != tuple(positions):
        raise FragmentError(f"vector fragment {layout} does not enumerate {positions} (a bug in tilec)")
    return vf


def _enumerating_layout(positions: list[int]) -> Layout | None:
    """A layout whose values, in order, are ``positions`` (increasing, from 0), as a product of
    arithmetic runs: ``[0, 1, 8, 9, 16, 17]`` is ``(2,3):(1,8)``; None when they are no such product."""
    if not positions or positions[0] != 0:
        return None
    modes: list[tuple[int, int]] = []
    size = 1
    while size < len(positions):
        stride = positions[size]
        count = 1
        while (count + 1) * size <= len(positions) and all(
                positions[count * size + j] == count * stride + positions[j] for j in range(size)):
            count += 1
        if count == 1 or len(positions) % (count * size):
            return None
        modes.append((count, stride))
        size *= count
    return _modes(modes)


def spread_vector_fragment(length: int, orientation: str) -> VectorFragment:
    """A vector that belongs to no tile, spread over the warp: lane ``t`` holds elements ``t, t + 32, ..``
    (a length that 32 divides), element ``t mod length`` (a length that divides 32), else all of them."""
    if length % WARP == 0:
        layout = Layout((WARP, length // WARP), (1, WARP))
    elif WARP % length == 0:
        layout = Layout(((length, WARP // length), 1), ((1, 0), 0))
    else:
        layout = Layout((WARP, length), (0, 1))
    return VectorFragment(TVLayout(layout, (length,)), orientation)


def row_major_fragment(dims: tuple[int, int], name: str = "") -> Fragment:
    """A warp's lanes along the columns of each row, ``v`` consecutive columns a lane (``v`` = 8, 4, 2
    or 1: the widest that tiles the row), repeated along the row, then over the rows: lane ``t`` holds
    columns ``t v .. t v + v - 1`` (+ 32 v k) of every row. Loads and stores of a row are runs of ``v``
    elements per lane (16-byte vectors for 16-bit types), consecutive lanes on consecutive runs."""
    rows, cols = dims
    v = next((w for w in (8, 4, 2, 1) if cols % (WARP * w) == 0), None)
    if v is None:
        raise FragmentError(f"register tile {name or ''} of {rows}x{cols} feeds no mma, is not a multiple of "
                            "16x8 and its rows are not a multiple of 32 elements: no fragment for it")
    reps = cols // (WARP * v)
    thr = Layout(WARP, rows * v)
    modes = [(n, d) for n, d in ((v, rows), (rows, 1), (reps, WARP * v * rows)) if n > 1] or [(1, 0)]
    val = Layout(modes[0][0], modes[0][1]) if len(modes) == 1 else \
        Layout(tuple(n for n, _ in modes), tuple(d for _, d in modes))
    return Fragment(tuple(dims), TVLayout(make_layout(thr, val), tuple(dims)), name=name)


def _modes(modes: list[tuple[int, int]]) -> Layout:
    """A layout of the ``(size, stride)`` modes of size > 1 (``1:0`` when none is)."""
    modes = [(n, d) for n, d in modes if n > 1] or [(1, 0)]
    if len(modes) == 1:
        return Layout(*modes[0])
    return Layout(tuple(n for n, _ in modes), tuple(d for _, d in modes))


def _pow2_divisor(n: int, limit: int) -> int:
    """The largest power of two that divides ``n`` and is at most ``limit``."""
    p = 1
    while p * 2 <= limit and n % (p * 2) == 0:
        p *= 2
    return p


def block_fragment(dims: tuple[int, int], threads: int, vector: int = 8, name: str = "") -> Fragment:
    """A tile of the whole block (``threads``, a power of two of at least a warp), row-major: each
    thread holds runs of ``v`` consecutive columns (``v``: the widest power of two up to ``vector``
    that divides the row and leaves no thread without values where the tile has enough), consecutive threads consecutive runs along a row, the runs of a row
    repeated every ``threads_along_row * v`` columns; threads left over go along the rows (thread
    ``t``'s rows are ``t // threads_along_row`` apart by the rows' thread count); threads left after
    that hold copies. A load or store of a row is one coalesced sweep of ``v``-element vectors
    (16 bytes for ``vector = 16 / element bytes``), and a row reduction is in registers, then a
    butterfly over the lanes, then across the warps through shared memory."""
    rows, cols = dims
    if thread_bits(threads) is None:
        raise FragmentError(f"a block tile needs a power of two of at least {WARP} threads, not {threads}")

    def spread(v: int) -> tuple[int, int]:
        along_row = _pow2_divisor(cols // v, threads)
        return along_row, _pow2_divisor(rows, threads // along_row)

    # the widest runs that leave no thread idle where the tile has enough values, unless narrower runs
    # spread the tile over more threads (rows of 1000 = 8 x 125: runs of 4 give 2 threads 500 values
    # each, single elements 8 threads 125 each)
    widths = [w for w in (1, 2, 4, 8, 16) if w <= min(vector, max(1, rows * cols // threads)) and cols % w == 0]
    v = max(widths, key=lambda w: (spread(w)[0] * spread(w)[1], w))
    along_row, along_col = spread(v)
    copies = threads // (along_row * along_col)
    thr = _modes([(along_row, v * rows), (along_col, 1), (copies, 0)])
    val = _modes([(v, rows), (cols // (v * along_row), along_row * v * rows), (rows // along_col, along_col)])
    return Fragment(tuple(dims), TVLayout(make_layout(thr, val), tuple(dims)), name=name)


def default_copy_layouts(dims: tuple[int, int], element_bytes: int, threads: int) -> tuple[Layout, Layout] | None:
    """The (thread, value) layouts of a block's copy of a ``dims`` tile without its own: up to 16 bytes a
    thread along a row, the threads along the row dividing the block's (else some threads idle:
    :func:`_copy_with_idle_threads`); None when a row has more vectors than the block has threads."""
    rows, cols = dims
    vec = max(1, 16 // element_bytes)
    while cols % vec:
        vec //= 2
    first = vec
    tn = cols // vec
    while tn > threads or threads % tn:
        vec *= 2
        if cols % vec:
            return _copy_with_idle_threads(rows, cols, first, threads)
        tn = cols // vec
    tm = threads // tn
    while tm > 1 and rows % tm:
        tm //= 2
    return Layout((tm, tn), (tn, 1)), Layout((1, vec), (1, 1))


def _copy_with_idle_threads(rows: int, cols: int, vec: int, threads: int) -> tuple[Layout, Layout] | None:
    """A row of ``cols / vec`` vectors no split of the block's threads covers (96 f16 columns: 12 vectors of
    16 bytes): that many threads along a row, the rows over a power of two of the rest, the others idle."""
    tn = cols // vec
    if tn > threads:
        return None
    tm = 1
    while 2 * tm * tn <= threads and rows % (2 * tm) == 0:
        tm *= 2
    return Layout((tm, tn), (tn, 1)), Layout((1, vec), (1, 1))


def copy_fragment(dims: tuple[int, int], thr: Layout, val: Layout, threads: int, name: str = "") -> Fragment | None:
    """The fragment of a ``dims`` tile in which each of the block's ``threads`` holds the elements it
    moves in a copy with thread and value layouts ``thr`` / ``val`` (tile-distribute's partition: thread
    ``thr((a, b))`` moves the ``val``-shaped block at ``(a, b)`` of each repeat of the thread grid): a
    copy's mask held so gives each copied run its bits without moving a register. Values in copy
    order (a run along the row, the repeats along the row, the value rows, the repeats along the
    rows); threads past the grid (idle in the copy) hold copies. None where the threads' coordinates
    are not bit fields of the thread id (a row of 12 vectors)."""
    rows, cols = dims
    tm_n, tn_n = thr[0].size(), thr[1].size()
    vm_n, vn_n = val[0].size(), val[1].size()
    size = tm_n * tn_n
    if thread_bits(threads) is None or size > threads or threads % size or rows % (tm_n * vm_n) \
            or cols % (tn_n * vn_n):
        return None
    where: dict[int, tuple[int, int]] = {}
    for a in range(tm_n):
        for b in range(tn_n):
            where.setdefault(thr((a, b)), (a, b))
    if sorted(where) != list(range(size)):
        return None
    offsets = [where[t % size][0] * vm_n + where[t % size][1] * vn_n * rows for t in range(threads)]
    found = linear_fields(offsets)
    if found is None or found[0] != 0:
        return None
    lane = _field_layout(found[1], thread_bits(threads))
    value = _modes([(vn_n, rows), (cols // (tn_n * vn_n), tn_n * vn_n * rows), (vm_n, 1), (rows // (tm_n * vm_n), tm_n * vm_n)])
    return Fragment(tuple(dims), TVLayout(make_layout(lane, value), tuple(dims)), name=name)


def default_copy_fragment(dims: tuple[int, int], element_bytes: int, threads: int, name: str = "") -> Fragment | None:
    """:func:`copy_fragment` of the block's default copy of a ``dims`` tile (:func:`default_copy_layouts`)."""
    layouts = default_copy_layouts(dims, element_bytes, threads)
    return None if layouts is None else copy_fragment(dims, *layouts, threads, name)


def default_fragment(dims: tuple[int, int], name: str = "") -> Fragment:
    """The fragment of a tile that feeds no mma: the f16 m16n8k16 C atom tiled over it, or, for a
    tile that is not a multiple of 16x8 (a few long rows), :func:`row_major_fragment`, or, for
    rows that 32 lanes do not divide either (6 x 100), :func:`block_fragment` over one warp's lanes."""
    try:
        return mma_fragment(MMA_M16N8K16_F16, "C", dims, name=name)
    except FragmentError:
        pass
    try:
        return row_major_fragment(dims, name)
    except FragmentError:
        return block_fragment(dims, WARP, name=name)


# ---------------------------------------------------------------- shared layouts


@lru_cache(maxsize=256)
def offset_table(layout: Layout | ComposedLayout, dims: tuple[int, int]) -> np.ndarray:
    """``table[i, j] == layout((i, j))`` for every coordinate of a ``dims`` tile."""
    out = _additive_table(layout, dims)
    if out is None:
        out = np.zeros(dims, dtype=np.int64)
        for i in range(dims[0]):
            for j in range(dims[1]):
                out[i, j] = layout((i, j))
    out.setflags(write=False)
    return out


def _additive_table(layout: Layout | ComposedLayout, dims: tuple[int, int]) -> np.ndarray | None:
    """:func:`offset_table` of a rank-2 layout (bare or under a swizzle) from its two modes:
    ``L((i, j)) == L((i, 0)) + L((0, j))``, then the swizzle on whole arrays (None: not such a layout)."""
    base, offset, swizzle = layout, 0, None
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.inner, Swizzle):
            return None
        base, offset, swizzle = layout.layout, layout.offset, layout.inner
    if not isinstance(base, Layout) or base.rank() != 2:
        return None
    rows = [base((i, 0)) + offset for i in range(dims[0])]
    cols = [base((0, j)) for j in range(dims[1])]
    if max(map(abs, rows), default=0) + max(map(abs, cols), default=0) >= 1 << 61:
        return None  # not int64 arithmetic
    out = np.add.outer(np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))
    if swizzle is not None:
        moved = out & swizzle.yyy_mask
        out = out ^ (moved >> swizzle.shift if swizzle.shift >= 0 else moved << -swizzle.shift)
    return out


def contiguous_runs(layout: Layout | ComposedLayout, dims: tuple[int, int], dim: int, width: int) -> bool:
    """Whether every aligned run of ``width`` elements along ``dim`` is contiguous and ``width``-aligned."""
    if dims[dim] % width:
        return False
    t = offset_table(layout, dims)
    if dim == 0:
        t = t.T
    runs = t.reshape(t.shape[0], t.shape[1] // width, width)
    return bool(np.all(runs == runs[..., :1] + np.arange(width)) and np.all(runs[..., 0] % width == 0))


def shared_swizzle(layout: Layout | ComposedLayout) -> tuple[Layout, int, Swizzle | None]:
    """(outer layout, offset, swizzle) of a shared layout ``Sw o off o L`` (or a plain ``L``)."""
    if isinstance(layout, Layout):
        return layout, 0, None
    if not isinstance(layout.inner, Swizzle):
        raise FragmentError(f"shared layout {layout}: only a swizzle may be composed with the layout")
    return layout.layout, layout.offset, layout.inner


# ---------------------------------------------------------------- ldmatrix


@dataclass(frozen=True)
class LdMatrix:
    """One ``ldmatrix.x{num}[.trans]``: matrix ``i`` fills register ``registers[i]``.

    ``rows[i]`` is the tile coordinate of row 0 of matrix ``i``; row ``j`` is
    ``rows[i] + j * step`` (``step`` the unit vector across memory rows).
    Lane ``8 i + j`` points at row ``j`` of matrix ``i``.
    """

    num: int
    trans: bool
    registers: tuple[int, ...]
    rows: tuple[tuple[int, int], ...]
    step: tuple[int, int]

    def lane_row(self, lane: int) -> tuple[int, int]:
        i, j = (lane // 8) % self.num, lane % 8
        (x, y), (sx, sy) = self.rows[i], self.step
        return x + j * sx, y + j * sy


def _matrix_of(frag: Fragment, reg: int, contig: int) -> tuple[bool, tuple[int, int]] | None:
    """(trans, origin) if register ``reg`` of all lanes is one 8x8 ldmatrix matrix, else None.

    An 8x8 matrix of 16-bit units is 8 rows of 16 bytes: 8 elements of 16 bits (packing 2), or 16 of
    8 bits (packing 4: lane ``t`` gets bytes ``4 (t % 4)`` to ``+3`` of row ``t / 4``; no ``.trans``,
    which would move 16-bit units, not bytes)."""
    per = frag.packing
    other = 1 - contig
    pts = {(t, h): frag.coord(t, v) for t in range(WARP) for h, v in enumerate(frag.register_values(reg))}
    origin = (min(c[0] for c in pts.values()), min(c[1] for c in pts.values()))
    if origin[contig] % (4 * per):
        return None
    for trans in (False, True) if per == 2 else (False,):
        ok = True
        for (t, h), c in pts.items():
            along = c[contig] - origin[contig]
            across = c[other] - origin[other]
            want = (t // 4, per * (t % 4) + h) if not trans else (per * (t % 4) + h, t // 4)
            if (across, along) != want:
                ok = False
                break
        if ok:
            return trans, origin
    return None


def plan_ldmatrix(frag: Fragment, contig: int) -> list[LdMatrix] | None:
    """The ldmatrix instructions that fill ``frag`` (16-bit, packing 2; or 8-bit, packing 4) from a tile
    contiguous along ``contig``.

    Registers are taken four at a time in order (x4), the rest by x2/x1; None
    if some register is not an ldmatrix matrix.
    """
    if frag.packing not in (2, 4):
        return None
    mats = []
    for r in range(frag.num_registers):
        found = _matrix_of(frag, r, contig)
        if found is None:
            return None
        mats.append((r, *found))
    step = (1, 0) if contig == 1 else (0, 1)
    plan: list[LdMatrix] = []
    i = 0
    while i < len(mats):
        trans = mats[i][1]
        n = 1
        while n < 4 and i + n < len(mats) and mats[i + n][1] == trans:
            n += 1
        num = 4 if n == 4 else 2 if n >= 2 else 1
        group = mats[i : i + num]
        plan.append(LdMatrix(num, trans, tuple(g[0] for g in group), tuple(g[2] for g in group), step))
        i += num
    return plan


def check_ldmatrix(frag: Fragment, plan: list[LdMatrix]) -> None:
    """Simulate the plan lane by lane: each lane receives exactly its fragment's registers."""
    per = frag.packing
    for ld in plan:
        for i, reg in enumerate(ld.registers):
            for t in range(WARP):
                got = []
                for h in range(per):
                    if not ld.trans:
                        src_lane, col = 8 * i + t // 4, per * (t % 4) + h
                    else:
                        src_lane, col = 8 * i + 2 * (t % 4) + h, t // 4
                    row = ld.lane_row(src_lane)
                    c = [row[0], row[1]]
                    c[1 if ld.step == (1, 0) else 0] += col
                    got.append(tuple(c))
                want = [frag.coord(t, v) for v in frag.register_values(reg)]
                if got != want:
                    raise FragmentError(f"ldmatrix plan does not reproduce register {reg} of lane {t}: {got} != {want}")


@lru_cache(maxsize=256)
def checked_ldmatrix_plan(frag: Fragment, contig: int) -> tuple[LdMatrix, ...] | None:
    """:func:`plan_ldmatrix`, checked by :func:`check_ldmatrix`, once per fragment and ``contig``
    (a GEMM loads the same A and B fragments at every K step)."""
    plan = plan_ldmatrix(frag, contig)
    if plan is None:
        return None
    check_ldmatrix(frag, plan)
    return tuple(plan)


def flat_modes(layout: Layout) -> list[tuple[int, int]]:
    """(shape, stride) leaves of a layout mode, innermost first."""
    return list(zip(flatten(layout.shape), flatten(layout.stride)))
