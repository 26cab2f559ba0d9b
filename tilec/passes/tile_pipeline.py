"""``tile-pipeline{stages=N}``: multi-stage ``cp.async`` (or sm_90 bulk-copy) software pipelining of K loops.

Input: the warp-level program of ``tile-tiling`` (see
``examples/levels/gemm_warp_level.mlir``), optionally swizzled by
``tile-swizzle``. A *K loop* is an ``scf.for`` whose body starts with
block-wide global→shared ``tile.copy``\\ s into whole shared tiles, then a
``tile.barrier``, then the computation on those tiles, usually closed by a
second ``tile.barrier``::

    scf.for %k = %lb to %ub step %bk iter_args(%acc_i = %acc0) {
      tile.copy %a[%row0, %k] -> %sa ...          // global -> shared, synchronous
      tile.copy %b[%k, %col0] -> %sb ...
      tile.barrier
      ... tile.load %sa[...], tile.load %sb[...], tile.mma ...
      tile.barrier                                // nobody reads %sa/%sb any more
      scf.yield ...
    }

Output (CUTLASS's sm80 "multistage" mainloop, Triton's pipeliner): every
shared tile ``!tile.st<RxC, L>`` the loop copies into becomes one buffer of
``N`` stages ``!tile.st<NxRxC, L3>`` addressed through ``tile.stage``; the
copies become ``tile.async_copy`` (``cp.async``), issued ``N-1`` K tiles
ahead::

    // prologue: K tiles 0 .. N-2 into stages 0 .. N-2, one commit group each
    scf.if (%lb + s*%bk < %ub) { tile.async_copy ... -> stage s }   // s = 0 .. N-2
    tile.async_commit
    scf.for %k ... iter_args(%acc_i = %acc0, %rs = 0, %ws = N-1) {
      tile.async_wait N-2          // K tile i (in stage %rs) has landed for this thread
      tile.barrier                 // ... for every thread, and every warp is done with tile i-1
      tile.async_copy ... -> stage %ws        // K tile i+N-1 into the stage tile i-1 used
      tile.async_commit            // one group per iteration
      ... the computation on stage %rs ...
      scf.yield ..., (%rs + 1) mod N, %rs
    }
    tile.async_wait 0              // drain (only empty groups are left)
    tile.barrier                   // the loop ended with a barrier before: keep that

Why it is right. Group ``g`` (0-based, in commit order) holds K tile ``g``:
the prologue commits groups 0 .. N-2, iteration ``i`` commits group
``i+N-1``. At the wait of iteration ``i``, ``N-1+i`` groups have been
committed; ``tile.async_wait N-2`` leaves at most the newest ``N-2`` in
flight, so groups ``0 .. i`` (tile ``i`` included) are complete in this
thread, and the barrier after it makes every thread's part visible. The
stage written in iteration ``i``, ``(i-1) mod N``, was last read by the
computation of iteration ``i-1``, which every warp has finished once it is
past the barrier of iteration ``i``: one barrier per iteration protects both
directions, so the loop's trailing barrier is removed. K tiles past the end
(``%k + (N-1)*%bk >= %ub``) are skipped in the prologue, but their (empty)
group is still committed, so the group count, and with it the wait arithmetic, is the same
in every iteration: ragged K (a last partial tile, read as zeros by the
copy) and K smaller than ``(N-1)*BK`` (even K = 0) need nothing special.
In the loop the copies are not guarded at all: a K tile past the end reads
as zeros (a copy zero-fills outside its view, ``cp.async`` with a source
size of 0) into a stage that is never read, and the body keeps no branch
around its copies for the scheduler to stop at.
Nothing is peeled: the epilogue is one ``tile.async_wait 0``.

Choices:

- **One rank-3 buffer and ``tile.stage``, not N allocs and a select.** The
  stage is the first mode ``N:P`` of the buffer's layout, so the address of
  stage ``%i`` is ``base + %i*P`` (one multiply-add, as CUTLASS's
  ``smem_pipe_read`` indexing), whereas N separate allocs need an
  ``scf.index_switch``/select chain of N shared tiles in the loop, which
  ``tile-distribute`` and ``tile-to-llvm`` would then have to see through. A
  swizzled tile ``Sw<B,M,S> o 0 o (R,C):(C,1)`` becomes
  ``Sw<B,M,S> o 0 o (N,R,C):(P,C,1)`` with ``P`` the tile's cosize rounded up
  to a multiple of the swizzle's period ``2^(B+M+|S|)`` (and of 128 bytes):
  the swizzle only reads and flips bits below its period, so
  ``Sw(i*P + o) = i*P + Sw(o)`` and every stage has exactly the layout the
  tile had (``tile.stage``'s verifier checks the multiple, the interpreter
  checks stage offsets element by element). For the contract's 64x32 f16
  tiles and ``Sw<3,3,3>`` (period 512) ``P = 2048``: no padding.
- **Stage indices are loop-carried** (``%rs``, ``%ws``), advanced with an
  add, a compare and a select: no division by N in the loop. The write stage
  of the next iteration is the read stage of this one.
- **``stages=1`` leaves the K loops synchronous** (the IR is unchanged except
  for the register double-buffering below): one stage has nothing to overlap.
  ``stages=2`` is double buffering. ``stages`` must be 1 .. 9
  (``cp.async.wait_group`` takes at most 7 pending groups: ``N-2 <= 7``), or with
  ``bulk`` 1 .. 16 (transaction barriers have no such limit; a loop that falls back
  to ``cp.async`` takes 9).
- **Element copies get two stages at most.** A loop whose copies all read
  views promised aligned to fewer bytes than a ``cp.async`` moves
  (``0 < tile.aligned_rows < 4``: f16 rows of an odd length, what
  ``tilec.matmul`` compiles for odd K or N) is copied element by element
  through registers (``tile-distribute``): the loads issue where the copy is and
  the stores to shared memory follow at the next wait of the same iteration,
  so deeper stages give the loads no more time, they only repeat the copy's
  code in the prologue (Triton likewise pipelines only the loads it can make
  ``cp.async``). Such a loop is double buffered: one barrier per K tile,
  the copy of tile ``i+1`` before the computation on tile ``i``.
- The kernel's ``tile.launch`` ``smem`` grows by the extra stages; more than
  the device limit is an error naming the numbers.

**Register double-buffering of the fragments** (option
``reg-double-buffer``, on by default). A ``tile.mma`` whose operands are
``tile.load``\\ s of shared windows, with a warp K tile of several atom K
steps (the contract: warp K 32, ``m16n8k16`` K 16), is split into atom-K
sub-steps, and the loads of step ``s+1`` are issued before the mma of step
``s``::

    %ra0 = tile.load %sa_r[%wrow, %c0]  : ... -> !tile.rt<32x16xf16>
    %rb0 = tile.load %sb_r[%c0, %wcol]  : ... -> !tile.rt<16x32xf16>
    %ra1 = tile.load %sa_r[%wrow, %c16] ...
    %rb1 = tile.load %sb_r[%c16, %wcol] ...
    %d0 = tile.mma %ra0, %rb0, %acc_i
    %d1 = tile.mma %ra1, %rb1, %d0        // (ra2, rb2 would come before this one)

so two fragment sets are live, and the ``ldmatrix`` of step ``s+1`` overlaps
the ``mma.sync`` of step ``s`` (CUTLASS's warp-level ``warp_frag[2]``).
If the warp K tile is one atom step there is nothing to split, and the SIMT
FMA atom (one thread, K = 1) is never split. This fixes the order and the
fragment granularity at the tile level; whether it pays is decided by the
schedule after ``tile-distribute`` (ptxas may reorder independent ``ldmatrix``
and ``mma.sync`` anyway).

**Carrying the next K tile's first fragments** (option ``carry-fragments``,
on by default with register double-buffering and ``stages >= 2``; CUTLASS's
sm80 mainloop). Without it every iteration starts with the wait and barrier
and its first mma waits for its own ``ldmatrix``. With it the wait and
barrier move to just before the *last* mma of the iteration, followed by the
loads of the next K tile's first step from stage ``%rs_next``; those are
yielded and come back as ``iter_args``, and the first tile's are loaded
before the loop (after its own wait and barrier)::

    tile.async_wait N-2; tile.barrier; %fa0, %fb0 = loads of tile 0, step 0
    scf.for ... iter_args(..., %fa = %fa0, %fb = %fb0) {
      issue K tile i+N-1 into stage %ws; tile.async_commit
      loads of steps 1 .. S-1 from stage %rs
      mma steps 0 .. S-2              (step 0 on %fa, %fb)
      tile.async_wait N-2; tile.barrier   // tile i+1 landed everywhere; tile i's loads are done
      %na, %nb = loads of tile i+1, step 0, from stage %rs_next
      mma step S-1
      scf.yield ..., %na, %nb
    }

The barrier still protects both directions: every load of tile ``i`` is
before it (the next copies into that stage are issued in iteration ``i+1``),
and after it tile ``i+1`` is complete in every thread (at that wait ``N+i``
groups are committed and the newest ``N-2`` may be pending). The last
iteration loads fragments of a tile past the end from a stage that holds old
data; they are never used.

The split keeps the same products and sums them in the same K order, but in f32 per atom step rather than
once per warp tile, so results differ from the unsplit loop by f32 rounding
only; ``reg-double-buffer=false`` makes the pass bit-exact.

**Bulk tensor copies** (option ``bulk``, sm_90; CUTLASS's sm90 TMA
mainloop). A loop whose copies read kernel arguments with
``tile.aligned_rows >= 16``, 2-D or through a 2-D ``tile.subview`` (one
head of a (B, H, S, D) tensor: the tensor map is of the whole argument, up
to rank 5) takes ``tile.bulk_copy`` (one thread issues a
whole tile as TMA boxes) instead of ``cp.async``; each shared tile takes the
layout a tensor map writes (:mod:`tilec.layout.bulk`). Every stage gets a
transaction barrier (``%full``, ``!tile.mbar<N>``): the issuer announces the
stage's bytes (``tile.mbar_expect``), the copies complete on it, every
thread waits for its phase, whose parity ``%ph`` flips each time the read
stage wraps around. Copies are guarded by ``k < ub``, so every phase a copy
completes is waited for and none is in flight when the block exits::

    scf.for ... iter_args(..., %wph = 1, %ph = 0, %rs = 0, %ws = N-1) {
      tile.mbar_wait %full[%rs], %ph                      // K tile i has landed
      scf.if (k + (N-1)*bk < ub) {
        tile.mbar_wait %empty[%ws], %wph issuer           // every warp is done with the stage's last tile
        tile.mbar_expect %full[%ws], bytes; tile.bulk_copy ... -> stage %ws, %full[%ws]
      }
      ... loads of stage %rs ...
      tile.mbar_arrive %empty[%rs]                        // this warp is done with stage %rs
      ... mmas ...
      scf.yield ..., %ph, %ph_next, %rs_next, %rs
    }

With ``release`` (the default) nobody overwrites a stage a warp still reads
because each warp releases it on a per-warp "empty" barrier
(``!tile.mbar<N, warps>``) right after its last read, and the issuing thread
alone waits for that release before refilling it: the loop has no block
barrier. The parity of that wait is the previous iteration's read parity
(the stage's last tile was read then), 1 at first, which a fresh barrier
passes. ``release=false`` keeps one ``tile.barrier`` per iteration after the
wait, as the ``cp.async`` loop does.

**Warp specialisation** (option ``producer``, with ``bulk`` and ``release``; CUTLASS's sm90
warp-specialised mainloop, FlashAttention-3's producer). When every K loop of a kernel takes bulk
copies, sits in the kernel's body (or all in one loop of it over output tiles, below) and the block
is two or more whole warpgroups, the block grows by
one producer warpgroup (``tile.producer_threads = 128``) and its body splits into two ``scf.if``
regions marked ``tile.role``::

    %full = tile.mbar_init : !tile.mbar<N>; %empty = tile.mbar_init : !tile.mbar<N, warps>
    scf.if (warp >= W) {                       // the producer warpgroup
      tile.setmaxnreg "dec" 24
      <clones of the index math the copies need>
      scf.for %k ... iter_args(%wph = 1, %ws = 0) {   // each K loop in turn, one stage ring
        tile.mbar_wait %empty[%ws], %wph issuer       // every consumer warp released the stage
        tile.mbar_expect %full[%ws], bytes; tile.bulk_copy ... -> stage %ws, %full[%ws]
      }
    } {tile.role = "producer"}
    scf.if (warp < W) {                        // the kernel's own warps: everything else
      tile.setmaxnreg "inc" 240
      ...; tile.barrier threads 256            // ordered what came before the loop
      scf.for ... iter_args(..., %ph = 0, %rs = 0) {
        tile.mbar_wait %full[%rs], %ph; ... reads of stage %rs ...; tile.mbar_arrive %empty[%rs]
      }
      tile.barrier threads 256; ...
    } {tile.role = "consumers"}

The producer runs ahead by up to N tiles; the consumers have no copy and no block barrier in
their loops, and their barriers count their own threads (the producer never reaches them). The
two barriers around a loop stand for the loop's own first and last ones, which also ordered
shared-memory accesses before and after it; where the stages are all the shared memory the
kernel's threads touch (a GEMM: its epilogue writes registers to global memory, or later through
per-warp buffers of ``tile-bulk-store``), they order nothing and are left out, so the consumer
warps never meet: in a persistent kernel one warpgroup stores a tile while the other still runs
its last K steps (H200, session 24: 8192x8192x1024 0.97 -> 1.00 of cuBLAS). Both
sides walk the same sequence of K tiles, so the ring's parities agree; the K loops of a kernel
share one ring ((``ws``, ``wph``) and (``rs``, ``ph``) run on from one loop to the next). The block
starts at 65536 / threads registers a thread (``.maxnreg``); the producer gives its back and the
consumers take 240 (``setmaxnreg``). A block of one warpgroup gets no producer (it would double the
block's threads with no registers to move), nor does a kernel whose K loops sit deeper.

**Persistent kernels.** A kernel whose blocks loop over output tiles (``for tile in range(block,
tiles, blocks)``, the K loops in that loop's body) keeps that loop on both sides: the producer's
copy clones what the tile loop's body computes for the copies on its own induction variable, and
both tile loops carry their side of the ring, (``wph``, ``ws``) and (``ph``, ``rs``), from one tile
to the next. The producer goes on to the next tile's K tiles while the consumers finish this one.
Without a producer, a K loop inside another loop initialises its barriers right before it, so
every run starts its ring at phase 0 (once before the outer loop, the second run would wait for
phases the first had moved past).

**wgmmas in flight** (option ``in_flight``, on by default; with ``bulk`` and ``release``). A
(consumer) loop whose wgmmas accumulate one carried value (a GEMM's K loop) keeps them running
across K steps: they become async, ``tile.wgmma_wait %acc_i, G`` after them (``G`` the step's
groups) completes the previous step's, and that step's stage is released only then, one step late
(the producer waits for it); after the loop a wait for the last step and its stage's release.
Without a producer the issuing thread's refill of that stage moves after the release too (before
it, the thread would wait for its own warp). The stage a wgmma reads cannot
be refilled before the wait that completes it, which the lane interpreter checks.

A ``cp.async`` loop (no bulk copies: a masked copy, rows a tensor map cannot describe, or ``bulk``
off) with such a chain keeps it in flight too, from :data:`MIN_FLIGHT_STAGES` stages on (Triton's
Hopper pipeliner with pointer loads): its K tiles are issued one step less ahead (``k + (N-2)*step``,
``tile.async_wait N-3``), into the stage two steps behind the read stage, whose wgmmas every warp
waited for before the step's block barrier; the wait after the chain passes the chain's result on
(no copy of the accumulator across the back edge), and the one after the loop runs only where a
step did (a copy of the initial value on the way around the loop before a wait made ptxas
serialise the wgmmas). Measured on an H200 (4096^3 f16, 128x256x64, two warpgroups): Triton's
tutorial GEMM in tilec.lang staged by ``cp.async`` 542 TFLOP/s with three stages, 621 with four in
flight (Triton's own 605, bulk tensor copies 665).

Loops that have no global→shared ``tile.copy`` before their first barrier are
left alone. A loop that has such copies but cannot be pipelined (a copied
tile used outside the loop, copy indices computed from loop-carried values
or by ops with effects, other memory ops before the first barrier) is an
error that names the op and says why; every loop is checked before any is
changed. A ``tile.copy``'s optional ``atom`` is not carried over
(``tile.async_copy`` has none: ``cp.async`` is the atom); ``tile-tiling``
sets none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from tilec.ir.purity import is_pure
from xdsl.utils.exceptions import PassFailedException, VerifyException

from tilec.dialects.abi import (
    CONSUMERS,
    LAUNCH_ATTR,
    PRODUCER,
    PRODUCER_ATTR,
    REGISTER_FILE,
    ROLE_ATTR,
    launch_registers,
)
from tilec.dialects.tile.attributes import MAX_SHARED_BYTES, LaunchAttr
from tilec.dialects.tile.ops import (
    AllocOp,
    AsyncCommitOp,
    AsyncCopyOp,
    AsyncWaitOp,
    BarrierOp,
    BulkCopyOp,
    ClusterBarrierOp,
    CopyOp,
    LoadOp,
    MbarArriveOp,
    MbarExpectOp,
    MbarInitOp,
    MbarWaitOp,
    MmaOp,
    SetMaxNRegOp,
    SliceOp,
    StageOp,
    WarpIdOp,
    WgmmaOp,
    WgmmaWaitOp,
    limit_barriers,
)
from tilec.dialects.tile.types import MBAR_CLUSTER_WARPS, MBAR_WARPS, GlobalType, RegisterType, SharedType, element_bits
from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.layout.bulk import MBARRIER_BYTES, BulkBox, box_layout, choose_box
from tilec.ir.walk import in_loop, used_values
from tilec.passes.tile_layout import mma_atom_of
from tilec.passes.uniformity import cluster_varying
from tilec.passes.alignment import aligned_rows_of, element_rows, root_alloc, root_view

MAX_STAGES = 9
"""``tile.async_wait N-2`` must fit ``cp.async.wait_group`` (0 .. 7)."""

MAX_BULK_STAGES = 16
"""Stages of a loop whose copies are all bulk tensor copies: those complete on transaction barriers,
not wait groups, so only shared memory bounds them; 16 keeps the barrier arrays and the prologue
small (cuBLAS runs 13 stages of 64x64x64 tiles on decode shapes). With ``bulk`` and more than
:data:`MAX_STAGES`, a loop whose copies fall back to ``cp.async`` takes :data:`MAX_STAGES`."""

STAGE_ALIGN_BYTES = 128
"""Stages start at multiples of this many bytes (cp.async needs 16)."""

BULK_MIN_ALIGN = 16
"""A tensor map needs 16-byte aligned rows (address and row strides): ``tile.aligned_rows >= 16``."""
MAX_TENSOR_MAP_RANK = 5
"""The largest rank a tensor map describes (``cp.async.bulk.tensor.5d``)."""
SYNC_COPY_STAGES = 2
"""Stages of a K loop whose copies can only be element copies (:func:`element_copies_only`)."""


class TilePipelineError(PassFailedException):
    """``tile-pipeline`` cannot pipeline a loop, or its options are wrong; ``op`` is the culprit."""

    def __init__(self, message: str, op: Operation | None = None):
        self.op = op
        super().__init__(message)


# ---------------------------------------------------------------- layouts


def staged_layout(layout: Layout | ComposedLayout, stages: int, elem_bytes: int) -> tuple[Layout | ComposedLayout, int]:
    """The layout of ``stages`` copies of a shared tile laid out by ``layout``, and the stage stride.

    ``(R,C):(s,t)`` → ``(N,R,C):(P,s,t)``; ``Sw<B,M,S> o 0 o (R,C):(s,t)`` →
    ``Sw<B,M,S> o 0 o (N,R,C):(P,s,t)``. ``P`` is the tile's cosize rounded up
    to a multiple of :data:`STAGE_ALIGN_BYTES` and of the swizzle's period, so
    that every stage is the original tile moved by ``i*P`` elements.
    """
    if isinstance(layout, ComposedLayout):
        if not isinstance(layout.inner, Swizzle) or layout.offset != 0:
            raise ValueError(f"layout {layout} is not Sw<B,M,S> o 0 o layout")
        base, swizzle = layout.layout, layout.inner
    else:
        base, swizzle = layout, None
    align = max(1, STAGE_ALIGN_BYTES // elem_bytes)
    if swizzle is not None:
        align = math.lcm(align, swizzle.size())
    stride = -(-layout.cosize() // align) * align
    shape = base.shape if isinstance(base.shape, tuple) else (base.shape,)
    strides = base.stride if isinstance(base.stride, tuple) else (base.stride,)
    staged = Layout((stages, *shape), (stride, *strides))
    return (ComposedLayout(swizzle, 0, staged) if swizzle is not None else staged), stride


# ---------------------------------------------------------------- analysis


@dataclass
class _Plan:
    """What :func:`_analyze` found in a K loop."""

    loop: scf.ForOp
    copies: list[CopyOp]
    allocs: list[AllocOp]  # allocs[i] is the destination of copies[i]
    prefix: list[Operation]  # side-effect-free ops before the first barrier (index math)
    first_barrier: BarrierOp
    last_barrier: BarrierOp | None
    slices: list[list[Operation]] = field(default_factory=list)  # prefix ops each copy needs


def _defined_in(x: SSAValue | Operation, region: Region) -> bool:
    """Whether the value (its definition) or the op is nested in ``region``."""
    owner = x.owner if isinstance(x, SSAValue) else x
    block = owner if isinstance(owner, Block) else owner.parent_block()
    while block is not None:
        if block.parent_region() is region:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def _head(loop: scf.ForOp) -> list[Operation]:
    """The ops of ``loop``'s body before its first ``tile.barrier`` (all of them if it has none)."""
    head = []
    for o in loop.body.block.ops:
        if isinstance(o, BarrierOp):
            break
        head.append(o)
    return head


