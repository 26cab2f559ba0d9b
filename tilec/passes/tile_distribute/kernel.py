"""``tile-distribute``: fragment-typed tile IR → fragment-level IR (per-lane registers).

Input: the warp-level program ``tile-tiling`` produces (see
``examples/levels/gemm_warp_level.mlir``), possibly after ``tile-swizzle``
(swizzled shared layouts ``Sw<B,M,S> o 0 o L``) and ``tile-pipeline``
(``tile.async_copy`` + ``tile.async_commit``/``tile.async_wait``, several
stage buffers), with every register tile's fragment in its type
(``tile-layout``). Output: the fragment level that ``tile-to-llvm`` takes
(``examples/kernels/mma_*.mlir``): ``frag`` ops on ``!llvm.ptr`` addresses and
per-lane registers, ``arith``/``scf``, and the tile dialect's structure ops.

**Fragments.** Each register tile's type names its fragment, a TV layout over
the 32 lanes of its warp (:mod:`tilec.passes.tile_layout` chose it: for an
mma operand, the atom's A, B or C layout tiled over the tile). A tile then
is its registers (:mod:`tilec.passes.tile_distribute.registers`): i32 pairs
for 16-bit tiles that feed an mma as A or B (ThunderKittens' ``rt_base``),
one scalar per value otherwise; ``scf.for`` ``iter_args`` are expanded into
them. An mma checks that its operands' fragments are the ones its atom
needs (the same function; ``tile.convert_layout`` is not lowered yet).

**Per op.** ``tile.zeros``/``fill`` → constants; ``tile.load`` of a shared
window → ``frag.ldmatrix`` (x4, ``.trans`` for a K x N B) with addresses
through the shared layout and its swizzle (``arith`` xor/and/shift), or
element loads where ldmatrix does not apply; ``tile.mma`` → one ``frag.mma``
per (m, n, k) atom; ``tile.copy`` → per-thread 16-byte ``frag.load`` +
``frag.store`` (element loads at ragged edges), ``tile.async_copy`` →
``frag.cp_async`` with ``src_bytes`` zero-fill; ``tile.async_commit/wait`` →
``frag.cp_async_commit/wait``; ``tile.map``/elementwise ops → their scalar
body once per value; ``tile.broadcast`` of a column vector → the values of
the columns the lane holds (loaded once each, predicated); ``tile.store`` →
predicated per-lane stores, adjacent columns packed into one 4/8/16-byte
store. Details of bounds and vectors: :mod:`tilec.passes.tile_distribute.memory`.

**SIMT.** A ``tile.mma`` with atom ``fma_f32`` (and ``tile.thread_tile =
array<i64: TM, TN>`` from tile-tiling) gives its accumulator the FMA
fragment: the warp's lanes in a row-major ``(M/TM) x (N/TN)`` grid, each
holding a ``TM x TN`` block of C. Its A and B tiles are not materialised
(a lane would need ``TM * K`` registers of A): when they are loaded from
shared memory only for such mmas, the mma loads each k's ``TM`` values of A
and ``TN`` of B where it needs them (vector loads along contiguous runs) and
issues ``TM * TN`` ``frag.mma <fma_f32>`` per k.

**Kernel ABI.** Global views become pointer, extents and strides (and tensor maps): see
:mod:`tilec.passes.tile_distribute.abi` and, for the attributes, :mod:`tilec.dialects.abi`.

Shared tiles become ``frag.shared "<kernel>_<name>"`` buffers (static; one
dynamic buffer with offsets when they exceed 48 KB together).
"""

from __future__ import annotations

from math import gcd
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, math, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from tilec.dialects import frag_fast
from tilec.dialects.abi import (
    CONSUMERS,
    LAUNCH_ATTR,
    REGISTER_FILE,
    REGISTERS_ATTR,
    ROLE_ATTR,
    launch_registers,
    producer_threads,
)
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.dialects.tile.types import (
    MAX_SHARED_BYTES,
    GlobalType,
    RegisterType,
    RegisterVectorType,
    SharedType,
    element_bits,
)
from tilec.ir import fast
from tilec.ir.parser import location_text
from tilec.passes.uniformity import barriers_under_varying_ifs, block_values_under_varying_branches
from tilec.passes.fragments import Fragment, FragmentError, VectorFragment, tile_fragment, window_values
from tilec.passes.tile_distribute.abi import AbiLowering
from tilec.passes.tile_distribute.atomics import AtomicLowering, atomic_scratch_bytes
from tilec.passes.tile_distribute.analysis import estimate_registers
from tilec.passes.tile_distribute.bulk import MBAR_BYTES, BulkLowering, bulk_alignment
from tilec.passes.tile_distribute.convert import ConvertLowering, needs_scratch, scratch_bytes
from tilec.passes.tile_distribute.emit import Emitter
from tilec.passes.tile_distribute.gather import GatherLowering
from tilec.passes.tile_distribute.memory import MemoryLowering, RegallocError
from tilec.passes.tile_distribute.mma import LazyShared, MmaLowering, streamed_fma_operand
from tilec.passes.tile_distribute.moves import MoveLowering
from tilec.passes.tile_distribute.reduce import REDUCTIONS, ReductionLowering, reduction_scratch_bytes
from tilec.passes.tile_distribute.scan import ScanLowering, scan_scratch_bytes
from tilec.passes.tile_distribute.registers import RegisterForms
from tilec.passes.tile_distribute.vectors import VectorLowering
from tilec.passes.tile_distribute.turns import TurnLowering, synchronised_in_turns
from tilec.passes.tile_distribute.roles import RoleLowering
from tilec.passes.tile_layout import copy_mask_fragment, uses_tiles, value_name
from tilec.passes.tile_distribute.wgmma import WgmmaLowering, wgmma_alignment, wgmma_reads_generic_writes
from tilec.passes.tile_distribute.values import GlobalArg, Regs, SharedBuf, ValueMapper

MAX_REGISTERS = 255

LAUNCH_MARGIN = 24
"""The fewest registers beside the fragments (addresses, descriptors, loop counters) a wgmma kernel has
needed when a thread's share of the SM bounds it: ptxas asked for 154 for a wgmma's 128 accumulators."""
STATIC_SHARED_LIMIT = 48 * 1024
SHARED_ALIGN = 128
"""Alignment (bytes) of every shared buffer the pass allocates."""



