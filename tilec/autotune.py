"""``tilec.autotune``: choose a matmul configuration by timing candidates on the GPU, once per problem.

::

    r = tilec.autotune(a, b, bias=bias, activation="relu")   # times the candidates, stores the winner
    r.config, r.source, r.timings                            # the winner, "timed"/"disk"/"memory", per candidate
    tilec.matmul(a, b, bias=bias, activation="relu", autotune=True)  # the same, then the product

The heuristic of :mod:`tilec.matmul_config` is right without tuning for the
common shapes; tuning is for the rest (odd aspect ratios, a given GPU).

How a problem is tuned:

1. **Checks** as :func:`tilec.matmul` does them (:func:`tilec.matmul.plan_matmul`).
2. **Key** (:class:`TuneKey`): the GPU's name, input and output dtypes, how A
   and B are given (``row``/``col``/``strided``, which fixes the kernel's
   transposes), the epilogue (bias dtype, activation), the math (``mma``,
   ``tf32``, ``simt``) and M, N, K. A key already tuned in this process
   (memory) or stored on disk is answered without timing anything.
3. **Candidates** (:func:`candidates`): a set per kind of math, without
   those whose shared memory the GPU cannot give a block or whose block is
   larger than the problem needs; the heuristic's choice always comes first
   (so it wins ties).
4. **Per candidate** (:class:`GpuMeasure`): compile (a candidate that does
   not compile, or whose registers spill, is skipped with a note); run once
   into an output poisoned with NaN and compare with the heuristic
   configuration's result (itself checked against float64 on a few rows);
   then time it: CUDA events (torch's for torch inputs, else the driver's),
   the median of ``reps`` repetitions after ``warmup`` launches.
5. **Store** the fastest in memory and in ``<cache dir>/autotune/matmul.json``
   (the cache dir is ``$TILEC_CACHE_DIR``, default ``~/.cache/tilec``).

The file (``format`` 1) maps ``TuneKey.text`` to a record::

    {"format": 1, "entries": {
      "NVIDIA H100 80GB HBM3|float16|float16|row/row|none|mma|512x512x512": {
        "gpu": "NVIDIA H100 80GB HBM3", "dtype": "float16", "out_dtype": "float16",
        "layouts": "row/row", "epilogue": "none", "math": "mma", "m": 512, "n": 512, "k": 512,
        "config": {"block": [128, 128, 32], "warps": [4, 2], "stages": 4, "group": 8,
                   "tf32": false, "thread_tile": null},
        "seconds": 1.9e-05, "candidates": 9, "tilec": "0.1.0"}}}

A record is used only if it is well formed, matches its key and describes
a configuration valid for the problem (right kind of math, shared memory
that fits); anything else is ignored, and the problem is tuned again and
its record rewritten. An unreadable file counts as empty. Writes replace
the file atomically (temporary file + ``os.replace``).

``measure=`` replaces steps 4's compile, check and timing by any function
``config -> seconds`` (raising :class:`SkipCandidate` to skip one): for
tests without a GPU, or to tune by another measure. ``timer=`` replaces
only the timing.

``tilec.autotune`` is this module, made callable: ``tilec.autotune(a, b)``
is :func:`autotune` and ``tilec.autotune.candidates`` etc. are the parts.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from tilec.callable_module import make_module_callable
from tilec.matmul_config import BULK_CONFIG, BULK_MEDIUM_CONFIG, MatmulConfig, has_bulk_copies, math_kind
from tilec.runtime import dtypes as _dtypes
from tilec.runtime.arrays import is_torch_tensor
from tilec.runtime.cache import atomic_write

FORMAT = 1
SMEM_LIMIT = 227 * 1024
"""Shared memory per block without a GPU to ask (an H100's opt-in maximum, 232448 bytes)."""

_C = MatmulConfig
MMA_CANDIDATES: tuple[MatmulConfig, ...] = (
    _C((128, 128, 32), (4, 2), 4),
    _C((128, 128, 32), (4, 2), 3),
    _C((128, 256, 32), (2, 4), 3),
    _C((128, 128, 64), (4, 2), 3),
    _C((64, 128, 32), (2, 2), 4),
    _C((128, 64, 32), (2, 2), 4),
    _C((64, 64, 32), (2, 2), 3),
    _C((64, 64, 32), (2, 2), 4),
    _C((64, 64, 64), (2, 2), 3),
)
"""f16/bf16 (mma.sync m16n8k16). No spills on sm_80 or sm_90 with the plain and the heaviest epilogue
(``ptxas -v``, 2026-11); rejected: 128x128x32 with 2x2 warps and 256x128x32 with 4x2 (spill on sm_90)."""

BULK_CANDIDATES: tuple[MatmulConfig, ...] = (
    BULK_CONFIG,
    _C((128, 128, 64), (2, 2), 3, bulk=True),
    _C((128, 256, 64), (2, 4), 3, bulk=True),
    _C((256, 128, 64), (4, 2), 3, bulk=True),
    BULK_MEDIUM_CONFIG,
    _C((128, 64, 64), (2, 2), 3, bulk=True),
    _C((64, 128, 64), (2, 2), 4, bulk=True),
)
"""f16/bf16 on sm_90 with aligned operands: K tiles by bulk tensor copies (TMA); the large tile with a
block barrier per K tile and with empty barriers, the 8-warp tiles (empty barriers), smaller ones for
grids that do not fill the SMs (``bench/NOTES.md``, session 6). No spills on sm_90."""

TF32_CANDIDATES: tuple[MatmulConfig, ...] = (
    _C((128, 128, 16), (4, 2), 3, tf32=True),
    _C((128, 128, 16), (4, 2), 4, tf32=True),
    _C((64, 128, 16), (2, 2), 3, tf32=True),
    _C((128, 64, 16), (2, 2), 3, tf32=True),
    _C((64, 64, 16), (2, 2), 3, tf32=True),
    _C((64, 64, 16), (2, 2), 4, tf32=True),
)
"""f32 with ``allow_tf32`` (mma.sync m16n8k8); rejected: 128x128x32 with 4x2 warps (spills ~190 bytes)."""

SIMT_CANDIDATES: tuple[MatmulConfig, ...] = (
    _C((128, 128, 8), None, 3, thread_tile=(8, 8)),
    _C((128, 128, 8), None, 4, thread_tile=(8, 8)),
    _C((128, 64, 8), None, 3, thread_tile=(8, 4)),
    _C((64, 128, 8), None, 3, thread_tile=(4, 8)),
    _C((64, 64, 8), None, 3, thread_tile=(4, 4)),
    _C((64, 64, 16), None, 3, thread_tile=(4, 4)),
)
"""f32 on FMAs; rejected: 128x128x16 with an 8x8 thread tile (tile-regalloc: ~376 registers)."""

_BY_KIND = {"mma": MMA_CANDIDATES, "tf32": TF32_CANDIDATES, "simt": SIMT_CANDIDATES}
_SHORT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}