def _in_other_k_loop(tile: SSAValue, user: Operation, loop: scf.ForOp) -> bool:
    """Whether ``user`` is inside another loop (not ``loop``) that copies into ``tile`` before its first
    barrier, after that barrier or as the copy itself: a K loop of its own over the same tile (a
    kernel's unmasked loop and its masked last tiles), which takes the tile's stages in turn."""
    other = user.parent_op()
    while other is not None:
        if isinstance(other, scf.ForOp) and other is not loop:
            head = _head(other)
            copies = [o for o in head if isinstance(o, CopyOp) and o.dest is tile]
            if copies and len(head) < len(list(other.body.block.ops)):
                return user in copies or user not in head
        other = other.parent_op()
    return False


def _analyze(loop: scf.ForOp) -> _Plan | None:
    """The plan for pipelining ``loop``, or None if it is not a K loop (no copies before a barrier).

    Raises :class:`TilePipelineError` for a K loop that cannot be pipelined.
    """
    body = loop.body.block
    ops = list(body.ops)
    first = next((i for i, o in enumerate(ops) if isinstance(o, BarrierOp)), None)
    if first is None:
        return None
    head = ops[:first]
    copies = [
        o
        for o in head
        if isinstance(o, CopyOp) and isinstance(o.source.type, GlobalType) and isinstance(o.dest.type, SharedType)
    ]
    if not copies:
        return None

    def fail(op: Operation, why: str):
        raise TilePipelineError(f"tile-pipeline cannot pipeline this K loop: {why}", op)

    prefix: list[Operation] = []
    for o in head:
        if o in copies:
            continue
        if not is_pure(o):
            fail(o, f"'{o.name}' before the loop's first tile.barrier is neither a global->shared tile.copy nor side-effect-free index math")
        prefix.append(o)

    allocs: list[AllocOp] = []
    for c in copies:
        if c.dest_indices:
            fail(c, "the copy writes a window of a shared tile; only whole-tile copies are pipelined")
        dest = c.dest.owner
        if not isinstance(dest, AllocOp) or _defined_in(c.dest, loop.body):
            fail(c, "the copy's shared tile must come from a tile.alloc outside the loop")
        if dest in allocs:
            fail(c, "two copies write the same shared tile")
        for use in dest.result.uses:
            user = use.operation
            if user is c or (user not in head and _defined_in(user, loop.body)):
                continue
            if user not in head and _in_other_k_loop(dest.result, user, loop):
                continue  # the loops take the tile's stages in turn
            fail(user, f"shared tile %{dest.result.name_hint or '?'} is used outside the K loop (or before its first barrier) by '{user.name}'; it cannot be given stages")
        allocs.append(dest)

    # The copies' operands: the induction variable, values from outside the loop, or prefix ops of those.
    iv = body.args[0]
    slices: list[list[Operation]] = []
    prefix_set = set(prefix)
    for c in copies:
        needed: set[Operation] = set()
        work = list(c.operands)
        while work:
            v = work.pop()
            if v is iv or not _defined_in(v, loop.body):
                continue
            owner = v.owner
            if isinstance(owner, Block):
                fail(c, f"copy operand %{v.name_hint or '?'} is loop-carried; the copy of a later K tile cannot be computed ahead")
            if owner not in prefix_set:
                fail(c, f"copy operand %{v.name_hint or '?'} is computed by '{owner.name}' inside the loop")
            if owner not in needed:
                needed.add(owner)
                work.extend(used_values(owner))
        slices.append([o for o in prefix if o in needed])

    _check_async_readers(body, allocs, fail)
    last = ops[-2] if len(ops) >= 2 and isinstance(ops[-2], BarrierOp) and len(ops) - 2 > first else None
    return _Plan(loop, copies, allocs, prefix, ops[first], last, slices)


