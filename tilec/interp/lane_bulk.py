"""sm_90 bulk tensor copies (TMA) and ``mbarrier`` objects on lane values, per the PTX ISA.

What ``tile-distribute`` emits for ``tile.bulk_copy`` and its barriers
(:mod:`tilec.passes.tile_distribute.bulk`), for one warp at a time:

- ``frag.mbar_init %bar, count``: each active lane makes a barrier at its
  (8-byte aligned) shared address, expecting ``count`` arrivals per phase.
  Barriers belong to the block (:class:`Mbarriers`), keyed by their shared
  address; a barrier op on an address without one is an error.
- ``frag.mbar_init_fence``, ``frag.fence_proxy_async``: nothing to model.
- ``frag.mbar_expect_tx %bar, bytes``: each active lane arrives once,
  announcing ``bytes`` of copies for the open phase.
- ``frag.tma_load %dst, %map[%c0, %c1, ...], %bar``: each active lane copies
  the box at column ``c0``, row ``c1`` (and, for a view of rank 3 to 5, the
  coordinates of its leading dimensions, innermost first) of the map's view
  (elements outside the view's extents are zeros) into shared memory at ``%dst``: ``R`` rows of
  ``I`` elements, row ``r`` at byte ``r * I * e``, with the map's swizzle
  applied to the shared address (:func:`swizzle_address`). The global read
  happens at issue; the bytes land when a wait completes the barrier's phase
  (``async_mode="deferred"``) or at once (``"eager"``). ``%dst`` must be a
  multiple of the swizzle's period (1024 bytes for 128-byte swizzle, 512 for
  64, 256 for 32, else 128).
- ``frag.mbar_wait %bar, %parity``: each active lane waits until the phase of
  that parity has completed (parity 1 on a fresh barrier passes). A warp that
  cannot pass lets the other warps of its block (and cluster) run
  (:meth:`~tilec.interp.tile_functions.WarpScheduler.yield_turn`); when none
  can, the wait never ends on the GPU, and that is the error.
- ``frag.mbar_arrive_warp %bar``: the warp (all 32 lanes) arrives once, at
  lane 0's address; with ``cluster C``, at that address in each block of ranks
  0 .. C-1 of the thread-block cluster.
- ``frag.tma_load ... multicast M``: the box lands at ``%dst``'s address in
  every block of the cluster whose rank is in the mask ``M``, completing its
  bytes on the barrier at ``%bar``'s address in each. Every block has its own
  shared memory and barriers, at the same addresses (:meth:`SharedBuffers.counterpart
  <tilec.interp.lanes.SharedBuffers.counterpart>`); another block's barrier that
  its ``frag.mbar_init`` has not made yet is an error.
- ``frag.tensormap_prefetch %map``: only checks that ``%map`` is a tensor-map parameter (the
  interpreter has no descriptor cache).
- ``frag.tma_store_warp %src, %map[%c0, %c1, ...]``: the warp (all 32 lanes) stores lane 0's box
  of shared memory at ``%src`` (read through the map's swizzle, as a load lands) into the map's
  view at the coordinates, dropping what lies outside it, at once: no bulk store is kept in
  flight, so ``frag.bulk_commit_warp``, ``frag.bulk_wait_warp`` and ``frag.warp_sync`` only
  check that the whole warp runs them.
- ``frag.named_barrier_sync %id, n`` / ``frag.named_barrier_arrive %id, n``: the
  warp's 32 threads arrive on the block's named barrier ``id``
  (:class:`~tilec.interp.mbarriers.NamedBarrier`); ``sync`` then lets the other
  warps run until ``n`` threads have arrived in that phase.

The phases, arrivals and byte counts are :mod:`tilec.interp.mbarriers`'.

**Tensor-map parameters** (``!llvm.ptr {tile.gl = "a", tile.tensor_map = j,
tile.box, tile.swizzle}``) are modelled by :class:`TensorMap`: the view's
own memory, extents and strides, as the kernel's pointer, ``dim`` and
``stride`` parameters of the same view are bound. The caller passes what
:func:`tilec.runtime.gl_views.expand` gives (a ``TensorMapArg``, checked against the
view), ``None``, or leaves the tensor-map parameters out altogether.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from tilec.dialects import frag
from tilec.dialects.abi import TENSOR_MAP_ATTR, gl_params
from tilec.interp.errors import OpError
from tilec.interp.lane_frag import expect_space
from tilec.interp.lane_memory import GLOBAL, SHARED, Memory, Ptr, check_write, read
from tilec.interp.mbarriers import NamedBarrier, TransactionBarrier
from tilec.layout.bulk import MBARRIER_BYTES, BulkBox, swizzle_address
from tilec.runtime.tensor_map import TensorMapSpec, element_bytes

# -- where a box lands ---------------------------------------------------------------


@dataclass(frozen=True)
class TensorMap:
    """The lane interpreter's value of a tensor-map parameter: a view (rank 2 to 5) and its box, which
    spans the last two dimensions (1 in the others)."""

    what: str
    """The parameter, for errors (``argument 5 (%a_map0)``)."""
    memory: Memory
    origin: int
    """Byte offset of element (0, ..., 0) in ``memory``."""
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    box: BulkBox

    def _box(self, coords: Sequence[int], verb: str) -> tuple[np.ndarray, np.ndarray]:
        """The byte offsets into the view's memory of the box at ``coords`` (innermost dimension first,
        as the frag ops take them), ``R x I x e``, and which of its ``R x I`` elements lie inside the view."""
        box, e = self.box, self.box.elem_bytes
        col, row, *lead = coords  # lead: dimensions rank-3 .. 0
        rows = row + np.arange(box.rows, dtype=np.int64)[:, None]
        cols = col + np.arange(box.inner, dtype=np.int64)[None, :]
        inside = (rows >= 0) & (rows < self.shape[-2]) & (cols >= 0) & (cols < self.shape[-1])
        start = self.origin + (rows * self.strides[-2] + cols * self.strides[-1]) * e
        for d, c in zip(range(len(self.shape) - 3, -1, -1), lead):
            inside &= 0 <= c < self.shape[d]
            start = start + c * self.strides[d] * e
        offsets = start[..., None] + np.arange(e, dtype=np.int64)
        wanted = offsets[inside]
        if wanted.size and (wanted.min() < 0 or wanted.max() >= self.memory.size):
            raise OpError(f"{self.what}: the box at {tuple(coords)} (innermost first) {verb} outside "
                          f"{self.memory.name} ({self.memory.extent()}): its extents or strides do not fit the array")
        return offsets, inside

    def read_box(self, coords: Sequence[int]) -> np.ndarray:
        """The box at ``coords``, rows first (``R * I * e`` uint8); elements outside the view are zeros."""
        offsets, inside = self._box(coords, "reads")
        out = np.zeros(offsets.shape, dtype=np.uint8)
        out[inside] = self.memory.data[offsets[inside]]
        return out.reshape(-1)

    def write_box(self, coords: Sequence[int], data: np.ndarray) -> None:
        """Write a box (rows first, ``R * I * e`` uint8, as :meth:`read_box` gives) at ``coords``;
        the elements outside the view are dropped, as a bulk tensor store does."""
        offsets, inside = self._box(coords, "writes")
        self.memory.data[offsets[inside]] = data.reshape(offsets.shape)[inside]
        self.memory.written = True

    def landing(self, dst: Ptr, lane: int) -> np.ndarray:
        """The byte offsets into ``dst.memory`` where the box's bytes go (checked: in bounds, aligned)."""
        mem, at, n = dst.memory, int(dst.offsets[lane]), self.box.nbytes
        align = self.box.alignment()
        if (mem.address + at) % align:
            why = f"a {self.box.swizzle}-byte swizzle" if self.box.swizzle else "a bulk copy"
            raise OpError(f"lane {lane}: the destination, byte offset {at} of {mem.name} (shared address "
                          f"{mem.address + at:#x}), is not {align}-byte aligned, as {why} needs")
        if at < 0 or at + n > mem.size:
            raise OpError(f"lane {lane}: the {n}-byte box at byte offset {at} of {mem.name} is out of bounds "
                          f"({mem.extent()})")
        linear = mem.address + at + np.arange(n, dtype=np.int64)
        return swizzle_address(linear, self.box.swizzle) - mem.address


