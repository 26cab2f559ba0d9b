"""sm_90a warpgroup MMA (``wgmma``) on lane values, per the PTX ISA.

What ``tile-distribute`` emits for ``tile.wgmma``, one warp at a time:

- ``frag.wgmma_desc %base, high``: the i64 ``((address >> 4) & 0x3FFF) | high``
  where ``address`` is ``%base``'s shared byte address (the buffer's made-up
  shared-window address plus the offset, the same addresses the bulk copies
  swizzle on: :func:`tilec.layout.bulk.swizzle_address`). An address that is
  not a multiple of 16 or does not fit the 14-bit field is an error.
- ``frag.wgmma "f16"|"bf16"|"e4m3"|"e5m2" n N %da, %db [trans_a] [trans_b] (c...)``:
  ``D = A·B + C`` for the warpgroup (warps ``4g .. 4g+3`` of the block, all
  present, all 32 lanes). A is ``64 x k`` (``k`` = 16, or 32 for FP8;
  K-major, MN-major with ``trans_a``), B is ``N x k`` stored K-major
  (MN-major with ``trans_b``);
  their elements are read from shared memory at the addresses
  :func:`tilec.layout.gmma.operand_offsets` gives for the (warp-uniform)
  descriptors. Warp ``w`` (``q = w % 4``) computes rows ``16q .. 16q+15``:
  lane ``l``'s accumulator ``4j + i`` is row ``16q + l/4 (+8 for i >= 2)``,
  column ``8j + 2(l%4) (+1 for odd i)``. Products are exact in float64, the
  ``k`` of a row and column are added in order of k to C in float64 and the sum
  is rounded once to f32 (as ``frag.mma``); scale-d is 1.
- ``frag.wgmma_rs "f16"|"bf16" n N (a0, a1, a2, a3), %db [trans_b] (c...)``:
  the same with A from registers: lane ``l`` of warp ``w`` (``g = l/4``,
  ``t = l%4``) holds rows ``16q + g`` and ``16q + g + 8`` of A, as the A
  fragment of ``mma.sync`` m16n8k16: register ``r`` is row ``g (+8 for odd
  r)``, columns ``2t (+8 for r >= 2)`` (low half) and the next (high half).
- ``frag.wgmma_fence``, ``frag.wgmma_commit``, ``frag.wgmma_wait pending``:
  warpgroup-collective (all 32 lanes); the wait passes its operands through.

**Asynchrony** (:class:`WgmmaTracker`, per warp). A ``frag.wgmma`` reads
shared memory and computes at issue, but its results are *pending*: the
wgmmas issued since the last commit are the open group, ``frag.wgmma_commit``
closes it, and ``frag.wgmma_wait p`` completes the oldest committed groups
until at most ``p`` remain. Until then only ``frag.wgmma`` (as accumulators),
``frag.wgmma_wait`` and the ops that merely carry values (``scf.yield``,
``scf.for``/``scf.while`` operands, branches) may use them; any other op
doing so is an error. Values are followed by identity, so a loop-carried
accumulator stays pending through ``scf.for``. And a ``frag.wgmma`` whose
accumulator was written by an ordinary instruction (anything but
``frag.wgmma``/``frag.wgmma_wait``) after the warp's last
``frag.wgmma_fence``, or with no fence at all, is an error (PTX needs
``wgmma.fence`` between register writes and the wgmma reading them;
accumulators of one wgmma chained into the next need none); so is a
``frag.wgmma_rs`` whose A registers were. The hardware may read the shared
operands any time until the group completes: the tracker keeps the bytes each
wgmma read, and a wait that completes its group checks they are unchanged
(a write to them in between is an error).

Not modelled: that the four warps of a warpgroup give the same descriptors
(each warp computes its rows from its own).
"""

from __future__ import annotations

