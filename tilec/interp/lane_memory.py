"""Byte-addressed memories of fragment-level kernels, and pointers into them.

- :class:`Memory`: a flat ``uint8`` array, either the bytes of the allocation
  of a caller's numpy array bound to a ``!llvm.ptr<1>`` argument (global
  memory, written in place; a view — a slice, a transpose — addresses its base
  array's memory from the view's first element on, as a strided GPU tensor
  would) or one shared-memory buffer of a block (``frag.shared``), filled with ``0xFF``
  bytes so that reading what nobody wrote gives NaN (f16, bf16, f32) or -1.
- :class:`Ptr`: a memory and one byte offset per lane. ``llvm.getelementptr``
  moves the offsets; they are checked only when memory is accessed: every
  access names its op's lane, address, size and the memory's extent when it
  falls outside, or is misaligned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilec.interp.errors import OpError
from tilec.interp.lane_values import LANES

GLOBAL, SHARED = 1, 3


@dataclass(eq=False)
class Memory:
    """``data``: the bytes (a view of the caller's array for global memory)."""

    name: str
    """How errors call it: ``global argument 0 (%a)``, ``shared "sa"``."""
    space: int
    data: np.ndarray
    writable: bool = True
    origin: int = 0
    """Where the argument starts in ``data`` (a view into a larger allocation starts inside it)."""
    address: int = 0
    """A made-up device address of ``data[0]`` (256-byte aligned), for ``llvm.ptrtoint``."""
    written: bool = field(default=False)
    """Whether anything stored to it (staged arguments are copied back only then)."""

    @property
    def size(self) -> int:
        return int(self.data.size)

    @classmethod
    def fresh_shared(cls, name: str, nbytes: int, address: int = 0) -> Memory:
        return cls(f'shared "{name}"', SHARED, np.full(nbytes, 0xFF, dtype=np.uint8), address=address)

    def extent(self) -> str:
        if self.origin == 0:
            return f"it has {self.size} bytes"
        return f"its allocation spans byte offsets {-self.origin} to {self.size - self.origin}"

    def __repr__(self) -> str:
        return f"Memory({self.name}, {self.size} bytes)"


@dataclass(eq=False)
class Ptr:
    """A pointer value of a warp: ``offsets[l]`` is lane ``l``'s byte offset into ``memory``."""

    memory: Memory
    offsets: np.ndarray

    @classmethod
    def base(cls, memory: Memory, offset: int = 0) -> Ptr:
        return cls(memory, np.full(LANES, offset, dtype=np.int64))

    def moved(self, delta: np.ndarray) -> Ptr:
        return Ptr(self.memory, self.offsets + np.asarray(delta, dtype=np.int64))

    def select(self, cond: np.ndarray, other: Ptr) -> Ptr:
        """``cond ? self : other`` per lane (both must point into the same memory)."""
        if not isinstance(other, Ptr):
            raise OpError(f"cannot merge a pointer with {type(other).__name__}")
        if other.memory is not self.memory:
            lanes = np.flatnonzero(cond)
            if lanes.size == 0:
                return other
            if lanes.size == LANES:
                return self
            raise OpError(
                f"lanes choose pointers into different memories ({self.memory.name} and {other.memory.name}); "
                "the lane interpreter keeps one memory per pointer value"
            )
        return Ptr(self.memory, np.where(cond, self.offsets, other.offsets))

    def __repr__(self) -> str:
        offs = self.offsets
        shown = str(int(offs[0])) if np.all(offs == offs[0]) else np.array2string(offs, max_line_width=200)
        return f"Ptr({self.memory.name} + {shown})"


def _check(ptr: Ptr, nbytes: np.ndarray | int, lanes: np.ndarray, align: int, verb: str) -> np.ndarray:
    """The active lanes' offsets, after bounds and alignment checks (an error names the first bad lane)."""
    offs = ptr.offsets
    mem = ptr.memory
    n = np.broadcast_to(np.asarray(nbytes, dtype=np.int64), offs.shape)
    bad = lanes & ((offs < 0) | (offs + n > mem.size))
    if bad.any():
        lane = int(np.flatnonzero(bad)[0])
        raise OpError(
            f"lane {lane}: {verb} of {int(n[lane])} bytes at byte offset {int(offs[lane]) - mem.origin} of "
            f"{mem.name} is out of bounds ({mem.extent()})"
        )
    if align > 1:
        bad = lanes & ((offs + mem.address) % align != 0)
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise OpError(
                f"lane {lane}: {verb} at byte offset {int(offs[lane]) - mem.origin} of {mem.name} "
                f"is not {align}-byte aligned"
            )
    return offs


def read(ptr: Ptr, nbytes: int, lanes: np.ndarray, align: int = 1, counts: np.ndarray | None = None) -> np.ndarray:
    """``nbytes`` bytes at each active lane's address: ``(32, nbytes)`` uint8, zero for inactive lanes.

    ``counts`` (per lane, ≤ ``nbytes``): read only that many bytes, zero the rest
    (only those bytes must lie inside the memory).
    """
    want = np.broadcast_to(
        np.asarray(nbytes if counts is None else np.where(lanes, counts, 0), dtype=np.int64), (LANES,)
    )
    active = lanes & (want > 0)
    offs = _check(ptr, want, active, align, "a read")
    cols = np.arange(nbytes, dtype=np.int64)
    valid = active[:, None] & (cols[None, :] < want[:, None])
    idx = np.where(valid, offs[:, None] + cols[None, :], 0)
    if ptr.memory.size == 0:
        return np.zeros(idx.shape, np.uint8)
    data = ptr.memory.data[idx]
    return np.where(valid, data, 0).astype(np.uint8)


def check_write(ptr: Ptr, nbytes: int, lanes: np.ndarray, align: int = 1) -> None:
    if not ptr.memory.writable and lanes.any():
        raise OpError(f"{ptr.memory.name} is read-only (its numpy array is not writeable)")
    _check(ptr, nbytes, lanes, align, "a write")


def write(ptr: Ptr, data: np.ndarray, lanes: np.ndarray, align: int = 1) -> None:
    """Store ``data`` (``(32, nbytes)`` uint8) at each active lane's address (later lanes win on overlap)."""
    nbytes = data.shape[1]
    check_write(ptr, nbytes, lanes, align)
    active = np.flatnonzero(lanes)
    if active.size == 0:
        return
    idx = ptr.offsets[active, None] + np.arange(nbytes, dtype=np.int64)[None, :]
    ptr.memory.data[idx] = data[active]
    ptr.memory.written = True