def _check_map(tmap: Any, coords: Sequence[Any]) -> None:
    """A bulk copy's tensor map must be a kernel's tensor-map parameter, given one coordinate a dimension."""
    if not isinstance(tmap, TensorMap):
        raise OpError(f"the tensor map is not a tensor-map parameter of the kernel: {type(tmap).__name__}")
    rank = len(tmap.shape)
    if len(coords) != rank:
        raise OpError(f"{tmap.what} is {rank}-d: it takes {rank} coordinates (innermost first), got {len(coords)}")


def _land(memory: Memory, offsets: np.ndarray, data: np.ndarray) -> None:
    memory.data[offsets] = data
    memory.written = True


# -- binding tensor-map parameters ---------------------------------------------------------


def tensor_map_indices(fn) -> list[int]:
    """The positions of ``fn``'s tensor-map parameters."""

    if fn.arg_attrs is None:
        return []
    return [i for i, d in enumerate(fn.arg_attrs.data) if TENSOR_MAP_ATTR in d.data]


def _first(value: Any) -> int:
    return int(np.asarray(value).reshape(-1)[0])


def bind_tensor_maps(fn, args: Sequence[Any], values: list, names: Sequence[str]) -> None:
    """Replace each tensor-map parameter's entry of ``values`` by its :class:`TensorMap`, made from
    the bound pointer, extents and strides of its view (``args`` are the caller's values)."""
    try:
        groups = gl_params(fn)
    except ValueError as err:
        raise OpError(str(err)) from None
    for g in groups:
        ptr = values[g.pointer]
        for index, rows, inner, swizzle in g.tensor_maps:
            what = names[index]
            if not isinstance(ptr, Ptr) or ptr.memory.space != GLOBAL:
                raise OpError(f"{what} is a tensor map of the view '{g.name}', whose pointer {names[g.pointer]} "
                              "is not a global pointer")
            shape = tuple(_first(values[i]) for i in g.dims)
            strides = tuple(_first(values[i]) for i in g.strides)
            spec = TensorMapSpec(g.dtype, shape, strides, (rows, inner), swizzle)
            origin = _first(ptr.offsets)
            try:
                spec.check(ptr.memory.address + origin, what)
                box = BulkBox(rows, inner, element_bytes(g.dtype), swizzle)
            except ValueError as err:
                raise OpError(str(err)) from None
            _check_given(args[index], spec, args[g.pointer], what, names[g.pointer])
            values[index] = TensorMap(what, ptr.memory, origin, shape, strides, box)


