"""``tile-swizzle``: bank-conflict-free swizzled layouts for shared tiles.

Input: block-level tile IR. For every ``tile.alloc`` of a 2-D ``!tile.st``
whose layout is a plain compact layout (row-major ``(R,C):(C,1)`` or
column-major ``(R,C):(1,R)``), the pass

1. collects how the tile is used: ``tile.copy``/``tile.async_copy`` into it
   (16-byte vector stores; the op's ``thr``/``val`` layouts when it has them),
   ``tile.copy`` out of it (the same vectors, read), ``tile.load`` into
   register tiles (``ldmatrix`` rows; for 32-bit elements also the 32-bit mma
   fragment reads). A tile with none of these gets the default patterns of its
   element type; ``tile.store`` into it is not modelled (the register
   fragment is not known before ``tile-distribute``). Copies and loads of a
   window of the tile are counted over the whole tile (the swizzle repeats
   with a period of whole lines, so aligned windows see the same phases);
2. scores the candidates ``Swizzle(B, M, S)`` on those patterns with the bank
   model of :mod:`tilec.layout.banks` and picks the one with the fewest
   wavefronts, then the fewest bits (the conflict-free one with the smallest
   ``B`` when there is one; Triton's choice on GEMM tiles);
3. gives the alloc the type ``!tile.st<RxCxT, Sw<B,M,S> o 0 o (R,C):(C,1)>``.

A row-major tile that a ``tile.wgmma`` reads takes, instead, the layout the
hardware's descriptors read (:func:`tilec.layout.gmma.canonical_layout`:
128-byte swizzled rows, the columns in blocks of 128 bytes): what a bulk copy
writes, so that wgmma operands may also be filled by ``cp.async`` copies.

Shared tiles are only read and written through their layout, so a swizzle
permutes storage and keeps the program's meaning (the tests run kernels in the
interpreter before and after). Candidates that would make the tile's storage
larger are never chosen, so ``smem`` sizes stay right. Tiles that are already
swizzled, are not compact, are not 2-D, or flow into ops other than the
four above (block arguments, calls, ...) are left alone.

Option ``report=true`` puts the model's counts on every 2-D alloc as the
attribute ``tile.bank_conflicts``, e.g. ``"stores 1-way -> 1-way, ldmatrix
8-way -> 1-way"`` (the worst phase of each access pattern before and after),
or ``"kept: ..."`` with the counts of a tile left alone, or why it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tilec.dialects.tile.ops import AllocOp, AsyncCopyOp, CopyOp, LoadOp, StoreOp, WgmmaOp
from tilec.dialects.tile.types import SharedType, element_bits
from tilec.layout import ComposedLayout, Layout
from tilec.layout import banks
from tilec.layout.gmma import canonical_layout

REPORT_ATTR = "tile.bank_conflicts"

# A use of a shared tile, as hashable data: (pattern name, thr, val, vector bytes).
Use = tuple[str, Layout | None, Layout | None, int]


def tile_uses(alloc: AllocOp) -> tuple[tuple[Use, ...], Operation | None]:
    """The access patterns the users of ``alloc``'s tile issue, and the first user the pass cannot follow."""
    tile_type = alloc.result.type
    e = element_bits(tile_type.element_type) // 8
    uses: list[Use] = []
    for use in alloc.result.uses:
        op = use.operation
        if isinstance(op, (CopyOp, AsyncCopyOp)):
            into = op.dest is alloc.result
            thr = op.thr.data if op.thr is not None else None
            val = op.val.data if op.val is not None else None
            vector = banks.VECTOR_BYTES
            atom = getattr(op, "atom", None)
            if atom is not None and not atom.data.name.startswith("ldmatrix"):
                vector = min(banks.VECTOR_BYTES, atom.data.src.num_values * atom.data.elem_bits // 8)
            uses.append(("stores" if into else "copy-out", thr, val, vector))
        elif isinstance(op, LoadOp):
            uses.append(("ldmatrix", None, None, banks.VECTOR_BYTES))
            if e == 4:
                uses.append(("lds32", None, None, banks.BANK_BYTES))
        elif isinstance(op, StoreOp):
            continue  # register → shared: the fragment is chosen later; not modelled
        elif isinstance(op, WgmmaOp):
            uses.append(("wgmma", None, None, banks.VECTOR_BYTES))
        else:
            return (), op
    return tuple(dict.fromkeys(uses)), None


def _patterns(uses: tuple[Use, ...], e: int, dims: tuple[int, int], axis: int) -> dict[str, banks.Pattern]:
    uses = tuple(u for u in uses if u[0] != "wgmma")  # the hardware's descriptor reads: not a bank pattern
    if all(u == ("stores", None, None, banks.VECTOR_BYTES) for u in uses):
        # Only plain copies in, or no modelled use at all: a GEMM operand tile.
        return banks.default_patterns(e, dims, axis)
    builders: dict[str, list[banks.Pattern]] = {}
    for name, thr, val, vector in uses:
        if name in ("stores", "copy-out"):
            fn = banks.AccessPattern(banks.copy_stores, e, dims, thr=thr, val=val, vector_bytes=vector, axis=axis)
        elif name == "ldmatrix":
            fn = banks.AccessPattern(banks.ldmatrix_reads, e, dims, axis=axis)
        else:
            fn = banks.AccessPattern(banks.fragment_reads_32, e, dims, axis=axis)
        builders.setdefault(name, []).append(fn)
    order = ("stores", "copy-out", "ldmatrix", "lds32")
    return {name: banks.Patterns(builders[name]) for name in order if name in builders}


def _applicable(patterns: dict[str, banks.Pattern], layout) -> dict[str, banks.Pattern]:
    """The patterns that can run on ``layout`` (``ldmatrix`` needs 8-line, 16-byte multiples)."""
    ok = {}
    for name, fn in patterns.items():
        try:
            banks.report_of(fn, layout)
        except ValueError:
            continue
        ok[name] = fn
    return ok


@lru_cache(maxsize=256)
def choose(tile_type: SharedType, uses: tuple[Use, ...], max_bits: int = 3) -> banks.SwizzleChoice:
    """The swizzle for a compact 2-D shared tile used as ``uses`` say (cached per type and uses)."""
    base = tile_type.layout
    dims = tile_type.dims
    e = element_bits(tile_type.element_type) // 8
    order = banks.compact_order(base, dims)
    if order is None:
        raise ValueError(f"{tile_type}: not a compact row- or column-major layout")
    axis = 1 if order == "row" else 0
    patterns = _applicable(_patterns(uses, e, dims, axis), base)
    return banks.choose_swizzle_for(base, e, patterns, dims, max_bits)


def describe(tile_type: SharedType, uses: tuple[Use, ...]) -> str:
    """The counts of a tile's current layout, ``"stores 1-way, ldmatrix 1-way"``."""
    layout = tile_type.layout
    dims = tile_type.dims
    e = element_bits(tile_type.element_type) // 8
    try:
        axis = banks.contiguous_axis(layout, dims)
    except ValueError as err:
        return f"not modelled: {err}"
    patterns = _applicable(_patterns(uses, e, dims, axis), layout)
    if not patterns:
        return "no access pattern applies"
    return ", ".join(f"{name} {rep.ways}-way" for name, rep in banks.score(layout, patterns).items())


MAX_SWIZZLE_BITS = 5
"""The widest swizzle tried: 2^5 phases cover the 32 banks."""


@dataclass(frozen=True)
class TileSwizzlePass(ModulePass):
    """Swizzle the compact 2-D shared tiles so that their copies and ``ldmatrix`` reads are bank-conflict-free."""

    name = "tile-swizzle"

    report: bool = False
    """Attach ``tile.bank_conflicts`` (the model's before → after counts) to every 2-D alloc."""

    max_bits: int = 3
    """The largest ``B`` tried (``2^B`` phases)."""

    def __post_init__(self):
        if not isinstance(self.max_bits, int) or not 0 <= self.max_bits <= MAX_SWIZZLE_BITS:
            raise ValueError(f"max_bits={self.max_bits}: expected 0 .. {MAX_SWIZZLE_BITS}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for alloc in [o for o in op.walk() if isinstance(o, AllocOp)]:
            self._swizzle(alloc)

    def _note(self, alloc: AllocOp, text: str) -> None:
        if self.report:
            alloc.attributes[REPORT_ATTR] = StringAttr(text)

    def _swizzle(self, alloc: AllocOp) -> None:
        tile_type = alloc.result.type
        if not isinstance(tile_type, SharedType) or len(tile_type.dims) != 2:
            return
        uses, stranger = tile_uses(alloc)
        if stranger is not None:
            self._note(alloc, f"kept: used by {stranger.name}")
            return
        layout = tile_type.layout
        if isinstance(layout, ComposedLayout) or banks.compact_order(layout, tile_type.dims) is None:
            self._note(alloc, f"kept: {describe(tile_type, uses)}")
            return
        if any(u[0] == "wgmma" for u in uses):
            self._wgmma_operand(alloc, uses)
            return
        choice = choose(tile_type, uses, self.max_bits)
        if choice.swizzle is not None:
            new_type = SharedType(tile_type.dims, tile_type.element_type, choice.layout)
            Rewriter.replace_value_with_new_type(alloc.result, new_type)
        self._note(alloc, choice.summary() if choice.before else "no access pattern applies")


    def _wgmma_operand(self, alloc: AllocOp, uses: tuple[Use, ...]) -> None:
        """A tile a wgmma reads takes the layout its descriptors describe (the swizzle is the hardware's,
        not a choice); one that is not row-major, or whose rows no swizzle row divides, is kept and
        ``tile-distribute`` names why no descriptor fits."""
        tile_type = alloc.result.type
        rows, cols = tile_type.dims
        e = element_bits(tile_type.element_type) // 8
        row_major = banks.compact_order(tile_type.layout, tile_type.dims) == "row"
        layout = canonical_layout(rows, cols, e) if row_major else None
        if layout is None:
            self._note(alloc, f"kept: read by tile.wgmma, no descriptor layout for {tile_type}")
            return
        new_type = SharedType(tile_type.dims, tile_type.element_type, layout)
        Rewriter.replace_value_with_new_type(alloc.result, new_type)
        self._note(alloc, f"wgmma operand: {describe(new_type, uses)}")


__all__ = ["REPORT_ATTR", "TileSwizzlePass", "choose", "describe", "tile_uses"]