_ORDERING_OPS = (t.AsyncWaitOp, t.BarrierOp, t.MbarWaitOp, scf.YieldOp, scf.ConditionOp, func.ReturnOp)
"""Ops before which the deferred stores of async copies are emitted: a wait (the copies of its
groups must have landed), a barrier, and a block's end. Ops with regions too (their blocks may
wait)."""


def _kind(value: SSAValue) -> str:
    return "register vector" if isinstance(value.type, RegisterVectorType) else "register tile"


def _where(op: Operation) -> str:
    loc = location_text(op)
    return f" at {loc}" if loc else ""


def _stage_align(base: int, op: Operation) -> int:
    """Alignment of ``tile.stage %buf[%i]``: the buffer's, and its stage stride's in bytes."""
    _, stride = t.stage_layout(op.buffer.type.layout)
    nbytes = stride * element_bits(op.buffer.type.element_type) // 8
    return gcd(base, nbytes) if nbytes else base


_ELEMENTWISE = {
    t.AddOp: arith.AddfOp,
    t.SubOp: arith.SubfOp,
    t.MulOp: arith.MulfOp,
    t.DivOp: arith.DivfOp,
    t.MaxOp: arith.MaximumfOp,
    t.MinOp: arith.MinimumfOp,
}



@dataclass(frozen=True)
class SharedLayout:
    """Where a kernel's shared memory goes: each allocation (a tile.alloc, barriers, a layout
    conversion's or a reduction's scratch) with its byte offset and size, the alignments, and the
    total the launch must give (one dynamic buffer past 48 KB, whose base is rounded up at run time)."""

    entries: tuple[tuple[Operation, int, int], ...]
    align: dict[Operation, int]
    wgmma_tiles: dict[Operation, int]
    dynamic: bool
    base_align: int
    total: int


MOVES_THROUGH_SHARED = (t.ConvertLayoutOp, t.ReshapeOp, t.JoinOp, t.SplitOp, t.TakeOp)
"""Ops that move a tile's values through a scratch tile when their fragments need it (:func:`needs_scratch`):
each stores, synchronises the block, loads and synchronises again, so all of them share one scratch (the
largest they need) at the first one's place. (The block-wide barriers are what make the sharing safe: a
move that synchronised its warp only could meet another warp's next move in a slot of another size.)"""


def _moves_through_shared(op: Operation) -> bool:
    return isinstance(op, MOVES_THROUGH_SHARED) and needs_scratch(op)


def _exchanges_through_scratch(op: Operation, fn: func.FuncOp, threads: int) -> bool:
    """Whether ``op`` exchanges values between threads through a scratch of shared memory (each such
    exchange synchronises the block): a move through shared memory, or a reduction, scan or atomic
    between warps."""
    return _moves_through_shared(op) \
        or (isinstance(op, REDUCTIONS) and bool(reduction_scratch_bytes(op))) \
        or (isinstance(op, t.ScanOp) and bool(scan_scratch_bytes(op))) \
        or (isinstance(op, t.ATOMIC_OPS) and bool(atomic_scratch_bytes(op, fn, threads)))


