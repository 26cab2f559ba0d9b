"""Fragment-level kernels on the CPU, lane by lane (vectorised over the 32 lanes of a warp).

After ``tile-distribute`` a kernel is per-thread code: ``frag`` ops (ldmatrix,
mma.sync, cp.async, sm_90 bulk tensor copies and their mbarriers, sm_90a
warpgroup MMA, predicated loads and stores, shuffles, conversions), ``llvm.getelementptr`` address
arithmetic on ``!llvm.ptr<1>`` (global) and ``!llvm.ptr<3>`` (shared)
pointers, integer ``arith``, ``scf``, and the tile dialect's ids,
``tile.barrier`` and ``tile.cluster_barrier``. :func:`run_fragment` runs such a kernel;
``tilec.interp.run`` / ``run_text`` dispatch here by themselves when the
function is fragment-level (:func:`is_fragment_level`)::

    from tilec.interp import run_text
    run_text(MMA_F16, "mma_f16", a, b_t, d)          # d written in place

A function with neither (only ``arith``/``scf`` and ids) goes to the tile
interpreter through ``run``; call :func:`run_fragment` to run it lane by lane.

**Execution.** Every block of the grid (x fastest), every warp of a block in
its own Python thread with the tile interpreter's cooperative scheduler
(:class:`~tilec.interp.tile_functions.WarpScheduler`: warps take turns between
``tile.barrier``\\ s, deterministically, in ``warp_order``). With
thread-block clusters (``#tile.launch<..., cluster = [cx, cy, cz]>``) the
blocks of a cluster run together, every warp of each under one scheduler,
cluster after cluster: ``tile.barrier`` and named barriers meet the warps of a
block, ``tile.cluster_barrier`` every warp of the cluster, and a warp waiting
on an mbarrier lets any warp of the cluster run; ``tile.cluster_id``,
``tile.cluster_count`` and ``tile.block_rank`` are the launch's (as in
:mod:`tilec.interp.launch`). A warp runs its
function body once; each SSA value is a numpy array with one entry per lane
(:mod:`tilec.interp.lane_values`). ``scf.if`` with a condition that differs
between the active lanes runs both regions under a lane mask (memory ops and
``cp.async`` act for the active lanes only) and merges the results with a
select; warp-collective ops (``ldmatrix``, ``mma``, ``shfl``) need all 32
lanes, and ``tile.barrier``/``cp_async_commit``/``cp_async_wait`` all of the
warp's lanes, else the run stops with an error naming the op. ``scf.for``
bounds, ``scf.while``/``cf.cond_br`` conditions must be the same in every
active lane (warp-uniform control flow), else the same. A block whose thread
count is not a multiple of 32 has a last warp with fewer lanes (the others
are inactive from the start).

**Bulk copies** (:mod:`tilec.interp.lane_bulk`). ``frag.mbar_init`` makes a
barrier of the block at its shared address (``count`` arrivals per phase;
``frag.mbar_init_fence`` does nothing here); ``frag.mbar_expect_tx`` is one
arrival per active lane announcing the phase's bytes; ``frag.tma_load`` reads
its box at issue (zeros outside the view) and lands it, swizzled as the
tensor map says, when a ``frag.mbar_wait`` completes the barrier's phase (at
once with ``async_mode="eager"``); its destination must be a multiple of the
swizzle's period. ``frag.mbar_wait`` lets the block's other warps run until
the phase of its parity has completed (parity 1 on a fresh barrier passes);
when no warp can run on, or the copies bring other bytes than announced, the
wait never ends on the GPU and the run stops with that error.
``frag.mbar_arrive_warp`` (all 32 lanes) arrives once for the warp. A barrier
op at an address where no barrier was made is an error. In a cluster every
block has its own shared memory at the same addresses: ``frag.tma_load ...
multicast M`` lands its box at the destination's address in each block whose
rank is in ``M`` and completes there on the barrier at the same address, and
``frag.mbar_arrive_warp ... cluster C`` arrives on the barrier at its address in
blocks 0 .. C-1; a block whose barrier is not made yet (no
``tile.cluster_barrier`` after the init) is an error.

**Warpgroup MMA** (:mod:`tilec.interp.lane_wgmma`). ``frag.wgmma_desc`` encodes
its base's shared address (the made-up address of its buffer plus the
offset, as the bulk copies swizzle it); ``frag.wgmma`` reads A and B where
its descriptors say (:func:`tilec.layout.gmma.operand_offsets`) and computes
at issue each warp's 16 rows of the warpgroup's 64; its results are pending
until ``frag.wgmma_commit`` and a ``frag.wgmma_wait`` complete their group:
reading them earlier (other than by ``frag.wgmma``/``frag.wgmma_wait``), or a
``frag.wgmma`` on accumulators written by other instructions since the last
``frag.wgmma_fence``, is an error. All four need the whole warpgroup.

**Arguments.** ``!llvm.ptr<1>``: a numpy array; the pointer addresses its
first element, and the memory is the bytes of the whole allocation under it
(the array itself, or the base array a slice or transpose is a view of: a
strided view is addressed through its strides, as a GPU tensor would be),
written in place. Each argument's allocation has a made-up 256-byte aligned
address (what ``llvm.ptrtoint`` gives; alignment is checked against it, so
a view starting at an odd element is misaligned as on the GPU). With the
argument attribute ``tile.dtype`` the array must
hold that element type: ``f16`` float16 (or uint16 bits), ``f32`` float32,
``f64`` float64, ``iN`` intN/uintN, and ``bf16`` either uint16 arrays of bf16
bits (used in place) or float32 arrays of values (rounded to bf16, nearest
even, into a staging buffer; after the run the elements whose bits the kernel
changed are copied back); ``f8E4M3FN`` / ``f8E5M2`` the same with uint8 bits. Without ``tile.dtype`` any dtype is raw bytes.
A tensor-map parameter (``!llvm.ptr {tile.gl = "a", tile.tensor_map = j, ...}``)
is made from its view's pointer, extents and strides arguments: pass the
``TensorMapArg`` :func:`tilec.runtime.gl_views.expand` gives (it must describe that
view), ``None``, or leave every tensor-map parameter out. The view must be
one a tensor map can describe (16-byte aligned address and row stride,
innermost stride 1).
Scalars (``iN``, ``index``, floats) take Python/numpy numbers, the same in
every lane; a plain function (no ``tile.launch``) may also take per-lane
``(32,)`` arrays, and returns its results as per-lane arrays.

**Memory.** Accesses outside an argument's allocation or a shared buffer, or
misaligned for their size, raise an error naming the op, lane, byte offset
and the memory. Shared memory: one buffer per ``frag.shared`` symbol and
block (its largest size in the module, at a made-up address that is a
multiple of its ``align``), and one dynamic buffer for every
``bytes = 0`` symbol, of ``smem`` minus the static buffers' bytes; all filled
with ``0xFF`` (NaN for f16/bf16/f32) so that reading unwritten memory shows.
The static buffers must fit the kernel's ``smem`` (``check_smem``).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import cf, func, llvm, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntAttr, IntegerAttr, IntegerType, ModuleOp, VectorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    Successor,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute, Operation

from tilec.dialects import frag
from tilec.dialects.abi import DTYPE_ATTR, LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.interp.dtypes import f8_bits, f8_values, round_bf16
from tilec.interp.errors import OpError, TileInterpreterError
from tilec.interp.grid import (
    DEFAULT_BARRIER_TIMEOUT,
    any_reachable_op,
    clusters,
    lookup_function,
    resolve_grid,
    run_cluster_warps,
)
from tilec.interp.lane_arith import LaneArithFunctions, LaneMathFunctions, LaneVectorFunctions, select
from tilec.interp.lane_bulk import BulkFunctions, Mbarriers, bind_tensor_maps, tensor_map_indices
from tilec.interp.lane_frag import FragFunctions
from tilec.interp.lane_memory import GLOBAL, SHARED, Memory, Ptr, read, write
from tilec.interp.lane_values import (
    LANE_IDS,
    LANES,
    bitcast,
    convert,
    element_type,
    from_bytes,
    int_width,
    is_float,
    sizeof,
    splat,
    struct_layout,
    to_bytes,
    vector_shape,
    wrap,
)
from tilec.interp.lane_wgmma import WgmmaFunctions
from tilec.interp.tile_functions import (
    AsyncGroups,
    BlockBarrier,
    WarpScheduler,
    block_rank,
    _ReportingImpls,  # noqa: PLC2701 - the same error reporting as the tile interpreter
    _StopWhenBlockFails,  # noqa: PLC2701
)



# -- what a block shares ------------------------------------------------------------


def shared_symbols(module: ModuleOp) -> tuple[dict[str, int], set[str]]:
    """``frag.shared`` symbols of ``module``: static ones with their (largest) size, and the dynamic ones."""
    static: dict[str, int] = {}
    dynamic: set[str] = set()
    for op in module.walk():
        if not isinstance(op, frag.SharedOp):
            continue
        name, size = op.sym_name.data, op.bytes.value.data
        if (size == 0 and name in static) or (size > 0 and name in dynamic):
            raise TileInterpreterError(op, f'shared buffer "{name}" is used both as static and as dynamic shared memory')
        if size == 0:
            dynamic.add(name)
        else:
            static[name] = max(size, static.get(name, 0))
    return static, dynamic


def shared_alignments(module: ModuleOp) -> dict[str, int]:
    """The largest ``align`` of each ``frag.shared`` symbol: bulk copies check their swizzle's period."""
    align: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, frag.SharedOp):
            name = op.sym_name.data
            align[name] = max(op.align.value.data, align.get(name, 1))
    return align


