"""``tile-layout``: give every register tile and vector its fragment, in its type.

A fragment is a TV layout ``(lane, value) -> element`` over the 32 lanes of the
warp that owns the tile, or over all the threads of the block for a tile of the
block (:mod:`tilec.passes.fragments`). The pass chooses one per value from its uses and writes it into the IR, so that
``--print-between-passes`` shows every layout and ``tile-distribute`` only reads
types::

    !tile.rt<32x32xf32>  ->  !tile.rt<32x32xf32, ((4,8),((2,2),(2,4))):((64,1),((32,8),(16,256)))>
    !tile.rv<32xf32, col>  ->  !tile.rv<32xf32, col, ((4,8),(2,4)):((2,0),(1,8))>

**Which values must agree.** A loop's ``iter_args``, its body's arguments,
``scf.yield`` operands and the loop's results (an ``scf.while``'s likewise, through its
``scf.condition``); ``scf.if`` results and their
yields; an mma's accumulator and result; the operands and result of
elementwise ops, ``tile.convert`` and ``tile.map``; a store's (atomic's) value and mask; a
``tile.gather``'s result, index tiles and mask, a ``tile.scatter``'s value, index tiles and mask. Such values form one class
and get one fragment (a union-find over the function).

**What decides.** In order of precedence:

1. a fragment already in a value's type (the user's, or an earlier run of this pass);
2. the C fragment of every ``tile.mma`` / ``tile.wgmma`` accumulator (two
   different ones on a class are an error naming both);
3. the A and B fragments of ``tile.mma`` operands;
4. across a ``tile.transpose``, the other side's warp fragment transposed (no data moves);
5. otherwise, for a tile that is the same in every warp of a multi-warp block and meets only ops
   a whole-block tile lowers through (:func:`block_tile_classes`), a *block fragment* over all
   the block's threads (:func:`~tilec.passes.fragments.block_fragment`; ``block_tiles=false``
   turns this off);
6. otherwise the default: the m16n8k16 C atom tiled over the tile.

A register vector gets the projection of a tile's fragment
(:func:`~tilec.passes.fragments.vector_fragment`: each lane holds the rows,
or columns, its tile values are in): of the tile a reduction makes it from,
else of the tile it is broadcast to; a vector that meets no tile is spread
over the lanes (:func:`~tilec.passes.fragments.spread_vector_fragment`).

**Conversions.** Where an operand's class already has a fragment that is not
the one its mma needs (or a vector is broadcast to a tile whose lanes hold it
differently, or a ``tile.transpose``'s result is held otherwise than its input transposed:
:meth:`_through_transposes` makes that rare), the pass inserts ``tile.convert_layout`` before that use (the value keeps its fragment; the mma reads the converted one). Two
fragments that are the same function (equal as maps ``(lane, value) ->
element``, however spelled, like attention's f16 P tile as the C fragment of
``S = Q K^T`` and as the A fragment of ``O += P V``) need no conversion.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import BFloat16Type, DenseArrayBase, Float16Type, IntegerAttr, IntegerType, ModuleOp, i64
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilec.dialects.abi import LAUNCH_ATTR, producer_threads
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, RegisterVectorType, SharedType, element_bits
from tilec.ir.parser import location_text
from tilec.layout import MMA_ATOMS, MMAAtom
from tilec.passes.fragments import (
    MAX_TAKE_SHUFFLES,
    WARP,
    Fragment,
    FragmentError,
    VectorFragment,
    block_fragment,
    copy_fragment,
    default_copy_fragment,
    default_fragment,
    fma_fragment,
    joined_fragment,
    joined_vector_fragment,
    mma_fragment,
    paired_fragment,
    part_fragment,
    reshaped_fragment,
    reshaped_vector_fragment,
    spread_vector_fragment,
    thread_bits,
    tile_fragment,
    transposed_fragment,
    vector_fragment,
    wgmma_block_fragment,
    window_values,
)
from tilec.passes.uniformity import computed_from, flows_into_per_warp_code, run_by_every_warp, warp_varying

THREAD_TILE_ATTR = "tile.thread_tile"
"""Optional attribute of an ``fma_f32`` ``tile.mma``: ``[TM, TN]``, each lane's block of C."""

WARPS_ATTR = "tile.warps"
"""Optional attribute of a ``tile.mma``: ``array<i64: WM, WN, R>``, the mma split over a ``WM x WN`` grid of
the block's warps (``R`` copies of it), as Triton splits a block's ``tl.dot``
(:func:`~tilec.passes.fragments.mma_fragment`'s ``warps``). tile-layout sets it on an mma that every
warp runs on the same operands (:func:`split_over_warps`); without it each warp holds the whole mma."""

_ELEMENTWISE = (t.MapOp, t.ConvertOp, t.AddOp, t.SubOp, t.MulOp, t.DivOp, t.MaxOp, t.MinOp, t.ExpOp, t.Exp2Op,
                t.ReluOp, t.ScanOp)
"""Ops whose register results share their register operands' fragment (a scan's too: it is lowered for any
fragment whose scanned coordinate is a sum of distinct bits, tile_distribute/scan.py)."""
_REDUCTIONS = (t.RowSumOp, t.RowMaxOp, t.RowMinOp, t.ColSumOp, t.ColMaxOp, t.ColMinOp, t.ReduceOp)


def is_register(v: SSAValue) -> bool:
    return isinstance(v.type, RegisterType | RegisterVectorType)


def value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a {v.type}"