def _check_given(given: Any, spec, view: Any, what: str, view_name: str) -> None:
    """A ``TensorMapArg`` the caller passed must describe the view it belongs to."""
    if given is None:
        return
    got = getattr(given, "spec", None)
    if got is None or not hasattr(given, "address"):
        raise OpError(f"{what} is a tensor map: pass the TensorMapArg tilec.runtime.gl_views.expand makes, or None "
                      f"(the interpreter makes it from {view_name}), got {type(given).__name__}")
    host = view.__array_interface__["data"][0]  # bound as the view's pointer: a numpy array
    if got != spec or given.address != host:
        raise OpError(f"{what} describes {got} at {given.address:#x}, but {view_name} is {spec} at "
                      f"{host:#x}: a tensor map must describe its own view")


# -- barriers of a block -------------------------------------------------------------------

NAMED_BARRIERS = 16
"""Named barriers a block has (``bar.sync 0 .. 15``)."""



@dataclass
class Mbarriers:
    """The ``mbarrier`` objects of one block, by shared address."""

    deferred: bool = True
    clustered: bool = False
    """The block is one of a thread-block cluster's (its barriers may receive other blocks' copies)."""
    barriers: dict[int, TransactionBarrier] = field(default_factory=dict)
    named: dict[int, NamedBarrier] = field(default_factory=dict)
    """The named barriers (``bar.sync id``), by id."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def named_barrier(self, index: int) -> NamedBarrier:
        if not 0 <= index < NAMED_BARRIERS:
            raise OpError(f"named barrier {index} is not one of the block's {NAMED_BARRIERS} (0 .. {NAMED_BARRIERS - 1})")
        with self._lock:
            return self.named.setdefault(index, NamedBarrier(f"named barrier {index}"))

    def init(self, ptr: Ptr, lane: int, arrivals: int) -> None:
        at = int(ptr.offsets[lane])
        name = f"the mbarrier at byte {at} of {ptr.memory.name}"
        with self._lock:
            self.barriers[ptr.memory.address + at] = TransactionBarrier(name, self.deferred, arrivals, self.clustered)

    def at(self, ptr: Ptr, lane: int, peer: int | None = None) -> TransactionBarrier:
        """The barrier at lane ``lane``'s address; ``peer``: these are the barriers of the block of that
        rank in the cluster, another block's (at the same address in every block)."""
        at = int(ptr.offsets[lane])
        with self._lock:
            barrier = self.barriers.get(ptr.memory.address + at)
        if barrier is None:
            if peer is not None:
                raise OpError(f"lane {lane}: no mbarrier at byte offset {at} of {ptr.memory.name} in block rank {peer} "
                              "of the cluster: frag.mbar_init has not made one there yet (a cluster barrier after "
                              "the init must come before another block uses it)")
            raise OpError(f"lane {lane}: no mbarrier at byte offset {at} of {ptr.memory.name}: "
                          "frag.mbar_init has not made one there")
        return barrier


