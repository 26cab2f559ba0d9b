"""The shared autotuner: time a kernel family's candidate configurations once per problem, keep the winner.

A kernel family (``tilec.kernels.gemm`` for ``tilec.matmul``; softmax,
norms and attention later) hands :func:`tune` a :class:`Problem`: the key of
the problem (what a winner is valid for), its candidates (the heuristic's
choice first, so that it wins ties), a way to measure one (compile, check
and time it: :class:`GpuMeasure` does that on the GPU), and how to write a
config into the winners file and read it back. The tuner knows nothing of
what the configurations mean.

How a problem is tuned:

1. A key already tuned in this process (memory) or stored on disk is
   answered without timing anything.
2. Otherwise each candidate is measured (:func:`select`, with a progress bar
   on stderr: tqdm's if it is installed, else one line rewritten with
   ``\\r``); a candidate that cannot be used raises :class:`SkipCandidate`
   and is kept in the timings with its note. The fastest wins.
3. The winner is stored in memory and in ``<cache dir>/autotune/<family>.json``
   (the cache dir is ``$TILEC_CACHE_DIR``, default ``~/.cache/tilec``).

The file (``format`` 1) maps the key's text to a record: the key's fields,
the config, its time, the number of candidates and the tilec version::

    {"format": 1, "entries": {
      "NVIDIA H100 80GB HBM3|float16|float16|row/row|none|mma|512x512x512|any": {
        "gpu": "NVIDIA H100 80GB HBM3", "dtype": "float16", "out_dtype": "float16",
        "layouts": "row/row", "epilogue": "none", "math": "mma", "m": 512, "n": 512, "k": 512,
        "rows": "any",
        "config": {"block": [128, 128, 32], "warps": [4, 2], "stages": 4, "group": 8,
                   "tf32": false, "thread_tile": null},
        "seconds": 1.9e-05, "candidates": 9, "tilec": "0.1.0"}}}

A record is used only if it is well formed, matches its key and the family
reads its config back as valid for the problem; anything else is ignored,
and the problem is tuned again and its record rewritten. An unreadable file
counts as empty. Writes replace the file atomically (temporary file +
``os.replace``).
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from tilec.api import CompilationError
from tilec.codegen.ptxas import PtxasError, find_ptxas, kernel_resources
from tilec.runtime import CompileError, CudaError, LaunchConfigError, driver, get_device
from tilec.runtime.arrays import is_torch_tensor
from tilec.runtime.cache import atomic_write, default_directory, tool_versions

FORMAT = 1

C = TypeVar("C")


class SkipCandidate(Exception):
    """A candidate that cannot be used; the message is the note shown and kept in the timings."""


class AutotuneError(RuntimeError):
    """No candidate could be compiled, checked and timed."""


class Key(Protocol):
    """What a winner is valid for: ``text`` keys the record, ``fields()`` are stored in it and compared."""

    @property
    def text(self) -> str: ...

    def fields(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Timing(Generic[C]):
    """One candidate's outcome: its time in seconds, or None and why it was skipped."""

    config: C
    seconds: float | None
    note: str | None = None


@dataclass(frozen=True)
class TuneResult(Generic[C]):
    """What :func:`tune` chose and why."""

    config: C
    key: Any
    """The family's :class:`Key` of the problem."""
    source: str
    """``timed`` (now), ``memory`` (earlier in this process), ``disk`` (the file), ``trivial`` (nothing to tune)."""
    timings: tuple[Timing[C], ...] = ()
    path: Path | None = None


@dataclass(frozen=True)
class Problem(Generic[C]):
    """One problem of a kernel family, as the family hands it to :func:`tune`.

    ``candidates`` and ``measure`` are called only when the problem is timed
    (not when a winner is remembered): making a measure may run kernels.
    """

    family: str
    """Names the winners file, ``<cache dir>/autotune/<family>.json``."""
    key: Key
    candidates: Callable[[], Sequence[C]]
    """The configurations to time, the heuristic's first (ties go to the earlier one)."""
    measure: Callable[[], Callable[[C], float]]
    """Makes ``config -> seconds`` (raising :class:`SkipCandidate` for a config that cannot be used)."""
    to_json: Callable[[C], Any]
    from_json: Callable[[Any], C]
    """A stored config back; ValueError or TypeError when it is not valid for this problem."""
    title: str = "tilec.autotune"
    describe: Callable[[C], str] = str


# ---------------------------------------------------------------- the winners: file and memory