def _check_async_readers(body: Block, allocs: list[AllocOp], fail) -> None:
    """An async ``tile.wgmma`` reading a copied tile keeps reading it until a wait completes it; the
    next iteration's copies overwrite that stage, so a ``tile.wgmma_wait`` with ``pending = 0`` must
    follow it in the same iteration (a wgmma left running into the next iteration would need one
    stage more than the pipeline keeps)."""
    tiles = {a.result for a in allocs}
    ops = list(body.ops)
    for i, op in enumerate(ops):
        for inner in op.walk():
            if isinstance(inner, WgmmaOp) and inner.is_async is not None and tiles & {inner.a, inner.b}:
                if not any(isinstance(o, WgmmaWaitOp) and o.pending.value.data == 0 for o in ops[i + 1:]):
                    fail(inner, "an async tile.wgmma reads a shared tile that the next K tile's copies overwrite; "
                                "wait for it with tile.wgmma_wait ..., 0 (tl.wgmma_wait(x, 0)) in the same iteration")


def element_copies_only(plan: _Plan) -> bool:
    """Whether every copy of ``plan`` reads a kernel argument whose rows are promised aligned to fewer
    bytes than any ``cp.async`` moves (``0 < tile.aligned_rows < 4``: f16 rows of an odd length).
    ``tile-distribute`` then copies element by element through registers, its data in shared memory by
    the next wait of the iteration, so stages beyond double buffering only repeat its code."""
    return all(element_rows(copy.source) for copy in plan.copies)


