"""Transaction barriers (sm_90 ``mbarrier``) for the interpreters: phases, arrivals, bytes.

One :class:`TransactionBarrier` models one barrier object as the bulk copies
use it: each phase expects one arrival (which announces the bytes the phase's
copies bring) and completes when that arrival and those bytes are in; a wait
names the phase by its parity and passes once that phase has completed.

Why a model and not a no-op: the interpreter lands a bulk copy in shared
memory only when a wait completes its phase (``deferred``), so a read before
the right wait sees stale data or NaN, a wait on the wrong barrier or parity
is an error instead of a hang, and a byte count that does not match what the
copies bring (a kernel that would wait forever on the GPU) is reported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from tilec.interp.errors import OpError


class TransactionBarrier:
    """One barrier: the number of completed phases, and the open phase's arrival and copies."""

    def __init__(self, name: str, deferred: bool = True):
        self.name = name
        self.deferred = deferred
        self.completed = 0
        self.expected: int | None = None  # bytes announced by this phase's arrival (None: no arrival yet)
        self.brought = 0
        self.landing: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def parity(self) -> int:
        """The parity of the open (not yet completed) phase."""
        return self.completed % 2

    def expect(self, nbytes: int) -> None:
        """The phase's one arrival, announcing ``nbytes`` of copies."""
        with self._lock:
            if self.expected is not None:
                raise OpError(f"{self.name}: a second arrival in phase {self.completed} (each phase expects one)")
            self.expected = nbytes

    def copy(self, nbytes: int, land: Callable[[], None]) -> None:
        """A bulk copy of ``nbytes`` that completes on this barrier; ``land`` writes it."""
        with self._lock:
            self.brought += nbytes
            if self.deferred:
                self.landing.append(land)
                return
        land()

    def never_arrived(self, parity: int) -> str:
        return (f"{self.name}: waits for phase {self.completed} (parity {parity}), which nothing has arrived at: "
                "on the GPU this wait never ends")

    def try_wait(self, parity: int) -> bool:
        """Whether the phase of parity ``parity`` has completed, completing the open phase if it can.

        False while the open phase has no arrival (the caller waits for another
        warp, or reports :meth:`never_arrived`); a byte count the copies do not
        match is an error at once.
        """
        if parity not in (0, 1):
            raise OpError(f"{self.name}: phase parity must be 0 or 1, got {parity}")
        with self._lock:
            if self.parity != parity:
                return True  # that phase completed earlier
            if self.expected is None:
                return False
            if self.brought != self.expected:
                raise OpError(
                    f"{self.name}: phase {self.completed} expects {self.expected} bytes, its bulk copies bring "
                    f"{self.brought}: on the GPU this wait never ends"
                )
            landing, self.landing = self.landing, []
            self.completed += 1
            self.expected, self.brought = None, 0
        for land in landing:
            land()
        return True


class BarrierArray:
    """The ``N`` barriers of one ``tile.mbar_init`` (or one ``frag.mbar_init`` address range)."""

    def __init__(self, count: int, deferred: bool = True, what: str = "barrier"):
        self.barriers = [TransactionBarrier(f"{what} {i}", deferred) for i in range(count)]

    def __getitem__(self, index: int) -> TransactionBarrier:
        if not 0 <= index < len(self.barriers):
            raise OpError(f"barrier index {index} is out of range: there are {len(self.barriers)}")
        return self.barriers[index]

    def __len__(self) -> int:
        return len(self.barriers)