class SkipCandidate(Exception):
    """A candidate that cannot be used; the message is the note shown and kept in the timings."""


class AutotuneError(RuntimeError):
    """No candidate could be compiled, checked and timed."""


# ---------------------------------------------------------------- candidates


def shared_memory_bytes(config: MatmulConfig, dtype: str) -> int:
    """The pipeline's shared memory per block: ``stages`` buffers of an A and a B tile."""
    bm, bn, bk = config.block
    return config.stages * (bm * bk + bk * bn) * (_dtypes.itemsize(dtype) or 4)


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, (max(x, 1) - 1).bit_length())


def candidates(dtype: Any, m: int, n: int, k: int, *, allow_tf32: bool = False,
               smem_limit: int | None = None, bulk: bool = False) -> list[MatmulConfig]:
    """The configurations worth timing for an ``M x N x K`` matmul of ``dtype`` inputs.

    The set of the math's kind (:data:`MMA_CANDIDATES`, :data:`TF32_CANDIDATES`,
    :data:`SIMT_CANDIDATES`) without those that need more shared memory than
    ``smem_limit`` (default: the GPU's opt-in maximum per block, else 227 KB)
    and those with a block dimension larger than the problem needs: BM beyond
    both M rounded up to a power of two and the smallest BM of the set (the
    same for BN with N and BK with K), so tiny problems time small tiles only.
    ``bulk`` (sm_90, aligned operands): f16/bf16 also time :data:`BULK_CANDIDATES`.
    """
    name = _dtypes.canonical(dtype)
    kind = math_kind(name, allow_tf32)
    pool = _BY_KIND[kind] + (BULK_CANDIDATES if bulk and kind == "mma" else ())
    limit = _smem_limit() if smem_limit is None else smem_limit
    floor = [min(c.block[i] for c in pool) for i in range(3)]
    need = [max(floor[i], _pow2_at_least(x)) for i, x in enumerate((m, n, k))]
    return [c for c in pool
            if shared_memory_bytes(c, name) <= limit and all(c.block[i] <= need[i] for i in range(3))]