def bulk_boxes(plan: _Plan) -> list[BulkBox] | None:
    """The box of each copy of ``plan`` when all can be bulk tensor copies, else None.

    A copy can when its source is a 2-D kernel argument, or a 2-D ``tile.subview``
    of one of rank up to 5 (the tensor map is the argument's, the subview's
    coordinates address it), whose rows are promised 16-byte aligned
    (``tile.aligned_rows``, checked at launch), it has no mask and a box fits its tile
    (:func:`tilec.layout.bulk.choose_box`).
    """
    boxes = []
    for copy in plan.copies:
        tile: SharedType = copy.dest.type
        if copy.mask is not None or copy.offsets is not None:  # a tensor map reads boxes, zero-filled outside the view only
            return None
        if len(tile.dims) != 2 or copy.source.type.rank != 2 or aligned_rows_of(copy.source) < BULK_MIN_ALIGN:
            return None
        root = root_view(copy.source)
        if not isinstance(root.owner, Block) or root.type.rank > MAX_TENSOR_MAP_RANK:
            return None
        box = choose_box(tuple(tile.dims), element_bits(tile.element_type) // 8)
        if box is None:
            return None
        boxes.append(box)
    return boxes


# ---------------------------------------------------------------- building


def _int_value(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr) and isinstance(v.type, IndexType):
        return owner.value.value.data
    return None


class _Consts:
    """Index constants visible at ``anchor`` (earlier in its block and its ancestors' blocks),
    and new ones, collected in :attr:`new` for the caller to insert before ``anchor``."""

    def __init__(self, anchor: Operation):
        self.known: dict[int, SSAValue] = {}
        self.new: list[Operation] = []
        op: Operation | None = anchor
        while op is not None and not isinstance(op, func.FuncOp) and op.parent_block() is not None:
            block = op.parent_block()
            for o in block.ops:
                if o is op:
                    break
                if o.results and (v := _int_value(o.results[0])) is not None:
                    self.known.setdefault(v, o.results[0])
            op = block.parent_op()

    def __call__(self, value: int) -> SSAValue:
        if value not in self.known:
            c = arith.ConstantOp(IntegerAttr(value, IndexType()))
            c.result.name_hint = f"c{value}"
            self.new.append(c)
            self.known[value] = c.result
        return self.known[value]


def _offset_index(base: SSAValue, delta: int, consts: _Consts, ops: list[Operation], name: str | None = None) -> SSAValue:
    """``base + delta`` (a constant when ``base`` is one)."""
    if delta == 0:
        return base
    known = _int_value(base)
    if known is not None:
        return consts(known + delta)
    add = arith.AddiOp(base, consts(delta))
    add.result.name_hint = name
    ops.append(add)
    return add.result


def _k_ahead(k: SSAValue, step: SSAValue, ahead: int, consts: _Consts, ops: list[Operation], name: str) -> SSAValue:
    """``k + ahead*step``."""
    if ahead == 0:
        return k
    s = _int_value(step)
    if s is not None:
        return _offset_index(k, ahead * s, consts, ops, name)
    mul = arith.MuliOp(step, consts(ahead))
    add = arith.AddiOp(k, mul.result)
    add.result.name_hint = name
    ops += [mul, add]
    return add.result


def _guarded_copies(
    plan: _Plan, bufs: list[SSAValue], k: SSAValue, stage: SSAValue, ub: SSAValue, ops: list[Operation], suffix: str,
    guard: bool = True, bars: SSAValue | None = None, bulk_bytes: int = 0,
    released: tuple[SSAValue, SSAValue] | None = None, multicast: list[bool] | None = None,
) -> None:
    """``scf.if (k < ub) { async copies of K tile k into stage }`` then ``tile.async_commit``.

    ``guard=False`` issues the copies unconditionally: a K tile past the end
    then reads as zeros (a copy zero-fills outside its view) into a stage
    nobody reads, and the loop body has no branch around its copies.
    With barriers ``bars`` the copies are bulk copies completing on the
    stage's barrier, announced by one ``tile.mbar_expect`` of ``bulk_bytes``,
    and nothing is committed. ``released = (empty, parity)``: the issuing
    thread first waits for the phase of ``empty[stage]`` that every warp's
    release of the stage's previous K tile completes. ``multicast``: per copy,
    whether the blocks of the cluster multicast it.
    """
    inner: list[Operation] = []
    if released is not None:
        inner.append(MbarWaitOp(released[0], stage, released[1], issuer=True))
    if bars is not None:
        inner.append(MbarExpectOp(bars, stage, bulk_bytes))
    iv = plan.loop.body.block.args[0]
    for i, (copy, buf, slice_ops) in enumerate(zip(plan.copies, bufs, plan.slices)):
        mapping: dict[SSAValue, SSAValue] = {iv: k}
        for o in slice_ops:
            inner.append(o.clone(value_mapper=mapping))
        view = StageOp(buf, stage)
        view.result.name_hint = f"{buf.name_hint or 'buf'}_w{suffix}"
        inner.append(view)
        thr = copy.thr.data if copy.thr is not None else None
        val = copy.val.data if copy.val is not None else None
        indices = [mapping.get(i, i) for i in copy.source_indices]
        source = mapping.get(copy.source, copy.source)
        if bars is not None:
            inner.append(BulkCopyOp(source, indices, view.result, bars, stage, bool(multicast and multicast[i])))
        else:
            mask, offsets = (mapping.get(v, v) if v is not None else None for v in (copy.mask, copy.offsets))
            inner.append(AsyncCopyOp(source, indices, view.result, thr, val, mask=mask, prefix=copy.prefix is not None,
                                     offsets=offsets))
    if guard:
        cond = arith.CmpiOp(k, ub, "slt")
        cond.result.name_hint = f"more{suffix}"
        inner.append(scf.YieldOp())
        ops += [cond, scf.IfOp(cond.result, [], Region(Block(inner)))]
    else:
        ops += inner
    if bars is None:
        ops.append(AsyncCommitOp())


def _launch_of(op: Operation) -> tuple[func.FuncOp, LaunchAttr] | None:
    while op is not None and not isinstance(op, func.FuncOp):
        op = op.parent_op()
    if op is None:
        return None
    launch = op.attributes.get(LAUNCH_ATTR)
    return (op, launch) if isinstance(launch, LaunchAttr) else None


def _drop_copies(plan: _Plan) -> None:
    """Erase the loop's copies and its barriers (the stages' copies and barriers replace them), and
    the index math only the copies used."""
    for op in [*plan.copies, plan.first_barrier, *([plan.last_barrier] if plan.last_barrier else [])]:
        op.detach()
        op.erase()
    for o in reversed(plan.prefix):
        if all(not r.uses for r in o.results):
            o.detach()
            o.erase()


@dataclass(frozen=True)
class _Staged:
    """The ``n``-stage buffer that replaces a tile's alloc: its shape, element type and layout, and
    the shared-memory bytes it adds (checked against the limit before the type is made)."""

    alloc: AllocOp
    dims: tuple[int, ...]
    element_type: Attribute
    layout: Layout | ComposedLayout
    extra_bytes: int

    def buffer_type(self) -> SharedType:
        try:
            return SharedType(self.dims, self.element_type, self.layout)
        except VerifyException as err:
            raise TilePipelineError(f"tile-pipeline cannot give the shared tile {self.dims[0]} stages: {err}",
                                    self.alloc) from None


def _staged(alloc: AllocOp, n: int, box: BulkBox | None) -> _Staged:
    """How ``alloc``'s tile is staged ``n`` times (laid out as ``box``'s tensor map writes it, with a
    bulk copy)."""
    tile: SharedType = alloc.result.type
    eb = element_bits(tile.element_type) // 8
    if box is not None:
        tile = SharedType(tile.dims, tile.element_type, box_layout(box, tile.dims[1]))
    try:
        layout, stride = staged_layout(tile.layout, n, eb)
    except ValueError as err:
        raise TilePipelineError(f"tile-pipeline cannot give the shared tile stages: {err}", alloc) from None
    extra = ((n - 1) * stride + tile.layout.cosize()) * eb - tile.size_bytes
    return _Staged(alloc, (n, *tile.dims), tile.element_type, layout, extra)


def _pipeline(plan: _Plan, stages: int, boxes: list[BulkBox] | None = None, release: bool = False,
              buffers: dict[AllocOp, SSAValue] | None = None, in_flight: bool = False) -> scf.ForOp:
    """Pipeline one K loop with ``cp.async``, or with bulk copies of ``boxes`` (one per copy);
    with ``release`` (bulk only) the warps release stages through empty barriers, not a block barrier.
    ``buffers``: the staged buffer of each tile an earlier loop pipelined (filled in here); a later
    loop over the same tile uses it too, after the earlier loop's drain. ``in_flight``: a wgmma chain on
    a carried accumulator stays in flight across K steps; with ``release``
    (:func:`_wgmma_in_flight`) the refill of a stage follows its release, one step late; with
    ``cp.async`` (:data:`MIN_FLIGHT_STAGES` stages or more) tiles are issued a step less ahead."""
    buffers = {} if buffers is None else buffers
    loop = plan.loop
    body = loop.body.block
    n = stages
    bulk = boxes is not None
    release = release and bulk
    # cp.async with a wgmma chain kept in flight: K tiles are issued one step less ahead, into the stage
    # the K step before the previous one read (its wgmmas are complete in every warp once the block
    # has met at this step's barrier: each warp waited for them at the end of the previous step)
    copied = {a.result for a in plan.allocs}
    flight = in_flight and not bulk and n >= MIN_FLIGHT_STAGES and \
        _wgmma_chain(loop, staged=lambda v: v in copied) is not None
    ahead = n - 2 if flight else n - 1

    # 1. The staged buffers replace the allocs (checked against the smem limit before any change).
    #    Bulk copies lay their tiles out as the tensor map writes them.
    staged: list[tuple[AllocOp, _Staged | None]] = []
    extra_bytes = n * MBARRIER_BYTES * ((2 if release else 1) if bulk else 0)
    for i, alloc in enumerate(plan.allocs):
        stage = _staged(alloc, n, boxes[i] if bulk else None)
        if alloc in buffers:  # an earlier loop staged this tile: the same buffer, if it is the same shape
            have = buffers[alloc].type
            if tuple(have.dims) != stage.dims or str(have.layout) != str(stage.layout):
                raise TilePipelineError(f"tile-pipeline: two K loops copy into this shared tile with different stages "
                                        f"({have} and {n} stages of {alloc.result.type})", alloc)
            staged.append((alloc, None))
            continue
        extra_bytes += stage.extra_bytes
        staged.append((alloc, stage))
    found = _launch_of(loop)
    if found is not None:
        kernel, launch = found
        smem = launch.smem.data + extra_bytes
        if smem > MAX_SHARED_BYTES:
            raise TilePipelineError(
                f"tile-pipeline: {n} stages need {smem} bytes of shared memory ({launch.smem.data} + {extra_bytes} "
                f"for the extra stages), more than the device limit of {MAX_SHARED_BYTES}; use fewer stages",
                kernel,
            )
        kernel.attributes[LAUNCH_ATTR] = launch.replace(smem=smem)
    bufs: list[SSAValue] = []
    for alloc, stage in staged:
        if stage is None:
            bufs.append(buffers[alloc])
            continue
        new = AllocOp(stage.buffer_type())
        new.result.name_hint = alloc.result.name_hint
        Rewriter.insert_op(new, InsertPoint.before(alloc))
        bufs.append(new.result)
        buffers[alloc] = new.result
    bars: SSAValue | None = None
    empty: SSAValue | None = None
    bulk_bytes = 0
    # In a cluster, copies of one window for every block are multicast: a stage is then refilled once
    # every block released it (cluster-wide empty barriers), so only with releases; and only for a
    # loop run once (a loop inside another re-initialises its barriers, which the cluster would
    # have to meet around each time).
    cluster = found[1].cluster_size if found is not None else 1
    may = bulk and release and cluster > 1 and not in_loop(loop)
    varying = cluster_varying(found[0]) if may else set()
    multicast = [may and _multicast(c, boxes[i], cluster, varying) for i, c in enumerate(plan.copies)]
    if bulk:
        # A loop inside another (a persistent kernel's K loop, run once per output tile) starts its
        # ring afresh each time: its barriers are initialised right before it, after the previous
        # run's drain, not once with phases that the earlier runs moved on.
        where = InsertPoint.before(loop) if in_loop(loop) else InsertPoint.before(plan.allocs[-1])
        init = MbarInitOp(n)
        init.result.name_hint = "full"
        Rewriter.insert_op(init, where)
        bars = init.result
        if release:
            init = MbarInitOp(n, MBAR_CLUSTER_WARPS if any(multicast) else MBAR_WARPS)
            init.result.name_hint = "empty"
            Rewriter.insert_op(init, where)
            empty = init.result
        if any(multicast):  # every block's barriers initialised before any block multicasts; none leaves early
            Rewriter.insert_op(ClusterBarrierOp(), InsertPoint.before(loop))
            Rewriter.insert_op(ClusterBarrierOp(), InsertPoint.before(found[0].body.block.last_op))
        bulk_bytes = sum(math.prod(c.dest.type.dims) * element_bits(c.dest.type.element_type) // 8 for c in plan.copies)

    # 2. Prologue: K tiles 0 .. N-2 (0 .. N-3 with wgmmas in flight).
    lb, ub, step = loop.lb, loop.ub, loop.step
    consts = _Consts(loop)
    pro: list[Operation] = []
    for s in range(ahead):
        k_s = _k_ahead(lb, step, s, consts, pro, f"k{s}")
        _guarded_copies(plan, bufs, k_s, consts(s), ub, pro, str(s), bars=bars, bulk_bytes=bulk_bytes,
                        multicast=multicast)
    rs0, ws0 = consts(0), consts(ahead)

    # 3. The steady state, in the loop's own block (two more iter_args: read and write stage;
    #    with bulk copies a third before them, the parity of the read stage's barrier phase;
    #    with releases a fourth before that, the parity of the write stage's empty barrier).
    wph = body.insert_arg(IndexType(), len(body.args)) if release else None
    if wph is not None:
        wph.name_hint = "wph"
    ph = body.insert_arg(IndexType(), len(body.args)) if bulk else None
    if ph is not None:
        ph.name_hint = "ph"
    rs = body.insert_arg(IndexType(), len(body.args))
    rs.name_hint = "rs"
    ws = body.insert_arg(IndexType(), len(body.args))
    ws.name_hint = "ws"
    iv = body.args[0]
    top: list[Operation] = [MbarWaitOp(bars, rs, ph) if bulk else AsyncWaitOp(ahead - 1)]
    if not release:
        top.append(BarrierOp())
    Rewriter.insert_op(top, InsertPoint.at_start(body))
    issue: list[Operation] = []
    k_next = _k_ahead(iv, step, ahead, consts, issue, "k_next")
    # Bulk copies are guarded: every phase a copy completes is waited for in the loop, so none
    # is still writing shared memory when the block exits.
    _guarded_copies(plan, bufs, k_next, ws, ub, issue, "", guard=bulk, bars=bars, bulk_bytes=bulk_bytes,
                    released=(empty, wph) if release else None, multicast=multicast)
    refill = list(issue)
    reads: list[SSAValue] = []
    for buf in bufs:
        view = StageOp(buf, rs)
        view.result.name_hint = f"{buf.name_hint or 'buf'}_r"
        issue.append(view)
        reads.append(view.result)
    Rewriter.insert_op(issue, InsertPoint.after(plan.first_barrier))
    _drop_copies(plan)
    for alloc, view in zip(plan.allocs, reads):
        alloc.result.replace_uses_with_if(view, lambda use: _defined_in(use.operation, body.parent))
        if not alloc.result.uses:  # another K loop may still copy into it
            alloc.detach()
            alloc.erase()

    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    adv: list[Operation] = []
    rs_next, ph_next = _advance(rs, ph, n, consts, adv)  # the parity flips each time the read stage wraps
    phase = [] if ph_next is None else [ph_next]
    if release:  # every warp is done with stage %rs (moved up to its last read by release_early)
        adv.insert(0, MbarArriveOp(empty, rs))
    # The next write stage and its empty barrier's parity are this iteration's read stage and parity
    # (two stages behind the read stage with wgmmas in flight: it moves on as that one does).
    ws_next = _advance(ws, None, n, consts, adv, "ws")[0] if flight else rs
    Rewriter.insert_op(adv, InsertPoint.before(yield_op))
    Rewriter.replace_op(yield_op, scf.YieldOp(*yield_op.operands, *([ph] if release else []), *phase, rs_next,
                                              ws_next))

    # 4. The new loop, then the drain.
    loop.body.detach_block(body)
    # A fresh barrier's "previous" phase counts as complete: the first write stage's parity 1 passes.
    parities = ([consts(1)] if release else []) + ([consts(0)] if bulk else [])
    new_loop = scf.ForOp(lb, ub, step, [*loop.iter_args, *parities, rs0, ws0], Region(body))
    for old, new in zip(loop.results, new_loop.results):
        new.name_hint = old.name_hint
    new_loop.results[-2].name_hint, new_loop.results[-1].name_hint = "rs_end", "ws_end"
    if bulk:
        new_loop.results[-3].name_hint = "ph_end"
    if release:
        new_loop.results[-4].name_hint = "wph_end"
    known = len(consts.new)
    Rewriter.insert_op([*consts.new, *pro], InsertPoint.before(loop))
    Rewriter.insert_op(new_loop, InsertPoint.before(loop))
    for old, new in zip(loop.results, new_loop.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    drain: list[Operation] = [BarrierOp()] if bulk else [AsyncWaitOp(0), BarrierOp()]
    Rewriter.insert_op(drain, InsertPoint.after(new_loop))
    if flight:
        _chain_in_flight(new_loop, *_wgmma_chain(new_loop, rs_at=-2), through=True)
    if in_flight and empty is not None:
        released = _wgmma_in_flight(new_loop, empty, n, consts, rs_at=-2)
        if released is not None:
            # the issuing thread refills the stage the previous K step read: only once this step's
            # wait completed that step's wgmmas and its warp released the stage (else it would wait
            # for its own release)
            for op in refill:
                op.detach()
            Rewriter.insert_op(refill, InsertPoint.after(released))
            Rewriter.insert_op(consts.new[known:], InsertPoint.before(new_loop))
    return new_loop


# ---------------------------------------------------------------- warp specialisation

PRODUCER_THREADS = 128
"""The producer of a warp-specialised kernel: one warpgroup (``setmaxnreg`` works per warpgroup)."""
PRODUCER_REGISTERS = 24
"""What the producer keeps of its registers (it only computes addresses): the rest go to the consumers."""
TILE_LOOP_PRODUCER_REGISTERS = 40
"""The same for a producer that also runs a persistent kernel's loop over output tiles (its tile
origins, the ring's phase and slot carried from tile to tile): with 24, ptxas spilled the values
both roles read past the split (36 bytes, the 128x256 wgmma GEMM with a bias into f32); 32 and 40
do not (CUTLASS's warp-specialised kernels keep 40)."""
MAX_CONSUMER_REGISTERS = 240
MIN_FLIGHT_STAGES = 4
"""The fewest ``cp.async`` stages a K loop keeps its wgmmas in flight with: they are issued a step less
ahead, so with 3 a single K tile would be in flight (and ptxas serialised the wgmmas: C7515)."""
MAX_WGMMA_PENDING = 7
"""``wgmma.wait_group N`` takes N up to 7: a K step's chain kept in flight has at most 7 groups."""


def consumer_registers(consumers: int, producer: int = PRODUCER_REGISTERS) -> int:
    """Registers per consumer thread once the producer warpgroup has kept ``producer`` of its own: the
    block's pool (what it starts with, :func:`launch_registers` a thread) less the producer's share."""
    threads = consumers + PRODUCER_THREADS
    spare = (launch_registers(threads) * threads - PRODUCER_THREADS * producer) // consumers
    return min(spare // 8 * 8, MAX_CONSUMER_REGISTERS)


class _Producer:
    """The producer region's code: clones of what the copies need, built once each.

    A kernel that loops over its output tiles (a persistent kernel) has its K loops inside that
    *tile loop*: the producer runs its own tile loop (:meth:`enter`), in which it clones what the
    tile loop's body computes for the copies (on its own induction variable); what the kernel's
    body computes is cloned once, before it."""

    def __init__(self, body: Block):
        self.body = body
        self.ops: list[Operation] = []
        self.map: dict[SSAValue, SSAValue] = {}
        self.tile_body: Block | None = None
        self.tile_ops: list[Operation] = []

    def enter(self, tile_loop: scf.ForOp, iv: SSAValue) -> None:
        """From now on emit into the producer's tile loop, whose induction variable is ``iv``."""
        self.tile_body = tile_loop.body.block
        self.tile_ops = []
        self.map[self.tile_body.args[0]] = iv

    def emit(self, op: Operation) -> None:
        """Append ``op`` where the producer is building: its tile loop's body once entered."""
        (self.tile_ops if self.tile_body is not None else self.ops).append(op)

    def value(self, v: SSAValue, at: Operation) -> SSAValue:
        """``v`` in the producer region: an argument of the kernel, or a clone of the pure ops it comes from."""
        if v in self.map:
            return self.map[v]
        owner = v.owner
        if isinstance(owner, Block):
            if owner is not self.body:
                raise TilePipelineError("tile-pipeline{producer=true}: a copy's operand is a value of an enclosing "
                                        "loop or region; the producer warps cannot compute it", at)
            return v
        where = owner.parent_block()
        if where is not self.body and (self.tile_body is None or where is not self.tile_body):
            raise TilePipelineError(f"tile-pipeline{{producer=true}}: the copies need %{v.name_hint or '?'}, computed "
                                    f"inside '{where.parent_op().name if where and where.parent_op() else '?'}': the "
                                    "producer warps cannot compute it", at)
        # arith's divisions are not side-effect free to xDSL (a zero divisor), but the kernel's body
        # computes this one anyway, unconditionally: the producer may too
        if owner.regions or not (is_pure(owner) or owner.name.startswith("arith.")):
            raise TilePipelineError(f"tile-pipeline{{producer=true}}: the copies need %{v.name_hint or '?'}, computed "
                                    f"by '{owner.name}', which has effects: the producer warps cannot compute it "
                                    "themselves", at)
        for operand in owner.operands:
            self.value(operand, at)
        clone = owner.clone(value_mapper=self.map)
        (self.tile_ops if where is self.tile_body else self.ops).append(clone)
        for old, new in zip(owner.results, clone.results):
            self.map[old] = new
        return self.map[v]


def _advance(index: SSAValue, parity: SSAValue | None, n: int, consts: _Consts, ops: list[Operation],
             name: str = "rs", parity_name: str = "ph") -> tuple[SSAValue, SSAValue | None]:
    """``index + 1`` wrapped to ``n`` stages and, with a ``parity``, that parity flipped when it wraps
    (the ops appended to ``ops``): how every stage ring of the pass moves on."""
    inc = arith.AddiOp(index, consts(1))
    wrap = arith.CmpiOp(inc.result, consts(n), "eq")
    nxt = arith.SelectOp(wrap.result, consts(0), inc.result)
    inc.result.name_hint, wrap.result.name_hint, nxt.result.name_hint = f"{name}_inc", "wrap", f"{name}_next"
    ops += [inc, wrap, nxt]
    if parity is None:
        return nxt.result, None
    flip = arith.SubiOp(consts(1), parity)
    nph = arith.SelectOp(wrap.result, flip.result, parity)
    flip.result.name_hint, nph.result.name_hint = f"{parity_name}_flip", f"{parity_name}_next"
    ops += [flip, nph]
    return nxt.result, nph.result


def _copied_bytes(plan: _Plan) -> int:
    return sum(math.prod(c.dest.type.dims) * element_bits(c.dest.type.element_type) // 8 for c in plan.copies)


def _producer_loop(plan: _Plan, producer: _Producer, allocs: dict[AllocOp, SSAValue], full: SSAValue,
                   empty: SSAValue, wph0: SSAValue, ws0: SSAValue, consts: _Consts, n: int,
                   multicast: list[bool] | None = None) -> scf.ForOp:
    """The producer's loop over ``plan``'s K tiles: wait until every consumer warp released the write
    stage (``empty``; one thread), announce the tile's bytes on ``full`` and issue its bulk copies
    (``multicast``: per copy, whether the cluster's blocks multicast it)."""
    loop = plan.loop
    lb, ub, step = (producer.value(v, loop) for v in (loop.lb, loop.ub, loop.step))
    body = Block(arg_types=[IndexType(), IndexType(), IndexType()])
    k, wph, ws = body.args
    k.name_hint, wph.name_hint, ws.name_hint = "k", "wph", "ws"
    ops: list[Operation] = [MbarWaitOp(empty, ws, wph, issuer=True), MbarExpectOp(full, ws, _copied_bytes(plan))]
    iv = loop.body.block.args[0]
    for i, (copy, slice_ops) in enumerate(zip(plan.copies, plan.slices)):
        mapping: dict[SSAValue, SSAValue] = {iv: k}
        for o in slice_ops:  # index math of the copy inside the loop, on the producer's k
            for operand in o.operands:
                if operand not in mapping and not _defined_in(operand, loop.body):
                    mapping[operand] = producer.value(operand, copy)
            clone = o.clone(value_mapper=mapping)
            ops.append(clone)
            mapping.update(zip(o.results, clone.results))
        for v in (copy.source, *copy.source_indices):
            if v not in mapping and not _defined_in(v, loop.body):
                mapping[v] = producer.value(v, copy)
        view = StageOp(allocs[copy.dest.owner], ws)
        view.result.name_hint = f"{copy.dest.name_hint or 'buf'}_w"
        ops += [view, BulkCopyOp(mapping[copy.source], [mapping[i] for i in copy.source_indices], view.result,
                                 full, ws, multicast=bool(multicast and multicast[i]))]
    ws_next, wph_next = _advance(ws, wph, n, consts, ops, "ws", "wph")
    ops.append(scf.YieldOp(wph_next, ws_next))
    body.add_ops(ops)
    return scf.ForOp(lb, ub, step, [wph0, ws0], Region(body))


def _multicast(copy: CopyOp, box: BulkBox | None, cluster: int, varying: set[SSAValue]) -> bool:
    """Whether the blocks of a cluster multicast ``copy`` (a K loop's copy, before it is pipelined, in
    boxes ``box``): every block runs its loop alike and copies the same window (nothing of it in
    ``varying``, :func:`~tilec.passes.uniformity.cluster_varying`: a block that skipped the loop, or ran
    it fewer times, would never issue its share, nor release the stages the others wait on), and each
    box's rows divide into the blocks' shares of whole swizzle periods (what ``tile.bulk_copy ...
    multicast`` issues)."""
    if cluster <= 1 or box is None or box.rows % cluster:
        return False
    if (box.rows // cluster) * box.inner * box.elem_bytes % box.alignment():
        return False
    loop = copy.parent_op()  # a K loop's copies are in its body
    return not any(v in varying for v in (copy.source, *copy.source_indices, loop.body.block.args[0]))


def _shares_only_stages(kernel: func.FuncOp, plans: list[_Plan]) -> bool:
    """Whether the only shared memory the kernel's own threads touch is its K loops' staged tiles,
    touched only inside those loops: then nothing a consumer warp does before or after a K loop meets another
    warp's accesses in shared memory, and the block barriers around the loops order nothing (the
    stages are ordered by their full and empty barriers). A view (``tile.stage``) is no access; a
    shared tile reached any other way, or an access outside the loops, keeps the barriers."""
    staged = {alloc for plan in plans for alloc in plan.allocs}
    bodies = [plan.loop.body for plan in plans]
    for op in kernel.walk():
        if isinstance(op, StageOp | AllocOp):
            continue
        shared = [v for v in op.operands if isinstance(v.type, SharedType)]
        if not shared:
            continue
        if not any(_defined_in(op, body) for body in bodies):
            return False
        if any(root_alloc(v) not in staged for v in shared):
            return False
    return True


def _consumer_loop(plan: _Plan, allocs: dict[AllocOp, SSAValue], full: SSAValue, empty: SSAValue,
                   ph0: SSAValue, rs0: SSAValue, consts: _Consts, n: int, fenced: bool = True) -> scf.ForOp:
    """``plan``'s loop for the consumers: wait for the read stage's tile, read it, release it on
    ``empty`` (moved up to the last read by :func:`release_early`); no copies, no barriers in it.
    ``fenced``: a consumer barrier before and after it (see :func:`_shares_only_stages`)."""
    loop = plan.loop
    body = loop.body.block
    ph = body.insert_arg(IndexType(), len(body.args))
    rs = body.insert_arg(IndexType(), len(body.args))
    ph.name_hint, rs.name_hint = "ph", "rs"
    top: list[Operation] = [MbarWaitOp(full, rs, ph)]
    for alloc in plan.allocs:
        view = StageOp(allocs[alloc], rs)
        view.result.name_hint = f"{alloc.result.name_hint or 'buf'}_r"
        top.append(view)
        alloc.result.replace_uses_with_if(view.result, lambda use: _defined_in(use.operation, loop.body))
    Rewriter.insert_op(top, InsertPoint.at_start(body))
    _drop_copies(plan)
    yield_op = body.last_op
    adv: list[Operation] = [MbarArriveOp(empty, rs)]
    rs_next, ph_next = _advance(rs, ph, n, consts, adv)
    Rewriter.insert_op(adv, InsertPoint.before(yield_op))
    Rewriter.replace_op(yield_op, scf.YieldOp(*yield_op.operands, ph_next, rs_next))
    loop.body.detach_block(body)
    new = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, ph0, rs0], Region(body))
    for old, res in zip(loop.results, new.results):
        res.name_hint = old.name_hint
    # the loop's first barrier ordered what came before it (a tile written before the loop), its
    # last one what comes after it: one consumer barrier each side keeps both, where there is any
    Rewriter.insert_op([BarrierOp(), new, BarrierOp()] if fenced else [new], InsertPoint.before(loop))
    for old, res in zip(loop.results, new.results):
        old.replace_all_uses_with(res)
    loop.detach()
    loop.erase()
    return new


def _wgmma_chain(loop: scf.ForOp, rs_at: int = -1, staged=None) -> tuple[int, list[WgmmaOp]] | None:
    """The synchronous ``tile.wgmma`` ops of ``loop``'s body that accumulate one loop-carried value
    (``acc_i`` → wgmma → ... → wgmma → yielded as the next ``acc_i``, nothing else reading it), with
    the iter_arg's position; None if the body has no such chain or other wgmmas. The stage the
    wgmmas read is the body's argument ``rs_at`` (the last of a consumer loop's); ``staged(operand)``
    instead: whether an operand is a tile the pipeline stages (before it made the stages)."""
    body = loop.body.block
    wgmmas = [o for o in body.ops if isinstance(o, WgmmaOp)]
    if not wgmmas or len(wgmmas) > MAX_WGMMA_PENDING or any(o.is_async is not None for o in wgmmas) or any(
            isinstance(o, (WgmmaOp, WgmmaWaitOp)) and o.parent_block() is not body for o in loop.body.walk()):
        return None
    if staged is None:
        rs = body.args[rs_at]
        staged = lambda v: isinstance(v.owner, StageOp) and v.owner.index is rs  # noqa: E731
    for w in wgmmas:  # operands the stages hold: nothing else may change under a running wgmma
        for operand in (w.a, w.b):
            if operand is None or not staged(operand):
                return None
    yield_op = body.last_op
    first = wgmmas[0]
    acc = first.c
    if not isinstance(acc.owner, Block) or acc.owner is not body or not acc.has_one_use():
        return None
    for prev, nxt in zip(wgmmas, wgmmas[1:]):
        if nxt.c is not prev.result or not prev.result.has_one_use():
            return None
    last = wgmmas[-1].result
    position = acc.index - 1  # the block's first argument is the induction variable
    if not last.has_one_use() or yield_op.operands[position] is not last:
        return None
    return position, wgmmas


def _wgmma_in_flight(loop: scf.ForOp, empty: SSAValue, n: int, consts: _Consts, rs_at: int = -1) -> scf.IfOp | None:
    """Keep a consumer loop's wgmmas in flight across K steps (CUTLASS's sm90 consumer): the chain
    accumulating the carried value becomes async, and ``tile.wgmma_wait %acc_i, G`` after it (``G``
    the chain's groups) completes the previous K step's, whose stage is released only then (one
    step later than its reads). After the loop a wait for the last step and its release. Returns
    the release in the loop (an ``scf.if`` past the first step), or None where nothing changed.
    ``rs_at``: the position of the read stage among the body's arguments and the loop's results
    counted from the end (the last in a consumer loop; a plain pipeline's write stage follows it)."""
    found = _wgmma_chain(loop, rs_at)
    if found is None:
        return None
    position, chain = found
    body = loop.body.block
    iv, rs = body.args[0], body.args[rs_at]
    arrive = next((o for o in body.ops if isinstance(o, MbarArriveOp)), None)
    if arrive is None:
        return None
    wait, done = _chain_in_flight(loop, position, chain)
    not_first = arith.CmpiOp(iv, loop.lb, "ne")
    release: list[Operation] = []
    prev = _previous_stage(rs, n, consts, release)
    release.append(MbarArriveOp(empty, prev))
    release.append(scf.YieldOp())
    arrive.detach()
    arrive.erase()
    released = scf.IfOp(not_first.result, [], Region(Block(release)))
    Rewriter.insert_op([not_first, released], InsertPoint.after(wait))
    # after the loop (and the last step's groups): the last step's stage
    ran = arith.CmpiOp(loop.lb, loop.ub, "slt")
    tail: list[Operation] = []
    last_stage = _previous_stage(loop.results[rs_at], n, consts, tail)
    tail += [MbarArriveOp(empty, last_stage), scf.YieldOp()]
    Rewriter.insert_op([ran, scf.IfOp(ran.result, [], Region(Block(tail)))], InsertPoint.after(done))
    return released


def _chain_in_flight(loop: scf.ForOp, position: int, chain: list[WgmmaOp],
                     through: bool = False) -> tuple[WgmmaWaitOp, WgmmaWaitOp]:
    """Make the wgmma ``chain`` on the carried value at ``position`` asynchronous: ``tile.wgmma_wait
    %acc_i, G`` after it (``G`` the chain's groups) completes the previous K step's, and after the
    loop a wait for the last step's, which the loop's users then read. The two waits. ``through``:
    the wait takes the chain's result and passes it on to the next step (``%acc_i`` is then dead once
    the chain read it: held in the wgmmas' own registers, with no copy across the back edge)."""
    for w in chain:
        w.properties["async"] = UnitAttr()
    acc = chain[-1].result if through else loop.body.block.args[position + 1]
    wait = WgmmaWaitOp(acc, len(chain))  # the previous K step's groups are done; this step's may run
    Rewriter.insert_op(wait, InsertPoint.after(chain[-1]))
    result = loop.results[position]
    uses = [list(r.uses) for r in loop.results]
    done = WgmmaWaitOp(result, 0)
    done.result.name_hint = result.name_hint
    if not through:
        Rewriter.insert_op(done, InsertPoint.after(loop))
        for use in uses[position]:
            use.operation.operands[use.index] = done.result
        return wait, done
    yield_op = loop.body.block.last_op
    yield_op.operands[position] = wait.result
    # The loop and its last wait run only where a step does (`scf.if (lb < ub)`, the initial values
    # otherwise): no way around the loop reaches the wait, which LLVM's zero-trip path did with a copy
    # of the initial accumulator, and ptxas serialised the wgmmas for it (C7515).
    ran = arith.CmpiOp(loop.lb, loop.ub, "slt")
    ran.result.name_hint = "ran"
    then, otherwise = Block(), Block()
    guard = scf.IfOp(ran.result, [r.type for r in loop.results], Region(then), Region(otherwise))
    Rewriter.insert_op([ran, guard], InsertPoint.before(loop))
    loop.detach()
    then.add_ops([loop, done, scf.YieldOp(*[done.result if i == position else r for i, r in enumerate(loop.results)])])
    otherwise.add_op(scf.YieldOp(*loop.iter_args))
    for new, old, users in zip(guard.results, loop.results, uses):
        new.name_hint = old.name_hint
        for use in users:
            use.operation.operands[use.index] = new
    return wait, done


def _previous_stage(rs: SSAValue, n: int, consts: _Consts, ops: list[Operation]) -> SSAValue:
    """``(rs - 1) mod n``: the stage the previous K step read."""
    first = arith.CmpiOp(rs, consts(0), "eq")
    dec = arith.SubiOp(rs, consts(1))
    prev = arith.SelectOp(first.result, consts(n - 1), dec.result)
    prev.result.name_hint = "rs_prev"
    ops += [first, dec, prev]
    return prev.result


def tile_loop_of(kernel: func.FuncOp, plans: list[_Plan]) -> tuple[bool, scf.ForOp | None]:
    """Where ``plans``' K loops sit: ``(True, None)`` in the kernel's body, ``(True, T)`` all in the
    body of one loop ``T`` of the kernel's body (a persistent kernel's loop over its output tiles),
    ``(False, None)`` anywhere else."""
    body = kernel.body.block
    parents = {p.loop.parent_block() for p in plans}
    if parents == {body}:
        return True, None
    if len(parents) == 1:
        outer = next(iter(parents)).parent_op()
        if isinstance(outer, scf.ForOp) and outer.parent_block() is body:
            return True, outer
    return False, None


def can_warp_specialize(kernel: func.FuncOp, launch: LaunchAttr, plans: list[_Plan],
                        boxes: list[list[BulkBox] | None]) -> bool:
    """Whether ``kernel``'s K loops can be fed by a producer warpgroup: every loop takes bulk copies and
    sits in the kernel's body or in one loop of it over the output tiles (a persistent kernel; not in
    a branch or deeper), and the block is two or more whole warpgroups. With one consumer warpgroup
    the producer would double the block's threads for no registers to give (attention at D = 64,
    BM 64 on an H200: 443 -> 251 TFLOP/s, two blocks an SM became one): such a kernel keeps the
    pipeline without a producer."""
    bx, by, bz = launch.block_dims
    placed, _ = tile_loop_of(kernel, plans) if plans else (False, None)
    if not (bool(plans) and all(b is not None for b in boxes) and by == bz == 1 and bx % PRODUCER_THREADS == 0
            and bx >= 2 * PRODUCER_THREADS and bx + PRODUCER_THREADS <= 1024 and placed):
        return False
    return _producer_can_compute(kernel, plans)


def _producer_can_compute(kernel: func.FuncOp, plans: list[_Plan]) -> bool:
    """Whether the producer can compute each K loop's bounds and its copies' operands from pure ops
    (a dry run of :class:`_Producer`: the clones it makes are never inserted)."""
    producer = _Producer(kernel.body.block)
    _, tiles = tile_loop_of(kernel, plans)
    try:
        if tiles is not None:
            for v in (tiles.lb, tiles.ub, tiles.step):
                producer.value(v, tiles)
            producer.enter(tiles, tiles.body.block.args[0])
        for plan in plans:
            loop = plan.loop
            for v in (loop.lb, loop.ub, loop.step):
                producer.value(v, loop)
            needed = [v for ops in plan.slices for op in ops for v in op.operands]
            needed += [v for copy in plan.copies for v in (copy.source, *copy.source_indices)]
            for v in needed:
                if v is not loop.body.block.args[0] and not _defined_in(v, loop.body):
                    producer.value(v, loop)
    except TilePipelineError:
        return False
    return True


def _carry_ring(tiles: scf.ForOp, consts: _Consts) -> tuple[scf.ForOp, tuple[SSAValue, SSAValue]]:
    """``tiles`` (a persistent kernel's loop over output tiles) rebuilt to carry the consumers' read
    stage and phase from one tile to the next, both starting at 0: the new loop and, inside it, the
    two values at the start of a tile. Its yield passes them through until the caller replaces it."""
    body = tiles.body.block
    ph = body.insert_arg(IndexType(), len(body.args))
    rs = body.insert_arg(IndexType(), len(body.args))
    ph.name_hint, rs.name_hint = "ph", "rs"
    yield_op = body.last_op
    Rewriter.replace_op(yield_op, scf.YieldOp(*yield_op.operands, ph, rs))
    tiles.body.detach_block(body)
    new = scf.ForOp(tiles.lb, tiles.ub, tiles.step, [*tiles.iter_args, consts(0), consts(0)], Region(body))
    Rewriter.insert_op(new, InsertPoint.before(tiles))
    for old, res in zip(tiles.results, new.results):
        res.name_hint = old.name_hint
        old.replace_all_uses_with(res)
    tiles.detach()
    tiles.erase()
    return new, (ph, rs)


def _warp_specialize(kernel: func.FuncOp, launch: LaunchAttr, plans: list[_Plan], n: int,
                     boxes: list[list[BulkBox]], in_flight: bool = True) -> list[scf.ForOp]:
    """Split ``kernel`` into a producer warpgroup that issues every K loop's bulk copies and the
    consumer warps that run everything else (see the module docstring). Returns the consumer loops."""
    body = kernel.body.block
    consumers = launch.block_dims[0]
    fenced = not _shares_only_stages(kernel, plans)
    consts = _Consts(body.first_op)

    # 1. One stage ring for all the K loops: a staged buffer per copied tile, N full and N empty barriers.
    allocs: dict[AllocOp, SSAValue] = {}
    extra = 2 * n * MBARRIER_BYTES
    stages: dict[AllocOp, _Staged] = {}
    for plan, plan_boxes in zip(plans, boxes):
        for alloc, box in zip(plan.allocs, plan_boxes):
            if alloc not in stages:
                stages[alloc] = _staged(alloc, n, box)
                extra += stages[alloc].extra_bytes
    smem = launch.smem.data + extra
    if smem > MAX_SHARED_BYTES:
        raise TilePipelineError(f"tile-pipeline: {n} stages need {smem} bytes of shared memory ({launch.smem.data} + "
                                f"{extra} for the stages and barriers), more than the device limit of "
                                f"{MAX_SHARED_BYTES}; use fewer stages", kernel)
    head: list[Operation] = []
    for alloc, stage in stages.items():
        buffer = AllocOp(stage.buffer_type())
        buffer.result.name_hint = alloc.result.name_hint
        head.append(buffer)
        allocs[alloc] = buffer.result
    # In a cluster whose blocks all run every K loop (and the tile loop) alike, copies of one window for
    # all are multicast; then each block releases a stage to all (one ring for all the loops). Otherwise
    # the blocks stay independent.
    cluster = launch.cluster_size
    varying = cluster_varying(kernel) if cluster > 1 else set()
    alike = cluster > 1 and not any(p.loop.body.block.args[0] in varying for p in plans)  # every block runs all
    multicasts = [[alike and _multicast(c, box, cluster, varying) for c, box in zip(p.copies, b or [])]
                  for p, b in zip(plans, boxes)]
    cluster = cluster if any(any(m) for m in multicasts) else 1
    full, empty = MbarInitOp(n), MbarInitOp(n, MBAR_CLUSTER_WARPS if cluster > 1 else MBAR_WARPS)
    full.result.name_hint, empty.result.name_hint = "full", "empty"
    head += [full, empty]

    # 2. The producer's loops, one after another (the stage ring runs on from one to the next),
    #    from clones of what they need; then the consumers' loops in place. In a persistent kernel
    #    both sides run the loop over output tiles, which carries the ring on from tile to tile.
    producer = _Producer(body)
    _, tiles = tile_loop_of(kernel, plans)
    wph, ws = consts(1), consts(0)  # a fresh barrier's "previous" phase counts as complete
    if tiles is not None:
        bounds = [producer.value(v, tiles) for v in (tiles.lb, tiles.ub, tiles.step)]
        tile_body = Block(arg_types=[IndexType(), IndexType(), IndexType()])
        tile_body.args[0].name_hint = "tile"
        producer.enter(tiles, tile_body.args[0])
        wph0, ws0 = wph, ws
        wph, ws = tile_body.args[1:]
    for plan, flags in zip(plans, multicasts):
        ploop = _producer_loop(plan, producer, allocs, full.result, empty.result, wph, ws, consts, n, flags)
        producer.emit(ploop)
        wph, ws = ploop.results
    if tiles is not None:
        tile_body.add_ops([*producer.tile_ops, scf.YieldOp(wph, ws)])
        producer.tile_body = None
        producer.emit(scf.ForOp(*bounds, [wph0, ws0], Region(tile_body)))
        tiles, (ph, rs) = _carry_ring(tiles, consts)
    else:
        ph, rs = consts(0), consts(0)
    loops = []
    for plan in plans:
        loops.append(_consumer_loop(plan, allocs, full.result, empty.result, ph, rs, consts, n, fenced))
        ph, rs = loops[-1].results[-2:]
        if in_flight:
            _wgmma_in_flight(loops[-1], empty.result, n, consts)
    if tiles is not None:
        last = tiles.body.block.last_op
        Rewriter.replace_op(last, scf.YieldOp(*last.operands[:-2], ph, rs))
    for alloc in allocs:
        if not alloc.result.uses:
            alloc.detach()
            alloc.erase()

    # 3. The roles: the consumer warps (first) take registers, the producer warpgroup (last) gives them.
    rest = [o for o in body.ops if not isinstance(o, func.ReturnOp)]
    for o in rest:
        if isinstance(o, AllocOp):  # shared tiles stay the block's, before the roles
            head.append(o)
    warp = WarpIdOp()
    first = consts(consumers // 32)
    is_producer = arith.CmpiOp(warp.result, first, "uge")
    is_consumer = arith.CmpiOp(warp.result, first, "ult")
    kept = PRODUCER_REGISTERS if tiles is None else TILE_LOOP_PRODUCER_REGISTERS
    regs = consumer_registers(consumers, kept)
    give = regs > launch_registers(consumers + PRODUCER_THREADS)
    # one warp of the producer warpgroup issues every copy and alone waits on the empty barriers: the
    # others give their registers back and leave (they would run the loops' bookkeeping for nothing)
    issuer = arith.CmpiOp(warp.result, first, "eq")
    issuer.result.name_hint = "issuer"
    issuing = scf.IfOp(issuer.result, [], Region(Block([*producer.ops, scf.YieldOp()])))
    pro_ops = ([SetMaxNRegOp("dec", kept)] if give else []) + [issuer, issuing, scf.YieldOp()]
    con_block = Block()
    if give:
        con_block.add_op(SetMaxNRegOp("inc", regs))
    for o in rest:
        if not isinstance(o, AllocOp):
            o.detach()
            con_block.add_op(o)
    con_block.add_op(scf.YieldOp())
    pro_if = scf.IfOp(is_producer.result, [], Region(Block(pro_ops)))
    con_if = scf.IfOp(is_consumer.result, [], Region(con_block))
    pro_if.attributes[ROLE_ATTR] = StringAttr(PRODUCER)
    con_if.attributes[ROLE_ATTR] = StringAttr(CONSUMERS)
    for o in head:
        if o.parent is not None:
            o.detach()
    ret = body.last_op
    # a cluster meets once every block's barriers are initialised (before any block arrives on another's
    # or multicasts into it) and at the end (no block leaves while another may still write to it)
    meet = [ClusterBarrierOp()] if cluster > 1 else []
    Rewriter.insert_op([*consts.new, *head, *meet, warp, is_producer, is_consumer, pro_if, con_if,
                        *([ClusterBarrierOp()] if cluster > 1 else [])], InsertPoint.before(ret))
    limit_barriers(con_if, consumers)  # the producer warps never reach the consumers' barriers
    kernel.attributes[LAUNCH_ATTR] = launch.replace(block=(consumers + PRODUCER_THREADS, 1, 1), smem=smem)
    kernel.attributes[PRODUCER_ATTR] = IntegerAttr(PRODUCER_THREADS, 64)
    return loops


# ---------------------------------------------------------------- register double-buffering


def _shared_window(v: SSAValue, mma: MmaOp) -> LoadOp | None:
    load = v.owner
    if not isinstance(load, LoadOp) or not isinstance(load.source.type, SharedType):
        return None
    if not v.has_one_use() or load.parent_block() is not mma.parent_block():
        return None
    return load


def _sliceable(v: SSAValue) -> bool:
    """Whether operand ``v`` of an mma is a 2-D register tile without a fragment yet (its K steps are then
    ``tile.slice``\\ s of it: registers it holds anyway, whatever else reads it)."""
    return isinstance(v.type, RegisterType) and v.type.fragment is None and len(v.type.dims) == 2


def split_k_steps(mma: MmaOp) -> bool:
    """Split ``mma`` into atom-K steps, loading the fragments of step ``s+1`` before the mma of step ``s``.

    Applies to warp-wide (tensor-core) atoms when at least one operand is a
    ``tile.load`` of a shared tile used only by this mma, in its block, with
    only side-effect-free ops or other loads between it and the mma, the other
    such a load too or a register tile (its steps are
    ``tile.slice``\\ s of it: flash attention's ``q`` and ``P``, held in
    registers, against K's and V's tiles in shared memory), and the mma's atom
    K divides the warp K tile more than once. Returns whether it changed anything.
    """
    atom = mma_atom_of(mma)  # the op's, else the one tile-layout will choose
    if atom.threads < 32:
        return False  # the SIMT FMA atom: no warp-wide fragments to double-buffer
    a_t, b_t = mma.a.type, mma.b.type
    if a_t.fragment is not None or b_t.fragment is not None:
        return False
    ta, tb = mma.transpose_a is not None, mma.transpose_b is not None
    a_axis, b_axis = (0 if ta else 1), (1 if tb else 0)
    k = a_t.dims[a_axis]
    ak = atom.shape_mnk[2]
    if k <= ak or k % ak:
        return False
    la, lb = _shared_window(mma.a, mma), _shared_window(mma.b, mma)
    loads = [x for x in (la, lb) if x is not None]
    if not loads or la is lb or (la is None and not _sliceable(mma.a)) or \
            (lb is None and not _sliceable(mma.b)):
        return False
    block = mma.parent_block()
    first = min(block.get_operation_index(x) for x in loads)
    between = list(block.ops)[first + 1 : block.get_operation_index(mma)]
    if any(not (isinstance(o, LoadOp) or is_pure(o)) for o in between):
        return False

    ops: list[Operation] = []
    consts = _Consts(mma)

    def indices(load: LoadOp, axis: int, delta: int) -> list[SSAValue]:
        idx = list(load.indices) or [consts(0)] * len(load.source.type.dims)
        idx[axis] = _offset_index(idx[axis], delta, consts, ops)
        return idx

    def load_step(s: int) -> tuple[SSAValue, SSAValue]:
        out = []
        for v, load, t, axis, tag in ((mma.a, la, a_t, a_axis, "a"), (mma.b, lb, b_t, b_axis, "b")):
            dims = list(t.dims)
            dims[axis] = ak
            if load is not None:
                new = LoadOp(load.source, indices(load, axis, s * ak), RegisterType(dims, t.element_type))
                new.result.name_hint = f"{load.result.name_hint or 'r' + tag}{s}"
            else:
                offsets = [0, 0]
                offsets[axis] = s * ak
                new = SliceOp(v, offsets, RegisterType(dims, t.element_type))
                new.result.name_hint = f"{v.name_hint or tag}{s}"
            ops.append(new)
            out.append(new.result)
        return out[0], out[1]

    steps = k // ak
    frags = [load_step(0)]
    acc = mma.c
    for s in range(steps):
        if s + 1 < steps:
            frags.append(load_step(s + 1))  # the next step's fragments, before this step's mma
        a, b = frags[s]
        step = MmaOp(a, b, acc, transpose_a=ta, transpose_b=tb, atom=None if mma.atom is None else atom)
        step.attributes.update(mma.attributes)
        step.result.name_hint = f"{mma.result.name_hint or 'd'}{s}" if s + 1 < steps else mma.result.name_hint
        ops.append(step)
        acc = step.result
    Rewriter.insert_op([*consts.new, *ops], InsertPoint.before(mma))
    mma.result.replace_all_uses_with(acc)
    for o in (mma, *loads):
        o.detach()
        o.erase()
    return True


# ---------------------------------------------------------------- carrying fragments across the back-edge


def _slice_in(v: SSAValue, block: Block) -> list[Operation]:
    """The ops of ``block`` that compute ``v`` (its backward slice inside ``block``), in block order."""
    needed: set[Operation] = set()
    work = [v]
    while work:
        owner = work.pop().owner
        if isinstance(owner, Operation) and owner.parent_block() is block and owner not in needed:
            needed.add(owner)
            work.extend(owner.operands)
    return [o for o in block.ops if o in needed]


def _wait_if_exists(wait: MbarWaitOp, k: SSAValue, ub: SSAValue, ops: list[Operation]) -> None:
    """``scf.if (k < ub) { wait }``: the phase of a K tile past the end never completes (nothing was
    issued for it), so its wait must not run (the barrier array's phases are not those of empty groups)."""
    cond = arith.CmpiOp(k, ub, "slt")
    cond.result.name_hint = "exists"
    ops += [cond, scf.IfOp(cond.result, [], Region(Block([wait, scf.YieldOp()])))]


CARRY_FMA_MAX_K = 8
"""The widest warp K tile whose SIMT (FMA atom) operands are carried across the back-edge. H200, f32,
carried / not: 64x64x8 with 4x4 thread tiles 28 / 23 TFLOP/s at 2048^3 (64 registers a lane carried),
128x128x8 with 8x8 31 / 32 at 4096^3 (128 registers); at K 32 (tile-to-ptx's default block) carrying
needs 512 registers a lane and does not compile."""


def _k_extent(mma: MmaOp) -> int:
    a = mma.a.type
    return a.dims[0] if mma.transpose_a is not None else a.dims[1]


def carry_first_fragments(loop: scf.ForOp) -> scf.ForOp | None:
    """Load the next K tile's first fragments before this tile's last mma; carry them across the back-edge.

    ``loop`` is a K loop as :func:`_pipeline` left it (wait and barrier first,
    the read and write stages as its last two ``iter_args``), with its mmas
    split by :func:`split_k_steps`. The wait and barrier move from the top of
    the body to just before the last mma, followed by the loads of the next
    tile's first step (from stage ``%rs_next``), which become ``iter_args``;
    the first tile's are loaded before the loop, after its own wait and
    barrier. Returns the new loop, or None when the loop is not of that form.
    """
    body = loop.body.block
    ops = list(body.ops)
    if len(ops) < 3 or not isinstance(ops[0], AsyncWaitOp | MbarWaitOp):
        return None
    wait = ops[0]
    sync = ops[1] if isinstance(ops[1], BarrierOp) else None  # None: stages are released by empty barriers
    if sync is None and not any(isinstance(o, MbarArriveOp) for o in ops):
        return None
    if sum(isinstance(o, BarrierOp) for o in loop.body.walk()) != (1 if sync else 0):
        return None  # another barrier in the body: its placement is someone else's protocol
    head = 2 if sync else 1  # the wait (and the barrier) the body starts with
    rs = body.args[-2]
    views = [o for o in ops if isinstance(o, StageOp) and o.index is rs]
    mmas = [o for o in ops if isinstance(o, MmaOp)]
    if not views or not mmas:
        return None
    first, last = mmas[0], mmas[-1]
    if mma_atom_of(first).threads < 32 and _k_extent(first) > CARRY_FMA_MAX_K:
        return None  # the SIMT FMA atom reads its operands from shared memory K step by K step; carried, they
        # are whole warp-tile fragments in registers: (TM + TN) x K a lane, 512 at TM = TN = 8 and K = 32
    carried: list[LoadOp] = []
    for v in (first.a, first.b):
        load = v.owner
        if not isinstance(load, LoadOp) or load.source.owner not in views or not v.has_one_use():
            return None
        if any(_defined_in(i, loop.body) for i in load.indices):
            return None
        carried.append(load)
    if carried[0] is carried[1]:
        return None
    at = ops.index(last)
    for view in views:
        for use in view.result.uses:
            user = use.operation
            if not isinstance(user, LoadOp) or user.parent_block() is not body:
                return None
            if user not in carried and ops.index(user) > at:
                return None  # a load of this tile after the barrier would race with the next copies
    yield_op = ops[-1]
    assert isinstance(yield_op, scf.YieldOp)
    rs_next = yield_op.operands[-2]
    bulk = isinstance(wait, MbarWaitOp)
    if bulk and (wait.index is not rs or wait.parity is not body.args[-3]):
        return None
    ph_next = yield_op.operands[-3] if bulk else None
    advance = _slice_in(rs_next, body)
    if ph_next is not None:
        advance = [o for o in body.ops if o in {*advance, *_slice_in(ph_next, body)}]
    if any(not is_pure(o) or o.regions for o in advance) or any(ops.index(o) < head for o in advance):
        return None

    def loads(stage: SSAValue, out: list[Operation], tag: str) -> list[SSAValue]:
        new_views: dict[StageOp, StageOp] = {}
        values = []
        for load in carried:
            view = load.source.owner
            if view not in new_views:
                nv = StageOp(view.buffer, stage)
                nv.result.name_hint = f"{(view.result.name_hint or 'buf').removesuffix('_r')}_{tag}"
                new_views[view] = nv
                out.append(nv)
            new = LoadOp(new_views[view].result, list(load.indices), load.result.type)
            new.result.name_hint = f"{load.result.name_hint or 'r'}_{tag}"
            out.append(new)
            values.append(new.result)
        return values

    # Before the loop: the first tile's wait and barrier, then its first fragments.
    if isinstance(wait, MbarWaitOp):
        pre: list[Operation] = []
        _wait_if_exists(MbarWaitOp(wait.barriers, loop.iter_args[-2], loop.iter_args[-3]), loop.lb, loop.ub, pre)
        if sync:
            pre.append(BarrierOp())
    else:
        pre = [AsyncWaitOp(wait.pending.value.data), BarrierOp()]
    inits = loads(loop.iter_args[-2], pre, "first")
    # In the body: the carried values replace the loads of the first step ...
    args = []
    for load in carried:
        arg = body.insert_arg(load.result.type, len(body.args))
        arg.name_hint = f"{load.result.name_hint or 'r'}_c"
        load.result.replace_all_uses_with(arg)
        load.detach()
        load.erase()
        args.append(arg)
    # ... and the wait, barrier and next tile's first loads go before the last mma.
    for o in advance:
        o.detach()
    if sync:
        sync.detach()
    wait.detach()
    mid: list[Operation] = [*advance]
    if isinstance(wait, MbarWaitOp):  # the next tile's phase, in the next read stage, if there is a next tile
        bars = wait.barriers
        wait.erase()
        k_next = arith.AddiOp(body.args[0], loop.step)
        k_next.result.name_hint = "k_after"
        mid.append(k_next)
        _wait_if_exists(MbarWaitOp(bars, rs_next, ph_next), k_next.result, loop.ub, mid)
    else:
        mid.append(wait)
    if sync:
        mid.append(sync)
    nexts = loads(rs_next, mid, "next")
    Rewriter.insert_op(mid, InsertPoint.before(last))
    Rewriter.replace_op(yield_op, scf.YieldOp(*yield_op.operands, *nexts))
    # The second step's loads of this tile go to the top of the body, ahead of the copies: ptxas
    # cannot move an ldmatrix above a cp.async (both touch shared memory), and issued late
    # they stall the mmas that follow.
    order = list(body.ops)
    early = [o for o in order[: order.index(first)] if isinstance(o, LoadOp) and o.source.owner in views]
    hoist = {o for load in early for o in _slice_in(load.result, body)}
    if all(is_pure(o) or isinstance(o, LoadOp) for o in hoist):
        ordered = [o for o in body.ops if o in hoist]
        for o in ordered:
            o.detach()
        Rewriter.insert_op(ordered, InsertPoint.at_start(body))

    loop.body.detach_block(body)
    new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *inits], Region(body))
    for old, new in zip(loop.results, new_loop.results):
        new.name_hint = old.name_hint
    for load, new in zip(carried, new_loop.results[len(loop.results):]):
        new.name_hint = f"{load.result.name_hint or 'r'}_end"
    Rewriter.insert_op([*pre, new_loop], InsertPoint.before(loop))
    for old, new in zip(loop.results, new_loop.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    return new_loop


# ---------------------------------------------------------------- releasing a stage early


def release_early(loop: scf.ForOp) -> None:
    """Move the loop's ``tile.mbar_arrive`` (the warps' release of the read stage) up to just after
    the last op that reads the stage: the issuing thread may refill it as soon as every warp is past
    that point, not only at the end of the iteration."""
    body = loop.body.block
    arrive = next((o for o in body.ops if isinstance(o, MbarArriveOp)), None)
    if arrive is None:
        return
    rs = arrive.index
    readers: set[Operation] = set()
    for view in [o for o in body.ops if isinstance(o, StageOp) and o.index is rs]:
        readers.add(view)
        for use in view.result.uses:
            op = use.operation
            while op.parent_block() is not body:
                op = op.parent_op()
            readers.add(op)
    # an async wgmma reads the stage until a wait completes it (the analysis requires a wait 0 for it)
    if any(isinstance(r, WgmmaOp) and r.is_async is not None for r in readers):
        readers.update(o for o in body.ops if isinstance(o, WgmmaWaitOp) and o.pending.value.data == 0)
    last = max(readers, key=body.get_operation_index, default=None)
    if last is not None and body.get_operation_index(last) < body.get_operation_index(arrive):
        arrive.detach()
        Rewriter.insert_op(arrive, InsertPoint.after(last))


# ---------------------------------------------------------------- the pass


def _shared_stages(plans: list[_Plan], stages: int, bulk: bool = False) -> list[int]:
    """Each plan's stage count: ``stages``, or two for loops of element copies only, and at most
    :data:`MAX_STAGES` for a loop whose copies are not all bulk tensor copies (``cp.async``'s wait
    groups). Loops that copy into the same shared tile share its buffer, so each group of loops
    linked by shared tiles takes one count: the largest among them (more stages than element copies
    use only repeat their copy code in the prologue), within the smallest limit among them."""
    limits = [MAX_BULK_STAGES if bulk and bulk_boxes(p) is not None else MAX_STAGES for p in plans]
    counts = [min(stages, SYNC_COPY_STAGES if element_copies_only(p) else limit) for p, limit in zip(plans, limits)]
    group = list(range(len(plans)))  # union-find over loops that share a shared tile

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = group[group[i]]
            i = group[i]
        return i

    for i, a in enumerate(plans):
        for j in range(i):
            if set(a.allocs) & set(plans[j].allocs):
                group[root(i)] = root(j)
    members: dict[int, list[int]] = {}
    for i in range(len(plans)):
        members.setdefault(root(i), []).append(i)
    for ids in members.values():
        shared = min(max(counts[i] for i in ids), *(limits[i] for i in ids))
        for i in ids:
            counts[i] = shared
    return counts


def check_stages(stages: int, bulk: bool = False) -> None:
    """``stages`` as the options give it: 1 .. :data:`MAX_STAGES`, with ``bulk`` 1 ..
    :data:`MAX_BULK_STAGES` (a :class:`TilePipelineError`)."""
    limit = MAX_BULK_STAGES if bulk else MAX_STAGES
    if not isinstance(stages, int) or isinstance(stages, bool) or not 1 <= stages <= limit:
        why = ("bulk copies: a transaction barrier a stage" if bulk else
               "tile.async_wait N-2 must fit cp.async.wait_group's 0 .. 7; bulk copies take up to "
               f"{MAX_BULK_STAGES}")
        raise TilePipelineError(f"stages must be 1 .. {limit} ({why}), got {stages}")


@dataclass(frozen=True)
class TilePipelinePass(ModulePass):
    """Multi-stage ``cp.async`` pipelining of K loops (see the module docstring).

    ``stages``: 1 (leave K loops synchronous), 2 (double buffering) .. 9 (with ``bulk``: 16).
    ``reg_double_buffer``: split warp-level mmas into atom-K steps with the next
    step's fragment loads before each mma. ``bulk`` (sm_90): K loops whose
    copies allow it take bulk tensor copies and transaction barriers instead
    of ``cp.async`` (see the module docstring). ``release`` (with ``bulk``):
    the warps release each stage on an empty barrier after their last read of
    it, and the issuing thread waits for that before refilling the stage, so
    the K loop has no block barrier (``release=false``: one per K tile).
    ``producer`` (with ``bulk`` and ``release``): a kernel whose K loops all take bulk copies gets a
    producer warpgroup that issues them, ahead of the consumers (warp specialisation);
    ``in_flight`` (with ``bulk`` and ``release``, or ``cp.async`` copies in 4 stages or more): a K loop's
    wgmma chain on a carried accumulator stays in flight across K steps, its stage released (and,
    without a producer, refilled) one step later.
    """

    name: ClassVar[str] = "tile-pipeline"

    stages: int = 3
    reg_double_buffer: bool = True
    carry_fragments: bool = True
    bulk: bool = False
    release: bool = True
    producer: bool = False
    in_flight: bool = True

    def __post_init__(self):
        check_stages(self.stages, self.bulk)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            check_stages(self.stages, self.bulk)
        except TilePipelineError as e:
            raise TilePipelineError(f"tile-pipeline: {e}") from None
        pipelined: list[scf.ForOp] = []
        released: list[scf.ForOp] = []  # the consumer loops of warp-specialised kernels
        if self.stages >= 2:
            # Every K loop is checked before any is changed: an error leaves the module as it was
            # (but for the smem limit, checked per loop as it is pipelined).
            loops = [o for o in op.walk() if isinstance(o, scf.ForOp)]
            plans = [p for p in map(_analyze, loops) if p is not None]
            stages = _shared_stages(plans, self.stages, self.bulk)
            buffers: dict[AllocOp, SSAValue] = {}
            if self.producer and self.bulk and self.release:
                plans, stages, specialised = self._warp_specialize(plans, stages)
                released.extend(specialised)
            for plan, n in zip(plans, stages):
                pipelined.append(_pipeline(plan, n, bulk_boxes(plan) if self.bulk else None, self.release, buffers,
                                           self.in_flight))
        if self.reg_double_buffer:
            for mma in [o for o in op.walk() if isinstance(o, MmaOp)]:
                split_k_steps(mma)
            if self.carry_fragments:
                pipelined = [carry_first_fragments(loop) or loop for loop in pipelined]
        for loop in pipelined + released:
            release_early(loop)

    def _warp_specialize(self, plans: list[_Plan], stages: list[int]):
        """Give each kernel whose K loops allow it (:func:`can_warp_specialize`) a producer warpgroup;
        the plans and stage counts left for :func:`_pipeline`, and the consumer loops made."""
        by_kernel: dict[func.FuncOp, list[int]] = {}
        for i, plan in enumerate(plans):
            found = _launch_of(plan.loop)
            if found is not None:
                by_kernel.setdefault(found[0], []).append(i)
        done: set[int] = set()
        loops: list[scf.ForOp] = []
        for kernel, indices in by_kernel.items():
            mine = [plans[i] for i in indices]
            boxes = [bulk_boxes(p) for p in mine]
            launch = kernel.attributes[LAUNCH_ATTR]
            if can_warp_specialize(kernel, launch, mine, boxes):
                loops += _warp_specialize(kernel, launch, mine, max(stages[i] for i in indices), boxes,
                                          self.in_flight)
                done.update(indices)
        keep = [i for i in range(len(plans)) if i not in done]
        return [plans[i] for i in keep], [stages[i] for i in keep], loops