class SharedBuffers:
    """The shared memory of one block: one buffer per static symbol, one for all dynamic ones (0xFF-filled)."""

    def __init__(self, static: dict[str, int], dynamic_bytes: int, align: dict[str, int] | None = None,
                 deferred: bool = True, clustered: bool = False):
        self.static = static
        self.dynamic_bytes = dynamic_bytes
        self._buffers: dict[str, Memory] = {}
        self._dynamic: Memory | None = None
        self._lock = threading.Lock()
        self.mbarriers = Mbarriers(deferred, clustered)
        """The block's ``mbarrier`` objects (:mod:`tilec.interp.lane_bulk`)."""
        # made-up shared-window addresses: static buffers in module order (each at a multiple of
        # its alignment, 128 at least), then the dynamic one
        align = align or {}
        self._address: dict[str, int] = {}
        top = 0
        for name, size in static.items():
            top = _round_up(top, max(128, align.get(name, 1)))
            self._address[name] = top
            top += size
        dynamic_align = max([128] + [a for n, a in align.items() if n not in static])
        self._dynamic_address = _round_up(top, dynamic_align)

    def get(self, op: frag.SharedOp) -> Memory:
        return self._buffer(None if op.bytes.value.data == 0 else op.sym_name.data)

    def _buffer(self, name: str | None) -> Memory:
        """The static buffer ``name``, or the dynamic one (None), made on first use."""
        with self._lock:
            if name is None:
                if self._dynamic is None:
                    self._dynamic = Memory.fresh_shared("<dynamic>", self.dynamic_bytes, self._dynamic_address)
                return self._dynamic
            mem = self._buffers.get(name)
            if mem is None:
                mem = self._buffers[name] = Memory.fresh_shared(name, self.static[name], self._address[name])
            return mem

    def counterpart(self, memory: Memory, other: SharedBuffers) -> Memory:
        """``memory`` (one of this block's buffers) in ``other``, another block of the cluster: every
        block has its own shared memory, at the same addresses."""
        if memory is self._dynamic:
            return other._buffer(None)
        with self._lock:
            name = next((n for n, m in self._buffers.items() if m is memory), None)
        if name is None:
            raise OpError(f"{memory.name} is not shared memory of this block")
        return other._buffer(name)

    def memories(self) -> list[Memory]:
        """The buffers made so far (a ``frag.shared`` of some warp made each): where wgmma descriptors point."""
        with self._lock:
            return [*self._buffers.values(), *([self._dynamic] if self._dynamic is not None else [])]