def _smem_limit() -> int:
    from tilec.runtime import get_device, has_device

    return get_device(0).max_shared_per_block_optin if has_device() else SMEM_LIMIT


# ---------------------------------------------------------------- keys and the file


@dataclass(frozen=True)
class TuneKey:
    """What a tuned winner is valid for."""

    gpu: str
    dtype: str
    out_dtype: str
    layouts: str
    """``row/col`` etc.: how A and B are given, which fixes the kernel's transposes."""
    epilogue: str
    """``none``, ``relu``, ``bias_f16``, ``bias_f32_relu``, ..."""
    math: str
    m: int
    n: int
    k: int
    rows: str = "any"
    """The row alignments the kernel is specialised for (:attr:`tilec.matmul.MatmulSpec.rows`):
    configs need them (bulk copies and the warpgroup MMA 16-byte rows)."""

    @property
    def text(self) -> str:
        """The key of the record in the file."""
        return "|".join([self.gpu, self.dtype, self.out_dtype, self.layouts, self.epilogue, self.math,
                         f"{self.m}x{self.n}x{self.k}", self.rows])

    def fields(self) -> dict[str, Any]:
        return {"gpu": self.gpu, "dtype": self.dtype, "out_dtype": self.out_dtype, "layouts": self.layouts,
                "epilogue": self.epilogue, "math": self.math, "m": self.m, "n": self.n, "k": self.k,
                "rows": self.rows}


def tune_key(plan: Any, gpu: str, allow_tf32: bool) -> TuneKey:
    """The :class:`TuneKey` of a checked call (a :class:`tilec.matmul.MatmulPlan`) on the GPU named ``gpu``."""
    spec = plan.spec
    parts = [] if spec.bias_dtype is None else [f"bias_{_SHORT[spec.bias_dtype]}"]
    if spec.activation is not None:
        parts.append(spec.activation)
    return TuneKey(gpu, spec.dtype, spec.out_dtype, plan.layouts, "_".join(parts) or "none",
                   math_kind(spec.dtype, allow_tf32), plan.m, plan.n, plan.k, spec.rows)


def gpu_name() -> str:
    """The name of GPU 0 (``no-gpu`` without one, for tuning with ``measure=``)."""
    from tilec.runtime import get_device, has_device

    return get_device(0).name if has_device() else "no-gpu"


def winners_path() -> Path:
    """``<cache dir>/autotune/matmul.json`` (the cache dir follows ``$TILEC_CACHE_DIR`` at each call)."""
    from tilec.runtime.cache import default_directory

    return default_directory() / "autotune" / "matmul.json"


