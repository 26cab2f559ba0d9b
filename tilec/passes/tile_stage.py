"""``tile-stage``: mma operands read from global memory in a loop go through shared memory.

Triton's ``tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)`` in a K loop is written in tilec.lang as
``tl.dot(tl.load(a, (i, k), shape=(BM, BK)), tl.load(b, (k, j), shape=(BK, BN)), acc)``. Loaded
straight into the mma's registers, each warp reads its scattered operand fragments from global
memory in the loop's critical path (measured on an H200, 4096^3 f16: 25-28 TFLOP/s). This pass
rewrites such a loop into the form ``tile-pipeline`` pipelines and ``tile-swizzle`` lays out, the
form the tutorial's GEMM spells by hand::

    %sa = tile.alloc : !tile.st<BMxBK>          // before the loop
    scf.for %k ... {
      tile.copy %a[%i, %k] -> %sa               // the body starts with the copies
      tile.barrier
      ... %x = tile.load %sa ...                // where the global load was
      ... tile.mma %x, ...
      tile.barrier                              // every warp is done with %sa
    }

so that the block copies each operand tile once (coalesced, then ``cp.async`` stages ahead), and the
warps read their fragments from shared memory (``ldmatrix`` where the layout allows).

With ``wgmma`` (sm_90a), an mma of the block whose B is staged whole reads it where it is: it becomes
the block form of ``tile.wgmma`` (``groups [GM, GN]``: the block's warpgroups share the product, one
wgmma per 64-row band), with A read in shared memory too where it is staged whole, else from the
block's registers (a tile loaded once, attention's P), and the shared loads go. That needs warpgroups
(warps a multiple of four, a power of two of groups), f16 or bf16 operands with A ``M x K``, an f32
accumulator of 64-row bands and at most 256 columns a warpgroup, and the same conditions as
``tile-layout``'s split over warps (the same in every warp, nothing per-warp computed from it, all the
mmas of its accumulator's class converting alike, and a chain of dots as a whole with warpgroups along
M only), a tile layout a wgmma descriptor reads, and for a B
stored N-major a warpgroup's columns on whole 64-element swizzle atoms. Otherwise the mma stays an
``mma.sync`` as above.

A load is staged when it is a ``tile.load`` of a global window of 16-bit elements (what
``ldmatrix`` reads) directly in an ``scf.for`` body, reads 0 outside the view (what a copy fills
in), is the same in every warp and runs in every warp (``uniformity``), has indices computed from
values defined outside the loop and its induction variable by side-effect-free ops of the body, such
as Triton's ``k * BK`` (the copies and that index math move to the body's start; a carried value
changes along the loop), has a shape the block's copy can split (``default_copy_layouts``), and every
use is an A or B operand of a ``tile.mma``, directly or through elementwise maps; and the loop writes no
global memory (the copies read ahead of the body, and of its earlier iterations once pipelined).

A masked operand, Triton's ``tl.load(..., mask=m, other=0.0)`` (a ``tile.map`` selecting between the
tile and 0 by an i1 tile ``m``), gives its mask to the copy (``tile.copy ... mask %m``, :func:`copy_mask`)
where the body's start can compute ``m`` with the indices and the block's copy of the tile has a mask
fragment: the copy reads 0 where ``m`` is false, as outside the view, so the select goes and the mma
reads the staged tile as an unmasked dot does (on sm_90a, a warpgroup MMA; the copy stays ``cp.async``,
which zero-fills each run past its leading set bits). Other masked operands keep their selects,
computed from the tile read in shared memory.

Any other such mma operand (a dot outside a K loop, or in a loop that stores) read by an mma in its own
block is staged where it is (``stage_in_place``): its copy and a barrier just before it, loads one
after another sharing the barrier, and in a loop a barrier first for the last iteration's readers.
That is no faster to copy, but tile-pipeline then reads the mma's K steps from shared memory as it
goes instead of holding the whole of A and B in registers (a 128x128x128 dot on four warps needed 424
registers a thread). Before all this, ``acc + tl.dot(x, y)`` becomes the mma accumulating into
``acc`` (``fold_accumulating_adds``). Everything else is left as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import copysign

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, Float32Type, IndexType, IntegerAttr, IntegerType, ModuleOp, UnitAttr
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from tilec.ir.purity import is_pure

from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import MAX_SHARED_BYTES, LaunchAttr
from tilec.dialects.tile.types import FLOAT8_TYPES, GlobalType, RegisterType, SharedType, element_bits
from tilec.layout.gmma import canonical_layout
from tilec.ir.walk import defined_in, in_loop, used_values
from tilec.passes.index_steps import step_along
from tilec.passes.transposed import transposed
from tilec.passes.fragments import WARP, default_copy_fragment, default_copy_layouts
from tilec.passes.tile_layout import agreeing_classes, chained_pairs
from tilec.passes.trends import falls_along_rows
from tilec.passes.uniformity import flows_into_per_warp_code, run_by_every_warp, warp_varying


def index_math(values: list[SSAValue], body: Block) -> list[Operation] | None:
    """The ops of ``body`` that compute ``values`` from its induction variable and values from outside
    the loop, in body order (Triton's ``k * BK`` of a loop counting tiles): they move to the body's
    start with the copies. None if a value needs anything else (a carried value changes along the loop;
    an op with effects or regions stays where it is)."""
    needed: set[Operation] = set()
    work = list(values)
    while work:
        v = work.pop()
        if v is body.args[0] or not defined_in(v, body):
            continue
        op = v.owner
        if not isinstance(op, Operation) or op.parent_block() is not body or not is_pure(op):
            return None
        if op not in needed:
            needed.add(op)
            work.extend(used_values(op))
    return [op for op in body.ops if op in needed]


def block_operand(load: t.LoadOp, varying: set[SSAValue], threads: int) -> bool:
    """Whether ``load`` is an mma operand the block can copy to shared memory: a global window of
    16-bit (or 8-bit integer) elements reading 0 outside the view, the same in every warp and run by every warp, of a
    shape the block's copy splits, and used only as an mma's A or B."""
    if not isinstance(load.source.type, GlobalType) or load.fill != 0:
        return False
    ty = load.result.type
    if not isinstance(ty, RegisterType) or len(ty.dims) != 2 or element_bits(ty.element_type) not in (8, 16):
        return False
    if load.result in varying or not run_by_every_warp(load, varying):
        return False
    if default_copy_layouts(tuple(ty.dims), element_bits(ty.element_type) // 8, threads) is None:  # the block's copy needs a split of its rows
        return False
    return feeds_only_mma_operands(load.result)


def gathered_operand(g: t.GatherOp, body: Block | None, varying: set[SSAValue], threads: int) -> bool:
    """Whether the gather ``g`` (directly in the loop body ``body``; None: staged where it is) is an mma
    operand the block can copy to shared memory (a gathering ``tile.copy``): offsets in memory (``linear``,
    Triton's ``tl.load(a_ptrs, mask=m, other=0.0)``) of 16-bit (or 8-bit) elements reading 0 where it reads
    nothing, the same in every warp and run by every warp, its offsets and mask computable at the body's
    start, of a shape whose block copy has a fragment for them, and used only as an mma's A or B."""
    ty = g.result.type
    if g.linear is None or g.fill_tile is not None or g.fill != 0 or not isinstance(ty, RegisterType) \
            or len(ty.dims) != 2 or element_bits(ty.element_type) not in (8, 16):
        return False
    if g.result in varying or not run_by_every_warp(g, varying):
        return False
    held = [*g.indices, *([g.mask] if g.mask is not None else [])]
    if any(not isinstance(v.type, RegisterType) or v in varying for v in held):
        return False
    if default_copy_fragment(tuple(ty.dims), element_bits(ty.element_type) // 8, threads) is None:
        return False
    return feeds_only_mma_operands(g.result) and (body is None or index_math(held, body) is not None)


_OPERAND_MAKERS = (t.MapOp, t.ConvertOp, t.TransposeOp, t.ReshapeOp, t.JoinOp)
"""Ops an mma operand may be computed through from a staged tile: elementwise ``tile.map``s (Triton's masked
operand ``tl.where(mask, tl.load(...), 0)``, 4-bit weights unpacked from bytes), conversions, and the moves
of ``tl.trans``, ``tl.reshape`` and ``tl.join`` (rows of nibbles taking turns)."""


def feeds_only_mma_operands(value: SSAValue, depth: int = 8) -> bool:
    """Whether every use of ``value`` is an mma's A or B, directly or through :data:`_OPERAND_MAKERS`: a
    staged tile read from shared memory is the same tile, so what is computed from it stays where it is."""
    uses = list(value.uses)
    return bool(uses) and all(
        isinstance(u.operation, t.MmaOp) and u.index in (0, 1)
        or depth > 0 and isinstance(u.operation, _OPERAND_MAKERS)
        and feeds_only_mma_operands(u.operation.results[0], depth - 1)
        for u in uses)


@dataclass(frozen=True)
class ZeroSelect:
    """A ``tile.map`` whose value is ``select(cond, load, 0)``: ``cond`` computed in its body from its
    other operands (``sources``), the load read by nothing else (Triton's ``tl.load(..., mask=m,
    other=0.0)``, the mask's ``&`` of a row and a column test fused into the map)."""

    map: t.MapOp
    select: arith.SelectOp
    index: int
    """The load's position among the map's operands."""

    @property
    def sources(self) -> list[SSAValue]:
        return [v for i, v in enumerate(self.map.operands) if i != self.index]

    def mask(self) -> SSAValue:
        """The i1 tile ``cond``: an operand of the map where the select reads one directly, else a new map
        of ``sources`` with the body's other ops, just before this one."""
        body = self.map.body.block
        cond = self.select.cond
        if cond.owner is body:
            return self.map.operands[cond.index]
        dims = list(self.map.results[0].type.dims)
        block = Block(arg_types=[v.type.element_type for v in self.sources])
        mapping = {old: new for old, new in zip([a for i, a in enumerate(body.args) if i != self.index], block.args)}
        needed, work = set(), [cond]
        while work:  # the ops cond is computed by (not the select's 0)
            v = work.pop()
            if isinstance(v.owner, Operation) and v.owner.parent_block() is body and v.owner not in needed:
                needed.add(v.owner)
                work.extend(v.owner.operands)
        for op in body.ops:
            if op not in needed:
                continue
            copy = op.clone(value_mapper=mapping)
            mapping.update(zip(op.results, copy.results))
            block.add_op(copy)
        block.add_op(t.YieldOp(mapping[cond]))
        made = t.MapOp(self.sources, RegisterType(dims, IntegerType(1)), Region(block))
        made.location = self.map.location
        made.results[0].name_hint = "mask"
        Rewriter.insert_op(made, InsertPoint.before(self.map))
        return made.results[0]


def zero_select(load: t.LoadOp) -> ZeroSelect | None:
    """The :class:`ZeroSelect` that is the only use of ``load``, else None. A copy with its mask reads
    exactly that tile (masked-off elements read 0, as outside the view)."""
    uses = list(load.result.uses)
    if len(uses) != 1 or not isinstance(m := uses[0].operation, t.MapOp) or len(m.results) != 1 \
            or m.results[0].type != load.result.type:
        return None
    body = m.body.block
    x = body.args[uses[0].index]
    *inner, last = list(body.ops)
    if not isinstance(last, t.YieldOp) or len(last.operands) != 1 or not isinstance(last.operands[0].owner, arith.SelectOp):
        return None
    sel = last.operands[0].owner
    zero = sel.rhs.owner
    if sel.lhs is not x or not x.has_one_use() or not isinstance(zero, arith.ConstantOp) \
            or not _is_positive_zero(zero.value):
        return None
    if any(op.regions or not is_pure(op) for op in inner):
        return None
    sources = [v for i, v in enumerate(m.operands) if i != uses[0].index]
    if not sources or any(not isinstance(v.type, RegisterType) or v.type.fragment is not None for v in sources):
        return None  # a test of no tile (constants, a scalar from outside): a mask map needs an input tile
    cond = sel.cond
    if not (cond.owner is body or isinstance(cond.owner, Operation) and cond.owner.parent_block() is body):
        return None  # an i1 scalar from outside the map: the same bit for the whole tile, left as a select
    return ZeroSelect(m, sel, uses[0].index)


def _is_positive_zero(value) -> bool:
    """Whether a constant's value has all bits zero (0, or +0.0: what a copy fills in)."""
    if isinstance(value, IntegerAttr):
        return value.value.data == 0
    if isinstance(value, FloatAttr):
        x = value.value.data
        return x == 0.0 and copysign(1.0, x) > 0
    return False


def copy_mask(load: t.LoadOp, body: Block, varying: set[SSAValue], threads: int) -> ZeroSelect | None:
    """The :func:`zero_select` of ``load`` when its staged copy can take the mask: the mask's sources are
    the same in every warp, the body's start can compute them with the load's indices
    (:func:`index_math`; the scalars the map's body reads too), and the block's copy of the tile has a
    mask fragment (:func:`~tilec.passes.fragments.copy_fragment`)."""
    found = zero_select(load)
    if found is None or found.map.parent_block() is not body:  # a select under a branch: left as it is
        return None
    free = [v for v in used_values(found.map) if v is not load.result]
    if any(v in varying for v in found.sources) or index_math([*load.indices, *free], body) is None:
        return None
    ty = load.result.type
    if default_copy_fragment(tuple(ty.dims), element_bits(ty.element_type) // 8, threads) is None:
        return None
    return found


def stageable(load: t.LoadOp, body: Block, varying: set[SSAValue], threads: int) -> bool:
    """Whether ``load`` (directly in the loop body ``body``) is an mma operand this pass stages ahead:
    a :func:`block_operand` whose indices the body's start can compute."""
    return block_operand(load, varying, threads) and index_math(list(load.indices), body) is not None


def writes_global_memory(loop: scf.ForOp) -> bool:
    """Whether anything in ``loop`` writes global memory (a store, a scatter, an atomic, a bulk store): a staged
    load reads its tile at the body's start, and tile-pipeline iterations ahead, so it could read what
    the loop has not written yet. Views may alias (one array passed twice), so any global write counts."""
    for op in loop.walk():
        if isinstance(op, t.StoreOp) and isinstance(op.dest.type, GlobalType):
            return True
        if isinstance(op, (*t.ATOMIC_OPS, t.BulkStoreOp, t.ScatterOp)):
            return True
    return False


def _nested(a: Operation, b: Operation) -> bool:
    """Whether one of ``a`` and ``b`` is inside the other (or they are the same op)."""
    def inside(x: Operation, y: Operation) -> bool:
        while x is not None:
            if x is y:
                return True
            x = x.parent_op()
        return False
    return inside(a, b) or inside(b, a)


class StagedTiles:
    """The shared tiles staged loads go to, by shape and element type. Loops neither of which is inside
    the other never run at the same time, so they share them (the form tile-pipeline gives its stages
    to, Triton's two K loops of a causal attention): the launch grows by a tile only for a loop that
    needs more than the loops before it."""

    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        self.tiles: dict[tuple, list[tuple[t.AllocOp, list[scf.ForOp]]]] = {}

    def take(self, load: t.LoadOp, loop: scf.ForOp, taken: set[t.AllocOp]) -> t.AllocOp:
        """A tile for ``load`` in ``loop`` (none of ``taken``, this loop's others)."""
        ty = load.result.type
        entries = self.tiles.setdefault((tuple(ty.dims), ty.element_type), [])
        for alloc, loops in entries:
            if alloc not in taken and not any(_nested(loop, other) for other in loops):
                loops.append(loop)
                return alloc
        alloc = t.AllocOp(SharedType(tuple(ty.dims), ty.element_type))
        alloc.location = load.location
        alloc.result.name_hint = f"{load.result.name_hint or 'operand'}_shared"
        top = loop  # before the loop's outermost op in the body: it dominates every later loop
        while top.parent_op() is not self.fn:
            top = top.parent_op()
        Rewriter.insert_op(alloc, InsertPoint.before(top))
        entries.append((alloc, [loop]))
        return alloc

    def needed(self, loads: list[t.LoadOp], loop: scf.ForOp) -> int:
        """Bytes of new tiles :meth:`take` would make for ``loads`` in ``loop``."""
        counts: dict[tuple, int] = {}
        extra = 0
        for load in loads:
            ty = load.result.type
            key = (tuple(ty.dims), ty.element_type)
            counts[key] = counts.get(key, 0) + 1
            free = sum(1 for _, loops in self.tiles.get(key, []) if not any(_nested(loop, o) for o in loops))
            if counts[key] > free:
                extra += SharedType(key[0], key[1]).size_bytes
        return extra


def stage_loop(loop: scf.ForOp, loads: list[t.LoadOp | t.GatherOp], tiles: StagedTiles,
               masks: dict[t.LoadOp, ZeroSelect] | None = None) -> set[SSAValue]:
    """Rewrite ``loop``'s staged ``loads`` (windows, and gathers: :func:`gathered_operand`) into copies at
    the body's start (into ``tiles``), a barrier, shared loads in their place, and a barrier before the
    body's yield; the shared tiles. ``masks``: the loads whose copies take a mask (:func:`copy_mask`), their
    selects replaced by the shared loads (a gather's copy takes its own mask)."""
    masks = masks or {}
    found = {load: found.mask() for load, found in masks.items()}
    found.update({g: g.mask for g in loads if isinstance(g, t.GatherOp) and g.mask is not None})
    body = loop.body.block
    math = index_math([i for load in loads for i in (*load.indices, *([found[load]] if load in found else []))],
                      body)
    head: list[Operation] = []
    taken: set[t.AllocOp] = set()
    for load in loads:
        ty = load.result.type
        alloc = tiles.take(load, loop, taken)
        taken.add(alloc)
        select = masks[load].map if load in masks else None
        mask = found.get(load)
        prefix = mask is not None and falls_along_rows(mask)
        if isinstance(load, t.GatherOp):  # offsets in memory: a gathering copy
            copy = t.CopyOp(load.source, [], alloc.result, mask=mask, prefix=prefix, offsets=load.indices[0])
        else:
            copy = t.CopyOp(load.source, list(load.indices), alloc.result, mask=mask, prefix=prefix)
        copy.location = load.location
        head.append(copy)
        shared_load = t.LoadOp(alloc.result, [], ty)
        shared_load.location = load.location
        shared_load.result.name_hint = load.result.name_hint
        Rewriter.replace_op(load, shared_load)
        if select is not None:  # the copy read the selected tile
            select.results[0].replace_all_uses_with(shared_load.result)
            Rewriter.erase_op(select)
    # a body that already starts with copies and a barrier (the hand-written form) takes the new
    # copies among its own, under its barrier; otherwise they and a barrier open the body
    op = body.first_op
    while isinstance(op, t.CopyOp | t.AsyncCopyOp):
        op = op.next_op
    if isinstance(op, t.BarrierOp):
        Rewriter.insert_op(head, InsertPoint.before(op))
    else:
        Rewriter.insert_op([*head, t.BarrierOp()], InsertPoint.at_start(body))
    for op in math:  # the copies' offsets, computed first (tile-pipeline computes them ahead too)
        op.detach()
    Rewriter.insert_op(math, InsertPoint.at_start(body))
    last = body.last_op
    before = last.prev_op if last is not None else None
    if not isinstance(before, t.BarrierOp):
        Rewriter.insert_op(t.BarrierOp(), InsertPoint.before(last))
    return {alloc.result for alloc in taken}


def stage_in_place(fn: func.FuncOp, loads: list[t.LoadOp | t.GatherOp]) -> dict[Block, set[SSAValue]]:
    """Stage ``loads`` (windows, and gathers as gathering copies) where they are (a dot outside any K loop,
    or in a loop whose copies cannot run ahead): a copy into a shared tile of its own and a barrier before
    each, the shared load in its place. Read by an mma beside them, the shared tiles let tile-pipeline read each K step's fragments
    as the mma goes (``split_k_steps``) instead of holding all of A and B in registers (a tile loaded
    once for a loop's mmas, attention's Q, is held whole anyway and is left as written). Loads one
    after the other share the barrier (``copy a; copy b; barrier; load a; load b``); in a loop a
    barrier before the copies waits for the last iteration's readers. The shared tiles, by the block
    that reads them."""
    made_loads: set[Operation] = set()
    made_barriers: set[Operation] = set()
    tiles: dict[Block, set[SSAValue]] = {}
    for load in loads:
        ty = load.result.type
        alloc = t.AllocOp(SharedType(tuple(ty.dims), ty.element_type))
        alloc.location = load.location
        alloc.result.name_hint = f"{load.result.name_hint or 'operand'}_shared"
        Rewriter.insert_op(alloc, InsertPoint.at_start(fn.body.block))
        if isinstance(load, t.GatherOp):  # a gathering copy, with the gather's mask
            mask = load.mask
            copy = t.CopyOp(load.source, [], alloc.result, mask=mask, offsets=load.indices[0],
                            prefix=mask is not None and falls_along_rows(mask))
        else:
            copy = t.CopyOp(load.source, list(load.indices), alloc.result)
        copy.location = load.location
        before = load.prev_op
        while before is not None and before in made_loads:
            before = before.prev_op
        if before is not None and before in made_barriers:  # joins the copies just before
            Rewriter.insert_op(copy, InsertPoint.before(before))
        else:
            barrier = t.BarrierOp()
            made_barriers.add(barrier)
            waits = in_loop(load) and not isinstance(load.prev_op, t.BarrierOp)  # for the last iteration's readers
            head = [t.BarrierOp(), copy, barrier] if waits else [copy, barrier]
            Rewriter.insert_op(head, InsertPoint.before(load))
        shared_load = t.LoadOp(alloc.result, [], ty)
        shared_load.location = load.location
        shared_load.result.name_hint = load.result.name_hint
        made_loads.add(shared_load)
        Rewriter.replace_op(load, shared_load)
        tiles.setdefault(shared_load.parent_block(), set()).add(alloc.result)
    return tiles


def warpgroup_grid(m: int, n: int, groups: int, n_major: bool = False,
                   rows_only: bool = False) -> tuple[int, int] | None:
    """``(GM, GN)`` for an ``m x n`` accumulator over ``groups`` warpgroups: as many along M as its 64-row
    bands allow, the rest along N; None if a warpgroup's columns are not a wgmma's N (8 .. 256).
    ``n_major``: B is stored with N contiguous, so a warpgroup's columns start at a whole swizzle atom
    (64 16-bit elements) for its descriptor to describe them. ``rows_only``: along M only or None (a
    chain of dots: each warp keeps whole rows of the first product, its A of the next)."""
    if groups < 1 or groups & (groups - 1) or m % t.WGMMA_ROWS:
        return None
    gm = 1
    while gm < groups and (m // t.WGMMA_ROWS) % (2 * gm) == 0:
        gm *= 2
    gn = groups // gm
    if rows_only and gn > 1:
        return None
    if n % (8 * gn) or n // gn > 256 or (n_major and gn > 1 and (n // gn) % 64):
        return None
    return gm, gn


def to_warpgroup_mmas(fn: func.FuncOp, loops: list[tuple[Block, set[SSAValue]]], threads: int,
                      varying: set[SSAValue]) -> None:
    """Make each mma of the staged blocks ``loops`` (loop bodies, with their shared tiles) whose B is a load of a
    whole staged tile the block form of ``tile.wgmma`` where it may be (see the module docstring).
    Mmas whose accumulators are one value (a carried one, through several loops) change together."""
    if threads % (4 * WARP):
        return

    def whole_staged(x: SSAValue, shared: set[SSAValue]) -> bool:
        load = x.owner
        return (isinstance(load, t.LoadOp) and load.source in shared and not load.indices
                and tuple(load.result.type.dims) == tuple(load.source.type.dims))

    pairs = chained_pairs([op for op in fn.walk() if isinstance(op, t.MmaOp | t.WgmmaOp)])
    chained = {op for pair in pairs for op in pair}
    candidates: dict[t.MmaOp, tuple[tuple[int, int], set[SSAValue]]] = {}
    for block, shared in loops:
        for op in block.ops:
            if not isinstance(op, t.MmaOp) or op.transpose_a is not None or not whole_staged(op.b, shared):
                continue
            if op.a.type.element_type != op.b.type.element_type:
                continue
            if op.a.type.element_type == IntegerType(8) or isinstance(op.a.type.element_type, FLOAT8_TYPES):
                # s8 and FP8 wgmma: both operands staged and K-major (A M x K, B read transposed from N x K:
                # these wgmmas have no transpose operands)
                accumulates = IntegerType(32) if op.a.type.element_type == IntegerType(8) else Float32Type()
                if op.c.type.element_type != accumulates or op.transpose_b is None or not whole_staged(op.a, shared):
                    continue
            elif not isinstance(op.c.type.element_type, Float32Type):
                continue
            if any(v.type.fragment is not None for v in (op.a, op.c)) or op.a.type.dims[1] % 16:
                continue
            if any(v in varying for v in (op.a, op.c, op.result)) or not run_by_every_warp(op, varying):
                continue
            if flows_into_per_warp_code(op.result, varying) or flows_into_per_warp_code(op.c, varying):
                continue
            grid = warpgroup_grid(*op.c.type.dims, threads // (4 * WARP), n_major=op.transpose_b is None,
                                  rows_only=op in chained)
            if grid is not None and op.a.type.element_type == IntegerType(8) and \
                    not t.integer_wgmma_n(op.c.type.dims[1] // grid[1]):
                continue  # PTX's integer wgmma has N = 8, 16, 24 or a multiple of 16: stays mma.sync
            reads = [op.b, op.a] if whole_staged(op.a, shared) else [op.b]
            if grid is not None and all(described(x.type) for x in reads):
                candidates[op] = (grid, shared)
    classes = agreeing_classes(fn)
    for first, then in pairs:  # a chain converts as a whole: P's registers are C of one and A of the other
        classes.union(first.c, then.c)
    grids: dict[SSAValue, set] = {}
    for op in fn.walk():
        if isinstance(op, t.MmaOp | t.WgmmaOp):
            grids.setdefault(classes.find(op.c), set()).add(candidates[op][0] if op in candidates else None)
    chosen = [(op, grid, shared) for op, (grid, shared) in candidates.items()
              if grids[classes.find(op.c)] == {grid}]  # not with an mma that stays, or other groups
    for op, grid, shared in chosen:
        a, b = op.a.owner, op.b.owner
        zero = arith.ConstantOp.from_int_and_width(0, IndexType())
        if whole_staged(op.a, shared):  # both read in shared memory
            wgmma = t.WgmmaOp(a.source, zero.result, b.source, zero.result, op.c,
                              transpose_b=op.transpose_b is not None, groups=grid)
        else:  # A from the block's registers (a tile loaded once, or computed: attention's P)
            wgmma = t.WgmmaOp(op.a, None, b.source, zero.result, op.c, transpose_b=op.transpose_b is not None,
                              groups=grid)
        wgmma.location = op.location
        wgmma.result.name_hint = op.result.name_hint
        Rewriter.insert_op(zero, InsertPoint.before(op))
        Rewriter.replace_op(op, wgmma)
        for load in (a, b):
            if isinstance(load, t.LoadOp) and load.source in shared and not list(load.result.uses):
                Rewriter.erase_op(load)


def described(ty: RegisterType) -> bool:
    """Whether a staged row-major tile of ``ty``'s shape has a layout wgmma descriptors read (tile-swizzle
    gives it that one): rows of a whole number of 32-byte swizzle atoms."""
    rows, cols = ty.dims
    return canonical_layout(rows, cols, element_bits(ty.element_type) // 8) is not None


def fold_transposed_operands(fn: func.FuncOp) -> None:
    """A ``tile.mma`` operand that is a ``tile.transpose`` (``tl.dot(q, tl.trans(k))``): the mma reads
    the untransposed tile with the operand's transpose flag flipped. The same product, and a load the
    flag reads transposed is an mma operand this pass can stage (a transpose left unused goes)."""
    for op in [o for o in fn.walk() if isinstance(o, t.MmaOp)]:
        for index, flag in ((0, "transpose_a"), (1, "transpose_b")):
            tr = op.operands[index].owner
            if not isinstance(tr, t.TransposeOp) or tr.input.type.fragment is not None \
                    or tr.result.type.fragment is not None:
                continue
            op.operands[index] = tr.input
            if op.properties.get(flag) is None:
                op.properties[flag] = UnitAttr()
            else:
                del op.properties[flag]
            if not list(tr.result.uses):
                Rewriter.erase_op(tr)


def orient_gathers(fn: func.FuncOp) -> None:
    """A linear ``tile.gather`` that only mmas read, whose offsets are consecutive down its columns and not
    along its rows (Triton's ``b_ptrs`` over a K-major B: ``offs_k[:, None] + offs_n[None, :] * stride``),
    is gathered transposed and read through a ``tile.transpose``, which :func:`fold_transposed_operands`
    then makes the mma's transpose flag. Its offsets and mask are built again transposed
    (:func:`tilec.passes.transposed.transposed`: no data moves; where they cannot be, the gather stays).
    Its staged copy then moves rows of consecutive elements (16-byte ``cp.async``), and the shared tile
    is K-major, as an FP8 or int8 warpgroup MMA must read B (and what an f16 one reads without its
    transpose)."""
    made: dict[SSAValue, SSAValue] = {}
    for g in [op for op in fn.walk() if isinstance(op, t.GatherOp)]:
        ty = g.result.type
        if g.linear is None or g.fill_tile is not None or not isinstance(ty, RegisterType) or len(ty.dims) != 2 \
                or ty.fragment is not None or not list(g.result.uses) \
                or not all(isinstance(u.operation, t.MmaOp) and u.index in (0, 1) for u in g.result.uses):
            continue
        offsets = g.indices[0]
        if step_along(offsets, 0) != 1 or step_along(offsets, 1) == 1:
            continue
        flipped_offsets = transposed(offsets, made)
        mask = None if g.mask is None else transposed(g.mask, made)
        if flipped_offsets is None or (g.mask is not None and mask is None):
            continue
        other = None if g.other is None else g.other.value.data
        flipped = t.GatherOp(g.source, [flipped_offsets], RegisterType(tuple(reversed(ty.dims)), ty.element_type),
                             linear=True, mask=mask, other=other)
        back = t.TransposeOp(flipped.result)
        for op in (flipped, back):
            op.location = g.location
        flipped.result.name_hint = g.result.name_hint
        Rewriter.insert_op(flipped, InsertPoint.before(g))
        Rewriter.replace_op(g, back)
        _erase_unused([offsets, *([] if g.mask is None else [g.mask])])  # what only the old gather read


def _erase_unused(values: list[SSAValue]) -> None:
    """The pure ops computing ``values`` that nothing reads any more, and then theirs."""
    work = list(values)
    while work:
        op = work.pop().owner
        if isinstance(op, Operation) and op.parent is not None and is_pure(op) \
                and not any(r.uses for r in op.results):
            work.extend(op.operands)
            Rewriter.erase_op(op)


def fold_accumulating_adds(fn: func.FuncOp, wgmma: bool = False) -> None:
    """``acc + tl.dot(x, y)`` (an add of a ``tile.mma`` whose accumulator is ``tile.zeros`` and whose
    product is used by nothing else): the mma accumulates into ``acc`` itself, as Triton folds it. One
    accumulator instead of two, so no second tile of f32 registers; the sum is the same up to the
    order of the f32 additions, which the tensor cores do not promise anyway.

    ``wgmma``: not where ``acc`` is computed by an op beside the add, other than a loop (attention's
    ``acc * alpha + P V``): an asynchronous warpgroup MMA of zeros runs while the rescale is computed,
    one accumulating into it waits for it (measured on an H200, D 128: 4-8% slower folded)."""
    for add in [o for o in fn.walk() if isinstance(o, t.AddOp) or _is_map_add(o)]:
        for index in (0, 1):
            mma, acc = add.operands[index].owner, add.operands[1 - index]
            beside = acc.owner
            if wgmma and isinstance(beside, Operation) and beside.parent_block() is add.parent_block() \
                    and not isinstance(beside, scf.ForOp | scf.WhileOp):
                continue
            if not isinstance(mma, t.MmaOp) or not isinstance(mma.c.owner, t.ZerosOp) \
                    or mma.parent_block() is not add.parent_block() or len(list(mma.result.uses)) != 1 \
                    or acc.type != mma.c.type or add.result.type != acc.type:
                continue
            folded = t.MmaOp(mma.a, mma.b, acc)
            folded.properties.update(mma.properties)
            folded.location = add.location
            folded.result.name_hint = add.result.name_hint
            zeros = mma.c.owner
            Rewriter.replace_op(add, folded)
            Rewriter.erase_op(mma)
            if not list(zeros.result.uses):
                Rewriter.erase_op(zeros)
            break


def _is_map_add(op: Operation) -> bool:
    """A ``tile.map`` of two tiles whose body only adds them (an integer ``acc += tl.dot(x, y)``)."""
    if not isinstance(op, t.MapOp) or len(op.operands) != 2:
        return False
    body = op.body.block
    ops = list(body.ops)
    return (len(ops) == 2 and isinstance(ops[0], arith.AddiOp | arith.AddfOp)
            and set(ops[0].operands) == set(body.args) and len(body.args) == 2
            and isinstance(ops[1], t.YieldOp) and list(ops[1].operands) == [ops[0].result])


def hoist_invariant_views(fn: func.FuncOp) -> None:
    """``tile.subview`` / ``tile.dim`` of values defined outside a loop move to just before it (and on
    out of the loops around it): a staged load's view is then the loop's own invariant, as staging
    needs, where the kernel took it in the body (Triton's ``tl.load(a[z], ...)`` inside the K loop).
    Both are pure: moving them changes no result, and they fault on nothing."""
    moved = True
    while moved:
        moved = False
        for loop in [op for op in fn.walk() if isinstance(op, scf.ForOp)]:
            for op in list(loop.body.block.ops):
                if isinstance(op, t.SubviewOp | t.DimOp) and not any(_defined_in(v, loop) for v in op.operands):
                    op.detach()
                    loop.parent_block().insert_op_before(op, loop)
                    moved = True


def _defined_in(v: SSAValue, loop: Operation) -> bool:
    """Whether ``v`` is computed inside ``loop`` (a block argument of its body too)."""
    owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
    return owner is not None and loop.is_ancestor(owner)


def stage_function(fn: func.FuncOp, wgmma: bool = False) -> None:
    """Stage every loop's mma operand loads in ``fn``; the launch's shared memory grows by the tiles
    (a staged tile that would not fit leaves its loop as written). ``wgmma``: mmas of whole staged
    tiles become the block's warpgroup MMAs (:func:`to_warpgroup_mmas`)."""
    launch = fn.attributes.get(LAUNCH_ATTR)
    smem = launch.smem.data if isinstance(launch, LaunchAttr) else None
    threads = launch.threads if isinstance(launch, LaunchAttr) else WARP
    hoist_invariant_views(fn)
    orient_gathers(fn)
    fold_transposed_operands(fn)
    fold_accumulating_adds(fn, wgmma)
    varying: set[SSAValue] | None = None
    tiles = StagedTiles(fn)
    staged_loops: list[tuple[Block, set[SSAValue]]] = []
    for loop in [op for op in fn.walk() if isinstance(op, scf.ForOp)]:
        body = loop.body.block
        loads = [op for op in body.ops if isinstance(op, t.LoadOp | t.GatherOp)]
        if not loads or writes_global_memory(loop):
            continue
        if varying is None:
            varying = warp_varying(fn)
        staged = [op for op in loads if (stageable(op, body, varying, threads) if isinstance(op, t.LoadOp)
                                         else gathered_operand(op, body, varying, threads))]
        extra = tiles.needed(staged, loop)
        if not staged or (smem is not None and smem + extra > MAX_SHARED_BYTES):
            continue
        masks = {load: found for load in staged if isinstance(load, t.LoadOp)
                 and (found := copy_mask(load, body, varying, threads)) is not None}
        staged_loops.append((loop.body.block, stage_loop(loop, staged, tiles, masks)))
        if smem is not None:
            smem += extra
    if varying is None:
        varying = warp_varying(fn)
    in_place = []
    for load in [op for op in fn.walk() if (block_operand(op, varying, threads) if isinstance(op, t.LoadOp) else
                                            isinstance(op, t.GatherOp) and gathered_operand(op, None, varying, threads))
                 and all(use.operation.parent_block() is op.parent_block() for use in op.result.uses)]:
        size = SharedType(tuple(load.result.type.dims), load.result.type.element_type).size_bytes
        if smem is not None and smem + size > MAX_SHARED_BYTES:
            continue
        in_place.append(load)
        if smem is not None:
            smem += size
    if in_place:
        staged_loops.extend(stage_in_place(fn, in_place).items())
    if wgmma and staged_loops:
        to_warpgroup_mmas(fn, staged_loops, threads, varying)
    if smem is not None and smem != launch.smem.data:
        fn.attributes[LAUNCH_ATTR] = launch.replace(smem=smem)


@dataclass(frozen=True)
class TileStagePass(ModulePass):
    """Stages the mma operands a loop reads from global memory through shared memory (see the module docstring)."""

    name = "tile-stage"

    wgmma: bool = False
    """sm_90a: an mma of whole staged tiles becomes the block's warpgroup MMAs (``tile.wgmma`` groups)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.ops:
            if isinstance(fn, func.FuncOp) and fn.body.blocks:
                stage_function(fn, self.wgmma)
