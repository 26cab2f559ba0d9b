"""Transaction barriers (sm_90 ``mbarrier``) for the interpreters: phases, arrivals, bytes.

One :class:`TransactionBarrier` models one barrier object. A transaction
("full") barrier expects one arrival per phase, which announces the bytes the
phase's bulk copies bring, and completes when that arrival and those bytes are
in; a per-warp ("empty") barrier expects ``arrivals`` plain arrivals (one per
warp) and no bytes. A wait names the phase by its parity and passes once that
phase has completed; as on the GPU, the phase before the first counts as
completed (a parity-1 wait on a fresh barrier passes).

Why a model and not a no-op: the interpreter lands a bulk copy in shared
memory only when a wait completes its phase (``deferred``), so a read before
the right wait sees stale data or NaN, a wait on the wrong barrier or parity
is an error instead of a hang, and a byte count that does not match what the
copies bring (a kernel that would wait forever on the GPU) is reported.

The barriers of a block in a thread-block cluster (``clustered``) also receive
the other blocks' multicast copies: a phase short of bytes waits for them (the
other blocks may not have run yet), and more bytes than announced before the
phase completes is a copy for a later phase that came early.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from tilec.interp.errors import OpError


class TransactionBarrier:
    """One barrier: the number of completed phases, and the open phase's arrival and copies."""

    def __init__(self, name: str, deferred: bool = True, arrivals: int = 1, clustered: bool = False):
        self.name = name
        self.deferred = deferred
        self.arrivals = arrivals  # per phase; 1 for a transaction barrier
        self.clustered = clustered
        """Other blocks of a thread-block cluster may copy into it: a phase short of bytes waits for them."""
        self.arrived = 0
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
            if self.expected is not None or self.arrivals != 1:
                raise OpError(f"{self.name}: an arrival with bytes in phase {self.completed}, which "
                              + ("already had one (each phase expects one)" if self.expected is not None
                                 else f"expects {self.arrivals} plain arrivals"))
            self.expected = nbytes
            self.arrived = 1

    def arrive(self, count: int = 1) -> None:
        """``count`` plain arrivals (no bytes); the phase completes with its last expected arrival."""
        with self._lock:
            if self.expected is not None or self.arrived + count > self.arrivals:
                raise OpError(f"{self.name}: {self.arrived + count} arrivals in phase {self.completed}, which "
                              f"expects {self.arrivals}" + (" (a transaction barrier's arrival brings bytes)"
                                                            if self.arrivals == 1 else ""))
            self.arrived += count
            if self.arrived == self.arrivals:
                self.completed += 1
                self.arrived = 0

    def copy(self, nbytes: int, land: Callable[[], None]) -> None:
        """A bulk copy of ``nbytes`` that completes on this barrier; ``land`` writes it."""
        with self._lock:
            self.brought += nbytes
            if self.deferred:
                self.landing.append(land)
                return
        land()

    def never_arrived(self, parity: int) -> str:
        if self.arrived == self.arrivals and self.expected is not None:  # short of bytes (clustered)
            return self._wrong_bytes()
        got = "nothing has arrived at" if not self.arrived else f"has {self.arrived} of its {self.arrivals} arrivals"
        return (f"{self.name}: waits for phase {self.completed} (parity {parity}), which {got}: "
                "on the GPU this wait never ends")

    def try_wait(self, parity: int) -> bool:
        """Whether the phase of parity ``parity`` has completed, completing the open phase if it can.

        False while the open phase lacks arrivals (the caller waits for another
        warp, or reports :meth:`never_arrived`); a byte count the copies do not
        match is an error at once, but for a clustered barrier short of bytes
        (another block's copy may still come: it waits).
        """
        if parity not in (0, 1):
            raise OpError(f"{self.name}: phase parity must be 0 or 1, got {parity}")
        with self._lock:
            if self.parity != parity:
                return True  # that phase completed earlier
            if self.arrived < self.arrivals:
                return False
            if self.clustered and self.expected is not None and self.brought < self.expected:
                return False
            if self.brought != self.expected:
                raise OpError(self._wrong_bytes())
            landing, self.landing = self.landing, []
            self.completed += 1
            self.expected, self.brought, self.arrived = None, 0, 0
        for land in landing:
            land()
        return True

    def _wrong_bytes(self) -> str:
        text = (f"{self.name}: phase {self.completed} expects {self.expected} bytes, its bulk copies bring "
                f"{self.brought}")
        if self.clustered and self.brought > self.expected:
            return (f"{text} before it completes: a wrong count, or another block's copy for a later phase came "
                    "early (it multicast into this block's stage before every block of the cluster had released "
                    "it: on the GPU it overwrites data still being read)")
        return f"{text}: on the GPU this wait never ends"


class NamedBarrier:
    """One of the block's named barriers (``bar.sync``/``bar.arrive``): a phase completes when
    ``count`` threads have arrived; the count is the first arrival's, and every later arrival must
    name the same (the PTX ISA leaves a mismatch undefined)."""

    def __init__(self, name: str):
        self.name = name
        self.count: int | None = None
        self.arrived = 0
        self.completed = 0
        self._lock = threading.Lock()

    def arrive(self, threads: int, count: int) -> int:
        """``threads`` arrive, for a phase of ``count`` threads; returns the phase they arrived in."""
        with self._lock:
            if self.count is None or (self.arrived == 0 and self.count != count):
                self.count = count
            if count != self.count:
                raise OpError(f"{self.name}: an arrival for {count} threads in a phase of {self.count}")
            phase = self.completed
            self.arrived += threads
            if self.arrived >= self.count:
                self.completed += 1
                self.arrived = 0
            return phase

    def passed(self, phase: int) -> bool:
        with self._lock:
            return self.completed > phase

    def sync(self, count: int, yield_turn, warp: int | None) -> None:
        """``bar.sync id, count`` by one warp: arrive, then let the block's other warps run
        (``yield_turn(warp)``, False when none can) until the phase completes."""
        phase = self.arrive(32, count)
        while not self.passed(phase):
            if yield_turn is None or not yield_turn(warp):
                raise OpError(self.never_completes(phase))

    def never_completes(self, phase: int) -> str:
        return (f"{self.name}: waits for phase {phase} of {self.count} threads, which has {self.arrived}: on the "
                "GPU this bar.sync never ends (do all groups take their turns equally often?)")


class BarrierArray:
    """The ``N`` barriers of one ``tile.mbar_init`` (or one ``frag.mbar_init`` address range).

    ``key`` says what made them (a ``tile.mbar_init`` and its run): the blocks of a
    cluster find each other's barriers of the same init by it."""

    def __init__(self, count: int, deferred: bool = True, what: str = "barrier", arrivals: int = 1, key=None,
                 clustered: bool = False):
        self.barriers = [TransactionBarrier(f"{what} {i}", deferred, arrivals, clustered) for i in range(count)]
        self.key = key

    def __getitem__(self, index: int) -> TransactionBarrier:
        if not 0 <= index < len(self.barriers):
            raise OpError(f"barrier index {index} is out of range: there are {len(self.barriers)}")
        return self.barriers[index]

    def __len__(self) -> int:
        return len(self.barriers)