_CONFIG_FIELDS = ("block", "warps", "stages", "group", "tf32", "thread_tile")


def config_to_json(config: MatmulConfig) -> dict[str, Any]:
    return {"block": list(config.block), "warps": None if config.warps is None else list(config.warps),
            "stages": config.stages, "group": config.group, "tf32": config.tf32,
            "thread_tile": None if config.thread_tile is None else list(config.thread_tile)}


def _ints(value: Any, count: int) -> bool:
    return isinstance(value, list) and len(value) == count and all(type(v) is int for v in value)


def config_from_json(data: Any) -> MatmulConfig:
    """The :class:`MatmulConfig` of a stored record's ``config``; ValueError if it is not a valid one."""
    if not isinstance(data, dict) or set(data) != set(_CONFIG_FIELDS):
        raise ValueError(f"a config has the fields {', '.join(_CONFIG_FIELDS)}, got {data!r}")
    ok = (_ints(data["block"], 3) and (data["warps"] is None or _ints(data["warps"], 2))
          and type(data["stages"]) is int and type(data["group"]) is int and data["group"] >= 1
          and type(data["tf32"]) is bool and (data["thread_tile"] is None or _ints(data["thread_tile"], 2)))
    if not ok:
        raise ValueError(f"malformed config {data!r}")
    try:
        return MatmulConfig(block=tuple(data["block"]), warps=None if data["warps"] is None else tuple(data["warps"]),
                            stages=data["stages"], group=data["group"], tf32=data["tf32"],
                            thread_tile=None if data["thread_tile"] is None else tuple(data["thread_tile"]))
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from None


def config_kind(config: MatmulConfig) -> str:
    """``simt``, ``tf32`` or ``mma``: the math a config does (compare :attr:`TuneKey.math`)."""
    return "simt" if config.is_simt else "tf32" if config.tf32 else "mma"


def read_winners(path: Path) -> dict[str, Any]:
    """The file's ``entries`` (``{}`` when it is missing, unreadable, or not this format)."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return {}
    return data["entries"]


def valid_record(record: Any, key: TuneKey, allow_tf32: bool, smem_limit: int) -> MatmulConfig | None:
    """The stored winner of ``record`` if it is usable for ``key``, else None (then the problem is tuned again)."""
    from tilec.matmul import _check_config

    if not isinstance(record, dict) or any(record.get(f) != v for f, v in key.fields().items()):
        return None
    try:
        config = config_from_json(record.get("config"))
        _check_config(config, key.dtype, allow_tf32)
    except (TypeError, ValueError):
        return None
    if config_kind(config) != key.math:
        return None
    if shared_memory_bytes(config, key.dtype) > smem_limit:
        return None
    return config


def store_winner(path: Path, key: TuneKey, config: MatmulConfig, seconds: float | None, count: int) -> None:
    """Write (or replace) the record of ``key``, keeping the others; atomic (temporary file + ``os.replace``)."""
    import tilec

    entries = read_winners(path)
    entries[key.text] = {**key.fields(), "config": config_to_json(config), "seconds": seconds,
                         "candidates": count, "tilec": tilec.__version__}
    text = json.dumps({"format": FORMAT, "entries": entries}, indent=1, sort_keys=True) + "\n"
    atomic_write(Path(path), text.encode(), fsync=False)


_MEMORY: dict[tuple[str, str], MatmulConfig] = {}
_MEMORY_LOCK = threading.Lock()


def forget() -> None:
    """Forget the winners remembered in this process (the file stays)."""
    with _MEMORY_LOCK:
        _MEMORY.clear()


# ---------------------------------------------------------------- choosing


@dataclass(frozen=True)
class Timing:
    """One candidate's outcome: its time in seconds, or None and why it was skipped."""

    config: MatmulConfig
    seconds: float | None
    note: str | None = None