def winners_path(family: str) -> Path:
    """``<cache dir>/autotune/<family>.json`` (the cache dir follows ``$TILEC_CACHE_DIR`` at each call)."""
    return default_directory() / "autotune" / f"{family}.json"


def read_winners(path: Path) -> dict[str, Any]:
    """The file's ``entries`` (``{}`` when it is missing, unreadable, or not this format)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def stored_winner(record: Any, problem: Problem[C]) -> C | None:
    """The config of ``record`` if it is usable for ``problem``, else None (then the problem is tuned again)."""
    if not isinstance(record, dict) or any(record.get(f) != v for f, v in problem.key.fields().items()):
        return None
    try:
        return problem.from_json(record.get("config"))
    except (TypeError, ValueError):
        return None


def store_winner(path: Path, key: Key, config_json: Any, seconds: float | None, count: int) -> None:
    """Write (or replace) the record of ``key``, keeping the others; atomic (temporary file + ``os.replace``)."""
    entries = read_winners(path)
    entries[key.text] = {**key.fields(), "config": config_json, "seconds": seconds, "candidates": count,
                         "tilec": tool_versions()["tilec"]}
    text = json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True) + "\n"
    atomic_write(Path(path), text.encode(), fsync=False)


_MEMORY: dict[tuple[str, str], Any] = {}
_MEMORY_LOCK = threading.Lock()


def forget() -> None:
    """Forget the winners remembered in this process (the files stay)."""
    with _MEMORY_LOCK:
        _MEMORY.clear()


# ---------------------------------------------------------------- tuning


def tune(problem: Problem[C], *, retune: bool = False, progress: bool = True,
         path: str | Path | None = None) -> TuneResult[C]:
    """The winner for ``problem``: remembered (memory, then the file) unless ``retune``, else timed and stored.

    ``path``: the winners file (default :func:`winners_path` of the family).
    Raises :class:`AutotuneError` when no candidate can be used.
    """
    path = Path(path) if path is not None else winners_path(problem.family)
    memory_key = (str(path), problem.key.text)
    if not retune:
        with _MEMORY_LOCK:
            known = _MEMORY.get(memory_key)
        if known is not None:
            return TuneResult(known, problem.key, "memory", (), path)
        stored = stored_winner(read_winners(path).get(problem.key.text), problem)
        if stored is not None:
            with _MEMORY_LOCK:
                _MEMORY[memory_key] = stored
            return TuneResult(stored, problem.key, "disk", (), path)
    configs = list(problem.candidates())
    winner, timings = select(configs, problem.measure(), progress=progress, title=problem.title,
                             describe=problem.describe)
    best = min(t.seconds for t in timings if t.seconds is not None)
    with _MEMORY_LOCK:
        _MEMORY[memory_key] = winner
    try:
        store_winner(path, problem.key, problem.to_json(winner), best, len(configs))
    except OSError as e:  # an unwritable cache must not lose the answer
        if progress:
            sys.stderr.write(f"{problem.title}: could not store the winner in {path}: {e}\n")
    return TuneResult(winner, problem.key, "timed", timings, path)


def _describe(config: Any) -> str:
    describe = getattr(config, "describe", None)
    return describe() if callable(describe) else str(config)


class _Progress:
    """A progress bar on stderr: tqdm's if it is installed, else one line rewritten with ``\\r``."""

    def __init__(self, total: int, title: str, enabled: bool):
        self.total, self.title, self.enabled, self.done = total, title, enabled, 0
        self._bar = None
        self._width = 0
        if enabled:
            try:
                from tqdm import tqdm  # optional: tqdm may not be installed
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=total, desc=title, file=sys.stderr, unit="config", leave=True)

    def _line(self, text: str, end: str = "") -> None:
        pad = max(0, self._width - len(text))
        sys.stderr.write("\r" + text + " " * pad + end)
        sys.stderr.flush()
        self._width = 0 if end else len(text)

    def show(self, status: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(status)
        else:
            self._line(f"{self.title}: [{self.done}/{self.total}] {status}")

    def step(self, status: str) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(1)
        self.show(status)

    def close(self, summary: str) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(summary)
            self._bar.close()
        else:
            self._line(f"{self.title}: [{self.done}/{self.total}] {summary}", end="\n")


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


def select(configs: Sequence[C], measure: Callable[[C], float], *, progress: bool = True,
           title: str = "tilec.autotune", describe: Callable[[C], str] = _describe) -> tuple[C, tuple[Timing[C], ...]]:
    """Measure each config (``measure(config)`` → seconds, or :class:`SkipCandidate`); the fastest wins.

    Ties go to the earlier config. A time that is not a positive finite
    number skips the config with a note. Raises :class:`AutotuneError` when
    every config was skipped (with their notes).
    """
    bar = _Progress(len(configs), title, progress)
    timings: list[Timing[C]] = []
    best: Timing[C] | None = None
    for config in configs:
        bar.show(f"{describe(config)} ...")
        try:
            seconds = float(measure(config))
            if not (math.isfinite(seconds) and seconds > 0):
                raise SkipCandidate(f"the timer returned {seconds!r}")
            timing = Timing(config, seconds)
        except SkipCandidate as e:
            timing = Timing(config, None, str(e) or type(e).__name__)
        timings.append(timing)
        if timing.seconds is not None and (best is None or timing.seconds < best.seconds):
            best = timing
        now = _us(timing.seconds) if timing.seconds is not None else f"skipped: {timing.note}"
        bar.step(f"{describe(config)}: {now}" + (f"; best {_us(best.seconds)}" if best else ""))
    if best is None:
        bar.close("no candidate worked")
        notes = "; ".join(f"{describe(t.config)}: {t.note}" for t in timings)
        raise AutotuneError(f"{title}: no candidate could be used ({notes})")
    bar.close(f"best {describe(best.config)}: {_us(best.seconds)}")
    return best.config, tuple(timings)


# ---------------------------------------------------------------- measuring on the GPU


def float64(x: Any) -> Any:
    """``x`` in float64, in its own library (torch/cupy/numpy)."""
    return x.double() if is_torch_tensor(x) else x.astype("float64")


def copy(x: Any) -> Any:
    return x.clone() if is_torch_tensor(x) else x.copy()


def fill_nan(x: Any) -> None:
    if is_torch_tensor(x):
        x.fill_(float("nan"))
    else:
        x.fill(float("nan"))


def rel_error(got: Any, ref: Any) -> float:
    """``||got - ref|| / ||ref||`` in float64 (NaN when ``got`` has a NaN); arrays of one library."""
    d = float64(got) - float64(ref)
    r = float64(ref)
    num, den = float((d * d).sum()) ** 0.5, float((r * r).sum()) ** 0.5
    return num / den if den > 0 else num


def torch_event_timer(run: Callable[[], None], warmup: int, reps: int) -> float:
    """Median seconds of ``run`` by torch CUDA events on torch's current stream (held busy by
    ``torch.cuda._sleep`` before each repetition where torch has it)."""
    import torch  # optional: torch may not be installed (only torch inputs are timed with it)

    sleep = getattr(torch.cuda, "_sleep", None)
    hold = None if sleep is None else (lambda seconds: sleep(int(seconds * GPU_CYCLES_PER_SECOND)))
    return _event_median(run, warmup, reps, lambda: torch.cuda.Event(enable_timing=True),
                         lambda e: e.record(), torch.cuda.synchronize, lambda s, e: s.elapsed_time(e) / 1e3, hold)


def driver_event_timer(run: Callable[[], None], warmup: int, reps: int) -> float:
    """Median seconds of ``run`` by driver events on the default stream (for non-torch inputs)."""
    dev = get_device(0)
    dev.make_current()
    events: list[Any] = []

    def make():
        events.append(driver.call("cuEventCreate", 0))
        return events[-1]

    try:
        return _event_median(run, warmup, reps, make, lambda e: driver.call("cuEventRecord", e, 0),
                             lambda: driver.call("cuCtxSynchronize"),
                             lambda s, e: driver.call("cuEventElapsedTime", s, e) / 1e3)
    finally:
        for e in events:
            driver.call("cuEventDestroy", e)


GPU_CYCLES_PER_SECOND = 2e9
"""An upper bound of the GPU clock, to turn a hold time into ``torch.cuda._sleep`` cycles."""

HOLD_LIMIT_S = 5e-3


def _event_median(run, warmup, reps, make_event, record, synchronize, elapsed, hold=None) -> float:
    """Median per-launch seconds; each repetition times enough back-to-back launches to last ~0.2 ms,
    so that the host's time to launch one does not hide the kernel's.

    A kernel that takes about as long as the host needs to launch it (a 1024³ GEMM: ~13 µs) would
    still be timed at the host's pace: ``hold(seconds)``, when given, keeps the GPU busy that long
    before each repetition's first event, while the host queues the repetition's launches, so that
    the events time them back to back on the GPU.
    """
    for _ in range(max(warmup, 1)):
        run()
    start, end = make_event(), make_event()
    record(start)
    run()
    record(end)
    synchronize()
    once = max(elapsed(start, end), 1e-7)
    inner = max(1, min(100, math.ceil(2e-4 / once)))
    pairs = [(make_event(), make_event()) for _ in range(max(reps, 1))]
    for start, end in pairs:
        if hold is not None:
            hold(min(HOLD_LIMIT_S, 2 * inner * once))  # at least what queueing the launches took
        record(start)
        for _ in range(inner):
            run()
        record(end)
    synchronize()
    return statistics.median(elapsed(s, e) for s, e in pairs) / inner


Timer = Callable[[Callable[[], None], int, int], float]
"""``timer(run, warmup, reps) -> seconds``."""


class GpuMeasure(Generic[C]):
    """``config -> seconds`` on the GPU: compile, skip spills, check against a reference result, time.

    ``compile(config)`` gives the :class:`~tilec.api.CompiledKernel`;
    ``run(config, out)`` runs the family's call with ``config`` into ``out``
    (an array, overwritten); ``reference``: the result to compare with (e.g.
    the heuristic configuration's, checked by the family), within
    ``tolerance`` (relative, :func:`rel_error`).
    """

    def __init__(self, *, compile: Callable[[C], Any], run: Callable[[C, Any], Any], out: Any, reference: Any,
                 tolerance: float, timer: Timer, warmup: int, reps: int, smem_limit: int):
        self.compile, self.run, self.out, self.reference, self.tolerance = compile, run, out, reference, tolerance
        self.timer, self.warmup, self.reps, self.smem_limit = timer, warmup, reps, smem_limit

    def __call__(self, config: C) -> float:
        try:
            kernel = self.compile(config)
        except (CompilationError, CompileError, PtxasError) as e:
            raise SkipCandidate(f"does not compile: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        spills = ptxas_spills(kernel)
        if spills:
            raise SkipCandidate(spills)
        if kernel.launch_defaults.smem > self.smem_limit:
            raise SkipCandidate(f"needs {kernel.launch_defaults.smem} bytes of shared memory, "
                                f"the GPU gives {self.smem_limit}")
        fill_nan(self.out)
        try:
            self.run(config, self.out)
        except (CudaError, CompileError, LaunchConfigError) as e:
            raise SkipCandidate(f"does not launch: {str(e).splitlines()[0]}") from None
        err = rel_error(self.out, self.reference)
        if not err <= self.tolerance:
            raise SkipCandidate(f"wrong result: relative difference {err:.2e} from the heuristic configuration's")
        spills = local_memory(kernel)
        if spills:
            raise SkipCandidate(spills)
        return self.timer(lambda: self.run(config, self.out), self.warmup, self.reps)


def ptxas_spills(kernel: Any) -> str | None:
    """Spills as ptxas reports them for the kernel's arch (None when ptxas is not installed)."""
    ptxas = find_ptxas()
    if ptxas is None:
        return None
    used = kernel_resources(kernel.asm["ptx"], kernel.arch, ptxas=ptxas).get(kernel.name)
    if used is not None and (used.spill_stores or used.spill_loads or used.stack_frame):
        return (f"register spills ({used.registers} registers, {used.spill_stores} bytes spill stores, "
                f"{used.stack_frame} bytes stack)")
    return None


def local_memory(kernel: Any) -> str | None:
    """Spills as the loaded function reports them (local memory per thread), after ptxas could not say."""
    runtime = getattr(kernel, "_runtime", None)  # the loaded runtime Kernel, after its first launch
    if find_ptxas() is not None or runtime is None:
        return None
    local = runtime.attributes()["local_bytes"]
    return f"register spills ({local} bytes of local memory per thread)" if local else None


__all__ = [
    "FORMAT",
    "AutotuneError",
    "GpuMeasure",
    "Key",
    "Problem",
    "SkipCandidate",
    "Timing",
    "TuneResult",
    "copy",
    "driver_event_timer",
    "fill_nan",
    "float64",
    "forget",
    "local_memory",
    "ptxas_spills",
    "read_winners",
    "rel_error",
    "select",
    "store_winner",
    "stored_winner",
    "torch_event_timer",
    "tune",
    "winners_path",
]