# -- the ops ------------------------------------------------------------------------------


@register_impls
@dataclass
class BulkFunctions(InterpreterFunctions):
    """The bulk-copy and ``mbarrier`` ops for one warp; ``state`` is its :class:`~tilec.interp.lanes.LaneState`."""

    state: Any = field(default=None)

    @property
    def _mbarriers(self) -> Mbarriers:
        return self.state.shared.mbarriers

    def _barrier_lanes(self, ptr: Any, verb: str = "write") -> tuple[Ptr, np.ndarray]:
        """The barrier pointer and the active lanes, after their 8-byte objects are checked."""
        bar = expect_space(ptr, SHARED, "the barrier")
        lanes = self.state.mask
        if verb == "write":
            check_write(bar, MBARRIER_BYTES, lanes, align=MBARRIER_BYTES)
        else:
            read(bar, MBARRIER_BYTES, lanes, align=MBARRIER_BYTES)
        return bar, np.flatnonzero(lanes)

    def _progress(self) -> None:
        if self.state.barrier is not None:
            self.state.barrier.progress()

    @impl(frag.MbarInitOp)
    def run_mbar_init(self, interpreter: Interpreter, op: frag.MbarInitOp, args: PythonValues):
        bar, lanes = self._barrier_lanes(args[0])
        for lane in lanes:
            self._mbarriers.init(bar, int(lane), op.count.value.data)
        return ()

    @impl(frag.MbarInitFenceOp)
    def run_mbar_init_fence(self, interpreter, op, args):
        return ()

    @impl(frag.FenceProxyAsyncOp)
    def run_fence_proxy_async(self, interpreter, op, args):
        return ()  # one memory here: the proxies see the same bytes

    @impl(frag.MbarExpectTxOp)
    def run_mbar_expect_tx(self, interpreter, op: frag.MbarExpectTxOp, args):
        bar, lanes = self._barrier_lanes(args[0])
        for lane in lanes:
            self._mbarriers.at(bar, int(lane)).expect(op.bytes.value.data)
        self._progress()
        return ()

    def _ranks(self, ranks: Sequence[int], what: str) -> list[tuple[int, Any]]:
        """The blocks of the cluster of ``ranks``, each with its shared memory
        (:class:`~tilec.interp.lanes.SharedBuffers`)."""
        blocks = self.state.cluster_blocks
        if max(ranks) >= len(blocks):
            raise OpError(f"{what} block rank {max(ranks)}, but the cluster has {len(blocks)} block(s)")
        return [(r, blocks[r]) for r in ranks]

    def _barrier_of(self, rank: int, peer, bar: Ptr, lane: int) -> TransactionBarrier:
        """The barrier at ``bar`` in the block of rank ``rank`` (``peer`` its shared memory)."""
        if rank == self.state.rank:
            return self._mbarriers.at(bar, lane)
        return peer.mbarriers.at(bar, lane, rank)

    @impl(frag.TmaLoadOp)
    def run_tma_load(self, interpreter, op: frag.TmaLoadOp, args):
        """The box lands in this block, or with ``multicast`` in every block of the mask's ranks (at the
        same address in each, completing on the barrier at ``bar``'s address in each)."""
        dst, tmap, bar_ptr, *coords = args
        dst = expect_space(dst, SHARED, "the destination")
        _check_map(tmap, coords)
        bar, lanes = self._barrier_lanes(bar_ptr)
        if op.multicast is None:
            blocks = [(self.state.rank, self.state.shared)]
        else:
            mask = op.multicast.value.data
            ranks = [r for r in range(mask.bit_length()) if mask >> r & 1]
            blocks = self._ranks(ranks, f"multicast mask {mask:#x} names")
        for lane in (int(x) for x in lanes):
            data = tmap.read_box([int(np.asarray(c)[lane]) for c in coords])
            where = tmap.landing(dst, lane)
            # every block's buffer and barrier are found before anything is issued
            targets = [(dst.memory if peer is self.state.shared else self.state.shared.counterpart(dst.memory, peer),
                        self._barrier_of(r, peer, bar, lane)) for r, peer in blocks]
            for memory, barrier in targets:
                barrier.copy(data.size, lambda m=memory, w=where, d=data: _land(m, w, d))
        self._progress()
        return ()

    @impl(frag.TensorMapPrefetchOp)
    def run_tensormap_prefetch(self, interpreter, op: frag.TensorMapPrefetchOp, args):
        if not isinstance(args[0], TensorMap):
            raise OpError(f"the tensor map is not a tensor-map parameter of the kernel: {type(args[0]).__name__}")
        return ()

    @impl(frag.TmaStoreWarpOp)
    def run_tma_store_warp(self, interpreter, op: frag.TmaStoreWarpOp, args):
        """Lane 0's box, read from shared memory through the tensor map's swizzle, written at once
        (the interpreter keeps no bulk store in flight: the waits have nothing to wait for)."""
        self.state.require_all_lanes()
        src, tmap, *coords = args
        src = expect_space(src, SHARED, "the source")
        _check_map(tmap, coords)
        where = tmap.landing(src, 0)
        tmap.write_box([int(np.asarray(c).reshape(-1)[0]) for c in coords], src.memory.data[where])
        return ()

    @impl(frag.BulkCommitWarpOp)
    def run_bulk_commit_warp(self, interpreter, op, args):
        self.state.require_all_lanes()
        return ()

    @impl(frag.BulkWaitWarpOp)
    def run_bulk_wait_warp(self, interpreter, op, args):
        self.state.require_all_lanes()
        return ()

    @impl(frag.WarpSyncOp)
    def run_warp_sync(self, interpreter, op, args):
        self.state.require_all_lanes()
        return ()

    @impl(frag.MbarWaitOp)
    def run_mbar_wait(self, interpreter, op: frag.MbarWaitOp, args):
        bar, lanes = self._barrier_lanes(args[0], "read")
        parity = np.asarray(args[1])
        waits = {}
        for lane in (int(x) for x in lanes):
            waits.setdefault((int(bar.offsets[lane]), int(parity[lane])), lane)
        for (_, p), lane in waits.items():
            self._wait(self._mbarriers.at(bar, lane), p)
        return ()

    def _wait(self, barrier: TransactionBarrier, parity: int) -> None:
        """Spin as the GPU does: let the block's other warps run until the phase completes."""
        block = self.state.barrier
        while not barrier.try_wait(parity):
            if block is None or not block.yield_turn(self.state.warp):
                raise OpError(barrier.never_arrived(parity))
        self._progress()

    @impl(frag.NamedBarrierSyncOp)
    def run_named_barrier_sync(self, interpreter, op: frag.NamedBarrierSyncOp, args):
        block = self.state.barrier
        self._named(op, args[0]).sync(op.count.value.data, block.yield_turn if block else None, self.state.warp)
        self._progress()
        return ()

    @impl(frag.NamedBarrierArriveOp)
    def run_named_barrier_arrive(self, interpreter, op: frag.NamedBarrierArriveOp, args):
        self._named(op, args[0]).arrive(32, op.count.value.data)
        self._progress()
        return ()

    def _named(self, op, index) -> NamedBarrier:
        """The barrier a warp-collective named-barrier op names (the same id in every lane)."""
        self.state.require_all_lanes()
        ids = {int(x) for x in np.asarray(index).reshape(-1)}
        if len(ids) != 1:
            raise OpError(f"the lanes of warp {self.state.warp} name different barriers {sorted(ids)}: "
                          f"'{op.name}' needs one id per warp")
        return self._mbarriers.named_barrier(ids.pop())

    @impl(frag.MbarArriveWarpOp)
    def run_mbar_arrive_warp(self, interpreter, op: frag.MbarArriveWarpOp, args):
        """Lane 0 arrives once for the warp: on its block's barrier, or with ``cluster = C`` on the
        barrier at the same address in each block of ranks 0 .. C-1."""
        self.state.require_all_lanes()
        bar, _ = self._barrier_lanes(args[0])
        if op.cluster is None:
            barriers = [self._mbarriers.at(bar, 0)]
        else:
            blocks = self._ranks(range(op.cluster.value.data), "arrives on")
            barriers = [self._barrier_of(r, peer, bar, 0) for r, peer in blocks]
        for barrier in barriers:
            barrier.arrive()
        self._progress()
        return ()


__all__ = ["BulkFunctions", "Mbarriers", "TensorMap", "bind_tensor_maps", "swizzle_address", "tensor_map_indices"]