def _round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


@dataclass
class LaneState:
    """One warp of one block while it runs: ids, its active lanes, and what it shares with its block."""

    block_id: tuple[int, int, int] = (0, 0, 0)
    grid: tuple[int, int, int] = (1, 1, 1)
    block_dims: tuple[int, int, int] = (LANES, 1, 1)
    warp: int = 0
    shared: SharedBuffers = field(default_factory=lambda: SharedBuffers({}, 0))
    barrier: BlockBarrier | None = None
    async_groups: AsyncGroups = field(default_factory=AsyncGroups)
    launched: bool = False
    cluster_dims: tuple[int, int, int] = (1, 1, 1)
    cluster: tuple[SharedBuffers, ...] = ()
    """The shared memory of every block of the thread-block cluster, by rank (empty: no clusters)."""

    @property
    def rank(self) -> int:
        """The block's rank in its cluster (0 without clusters)."""
        return block_rank(self.block_id, self.cluster_dims)

    @property
    def cluster_blocks(self) -> tuple[SharedBuffers, ...]:
        """The shared memory of every block of the cluster, by rank (just this block's without clusters)."""
        return self.cluster or (self.shared,)

    def __post_init__(self):
        threads = self.block_dims[0] * self.block_dims[1] * self.block_dims[2]
        self.exists = (self.warp * LANES + LANE_IDS) < threads
        """The lanes the warp has (all 32 but in a block's last, partial warp)."""
        self.mask = self.exists.copy()
        """The lanes active now (inside divergent ``scf.if`` regions, fewer)."""

    @contextmanager
    def masked(self, mask: np.ndarray):
        saved = self.mask
        self.mask = mask
        try:
            yield
        finally:
            self.mask = saved

    def require_all_lanes(self) -> None:
        """Warp-collective instructions (``.sync.aligned``) need every one of the 32 lanes."""
        if not self.mask.all():
            off = np.flatnonzero(~self.mask)
            why = "the warp has only {} threads".format(int(self.exists.sum())) if not self.exists.all() else (
                "the op runs under a lane-varying scf.if"
            )
            raise OpError(f"needs all 32 lanes of the warp, but lane(s) {_lanes_text(off)} are inactive ({why})")

    def require_converged(self) -> None:
        """Barriers and cp.async groups need all of the warp's lanes (no divergent region)."""
        if not np.array_equal(self.mask, self.exists):
            off = np.flatnonzero(self.exists & ~self.mask)
            raise OpError(
                f"runs under a lane-varying scf.if (lane(s) {_lanes_text(off)} inactive); "
                "the lane interpreter needs the whole warp here"
            )

    def uniform(self, value: Any, what: str) -> int | None:
        """The value all active lanes agree on (None without active lanes), else an error."""
        v = np.asarray(value)
        active = v[self.mask] if v.ndim else v.reshape(1)
        if active.size == 0:
            return None
        if np.any(active != active[0]):
            lanes = np.flatnonzero(self.mask)
            first, other = int(lanes[0]), int(lanes[np.flatnonzero(active != active[0])[0]])
            raise OpError(
                f"{what} differs between lanes (lane {first}: {v[first]}, lane {other}: {v[other]}); "
                "the lane interpreter needs it warp-uniform"
            )
        return active[0].item()

    def describe(self) -> str | None:
        if not self.launched:
            return None
        return f"block ({', '.join(map(str, self.block_id))}), warp {self.warp}"