def default_atom(element_type, b_type=None) -> MMAAtom:
    """The mma.sync atom of a ``tile.mma`` without ``atom``: by its operands' element types (FP8 operands
    may differ: ``b_type``, default ``element_type``)."""
    fp8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
    if getattr(element_type, "name", None) in fp8:
        a = fp8[element_type.name]
        b = fp8.get(getattr(b_type, "name", None), a)
        return MMA_ATOMS[f"mma_m16n8k32_{a if a == b else f'{a}_{b}'}"]
    if isinstance(element_type, Float16Type):
        return MMA_ATOMS["mma_m16n8k16_f16"]
    if isinstance(element_type, BFloat16Type):
        return MMA_ATOMS["mma_m16n8k16_bf16"]
    if element_type == IntegerType(8):
        return MMA_ATOMS["mma_m16n8k32_s8"]
    return MMA_ATOMS["mma_m16n8k8_tf32"]


def mma_atom_of(op: t.MmaOp) -> MMAAtom:
    return op.atom.data if op.atom is not None else default_atom(op.a.type.element_type, op.b.type.element_type)


def fma_shape(op: t.MmaOp) -> tuple[tuple[int, int], tuple[int, int]]:
    """((LM, LN), (TM, TN)) of an ``fma_f32`` mma: the lanes' grid and each lane's block of C."""
    m, n = op.c.type.dims
    attr = op.attributes.get(THREAD_TILE_ATTR)
    if attr is not None:
        tm, tn = (int(x) for x in attr.iter_values()) if hasattr(attr, "iter_values") else (
            int(x.value.data) if isinstance(x, IntegerAttr) else int(x.data) for x in attr.data)
        if m % tm or n % tn or (m // tm) * (n // tn) != WARP:
            raise FragmentError(f"{THREAD_TILE_ATTR} = [{tm}, {tn}] does not split the {m}x{n} accumulator over 32 lanes")
        return (m // tm, n // tn), (tm, tn)
    best = None
    for lm in (1, 2, 4, 8, 16, 32):
        ln = WARP // lm
        if m % lm or n % ln:
            continue
        tm, tn = m // lm, n // ln
        score = (abs(tm - tn), -min(tm, tn))
        if best is None or score < best[0]:
            best = (score, (lm, ln), (tm, tn))
    if best is None:
        raise FragmentError(f"an fma accumulator of {m}x{n} cannot be split over the 32 lanes of a warp")
    return best[1], best[2]


def mma_warps(op: t.MmaOp) -> tuple[int, int, int] | None:
    """``(WM, WN, R)`` of an mma split over the block's warps (:data:`WARPS_ATTR`), else None."""
    attr = op.attributes.get(WARPS_ATTR)
    if attr is None:
        return None
    values = tuple(int(v) for v in attr.iter_values()) if hasattr(attr, "iter_values") else ()
    if len(values) != 3 or min(values) < 1:
        raise FragmentError(f"{WARPS_ATTR} must be array<i64: WM, WN, R> of positive numbers, got {attr}")
    return values  # type: ignore[return-value]


def chained_pairs(mmas: list[t.MmaOp | t.WgmmaOp]) -> list[tuple[Operation, Operation]]:
    """The ``(first, next)`` links of chains of dots: ``first``'s result, or anything computed from it, is
    ``next``'s A (attention's ``P = softmax(Q K^T)``, then ``P V``)."""
    pairs = []
    for op in mmas:
        downstream = computed_from(op.result)
        pairs.extend((op, other) for other in mmas if other is not op and other.a in downstream)
    return pairs


def chained_mmas(mmas: list[t.MmaOp | t.WgmmaOp]) -> set[Operation]:
    """The mmas of a chain (either end of a link of :func:`chained_pairs`)."""
    return {op for pair in chained_pairs(mmas) for op in pair}


def warp_grid(m: int, n: int, warps: int, atom: MMAAtom, rows_only: bool = False) -> tuple[int, int, int] | None:
    """The ``(WM, WN, R)`` an ``m x n`` accumulator splits over ``warps`` warps: the most warps whose
    parts are whole atoms, the parts as square as can be (ties: more warps along M, as Triton), the
    rest of the warps copies; None when no split of two or more warps fits. ``rows_only``: warps along
    M only, as Triton lays out a chain of dots, so that each warp holds whole rows of the first product
    (its row reductions stay in the warp) and they are its A of the next, register for register."""
    am, an = atom.shape_mnk[0], atom.shape_mnk[1]
    best = None
    total = warps
    while total >= 2:
        for wm in (d for d in (1, 2, 4, 8, 16, 32) if total % d == 0 and (not rows_only or d == total)):
            wn = total // wm
            if m % (wm * am) or n % (wn * an):
                continue
            score = (abs(m // wm - n // wn), -wm)
            if best is None or score < best[0]:
                best = (score, (wm, wn, warps // total))
        if best is not None:
            return best[1]
        total //= 2
    return None


def split_over_warps(fn: Operation, threads: int | None) -> None:
    """Mark each ``tile.mma`` that every warp of a block of ``threads`` runs on the same values (not
    warp-varying, under no branch some warps skip, and nothing computed from it used by one warp as its
    own: :func:`~tilec.passes.uniformity.flows_into_per_warp_code`) with the warp grid it is split over
    (:data:`WARPS_ATTR`): a block's ``tl.dot`` is then each warp's part, not a copy in every warp. An
    mma whose tiles carry fragments already, or the SIMT atom, is left as written."""
    if threads is None or threads <= WARP or thread_bits(threads) is None:
        return
    mmas = [op for op in fn.walk() if isinstance(op, t.MmaOp) and WARPS_ATTR not in op.attributes]
    if not mmas:
        return
    for op in mmas:  # a zeros (or fill) several mmas start from: one each, so that each may be split its way
        init = op.c.owner
        if isinstance(init, t.ZerosOp | t.FillOp) and len(list(init.results[0].uses)) > 1:
            fresh = init.clone()
            Rewriter.insert_op(fresh, InsertPoint.before(op))
            op.operands[2] = fresh.results[0]
    varying = warp_varying(fn, within_roles=True)  # the consumers' role of a producer's kernel is the block
    chained = chained_mmas([op for op in fn.walk() if isinstance(op, t.MmaOp | t.WgmmaOp)])
    for op in mmas:
        atom = mma_atom_of(op)
        if atom.name == "fma_f32" or any(v.type.fragment is not None for v in (op.a, op.b, op.c, op.result)):
            continue
        if any(v in varying for v in (op.a, op.b, op.c, op.result)) or not run_by_every_warp(op, varying, True):
            continue
        if flows_into_per_warp_code(op.result, varying, True) or flows_into_per_warp_code(op.c, varying, True):
            continue  # a warp would use its part as if it held the whole (a store at its own rows ...)
        try:
            mma_fragments(op)  # whole atoms before any split: else the error names the tiles as written
        except FragmentError:
            continue
        m, n = op.c.type.dims
        grid = warp_grid(m, n, threads // WARP, atom, rows_only=op in chained)
        if grid is not None:
            op.attributes[WARPS_ATTR] = DenseArrayBase.from_list(i64, list(grid))
    # mmas whose accumulators are one value (a loop's carried one, chained mmas) must agree: where they
    # do not, none of them is split (an accumulator has one fragment and is never converted)
    # (and a class with a fragment written in a type keeps the warp fragment it was written for)
    classes = agreeing_classes(fn)
    grids: dict[SSAValue, set] = {}
    for op in mmas:
        grids.setdefault(classes.find(op.c), set()).add(mma_warps(op))
    for inner in fn.walk():
        for v in (*inner.results, *(a for r in inner.regions for b in r.blocks for a in b.args)):
            if isinstance(v.type, RegisterType) and v.type.fragment is not None and classes.find(v) in grids:
                grids[classes.find(v)].add("written")
    for op in mmas:
        if len(grids[classes.find(op.c)]) > 1 and WARPS_ATTR in op.attributes:
            del op.attributes[WARPS_ATTR]


def mma_fragments(op: t.MmaOp) -> tuple[Fragment, Fragment, Fragment]:
    """The A, B and C fragments a ``tile.mma`` needs of its operands (by its atom and transposes, and its
    split over the block's warps)."""
    atom = mma_atom_of(op)
    if atom.name == "fma_f32":
        lanes, tt = fma_shape(op)
        return (fma_fragment("A", op.a.type.dims, lanes, tt, op.transpose_a is not None, value_name(op.a)),
                fma_fragment("B", op.b.type.dims, lanes, tt, op.transpose_b is None, value_name(op.b)),
                fma_fragment("C", op.c.type.dims, lanes, tt, False, value_name(op.c)))
    # the atom's B is N x K; the tile is K x N unless transpose_b
    warps = mma_warps(op)
    return (mma_fragment(atom, "A", op.a.type.dims, op.transpose_a is not None, value_name(op.a), warps),
            mma_fragment(atom, "B", op.b.type.dims, op.transpose_b is None, value_name(op.b), warps),
            mma_fragment(atom, "C", op.c.type.dims, False, value_name(op.c), warps))


def wgmma_fragment(op: t.WgmmaOp) -> Fragment:
    """A warp's part of a wgmma accumulator: the m16n8 C fragment of its 16 rows (in the block form, of
    its 16 rows of each of its warpgroup's bands: :func:`~tilec.passes.fragments.wgmma_block_fragment`)."""
    atom = MMA_ATOMS["mma_m16n8k16_f16"]
    groups = op.block_groups
    if groups is not None:
        return wgmma_block_fragment(atom, tuple(op.c.type.dims), groups, value_name(op.c))
    return mma_fragment(atom, "C", op.c.type.dims, False, value_name(op.c))


def wgmma_a_fragment(op: t.WgmmaOp) -> Fragment:
    """A warp's register A of a wgmma: its 16 rows in the m16n8k16 A fragment (per K step of 16); in the
    block form, its 16 rows of each of its warpgroup's bands."""
    atom = MMA_ATOMS["mma_m16n8k16_f16"]
    groups = op.block_groups
    if groups is not None:
        return wgmma_block_fragment(atom, tuple(op.a.type.dims), groups, value_name(op.a), operand="A")
    return mma_fragment(atom, "A", op.a.type.dims, False, value_name(op.a))


class _UnionFind:
    def __init__(self):
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, v: SSAValue) -> SSAValue:
        self.parent.setdefault(v, v)
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


def agreeing_classes(fn: Operation, uf: _UnionFind | None = None) -> _UnionFind:
    """The union-find of register values that must share a fragment (see the module docstring)."""
    uf = uf or _UnionFind()
    for op in fn.walk():
        match op:
            case scf.ForOp():
                body = op.body.block
                yield_op = body.last_op
                for i, (init, res) in enumerate(zip(op.iter_args, op.results)):
                    if is_register(init):
                        uf.union(init, res)
                        uf.union(init, body.args[i + 1])
                        if isinstance(yield_op, scf.YieldOp):
                            uf.union(init, yield_op.operands[i])
            case scf.IfOp():
                for region in op.regions:
                    for block in region.blocks:
                        term = block.last_op
                        if isinstance(term, scf.YieldOp):
                            for res, y in zip(op.results, term.operands):
                                if is_register(res):
                                    uf.union(res, y)
            case scf.WhileOp():
                # the initial values, the before region's arguments, what the after region yields, what
                # scf.condition passes on, the after region's arguments and the results: one class each
                before, after = op.before_region.block, op.after_region.block
                cond, yield_op = before.last_op, after.last_op
                for i, init in enumerate(op.arguments):
                    if is_register(init):
                        uf.union(init, before.args[i])
                        if isinstance(yield_op, scf.YieldOp):
                            uf.union(init, yield_op.operands[i])
                if isinstance(cond, scf.ConditionOp):
                    for i, v in enumerate(cond.args):
                        if is_register(v):
                            uf.union(v, after.args[i])
                            uf.union(v, op.results[i])
            case t.MmaOp() | t.WgmmaOp():
                uf.union(op.c, op.result)
            case t.JoinOp():
                uf.union(op.lhs, op.rhs)  # two parts of one shape: one fragment, the result's halves
            case t.SplitOp():
                uf.union(op.first, op.second)
            case t.TakeOp():
                uf.union(op.index, op.result)  # element i is taken at index i's element; the source keeps its own
            case t.WgmmaWaitOp():
                uf.union(op.value, op.result)
            case t.AtomicOp() | t.ScatterAtomicOp():
                extra = list(op.indices) if isinstance(op, t.ScatterAtomicOp) else []  # element i at index i
                for v in (op.cmp, op.mask, op.old, *extra):
                    if v is not None:
                        uf.union(op.value, v)
            case t.StoreOp() if op.mask is not None:
                uf.union(op.value, op.mask)  # a mask's element i is the value's element i: one fragment
            case t.GatherOp() | t.ScatterOp():
                # element i is read (written) at the coordinates of element i of each index tile
                data = op.result if isinstance(op, t.GatherOp) else op.value
                fill = op.fill_tile if isinstance(op, t.GatherOp) else None
                for v in (*op.indices, op.mask, fill):
                    if v is not None:
                        uf.union(data, v)
            case _ if isinstance(op, _REDUCTIONS) and op.acc is not None:
                uf.union(op.acc, op.result)
            case _ if isinstance(op, _ELEMENTWISE):
                kind = type(op.results[0].type)
                for v in op.operands:
                    if isinstance(v.type, kind):
                        uf.union(v, op.results[0])
    return uf


@dataclass(frozen=True)
class Conversion:
    """Operand ``index`` of ``op`` must be converted to ``fragment`` (it has another)."""

    op: Operation
    index: int
    fragment: Fragment


_BLOCK_TILE_OPS = (t.LoadOp, t.StoreOp, t.GatherOp, t.ScatterOp, t.ZerosOp, t.FillOp, t.IotaOp, t.BroadcastOp, t.ConvertLayoutOp, t.TransposeOp, t.ReshapeOp, t.JoinOp, t.SplitOp, t.TakeOp,
                   t.ExtractOp, t.AtomicOp, t.ScatterAtomicOp, *_ELEMENTWISE, *_REDUCTIONS, scf.ForOp, scf.IfOp, scf.YieldOp,
                   scf.WhileOp, scf.ConditionOp)
"""The ops a tile spread over the block's warps lowers through (an mma operand or accumulator is a warp's)."""


_BLOCK_VECTOR_OPS = tuple(op for op in _BLOCK_TILE_OPS if op not in t.ATOMIC_OPS)
"""The ops a vector of no tile spread over the block lowers through (an atomic of a vector stays each
warp's: where its place differs between warps, each warp adds its own)."""


def _owner(v: SSAValue) -> Operation | None:
    """The op that defines ``v`` (for a block argument, the op of its region)."""
    return v.op if isinstance(v, OpResult) else v.block.parent_op()


def block_tile_classes(fn: Operation, uf: _UnionFind, values: list[SSAValue], kind: type = RegisterType,
                       ops: tuple[type, ...] | None = None) -> dict[SSAValue, int]:
    """The classes of register tiles (``kind``: or vectors) that may be spread over the whole block, each
    with the narrowest element width of its members in bytes: every member is the same in all warps
    (:func:`~tilec.passes.uniformity.warp_varying`) and every op that makes or uses one is in ``ops``
    (``_BLOCK_TILE_OPS``)."""
    ops = ops or _BLOCK_TILE_OPS
    varying = warp_varying(fn)
    found: dict[SSAValue, int] = {}
    refused: set[SSAValue] = set()
    for v in values:
        if not isinstance(v.type, kind):
            continue
        root = uf.find(v)
        owner = _owner(v)
        users = [use.operation for use in v.uses]
        if v in varying or not all(isinstance(op, ops) for op in (owner, *users)):
            refused.add(root)
            continue
        bits = element_bits(v.type.element_type)
        if bits == 1:  # a mask lives in registers only: it does not narrow the class's memory accesses
            found.setdefault(root, None)
            continue
        width = bits // 8
        found[root] = width if found.get(root) is None else min(found[root], width)
    return {root: width or 1 for root, width in found.items() if root not in refused}


@contextmanager
def failing_at(op: Operation | None) -> Iterator[None]:
    """A :class:`FragmentError` raised inside names ``op`` (unless an inner one named its own), so
    that the pass's diagnostic points at the op and its source line."""
    try:
        yield
    except FragmentError as e:
        if getattr(e, "op", None) is None:
            e.op = op
        raise


BLOCK_TILE = "a tile of the block"
"""Where a fragment spread over the block's warps for coalesced rows came from (:func:`block_fragment`)."""


class LayoutAssignment:
    """The fragment of every register tile and vector of one function, and the conversions needed.

    ``block_threads`` (the kernel's threads, a power of two of several warps, or None) lets a tile
    that is the same in every warp be spread over all of them (:func:`block_tile_classes`)."""

    def __init__(self, fn: Operation, block_threads: int | None = None):
        self.uf = agreeing_classes(fn)
        self.values: list[SSAValue] = []
        given: list[tuple[SSAValue, Fragment]] = []
        accumulators: list[tuple[SSAValue, Fragment, Operation]] = []
        operands: list[tuple[Operation, int, Fragment]] = []
        self.broadcasts: list[t.BroadcastOp] = []
        self.reductions: list[Operation] = []
        slices: list[t.SliceOp] = []
        self.transposes: list[t.TransposeOp] = []
        self.reshapes: list[t.ReshapeOp | t.JoinOp | t.SplitOp] = []
        self.vector_reshapes: list[t.ReshapeOp] = []  # a tile to a vector, or back
        for op in fn.walk():
            for v in self._defined(op):
                self.values.append(v)
                if isinstance(v.type, RegisterType) and v.type.fragment is not None:
                    given.append((v, tile_fragment(v.type.dims, v.type.fragment.layout, name=value_name(v))))
            match op:
                case t.MmaOp():
                    with failing_at(op):
                        a, b, c = mma_fragments(op)
                    accumulators.append((op.c, c, op))
                    operands += [(op, 0, a), (op, 1, b)]
                case t.WgmmaOp():
                    accumulators.append((op.c, wgmma_fragment(op), op))
                    if op.registers_a:
                        operands.append((op, 0, wgmma_a_fragment(op)))
                case t.CopyOp() | t.AsyncCopyOp() if op.mask is not None or op.offsets is not None:
                    frag = copy_mask_fragment(op)
                    if frag is None:
                        with failing_at(op):
                            what = "mask" if op.mask is not None else "offsets"
                            raise FragmentError(f"its {what} has no fragment: the copy's partition of {op.dest.type} "
                                                "over the block's threads is not bit fields of the thread id")
                    # the copy's last operands: its offsets, then its mask
                    held = [v for v in (op.offsets, op.mask) if v is not None]
                    operands += [(op, len(op.operands) - len(held) + i, frag) for i in range(len(held))]
                case t.BroadcastOp():
                    self.broadcasts.append(op)
                case t.SliceOp():
                    slices.append(op)
                case t.TransposeOp():
                    self.transposes.append(op)
                case t.ReshapeOp() if isinstance(op.input.type, RegisterType) and isinstance(op.result.type, RegisterType):
                    self.reshapes.append(op)
                case t.ReshapeOp() if isinstance(op.input.type, RegisterType) or isinstance(op.result.type, RegisterType):
                    self.vector_reshapes.append(op)
                case t.JoinOp() | t.SplitOp():
                    self.reshapes.append(op)
                case _ if isinstance(op, _REDUCTIONS):
                    self.reductions.append(op)
        self.conversions: list[Conversion] = []
        self._chosen: dict[SSAValue, tuple[Fragment, str]] = {}
        for v, frag in given:
            self._choose(v, frag, f"the type of {value_name(v)}")
        for v, frag, op in accumulators:
            old = self._choose(v, frag, op.name)
            if old is not None:
                raise FragmentError(
                    f"register tile {value_name(v)} needs two fragments: {old[0].describe()} (from {old[1]}) and "
                    f"{frag.describe()} (the accumulator of {op.name}); an accumulator cannot be converted"
                )
        block = {} if block_threads is None else block_tile_classes(fn, self.uf, self.values)
        # classes holding a value that depends on the warp: no fragment spread over the warps (one copy of the
        # tile for the block) reaches them from a move or an mma operand
        self._varying = set() if block_threads is None else \
            {self.uf.find(v) for v in warp_varying(fn, within_roles=True) if is_register(v)}
        for op, index, frag in operands:
            # an operand split over the warps whose class depends on the warp is converted where it is used
            if not self._may_hold(self.uf.find(op.operands[index]), frag) \
                    or self._choose(op.operands[index], frag, op.name) is not None:
                self.conversions.append(Conversion(op, index, frag))
        for op in slices:  # a tile sliced into mma operands is held as that operand over its whole extent
            wanted = self._whole_of(op)
            if wanted is not None and self._may_hold(self.uf.find(op.source), wanted):
                self._choose(op.source, wanted, f"{op.name} into {wanted.operand or 'a'} operand")
        self.tile: dict[SSAValue, Fragment] = {}
        self.block_vectors = {} if block_threads is None else \
            block_tile_classes(fn, self.uf, self.values, RegisterVectorType, _BLOCK_VECTOR_OPS)
        self.block_threads = block_threads
        self._through_transposes()
        for v in self.values:
            if isinstance(v.type, RegisterType):
                root = self.uf.find(v)
                if root in self._chosen:
                    pass
                elif root in block:
                    frag = block_fragment(v.type.dims, block_threads, 16 // block[root], value_name(v))
                    self._chosen[root] = (frag, BLOCK_TILE)
                    self._through_transposes()
                else:
                    with failing_at(_owner(v)):
                        self._chosen[root] = (default_fragment(v.type.dims, value_name(v)), "the default")
                    self._through_transposes()
                self.tile[v] = self._chosen[root][0]
        for op in self.transposes:  # a result held otherwise than its input transposed: convert the input
            if not self._transposes_to(self.tile[op.input], self.tile[op.result]):
                with failing_at(op):
                    self.conversions.append(Conversion(op, 0, transposed_fragment(self.tile[op.result])))
        self.vector: dict[SSAValue, VectorFragment] = {}
        self.take_sources = {self.uf.find(op.source) for op in fn.walk()
                             if isinstance(op, t.TakeOp) and isinstance(op.source.type, RegisterVectorType)}
        self._solve_vectors()
        for op in slices:  # a window whose registers are not the tile's: convert the tile first
            self._convert_slice(op)

    @staticmethod
    def _transposes_to(src: Fragment, dst: Fragment) -> bool:
        try:
            return transposed_fragment(src).tv.same_function(dst.tv)
        except FragmentError:
            return False

    def _through_transposes(self) -> None:
        """Give the class on the other side of each ``tile.transpose`` whose one side has a fragment the
        transpose of it (until nothing changes), so the transpose moves no data. A tile of the block
        given its fragment for coalesced rows (:func:`block_fragment`, :data:`BLOCK_TILE`) does not pass
        it on: transposed, its rows would be columns, so the other side gets its own and the transpose's
        input is converted (through shared memory, as Triton's ``tl.trans`` of such a tile). A fragment
        an mma operand split over the warps decided passes through, as a warp's does."""
        changed = True
        while changed:
            changed = False
            for op in self.transposes:
                for src, dst in ((op.input, op.result), (op.result, op.input)):
                    have, root = self._chosen.get(self.uf.find(src)), self.uf.find(dst)
                    if have is None or root in self._chosen or have[1] == BLOCK_TILE or not self._may_hold(root, have[0]):
                        continue
                    with failing_at(op):
                        try:
                            frag = transposed_fragment(have[0], value_name(dst))
                        except FragmentError:
                            continue  # no layout expresses it: the other side gets its own, and a conversion
                    self._chosen[root] = (frag, f"{op.name} of {value_name(src)}")
                    changed = True
            changed |= self._through_reshapes()

    def _through_reshapes(self) -> bool:
        """Give the class on the other side of each tile-to-tile ``tile.reshape`` (``tile.join``, ``tile.split``) whose one
        side has a fragment the fragment that holds the same elements in the same registers: reread in
        the other shape (:func:`reshaped_fragment`), both parts side by side (:func:`joined_fragment`) or
        the parts of the result's (:func:`part_fragment`), so no data moves; where no layout expresses it
        the other side gets its own, and tile-distribute moves the values through shared memory. Whether
        anything was chosen."""
        changed = False
        for op in self.reshapes:
            # (parts, whole) of a join or a split; (input, result) of a reshape
            if isinstance(op, t.ReshapeOp):
                sides = (op.input, op.result)
            else:
                sides = (op.lhs, op.result) if isinstance(op, t.JoinOp) else (op.first, op.input)
            for src, dst in (sides, sides[::-1]):
                have, root = self._chosen.get(self.uf.find(src)), self.uf.find(dst)
                if have is None or root in self._chosen or not self._may_hold(root, have[0]):
                    continue
                try:
                    if isinstance(op, t.ReshapeOp):
                        frag = reshaped_fragment(have[0], tuple(dst.type.dims), value_name(dst))
                    elif dst is sides[1]:
                        frag = joined_fragment(have[0], op.dim_value, op.interleaved is not None, value_name(dst))
                    elif isinstance(op, t.SplitOp):
                        frag = self._split_parts(op, have[0], value_name(dst))
                    else:
                        frag = part_fragment(have[0], op.dim_value, op.interleaved is not None, value_name(dst))
                except FragmentError:
                    continue
                # a block's coalesced rows, reread, stay a block's (a transpose does not carry them across)
                self._chosen[root] = (frag, BLOCK_TILE if have[1] == BLOCK_TILE else f"{op.name} of {value_name(src)}")
                changed = True
        return changed

    def _may_hold(self, root: SSAValue, frag: Fragment) -> bool:
        """Whether the class ``root`` may take ``frag`` from a move's other side or an mma operand: a fragment
        spread over the block's warps holds one copy of the tile for the block, so a class holding a value
        that depends on the warp gets its own (and a conversion where they meet)."""
        return frag.warps == 1 or root not in self._varying

    def _split_parts(self, op: t.SplitOp, whole: Fragment, name: str) -> Fragment:
        """The parts' fragment of ``tile.split`` of a tile held in ``whole``: the elements each thread holds
        of both; where a thread holds one element of its pairs (a bitonic sort's pairs in other lanes), the
        input is converted first to the fragment with the pair bit in the value (:func:`paired_fragment`:
        one exchange of values between lanes)."""
        dim, interleaved = op.dim_value, op.interleaved is not None
        try:
            return part_fragment(whole, dim, interleaved, name)
        except FragmentError:
            paired = paired_fragment(whole, dim, interleaved, value_name(op.input))
            parts = part_fragment(paired, dim, interleaved, name)
            self.conversions.append(Conversion(op, 0, paired))
            return parts

    def _convert_slice(self, op: t.SliceOp) -> None:
        with failing_at(op):
            offsets = op.offset_values
            if window_values(self.tile[op.source], self.tile[op.result], (offsets[0], offsets[1])) is None:
                wanted = self._whole_of(op)
                if wanted is None or window_values(wanted, self.tile[op.result], (offsets[0], offsets[1])) is None:
                    raise FragmentError(
                        f"{op.name}: the lanes do not hold the window {value_name(op.result)} "
                        f"({self.tile[op.result].describe()}) among their values of {value_name(op.source)} "
                        f"({self.tile[op.source].describe()}), and no conversion of the tile gives them")
                self.conversions.append(Conversion(op, 0, wanted))

    def _whole_of(self, op: t.SliceOp) -> Fragment | None:
        """The fragment of the slice's mma operand (atom, operand, transposition) over the whole sliced
        tile, when the window has one and the tile's extent is whole atoms."""
        root = self.uf.find(op.result)
        window = self._chosen.get(root, (None,))[0]
        if window is None or window.atom is None:
            return None
        try:
            return mma_fragment(window.atom, window.operand, tuple(op.source.type.dims), window.transposed,
                                value_name(op.source), window.warp_split)
        except FragmentError:
            return None

    @staticmethod
    def _defined(op: Operation):
        for r in op.results:
            if is_register(r):
                yield r
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    if is_register(a):
                        yield a

    def _choose(self, v: SSAValue, frag: Fragment, source: str) -> tuple[Fragment, str] | None:
        """Give ``v``'s class ``frag`` unless it has one already; the old one if it differs."""
        root = self.uf.find(v)
        old = self._chosen.get(root)
        if old is None:
            self._chosen[root] = (frag, source)
            return None
        return None if old[0].tv.same_function(frag.tv) else old

    def _solve_vectors(self) -> None:
        """Vectors: a fragment in the type, else the projection of the tile a reduction makes it from,
        else of the tile it is broadcast to (another broadcast converts it), else the registers of the tile
        it is reshaped from or to, else spread over the lanes."""
        chosen: dict[SSAValue, VectorFragment] = {}
        for v in self.values:
            if isinstance(v.type, RegisterVectorType) and v.type.fragment is not None:
                chosen.setdefault(self.uf.find(v), VectorFragment(v.type.fragment, v.type.orientation.data))
        self.own: dict[SSAValue, VectorFragment] = {}
        self.converted_results: list[Operation] = []
        for op in self.reductions:
            with failing_at(op):
                frag = vector_fragment(self.tile[op.input], op.result.type.orientation.data)
                old = chosen.setdefault(self.uf.find(op.result), frag)
                if not old.tv.same_function(frag.tv):
                    # its class holds the values otherwise (a reduction of a tile in another fragment): the
                    # result keeps the projection of its own tile and is converted after the op (its
                    # accumulator, if any, before it)
                    self.own[op.result] = frag
                    self.converted_results.append(op)
                    if op.acc is not None:
                        self.conversions.append(Conversion(op, 1, frag))
        for op in self.broadcasts:
            with failing_at(op):
                frag = vector_fragment(self.tile[op.result], op.input.type.orientation.data)
            old = chosen.setdefault(self.uf.find(op.input), frag)
            if not old.tv.same_function(frag.tv):
                self.conversions.append(Conversion(op, 0, frag))
        for op in self.vector_reshapes:  # a tile read as a vector: the tile's registers, where a fragment says so
            tile, vector = (op.input, op.result) if isinstance(op.input.type, RegisterType) else (op.result, op.input)
            root = self.uf.find(vector)
            if root not in chosen:
                try:
                    chosen[root] = reshaped_vector_fragment(self.tile[tile], vector.type.length.data,
                                                            vector.type.orientation.data)
                except FragmentError:
                    pass  # its own fragment; tile-distribute moves the values through shared memory
        for v in self.values:
            if isinstance(v.type, RegisterVectorType):
                root = self.uf.find(v)
                if root not in chosen:
                    chosen[root] = self._joined_vector(v, chosen) or self._own_vector_fragment(v, root)
                self.vector[v] = chosen[root]

    def _joined_vector(self, v: SSAValue, chosen: dict[SSAValue, VectorFragment]) -> VectorFragment | None:
        """The fragment of ``tile.join`` of two vectors whose parts' is decided: each thread holds both parts'
        elements of its values side by side (:func:`joined_vector_fragment`), so the join moves no data."""
        op = v.owner
        if not isinstance(op, t.JoinOp) or v is not op.result:
            return None
        part = chosen.get(self.uf.find(op.lhs))
        if part is None:
            return None
        try:
            return joined_vector_fragment(part, op.interleaved is not None)
        except FragmentError:
            return None  # its own; tile-distribute moves the values through shared memory

    def _own_vector_fragment(self, v: SSAValue, root: SSAValue) -> VectorFragment:
        """A vector of no tile: spread over the block as a tile of one row (one column for a ``row``
        vector) would be (each thread a 16-byte run, the warps the rest: a 1-D load of the block is
        one coalesced sweep, not a copy in every warp), when it may be a block's (the same in every
        warp, every op lowering it for the block); else over the lanes of each warp. A small table
        ``tile.take`` picks from is spread over each warp's lanes, so every warp holds it whole and a pick
        is a shuffle (:func:`~tilec.passes.tile_distribute.moves.take_shuffles`)."""
        n, orientation = v.type.length.data, v.type.orientation.data
        if root in self.take_sources and n <= WARP * MAX_TAKE_SHUFFLES:
            return spread_vector_fragment(n, orientation)  # each warp holds the table whole: takes shuffle
        if root in self.block_vectors:
            dims = (1, n) if orientation == "col" else (n, 1)
            with failing_at(_owner(v)):
                tile = block_fragment(dims, self.block_threads, 16 // self.block_vectors[root], value_name(v))
                return vector_fragment(tile, orientation)
        return spread_vector_fragment(n, orientation)

    def of(self, v: SSAValue) -> Fragment | VectorFragment:
        if v in self.tile:
            return self.tile[v]
        return self.own.get(v) or self.vector[v]


def block_threads(fn: func.FuncOp) -> int | None:
    """The threads of ``fn``'s blocks when a tile may spread over them: a power of two of 2+ warps (a
    producer warpgroup's kernel: its consumers, the launch's own warps, which run everything else)."""
    launch = fn.attributes.get(LAUNCH_ATTR)
    if not isinstance(launch, LaunchAttr):
        return None
    threads = launch.threads - producer_threads(fn)
    return threads if threads > WARP and thread_bits(threads) is not None else None


def launch_threads(op: Operation) -> int | None:
    """The threads of the launch of the kernel ``op`` is in (tile-distribute's block), or None."""
    while op is not None and not isinstance(op, func.FuncOp):
        op = op.parent_op()
    launch = op.attributes.get(LAUNCH_ATTR) if op is not None else None
    return launch.threads if isinstance(launch, LaunchAttr) else None


def copy_mask_fragment(op: t.CopyOp | t.AsyncCopyOp, threads: int | None = None) -> Fragment | None:
    """The fragment of a masked copy's mask (and of a gathering copy's offsets): each thread holds the bits
    (offsets) of the elements it copies (:func:`~tilec.passes.fragments.copy_fragment` of the copy's
    layouts, or of the block's default copy of the tile), so each copied run reads them from its own
    registers. None where the copy's partition is no fragment."""
    threads = threads or launch_threads(op)
    tile = op.dest.type
    if threads is None or not isinstance(tile, SharedType) or len(tile.dims) != 2:
        return None
    dims = (tile.dims[0], tile.dims[1])
    name = value_name(op.mask) if op.mask is not None else "mask"
    if op.thr is None:
        return default_copy_fragment(dims, max(1, element_bits(tile.element_type) // 8), threads, name)
    return copy_fragment(dims, op.thr.data, op.val.data, threads, name)


def assign_layouts(fn: func.FuncOp, block_tiles: bool = True) -> None:
    """Write every register value's fragment into its type; insert the conversions its uses need."""
    if block_tiles:
        split_over_warps(fn, block_threads(fn))
    assignment = LayoutAssignment(fn, block_threads(fn) if block_tiles else None)
    # the class fragments of reduction results converted after their op, read before types are rewritten
    converted = [(op, assignment.vector[op.results[0]].layout) for op in assignment.converted_results]
    for v in assignment.values:
        frag = assignment.of(v)
        ty = v.type
        if ty.fragment is None or ty.fragment.layout != frag.layout:
            Rewriter.replace_value_with_new_type(v, ty.with_fragment(frag.layout))
    for op, layout in converted:  # a reduction's result into its class's fragment, after the op
        result = op.results[0]
        new = t.ConvertLayoutOp(result, result.type.with_fragment(layout))
        new.result.name_hint = result.name_hint
        new.location = op.location
        Rewriter.insert_op(new, InsertPoint.after(op))
        result.replace_uses_with_if(new.result, lambda use, new=new: use.operation is not new)
    for conv in assignment.conversions:
        value = conv.op.operands[conv.index]
        new = t.ConvertLayoutOp(value, value.type.with_fragment(conv.fragment.layout))
        new.result.name_hint = value.name_hint
        new.location = conv.op.location  # its diagnostics point at the op that needs it
        Rewriter.insert_op(new, InsertPoint.before(conv.op))
        conv.op.operands[conv.index] = new.result


def uses_tiles(fn: func.FuncOp) -> bool:
    """Whether a function has tile values or tile ops beyond the kernel-structure ones."""
    for op in fn.walk():
        for v in (*op.operands, *op.results):
            if isinstance(v.type, GlobalType | SharedType | RegisterType | RegisterVectorType):
                return True
        if op.name.startswith("tile.") and op.name not in (
            "tile.block_id", "tile.thread_id", "tile.warp_id", "tile.lane_id", "tile.barrier"
        ):
            return True
    return any(isinstance(a.type, GlobalType) for a in fn.args)


@dataclass(frozen=True)
class TileLayoutPass(ModulePass):
    """Chooses the fragment of every register tile and vector and writes it into the types."""

    name = "tile-layout"

    block_tiles: bool = True
    """Spread a tile that is the same in every warp over the block's warps (else each warp holds it)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks or not uses_tiles(fn):
                continue
            try:
                assign_layouts(fn, self.block_tiles)
            except FragmentError as e:
                op = getattr(e, "op", None)
                loc = location_text(op) if op is not None else None
                where = f"'{op.name}'{f' at {loc}' if loc else ''}: " if op is not None else ""
                raise PassFailedException(f"tile-layout: {where}@{fn.sym_name.data}: {e}") from None


__all__ = ["LayoutAssignment", "TileLayoutPass", "assign_layouts", "fma_shape", "mma_atom_of", "mma_fragments"]