import weakref
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects import cf, scf
from xdsl.dialects.builtin import f32 as _F32
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from tilec.dialects import frag
from tilec.interp.dtypes import f8_values
from tilec.interp.errors import OpError, TileInterpreterError
from tilec.interp.lane_frag import expect_space
from tilec.interp.lane_memory import SHARED, Memory
from tilec.interp.lane_values import LANE_IDS, LANES, round_to, u32
from tilec.layout.gmma import FIELD_MASK, operand_offsets

M, K = 64, 16
"""A wgmma's A is ``M x K`` (K for f16/bf16; 32 bytes of any type); each warp of the warpgroup holds
``M / 4`` rows of D."""
WARP_ROWS = M // 4
K_BYTES = 32
ELEM_BYTES = {"f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1, "s8": 1}
_F8_NAMES = {"e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}

_MASK64 = (1 << 64) - 1


# -- descriptors and operands ----------------------------------------------------------


def descriptor(addresses: np.ndarray, high: int) -> np.ndarray:
    """``((address >> 4) & 0x3FFF) | high`` per lane, as signed i64 lane values."""
    high = ((high & _MASK64) ^ (1 << 63)) - (1 << 63)  # the i64 bits, signed
    return ((addresses >> 4) & FIELD_MASK) | np.int64(high)


def _locate(memories: list[Memory], addresses: np.ndarray, what: str, value: int,
            elem_bytes: int) -> tuple[Memory, np.ndarray]:
    """The shared buffer holding all of ``addresses`` (absolute shared byte addresses of elements of
    ``elem_bytes`` bytes) and their offsets in it."""
    lo, hi = int(addresses.min()), int(addresses.max()) + elem_bytes
    for mem in memories:
        if mem.address <= lo and hi <= mem.address + mem.size:
            return mem, addresses - mem.address
    known = ", ".join(f"{m.name} at {m.address:#x}..{m.address + m.size:#x}" for m in memories) or "none"
    raise OpError(f"{what} (descriptor {value & _MASK64:#x}) reads shared addresses {lo:#x}..{hi:#x}, which are "
                  f"not inside one shared buffer (buffers: {known})")


def _values(bits: np.ndarray, dtype: str) -> np.ndarray:
    """16-bit patterns (uint16) of f16/bf16, or 8-bit ones (uint8) of e4m3/e5m2, as float64 values."""
    if dtype == "f16":
        return bits.view(np.float16).astype(np.float64)
    if dtype == "s8":  # exact: integers below 2^53 add exactly in float64
        return bits.astype(np.uint8).view(np.int8).astype(np.float64)
    if dtype in _F8_NAMES:
        return f8_values(bits, _F8_NAMES[dtype])
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)  # bf16


def read_operand(memories: list[Memory], value: int, major: str, dtype: str, mn: int, what: str,
                 reads: list | None = None) -> np.ndarray:
    """The ``mn x k`` operand (``k``: 32 bytes of ``dtype``) a descriptor ``value`` describes, as float64
    values; ``reads`` (if given) gets ``(buffer, byte offsets, bytes)`` of what was read, for
    :meth:`WgmmaTracker.wait` to check."""
    eb = ELEM_BYTES[dtype]
    try:
        addresses = operand_offsets(value & _MASK64, major, eb, mn, K_BYTES // eb)
    except ValueError as err:
        raise OpError(f"{what}: {err}") from None
    mem, offsets = _locate(memories, addresses, what, value, eb)
    offsets = offsets[..., None] + np.arange(eb)  # each element's bytes, little-endian
    data = mem.data[offsets]
    if reads is not None:
        reads.append((mem, offsets, data.copy(), what))
    bits = data[..., 0] if eb == 1 else data.view(np.uint16)[..., 0]
    return _values(bits, dtype)


@lru_cache(maxsize=None)
def register_a_table() -> tuple[np.ndarray, np.ndarray]:
    """``rows[r, h, l], cols[r, h, l]``: half ``h`` of lane ``l``'s A register ``r`` in its warp's 16 rows of A
    (the m16n8k16 A fragment: row ``l/4 (+8 for odd r)``, column ``2(l%4) + h (+8 for r >= 2)``)."""
    r, h, lane = np.meshgrid(np.arange(4), np.arange(2), LANE_IDS, indexing="ij")
    rows = lane // 4 + 8 * (r % 2)
    cols = 2 * (lane % 4) + h + 8 * (r // 2)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def register_a(regs: tuple, dtype: str, quarter: int) -> np.ndarray:
    """The ``64 x 16`` A whose rows ``16 quarter ..`` are the warp's A registers (the other rows zero)."""
    bits = np.stack([u32(r) for r in regs])  # (4, 32)
    halves = np.stack([bits & np.uint32(0xFFFF), bits >> np.uint32(16)], axis=1).astype(np.uint16)  # (4, 2, 32)
    rows, cols = register_a_table()
    a = np.zeros((M, K))
    a[WARP_ROWS * quarter + rows, cols] = _values(halves, dtype)
    return a


@lru_cache(maxsize=None)
def accumulator_table(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``rows[v, l], cols[v, l]``: accumulator ``v`` of lane ``l`` in its warp's ``16 x n`` slice of D."""
    v = np.arange(n // 2)[:, None]
    j, i = v // 4, v % 4
    rows = LANE_IDS[None, :] // 4 + 8 * (i // 2)
    cols = 8 * j + 2 * (LANE_IDS[None, :] % 4) + i % 2
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def warp_mma(a: np.ndarray, b: np.ndarray, c: tuple, quarter: int, integer: bool = False) -> tuple[np.ndarray, ...]:
    """Warp ``quarter`` of the warpgroup: its accumulators of ``A[64, 16] · B[n, 16]^T + C``, each ``(32,)`` f32
    (``integer``: i32 sums of s8 products, wrapping)."""
    n = b.shape[0]
    rows, cols = accumulator_table(n)
    if integer:
        acc = np.zeros((WARP_ROWS, n), np.int64)
        acc[rows, cols] = np.stack([np.asarray(x).astype(np.int64) for x in c])
        a = a[WARP_ROWS * quarter : WARP_ROWS * (quarter + 1)].astype(np.int64)
        acc += a @ b.astype(np.int64).T
        acc = (acc + (1 << 31)) % (1 << 32) - (1 << 31)
        return tuple(acc[rows[v], cols[v]].astype(np.int32) for v in range(n // 2))
    acc = np.zeros((WARP_ROWS, n))
    acc[rows, cols] = np.stack([np.asarray(x, dtype=np.float64) for x in c])
    a = a[WARP_ROWS * quarter : WARP_ROWS * (quarter + 1)]
    for k in range(a.shape[1]):
        acc += a[:, k, None] * b[None, :, k]
    return tuple(round_to(acc[rows[v], cols[v]], _F32) for v in range(n // 2))


# -- asynchrony and fences -------------------------------------------------------------------

_CARRIERS = (frag.WgmmaOp, frag.WgmmaRsOp, frag.WgmmaWaitOp, scf.YieldOp, scf.ConditionOp, scf.ForOp, scf.WhileOp,
             cf.BranchOp, cf.ConditionalBranchOp)
"""Ops that may hold a pending wgmma result: they read nothing of it (or are the wgmma ops)."""

_ASYNC = -1
"""The 'epoch' of a value a wgmma wrote (no fence needed before the next wgmma reads it)."""


class WgmmaTracker(Interpreter.Listener):
    """One warp's wgmma groups, and which values ordinary instructions wrote since which fence.

    Runtime values are followed by identity (``id`` checked against a weak reference). ``epoch``
    counts the warp's ``frag.wgmma_fence``\\ s; a value written by an ordinary op records the epoch
    it was born in (values born before the first fence are not recorded: epoch 0).
    """

    def __init__(self):
        self.epoch = 0
        self.open: list[np.ndarray] = []
        self.committed: deque[list[np.ndarray]] = deque()
        self.open_reads: list = []
        self.committed_reads: deque[list] = deque()
        self.pending: dict[int, np.ndarray] = {}
        self._born: dict[int, tuple[weakref.ref, int, str]] = {}
        self._prune_at = 4096

    # the listener ----------------------------------------------------------------

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        if not self.pending or isinstance(op, _CARRIERS):
            return
        for i, x in enumerate(args):
            if isinstance(x, np.ndarray) and self.pending.get(id(x)) is x:
                raise TileInterpreterError(op, f"operand {i} is a result of a frag.wgmma {self._status(x)}; until a "
                                               "frag.wgmma_wait completes its group only frag.wgmma (as accumulator) "
                                               "and frag.wgmma_wait may use it")

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        if not self.epoch or op.regions or isinstance(op, (frag.WgmmaOp, frag.WgmmaRsOp, frag.WgmmaWaitOp)):
            return  # ops with regions yield values written elsewhere
        for r in results:
            if isinstance(r, np.ndarray):
                self._record(r, self.epoch, op.name)

    def _status(self, x: np.ndarray) -> str:
        if any(y is x for y in self.open):
            return "that no frag.wgmma_commit has put in a group yet"
        return f"whose group is still running ({len(self.committed)} committed group(s) outstanding)"

    # values ------------------------------------------------------------------------

    def _record(self, x: np.ndarray, epoch: int, writer: str) -> None:
        entry = self._born.get(id(x))
        if entry is not None and entry[0]() is x:
            return  # the same value passed on: nothing was written
        self._born[id(x)] = (weakref.ref(x), epoch, writer)
        if len(self._born) > self._prune_at:
            self._born = {k: e for k, e in self._born.items() if e[0]() is not None}
            self._prune_at = 2 * len(self._born) + 4096

    def _birth(self, x: Any) -> tuple[int, str]:
        """The epoch ``x`` was written in, and by which op (values from before the first fence: 0)."""
        entry = self._born.get(id(x))
        if entry is None or entry[0]() is not x:
            return 0, "ordinary instructions"
        return entry[1], f"'{entry[2]}'"

    # the ops -----------------------------------------------------------------------

    def fence(self) -> None:
        self.epoch += 1

    def check_fenced(self, registers: tuple, what: str = "accumulator") -> None:
        """Each of ``registers`` (the accumulators, or register A) written before the last fence, or by a wgmma."""
        for i, x in enumerate(registers):
            epoch, writer = self._birth(x)
            if epoch >= self.epoch:
                since = "after the last frag.wgmma_fence" if self.epoch else "and no frag.wgmma_fence has run"
                raise OpError(f"{what} {i} was written by {writer} {since}: a wgmma reads registers that "
                              "other instructions wrote only after a wgmma.fence")

    def issue(self, results: tuple[np.ndarray, ...], reads: list = ()) -> None:
        """A wgmma's results, pending until its group completes, and the shared bytes it read (which must
        not change before then: the hardware may read them any time until the wait)."""
        for x in results:
            self._record(x, _ASYNC, "frag.wgmma")
            self.pending[id(x)] = x
        self.open.extend(results)
        self.open_reads.extend(reads)

    def commit(self) -> None:
        self.committed.append(self.open)  # an empty group when nothing was issued, as on the GPU
        self.committed_reads.append(self.open_reads)
        self.open, self.open_reads = [], []

    def wait(self, pending: int) -> None:
        while len(self.committed) > pending:
            for x in self.committed.popleft():
                self.pending.pop(id(x), None)
            for mem, offsets, data, what in self.committed_reads.popleft():
                if not np.array_equal(mem.data[offsets], data):
                    raise OpError(f"the shared memory of a wgmma's {what} ({mem.name}) was written while the wgmma "
                                  "ran: its group completes only at this wait, and its operands must not change before")


# -- the ops -------------------------------------------------------------------------------------


@register_impls
@dataclass
class WgmmaFunctions(InterpreterFunctions):
    """The ``wgmma`` ops for one warp; ``state`` is its :class:`~tilec.interp.lanes.LaneState`,
    ``tracker`` the listener that must watch the warp's ops (:func:`~tilec.interp.lanes.make_lane_interpreter`)."""

    state: Any = field(default=None)
    tracker: WgmmaTracker = field(default_factory=WgmmaTracker)

    def _collective(self) -> None:
        """All 32 lanes, and the whole warpgroup of the warp in the block."""
        self.state.require_all_lanes()
        threads = int(np.prod(self.state.block_dims))
        group = self.state.warp // 4
        if threads < 4 * LANES * (group + 1):
            raise OpError(f"is warpgroup-collective: warp {self.state.warp} belongs to warpgroup {group} (warps "
                          f"{4 * group} to {4 * group + 3}), but the block has only {threads} threads")

    @impl(frag.WgmmaDescOp)
    def run_wgmma_desc(self, interpreter: Interpreter, op: frag.WgmmaDescOp, args: PythonValues):
        base = expect_space(args[0], SHARED, "the base")
        addresses = base.memory.address + base.offsets
        lanes = self.state.mask
        bad = lanes & ((addresses % 16 != 0) | (addresses < 0) | (addresses >> 4 > FIELD_MASK))
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise OpError(f"lane {lane}: the base, byte offset {int(base.offsets[lane])} of {base.memory.name} "
                          f"(shared address {int(addresses[lane]):#x}), is not a multiple of 16 below 2^18, "
                          "as a descriptor's 14-bit start address needs")
        return (descriptor(addresses, op.high.value.data),)

    @impl(frag.WgmmaFenceOp)
    def run_wgmma_fence(self, interpreter, op, args):
        self._collective()
        self.tracker.fence()
        return ()

    @impl(frag.WgmmaOp)
    def run_wgmma(self, interpreter, op: frag.WgmmaOp, args):
        self._collective()
        n, dtype = op.n.value.data, op.dtype.data
        c = tuple(args[2:])
        self.tracker.check_fenced(c)
        desc_a = self.state.uniform(args[0], "the A descriptor")
        desc_b = self.state.uniform(args[1], "the B descriptor")
        memories = self.state.shared.memories()
        reads: list = []
        a = read_operand(memories, desc_a, "MN" if op.trans_a is not None else "K", dtype, M, "operand A", reads)
        b = read_operand(memories, desc_b, "MN" if op.trans_b is not None else "K", dtype, n, "operand B", reads)
        d = warp_mma(a, b, c, self.state.warp % 4, integer=dtype == "s8")
        self.tracker.issue(d, reads)
        return d

    @impl(frag.WgmmaRsOp)
    def run_wgmma_rs(self, interpreter, op: frag.WgmmaRsOp, args):
        self._collective()
        n, dtype = op.n.value.data, op.dtype.data
        na = len(op.a)
        a, c = tuple(args[:na]), tuple(args[na + 1:])
        self.tracker.check_fenced(a, "A register")
        self.tracker.check_fenced(c)
        desc_b = self.state.uniform(args[na], "the B descriptor")
        quarter = self.state.warp % 4
        reads: list = []
        b = read_operand(self.state.shared.memories(), desc_b, "MN" if op.trans_b is not None else "K", dtype, n,
                         "operand B", reads)
        d = warp_mma(register_a(a, dtype, quarter), b, c, quarter)
        self.tracker.issue(d, reads)
        return d

    @impl(frag.WgmmaCommitOp)
    def run_wgmma_commit(self, interpreter, op, args):
        self._collective()
        self.tracker.commit()
        return ()

    @impl(frag.WgmmaWaitOp)
    def run_wgmma_wait(self, interpreter, op: frag.WgmmaWaitOp, args):
        self._collective()
        self.tracker.wait(op.pending.value.data)
        return tuple(args)


__all__ = ["WgmmaFunctions", "WgmmaTracker", "accumulator_table", "descriptor", "read_operand", "register_a",
           "register_a_table", "warp_mma"]
