"""The numbers behind ``tile-tiling``: one checked plan of block → warp → atom tiles.

:func:`plan_tiling` turns the pass options (block tile, warp grid, atom, thread
tile) and the matmul's element types and transposes into a :class:`TilingPlan`,
or raises :class:`TilingConfigError` naming the option and the numbers. Every
constant the pass emits comes from here, and each is derived with the layout
algebra of :mod:`tilec.layout` rather than written as an index formula:

- **warps**: the block's ``WM x WN`` warps are numbered row-major,
  ``warp_layout = (WM,WN):(WN,1)``. The C block tile is cut into warp tiles
  with ``zipped_divide(block, (BM/WM, BN/WN))``; its rest mode, composed with
  ``right_inverse(warp_layout)`` (warp id → warp coordinate), is a layout from
  the warp id to the row (``warp_row``) and column (``warp_col``) of the
  warp's tile origin. The pass emits ``arith`` straight from those layouts
  (:func:`layout_terms`): for 2x2 warps of 32x32, ``warp_row = (2,2):(0,32)``
  is ``(w / 2) * 32`` and ``warp_col = (2,2):(32,0)`` is ``(w % 2) * 32``.
- **atoms**: ``zipped_divide(warp tile x BK, atom MxNxK)``'s rest mode is the
  number of atoms per warp and K step (``atoms``; on the SIMT path the FMAs
  per lane, ``TM x TN x BK``); the divisions are checked first, so a bad
  config is an error, not a wrong tiling.
- **copies**: each shared tile is filled by a CuTe tiled copy: ``val = (1,V)``
  with ``V`` elements = 16 bytes along the contiguous (last) dimension,
  ``thr = (TR,TC):(TC,1)`` (row-major threads, ``TC`` vectors per row). The
  copy's TV layout, CuTe's ``right_inverse(raked_product(thr, val))`` reshaped
  to ``(threads, V)``, must cover the ``TR x TC*V`` copy tile exactly once, and
  the copy tile must divide the shared tile. When the tile has fewer 16-byte
  vectors than the block has threads, fewer threads copy (``thr`` is smaller
  than the block), the vectors stay 16 bytes.
- **SIMT** (atom ``fma_f32``): each lane computes a ``TM x TN`` block of C (the
  "2D thread tile"); the warp's 32 lanes form an ``a x b`` grid over its
  ``(TM*a) x (TN*b)`` warp tile (the rest mode of ``zipped_divide(warp tile,
  (TM, TN))``), numbered row-major: ``lane_layout = (a,b):(b,1)``, lane ``(i, j)`` owns rows ``i*TM ..`` and columns ``j*TN ..``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type
from xdsl.ir import Attribute
from xdsl.utils.exceptions import PassFailedException

from tilec.dialects.tile.attributes import MAX_CLUSTER_BLOCKS, MAX_SHARED_BYTES, MAX_THREADS_PER_BLOCK
from tilec.dialects.tile.types import FLOAT8_TYPES, element_bits
from tilec.layout import (
    FMA_F32,
    MMA_ATOMS,
    MMA_M16N8K8_TF32,
    MMA_M16N8K16_BF16,
    MMA_M16N8K16_F16,
    Layout,
    MMAAtom,
    TVLayout,
    coalesce,
    composition,
    raked_product,
    right_inverse,
    zipped_divide,
)
from tilec.layout.int_tuple import flatten

WARP_SIZE = 32
VECTOR_BYTES = 16
"""Each thread of a tiled global → shared copy moves one 16-byte vector at a time."""

DEFAULT_BLOCK = (128, 128, 32)
DEFAULT_WARPS = (2, 2)
LARGE_BLOCK_WARPS = (4, 2)
MAX_DEFAULT_WARP_TILE = 32 * 64
"""Default warps: 2x2, or 4x2 once 2x2 would give warp tiles above 32x64 elements: a 64x64 f32
accumulator, its fragments and the carried next-tile fragments of tile-pipeline do not fit in 255
registers without spilling on every epilogue, so the default (128x128 blocks) takes 8 warps."""
DEFAULT_THREAD_TILE = (8, 8)


class TilingConfigError(PassFailedException):
    """The ``tile-tiling`` options do not tile the problem; the message names the option and numbers."""


def _fail(message: str) -> None:
    raise TilingConfigError(f"tile-tiling: {message}")


def _text(values) -> str:
    return ",".join(str(v) for v in values)


# -- layouts to index terms -----------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """``((index / divisor) % modulus) * stride``; ``modulus`` None when the division is already in range."""

    divisor: int
    modulus: int | None
    stride: int


def layout_terms(layout: Layout) -> list[Term]:
    """A layout of one index (``index -> offset``) as a sum of :class:`Term`\\ s.

    Colexicographic: mode ``i`` of extent ``s_i`` sees ``(index / p_i) % s_i``
    with ``p_i`` the product of the extents before it, scaled by its stride.
    Extent-1 and stride-0 modes vanish; the last mode with extent > 1 needs no
    ``%`` (the index is below ``size(layout)``).
    """
    layout = coalesce(layout)
    shapes, strides = flatten(layout.shape), flatten(layout.stride)
    if not isinstance(shapes, tuple):
        shapes, strides = (shapes,), (strides,)
    total = layout.size()
    terms = []
    prefix = 1
    for s, d in zip(shapes, strides):
        if s > 1 and d != 0:
            terms.append(Term(prefix, None if prefix * s == total else s, d))
        prefix *= s
    return terms


# -- the plan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CopyPlan:
    """A block-wide tiled copy of a ``dims`` shared tile (row-major, last dimension contiguous)."""

    dims: tuple[int, int]
    vector: int
    thr: Layout
    val: Layout
    tv: Layout
    """``(thread, value) -> `` column-major offset in the ``TR x TC*V`` copy tile."""

    @property
    def threads(self) -> int:
        return self.thr.size()

    @property
    def copy_tile(self) -> tuple[int, int]:
        return (self.thr[0].size() * self.val[0].size(), self.thr[1].size() * self.val[1].size())

    @property
    def passes(self) -> int:
        r, c = self.copy_tile
        return (self.dims[0] // r) * (self.dims[1] // c)


@dataclass(frozen=True)
class TilingPlan:
    block: tuple[int, int, int]
    warps: tuple[int, int]
    group: int
    atom: MMAAtom
    thread_tile: tuple[int, int] | None
    """``(TM, TN)`` on the SIMT path (atom ``fma_f32``), else None."""
    element_bits: int
    transpose_a: bool
    transpose_b: bool
    warp_layout: Layout
    warp_row: Layout
    warp_col: Layout
    atoms: tuple[int, int, int]
    """Atoms per K step, M x N x K: ``mma.sync`` per warp, or ``fma`` per lane on the SIMT path."""
    lane_layout: Layout | None
    copy_a: CopyPlan
    copy_b: CopyPlan
    wgmma: bool = False
    """sm_90a warpgroup MMA: warp ``w`` holds rows ``16w ..`` of the block tile, all ``BN`` columns;
    the warps ``4g .. 4g+3`` multiply A's rows ``64g ..`` by B in shared memory (``tile.wgmma``)."""

    @property
    def threads(self) -> int:
        return WARP_SIZE * self.warps[0] * self.warps[1]

    @property
    def warp_tile(self) -> tuple[int, int]:
        return (self.block[0] // self.warps[0], self.block[1] // self.warps[1])

    @property
    def shared_a(self) -> tuple[int, int]:
        """A's shared tile in its global orientation: ``BM x BK``, or ``BK x BM`` when A is K x M."""
        bm, _, bk = self.block
        return (bk, bm) if self.transpose_a else (bm, bk)

    @property
    def shared_b(self) -> tuple[int, int]:
        _, bn, bk = self.block
        return (bn, bk) if self.transpose_b else (bk, bn)

    @property
    def smem_bytes(self) -> int:
        a, b = self.shared_a, self.shared_b
        return (a[0] * a[1] + b[0] * b[1]) * self.element_bits // 8

    @property
    def is_simt(self) -> bool:
        return self.thread_tile is not None


def default_atom(element_type: Attribute, tf32: bool) -> MMAAtom:
    if isinstance(element_type, Float16Type):
        return MMA_M16N8K16_F16
    if isinstance(element_type, BFloat16Type):
        return MMA_M16N8K16_BF16
    if isinstance(element_type, Float32Type):
        return MMA_M16N8K8_TF32 if tf32 else FMA_F32
    if isinstance(element_type, FLOAT8_TYPES):
        _fail(f"a and b have element type {element_type}: FP8 is multiplied by sm_90a's wgmma only (wgmma=true)")
    _fail(f"a and b have element type {element_type}; expected f16, bf16 or f32")
    raise AssertionError


_ATOM_INPUT = {"f16": Float16Type, "bf16": BFloat16Type, "tf32": Float32Type, "f32": Float32Type}


def _pick_atom(atom: str | None, element_type: Attribute, tf32: bool) -> MMAAtom:
    if tf32 and not isinstance(element_type, Float32Type):
        _fail(f"tf32=true rounds f32 operands to tf32 for the tensor cores, but a and b are {element_type}")
    if atom is None or atom == "":
        return default_atom(element_type, tf32)
    if atom not in MMA_ATOMS:
        _fail(f"atom={atom} is not an MMA atom; expected one of {', '.join(sorted(MMA_ATOMS))}")
    chosen = MMA_ATOMS[atom]
    if chosen.a_type not in _ATOM_INPUT:
        _fail(f"atom={atom} multiplies {chosen.a_type} by {chosen.b_type}; tile.matmul tiles f16, bf16 and f32 "
              f"products with atoms of {', '.join(n for n, a in MMA_ATOMS.items() if a.a_type in _ATOM_INPUT)}")
    if not isinstance(element_type, _ATOM_INPUT[chosen.a_type]):
        _fail(f"atom={atom} multiplies {chosen.a_type} inputs, but a and b are {element_type}")
    if tf32 and chosen is FMA_F32:
        _fail("tf32=true asks for tensor cores, atom=fma_f32 for SIMT FMAs: give one of them")
    return chosen


MAX_BLOCK_EXTENT = 1024
"""The largest BM, BN or BK an option may ask for (a block tile of more has no register or shared
memory budget on any GPU): checked when the options are given, before any IR is seen."""


MAX_GROUP = 2**31 - 1
"""The largest ``group`` (block rows per group of the grid's order): no grid has more rows of blocks."""


def check_options(block=None, warps=None, group=None, thread_tile=None) -> None:
    """What tile-tiling's options must be whatever the IR: positive, and ``block`` within
    :data:`MAX_BLOCK_EXTENT` (a :class:`TilingConfigError` naming the option)."""
    if block is not None:
        block = _positive("block", block, 3, "BM,BN,BK")
        if max(block) > MAX_BLOCK_EXTENT:
            _fail(f"block={_text(block)}: each of BM,BN,BK must be at most {MAX_BLOCK_EXTENT}")
    if warps is not None:
        wm, wn = _positive("warps", warps, 2, "WM,WN")
        if WARP_SIZE * wm * wn > MAX_THREADS_PER_BLOCK:
            _fail(f"warps={wm},{wn} is {wm * wn} warps, {WARP_SIZE * wm * wn} threads per block; the limit is "
                  f"{MAX_THREADS_PER_BLOCK}")
    if group is not None and (not isinstance(group, int) or group <= 0):
        _fail(f"group={group}: expected a positive number of block rows per group")
    if group is not None and group > MAX_GROUP:
        _fail(f"group={group}: at most {MAX_GROUP} block rows per group (a grid has at most 2^31 - 1 blocks)")
    if thread_tile is not None:
        _positive("thread_tile", thread_tile, 2, "TM,TN")


def _positive(name: str, values, count: int, what: str) -> tuple[int, ...]:
    values = tuple(values)
    if len(values) != count or any(not isinstance(v, int) or v <= 0 for v in values):
        _fail(f"{name}={_text(values)}: expected {count} positive integers {what}")
    return values


def _simt_warps(block, thread_tile) -> tuple[int, int]:
    """Warps for the SIMT path when none are given: as many as the thread tile asks, warp tiles near square."""
    bm, bn, _ = block
    tm, tn = thread_tile
    if bm % tm or bn % tn:
        _fail(f"thread_tile={tm},{tn} does not divide the {bm}x{bn} block tile (block={_text(block)})")
    threads = (bm // tm) * (bn // tn)
    if threads % WARP_SIZE:
        _fail(
            f"block={_text(block)} with thread_tile={tm},{tn} needs {threads} threads, "
            f"not a whole number of {WARP_SIZE}-thread warps"
        )
    warps = threads // WARP_SIZE
    best = None
    for wm in range(1, warps + 1):
        if warps % wm:
            continue
        wn = warps // wm
        if bm % (wm * tm) or bn % (wn * tn):
            continue
        a, b = bm // wm // tm, bn // wn // tn
        key = (abs(math.log2(a / b)), a > b)  # near-square lane grid, more lanes along N on a tie
        if best is None or key < best[0]:
            best = (key, (wm, wn))
    if best is None:
        _fail(f"no warp grid splits block={_text(block)} into warps of 32 lanes with thread_tile={tm},{tn}")
    return best[1]


def _copy_plan(dims: tuple[int, int], bits: int, threads: int, operand: str, block) -> CopyPlan:
    rows, cols = dims
    vector = VECTOR_BYTES * 8 // bits
    if cols % vector:
        _fail(
            f"block={_text(block)}: the shared tile of {operand} is {rows}x{cols}; its rows of {cols} elements "
            f"are not a whole number of {VECTOR_BYTES}-byte vectors ({vector} elements of {bits} bits)"
        )
    vecs = cols // vector
    tc = math.gcd(vecs, threads)  # threads along a row, each one vector
    tr = math.gcd(rows, threads // tc)  # rows copied at once
    thr = Layout((tr, tc), (tc, 1))
    val = Layout((1, vector))
    # CuTe's make_tiled_copy: (m, n) -> (thr, val) is raked_product(thr, val); its inverse is the TV layout.
    tv = composition(right_inverse(raked_product(thr, val)), Layout((tr * tc, vector)))
    copy_tile = (tr, tc * vector)
    tvl = TVLayout(tv, copy_tile)
    if not tvl.covers_once() or rows % copy_tile[0] or cols % copy_tile[1]:
        _fail(f"the tiled copy thr {thr} val {val} does not tile the {rows}x{cols} shared tile of {operand}")
    first = tvl.thread_coords(0)
    if any(c != (0, v) for v, c in enumerate(first)):  # one contiguous vector along the row
        _fail(f"the tiled copy thr {thr} val {val} does not give thread 0 a contiguous vector")
    return CopyPlan(dims, vector, thr, val, tv)


MAX_ACCUMULATOR_REGISTERS = 224
"""f32 accumulator registers a lane may hold (255 a thread, less addresses and operands): a warp tile
beyond it is refused when the options are read, not after the register passes have run."""

WGMMA_MAX_N = 256
"""The widest wgmma (m64n256k16): a block tile's BN with ``wgmma``."""


def _wgmma_warps(block, warps, element_type, transpose_a: bool, transpose_b: bool, atom, tf32: bool) -> tuple[int, int]:
    """The warps of a ``wgmma`` tiling, ``(BM/16, 1)``, after checking what it supports."""
    bm, bn, bk = block
    fp8 = isinstance(element_type, FLOAT8_TYPES)
    if not isinstance(element_type, (Float16Type, BFloat16Type, *FLOAT8_TYPES)) or atom is not None or tf32:
        _fail(f"wgmma=true: needs f16, bf16, f8E4M3FN or f8E5M2 operands and no atom or tf32 option, got {element_type}")
    if transpose_a:
        _fail("wgmma=true: A must be M x K in memory (row-major); a transposed A is not supported yet "
              "(B may be either: K x N, or N x K with transpose_b)")
    if fp8 and not transpose_b:
        _fail(f"wgmma=true: {element_type} operands are read K-major only: B must be stored N x K (transpose_b)")
    k_step = 32 if fp8 else 16
    if bm % 64 or bn % 8 or bn > WGMMA_MAX_N or bk % k_step:
        _fail(f"block={_text(block)}: wgmma=true needs BM a multiple of 64 (warpgroups of 64 rows), "
              f"BN a multiple of 8 up to {WGMMA_MAX_N} and BK a multiple of {k_step} (32 bytes of {element_type})")
    expected = (bm // 16, 1)
    if warps is not None and tuple(warps) != expected:
        _fail(f"warps={_text(warps)}: with wgmma=true each warp holds 16 rows of the block tile: warps={_text(expected)}")
    return expected


def plan_tiling(
    *,
    element_type: Attribute,
    transpose_a: bool = False,
    transpose_b: bool = False,
    block=DEFAULT_BLOCK,
    warps=None,
    group: int = 8,
    atom: str | None = None,
    tf32: bool = False,
    thread_tile=DEFAULT_THREAD_TILE,
    wgmma: bool = False,
) -> TilingPlan:
    """Check the options against each other and the device, and derive every constant of the tiling."""
    block = _positive("block", block, 3, "BM,BN,BK")
    if wgmma:
        warps = _wgmma_warps(block, warps, element_type, transpose_a, transpose_b, atom, tf32)
    if not isinstance(group, int) or group <= 0:
        _fail(f"group={group}: expected a positive number of block rows per group")
    if wgmma and isinstance(element_type, FLOAT8_TYPES):
        chosen = MMA_M16N8K16_F16  # only its m16n8 C fragment is used: a wgmma's accumulator per warp
    else:
        chosen = _pick_atom(atom, element_type, tf32)
    simt = chosen is FMA_F32
    tt = _positive("thread_tile", thread_tile, 2, "TM,TN") if simt else None
    if warps is None:
        if simt:
            warps = _simt_warps(block, tt)
        else:
            big = block[0] * block[1] // (DEFAULT_WARPS[0] * DEFAULT_WARPS[1]) > MAX_DEFAULT_WARP_TILE
            warps = LARGE_BLOCK_WARPS if big and block[0] % 64 == 0 else DEFAULT_WARPS
    warps = _positive("warps", warps, 2, "WM,WN")
    bm, bn, bk = block
    wm, wn = warps
    threads = WARP_SIZE * wm * wn
    if threads > MAX_THREADS_PER_BLOCK:
        _fail(f"warps={wm},{wn} is {wm * wn} warps, {threads} threads per block; the limit is {MAX_THREADS_PER_BLOCK}")

    # block tile -> warp tiles
    am, an, ak = chosen.shape_mnk
    if simt:
        tm, tn = tt
        for dim, size, w, t, name in (("BM", bm, wm, tm, "WM·TM"), ("BN", bn, wn, tn, "WN·TN")):
            if size % (w * t):
                _fail(f"block={_text(block)}: {dim}={size} is not a multiple of {name} = {w}·{t} = {w * t} "
                      f"(warps={wm},{wn}, thread_tile={tm},{tn})")
        # the warp tile cut into thread tiles: the rest mode is the lane grid
        lanes = tuple(flatten(zipped_divide(Layout((bm // wm, bn // wn)), (tm, tn))[1].shape))
        if lanes[0] * lanes[1] != WARP_SIZE:
            try:
                hint = f" (try warps={_text(_simt_warps(block, tt))})"
            except TilingConfigError:
                hint = ""
            _fail(
                f"block={_text(block)} warps={wm},{wn} thread_tile={tm},{tn}: a {bm // wm}x{bn // wn} warp tile "
                f"of {tm}x{tn} thread tiles has {lanes[0]}x{lanes[1]} = {lanes[0] * lanes[1]} lanes, "
                f"a warp has {WARP_SIZE}{hint}"
            )
        lane_layout = Layout(lanes, (lanes[1], 1))
    else:
        for dim, size, w, a in (("BM", bm, wm, am), ("BN", bn, wn, an)):
            if size % (w * a):
                _fail(
                    f"block={_text(block)}: {dim}={size} is not a multiple of warps × atom = {w}·{a} = {w * a} "
                    f"(warps={wm},{wn}, atom {chosen.name} is {am}x{an}x{ak})"
                )
        lane_layout = None
    if bk % ak:
        _fail(f"block={_text(block)}: BK={bk} is not a multiple of the atom's K = {ak} ({chosen.name})")

    warp_layout = Layout((wm, wn), (wn, 1))
    warp_tile = (bm // wm, bn // wn)
    accumulators = warp_tile[0] * warp_tile[1] // WARP_SIZE  # f32 registers a lane holds of C
    if accumulators > MAX_ACCUMULATOR_REGISTERS:
        _fail(f"block={_text(block)} warps={wm},{wn}: a {warp_tile[0]}x{warp_tile[1]} warp tile is {accumulators} "
              f"accumulator registers a lane, more than {MAX_ACCUMULATOR_REGISTERS} (a thread has 255): use more "
              "warps or a smaller block")
    warp_of = right_inverse(warp_layout)  # warp id -> column-major index of (wm, wn)
    rows = zipped_divide(Layout((bm, bn), (1, 0)), warp_tile)  # ((tile),(warps)) -> row of C
    cols = zipped_divide(Layout((bm, bn), (0, 1)), warp_tile)  # ((tile),(warps)) -> column of C
    warp_row = coalesce(composition(rows[1], warp_of))
    warp_col = coalesce(composition(cols[1], warp_of))
    if simt:  # FMAs per lane and K step: its thread tile times BK
        atoms = (*tt, bk)
    else:  # mma.sync per warp and K step: the warp tile x BK divided by the atom
        atoms = tuple(flatten(zipped_divide(Layout((*warp_tile, bk)), (am, an, ak))[1].shape))

    bits = element_bits(element_type)
    shared_a = (bk, bm) if transpose_a else (bm, bk)
    shared_b = (bn, bk) if transpose_b else (bk, bn)
    plan = TilingPlan(
        block=block,
        warps=warps,
        group=group,
        atom=chosen,
        thread_tile=tt,
        element_bits=bits,
        transpose_a=transpose_a,
        transpose_b=transpose_b,
        warp_layout=warp_layout,
        warp_row=warp_row,
        warp_col=warp_col,
        atoms=atoms,
        lane_layout=lane_layout,
        copy_a=_copy_plan(shared_a, bits, threads, "A", block),
        copy_b=_copy_plan(shared_b, bits, threads, "B", block),
        wgmma=wgmma,
    )
    if plan.smem_bytes > MAX_SHARED_BYTES:
        _fail(
            f"block={_text(block)}: the shared tiles of A ({'x'.join(map(str, shared_a))}) and B "
            f"({'x'.join(map(str, shared_b))}) take {plan.smem_bytes} bytes, more than the "
            f"{MAX_SHARED_BYTES} bytes ({MAX_SHARED_BYTES // 1024} KB) of shared memory a block may use"
        )
    return plan


def check_cluster(cluster) -> tuple[int, ...]:
    """The ``cluster`` option in its canonical form (or a :class:`TilingConfigError` naming it):
    ``(1,)`` none; ``(C,)`` (also written ``C`` or ``C,1``) ``C`` blocks along M, which read the same
    tiles of B; ``(1, C)`` ``C`` blocks along N, which read the same tiles of A. At most
    :data:`MAX_CLUSTER_BLOCKS` blocks; not both axes: a 2-D cluster would share A's tiles among part
    of its blocks and B's among another part, and a multicast reaches the whole cluster."""
    shape = (cluster,) if type(cluster) is int else tuple(cluster) if isinstance(cluster, (tuple, list)) else None
    if (shape is None or not 1 <= len(shape) <= 2 or any(type(c) is not int or c < 1 for c in shape)
            or math.prod(shape) > MAX_CLUSTER_BLOCKS):
        raise TilingConfigError(f"tile-tiling: cluster must be C (1 .. {MAX_CLUSTER_BLOCKS} blocks along M) or "
                                f"CM,CN (blocks along M and N, at most {MAX_CLUSTER_BLOCKS} in all), got "
                                f"{_text(shape) if shape else repr(cluster)}")
    if len(shape) == 2 and min(shape) > 1:
        raise TilingConfigError(f"tile-tiling: cluster={_text(shape)}: a cluster spans blocks along M or along N, "
                                "not both (its blocks share one operand's tiles, which each multicast reaches in "
                                "every block of the cluster)")
    return (shape[0],) if len(shape) == 1 or shape[1] == 1 else (1, shape[1])


def cluster_shape(cluster) -> tuple[int, int]:
    """``(CM, CN)``: a checked ``cluster`` option's blocks along M and along N."""
    shape = check_cluster(cluster)
    return (shape[0], 1) if len(shape) == 1 else shape