@dataclass(frozen=True)
class TuneResult:
    """What :func:`autotune` chose and why."""

    config: MatmulConfig
    key: TuneKey
    source: str
    """``timed`` (now), ``memory`` (earlier in this process), ``disk`` (the file), ``trivial`` (M or N is 0)."""
    timings: tuple[Timing, ...] = ()
    path: Path | None = None


class _Progress:
    """A progress bar on stderr: tqdm's if it is installed, else one line rewritten with ``\\r``."""

    def __init__(self, total: int, title: str, enabled: bool):
        self.total, self.title, self.enabled, self.done = total, title, enabled, 0
        self._bar = None
        self._width = 0
        if enabled:
            try:
                from tqdm import tqdm
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


def select(configs: Sequence[MatmulConfig], measure: Callable[[MatmulConfig], float], *, progress: bool = True,
           title: str = "tilec.autotune") -> tuple[MatmulConfig, tuple[Timing, ...]]:
    """Measure each config (``measure(config)`` → seconds, or :class:`SkipCandidate`); the fastest wins.

    Ties go to the earlier config. A time that is not a positive finite
    number skips the config with a note. Raises :class:`AutotuneError` when
    every config was skipped (with their notes).
    """
    bar = _Progress(len(configs), title, progress)
    timings: list[Timing] = []
    best: Timing | None = None
    for config in configs:
        bar.show(f"{config.describe()} ...")
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
        bar.step(f"{config.describe()}: {now}" + (f"; best {_us(best.seconds)}" if best else ""))
    if best is None:
        bar.close("no candidate worked")
        notes = "; ".join(f"{t.config.describe()}: {t.note}" for t in timings)
        raise AutotuneError(f"{title}: no candidate could be used ({notes})")
    bar.close(f"best {best.config.describe()}: {_us(best.seconds)}")
    return best.config, tuple(timings)


# ---------------------------------------------------------------- the GPU measure


def _float64(x: Any) -> Any:
    return x.double() if is_torch_tensor(x) else x.astype("float64")


def _copy(x: Any) -> Any:
    return x.clone() if is_torch_tensor(x) else x.copy()


def _fill_nan(x: Any) -> None:
    if is_torch_tensor(x):
        x.fill_(float("nan"))
    else:
        x.fill(float("nan"))


def _rel_error(got: Any, ref: Any) -> float:
    """``||got - ref|| / ||ref||`` in float64 (NaN when ``got`` has a NaN); arrays of one library."""
    d = _float64(got) - _float64(ref)
    r = _float64(ref)
    num, den = float((d * d).sum()) ** 0.5, float((r * r).sum()) ** 0.5
    return num / den if den > 0 else num


def reference_error(result: Any, a: Any, b: Any, *, trans_a: bool = False, trans_b: bool = False, bias: Any = None,
                    activation: str | None = None, rows: int = 8) -> float:
    """Relative error of ``result`` against float64 on its first and last ``rows`` rows (torch/cupy/numpy)."""
    opa = a.T if trans_a else a
    opb = _float64(b.T if trans_b else b)
    m = opa.shape[0]
    errors = []
    for lo, hi in sorted({(0, min(rows, m)), (max(0, m - rows), m)}):
        ref = _float64(opa[lo:hi]) @ opb
        if bias is not None:
            ref = ref + _float64(bias)
        if activation == "relu":
            ref = ref.clip(min=0)
        errors.append(_rel_error(result[lo:hi], ref))
    return math.nan if any(math.isnan(e) for e in errors) else max(errors)


_CHECK_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-3}
"""Between two configurations' results (only the order of the f32 sums differs), by output dtype."""
_REFERENCE_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "simt": 1e-5, "tf32": 5e-3, "mma": 1e-4}
"""Against float64: by output dtype for 16-bit outputs, else by the math (as tests/gpu/test_gemm.py)."""