def plan_shared_memory(fn: func.FuncOp, threads: int) -> SharedLayout:
    """The shared memory ``fn`` (fragment-typed tile IR, after ``tile-layout``) needs with ``threads``
    a block: what tile-distribute allocates, so that a pass may ask before it adds a buffer."""
    allocs = [op for op in fn.walk()
              if isinstance(op, t.AllocOp | t.MbarInitOp) or _exchanges_through_scratch(op, fn, threads)]
    align = bulk_alignment(fn)
    wgmma_tiles = wgmma_alignment(fn)
    for alloc, period in wgmma_tiles.items():
        align[alloc] = max(align.get(alloc, SHARED_ALIGN), period)
    moves = [op for op in allocs if isinstance(op, MOVES_THROUGH_SHARED)]
    move_bytes = max((scratch_bytes(op, threads // 32) for op in moves), default=0)
    entries, offset, move_at = [], 0, None
    for op in allocs:
        if isinstance(op, MOVES_THROUGH_SHARED):
            if move_at is not None:  # one scratch for every move: each is done with it when it ends
                entries.append((op, move_at, move_bytes))
                continue
            size = move_bytes
        elif isinstance(op, t.MbarInitOp):
            size = op.result.type.count.data * MBAR_BYTES
        elif isinstance(op, REDUCTIONS):
            size = reduction_scratch_bytes(op)
        elif isinstance(op, t.ScanOp):
            size = scan_scratch_bytes(op)
        elif isinstance(op, t.ATOMIC_OPS):
            size = atomic_scratch_bytes(op, fn, threads)
        else:
            size = op.result.type.size_bytes
        a = align.get(op, SHARED_ALIGN)
        offset = (offset + a - 1) // a * a
        entries.append((op, offset, size))
        if isinstance(op, MOVES_THROUGH_SHARED):
            move_at = offset
        offset += size
    dynamic = offset > STATIC_SHARED_LIMIT
    base_align = max(align.values(), default=SHARED_ALIGN) if dynamic else SHARED_ALIGN
    total = offset + (base_align - SHARED_ALIGN if base_align > SHARED_ALIGN else 0)
    return SharedLayout(tuple(entries), align, wgmma_tiles, dynamic, base_align, total)


class KernelLowering(AbiLowering, MmaLowering, MemoryLowering, BulkLowering, WgmmaLowering, ReductionLowering,
                     ScanLowering, VectorLowering, ConvertLowering, MoveLowering, TurnLowering, RoleLowering,
                     AtomicLowering, GatherLowering):
    """Rewrites one kernel ``func.func`` into its fragment-level form."""

    def __init__(self, fn: func.FuncOp, module: ModuleOp):
        self.fn = fn
        self.module = module
        self.name = fn.sym_name.data
        launch = fn.attributes.get(LAUNCH_ATTR)
        if not isinstance(launch, LaunchAttr):
            raise RegallocError(f"@{self.name} uses tile values but is not a kernel (no {LAUNCH_ATTR})")
        self.launch = launch
        self.block_dims = launch.block_dims
        self.threads = launch.threads
        if self.threads % 32:
            raise RegallocError(f"@{self.name}: {self.threads} threads per block is not a whole number of warps")
        self.forms = RegisterForms(fn)
        self._fragments: dict[tuple, Fragment | VectorFragment] = {}
        self.vmap: dict[SSAValue, object] = {}
        self.deferred: list = []
        """Shared-memory stores of element-path async copies, emitted at the next wait (see
        :meth:`tilec.passes.tile_distribute.memory.MemoryLowering.lower_copy_to_shared`)."""

    # ------------------------------------------------------------ values

    def fragment(self, v: SSAValue) -> Fragment | VectorFragment:
        """The fragment in ``v``'s type, with the register form :class:`RegisterForms` gives it."""
        ty = v.type
        if ty.fragment is None:
            what = "register tile" if isinstance(ty, RegisterType) else "register vector"
            raise RegallocError(f"{what} {value_name(v)} ({ty}) has no fragment in its type: run tile-layout first")
        threads = ty.fragment.num_threads
        consumers = self.threads - producer_threads(self.fn)  # a producer warpgroup holds no tiles
        if threads not in (32, self.threads, consumers):
            raise RegallocError(f"{value_name(v)} ({ty}) has a fragment over {threads} threads: a fragment spans one "
                                f"warp (32), the whole block ({self.threads}) or its consumer warps ({consumers})")
        if isinstance(ty, RegisterVectorType):
            key = (ty,)
            if key not in self._fragments:
                self._fragments[key] = VectorFragment(ty.fragment, ty.orientation.data)
            return self._fragments[key]
        key = (ty, self.forms.packing(v))
        if key not in self._fragments:
            self._fragments[key] = tile_fragment(ty.dims, ty.fragment.layout, key[1], value_name(v))
        return self._fragments[key]

    def in_form(self, x: Regs, fr: Fragment | VectorFragment) -> Regs:
        """``x`` held as ``fr`` says: its 16-bit values packed in pairs or one per register."""
        if x.packing == fr.packing:
            return x
        key = ("form", fr.packing)
        if key not in x.cache:
            scalars = self.scalars(x)
            regs = self.pack_registers(fr, x.element_type, scalars) if fr.packing > 1 else scalars
            x.cache[key] = Regs(fr, x.element_type, regs)
        return x.cache[key]

    def set_scalars(self, v: SSAValue, scalars: list[SSAValue]) -> None:
        """``v`` is ``scalars`` (one per fragment value), held in its register form. A value the emitter
        folded to a Python number (an iota of a constant offset along a dimension no lane moves in)
        becomes a constant: registers are SSA values."""
        fr = self.fragment(v)
        elem = v.type.element_type
        scalars = [self.em.value(x, elem) if isinstance(x, int) else x for x in scalars]
        self.vmap[v] = self.in_form(Regs(fr.with_packing(1), elem, scalars), fr)

    def checked_fragment(self, v: SSAValue, want: Fragment, op: Operation) -> Fragment:
        """``want`` (an atom's fragment) if ``v``'s type holds the same function, else an error naming both."""
        have = v.type.fragment
        if have is None or not have.same_function(want.tv):
            raise RegallocError(
                f"{value_name(v)} has the fragment {have.layout if have else 'none'}, but {op.name} needs "
                f"{want.layout}: converting between them (tile.convert_layout) is not supported yet"
            )
        return want

    def lookup(self, v: SSAValue):
        got = self.vmap.get(v)
        return got if isinstance(got, SSAValue) else None

    def get(self, v: SSAValue):
        try:
            return self.vmap[v]
        except KeyError:
            raise RegallocError(f"value {v} used before it was lowered (a bug in tilec)") from None

    def lane(self, ty: Attribute = i32) -> SSAValue:
        def make():
            lane = self.em.insert(frag_fast.tile_lane_id()).results[0]
            lane.name_hint = "lane"
            return lane

        idx = self.em.hoisted("lane-index", make)
        return self.em.hoisted(("lane", ty), lambda: self.em.cast(idx, ty))

    def thread_index(self, ty: Attribute = i32) -> SSAValue:
        """The thread's index in the block as a ``ty`` value (hoisted)."""
        return self.em.hoisted(("tid", ty), lambda: self.tid() if ty == i32 else self.em.cast(self.tid(), ty))

    def warp(self) -> SSAValue:
        """The thread's warp in the block (i32, hoisted), as ``tile.warp_id``: the same value in
        every lane as far as ptxas knows, so a branch on it is uniform (:func:`nvvm.warp_id`)."""
        em = self.em

        def make():
            return em.cast(em.insert(frag_fast.tile_warp_id()).results[0], i32)

        warp = em.hoisted("warp", make)
        warp.name_hint = "warp"
        return warp

    def tid(self) -> SSAValue:
        em = self.em

        def make():
            x = em.cast(em.insert(frag_fast.tile_thread_id("x")).results[0], i32)
            bx, by, bz = self.block_dims
            if by == bz == 1:
                return x
            y = em.cast(em.insert(frag_fast.tile_thread_id("y")).results[0], i32)
            z = em.cast(em.insert(frag_fast.tile_thread_id("z")).results[0], i32)
            return em.add(x, em.mul(em.add(y, em.mul(z, by, i32), i32), bx, i32), i32)

        tid = em.hoisted("tid", make)
        tid.name_hint = "tid"
        return tid

    # ------------------------------------------------------------ the signature

    # ------------------------------------------------------------ driver

    def run(self) -> func.FuncOp:
        estimate = estimate_registers(self.fn, self.fragment, self.forms)
        if estimate.total > MAX_REGISTERS:
            at = estimate.largest_op
            raise RegallocError(
                (f"'{at.name}'{_where(at)}: " if at is not None and _where(at) else "")
                + f"@{self.name}: the fragments need about {estimate.total} registers per thread, more than "
                f"{MAX_REGISTERS}: the largest is {estimate.largest} with {estimate.largest_count} "
                f"(loop-carried {estimate.carried}, mma operands {estimate.operands}, addresses ~40); "
                "use a smaller warp tile or more warps"
            )
        # a wgmma needs its whole accumulator in registers in one instruction, and ptxas allocates every
        # instruction within what a thread has at launch, an even share of the SM's register file
        # (setmaxnreg moves registers between roles later; it does not raise that bound). Other tiles
        # spill where they do not fit, as ptxas chooses.
        launch = launch_registers(self.threads)
        least = estimate.carried + estimate.operands + LAUNCH_MARGIN
        if least > launch and any(isinstance(o, t.WgmmaOp) for o in self.fn.walk()):
            raise RegallocError(
                f"@{self.name}: the fragments need at least {least} registers per thread, more than the {launch} "
                f"each of {self.threads} threads has of an SM's {REGISTER_FILE}: the largest is {estimate.largest} "
                f"with {estimate.largest_count} (loop-carried {estimate.carried}, mma operands {estimate.operands}, "
                f"addresses and counters {LAUNCH_MARGIN} or more); use a smaller warp tile or fewer threads"
            )
        entry, types, attrs = self.signature()
        self.em = Emitter(entry)
        self._shared = self._plan_shared()
        # what any shared address of the kernel is aligned to (for loop-carried / selected tiles)
        self._shared_floor = SHARED_ALIGN
        for op in self.fn.walk():
            if op.name == "tile.stage":
                self._shared_floor = min(self._shared_floor, _stage_align(SHARED_ALIGN, op))
        self.plan_turns()
        self.first_turn()
        self.prefetch_tensor_maps()
        self.emit_block(self.fn.body.block)
        self.em.finish()
        new = func.FuncOp(
            self.name,
            (types, []),
            Region(entry),
            self.fn.sym_visibility,
            arg_attrs=ArrayAttr(attrs),
        )
        new.location = self.fn.location  # lowered ops are located at least at their function
        for k, v in self.fn.attributes.items():
            if k not in ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"):
                new.attributes[k] = v
        launch = self.launch
        if self._shared_total > MAX_SHARED_BYTES:  # said here, naming the kernel: the attribute would say it nowhere
            raise RegallocError(f"@{self.name} needs {self._shared_total} bytes of shared memory (its tiles, their "
                                f"stages and conversion scratch), more than the device limit of {MAX_SHARED_BYTES}")
        if self._shared_total > launch.smem.data:
            new.attributes[LAUNCH_ATTR] = launch.replace(smem=self._shared_total)
        new.attributes[REGISTERS_ATTR] = IntegerAttr(estimate.total, i64)
        return new

    def _plan_shared(self) -> dict[Operation, tuple[str, int, int]]:
        """Each tile.alloc (and each layout conversion through shared memory) → (symbol, byte offset,
        bytes); one dynamic buffer past 48 KB (:func:`plan_shared_memory`)."""
        layout = plan_shared_memory(self.fn, self.threads)
        self._align = layout.align
        # wgmma reads shared memory through the async proxy: a barrier hands it generic writes only after a proxy fence
        self._proxy_fence = wgmma_reads_generic_writes(self.fn, layout.wgmma_tiles)
        plan, used, moves = {}, set(), None
        for i, (op, offset, size) in enumerate(layout.entries):
            if isinstance(op, MOVES_THROUGH_SHARED) and moves is not None:
                plan[op] = moves  # the one scratch of every move (plan_shared_memory)
                continue
            hint = (op.old if isinstance(op, t.ATOMIC_OPS) else op.results[0]).name_hint or f"smem{i}"
            if isinstance(op, t.ConvertLayoutOp):
                hint += "_convert"
            elif isinstance(op, t.ReshapeOp | t.JoinOp | t.SplitOp | t.TakeOp):
                hint += {t.ReshapeOp: "_reshape", t.JoinOp: "_join", t.SplitOp: "_split", t.TakeOp: "_take"}[type(op)]
            elif isinstance(op, REDUCTIONS):
                hint += "_partials"
            elif isinstance(op, t.ScanOp):
                hint += "_totals"
            elif isinstance(op, t.ATOMIC_OPS):
                hint += "_old"
            sym = f"{self.name}_{hint}"
            while sym in used:
                sym += "_"
            used.add(sym)
            plan[op] = (sym, offset, size)
            if isinstance(op, MOVES_THROUGH_SHARED):
                moves = plan[op]
        self._dynamic = layout.dynamic
        self._base_align = layout.base_align
        self._shared_total = layout.total
        return plan

    def _shared_address(self, op: Operation) -> SSAValue:
        """The address of the shared memory :meth:`_plan_shared` gave ``op``."""
        sym, offset, size = self._shared[op]
        if self._dynamic:
            base = self.em.hoisted("dynamic-smem", self._dynamic_base)
            return self.em.gep(base, offset, IntegerType(8), i32)
        return self.em.insert(frag_fast.frag_shared(sym, size, self._align.get(op, SHARED_ALIGN))).results[0]

    def _dynamic_base(self) -> SSAValue:
        """The dynamic buffer's address, rounded up to :attr:`_base_align` when that is more than 128."""
        em = self.em
        base = em.insert(frag_fast.frag_shared(f"{self.name}_smem", 0, SHARED_ALIGN)).results[0]
        if self._base_align <= SHARED_ALIGN:
            return base
        addr = em.insert(fast.cast_op(llvm.PtrToIntOp, base, i32)).results[0]
        pad = em.and_(em.sub(0, addr, i32), self._base_align - 1, i32)
        return em.gep(base, pad, IntegerType(8), i32)

    def emit_block(self, block: Block) -> None:
        outer, self.deferred = self.deferred, []
        for op in block.ops:
            self.emit(op)
        assert not self.deferred, "the block's terminator emits its deferred stores"
        self.deferred = outer

    def emit(self, op: Operation) -> None:
        if self.deferred and (op.regions or isinstance(op, _ORDERING_OPS)):
            self.flush_deferred()
        try:
            self._emit(op)
        except (RegallocError, FragmentError) as e:
            if getattr(e, "located", False):
                raise
            err = RegallocError(f"'{op.name}'{_where(op)}: {e}")
            err.located = True  # type: ignore[attr-defined]
            raise err from None

    def _emit(self, op: Operation) -> None:
        em = self.em
        match op:
            case t.DimOp():
                g = self.get(op.view)
                ext = g.extent(op.dim.value.data)
                self.vmap[op.result] = em.value(ext, IndexType()) if isinstance(ext, int) else em.cast(ext, IndexType())
            case t.SubviewOp():
                self.vmap[op.result] = self.subview(self.get(op.source), [self.get(i) for i in op.indices])
            case t.AllocOp() | t.MbarInitOp():
                ptr = self._shared_address(op)
                align = self._align.get(op, SHARED_ALIGN)
                ptr.name_hint = op.result.name_hint
                if isinstance(op, t.MbarInitOp):
                    self.mbar_init(op, ptr)
                else:
                    self.vmap[op.result] = SharedBuf(ptr, op.result.type, align)
            case t.MbarExpectOp():
                self.mbar_expect(op)
            case t.BulkCopyOp():
                self.bulk_copy(op)
            case t.BulkStoreOp():
                self.bulk_store(op)
            case t.BulkStoreWaitOp():
                self.bulk_store_wait(op)
            case t.MbarWaitOp():
                self.mbar_wait(op)
            case t.MbarArriveOp():
                self.mbar_arrive(op)
            case t.StageOp():
                buf = self.get(op.buffer)
                _, stride = t.stage_layout(op.buffer.type.layout)
                index = em.cast(self.get(op.index), i32)
                ptr = em.gep(buf.ptr, em.mul(index, stride, i32), op.buffer.type.element_type, i32)
                self.vmap[op.result] = SharedBuf(ptr, op.result.type, _stage_align(buf.align, op))
            case t.ZerosOp() | t.FillOp():
                fr = self.fragment(op.result)
                elem = op.result.type.element_type
                if isinstance(op, t.FillOp):
                    x = self.get(op.value)
                else:
                    x = em.const(0.0, elem)
                self.vmap[op.result] = Regs(fr, elem, [x] * fr.num_values) if fr.packing == 1 else \
                    Regs(fr, elem, self.pack_registers(fr, elem, [x] * fr.num_values))
            case t.LoadOp():
                self._load(op)
            case t.LoadScalarOp():
                self._load_scalar(op)
            case t.StoreOp():
                self._store_op(op)
            case t.GatherOp():
                self.gather(op)
            case t.ScatterOp():
                self.scatter(op)
            case t.AtomicOp() | t.ScatterAtomicOp():
                self.atomic(op)
            case t.CopyOp():
                self._copy(op, is_async=False)
            case t.AsyncCopyOp():
                self._copy(op, is_async=True)
            case t.AsyncCommitOp():
                em.insert(frag_fast.frag_cp_async_commit())
            case t.AsyncWaitOp():
                em.insert(frag_fast.frag_cp_async_wait(op.pending.value.data))
            case t.MmaOp():
                self._mma(op)
            case t.WgmmaOp():
                self.wgmma(op)
            case t.TurnBeginOp():
                self.turn_begin(op)
            case t.TurnEndOp():
                self.turn_end(op)
            case t.WgmmaWaitOp():
                self.wgmma_wait(op)
            case t.MapOp():
                self._map(op)
            case t.BroadcastOp():
                src = self.get(op.input)
                fr = self.fragment(op.result)
                vf = src.frag
                assert isinstance(vf, VectorFragment)
                self.vmap[op.result] = self.in_form(
                    Regs(fr.with_packing(1), src.element_type, [src.values[i] for i in vf.values_of(fr)]), fr)
            case t.IotaOp():
                self.iota(op)
            case _ if isinstance(op, REDUCTIONS):
                self.reduce(op)
            case t.ScanOp():
                self.scan(op)
            case t.ConvertLayoutOp():
                self.convert_layout(op, self._shared_address(op) if op in self._shared else None)
            case t.SliceOp():
                self._slice(op)
            case t.TransposeOp():
                self._transpose(op)
            case t.ReshapeOp():
                self.reshape(op, self._shared_address(op) if op in self._shared else None)
            case t.JoinOp():
                self.join(op, self._shared_address(op) if op in self._shared else None)
            case t.SplitOp():
                self.split(op, self._shared_address(op) if op in self._shared else None)
            case t.TakeOp():
                self.take(op, self._shared_address(op) if op in self._shared else None)
            case t.ExtractOp():
                # one element: every (thread, value) of the fragment is it, so value 0 of this thread
                self.vmap[op.result] = self.scalars(self.get(op.input))[0]
            case t.ConvertOp():
                src = self.get(op.input)
                dst = op.result.type.element_type
                self.set_scalars(op.result, [self._convert(x, dst) for x in self.scalars(src)])
            case t.ReluOp():
                src = self.get(op.input)
                zero = em.const(0.0, src.element_type)
                self.set_scalars(op.result, [em.insert(fast.arith_binary_op(arith.MaximumfOp, x, zero)).results[0]
                                             for x in self.scalars(src)])
            case t.ExpOp() | t.Exp2Op():
                src = self.get(op.input)
                cls = math.ExpOp if isinstance(op, t.ExpOp) else math.Exp2Op
                self.set_scalars(op.result, [em.insert(fast.math_unary_op(cls, x)).results[0] for x in self.scalars(src)])
            case _ if type(op) in _ELEMENTWISE:
                lhs, rhs = self.get(op.lhs), self.get(op.rhs)
                cls = _ELEMENTWISE[type(op)]
                vals = [em.insert(fast.arith_binary_op(cls, x, y)).results[0]
                        for x, y in zip(self.scalars(lhs), self.scalars(rhs))]
                self.set_scalars(op.result, vals)
            case scf.ForOp():
                self._for(op)
            case scf.IfOp():
                self._if(op)
            case scf.WhileOp():
                self._while(op)
            case scf.ConditionOp():
                em.insert(scf.ConditionOp(self.get(op.condition), *self.flatten(op.args)))
            case scf.YieldOp():
                em.insert(fast.scf_yield_op(self.flatten(op.operands)))
            case func.ReturnOp():
                self.last_turn(op)
                em.insert(fast.func_return_op([self.get(v) for v in op.arguments]))
            case _:
                if op.name.startswith("tile.") and not isinstance(
                    op, t.BlockIdOp | t.GridDimOp | t.ThreadIdOp | t.WarpIdOp | t.LaneIdOp | t.BarrierOp | t.SetMaxNRegOp
                    | t.ClusterIdOp | t.ClusterCountOp | t.BlockRankOp | t.ClusterBarrierOp
                ):
                    raise RegallocError("is not supported by tile-distribute yet")
                for v in (*op.operands, *op.results):
                    if isinstance(v.type, GlobalType | SharedType | RegisterType | RegisterVectorType):
                        raise RegallocError(f"takes or gives a tile value ({v.type}); only tile ops and scf may")
                if isinstance(op, t.BarrierOp) and self._proxy_fence:
                    em.insert(frag_fast.frag_fence_proxy_async())
                new = op.clone(value_mapper=ValueMapper(self.lookup))
                em.insert(new)
                for old, nv in zip(op.results, new.results):
                    self.vmap[old] = nv

    # ------------------------------------------------------------ control flow

    def flatten(self, values) -> list[SSAValue]:
        out: list[SSAValue] = []
        for v in values:
            x = self.get(v)
            if isinstance(x, Regs):
                out += self.in_form(x, self.fragment(v)).values
            elif isinstance(x, SharedBuf):
                out.append(x.ptr)
            elif isinstance(x, GlobalArg):
                raise RegallocError("global views cannot be loop-carried or yielded")
            else:
                out.append(x)
        return out

    def _shape_of(self, old: SSAValue):
        """(types of the flattened registers, rebuild(values) -> new value)."""
        ty = old.type
        if isinstance(ty, RegisterType | RegisterVectorType):
            fr = self.fragment(old)
            elem = ty.element_type
            if fr.packing > 1:
                n, rt = fr.num_registers, i32
            else:
                n, rt = fr.num_values, elem
            return [rt] * n, lambda vals, fr=fr, elem=elem: Regs(fr, elem, list(vals))
        if isinstance(ty, SharedType):
            return [LLVMPointerType(IntAttr(3))], lambda vals, ty=ty: SharedBuf(vals[0], ty, self._shared_floor)
        if isinstance(ty, GlobalType):
            raise RegallocError("global views cannot be loop-carried or yielded")
        return [ty], lambda vals: vals[0]

    def _for(self, op: scf.ForOp) -> None:
        em = self.em
        shapes = [self._shape_of(v) for v in op.iter_args]
        inits = self.flatten(op.iter_args)
        types = [IndexType()] + [ty for tys, _ in shapes for ty in tys]
        body = Block(arg_types=types)
        new = em.insert(fast.scf_for_op(self.get(op.lb), self.get(op.ub), self.get(op.step), inits, body))
        old_body = op.body.block
        body.args[0].name_hint = old_body.args[0].name_hint
        self.vmap[old_body.args[0]] = body.args[0]
        pos = 1
        for old_arg, (tys, make) in zip(old_body.args[1:], shapes):
            vals = body.args[pos : pos + len(tys)]
            for i, v in enumerate(vals):
                if old_arg.name_hint:
                    v.name_hint = old_arg.name_hint
            self.vmap[old_arg] = make(vals)
            pos += len(tys)
        with em.at(InsertPoint.at_end(body)):
            self.emit_block(old_body)
        pos = 0
        for old_res, (tys, make) in zip(op.results, shapes):
            vals = new.results[pos : pos + len(tys)]
            for v in vals:
                if old_res.name_hint:
                    v.name_hint = old_res.name_hint
            self.vmap[old_res] = make(list(vals))
            pos += len(tys)

    def _while(self, op: scf.WhileOp) -> None:
        """An ``scf.while`` on the registers of its carried values: the test's region and the body's,
        each lowered into a new block whose arguments are those registers."""
        em = self.em
        carried = [self._shape_of(v) for v in op.arguments]
        passed = [self._shape_of(v) for v in op.results]
        blocks = [Block(arg_types=[ty for tys, _ in shapes for ty in tys]) for shapes in (carried, passed)]
        new = em.insert(scf.WhileOp(self.flatten(op.arguments), [ty for tys, _ in passed for ty in tys],
                                    Region(blocks[0]), Region(blocks[1])))
        for old_block, block, shapes in zip((op.before_region.block, op.after_region.block), blocks, (carried, passed)):
            self._bind(old_block.args, shapes, list(block.args))
            with em.at(InsertPoint.at_end(block)):
                self.emit_block(old_block)
        self._bind(op.results, passed, list(new.results))

    def _bind(self, old_values, shapes, new_values: list[SSAValue]) -> None:
        """Each of ``old_values`` is the registers of ``new_values`` its shape takes, in order."""
        pos = 0
        for old, (tys, make) in zip(old_values, shapes):
            vals = new_values[pos : pos + len(tys)]
            for v in vals:
                if old.name_hint:
                    v.name_hint = old.name_hint
            self.vmap[old] = make(list(vals))
            pos += len(tys)

    def _if(self, op: scf.IfOp) -> None:
        em = self.em
        shapes = [self._shape_of(v) for v in op.results]
        types = [ty for tys, _ in shapes for ty in tys]
        regions = []
        role = op.attributes.get(ROLE_ATTR)
        for region in op.regions:
            if not region.blocks:
                regions.append(Region())
                continue
            block = Block()
            with em.at(InsertPoint.at_end(block)), self.in_role(role.data if role is not None else None):
                self.emit_block(region.block)
            regions.append(Region(block))
        new = em.insert(fast.scf_if_op(self.get(op.cond), types, regions[0], regions[1]))
        if role is not None and role.data == CONSUMERS:  # the producer warps are elsewhere
            t.limit_barriers(new, self.threads - producer_threads(self.fn))
        pos = 0
        for old_res, (tys, make) in zip(op.results, shapes):
            self.vmap[old_res] = make(list(new.results[pos : pos + len(tys)]))
            pos += len(tys)

    # ------------------------------------------------------------ memory ops

    def _load(self, op: t.LoadOp) -> None:
        src = self.get(op.source)
        idx_new = [self.get(i) for i in op.indices]
        elem = op.result.type.element_type
        fr = self.fragment(op.result)
        if isinstance(src, SharedBuf) and isinstance(fr, VectorFragment):
            self.vmap[op.result] = self.load_shared_vector(src, idx_new, fr, elem)
        elif isinstance(src, SharedBuf) and streamed_fma_operand(op):
            origin, div = self.shared_origin(list(op.indices), idx_new)
            self.vmap[op.result] = LazyShared(src, origin, div, fr, elem)
        elif isinstance(src, SharedBuf):
            self.vmap[op.result] = self.load_shared_fragment(src, list(op.indices), idx_new, fr, elem)
        elif isinstance(fr, VectorFragment):
            self.vmap[op.result] = self.load_global_vector(src, list(op.indices), idx_new, fr, elem)
        else:
            self.vmap[op.result] = self.load_global_fragment(src, list(op.indices), idx_new, fr, elem)
        if op.fill != 0 and isinstance(src, GlobalArg):
            self.vmap[op.result] = self.in_form(self.fill_outside(self.vmap[op.result], src, idx_new, op.fill), fr)

    def _load_scalar(self, op: t.LoadScalarOp) -> None:
        """One element, loaded by every lane (the same address: one transaction a warp), 0 outside the view."""
        em = self.em
        src = self.get(op.source)
        coords = [em.cast(self.get(i), i64) for i in op.indices]
        if op.linear is not None:  # an offset in memory from the view's first element (tile.gather's linear)
            inside, ptr = em.cmp("ult", coords[0], self.span(src), i64), em.gep(src.ptr, coords[0], src.element_type, i64)
        else:
            inside = em.all([self.in_bounds(src, d, c) for d, c in enumerate(coords)])
            ptr = self.global_ptr(src, coords)
        pred = None if inside is True else em.boolean(inside)
        value = em.insert(frag_fast.frag_load(ptr, op.result.type, pred)).results[0]
        value.name_hint = op.result.name_hint
        self.vmap[op.result] = value

    def _store_op(self, op: t.StoreOp) -> None:
        value = self.get(op.value)
        dst = self.get(op.dest)
        idx_new = [self.get(i) for i in op.indices]
        if op.mask is not None:  # global only (the verifier): each element's predicate, the value's fragment
            mask = self.get(op.mask)
            if mask.frag != value.frag:
                raise RegallocError(f"the mask {value_name(op.mask)} ({mask.frag.describe()}) and the stored value "
                                    f"{value_name(op.value)} ({value.frag.describe()}) have different fragments: "
                                    "run tile-layout, which gives them one")
            store = self.store_global_vector if isinstance(value.frag, VectorFragment) else self.store_global_fragment
            store(value, dst, list(op.indices), idx_new, mask=self.scalars(mask))
        elif isinstance(value.frag, VectorFragment) and isinstance(dst, SharedBuf):
            self.store_shared_vector(value, dst, idx_new)
        elif isinstance(value.frag, VectorFragment):
            self.store_global_vector(value, dst, list(op.indices), idx_new)
        elif isinstance(dst, SharedBuf):
            self.store_shared_fragment(value, dst, list(op.indices), idx_new)
        else:
            self.store_global_fragment(value, dst, list(op.indices), idx_new)

    def _copy(self, op, is_async: bool) -> None:
        if is_async:
            src, src_idx, dst, dst_idx = op.source, op.indices, op.dest, getattr(op, "dest_indices", ())
        else:
            src, src_idx, dst, dst_idx = op.source, op.source_indices, op.dest, op.dest_indices
        if not isinstance(src.type, GlobalType) or not isinstance(dst.type, SharedType):
            raise RegallocError("only copies from a global view to a shared tile are supported")
        thr = op.thr.data if op.thr is not None else None
        val = op.val.data if op.val is not None else None
        mask = self._copy_held(op, op.mask) if op.mask is not None else None
        if op.offsets is not None:
            self.lower_gathered_copy(op, self.get(src), self.get(dst), thr, val, is_async,
                                     self._copy_held(op, op.offsets), mask, op.prefix is not None)
            return
        self.lower_copy_to_shared(
            op, self.get(src), list(src_idx), [self.get(i) for i in src_idx],
            self.get(dst), list(dst_idx), [self.get(i) for i in dst_idx], thr, val, is_async,
            mask, op.prefix is not None,
        )

    def _copy_held(self, op: t.CopyOp | t.AsyncCopyOp, value: SSAValue):
        """A copy's mask bit (or offset) by the element's coordinates from the thread's first copied one:
        held as the copy moves the tile (tile-layout's ``copy_mask_fragment``)."""
        fr = self.fragment(value)
        want = copy_mask_fragment(op, self.threads)
        if want is None or fr.layout != want.layout:
            raise RegallocError(f"{value_name(value)} is held as {fr.describe()}, not as the copy moves "
                                f"the tile ({want.describe() if want else 'no fragment'}): run tile-layout")
        held = self.scalars(self.get(value))
        index = {c: v for v, c in enumerate(fr.value_coords)}
        return lambda r, c: held[index[(r, c)]]

    # ------------------------------------------------------------ compute

    def _slice(self, op: t.SliceOp) -> None:
        """The window's registers, chosen from the tile's (tile-layout made the window's fragment a part
        of the tile's): whole pairs when both are packed and the pairs line up, else values."""
        src = self.get(op.source)
        fr = self.fragment(op.result)
        offsets = op.offset_values
        picked = window_values(src.frag, fr, (offsets[0], offsets[1]))
        if picked is None:
            raise RegallocError(f"the lanes do not hold the window ({fr.describe()}) among their values of "
                                f"{value_name(op.source)} ({src.frag.describe()}): run tile-layout, which converts it")
        p = src.packing
        if p == fr.packing > 1 and all(picked[i] % p == 0 and list(picked[i:i + p]) == list(range(picked[i], picked[i] + p))
                                       for i in range(0, len(picked), p)):
            self.vmap[op.result] = Regs(fr, src.element_type, [src.values[picked[i] // p]
                                                                for i in range(0, len(picked), p)])
            return
        scalars = self.scalars(src)
        self.set_scalars(op.result, [scalars[v] for v in picked])

    def _transpose(self, op: t.TransposeOp) -> None:
        """The input's registers, in their order: tile-layout made the result's fragment the input's
        transposed (each lane holds the same values at swapped coordinates)."""
        src = self.get(op.input)
        fr = self.fragment(op.result)
        try:
            held = src.frag.tv.transposed().same_function(fr.tv)
        except ValueError:
            held = False
        if not held:
            raise RegallocError(f"its result's fragment ({fr.describe()}) is not its input's ({src.frag.describe()}) "
                                "transposed: run tile-layout, which converts the input")
        if src.packing == fr.packing:
            self.vmap[op.result] = Regs(fr, src.element_type, list(src.values))
        else:
            self.set_scalars(op.result, self.scalars(src))

    def _convert(self, x: SSAValue, dst: Attribute) -> SSAValue:
        src = x.type
        if src == dst:
            return x
        if isinstance(src, IntegerType) and isinstance(dst, IntegerType):  # masks widen as 0/1, ints signed
            if src.width.data < dst.width.data:
                cls = arith.ExtUIOp if src.width.data == 1 else arith.ExtSIOp
            else:
                cls = arith.TruncIOp
            return self.em.insert(fast.arith_cast_op(cls, x, dst)).results[0]
        if isinstance(src, IntegerType) or isinstance(dst, IntegerType):  # an integer and a float
            if isinstance(dst, IntegerType):
                return self.em.insert(fast.arith_cast_op(arith.FPToSIOp, self._convert(x, Float32Type())
                                                         if str(src) not in ("f32", "f64") else x, dst)).results[0]
            cls = arith.UIToFPOp if src.width.data == 1 else arith.SIToFPOp
            wide = Float64Type() if str(dst) == "f64" else Float32Type()
            return self._convert(self.em.insert(fast.arith_cast_op(cls, x, wide)).results[0], dst)
        width = {"f8E4M3FN": 8, "f8E5M2": 8, "f16": 16, "bf16": 16, "f32": 32, "f64": 64}
        direct = ("f16", "f32")  # what PTX converts FP8 from and to (lowering/fp8.py)
        if width.get(str(src)) == width.get(str(dst)) == 16 or (width.get(str(src)) == 8 and str(dst) not in direct) \
                or (width.get(str(dst)) == 8 and str(src) not in direct):
            # f16 <-> bf16 (no one instruction: LLVM has no such cast), FP8 from or to anything but f16 and f32:
            # through f32, exact on the way in
            if width.get(str(src), 0) < 32:
                x = self.em.insert(fast.arith_cast_op(arith.ExtFOp, x, Float32Type())).results[0]
            else:
                x = self.em.insert(fast.arith_cast_op(arith.TruncFOp, x, Float32Type())).results[0]
            src = x.type
            if src == dst:
                return x
        cls = arith.ExtFOp if width.get(str(src), 0) < width.get(str(dst), 0) else arith.TruncFOp
        return self.em.insert(fast.arith_cast_op(cls, x, dst)).results[0]

    def _map(self, op: t.MapOp) -> None:
        em = self.em
        inputs = [self.scalars(self.get(v)) for v in op.inputs]
        fr = self.fragment(op.result).with_packing(1)
        block = op.body.block
        consts: dict[Operation, SSAValue] = {}
        out = []
        for v in range(fr.num_values):
            local = ValueMapper(self.lookup)
            for arg, values in zip(block.args, inputs):
                local[arg] = values[v]
            for body_op in block.ops:
                if isinstance(body_op, t.YieldOp):
                    out.append(local.get(body_op.values[0]))
                    break
                if isinstance(body_op, arith.ConstantOp):
                    if body_op not in consts:
                        value = body_op.value
                        consts[body_op] = (
                            em.const(value.value.data, value.type)
                            if isinstance(value, IntegerAttr | FloatAttr)
                            else em.insert(body_op.clone()).results[0]
                        )
                    local[body_op.result] = consts[body_op]
                    continue
                new = body_op.clone(value_mapper=local)
                em.insert(new)
        self.set_scalars(op.result, out)


@dataclass(frozen=True)
class TileDistributePass(ModulePass):
    """Fragment-typed tile IR → fragment-level IR (per-lane registers, frag ops, kernel ABI of pointers)."""

    name = "tile-distribute"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in list(op.ops):
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks or not uses_tiles(fn):
                continue
            if len(fn.body.blocks) > 1:
                raise PassFailedException(
                    f"tile-distribute: '{fn.name}' @{fn.sym_name.data}{_where(fn)}: the body has "
                    f"{len(fn.body.blocks)} blocks; a tile kernel's control flow is structured (scf.if, scf.for), "
                    "its body one block")
            for barrier, branch in barriers_under_varying_ifs(fn, _moves_through_shared):
                what = "a block barrier" if isinstance(barrier, t.BarrierOp) else \
                    "a move of values through shared memory (it synchronises the block)"
                raise PassFailedException(
                    f"tile-distribute: '{barrier.name}'{_where(barrier)}: {what} inside an if or while loop whose "
                    f"condition differs between the block's warps ('{branch.name}'{_where(branch)}): the warps that skip "
                    "it never arrive; branch on a value every warp has alike, or move it out")
            launch = fn.attributes.get(LAUNCH_ATTR)
            threads = launch.threads if isinstance(launch, LaunchAttr) else 32

            def synchronises(o: Operation, fn=fn, threads=threads) -> bool:
                return isinstance(o, t.BarrierOp) or _exchanges_through_scratch(o, fn, threads)

            for inner, turn in synchronised_in_turns(fn, synchronises):
                raise PassFailedException(
                    f"tile-distribute: '{inner.name}'{_where(inner)}: it synchronises the whole block (a barrier, or a "
                    f"move of values through shared memory), inside the turn of one group of warps ('{turn.name}'"
                    f"{_where(turn)}) while the others wait for theirs: it would never end; move it out of the turn")
            for inner, value, branch in block_values_under_varying_branches(fn):
                raise PassFailedException(
                    f"tile-distribute: '{inner.name}'{_where(inner)}: {value_name(value)} is a {_kind(value)} spread "
                    f"over the block's warps, inside a region that only some warps run ('{branch.name}'{_where(branch)}"
                    "): each warp holds a part of it, so the others' parts would be missed; branch on a value every "
                    "warp has alike, or give each warp its own value (compute it inside the branch)")
            try:
                new = KernelLowering(fn, op).run()
            except (RegallocError, FragmentError) as e:
                raise PassFailedException(f"tile-distribute: {e}") from None
            op.body.block.insert_op_before(new, fn)
            fn.detach()
            fn.erase()


__all__ = ["KernelLowering", "RegallocError", "TileDistributePass"]
