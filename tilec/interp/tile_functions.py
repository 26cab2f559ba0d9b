"""The semantics of every tile op, as xDSL ``InterpreterFunctions``.

Values while interpreting:

- ``!tile.gl``  → :class:`~tilec.interp.memory.GlobalView` over the caller's array;
- ``!tile.st``  → :class:`~tilec.interp.memory.SharedTile` (physical, layout-placed);
- ``!tile.rt``  → a 2-D numpy array, the logical tile (fragments are not modelled yet);
- ``!tile.rv``  → a 1-D numpy array;
- floats → numpy scalars of the element dtype, ``index``/integers → Python ints.

Each interpreter runs one *execution*: one block of a grid (block-level
programs) or one warp of one block (per-warp programs); :class:`ExecContext`
says which, and holds what the execution shares with the rest of its block
(shared memory, the barrier) and its thread-block cluster (the other blocks'
shared memory and barriers, for multicast copies and cluster-wide arrivals),
and what it owns (its pending async copies). The executions of a cluster's
blocks take turns under one :class:`WarpScheduler`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float32Type, IntegerType, ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    OpImplResult,
    PythonValues,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreter import _InterpreterFunctionImpls  # noqa: PLC2701 - the hook for error reporting
from xdsl.interpreters.builtin import BuiltinFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.dialects import scf
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation

from tilec.dialects.abi import producer_threads
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import SharedType, element_bits
from tilec.interp.dtypes import (FLOAT8_FORMATS, exp2_ftz, exp_ftz, numpy_dtype, round_bf16, round_tf32, stored_f8,
                                 to_element)
from tilec.interp.errors import BarrierError, OpError, TileInterpreterError, WarpAborted, describe_op, op_text
from tilec.interp.mbarriers import BarrierArray, NamedBarrier
from tilec.passes.uniformity import atomic_combiners, lane_varying, warp_varying
from tilec.interp.memory import GlobalView, SharedTile, copy_owner_mask, shared_offsets
from tilec.interp.numeric import NumpyArithFunctions, NumpyMathFunctions, NumpyIntegerFunctions

WARP_SIZE = 32

WARP_ORDERS = ("ascending", "descending")
"""The order in which the warps of a block take turns between barriers."""

ASYNC_MODES = ("deferred", "eager")
"""``deferred``: an async copy lands in shared memory at the ``tile.async_wait`` that
completes its group (a missing wait reads NaN/old data); ``eager``: at issue."""


# -- what a block shares ---------------------------------------------------------


class BlockShared:
    """The shared memory of one block: one tile per ``tile.alloc`` op, shared by all its warps.

    A ``tile.alloc`` executed again (in a loop, or by another warp) returns the
    same memory, as a static shared allocation would. New memory is NaN.
    ``limit`` (bytes, None = unchecked) is the kernel's ``smem``. The other
    blocks of a thread-block cluster reach it too: multicast copies land in its
    tiles (:meth:`counterpart`) and complete on its barriers (:meth:`peer_barriers`).
    """

    def __init__(self, limit: int | None = None, clustered: bool = False):
        self.limit = limit
        self.clustered = clustered
        """Part of a thread-block cluster of several blocks (its barriers may receive other blocks' copies)."""
        self.tiles: dict[Operation, SharedTile] = {}
        self.barriers: dict[tuple[Operation, int], BarrierArray] = {}
        self.named: dict[int, NamedBarrier] = {}
        self.multicasts: dict[tuple, tuple[int, dict[int, list]]] = {}
        """By (barrier, op): the open phase, and the windows each block (by rank) multicast into it."""
        self.bytes = 0
        self.bulk_reads: list[tuple[int, np.ndarray, np.ndarray]] = []
        """The bulk stores still reading shared memory: (warp, buffer, element offsets), oldest first
        (:meth:`TileFunctions.run_bulk_store`)."""
        self.atomic_old: dict[Operation, np.ndarray] = {}
        """A block-wide ``tile.atomic``'s old values, from warp 0 for the other warps (per-warp runs)."""
        self._lock = threading.Lock()

    def named_barrier(self, index: int) -> NamedBarrier:
        """The block's named barrier ``index`` (``tile.barrier threads N`` uses barrier 0)."""
        with self._lock:
            return self.named.setdefault(index, NamedBarrier(f"named barrier {index}"))

    def barriers_of(self, op: t.MbarInitOp, deferred: bool, warps: int, run: int = 0) -> BarrierArray:
        """The block's barriers of run ``run`` of one ``tile.mbar_init`` (made fresh at each run's first
        execution, in any warp: an init inside a loop starts its barriers again each time round);
        per-warp barriers expect ``warps`` arrivals per phase."""
        with self._lock:
            bars = self.barriers.get((op, run))
            if bars is None:
                kind = op.result.type
                bars = self.barriers[(op, run)] = BarrierArray(
                    kind.count.data, deferred, "empty barrier" if kind.per_warp else "barrier",
                    warps if kind.per_warp else 1, key=(op, run), clustered=self.clustered,
                )
            return bars

    def peer_barriers(self, bars: BarrierArray, rank: int) -> BarrierArray:
        """This block's barriers made by the same ``tile.mbar_init`` (and run) as ``bars``, another
        block's, for that block to arrive or copy on; ``rank`` is this block's rank, for errors."""
        with self._lock:
            found = self.barriers.get(bars.key)
        if found is None:
            op, run = bars.key
            again = f" (run {run + 1} of it)" if run else ""
            raise OpError(
                f"block rank {rank} of the cluster has not initialised its barriers of `{op_text(op)}`{again} yet: "
                "a tile.cluster_barrier after tile.mbar_init must come before any block uses another's barriers"
            )
        return found

    def counterpart(self, tile: SharedTile, other: BlockShared) -> SharedTile:
        """``tile`` (one of this block's ``tile.alloc`` tiles, or a stage of one) at the same place in
        ``other``'s shared memory: where a multicast copy lands in another block of the cluster."""
        with self._lock:
            tiles = list(self.tiles.items())
        for op, mine in tiles:
            start = _offset_in(tile.buffer, mine.buffer)
            if start is not None:
                theirs = other.get(op).buffer
                return SharedTile(tile.tile_type, theirs[start : start + tile.buffer.size], tile.offsets)
        raise OpError("the destination is not a tile.alloc of the block: another block has no copy of it")

    def note_multicast(self, op: Operation, barrier, rank: int, window: tuple[int, ...]) -> None:
        """Block ``rank`` multicasts ``window`` into the open phase of ``barrier`` (one of this block's):
        every block of the cluster must copy the same window there."""
        with self._lock:
            phase, record = self.multicasts.get((id(barrier), op), (None, {}))
            if phase != barrier.completed:  # only the open phase is kept
                record = {}
                self.multicasts[(id(barrier), op)] = (barrier.completed, record)
            mine = record.setdefault(rank, [])
            nth = len(mine)
            mine.append(window)
            other = next(((r, ws[nth]) for r, ws in record.items()
                          if r != rank and len(ws) > nth and ws[nth] != window), None)
        if other is not None:
            raise OpError(
                f"the blocks of the cluster multicast different windows into phase {barrier.completed} of "
                f"{barrier.name}: rank {rank} copies the window at {list(window)}, rank {other[0]} copied the one at "
                f"{list(other[1])}; every block of the cluster must issue the same copy"
            )

    def get(self, op: t.AllocOp) -> SharedTile:
        with self._lock:
            tile = self.tiles.get(op)
            if tile is None:
                tile_type = op.result.type
                tile = SharedTile.allocate(tile_type)
                size = tile.size_bytes
                if self.limit is not None and self.bytes + size > self.limit:
                    raise OpError(
                        f"shared memory out of range: this {size}-byte tile brings the block to "
                        f"{self.bytes + size} bytes, but the kernel's tile.launch declares smem = {self.limit}"
                    )
                self.bytes += size
                self.tiles[op] = tile
            return tile


def _offset_in(view: np.ndarray, buffer: np.ndarray) -> int | None:
    """Where the contiguous 1-D ``view`` starts in ``buffer`` (in elements), or None if it is not inside it."""
    if view.dtype != buffer.dtype or view.strides != buffer.strides:
        return None
    delta = view.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]
    start, size = delta // buffer.itemsize, view.size
    if delta % buffer.itemsize or start < 0 or start + size > buffer.size:
        return None
    return start