def torch_event_timer(run: Callable[[], None], warmup: int, reps: int) -> float:
    """Median seconds of ``run`` by torch CUDA events on torch's current stream (held busy by
    ``torch.cuda._sleep`` before each repetition where torch has it)."""
    import torch

    sleep = getattr(torch.cuda, "_sleep", None)
    hold = None if sleep is None else (lambda seconds: sleep(int(seconds * GPU_CYCLES_PER_SECOND)))
    return _event_median(run, warmup, reps, lambda: torch.cuda.Event(enable_timing=True),
                         lambda e: e.record(), torch.cuda.synchronize, lambda s, e: s.elapsed_time(e) / 1e3, hold)


def driver_event_timer(run: Callable[[], None], warmup: int, reps: int) -> float:
    """Median seconds of ``run`` by driver events on the default stream (for non-torch inputs)."""
    from tilec.runtime import driver, get_device

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


class GpuMeasure:
    """``config -> seconds`` on the GPU: compile, skip spills, check against the heuristic's result, time.

    ``call(config, out)`` runs the user's matmul with ``config`` into ``out``.
    The reference is the heuristic configuration's result (run once, into a
    copy of ``out``), checked against float64 on a few rows first.
    """

    def __init__(self, plan: Any, call: Callable[[MatmulConfig, Any], Any], out: Any, *, allow_tf32: bool,
                 timer: Callable[[Callable[[], None], int, int], float], warmup: int, reps: int,
                 smem_limit: int, reference_args: dict[str, Any]):
        self.plan, self.call, self.out = plan, call, out
        self.timer, self.warmup, self.reps, self.smem_limit = timer, warmup, reps, smem_limit
        self.tolerance = _CHECK_TOLERANCE[plan.spec.out_dtype]
        self.reference = _copy(out)
        _fill_nan(self.reference)
        call(plan.config, self.reference)
        err = reference_error(self.reference, **reference_args)
        out_dtype = plan.spec.out_dtype
        tol = _REFERENCE_TOLERANCE[out_dtype if out_dtype != "float32" else math_kind(plan.spec.dtype, allow_tf32)]
        if not err <= tol:
            raise AutotuneError(f"tilec.autotune: the heuristic configuration ({plan.config.describe()}) gives a "
                                f"relative error of {err:.2e} against float64 (tolerance {tol:.0e}); not tuning")

    def __call__(self, config: MatmulConfig) -> float:
        from tilec.api import CompilationError
        from tilec.codegen.ptxas import PtxasError
        from tilec.matmul import compile_matmul
        from tilec.runtime import CompileError, CudaError, LaunchConfigError

        try:
            kernel = compile_matmul(self.plan.spec, config)
        except (CompilationError, CompileError, PtxasError) as e:
            raise SkipCandidate(f"does not compile: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
        spills = _ptxas_spills(kernel)
        if spills:
            raise SkipCandidate(spills)
        if kernel.launch_defaults.smem > self.smem_limit:
            raise SkipCandidate(f"needs {kernel.launch_defaults.smem} bytes of shared memory, "
                                f"the GPU gives {self.smem_limit}")
        _fill_nan(self.out)
        try:
            self.call(config, self.out)
        except (CudaError, CompileError, LaunchConfigError) as e:
            raise SkipCandidate(f"does not launch: {str(e).splitlines()[0]}") from None
        err = _rel_error(self.out, self.reference)
        if not err <= self.tolerance:
            raise SkipCandidate(f"wrong result: relative difference {err:.2e} from the heuristic configuration's")
        spills = _local_memory(kernel)
        if spills:
            raise SkipCandidate(spills)
        return self.timer(lambda: self.call(config, self.out), self.warmup, self.reps)


def _ptxas_spills(kernel: Any) -> str | None:
    """Spills as ptxas reports them for the kernel's arch (None when ptxas is not installed)."""
    from tilec.codegen.ptxas import find_ptxas, kernel_resources

    ptxas = find_ptxas()
    if ptxas is None:
        return None
    used = kernel_resources(kernel.asm["ptx"], kernel.arch, ptxas=ptxas).get(kernel.name)
    if used is not None and (used.spill_stores or used.spill_loads or used.stack_frame):
        return (f"register spills ({used.registers} registers, {used.spill_stores} bytes spill stores, "
                f"{used.stack_frame} bytes stack)")
    return None


def _local_memory(kernel: Any) -> str | None:
    """Spills as the loaded function reports them (local memory per thread), after ptxas could not say."""
    from tilec.codegen.ptxas import find_ptxas

    runtime = getattr(kernel, "_runtime", None)  # the loaded runtime Kernel, after its first launch
    if find_ptxas() is not None or runtime is None:
        return None
    local = runtime.attributes()["local_bytes"]
    return f"register spills ({local} bytes of local memory per thread)" if local else None


# ---------------------------------------------------------------- the entry point


def autotune(a: Any, b: Any, *, out: Any = None, bias: Any = None, activation: str | None = None,
             out_dtype: Any = None, trans_a: bool = False, trans_b: bool = False, allow_tf32: bool = False,
             candidates: Sequence[MatmulConfig] | None = None, reps: int = 20, warmup: int = 3,
             progress: bool = True, retune: bool = False,
             measure: Callable[[MatmulConfig], float] | None = None,
             timer: Callable[[Callable[[], None], int, int], float] | None = None,
             path: str | os.PathLike | None = None) -> TuneResult:
    """Choose the :class:`MatmulConfig` for ``tilec.matmul(a, b, ...)`` by timing candidates; remember it.

    The arguments up to ``allow_tf32`` are :func:`tilec.matmul`'s (checked
    the same way; ``out``, if given, is overwritten while timing).
    ``candidates``: the configs to time (default :func:`candidates` for the
    problem, the heuristic's first); ``reps``/``warmup``: timed repetitions
    (the median counts) and launches before; ``progress``: a progress bar on
    stderr; ``retune``: time again even if a winner is remembered;
    ``measure``: ``config -> seconds`` instead of compiling, checking and
    timing on the GPU (then no GPU is needed); ``timer``:
    ``timer(run, warmup, reps) -> seconds`` instead of CUDA events;
    ``path``: the winners file (default :func:`winners_path`).

    Tune with device arrays: numpy inputs are copied to the GPU and back in
    every timed run, and the copies are timed too.

    Returns a :class:`TuneResult`; raises TypeError/ValueError for bad
    arguments, :class:`~tilec.runtime.NoDeviceError` without a GPU (unless
    ``measure`` is given), :class:`AutotuneError` if no candidate works.
    """
    from tilec.matmul import _check_config, plan_matmul
    from tilec.runtime import NoDeviceError, has_device, no_device_reason

    plan = plan_matmul(a, b, out=out, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a,
                       trans_b=trans_b, allow_tf32=allow_tf32)
    for what, v in (("reps", reps), ("warmup", warmup)):
        if type(v) is not int or v < 0:
            raise ValueError(f"tilec.autotune: {what} must be a non-negative int, got {v!r}")
    configs = None
    if candidates is not None:
        configs = list(candidates)
        if not configs:
            raise ValueError("tilec.autotune: candidates is empty")
        kind = math_kind(plan.spec.dtype, allow_tf32)
        for c in configs:
            _check_config(c, plan.spec.dtype, allow_tf32)
            if config_kind(c) != kind:
                raise ValueError(f"tilec.autotune: candidate {c.describe()} does {config_kind(c)} math, but the "
                                 f"problem does {kind} ({plan.spec.dtype} inputs, allow_tf32={allow_tf32})")
    if measure is None and not has_device():
        raise NoDeviceError(f"{no_device_reason() or 'none found'} (tilec.autotune checked its arguments; "
                            "pass measure= to tune without a GPU)")
    path = Path(path) if path is not None else winners_path()
    key = tune_key(plan, gpu_name(), allow_tf32)
    if plan.m == 0 or plan.n == 0:
        return TuneResult(plan.config, key, "trivial", (), path)
    limit = _smem_limit()
    memory_key = (str(path), key.text)
    if not retune:
        with _MEMORY_LOCK:
            known = _MEMORY.get(memory_key)
        if known is not None:
            return TuneResult(known, key, "memory", (), path)
        stored = valid_record(read_winners(path).get(key.text), key, allow_tf32, limit)
        if stored is not None:
            with _MEMORY_LOCK:
                _MEMORY[memory_key] = stored
            return TuneResult(stored, key, "disk", (), path)

    if configs is None:
        configs = candidates_for(plan, allow_tf32, limit)
    if measure is None:
        measure = _gpu_measure(plan, a, b, out, bias, activation, out_dtype, trans_a, trans_b, allow_tf32, timer,
                               warmup, reps, limit)
    title = f"tilec.autotune {plan.m}x{plan.n}x{plan.k} {_SHORT[plan.spec.dtype]} {plan.layouts}"
    winner, timings = select(configs, measure, progress=progress, title=title)
    best = min(t.seconds for t in timings if t.seconds is not None)
    with _MEMORY_LOCK:
        _MEMORY[memory_key] = winner
    try:
        store_winner(path, key, winner, best, len(configs))
    except OSError as e:  # an unwritable cache must not lose the answer
        if progress:
            sys.stderr.write(f"tilec.autotune: could not store the winner in {path}: {e}\n")
    return TuneResult(winner, key, "timed", timings, path)


def candidates_for(plan: Any, allow_tf32: bool, smem_limit: int) -> list[MatmulConfig]:
    """:func:`candidates` for a checked call, the heuristic's config first."""
    from tilec.api import default_arch

    bulk = plan.spec.aligned and has_bulk_copies(default_arch())
    found = candidates(plan.spec.dtype, plan.m, plan.n, plan.k, allow_tf32=allow_tf32, smem_limit=smem_limit,
                       bulk=bulk)
    return [plan.config] + [c for c in found if c != plan.config]


def _gpu_measure(plan, a, b, out, bias, activation, out_dtype, trans_a, trans_b, allow_tf32, timer, warmup, reps,
                 smem_limit) -> GpuMeasure:
    from tilec.matmul import _allocate_output, matmul

    scratch = out if out is not None else _allocate_output(plan)

    def call(config: MatmulConfig, into: Any) -> Any:
        return matmul(a, b, out=into, bias=bias, activation=activation, out_dtype=out_dtype, trans_a=trans_a,
                      trans_b=trans_b, allow_tf32=allow_tf32, config=config)

    if timer is None:
        timer = torch_event_timer if is_torch_tensor(a) else driver_event_timer
    return GpuMeasure(plan, call, scratch, allow_tf32=allow_tf32, timer=timer, warmup=warmup, reps=reps,
                      smem_limit=smem_limit,
                      reference_args=dict(a=a, b=b, trans_a=trans_a, trans_b=trans_b, bias=bias,
                                          activation=activation))


make_module_callable(__name__, autotune)

__all__ = [
    "AutotuneError",
    "FORMAT",
    "GpuMeasure",
    "MMA_CANDIDATES",
    "SIMT_CANDIDATES",
    "SMEM_LIMIT",
    "SkipCandidate",
    "TF32_CANDIDATES",
    "Timing",
    "TuneKey",
    "TuneResult",
    "autotune",
    "candidates",
    "candidates_for",
    "config_from_json",
    "config_kind",
    "config_to_json",
    "driver_event_timer",
    "forget",
    "gpu_name",
    "read_winners",
    "reference_error",
    "select",
    "shared_memory_bytes",
    "store_winner",
    "torch_event_timer",
    "tune_key",
    "valid_record",
    "winners_path",
]