def _lanes_text(lanes: np.ndarray) -> str:
    shown = ", ".join(str(int(x)) for x in lanes[:8])
    return shown + (", ..." if lanes.size > 8 else "")


# -- structure, control flow, llvm ---------------------------------------------------


@register_impls
@dataclass
class LaneStructureFunctions(InterpreterFunctions):
    """Ids and ``tile.barrier``, ``scf``/``cf`` with lane masks, and the ``llvm`` ops of address arithmetic."""

    state: LaneState = field(default_factory=LaneState)

    # ids -----------------------------------------------------------------------------

    @impl(t.LaneIdOp)
    def run_lane_id(self, interpreter: Interpreter, op: Operation, args: PythonValues):
        return (LANE_IDS.copy(),)

    @impl(t.WarpIdOp)
    def run_warp_id(self, interpreter, op, args):
        return (np.full(LANES, self.state.warp, dtype=np.int64),)

    @impl(t.ThreadIdOp)
    def run_thread_id(self, interpreter, op: t.ThreadIdOp, args):
        linear = self.state.warp * LANES + LANE_IDS
        bx, by, _ = self.state.block_dims
        coords = (linear % bx, (linear // bx) % by, linear // (bx * by))
        return (coords[op.axis.data].astype(np.int64),)

    @impl(t.BlockIdOp)
    def run_block_id(self, interpreter, op: t.BlockIdOp, args):
        return (np.full(LANES, self.state.block_id[op.axis.data], dtype=np.int64),)

    @impl(t.GridDimOp)
    def run_grid_dim(self, interpreter, op: t.GridDimOp, args):
        return (np.full(LANES, self.state.grid[op.axis.data], dtype=np.int64),)

    @impl(t.ClusterIdOp)
    def run_cluster_id(self, interpreter, op: t.ClusterIdOp, args):
        axis = op.axis.data
        return (np.full(LANES, self.state.block_id[axis] // self.state.cluster_dims[axis], dtype=np.int64),)

    @impl(t.ClusterCountOp)
    def run_cluster_count(self, interpreter, op: t.ClusterCountOp, args):
        axis = op.axis.data
        return (np.full(LANES, self.state.grid[axis] // self.state.cluster_dims[axis], dtype=np.int64),)

    @impl(t.BlockRankOp)
    def run_block_rank(self, interpreter, op, args):
        return (np.full(LANES, self.state.rank, dtype=np.int64),)

    @impl(t.ClusterBarrierOp)
    def run_cluster_barrier(self, interpreter, op, args):
        """Every warp of every block of the cluster (alone: nothing to wait for)."""
        self.state.require_converged()
        if self.state.barrier is not None:
            self.state.barrier.cluster_wait(self.state.warp, op)
        return ()

    @impl(t.BarrierOp)
    def run_barrier(self, interpreter, op, args):
        self.state.require_converged()
        if self.state.barrier is None:
            return ()
        if op.threads is None:
            self.state.barrier.wait(self.state.warp, op)
            return ()
        # bar.sync 0, N: the block's first N threads (a warp-specialised kernel's consumers)
        self.state.shared.mbarriers.named_barrier(0).sync(op.threads.value.data, self.state.barrier.yield_turn,
                                                          self.state.warp)
        self.state.barrier.progress()
        return ()

    @impl(t.SetMaxNRegOp)
    def run_setmaxnreg(self, interpreter, op, args):
        self.state.require_all_lanes()
        return ()  # registers are not modelled

    # scf -----------------------------------------------------------------------------

    @impl(scf.IfOp)
    def run_if(self, interpreter, op: scf.IfOp, args):
        cond = np.asarray(args[0], dtype=bool)
        mask = self.state.mask
        taken = mask & cond
        if np.array_equal(taken, mask):
            return interpreter.run_ssacfg_region(op.true_region, (), "if.then")
        if not taken.any():
            return interpreter.run_ssacfg_region(op.false_region, (), "if.else")
        with self.state.masked(taken):
            then = interpreter.run_ssacfg_region(op.true_region, (), "if.then")
        with self.state.masked(mask & ~cond):
            other = interpreter.run_ssacfg_region(op.false_region, (), "if.else")
        return tuple(select(cond, a, b) for a, b in zip(then, other, strict=True))

    @impl(scf.ForOp)
    def run_for(self, interpreter, op: scf.ForOp, args):
        lb, ub, step, *carried = args
        lo = self.state.uniform(lb, "the lower bound")
        hi = self.state.uniform(ub, "the upper bound")
        st = self.state.uniform(step, "the step")
        if lo is None:  # no active lane: nothing runs
            return tuple(carried)
        if st <= 0:
            raise OpError(f"the step must be positive, got {st}")
        values = tuple(carried)
        iv_type = op.body.block.args[0].type
        for i in range(int(lo), int(hi), int(st)):
            values = interpreter.run_ssacfg_region(op.body, (splat(i, iv_type), *values), "for")
        return values

    @impl(scf.WhileOp)
    def run_while(self, interpreter, op: scf.WhileOp, args):
        values = tuple(args)
        while True:
            cond, *forwarded = interpreter.run_ssacfg_region(op.before_region, values, "while.before")
            go = self.state.uniform(cond, "the scf.while condition")
            if not go:
                return tuple(forwarded)
            values = interpreter.run_ssacfg_region(op.after_region, tuple(forwarded), "while.after")

    @impl_terminator(scf.YieldOp)
    def run_yield(self, interpreter, op, args):
        return ReturnedValues(args), ()

    @impl_terminator(scf.ConditionOp)
    def run_condition(self, interpreter, op, args):
        return ReturnedValues(args), ()

    @impl_terminator(cf.BranchOp)
    def run_br(self, interpreter, op: cf.BranchOp, args):
        return Successor(op.successor, args), ()

    @impl_terminator(cf.ConditionalBranchOp)
    def run_cond_br(self, interpreter, op: cf.ConditionalBranchOp, args):
        go = self.state.uniform(args[0], "the branch condition")
        if go is None or go:
            return Successor(op.then_block, interpreter.get_values(op.then_arguments)), ()
        return Successor(op.else_block, interpreter.get_values(op.else_arguments)), ()

    # llvm ----------------------------------------------------------------------------

    @impl(llvm.GEPOp)
    def run_gep(self, interpreter, op: llvm.GEPOp, args):
        ptr, *dynamic = args
        if not isinstance(ptr, Ptr):
            raise OpError(f"the base is not a pointer: {type(ptr).__name__}")
        dynamic = iter(dynamic)
        offset = np.zeros(LANES, dtype=np.int64)
        current: Attribute = op.elem_type
        for k, raw in enumerate(op.rawConstantIndices.iter_values()):
            index = np.asarray(next(dynamic), dtype=np.int64) if raw == llvm.GEP_USE_SSA_VAL else raw
            if k == 0:
                offset = offset + index * sizeof(current)
            elif isinstance(current, llvm.LLVMArrayType):
                current = current.type
                offset = offset + index * sizeof(current)
            elif isinstance(current, VectorType):
                current = current.element_type
                offset = offset + index * sizeof(current)
            elif isinstance(current, llvm.LLVMStructType):
                offset = offset + struct_layout(current)[0][raw]
                current = current.types.data[raw]
            else:
                raise OpError(f"cannot index into {current}")
        return (ptr.moved(offset),)

    def _align(self, op, t: Attribute) -> int:
        given = op.alignment.value.data if op.alignment is not None else None
        return given or (sizeof(t) if sizeof(t) & (sizeof(t) - 1) == 0 else sizeof(element_type(t)))

    @impl(llvm.LoadOp)
    def run_load(self, interpreter, op: llvm.LoadOp, args):
        t = op.dereferenced_value.type
        return (from_bytes(read(args[0], sizeof(t), self.state.mask, self._align(op, t)), t),)

    @impl(llvm.StoreOp)
    def run_store(self, interpreter, op: llvm.StoreOp, args):
        t = op.value.type
        write(args[1], to_bytes(args[0], t), self.state.mask, self._align(op, t))
        return ()

    @impl(llvm.PtrToIntOp)
    def run_ptrtoint(self, interpreter, op, args):
        ptr = args[0]
        if not isinstance(ptr, Ptr):
            raise OpError(f"the operand is not a pointer: {type(ptr).__name__}")
        return (wrap(ptr.memory.address + ptr.offsets, int_width(op.results[0].type)),)

    @impl(llvm.BitcastOp)
    def run_bitcast(self, interpreter, op, args):
        src, dst = op.operands[0].type, op.results[0].type
        if isinstance(args[0], Ptr):
            return (args[0],)
        return (bitcast(args[0], src, dst),)

    @impl(llvm.ConstantOp)
    def run_llvm_constant(self, interpreter, op: llvm.ConstantOp, args):
        if not isinstance(op.value, IntegerAttr | FloatAttr):
            raise OpError(f"constants like {op.value} are not supported")
        return (splat(op.value.value.data, op.result.type),)


def make_lane_interpreter(module: ModuleOp, state: LaneState) -> Interpreter:
    """An xDSL interpreter that runs one warp of fragment-level IR (``func``, ``arith``, ``math``,
    ``vector``, ``scf``, ``cf``, ``llvm`` addressing, tile ids and barrier, ``frag``); its listeners
    stop it when the block fails and follow the warp's wgmma results
    (:class:`~tilec.interp.lane_wgmma.WgmmaTracker`)."""
    interpreter = Interpreter(module, _impls=_ReportingImpls())
    interpreter.register_implementations(BuiltinFunctions())
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(LaneStructureFunctions(state))
    interpreter.register_implementations(LaneArithFunctions(state))
    interpreter.register_implementations(LaneMathFunctions())
    interpreter.register_implementations(LaneVectorFunctions())
    interpreter.register_implementations(FragFunctions(state))
    interpreter.register_implementations(BulkFunctions(state))
    wgmma = WgmmaFunctions(state)
    interpreter.register_implementations(wgmma)
    stop = (_StopWhenBlockFails(state.barrier),) if state.barrier is not None else ()
    interpreter.listeners = (*stop, wgmma.tracker)
    return interpreter


# -- which functions run here ------------------------------------------------------------


def is_fragment_level(module: ModuleOp, fn: func.FuncOp) -> bool:
    """Whether ``fn`` is fragment-level: it takes ``!llvm.ptr`` arguments or it (or a
    function it calls) uses ``frag`` or ``llvm`` ops."""
    if any(isinstance(p, llvm.LLVMPointerType) for p in fn.function_type.inputs.data):
        return True
    return any_reachable_op(module, fn, lambda op: op.name.startswith(("frag.", "llvm.")))


# -- arguments ---------------------------------------------------------------------------

_DTYPES_OF = {
    "f16": (np.float16, np.uint16),
    "f32": (np.float32,),
    "f64": (np.float64,),
    "bf16": (np.uint16, np.float32),
    "f8E4M3FN": (np.uint8, np.float32),
    "f8E5M2": (np.uint8, np.float32),
    "i8": (np.int8, np.uint8),
    "i16": (np.int16, np.uint16),
    "i32": (np.int32, np.uint32),
    "i64": (np.int64, np.uint64),
    "i1": (np.bool_, np.uint8),
}


_STAGED = ("bf16", "f8E4M3FN", "f8E5M2")
"""Element types a float32 array may stand for (its values rounded, its bits staged for the run)."""


@dataclass
class _Staged:
    """A float32 allocation bound as bf16 or FP8 (``elem``): its bits live in ``memory`` during the run."""

    flat: np.ndarray
    memory: Memory
    original: np.ndarray
    elem: str = "bf16"

    def copy_back(self) -> None:
        """Elements whose bits the kernel changed go back into the float32 array (the others stay as given)."""
        if self.memory.written:
            bits = self.memory.data.view(self.original.dtype)
            changed = bits != self.original
            self.flat[changed] = _float32_of(bits[changed], self.elem)


def _bits_of(values: np.ndarray, elem: str) -> np.ndarray:
    """float32 values as the bits of ``elem`` (bf16: uint16, FP8: uint8), rounded to nearest even."""
    if elem == "bf16":
        return (round_bf16(values).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return f8_bits(values, elem)


def _float32_of(bits: np.ndarray, elem: str) -> np.ndarray:
    if elem == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    return f8_values(bits, elem).astype(np.float32)


def _allocation(value: np.ndarray, what: str) -> tuple[np.ndarray, int]:
    """The array that owns ``value``'s memory (flat, in memory order) and ``value``'s byte offset into it."""
    root = value
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        raise OpError(f"{what}: the memory under the array is not one contiguous allocation")
    flat = root.reshape(-1, order="A")
    origin = value.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    return flat, origin


def _global_memory(value: Any, dtype_attr: Attribute | None, what: str, index: int) -> tuple[Memory, _Staged | None]:
    if not isinstance(value, np.ndarray):
        raise OpError(f"{what} is a global pointer: expected a numpy array, got {type(value).__name__}")
    name = f"global {what}"
    address = (index + 1) << 40
    elem = str(dtype_attr) if dtype_attr is not None else None
    if elem is not None:
        allowed = _DTYPES_OF.get(elem)
        if allowed is None:
            raise OpError(f"{what} has {DTYPE_ATTR} = {elem}, which the lane interpreter does not know")
        if value.dtype.type not in allowed:
            names = " or ".join(np.dtype(a).name for a in allowed)
            note = (f" ({elem}: {np.dtype(allowed[0]).name} bits, or float32 values rounded to {elem})"
                    if elem in _STAGED else "")
            raise OpError(f"{what} is {DTYPE_ATTR} = {elem}: expected a numpy array of {names}{note}, got {value.dtype}")
    flat, origin = _allocation(value, what)
    writable = bool(value.flags.writeable)
    if elem in _STAGED and value.dtype == np.float32:
        if flat.dtype != np.float32:
            raise OpError(f"{what}: a float32 view of a {flat.dtype} allocation cannot be staged as {elem}")
        bits = _bits_of(flat, elem)
        mem = Memory(name, GLOBAL, bits.view(np.uint8), writable=writable, origin=origin // 4 * bits.itemsize,
                     address=address)
        return mem, _Staged(flat, mem, bits.copy(), elem)
    return Memory(name, GLOBAL, flat.view(np.uint8), writable=writable, origin=origin, address=address), None


def _scalar(value: Any, typ: Attribute, what: str, per_lane: bool) -> np.ndarray:
    shape = vector_shape(typ)
    arr = np.asarray(value)
    if isinstance(value, np.ndarray) and arr.shape == (LANES, *shape) and per_lane:
        pass
    elif arr.shape != shape:
        lanes = f" or per-lane values of shape {(LANES, *shape)}" if per_lane else ""
        raise OpError(f"{what} is {typ}: expected a value of shape {shape}{lanes}, got shape {arr.shape}")
    if is_float(typ):
        if arr.dtype.kind not in "biuf":
            raise OpError(f"{what} is {typ}: expected a number, got {arr.dtype}")
    else:
        w = int_width(element_type(typ))
        if w is None:
            raise OpError(f"{what} has type {typ}, which cannot be passed from Python")
        if arr.dtype.kind not in "biu" or (arr.dtype.kind == "b" and w != 1):
            raise OpError(f"{what} is {typ}: expected an integer, got {arr.dtype if arr.ndim else type(value).__name__}")
        ints = arr.astype(object)
        lo, hi = (-(1 << (w - 1)) if w > 1 else 0), (1 << w) - 1
        if np.any(ints < lo) or np.any(ints > hi):
            raise OpError(f"{what} is {typ}: {value!r} does not fit in {w} bits")
        arr = arr.astype(np.int64)  # uint64 wraps to the same bits
    return convert(arr, typ) if arr.shape == (LANES, *shape) else splat(arr, typ)


def bind_arguments(fn: func.FuncOp, args: Sequence[Any], per_lane: bool) -> tuple[list, list[_Staged]]:
    """Lane values for ``fn``'s parameters, and the staged (bf16 float32) arrays to copy back."""
    params = fn.function_type.inputs.data
    maps = tensor_map_indices(fn)
    if maps and len(args) == len(params) - len(maps):  # tensor maps left out: made from their views
        given = iter(args)
        args = [None if i in maps else next(given) for i in range(len(params))]
    if len(args) != len(params):
        expected = ", ".join(str(p) for p in params)
        left_out = f" (or {len(params) - len(maps)}, without the tensor maps)" if maps else ""
        raise TileInterpreterError(fn, f"takes {len(params)} arguments{left_out} ({expected}), got {len(args)}")
    attrs = [d.data for d in fn.arg_attrs.data] if fn.arg_attrs is not None else [{}] * len(params)
    block = fn.body.blocks.first
    values, staged, names = [], [], []
    for i, (value, typ) in enumerate(zip(args, params)):
        hint = block.args[i].name_hint if block is not None else None
        what = f"argument {i}" + (f" (%{hint})" if hint else "")
        names.append(what)
        try:
            if i in maps:
                values.append(None)  # bound below, once its view is
            elif isinstance(typ, llvm.LLVMPointerType):
                space = typ.addr_space.data if isinstance(typ.addr_space, IntAttr) else 0
                if space == SHARED:
                    raise OpError(f"{what} is a shared-memory pointer, which cannot be passed from Python")
                mem, stage = _global_memory(value, attrs[i].get(DTYPE_ATTR), what, i)
                values.append(Ptr.base(mem, mem.origin))
                if stage is not None:
                    staged.append(stage)
            elif isinstance(typ, IntegerType | IndexType | VectorType) or is_float(typ):
                values.append(_scalar(value, typ, what, per_lane))
            else:
                raise OpError(f"{what} has type {typ}, which cannot be passed from Python")
        except OpError as err:
            raise TileInterpreterError(fn, str(err)) from err
    if maps:
        try:
            bind_tensor_maps(fn, args, values, names)
        except OpError as err:
            raise TileInterpreterError(fn, str(err)) from err
    return values, staged


# -- running --------------------------------------------------------------------------------


def _execute(module: ModuleOp, fn: func.FuncOp, args: Sequence[Any], state: LaneState) -> tuple:
    interpreter = make_lane_interpreter(module, state)
    with np.errstate(all="ignore"):
        try:
            results = interpreter.call_op(fn, tuple(args))
            state.async_groups.drain()
        except TileInterpreterError as err:
            where = state.describe()
            raise (err.at(where) if where else err) from err.__cause__
    return results


def _run_cluster(module, fn, args, blocks, grid, launch, make_shared, async_mode, timeout, order) -> None:
    """Every warp of every block of one thread-block cluster (one block without clusters) together."""
    clustered = len(blocks) > 1
    shared = tuple(make_shared(clustered) for _ in blocks)

    def run_warp(rank: int, warp: int, barrier: BlockBarrier) -> None:
        state = LaneState(
            blocks[rank], grid, launch.block_dims, warp, shared[rank], barrier, AsyncGroups(async_mode), launched=True,
            cluster_dims=launch.cluster_dims, cluster=shared if clustered else (),
        )
        _execute(module, fn, args, state)

    run_cluster_warps(blocks, -(-launch.threads // LANES), timeout, order, fn, run_warp)


def _result(value: Any) -> Any:
    return value if isinstance(value, Ptr) else np.asarray(value)


def run_fragment(
    module: ModuleOp,
    fn: func.FuncOp | str,
    args: Sequence[Any],
    *,
    grid: int | Sequence[int] | None = None,
    async_mode: str = "deferred",
    barrier_timeout: float = DEFAULT_BARRIER_TIMEOUT,
    check_smem: bool = True,
    warp_order: str = "ascending",
) -> tuple:
    """Run the fragment-level function ``fn`` of ``module`` on ``args`` (see the module docstring).

    A kernel (``tile.launch``) runs over its grid and returns ``()``; a plain
    function runs once as warp 0 of a 32-thread block and returns its results,
    one ``(32, ...)`` numpy array (or :class:`Ptr`) per result. The options are
    :func:`tilec.interp.run`'s.
    """
    if isinstance(fn, str):
        fn = lookup_function(module, fn)
    AsyncGroups(async_mode)  # validates the options before anything runs
    WarpScheduler(1, barrier_timeout, warp_order)
    launch = fn.attributes.get(LAUNCH_ATTR)
    static, dynamic = shared_symbols(module)
    align = shared_alignments(module)
    static_bytes = sum(static.values())
    values, staged = bind_arguments(fn, args, per_lane=launch is None)

    if launch is None:
        if grid is not None and tuple(grid if not isinstance(grid, int) else (grid,)) not in ((1,), (1, 1), (1, 1, 1)):
            raise TileInterpreterError(fn, f"has no tile.launch attribute, so it runs once; got grid={grid!r}")
        shared = SharedBuffers(static, 0, align, async_mode == "deferred")
        state = LaneState(shared=shared, async_groups=AsyncGroups(async_mode))
        results = _execute(module, fn, values, state)
        for s in staged:
            s.copy_back()
        return tuple(_result(r) for r in results)

    if not isinstance(launch, LaunchAttr):
        raise TileInterpreterError(fn, f"tile.launch must be a #tile.launch<...>, got {launch}")
    if fn.function_type.outputs.data:
        raise TileInterpreterError(fn, "a kernel (with tile.launch) cannot return values")
    smem = launch.smem.data
    if check_smem and static_bytes > smem:
        sizes = ", ".join(f'"{k}" {v}' for k, v in static.items())
        raise TileInterpreterError(
            fn, f"the static shared buffers take {static_bytes} bytes ({sizes}), but tile.launch declares smem = {smem}"
        )
    dynamic_bytes = max(0, smem - static_bytes) if dynamic else 0
    grid = resolve_grid(fn, launch, grid)

    def make_shared(clustered: bool) -> SharedBuffers:
        return SharedBuffers(static, dynamic_bytes, align, async_mode == "deferred", clustered)

    for blocks in clusters(grid, launch.cluster_dims):
        _run_cluster(module, fn, values, blocks, grid, launch, make_shared, async_mode, barrier_timeout, warp_order)
    for s in staged:
        s.copy_back()
    return ()


__all__ = [
    "LaneState",
    "Memory",
    "Ptr",
    "SharedBuffers",
    "bind_arguments",
    "is_fragment_level",
    "make_lane_interpreter",
    "run_fragment",
    "shared_symbols",
]