class WarpScheduler:
    """The warps of one block, or of every block of a thread-block cluster, each running in its own
    Python thread, taking turns.

    The warps are scheduled cooperatively, so a run is deterministic: one warp
    runs at a time, in ``order`` (ascending or descending ids; with clusters the
    ids are ``rank * warps + warp``, so ascending runs block rank 0's warps
    first), until it reaches a barrier or finishes, then the next one runs. A
    barrier is a group of warps: ``tile.barrier`` the warps of one block,
    ``tile.cluster_barrier`` every warp of the cluster. When the last warp of
    the group reaches the barrier, the first of them runs again (so a block runs
    as far as it can before the next block of its cluster runs). So a missing
    barrier shows up on every run (the first warp reads what the others have not
    written yet), not by chance. A warp
    spinning on an mbarrier (:meth:`yield_turn`) lets any other warp of the
    cluster run: a consumer in one block waits for another block's copy.

    Errors, raised in the waiting warps as :class:`BarrierError`: a warp that
    finishes while others of its barrier's group wait (divergence), warps of a
    group waiting at different barrier ops, or a warp that does not reach a
    barrier within ``timeout`` seconds. The warps of a block are what
    :class:`BlockBarrier` (its view) calls.
    """

    def __init__(self, warps: int, timeout: float, order: str = "ascending", blocks: Sequence[str] = ("",)):
        if order not in WARP_ORDERS:
            raise ValueError(f"warp order must be one of {WARP_ORDERS}, got {order!r}")
        self.warps = warps
        """Warps a block."""
        self.blocks = tuple(blocks)
        """How errors name each block of the cluster, by rank (one block: not named)."""
        self.timeout = timeout
        slots = range(len(self.blocks) * warps)
        self.order = list(slots) if order == "ascending" else list(reversed(slots))
        self._cond = threading.Condition()
        self._running: int | None = self.order[0] if self.order else None
        self._ready: set[int] = set(slots)
        self._waiting: dict[int, tuple[Operation, bool]] = {}  # slot -> (barrier op, cluster-wide)
        self._finished: set[int] = set()
        self._spinning: set[int] = set()  # warps waiting at a transaction barrier since the last progress
        self._error: OpError | None = None
        self._turn_since = time.monotonic()

    # naming ----------------------------------------------------------------------------

    def name(self, slot: int | None) -> str:
        """``warp 3``, or with clusters ``warp 3 of block (1, 0, 0)``."""
        if slot is None:
            return "no warp"
        rank, warp = divmod(slot, self.warps)
        return f"warp {warp}" if len(self.blocks) == 1 else f"warp {warp} of {self.blocks[rank]}"

    def _who(self, slots) -> str:
        """``warp(s) 0, 2`` (with clusters, ``of block ...`` for each block)."""
        by_block: dict[int, list[int]] = {}
        for s in sorted(slots):
            by_block.setdefault(s // self.warps, []).append(s % self.warps)
        if len(self.blocks) == 1:
            return f"warp(s) {_list(by_block[0])}"
        return " and ".join(f"warp(s) {_list(ws)} of {self.blocks[r]}" for r, ws in by_block.items())

    # the turn --------------------------------------------------------------------

    def _pass_turn(self, slot: int) -> None:
        """``slot`` stops running: give the turn to the next ready warp, or release the barriers."""
        self._turn_since = time.monotonic()
        pos = self.order.index(slot)
        for s in self.order[pos + 1 :] + self.order[: pos + 1]:
            if s in self._ready:
                self._running = s
                self._cond.notify_all()
                return
        self._running = None
        if self._waiting and self._error is None and self._release():
            self._running = next(s for s in self.order if s in self._ready)
        self._cond.notify_all()

    def _release(self) -> bool:
        """When no warp can run on: release every barrier whose whole group waits at it (none, as
        :meth:`wait` releases a group when it is whole), else report a group that never will be (some
        of its warps finished, or wait at another barrier). Whether any warp was released."""
        released: list[int] = []
        for rank in range(len(self.blocks)):
            members = set(range(rank * self.warps, (rank + 1) * self.warps))
            here = {s: self._waiting[s] for s in members if s in self._waiting}
            if members & self._ready or not any(not wide for _, wide in here.values()):
                continue  # warps of the block run on, or none waits at a tile.barrier
            if members & self._finished:
                return self._fail(BarrierError(
                    f"{self._who(here)} wait at tile.barrier, but {self._who(members & self._finished)} finished "
                    "without reaching it: the warps diverge on tile.barrier"
                ))
            if len({id(op) for op, _ in here.values()}) > 1:
                where = "; ".join(f"warp {s % self.warps} at {describe_op(op)}" for s, (op, _) in sorted(here.items()))
                block = "the block" if len(self.blocks) == 1 else self.blocks[rank]
                return self._fail(BarrierError(f"the warps of {block} reached different barriers: {where}"))
            released += here
        if not released and not self._ready:  # every warp waits at tile.cluster_barrier or finished
            if self._finished:
                return self._fail(BarrierError(
                    f"{self._who(self._waiting)} wait at tile.cluster_barrier, but {self._who(self._finished)} "
                    "finished without reaching it: the warps diverge on tile.cluster_barrier"
                ))
            if len({id(op) for op, _ in self._waiting.values()}) > 1:
                where = "; ".join(f"{self.name(s)} at {describe_op(op)}"
                                  for s, (op, _) in sorted(self._waiting.items()))
                return self._fail(BarrierError(f"the warps of the cluster reached different barriers: {where}"))
            released = list(self._waiting)
        for s in released:
            del self._waiting[s]
        self._ready.update(released)
        return bool(released)

    def _fail(self, error: OpError) -> bool:
        self._error = error
        self._cond.notify_all()
        return False

    def _await_turn(self, slot: int, what: str) -> None:
        # The deadline restarts whenever the turn moves: only a warp that keeps the
        # turn for ``timeout`` seconds without reaching a barrier is a deadlock.
        while self._running != slot and self._error is None:
            remaining = self._turn_since + self.timeout - time.monotonic()
            if remaining <= 0:
                self._error = BarrierError(
                    f"deadlock: {self.name(slot)} waited {self.timeout:g} s {what}; {self.name(self._running)} has "
                    "been running since without reaching a tile.barrier"
                )
                self._cond.notify_all()
                break
            self._cond.wait(remaining)
        self._raise_if_broken()

    def _raise_if_broken(self) -> None:
        err = self._error
        if err is not None:
            raise type(err)(str(err))  # a fresh exception per warp thread

    # what the warps call (through their block's BlockBarrier) ---------------------------

    def start(self, slot: int) -> None:
        with self._cond:
            self._await_turn(slot, "to start")

    def wait(self, slot: int, op: Operation, cluster: bool = False) -> None:
        """``tile.barrier`` (``tile.cluster_barrier`` with ``cluster``) in ``slot``. The last warp of
        the group to arrive releases it, and the group's first warp runs on: a block goes as far
        as it can before the other blocks of its cluster run."""
        with self._cond:
            self._raise_if_broken()
            self._ready.discard(slot)
            self._waiting[slot] = (op, cluster)
            self._spinning.clear()
            rank = slot // self.warps
            group = range(len(self.order)) if cluster else range(rank * self.warps, (rank + 1) * self.warps)
            if all(s in self._waiting and self._waiting[s][0] is op for s in group):
                for s in group:
                    del self._waiting[s]
                self._ready.update(group)
                self._turn_since = time.monotonic()
                self._running = next(s for s in self.order if s in group)
                self._cond.notify_all()
            else:
                self._pass_turn(slot)
            self._await_turn(slot, "at this barrier")

    def yield_turn(self, slot: int) -> bool:
        """``slot`` waits for another warp to make progress (a transaction barrier's phase that
        the issuing warp has not reached yet): it stays ready but lets the next ready warp run.
        False when no other warp could run (then the wait would never end)."""
        with self._cond:
            self._raise_if_broken()
            self._spinning.add(slot)
            # every warp that could run spins: nobody will arrive (unless a group of warps that
            # all wait at a barrier is released; else a group that never will be is the error)
            if self._ready <= self._spinning and not self._release():
                self._raise_if_broken()
                return False
            self._pass_turn(slot)
            self._await_turn(slot, "at a transaction barrier")
            return True

    def progress(self) -> None:
        """Something a spinning warp may wait for happened (an arrival, a copy, a completed phase)."""
        with self._cond:
            self._spinning.clear()

    def finish(self, slot: int) -> None:
        """``slot`` returned from the kernel."""
        with self._cond:
            self._ready.discard(slot)
            self._finished.add(slot)
            self._spinning.clear()
            self._pass_turn(slot)

    def check(self) -> None:
        """Raise if the run has failed (called before every op of a per-warp execution)."""
        if self._error is not None:
            with self._cond:
                self._raise_if_broken()

    def abort(self, slot: int) -> None:
        """``slot`` failed: release the others."""
        with self._cond:
            if self._error is None:
                failed = f"{self.name(slot)} of this block" if len(self.blocks) == 1 else self.name(slot)
                self._error = WarpAborted(f"stopped because {failed} failed")
            self._cond.notify_all()


class BlockBarrier:
    """What the warps of one block (of rank ``rank`` in its cluster) call: ``tile.barrier`` among
    themselves, ``tile.cluster_barrier`` among all the warps of the cluster, and the turns of the
    :class:`WarpScheduler` they run under, by their warp ids in the block. A block-level execution
    (``warp`` None) is its block's one warp."""

    def __init__(self, scheduler: WarpScheduler, rank: int = 0):
        self.scheduler = scheduler
        self.rank = rank

    def _slot(self, warp: int | None) -> int:
        return self.rank * self.scheduler.warps + (warp or 0)

    def start(self, warp: int | None) -> None:
        self.scheduler.start(self._slot(warp))

    def wait(self, warp: int | None, op: Operation) -> None:
        """``tile.barrier``: the warps of this block."""
        self.scheduler.wait(self._slot(warp), op)

    def cluster_wait(self, warp: int | None, op: Operation) -> None:
        """``tile.cluster_barrier``: every warp of the cluster."""
        self.scheduler.wait(self._slot(warp), op, cluster=True)

    def yield_turn(self, warp: int | None) -> bool:
        return self.scheduler.yield_turn(self._slot(warp))

    def progress(self) -> None:
        self.scheduler.progress()

    def finish(self, warp: int | None) -> None:
        self.scheduler.finish(self._slot(warp))

    def check(self) -> None:
        self.scheduler.check()

    def abort(self, warp: int | None) -> None:
        self.scheduler.abort(self._slot(warp))


class _StopWhenBlockFails(Interpreter.Listener):
    """Stops a per-warp execution at its next op once its block has failed (e.g. a deadlock elsewhere)."""

    def __init__(self, barrier: BlockBarrier):
        self.barrier = barrier

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self.barrier.check()


def _list(warps) -> str:
    return ", ".join(str(w) for w in sorted(warps))


# -- what one execution owns ------------------------------------------------------


class AsyncGroups:
    """Pending ``tile.async_copy`` writes of one execution (cp.async groups are per thread)."""

    def __init__(self, mode: str = "deferred"):
        if mode not in ASYNC_MODES:
            raise ValueError(f"async mode must be one of {ASYNC_MODES}, got {mode!r}")
        self.mode = mode
        self.open: list = []
        self.committed: list[list] = []

    def issue(self, complete) -> None:
        if self.mode == "eager":
            complete()
        else:
            self.open.append(complete)

    def commit(self) -> None:
        self.committed.append(self.open)
        self.open = []

    def wait(self, pending: int) -> None:
        """Complete every committed group but the newest ``pending`` (copies not yet committed stay in flight)."""
        while len(self.committed) > pending:
            for complete in self.committed.pop(0):
                complete()

    def drain(self) -> None:
        """At exit everything lands (nobody in the kernel can see it any more)."""
        self.commit()
        self.wait(0)


def block_rank(block_id: Sequence[int], cluster_dims: Sequence[int]) -> int:
    """The rank of a block in its thread-block cluster (``%cluster_ctarank``): x fastest."""
    (x, y, z), (cx, cy, cz) = block_id, cluster_dims
    return x % cx + (y % cy) * cx + (z % cz) * cx * cy



def _reads_tf32(op: t.MmaOp) -> bool:
    """Whether ``op``'s atom (its own, or the one tile-layout picks by the operands' type: tf32 for f32)
    reads its operands as tf32."""
    if op.atom is not None:
        return op.atom.data.a_type == "tf32"
    return isinstance(op.a.type.element_type, Float32Type)

@dataclass
class ExecContext:
    """Which execution an interpreter runs and what it shares with its block and cluster.

    ``warp`` is None for a block-level execution (the program uses no per-warp
    ids). ``threads`` is the block's thread count. ``cluster`` holds the shared
    state of every block of the execution's thread-block cluster, by rank
    (empty: a launch without clusters, the block is alone).
    """

    block_id: tuple[int, int, int] = (0, 0, 0)
    grid: tuple[int, int, int] = (1, 1, 1)
    block_dims: tuple[int, int, int] = (1, 1, 1)
    warp: int | None = None
    shared: BlockShared = field(default_factory=BlockShared)
    barrier: BlockBarrier | None = None
    async_groups: AsyncGroups = field(default_factory=AsyncGroups)
    launched: bool = False
    """Part of a kernel launch (errors then say which block and warp)."""
    runs: dict[Operation, int] = field(default_factory=dict)
    """How many times this execution ran each ``tile.mbar_init`` (its barriers are per run)."""
    cluster_dims: tuple[int, int, int] = (1, 1, 1)
    cluster: tuple[BlockShared, ...] = ()

    @property
    def rank(self) -> int:
        """The block's rank in its cluster (0 without clusters)."""
        return block_rank(self.block_id, self.cluster_dims)

    @property
    def cluster_blocks(self) -> tuple[BlockShared, ...]:
        """The shared state of every block of the cluster, by rank (just this block's without clusters)."""
        return self.cluster or (self.shared,)

    @property
    def threads(self) -> int:
        x, y, z = self.block_dims
        return x * y * z

    @property
    def warps(self) -> int:
        return -(-self.threads // WARP_SIZE)

    def describe(self) -> str | None:
        if not self.launched:
            return None
        text = f"block ({', '.join(map(str, self.block_id))})"
        return text if self.warp is None else f"{text}, warp {self.warp}"


# -- helpers ---------------------------------------------------------------------


def _indices(values) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def _read(source: Any, indices, dims: tuple[int, ...], other: float = 0.0) -> np.ndarray:
    if isinstance(source, GlobalView):
        return source.read(indices, dims, other)
    if isinstance(source, SharedTile):
        return source.read(indices or None, dims)
    raise OpError(f"expected a global view or a shared tile, got {type(source).__name__}")


def _copied(source: Any, indices, tile: SharedType, op: t.CopyOp | t.AsyncCopyOp, rest: PythonValues) -> np.ndarray:
    """What a copy reads: its window, or with ``offsets`` (the first of ``rest``, the operands after the
    destination's) each element at its offset in memory (0 past the view's span)."""
    if op.offsets is None:
        return _read(source, indices, tile.dims)
    offsets = _register(rest[0], tile.dims, "the copy's offsets")
    return np.asarray(source.gather([offsets], True, None, 0.0), dtype=numpy_dtype(tile.element_type))


def _masked(data: np.ndarray, op: t.CopyOp | t.AsyncCopyOp, args: PythonValues) -> np.ndarray:
    """A masked copy's data: zero where its mask (the op's last operand) is false. A ``prefix`` copy's
    rows must fall (true, then false): tile-distribute issues its runs on that promise."""
    if op.mask is None:
        return data
    keep = _register(args[-1], data.shape, "the copy's mask").astype(bool)
    if op.prefix is not None and keep.ndim == 2 and (keep[:, 1:] > keep[:, :-1]).any():
        row = int(np.nonzero((keep[:, 1:] > keep[:, :-1]).any(axis=1))[0][0])
        raise OpError(f"its mask is marked 'prefix' but row {row} rises ({keep[row].astype(int).tolist()}): "
                      "a run of it would be copied wrong")
    return np.where(keep, data, np.zeros((), data.dtype))


def _write(dest: Any, indices, values: np.ndarray, mask: np.ndarray | None = None) -> None:
    if isinstance(dest, GlobalView):
        dest.write(indices, values, mask)
    elif isinstance(dest, SharedTile):
        dest.write(values, mask, indices or None)
    else:
        raise OpError(f"expected a global view or a shared tile, got {type(dest).__name__}")


def _in_root(tile: SharedTile, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The allocation a shared tile's buffer is a view of (a stage's is a slice of its buffer's), and
    ``offsets`` (elements of the tile's buffer) as elements of that allocation."""
    root = tile.buffer
    while root.base is not None:
        root = root.base
    start = (tile.buffer.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // tile.buffer.itemsize
    return root, np.asarray(offsets).ravel() + start


def _scalar(value: Any, element_type: Attribute) -> Any:
    """A scalar as xDSL's interpreters hold one: a Python int for an integer type (what ``arith``'s
    implementations compute with), else a numpy float of the element type."""
    if isinstance(element_type, IntegerType):
        return int(value)
    return numpy_dtype(element_type).type(value)


def _register_dims(ty: Attribute) -> tuple[int, ...]:
    """The shape of a register tile's or vector's values."""
    return (ty.length.data,) if isinstance(ty, t.RegisterVectorType) else ty.dims


def _register(value: Any, shape: tuple[int, ...], what: str) -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.shape != shape:
        got = value.shape if isinstance(value, np.ndarray) else type(value).__name__
        raise OpError(f"{what} must be a {shape} register value, got {got}")
    return value


def _op_t(value: np.ndarray, transpose: bool) -> np.ndarray:
    return value.T if transpose else value


# -- the op implementations --------------------------------------------------------


@register_impls
@dataclass
class TileFunctions(InterpreterFunctions):
    """Implementations of the tile dialect's ops for one execution (``ctx``)."""

    ctx: ExecContext = field(default_factory=ExecContext)

    # structure ------------------------------------------------------------------

    @impl(t.BlockIdOp)
    def run_block_id(self, interpreter: Interpreter, op: t.BlockIdOp, args: PythonValues):
        return (self.ctx.block_id[op.axis.data],)

    @impl(t.GridDimOp)
    def run_grid_dim(self, interpreter: Interpreter, op: t.GridDimOp, args: PythonValues):
        return (self.ctx.grid[op.axis.data],)

    @impl(t.ClusterIdOp)
    def run_cluster_id(self, interpreter: Interpreter, op: t.ClusterIdOp, args: PythonValues):
        axis = op.axis.data
        return (self.ctx.block_id[axis] // self.ctx.cluster_dims[axis],)

    @impl(t.ClusterCountOp)
    def run_cluster_count(self, interpreter: Interpreter, op: t.ClusterCountOp, args: PythonValues):
        axis = op.axis.data
        return (self.ctx.grid[axis] // self.ctx.cluster_dims[axis],)

    @impl(t.BlockRankOp)
    def run_block_rank(self, interpreter: Interpreter, op: t.BlockRankOp, args: PythonValues):
        return (self.ctx.rank,)

    @impl(t.ThreadIdOp)
    def run_thread_id(self, interpreter: Interpreter, op: t.ThreadIdOp, args: PythonValues):
        # A per-warp execution stands for its warp's first lane.
        linear = (self.ctx.warp or 0) * WARP_SIZE
        bx, by, _ = self.ctx.block_dims
        coords = (linear % bx, (linear // bx) % by, linear // (bx * by))
        return (coords[op.axis.data],)

    @impl(t.WarpIdOp)
    def run_warp_id(self, interpreter: Interpreter, op: t.WarpIdOp, args: PythonValues):
        return (self.ctx.warp or 0,)

    @impl(t.LaneIdOp)
    def run_lane_id(self, interpreter: Interpreter, op: t.LaneIdOp, args: PythonValues):
        return (0,)

    @impl(t.BarrierOp)
    def run_barrier(self, interpreter: Interpreter, op: t.BarrierOp, args: PythonValues):
        if self.ctx.barrier is None or self.ctx.warp is None:
            return ()  # a block-level execution is the whole block
        if op.threads is None:
            self.ctx.barrier.wait(self.ctx.warp or 0, op)
            return ()
        # the block's first N threads only (a warp-specialised kernel's consumers): bar.sync 0, N
        self.ctx.shared.named_barrier(0).sync(op.threads.value.data, self.ctx.barrier.yield_turn, self.ctx.warp)
        self._progress()
        return ()

    @impl(t.ClusterBarrierOp)
    def run_cluster_barrier(self, interpreter: Interpreter, op: t.ClusterBarrierOp, args: PythonValues):
        """Every warp of every block of the cluster (a block-level execution stands for its block's)."""
        if self.ctx.barrier is not None:
            self.ctx.barrier.cluster_wait(self.ctx.warp, op)
        return ()

    @impl(t.SetMaxNRegOp)
    def run_setmaxnreg(self, interpreter: Interpreter, op: t.SetMaxNRegOp, args: PythonValues):
        return ()  # registers are not modelled

    @impl(t.TurnBeginOp)
    def run_turn_begin(self, interpreter: Interpreter, op: t.TurnBeginOp, args: PythonValues):
        return ()  # turns order the warp groups' work, never a value; the lane interpreter runs their barriers

    @impl(t.TurnEndOp)
    def run_turn_end(self, interpreter: Interpreter, op: t.TurnEndOp, args: PythonValues):
        return ()

    # whole problem ----------------------------------------------------------------

    @impl(t.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: t.MatmulOp, args: PythonValues):
        a, b, c, *inputs = args
        if op.batched:  # one matmul per leading index, on views of the trailing dimensions
            if not a.shape[0] == b.shape[0] == c.shape[0]:
                raise OpError(f"batch extents differ at run time: a {a.shape}, b {b.shape}, c {c.shape}")
            for i in range(c.shape[0]):
                self._matmul(interpreter, op, GlobalView(a.array[i], a.element_type),
                             GlobalView(b.array[i], b.element_type), GlobalView(c.array[i], c.element_type), inputs)
            return ()
        return self._matmul(interpreter, op, a, b, c, inputs)

    def _matmul(self, interpreter: Interpreter, op: t.MatmulOp, a, b, c, inputs):
        av = _op_t(a.array, op.transpose_a is not None)
        bv = _op_t(b.array, op.transpose_b is not None)
        (m, k), (k2, n) = av.shape, bv.shape
        if k != k2:
            raise OpError(f"K of a and b differ at run time: a is {a.shape}, b is {b.shape}")
        if c.shape != (m, n):
            raise OpError(f"c is {c.shape}, expected {(m, n)} from a {a.shape} and b {b.shape}")
        ra = a.read((0, 0), a.shape)  # element values (bf16 rounded), as stored
        rb = b.read((0, 0), b.shape)
        acc = _op_t(ra, op.transpose_a is not None).astype(np.float32) @ _op_t(rb, op.transpose_b is not None).astype(
            np.float32
        )
        extra = []
        for i, view in enumerate(inputs):
            data = view.read((0,) * len(view.shape), view.shape)
            if tuple(op.inputs[i].type.dims) == (1,):  # one number for every element
                data = data.reshape(1, 1)
            elif data.ndim == 1:
                if data.shape != (n,):
                    raise OpError(f"epilogue input {i} has {data.shape[0]} elements, expected N = {n}")
                data = data[None, :]
            elif data.shape != (m, n):
                raise OpError(f"epilogue input {i} is {data.shape}, expected the shape of c {(m, n)}")
            extra.append(data)
        # The epilogue runs once, on whole arrays (arith/math here work elementwise on numpy).
        (out,) = interpreter.run_ssacfg_region(op.epilogue, (acc, *extra), "epilogue")
        out = to_element(np.broadcast_to(out, (m, n)), op.c.type.element_type)
        c.write((0, 0), out)
        return ()

    @impl_terminator(t.YieldOp)
    def run_yield(self, interpreter: Interpreter, op: t.YieldOp, args: PythonValues):
        return ReturnedValues(args), ()

    # memory -------------------------------------------------------------------------

    @impl(t.AllocOp)
    def run_alloc(self, interpreter: Interpreter, op: t.AllocOp, args: PythonValues):
        return (self.ctx.shared.get(op),)

    @impl(t.ZerosOp)
    def run_zeros(self, interpreter: Interpreter, op: t.ZerosOp, args: PythonValues):
        rt = op.result.type
        return (np.zeros(_register_dims(rt), dtype=numpy_dtype(rt.element_type)),)

    @impl(t.FillOp)
    def run_fill(self, interpreter: Interpreter, op: t.FillOp, args: PythonValues):
        rt = op.result.type
        value = to_element(args[0], rt.element_type)
        return (np.full(_register_dims(rt), value, dtype=numpy_dtype(rt.element_type)),)

    @impl(t.LoadOp)
    def run_load(self, interpreter: Interpreter, op: t.LoadOp, args: PythonValues):
        source, *indices = args
        rt = op.result.type
        return (np.array(_read(source, _indices(indices), _register_dims(rt), op.fill),
                         dtype=numpy_dtype(rt.element_type)),)

    @impl(t.LoadScalarOp)
    def run_load_scalar(self, interpreter: Interpreter, op: t.LoadScalarOp, args: PythonValues):
        source, *indices = args
        if op.linear is not None:
            value = source.gather([np.array([int(indices[0])])], linear=True).reshape(())
            return (_scalar(value, op.result.type),)
        coords = tuple(int(i) for i in indices)
        inside = all(0 <= c < d for c, d in zip(coords, source.shape))
        value = source.read(coords, (1,) * len(coords)).reshape(()) if inside else 0
        return (_scalar(value, op.result.type),)

    @impl(t.DimOp)
    def run_dim(self, interpreter: Interpreter, op: t.DimOp, args: PythonValues):
        return (int(args[0].shape[op.dim.value.data]),)

    @impl(t.SubviewOp)
    def run_subview(self, interpreter: Interpreter, op: t.SubviewOp, args: PythonValues):
        """A numpy view of the trailing dimensions (writes land in the caller's array); extent 0 when
        a leading coordinate is outside its extent."""
        view, *indices = args
        coords = tuple(int(i) for i in indices)
        array = view.array
        if all(0 <= c < d for c, d in zip(coords, array.shape)):
            return (GlobalView(array[coords], view.element_type),)
        return (GlobalView(np.empty((0,) * (array.ndim - len(coords)), array.dtype), view.element_type),)

    @impl(t.MapOp)
    def run_map(self, interpreter: Interpreter, op: t.MapOp, args: PythonValues):
        """The body runs once on whole arrays (arith/math here work elementwise on numpy)."""
        (out,) = interpreter.run_ssacfg_region(op.body, tuple(args), "map")
        rt = op.result.type
        out = np.broadcast_to(out, _register_dims(rt))
        if rt.element_type.name in FLOAT8_FORMATS:  # the body's FP8 values as they are (its conversions rounded them)
            return (stored_f8(out, rt.element_type.name),)
        return (to_element(out, rt.element_type).astype(numpy_dtype(rt.element_type)),)

    @impl(t.StoreOp)
    def run_store(self, interpreter: Interpreter, op: t.StoreOp, args: PythonValues):
        value, dest, *rest = args
        indices = rest[:len(op.indices)]
        value = _register(value, _register_dims(op.value.type), "the stored value")
        mask = None if op.mask is None else _register(rest[-1], value.shape, "the store's mask").astype(bool)
        self._check_bulk_reads(dest, _indices(indices), value.shape)
        _write(dest, _indices(indices), value, mask)
        return ()

    @impl(t.GatherOp)
    def run_gather(self, interpreter: Interpreter, op: t.GatherOp, args: PythonValues):
        source, *rest = args
        dims = _register_dims(op.result.type)
        n = len(op.indices)
        indices = [_register(i, dims, "an index tile") for i in rest[:n]]
        mask = None if op.mask is None else _register(rest[n], dims, "the gather's mask").astype(bool)
        fill = op.fill if op.fill_tile is None else _register(rest[-1], dims, "the gather's fill")
        data = source.gather(indices, op.linear is not None, mask, fill)
        return (np.array(data, dtype=numpy_dtype(op.result.type.element_type)),)

    @impl(t.ScatterOp)
    def run_scatter(self, interpreter: Interpreter, op: t.ScatterOp, args: PythonValues):
        value, dest, *rest = args
        dims = _register_dims(op.value.type)
        value = _register(value, dims, "the scattered value")
        indices = [_register(i, dims, "an index tile") for i in rest[:len(op.indices)]]
        mask = None if op.mask is None else _register(rest[-1], dims, "the scatter's mask").astype(bool)
        dest.scatter(indices, value, mask, op.linear is not None)
        return ()

    @impl(t.AtomicOp)
    def run_atomic(self, interpreter: Interpreter, op: t.AtomicOp, args: PythonValues):
        """The window read, combined with the value and written back (inside the view only); with a
        result, the window as read (0 outside the view). A warp of a per-warp execution combines a value
        at a place that are the same in every warp only as warp 0: the block combines it once, as
        tile-distribute's code does (``atomic_combiners``), and the other warps take warp 0's old values
        between two barriers, as that code's exchange through shared memory does."""
        value, dest, *rest = args
        indices = rest[:len(op.indices)]
        cmp = rest[len(op.indices)] if op.cmp is not None else None
        dims = _register_dims(op.value.type)
        value = _register(value, dims, "the combined value")
        mask = None if op.mask is None else _register(rest[-1], dims, "the atomic's mask").astype(bool)
        fetch = op.old is not None and bool(op.old.uses)  # unused: no exchange on the GPU either
        by_warp0 = self.ctx.warp is not None and atomic_combiners(op, *self._varying_ids(op)) == "the block"
        if by_warp0 and self.ctx.warp != 0:
            if not fetch:
                return () if op.old is None else (np.zeros(dims, numpy_dtype(op.value.type.element_type)),)
            return (self._from_warp0(op, None),)
        idx = _indices(indices)
        old = _read(dest, idx, dims)
        _write(dest, idx, _atomic_result(op.kind.data, old, value,
                                         None if cmp is None else _register(cmp, dims, "the compared value"),
                                         op.value.type.element_type), mask)
        if mask is not None:
            old = np.where(mask, old, np.zeros_like(old))  # masked off: not read, 0 (as outside the view)
        if not fetch:
            return () if op.old is None else (old,)
        return (self._from_warp0(op, old) if by_warp0 else old,)

    @impl(t.ScatterAtomicOp)
    def run_scatter_atomic(self, interpreter: Interpreter, op: t.ScatterAtomicOp, args: PythonValues):
        """Each element combined at its coordinates (its offset in memory with ``linear``) in the order of
        the elements, so elements naming one place each combine; its old value is the place's value
        before its own combine (0 outside the view or masked off). A per-warp execution combines once a
        block as :meth:`run_atomic` does."""
        value, dest, *rest = args
        n = len(op.indices)
        dims = _register_dims(op.value.type)
        value = _register(value, dims, "the combined value")
        indices = [_register(i, dims, "an index tile") for i in rest[:n]]
        cmp = _register(rest[n], dims, "the compared value") if op.cmp is not None else None
        mask = None if op.mask is None else _register(rest[-1], dims, "the atomic's mask").astype(bool)
        fetch = op.old is not None and bool(op.old.uses)
        by_warp0 = self.ctx.warp is not None and atomic_combiners(op, *self._varying_ids(op)) == "the block"
        if by_warp0 and self.ctx.warp != 0:
            if not fetch:
                return () if op.old is None else (np.zeros(dims, numpy_dtype(op.value.type.element_type)),)
            return (self._from_warp0(op, None),)
        linear = op.linear is not None
        keep = dest.inside(indices, linear) if mask is None else dest.inside(indices, linear) & mask
        target = dest.span() if linear else dest.array
        if keep.any() and not target.flags.writeable:
            raise OpError("the global array is read-only")
        old = np.zeros(dims, dtype=target.dtype)
        for p in zip(*np.nonzero(keep)):
            place = tuple(int(i[p]) for i in indices)
            before = np.array([target[place]])
            old[p] = before[0]
            target[place] = _atomic_result(op.kind.data, before, value[p], None if cmp is None else cmp[p],
                                           op.value.type.element_type)[0]
        if not fetch:
            return () if op.old is None else (old,)
        return (self._from_warp0(op, old) if by_warp0 else old,)

    def _from_warp0(self, op: t.AtomicOp, old: np.ndarray | None) -> np.ndarray:
        """Warp 0's old values of ``op`` (``old`` when this is warp 0), handed over between two barriers."""
        stash = self.ctx.shared.atomic_old
        if old is not None:
            stash[op] = old
        if self.ctx.barrier is not None:
            self.ctx.barrier.wait(self.ctx.warp or 0, op)
        got = stash[op]
        if self.ctx.barrier is not None:
            self.ctx.barrier.wait(self.ctx.warp or 0, op)
        return got

    def _varying_ids(self, op: Operation) -> tuple[set, set]:
        """The values of ``op``'s function that may differ between lanes, and between warps (once a function)."""
        fn = op.parent_op()
        while fn is not None and not isinstance(fn, FuncOp):
            fn = fn.parent_op()
        cache = self.__dict__.setdefault("_varying", {})
        if id(fn) not in cache:
            cache[id(fn)] = (fn, (lane_varying(fn), warp_varying(fn)))
        return cache[id(fn)][1]

    def _check_bulk_reads(self, dest: Any, indices: tuple[int, ...], dims: tuple[int, ...]) -> None:
        """A write into shared memory that a bulk store (``tile.bulk_store``) may still be reading is
        a race on the GPU (the TMA unit reads at some time before the storing warp's
        ``tile.bulk_store_wait`` covers it), even though the interpreter read it at issue."""
        if not isinstance(dest, SharedTile) or not self.ctx.shared.bulk_reads:
            return
        root, written = _in_root(dest, dest._window(indices or None, dims if indices else None))
        for warp, buffer, offsets in self.ctx.shared.bulk_reads:
            if buffer is root and np.intersect1d(offsets, written).size:
                raise OpError(f"writes shared memory that a bulk store of warp {warp} may still be reading: "
                              "that warp's tile.bulk_store_wait (with fewer pending) must come first")

    def _owner_mask(self, op: t.CopyOp | t.AsyncCopyOp, tile_type: SharedType) -> np.ndarray | None:
        """In a per-warp execution a copy with thread/value layouts moves only this warp's elements."""
        if op.thr is None or self.ctx.warp is None:
            return None
        return copy_owner_mask(op.thr.data, op.val.data, tile_type.dims, self.ctx.warp, self.ctx.threads)

    @impl(t.CopyOp)
    def run_copy(self, interpreter: Interpreter, op: t.CopyOp, args: PythonValues):
        n_src, n_dst = len(op.source_indices), len(op.dest_indices)
        source, src_idx = args[0], _indices(args[1 : 1 + n_src])
        dest, dst_idx = args[1 + n_src], _indices(args[2 + n_src : 2 + n_src + n_dst])
        tile_type = op.source.type if isinstance(op.source.type, SharedType) else op.dest.type
        data = _masked(_copied(source, src_idx, tile_type, op, args[2 + n_src + n_dst:]), op, args)
        _write(dest, dst_idx, data, self._owner_mask(op, tile_type))
        return ()

    @impl(t.AsyncCopyOp)
    def run_async_copy(self, interpreter: Interpreter, op: t.AsyncCopyOp, args: PythonValues):
        source, *indices, dest = args[: 2 + len(op.indices)]
        tile_type = op.dest.type
        # the global read happens at issue
        data = _masked(_copied(source, _indices(indices), tile_type, op, args[2 + len(op.indices):]), op, args)
        mask = self._owner_mask(op, tile_type)
        self.ctx.async_groups.issue(lambda: dest.write(data, mask))
        return ()

    @impl(t.AsyncCommitOp)
    def run_async_commit(self, interpreter: Interpreter, op: t.AsyncCommitOp, args: PythonValues):
        self.ctx.async_groups.commit()
        return ()

    @impl(t.AsyncWaitOp)
    def run_async_wait(self, interpreter: Interpreter, op: t.AsyncWaitOp, args: PythonValues):
        self.ctx.async_groups.wait(op.pending.value.data)
        return ()

    # bulk copies and their barriers: the block's first thread issues, every thread waits

    def _issues(self, op: Operation) -> bool:
        """Whether this execution holds the thread that issues bulk copies: the block's first, or
        in a warp-specialised kernel the first of its producer warps (the consumers come first)."""
        producers = producer_threads(op)
        if not producers:
            return self.ctx.warp in (None, 0)
        return self.ctx.warp == self.ctx.warps - producers // 32

    @impl(t.MbarInitOp)
    def run_mbar_init(self, interpreter: Interpreter, op: t.MbarInitOp, args: PythonValues):
        consumers = self.ctx.warps - producer_threads(op) // 32  # the warps that release stages
        if op.result.type.cluster_wide:  # ... in every block of the cluster
            consumers *= len(self.ctx.cluster_blocks)
        run = self.ctx.runs[op] = self.ctx.runs.get(op, -1) + 1
        return (self.ctx.shared.barriers_of(op, self.ctx.async_groups.mode == "deferred", consumers, run),)

    def _in_cluster(self, bars: BarrierArray) -> list[BarrierArray]:
        """The barriers of the same ``tile.mbar_init`` as ``bars`` in every block of the cluster, by rank."""
        mine = self.ctx.rank
        return [bars if r == mine else peer.peer_barriers(bars, r) for r, peer in enumerate(self.ctx.cluster_blocks)]

    @impl(t.MbarArriveOp)
    def run_mbar_arrive(self, interpreter: Interpreter, op: t.MbarArriveOp, args: PythonValues):
        bars, index = args
        # A block-level execution stands for every warp of the block.
        count = 1 if self.ctx.warp is not None else self.ctx.warps
        for each in self._in_cluster(bars) if op.barriers.type.cluster_wide else [bars]:
            each[int(index)].arrive(count)
        self._progress()
        return ()

    @impl(t.MbarExpectOp)
    def run_mbar_expect(self, interpreter: Interpreter, op: t.MbarExpectOp, args: PythonValues):
        bars, index = args
        if self._issues(op):
            bars[int(index)].expect(op.bytes.value.data)
            self._progress()
        return ()

    @impl(t.BulkCopyOp)
    def run_bulk_copy(self, interpreter: Interpreter, op: t.BulkCopyOp, args: PythonValues):
        source, *indices, dest, bars, index = args
        if not self._issues(op):
            return ()
        tile_type = op.dest.type
        data = _read(source, _indices(indices), tile_type.dims)  # the global read happens at issue
        if op.multicast is not None and len(self.ctx.cluster_blocks) > 1:
            self._multicast(op, data, _indices(indices), dest, bars, int(index))
        else:
            nbytes = data.size * element_bits(tile_type.element_type) // 8
            bars[int(index)].copy(nbytes, lambda: dest.write(data))
        self._progress()
        return ()

    def _multicast(self, op: t.BulkCopyOp, data: np.ndarray, window: tuple[int, ...], dest: SharedTile,
                   bars: BarrierArray, index: int) -> None:
        """This block's share of the window's rows, to ``dest`` and barrier ``index`` in every block of
        the cluster (its rank ``r`` of ``c`` blocks: rows ``[r R/c, (r+1) R/c)``)."""
        blocks, mine = self.ctx.cluster_blocks, self.ctx.rank
        rows = data.shape[0] // len(blocks)
        part = data[mine * rows : (mine + 1) * rows]
        nbytes = part.size * element_bits(op.dest.type.element_type) // 8
        # every block's tile and barrier are found before anything is issued
        tiles = [dest if r == mine else self.ctx.shared.counterpart(dest, peer) for r, peer in enumerate(blocks)]
        barriers = [each[index] for each in self._in_cluster(bars)]
        for peer, tile, bar in zip(blocks, tiles, barriers):
            peer.note_multicast(op, bar, mine, window)
            bar.copy(nbytes, lambda tile=tile: tile.write(part, origin=(mine * rows, 0)))

    @impl(t.BulkStoreOp)
    def run_bulk_store(self, interpreter: Interpreter, op: t.BulkStoreOp, args: PythonValues):
        """The warp's shared tile to the global window (clipped at the view's edges), at issue; the
        tile stays marked as read until this warp's ``tile.bulk_store_wait`` covers the store, and a
        ``tile.store`` into it before then is an error (:meth:`_check_bulk_reads`)."""
        source, dest, *indices = args
        _write(dest, _indices(indices), _read(source, (), op.source.type.dims))
        if isinstance(source, SharedTile):  # read at issue here; on the GPU until a wait covers it
            self.ctx.shared.bulk_reads.append((self.ctx.warp or 0, *_in_root(source, source.offsets)))
        return ()

    @impl(t.BulkStoreWaitOp)
    def run_bulk_store_wait(self, interpreter: Interpreter, op: t.BulkStoreWaitOp, args: PythonValues):
        """This warp's bulk stores but its newest ``pending`` have read their shared tiles."""
        warp, reads = self.ctx.warp or 0, self.ctx.shared.bulk_reads
        mine = [i for i, r in enumerate(reads) if r[0] == warp]
        done = set(mine[: max(0, len(mine) - op.pending_count)])
        reads[:] = [r for i, r in enumerate(reads) if i not in done]
        return ()

    @impl(t.MbarWaitOp)
    def run_mbar_wait(self, interpreter: Interpreter, op: t.MbarWaitOp, args: PythonValues):
        bars, index, parity = args
        if op.issuer is not None and not self._issues(op):
            return ()
        barrier = bars[int(index)]
        while not barrier.try_wait(int(parity)):
            # The phase has no arrival yet: on the GPU this warp spins while the issuing warp
            # runs on; here the other warps take their turns. Nobody left to arrive: a hang.
            if self.ctx.barrier is None or not self.ctx.barrier.yield_turn(self.ctx.warp):
                raise OpError(barrier.never_arrived(int(parity)))
        self._progress()
        return ()

    def _progress(self) -> None:
        if self.ctx.barrier is not None:
            self.ctx.barrier.progress()

    @impl(t.StageOp)
    def run_stage(self, interpreter: Interpreter, op: t.StageOp, args: PythonValues):
        """A view of stage ``i`` of a multi-stage buffer: the buffer's memory from offset ``i * P``
        on, placed by the stage's own layout (as codegen addresses it). The stage must be what the
        buffer's layout says at stage coordinate ``i``, element for element."""
        buf, i = args[0], int(args[1])
        stages = op.buffer.type.dims[0]
        if not 0 <= i < stages:
            raise OpError(f"stage {i} is out of range: the buffer has {stages} stages")
        stage_type = op.result.type
        offsets = shared_offsets(stage_type.layout, stage_type.dims)
        start = int(buf.offsets[i].flat[0]) - int(offsets.flat[0])
        if start < 0 or not np.array_equal(buf.offsets[i], offsets + start):
            raise OpError(f"stage {i} of {op.buffer.type} is not {stage_type.layout} moved by a constant offset")
        return (SharedTile(stage_type, buf.buffer[start : start + int(offsets.max()) + 1], offsets),)

    # compute --------------------------------------------------------------------------

    @impl(t.MmaOp)
    def run_mma(self, interpreter: Interpreter, op: t.MmaOp, args: PythonValues):
        a, b, c = args
        a = _register(a, op.a.type.dims, "operand a")
        b = _register(b, op.b.type.dims, "operand b")
        c = _register(c, op.c.type.dims, "the accumulator")
        if op.a.type.element_type == IntegerType(8):  # exact int products, the i32 sums wrapping as the GPU's
            prod = _op_t(a, op.transpose_a is not None).astype(np.int64) @ _op_t(b, op.transpose_b is not None).astype(np.int64)
            return (((prod + c.astype(np.int64) + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32),)
        a32 = _op_t(a, op.transpose_a is not None).astype(np.float32)
        b32 = _op_t(b, op.transpose_b is not None).astype(np.float32)
        if _reads_tf32(op):  # the tensor cores read f32 operands as tf32, as the lane interpreter does
            a32, b32 = round_tf32(a32), round_tf32(b32)
        return ((a32.astype(np.float64) @ b32.astype(np.float64) + c).astype(np.float32),)

    @impl(t.WgmmaOp)
    def run_wgmma(self, interpreter: Interpreter, op: t.WgmmaOp, args: PythonValues):
        """This warp's 16 rows of A (of its warpgroup's 64-row band, or its own register tile) times B's band;
        in the block form (``groups``), the block's M rows of A."""
        if op.registers_a:
            a, b, col, c = args
        else:
            a, row, b, col, c = args
        col = int(col)
        k, n = op.a.type.dims[1], op.c.type.dims[1]
        if col % n:
            raise OpError(f"the band of b starts at {col}: it must be a multiple of N = {n}")
        if op.registers_a:
            a32 = _register(a, op.a.type.dims, "operand a").astype(np.float32)
        else:
            row = int(row)
            if row % t.WGMMA_ROWS:
                raise OpError(f"the band of a starts at row {row}: it must be a multiple of {t.WGMMA_ROWS}")
            if op.block_groups is not None:  # the block's product: every warp holds all of it at this level
                a32 = _read(a, (row, 0), (op.c.type.dims[0], k)).astype(np.float32)
            else:
                rows = row + t.WGMMA_WARP_ROWS * ((self.ctx.warp or 0) % 4)
                a32 = _read(a, (rows, 0), (t.WGMMA_WARP_ROWS, k)).astype(np.float32)
        if op.transpose_b is not None:
            b32 = _read(b, (col, 0), (n, k)).astype(np.float32).T
        else:
            b32 = _read(b, (0, col), (k, n)).astype(np.float32)
        c = _register(c, op.c.type.dims, "the accumulator")
        if op.a.type.element_type == IntegerType(8):  # exact integer products (i8 values are exact in f32), i32 sums wrapping
            total = a32.astype(np.int64) @ b32.astype(np.int64) + np.asarray(c).astype(np.int64)
            return (((total + (1 << 31)) % (1 << 32) - (1 << 31)).astype(np.int32),)
        return ((a32 @ b32 + c).astype(np.float32),)

    @impl(t.WgmmaWaitOp)
    def run_wgmma_wait(self, interpreter: Interpreter, op: t.WgmmaWaitOp, args: PythonValues):
        """An async tile.wgmma's result is computed when it is issued at this level; the wait hands it on."""
        return (args[0],)

    def _binary(self, op, args, fn):
        lhs, rhs = args
        if np.shape(lhs) != np.shape(rhs):
            raise OpError(f"operands have shapes {np.shape(lhs)} and {np.shape(rhs)}")
        return (to_element(fn(lhs, rhs), op.result.type.element_type),)

    def _transcendental(self, op, args, fn):
        """Computed in float64 and rounded once: deterministic across CPUs (numpy's f32 SIMD kernels are not)."""
        return (to_element(fn(args[0].astype(np.float64)), op.result.type.element_type),)

    @impl(t.AddOp)
    def run_add(self, interpreter, op, args):
        return self._binary(op, args, np.add)

    @impl(t.SubOp)
    def run_sub(self, interpreter, op, args):
        return self._binary(op, args, np.subtract)

    @impl(t.MulOp)
    def run_mul(self, interpreter, op, args):
        return self._binary(op, args, np.multiply)

    @impl(t.DivOp)
    def run_div(self, interpreter, op, args):
        return self._binary(op, args, np.divide)

    @impl(t.MaxOp)
    def run_max(self, interpreter, op, args):
        return self._binary(op, args, np.maximum)

    @impl(t.MinOp)
    def run_min(self, interpreter, op, args):
        return self._binary(op, args, np.minimum)

    @impl(t.ExpOp)
    def run_exp(self, interpreter, op, args):
        return self._transcendental(op, args, exp_ftz)  # as the GPU's ex2.approx.ftz: no subnormal results

    @impl(t.Exp2Op)
    def run_exp2(self, interpreter, op, args):
        return self._transcendental(op, args, exp2_ftz)

    @impl(t.ReluOp)
    def run_relu(self, interpreter, op, args):
        (x,) = args
        return (np.maximum(x, np.zeros((), dtype=x.dtype)),)  # NaN stays NaN

    @impl(t.ConvertOp)
    def run_convert(self, interpreter, op, args):
        return (to_element(args[0], op.result.type.element_type),)

    @impl(t.SliceOp)
    def run_slice(self, interpreter, op, args):
        """The window of the tile at the op's offsets (a copy: tiles are values)."""
        window = tuple(slice(o, o + d) for o, d in zip(op.offset_values, op.result.type.dims))
        return (np.array(args[0][window]),)

    @impl(t.TransposeOp)
    def run_transpose(self, interpreter, op, args):
        return (np.array(args[0].T),)

    @impl(t.ReshapeOp)
    def run_reshape(self, interpreter, op, args):
        """The elements in row-major order, in the result's shape (a vector's is its length)."""
        return (np.array(np.asarray(args[0]).reshape(_register_dims(op.result.type))),)

    @impl(t.JoinOp)
    def run_join(self, interpreter, op, args):
        """``b`` after ``a`` along the op's dim, or (``interleaved``) the two taking turns along it."""
        a, b = (np.asarray(x) for x in args)
        dim = op.dim_value
        if op.interleaved is None:
            return (np.concatenate([a, b], axis=dim),)
        return (np.stack([a, b], axis=dim + 1).reshape(_register_dims(op.result.type)),)

    @impl(t.SplitOp)
    def run_split(self, interpreter, op, args):
        """The halves along the op's dim: first and second, or (``interleaved``) the even and odd ones."""
        x = np.asarray(args[0])
        dim = op.dim_value
        if op.interleaved is None:
            return tuple(np.array(p) for p in np.split(x, 2, axis=dim))
        pick = (slice(None),) * dim
        return np.array(x[(*pick, slice(0, None, 2))]), np.array(x[(*pick, slice(1, None, 2))])

    @impl(t.TakeOp)
    def run_take(self, interpreter, op, args):
        """numpy's ``take_along_axis``; an index outside the source's extent along the axis reads 0."""
        src, idx = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
        axis = op.axis_value
        inside = (idx >= 0) & (idx < src.shape[axis])
        taken = np.take_along_axis(src, np.where(inside, idx, 0), axis=axis)
        return (np.where(inside, taken, np.zeros((), dtype=src.dtype)),)

    @impl(t.ExtractOp)
    def run_extract(self, interpreter, op, args):
        """The one element, as a scalar of the element type."""
        return (_scalar(np.asarray(args[0]).reshape(-1)[0], op.result.type),)

    @impl(t.ConvertLayoutOp)
    def run_convert_layout(self, interpreter, op, args):
        """Another fragment, the same values: at tile level nothing changes."""
        return (args[0],)

    def _reduce(self, op, args, fn, axis, combine):
        """The reduction along ``axis``, combined with the accumulator's values when one is given."""
        x, *acc = args
        # integers in int64, wrapped to the element type at the end as the GPU's i32 adds wrap
        work = np.int64 if x.dtype.kind in "iu" else np.float64 if x.dtype == np.float64 else np.float32
        out = fn(x.astype(work), axis=axis)
        if acc:
            out = combine(acc[0].astype(work), out)
        return (to_element(out, op.result.type.element_type),)

    @impl(t.ReduceOp)
    def run_reduce(self, interpreter, op: t.ReduceOp, args):
        """``tl.reduce``: the region folded along the reduced axis, one position after another."""
        x, *acc = args
        values = np.moveaxis(np.asarray(x), 1 if op.result.type.is_row else 0, 0)
        out = values[0]
        for i in range(1, values.shape[0]):
            (out,) = interpreter.run_ssacfg_region(op.combine, (out, values[i]), "reduce")
            out = to_element(np.broadcast_to(out, values[i].shape), op.result.type.element_type)
        if acc:
            (out,) = interpreter.run_ssacfg_region(op.combine, (acc[0], out), "reduce")
        return (to_element(np.broadcast_to(out, values[0].shape), op.result.type.element_type),)

    @impl(t.RowSumOp)
    def run_row_sum(self, interpreter, op, args):
        return self._reduce(op, args, np.sum, 1, np.add)

    @impl(t.RowMaxOp)
    def run_row_max(self, interpreter, op, args):
        return self._reduce(op, args, np.max, 1, np.maximum)

    @impl(t.RowMinOp)
    def run_row_min(self, interpreter, op, args):
        return self._reduce(op, args, np.min, 1, np.minimum)

    @impl(t.ColSumOp)
    def run_col_sum(self, interpreter, op, args):
        return self._reduce(op, args, np.sum, 0, np.add)

    @impl(t.ColMaxOp)
    def run_col_max(self, interpreter, op, args):
        return self._reduce(op, args, np.max, 0, np.maximum)

    @impl(t.ColMinOp)
    def run_col_min(self, interpreter, op, args):
        return self._reduce(op, args, np.min, 0, np.minimum)

    @impl(t.ScanOp)
    def run_scan(self, interpreter, op: t.ScanOp, args):
        """The inclusive scan along the op's dim (reversed: from the far end), in the reductions' work types."""
        (x,) = args
        axis = op.dim.value.data
        if op.combine is not None:
            return (self._scan_combining(interpreter, op, x, axis),)
        work = np.int64 if x.dtype.kind in "iu" else np.float64 if x.dtype == np.float64 else np.float32
        fn = {"sum": np.cumsum, "prod": np.cumprod, "max": np.maximum.accumulate,
              "min": np.minimum.accumulate}[op.kind.data]
        values = x.astype(work)
        if op.reverse is not None:
            out = np.flip(fn(np.flip(values, axis), axis=axis), axis)
        else:
            out = fn(values, axis=axis)
        return (to_element(out, op.result.type.element_type),)

    def _scan_combining(self, interpreter, op: t.ScanOp, x, axis: int):
        """``tl.associative_scan``: the region run on whole slices, one position after another in scan
        order (from the far end when reversed), what came before first."""
        values = np.moveaxis(np.asarray(x), axis, 0)
        order = range(values.shape[0] - 1, -1, -1) if op.reverse is not None else range(values.shape[0])
        out = np.empty_like(values)
        acc = None
        for i in order:
            if acc is None:
                acc = values[i]
            else:
                (acc,) = interpreter.run_ssacfg_region(op.combine, (acc, values[i]), "scan")
                acc = to_element(np.broadcast_to(acc, values[i].shape), op.result.type.element_type)
            out[i] = acc
        return np.moveaxis(out, 0, axis)

    @impl(t.IotaOp)
    def run_iota(self, interpreter, op: t.IotaOp, args):
        (offset,) = args
        ty = op.result.type
        dims = _register_dims(ty)
        coords = np.indices(dims, dtype=np.int64)[op.dim.value.data] + int(offset)
        return (coords.astype(numpy_dtype(ty.element_type)),)

    @impl(t.BroadcastOp)
    def run_broadcast(self, interpreter, op: t.BroadcastOp, args):
        (v,) = args
        rows, cols = op.result.type.dims
        tile = np.broadcast_to(v[:, None], (rows, cols)) if op.input.type.is_row else np.broadcast_to(v[None, :], (rows, cols))
        return (np.array(tile, dtype=numpy_dtype(op.result.type.element_type)),)


def _atomic_result(kind: str, old: np.ndarray, value: np.ndarray, cmp: np.ndarray | None,
                   element: Attribute | None = None) -> np.ndarray:
    """What ``tile.atomic`` of ``kind`` leaves in elements holding ``old`` (f32 ``cas`` compares bits; a bf16
    sum, held in f32, rounded to bf16 as the GPU's ``add.noftz.bf16`` rounds it)."""
    if isinstance(element, BFloat16Type):
        return round_bf16(np.asarray(old, np.float32) + np.asarray(value, np.float32))
    if kind in ("max", "min") and old.dtype == np.float32:
        return _float_extreme(kind, old, np.asarray(value, np.float32))
    value = np.broadcast_to(value, old.shape).astype(old.dtype)
    if kind == "xchg":
        return value
    if kind in ("umax", "umin"):  # the bits read unsigned, kept in the array's (signed) type
        bits = np.dtype(f"u{old.dtype.itemsize}")
        pick = np.maximum if kind == "umax" else np.minimum
        return pick(old.view(bits), value.view(bits)).view(old.dtype)
    if kind == "cas":
        bits = np.uint32 if old.dtype.itemsize == 4 else np.uint64
        same = old.view(bits) == np.broadcast_to(cmp, old.shape).astype(old.dtype).view(bits)
        return np.where(same, value, old)
    combine = {"add": np.add, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
               "xor": np.bitwise_xor}[kind]
    with np.errstate(over="ignore"):
        return combine(old, value).astype(old.dtype)  # f32 in f32; i32 wraps


def _float_extreme(kind: str, old: np.ndarray, value: np.ndarray) -> np.ndarray:
    """An f32 atomic maximum (minimum) as the GPU runs it (tile_distribute/atomics.py): integer reductions
    of the bits, signed where the value's sign bit is clear, unsigned where it is set (what NaNs and
    -0.0 then give is the GPU's, not numpy's)."""
    o, v = old.view(np.int32), np.broadcast_to(value, old.shape).astype(np.float32).view(np.int32)
    signed = np.maximum(o, v) if kind == "max" else np.minimum(o, v)
    ou, vu = o.view(np.uint32), v.view(np.uint32)
    unsigned = (np.minimum(ou, vu) if kind == "max" else np.maximum(ou, vu)).view(np.int32)
    return np.where(v >= 0, signed, unsigned).view(np.float32)


# -- interpreters ---------------------------------------------------------------------


class _ReportingImpls(_InterpreterFunctionImpls):
    """Op dispatch whose errors name the op once (xDSL's default reprints the whole module per nesting level)."""

    def run(self, interpreter: Interpreter, op: Operation, args: tuple[Any, ...]) -> OpImplResult:
        entry = self._impl_dict.get(type(op))
        if entry is None:
            raise TileInterpreterError(op, f"the interpreter has no implementation of '{op.name}'")
        ft, fn = entry
        try:
            return fn(ft, interpreter, op, args)
        except TileInterpreterError:
            raise
        except (OpError, ArithmeticError, ValueError, TypeError, IndexError, KeyError, AssertionError) as err:
            detail = str(err) if isinstance(err, OpError) else f"{type(err).__name__}: {err}"
            raise TileInterpreterError(op, detail) from err


@register_impls
class _CheckedScfFunctions(ScfFunctions):
    """xDSL's ``scf`` with the GPU's loop in mind: a step of 0 or less never ends there (the loop's
    exit test is ``i < ub``), so it is an error here, as in the lane interpreter, not an empty loop."""

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues):
        lb, ub, step, *carried = args
        if lb < ub and step <= 0:
            raise OpError(f"the step must be positive, got {step}")
        return super().run_for(interpreter, op, args).values  # the inherited entry is the registered wrapper


def make_interpreter(module: ModuleOp, ctx: ExecContext | None = None) -> Interpreter:
    """An xDSL interpreter for tile programs: builtin, func, scf, arith and math (numpy) and tile."""
    interpreter = Interpreter(module, _impls=_ReportingImpls())
    interpreter.register_implementations(BuiltinFunctions())
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(_CheckedScfFunctions())
    interpreter.register_implementations(NumpyArithFunctions())
    interpreter.register_implementations(NumpyMathFunctions())
    interpreter.register_implementations(NumpyIntegerFunctions())
    ctx = ctx if ctx is not None else ExecContext()
    interpreter.register_implementations(TileFunctions(ctx))
    if ctx.barrier is not None:
        interpreter.listeners = (_StopWhenBlockFails(ctx.barrier),)
    return interpreter


__all__ = [
    "ASYNC_MODES",
    "AsyncGroups",
    "BlockBarrier",
    "WarpScheduler",
    "block_rank",
    "WARP_ORDERS",
    "BlockShared",
    "ExecContext",
    "TileFunctions",
    "make_interpreter",
]
