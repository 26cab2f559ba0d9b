"""tilec.autotune: candidates, the winners file, the choice, the progress bar; and one GPU run.

The shared tuner is :mod:`tilec.kernels.autotune`; the GEMM's candidates are
:mod:`tilec.kernels.gemm_config`, its key and measure :mod:`tilec.kernels.gemm_tune`.

Without a GPU, :func:`tilec.autotune` runs with ``measure=`` (a function
config -> seconds standing in for compile + check + CUDA-event timing), on
numpy arrays (only their shapes and dtypes matter then); the GPU test at
the end tunes a 512^3 f16 problem for real.
"""

from __future__ import annotations

import json
import math
import sys
import types

import numpy as np
import pytest

import tilec
import tilec.kernels.autotune as at
import tilec.kernels.gemm as mm
import tilec.kernels.gemm_config as gc
import tilec.kernels.gemm_tune as gt
from tilec.kernels.gemm_config import CONFIGS, MatmulConfig
from tilec.runtime import NoDeviceError, has_device, no_device_reason


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """The winners file (and cubins) go to a fresh folder; nothing is remembered across tests."""
    d = tmp_path / "tilec-cache"
    monkeypatch.setenv("TILEC_CACHE_DIR", str(d))
    at.forget()
    yield d
    at.forget()


@pytest.fixture
def no_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` raises ImportError


def f16(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float16)


class Clock:
    """A ``measure``: seconds per config from a table (by ``describe()``), counting calls."""

    def __init__(self, times: dict[str, float] | None = None, default: float = 1e-3):
        self.times, self.default, self.calls = times or {}, default, []

    def __call__(self, config: MatmulConfig) -> float:
        self.calls.append(config)
        value = self.times.get(config.describe(), self.default)
        if isinstance(value, Exception):
            raise value
        return value


LARGE, SMALL = CONFIGS[("mma", "large")], CONFIGS[("mma", "small")]


# ---------------------------------------------------------------- candidates


def test_candidate_sets_are_valid_configs_of_their_kind():
    for dtype, tf32, pool in (("float16", False, gc.MMA_CANDIDATES), ("float32", True, gc.TF32_CANDIDATES),
                              ("float32", False, gc.SIMT_CANDIDATES)):
        assert len(set(pool)) == len(pool) >= 5
        for c in pool:
            gc.check_config(c, dtype, tf32)
            assert gc.config_kind(c) == gc.math_kind(dtype, tf32)
            assert gc.shared_memory_bytes(c, dtype) <= gc.SMEM_LIMIT
    # the heuristic's table entries are candidates too
    assert {LARGE, SMALL} <= set(gc.MMA_CANDIDATES)
    assert {CONFIGS[("tf32", "large")], CONFIGS[("tf32", "small")]} <= set(gc.TF32_CANDIDATES)
    assert {CONFIGS[("simt", "large")], CONFIGS[("simt", "small")]} <= set(gc.SIMT_CANDIDATES)


def test_bulk_candidates_on_sm_90_with_aligned_operands():
    with_bulk = gc.candidates("float16", 4096, 4096, 4096, smem_limit=gc.SMEM_LIMIT, bulk=True)
    assert with_bulk == list(gc.MMA_CANDIDATES) + list(gc.BULK_CANDIDATES)
    assert all(c.bulk for c in gc.BULK_CANDIDATES) and any(not c.release for c in gc.BULK_CANDIDATES)
    # f32 has no bulk configurations; a small problem keeps the small bulk tiles only
    assert gc.candidates("float32", 4096, 4096, 4096, smem_limit=gc.SMEM_LIMIT, bulk=True) == list(gc.SIMT_CANDIDATES)
    small = [c for c in gc.candidates("float16", 64, 64, 64, smem_limit=gc.SMEM_LIMIT, bulk=True) if c.bulk]
    assert small and all(c.block[:2] == (64, 64) for c in small)


def test_wgmma_candidates_with_row_major_operands():
    """The warpgroup-MMA tiles (persistent and warp-specialised among them) are timed only where
    they run: bulk copies and A and B row-major on sm_90a."""
    found = gc.candidates("float16", 4096, 4096, 4096, smem_limit=gc.SMEM_LIMIT, bulk=True, wgmma=True)
    assert found == list(gc.MMA_CANDIDATES) + list(gc.BULK_CANDIDATES) + list(gc.WGMMA_CANDIDATES)
    assert gc.PERSISTENT_WGMMA_CONFIG in found and gc.WGMMA_CONFIG in found
    assert all(c.wgmma and c.bulk for c in gc.WGMMA_CANDIDATES)
    assert not any(c.wgmma for c in gc.candidates("float16", 4096, 4096, 4096, smem_limit=gc.SMEM_LIMIT, bulk=True))
    assert not any(c.wgmma for c in gc.candidates("float16", 4096, 4096, 4096, smem_limit=gc.SMEM_LIMIT, wgmma=True))


@pytest.mark.parametrize("config", gc.WGMMA_CANDIDATES, ids=lambda c: c.describe())
def test_wgmma_candidates_assemble_without_spills(config):
    from tilec.codegen.ptxas import find_ptxas, kernel_resources
    from tilec.kernels.gemm import MatmulSpec, compile_matmul

    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    spec = MatmulSpec("bfloat16", "float32", bias_dtype="float32", activation="relu", align=16)
    kernel = compile_matmul(spec, config, arch="sm_90a")
    used = kernel_resources(kernel.asm["ptx"], "sm_90a")[kernel.name]
    assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used


@pytest.mark.parametrize("config", gc.BULK_CANDIDATES, ids=lambda c: c.describe())
def test_bulk_candidates_assemble_without_spills(config):
    from tilec.codegen.ptxas import find_ptxas, kernel_resources
    from tilec.kernels.gemm import MatmulSpec, compile_matmul

    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    spec = MatmulSpec("float16", "float32", transpose_a=True, transpose_b=True, bias_dtype="float32",
                      activation="relu", align=16)
    kernel = compile_matmul(spec, config, arch="sm_90")
    used = kernel_resources(kernel.asm["ptx"], "sm_90")[kernel.name]
    assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used


def test_candidates_drop_what_cannot_fit_or_is_too_big():
    assert gc.candidates("float16", 512, 512, 512, smem_limit=gc.SMEM_LIMIT) == list(gc.MMA_CANDIDATES)
    assert gc.candidates("bfloat16", 4096, 4096, 4096, smem_limit=gc.SMEM_LIMIT) == list(gc.MMA_CANDIDATES)
    tiny = gc.candidates("float16", 17, 33, 65, smem_limit=gc.SMEM_LIMIT)
    assert tiny and all(c.block[:2] == (64, 64) for c in tiny) and SMALL in tiny
    assert all(c.block[2] == 32 for c in gc.candidates("float16", 1, 1, 1, smem_limit=gc.SMEM_LIMIT))
    # a short K keeps wide tiles but not deep ones
    assert all(c.block[2] == 32 for c in gc.candidates("float16", 4096, 4096, 16, smem_limit=gc.SMEM_LIMIT))
    # shared memory: 48 KB leaves only the tiles whose stages fit
    fits = gc.candidates("float16", 4096, 4096, 4096, smem_limit=48 * 1024)
    assert fits and all(gc.shared_memory_bytes(c, "float16") <= 48 * 1024 for c in fits)
    assert LARGE not in fits and gc.shared_memory_bytes(LARGE, "float16") == 64 * 1024
    assert gc.candidates("float32", 2048, 2048, 2048, allow_tf32=True, smem_limit=gc.SMEM_LIMIT) == \
        list(gc.TF32_CANDIDATES)
    assert gc.candidates("float32", 2048, 2048, 2048, smem_limit=gc.SMEM_LIMIT) == list(gc.SIMT_CANDIDATES)
    with pytest.raises(ValueError, match="no matmul for inputs of dtype int8"):
        gc.candidates("int8", 8, 8, 8)


def test_the_heuristic_comes_first():
    plan = mm.plan_matmul(f16(1000, 64), f16(64, 1000), sm_count=132)
    assert plan.config == SMALL
    found = gt.candidates_for(plan, False, gc.SMEM_LIMIT)
    assert found[0] == SMALL and found.count(SMALL) == 1 and len(found) == len(gc.MMA_CANDIDATES)


# ---------------------------------------------------------------- keys and the file format


def test_key_names_the_problem():
    plan = mm.plan_matmul(f16(64, 96).T, f16(32, 64), trans_b=True, bias=np.zeros(32, np.float32),
                          activation="relu", out_dtype="float32")
    key = gt.tune_key(plan, "GPU X", False)
    assert key.text == "GPU X|float16|float32|col/col|bias_f32_relu|mma|96x32x64|any"  # host arrays
    assert gt.tune_key(mm.plan_matmul(f16(8, 8), f16(8, 8)), "G", False).epilogue == "none"
    f32 = np.ones((8, 8), np.float32)
    assert gt.tune_key(mm.plan_matmul(f32, f32, allow_tf32=True), "G", True).math == "tf32"
    assert gt.tune_key(mm.plan_matmul(f32, f32), "G", False).math == "simt"


def test_config_json_round_trip_and_validation():
    for c in (*gc.MMA_CANDIDATES, *gc.TF32_CANDIDATES, *gc.SIMT_CANDIDATES):
        data = json.loads(json.dumps(gc.config_to_json(c)))
        assert gc.config_from_json(data) == c
    good = gc.config_to_json(LARGE)
    bad = [
        None, [], {**good, "extra": 1}, {k: v for k, v in good.items() if k != "stages"},
        {**good, "block": [128, 128]}, {**good, "block": [128, 128, "32"]}, {**good, "block": [128, 128, 0]},
        {**good, "warps": [4]}, {**good, "stages": 0}, {**good, "stages": 4.0}, {**good, "group": 0},
        {**good, "tf32": 1}, {**good, "tf32": True, "thread_tile": [4, 4]},
    ]
    for data in bad:
        with pytest.raises(ValueError):
            gc.config_from_json(data)


def test_config_json_keeps_bulk_copies():
    """Bulk, release and wgmma are written where they differ from the default (before, a bulk winner
    read back as its cp.async twin); records of other configs keep their six fields."""
    for c in (*gc.BULK_CANDIDATES, *gc.WGMMA_CANDIDATES):
        assert gc.config_from_json(json.loads(json.dumps(gc.config_to_json(c)))) == c
    assert gc.config_to_json(gc.BULK_CONFIG)["release"] is False and gc.config_to_json(gc.WGMMA_CONFIG)["wgmma"]
    persistent = gc.config_to_json(gc.PERSISTENT_WGMMA_CONFIG)
    assert persistent["producer"] is True and persistent["persistent"] is True and persistent["bulk_store"] is True
    assert set(gc.config_to_json(LARGE)) == {"block", "warps", "stages", "group", "tf32", "thread_tile"}
    with pytest.raises(ValueError):
        gc.config_from_json({**gc.config_to_json(LARGE), "bulk": 1})


def test_the_shared_tuner_knows_no_gemm(tmp_path, no_tqdm):
    """Another family (configs are ints) tunes through the same memory, file and progress bar."""

    class Key:
        text = "toy|64"

        def fields(self):
            return {"n": 64}

    measured = []

    def measure(config):
        measured.append(config)
        if config == 2:
            raise at.SkipCandidate("not for 64")
        return 1e-6 * (1 + abs(config - 3))

    def problem(candidates=(1, 2, 3, 4)):
        return at.Problem(family="toy", key=Key(), candidates=lambda: candidates, measure=lambda: measure,
                          to_json=lambda c: {"n": c}, from_json=lambda d: d["n"], title="toy")

    r = at.tune(problem(), progress=False)
    assert (r.config, r.source, r.path) == (3, "timed", at.winners_path("toy")) and measured == [1, 2, 3, 4]
    assert r.timings[1].note == "not for 64"
    assert at.read_winners(r.path)["toy|64"]["config"] == {"n": 3}
    assert at.tune(problem(), progress=False).source == "memory"
    at.forget()
    assert at.tune(problem(), progress=False).source == "disk" and len(measured) == 4
    assert at.tune(problem((4,)), progress=False, retune=True).config == 4


# ---------------------------------------------------------------- the choice


def test_select_takes_the_fastest_and_notes_the_skipped(no_tqdm):
    a, b, c, d = gc.MMA_CANDIDATES[:4]
    clock = Clock({a.describe(): 3e-5, b.describe(): 2e-5, c.describe(): at.SkipCandidate("does not compile: x"),
                   d.describe(): float("nan")})
    winner, timings = at.select([a, b, c, d], clock, progress=False)
    assert winner == b and clock.calls == [a, b, c, d]
    assert [t.seconds for t in timings] == [3e-5, 2e-5, None, None]
    assert timings[2].note == "does not compile: x" and "the timer returned nan" in timings[3].note
    # ties: the earlier one (the heuristic's, first) wins
    assert at.select([a, b], Clock(default=1e-5), progress=False)[0] == a
    with pytest.raises(at.AutotuneError, match=r"no candidate could be used \(.*: spills; .*: spills\)"):
        at.select([a, b], Clock(default=at.SkipCandidate("spills")), progress=False)


def test_progress_line_on_stderr(capsys, no_tqdm):
    configs = list(gc.MMA_CANDIDATES[:3])
    at.select(configs, Clock({configs[1].describe(): 5e-6}, default=1e-5), progress=True, title="tune X")
    err = capsys.readouterr().err
    assert "\r" in err and err.endswith("\n") and err.count("\n") == 1
    assert "tune X: [1/3]" in err and "tune X: [3/3]" in err
    assert f"best {configs[1].describe()}: 5.0 us" in err.rsplit("\r", 1)[-1]
    at.select(configs, Clock(), progress=False)
    assert capsys.readouterr().err == ""


def test_progress_uses_tqdm_when_installed(monkeypatch, capsys):
    made = []

    class FakeTqdm:
        def __init__(self, total, desc, file, unit, leave):
            self.total, self.desc, self.updates, self.postfix, self.closed = total, desc, 0, [], False
            made.append(self)

        def update(self, n):
            self.updates += n

        def set_postfix_str(self, s):
            self.postfix.append(s)

        def close(self):
            self.closed = True

    monkeypatch.setitem(sys.modules, "tqdm", types.SimpleNamespace(tqdm=FakeTqdm))
    at.select(list(gc.MMA_CANDIDATES[:2]), Clock(), progress=True, title="tune Y")
    (bar,) = made
    assert (bar.total, bar.desc, bar.updates, bar.closed) == (2, "tune Y", 2, True)
    assert bar.postfix[-1].startswith("best ") and capsys.readouterr().err == ""


def test_event_timer_batches_short_kernels():
    """The timing loop with a fake clock: each run takes 2 µs of 'GPU' time."""
    now = [0.0]
    runs = []

    def run():
        runs.append(1)
        now[0] += 2e-6

    class Event:
        t = None

    def record(e):
        e.t = now[0]

    seconds = at._event_median(run, 3, 5, Event, record, lambda: None, lambda s, e: e.t - s.t)
    assert math.isclose(seconds, 2e-6)
    assert len(runs) == 3 + 1 + 5 * 100  # warmup, one to size the batch, 5 reps of 100 launches


def test_event_timer_holds_the_gpu_before_each_repetition():
    """With a host slower than the kernel, a hold before each repetition lets the events time the GPU."""
    gpu, host, holds = [0.0], [0.0], []

    def run():  # 10 µs of host time per launch, 2 µs of GPU time, the GPU never ahead of the host
        host[0] += 10e-6
        gpu[0] = max(gpu[0], host[0]) + 2e-6

    class Event:
        t = None

    def record(e):
        e.t = gpu[0] = max(gpu[0], host[0])

    def hold(seconds):
        holds.append(seconds)
        gpu[0] = max(gpu[0], host[0]) + seconds  # the GPU busy that long: the launches queue up behind it

    def late_record(e):  # the GPU reaches the event once it has run what was queued before it
        e.t = gpu[0] = max(gpu[0], host[0]) if not holds else gpu[0]

    unheld = at._event_median(run, 1, 3, Event, record, lambda: None, lambda s, e: e.t - s.t)
    assert unheld > 9e-6  # the host's pace
    held = at._event_median(run, 1, 3, Event, late_record, lambda: None, lambda s, e: e.t - s.t, hold)
    assert len(holds) == 3 and math.isclose(held, 2e-6, rel_tol=1e-6)


def test_reference_error_against_float64():
    a, b = f16(40, 24), f16(24, 16)
    bias = np.linspace(-1, 1, 16).astype(np.float32)
    exact = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert gt.reference_error(exact.astype(np.float16), a, b, bias=bias, activation="relu") < 1e-3
    assert gt.reference_error(exact.astype(np.float16), a.T.copy(), b, trans_a=True, bias=bias,
                              activation="relu") < 1e-3
    wrong = exact.copy()
    wrong[-1, 3] += 10  # the last rows are checked too
    assert gt.reference_error(wrong, a, b, bias=bias, activation="relu") > 1e-2
    poisoned = exact.copy()
    poisoned[0, 0] = np.nan
    assert not gt.reference_error(poisoned, a, b, bias=bias, activation="relu") <= 1.0


# ---------------------------------------------------------------- autotune() and the file


def test_autotune_times_stores_and_remembers(cache_dir, no_tqdm):
    a, b = f16(512, 256), f16(256, 512)
    clock = Clock({gc.MMA_CANDIDATES[4].describe(): 1e-6})
    r = tilec.autotune(a, b, measure=clock, progress=False)
    assert r.source == "timed" and r.config == gc.MMA_CANDIDATES[4]
    assert len(clock.calls) == len(r.timings) == len(gc.MMA_CANDIDATES)
    assert r.path == cache_dir / "autotune" / "matmul.json" == gt.winners_path()
    data = json.loads(r.path.read_text())
    assert data["format"] == at.FORMAT and list(data["entries"]) == [r.key.text]
    record = data["entries"][r.key.text]
    assert record["config"] == gc.config_to_json(gc.MMA_CANDIDATES[4]) and record["seconds"] == 1e-6
    assert {k: record[k] for k in r.key.fields()} == r.key.fields() and record["candidates"] == 9
    assert r.key.gpu == gt.gpu_name()

    again = tilec.autotune(a, b, measure=clock, progress=False)  # remembered in this process
    assert (again.source, again.config, len(clock.calls)) == ("memory", r.config, 9)
    at.forget()
    from_disk = tilec.autotune(a, b, measure=clock, progress=False)  # e.g. the next process
    assert (from_disk.source, from_disk.config, len(clock.calls)) == ("disk", r.config, 9)
    retuned = tilec.autotune(a, b, measure=Clock(), progress=False, retune=True)
    assert retuned.source == "timed" and retuned.config == SMALL  # all equal: the heuristic's (first) wins


def test_other_problems_keep_their_records(no_tqdm):
    tilec.autotune(f16(64, 64), f16(64, 64), measure=Clock(), progress=False)
    tilec.autotune(f16(64, 64), f16(64, 64), measure=Clock(), progress=False, activation="relu")
    tilec.autotune(f16(64, 64), f16(64, 64).T, measure=Clock(), progress=False)
    entries = at.read_winners(gt.winners_path())
    assert sorted(k.split("|", 3)[3] for k in entries) == [
        "row/col|none|mma|64x64x64|any", "row/row|none|mma|64x64x64|any", "row/row|relu|mma|64x64x64|any"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "other format", "bad config", "wrong kind",
                                    "wrong key fields", "too much shared memory", "not a dict"])
def test_a_damaged_record_is_ignored_and_rewritten(damage, no_tqdm):
    a, b = f16(256, 128), f16(128, 256)
    first = tilec.autotune(a, b, measure=Clock({SMALL.describe(): 1e-6}), progress=False)
    path, key = first.path, first.key.text
    data = json.loads(path.read_text())
    record = data["entries"][key]
    if damage == "garbage":
        path.write_text("this is not json {")
    elif damage == "truncated":
        path.write_text(path.read_text()[:40])
    elif damage == "other format":
        path.write_text(json.dumps({**data, "format": 99}))
    else:
        if damage == "bad config":
            record["config"]["block"] = [128, 128, 0]
        elif damage == "wrong kind":
            record["config"] = gc.config_to_json(CONFIGS[("simt", "small")])
        elif damage == "wrong key fields":
            record["m"] = 4096
        elif damage == "too much shared memory":
            record["config"] = gc.config_to_json(MatmulConfig((256, 256, 64), (4, 2), 8))
        elif damage == "not a dict":
            data["entries"][key] = [1, 2, 3]
        path.write_text(json.dumps(data))
    at.forget()
    clock = Clock({LARGE.describe(): 1e-6})
    r = tilec.autotune(a, b, measure=clock, progress=False)
    assert r.source == "timed" and r.config == LARGE and len(clock.calls) > 1
    assert at.read_winners(path)[key]["config"] == gc.config_to_json(LARGE)


def test_given_candidates_are_checked(no_tqdm):
    a, b = f16(64, 64), f16(64, 64)
    clock = Clock()
    r = tilec.autotune(a, b, candidates=[SMALL, gc.MMA_CANDIDATES[7]], measure=clock, progress=False)
    assert clock.calls == [SMALL, gc.MMA_CANDIDATES[7]] and r.config == SMALL
    with pytest.raises(ValueError, match="is for float32 inputs, a and b are float16"):
        tilec.autotune(a, b, candidates=[CONFIGS[("simt", "small")]], measure=clock, progress=False, retune=True)
    f32 = np.ones((8, 8), np.float32)
    with pytest.raises(ValueError, match="does tf32 math, but the problem does simt"):
        tilec.autotune(f32, f32, candidates=[CONFIGS[("tf32", "small")]], measure=clock, progress=False)
    with pytest.raises(ValueError, match="candidates is empty"):
        tilec.autotune(a, b, candidates=[], measure=clock, progress=False)
    with pytest.raises(ValueError, match="K differs"):  # the matmul's own checks come first
        tilec.autotune(a, f16(32, 8), measure=clock, progress=False)
    with pytest.raises(ValueError, match="reps must be a non-negative int"):
        tilec.autotune(a, b, measure=clock, progress=False, reps=-1)


def test_an_empty_problem_needs_no_tuning():
    r = tilec.autotune(f16(0, 8), f16(8, 8), measure=Clock(), progress=False)
    assert r.source == "trivial" and r.config == SMALL and not gt.winners_path().exists()


@pytest.mark.skipif(has_device(), reason="checks the no-GPU path")
def test_without_a_gpu_autotune_needs_a_measure():
    with pytest.raises(NoDeviceError, match="pass measure= to tune without a GPU"):
        tilec.autotune(f16(8, 8), f16(8, 8), progress=False)
    with pytest.raises(NoDeviceError):
        tilec.matmul(f16(8, 8), f16(8, 8), autotune=True)


def test_tilec_autotune_is_the_gemm_function():
    import inspect

    assert tilec.autotune is mm.autotune and "tilec.autotune" not in sys.modules
    assert "candidates" in inspect.signature(tilec.autotune).parameters
    assert "autotune" in tilec.__all__
    with pytest.raises(ValueError, match="pass config= or autotune=True, not both"):
        tilec.matmul(f16(8, 8), f16(8, 8), autotune=True, config=SMALL)


def test_matmul_autotune_uses_the_winner_once(monkeypatch):
    """tilec.matmul(..., autotune=True) on the fake GPU (stand-ins of test_launch_overhead): tuned once,
    the winner's kernel launched, later calls straight from the prepared call."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    try:
        import test_launch_overhead as lo
    finally:
        sys.path.remove(str(here))
    from tilec.runtime import driver

    from cuda.bindings import driver as cu

    fake = lo.load_fake_driver().FakeDriver(cu)
    lo.instrument(fake)
    saved = mm.cached_kernels()
    monkeypatch.setattr(driver, "_import_bindings", lambda: fake)
    monkeypatch.setitem(sys.modules, "torch", lo.fake_torch())
    driver._reset_for_tests()
    mm.clear_cache()
    winner = gc.MMA_CANDIDATES[7]  # 64x64x32, 4 stages: not what the heuristic picks
    tuned = []

    def fake_autotune(a, b, **kwargs):
        tuned.append(kwargs)
        plan = mm.plan_matmul(a, b, out=kwargs["out"])
        return at.TuneResult(winner, gt.tune_key(plan, "Fake GPU", False), "timed")

    monkeypatch.setattr(mm, "autotune", fake_autotune)
    try:
        a, b = lo.f16(100, 64), lo.f16(64, 130)
        for _ in range(3):
            c = lo.f16(100, 130)
            assert tilec.matmul(a, b, out=c, autotune=True) is c
        assert len(tuned) == 1 and tuned[0]["out"] is not None
        assert [launch["grid"] for launch in fake.launches] == [(winner.grid(100, 130), 1, 1)] * 3
        (kernel,) = mm.cached_kernels().values()
        assert [key[1] for key in mm.cached_kernels()] == [winner] and kernel.launch_defaults.smem == 32768
    finally:
        mm.clear_cache()
        mm._KERNELS.update(saved)
        monkeypatch.undo()
        driver._reset_for_tests()


# ---------------------------------------------------------------- split-K candidates


def _decode_plan():
    """16 x 4096 x 4096 f16 on device arrays (described only), planned unsplit for an sm_90a of 132 SMs."""
    from test_matmul import FakeCudaArray

    a, b, c = (FakeCudaArray(shape, address=0x7E0000000000 + (i << 28))
               for i, shape in enumerate([(16, 4096), (4096, 4096), (16, 4096)]))
    return mm.plan_matmul(a, b, out=c, split_k=1, sm_count=132, arch="sm_90a"), (a, b, c)


def test_split_config_checks_and_its_record():
    with pytest.raises(ValueError, match="split_k must be an int from 2 to 4, got 1"):
        gc.SplitConfig(SMALL, 1)
    with pytest.raises(TypeError, match="config must be a tilec.MatmulConfig, got str"):
        gc.SplitConfig("128x128", 2)
    split = gc.SplitConfig(SMALL, 4)
    assert split.describe() == f"{SMALL.describe()}, K in 4 slices"
    data = gc.config_to_json(split)
    assert data == {**gc.config_to_json(SMALL), "split_k": 4} and gc.config_from_json(data) == split
    with pytest.raises(ValueError, match="split_k must be an int"):
        gc.config_from_json({**data, "split_k": 9})
    plan, _ = _decode_plan()
    key = gt.tune_key(plan, "gpu", False, splits=True)
    assert key.text.endswith("|split-k") and key.fields()["splits"] is True
    assert "splits" not in gt.tune_key(plan, "gpu", False).fields()  # records of unsplit keys stay valid
    assert gt.stored_config(data, key, False, 1 << 20) == split
    with pytest.raises(ValueError, match="not a split of K = 4096 this call can run"):
        gt.stored_config(data, gt.tune_key(plan, "gpu", False), False, 1 << 20)  # a call that cannot split
    with pytest.raises(ValueError, match="not a split of K = 4096"):
        gt.stored_config({**data, "split_k": 3}, key, False, 1 << 20)


def test_split_candidates_come_with_the_configs():
    """A grid that leaves SMs idle times K in 2 and 4 slices too (3 does not divide 4096), each with the
    ladder's tile for its slices; the heuristic's choice (here a split) comes first, nothing twice."""
    plan, (a, b, c) = _decode_plan()
    assert gt.split_factors(plan, 132) == [2, 4]
    assert gt.split_factors(plan, plan.config.tiles(16, 4096)) == []  # tiles that fill the SMs: no split
    splits = [gc.SplitConfig(mm.plan_matmul(a, b, out=c, split_k=s, sm_count=132, arch="sm_90a").config, s)
              for s in (2, 4)]
    found = gt.candidates_for(plan, False, 1 << 20, (splits, splits[0]))
    assert found[0] == splits[0] and splits[1] in found and plan.config in found
    assert len(found) == len(set(found)) and sum(isinstance(f, gc.SplitConfig) for f in found) == 2
    assert gt.candidates_for(plan, False, 1 << 20)[0] == plan.config  # without splits: as before


def test_a_split_config_is_a_config_and_a_split():
    plan, (a, b, c) = _decode_plan()
    cfg = mm.plan_matmul(a, b, out=c, split_k=2, sm_count=132, arch="sm_90a").config
    k1 = mm.matmul_kernel(a, b, out=c, config=gc.SplitConfig(cfg, 2), arch="sm_90a")
    k2 = mm.matmul_kernel(a, b, out=c, config=cfg, split_k=2, arch="sm_90a")
    assert k1.name == k2.name and k1.asm["ptx"] == k2.asm["ptx"]
    with pytest.raises(ValueError, match=r"split_k=4 but config=.* runs 2 slices"):
        mm.matmul_kernel(a, b, out=c, config=gc.SplitConfig(cfg, 2), split_k=4, arch="sm_90a")


def test_split_candidates_need_a_call_that_can_split(no_tqdm):
    """numpy inputs (staged through the host) never split: no split is timed, and one given is refused."""
    a, b = f16(16, 1024), f16(1024, 256)
    clock = Clock()
    r = tilec.autotune(a, b, measure=clock, progress=False)
    assert not r.key.splits and not any(isinstance(c, gc.SplitConfig) for c in clock.calls)
    with pytest.raises(ValueError, match="splits K, which runs on torch tensors"):
        tilec.autotune(a, b, candidates=[gc.SplitConfig(SMALL, 2)], measure=clock, progress=False)
    with pytest.raises(TypeError, match="allow_split must be a bool"):
        tilec.autotune(a, b, measure=clock, progress=False, allow_split=1)


# ---------------------------------------------------------------- on the GPU


@pytest.mark.gpu
@pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")
def test_autotune_512_f16_on_the_gpu(capsys):
    torch = pytest.importorskip("torch", reason="the GPU autotune test makes its inputs with torch")
    torch.manual_seed(0)
    a = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    out = torch.full((512, 512), float("nan"), device="cuda", dtype=torch.float16)
    pair = [gc.MMA_CANDIDATES[0], gc.MMA_CANDIDATES[6]]  # 128x128x32 4 stages, 64x64x32 3 stages
    r = tilec.autotune(a, b, out=out, candidates=pair, reps=10, progress=True)
    print(f"\n{r.key.text}: {[(t.config.describe(), t.seconds, t.note) for t in r.timings]}")
    assert r.source == "timed" and r.config in pair and r.key.gpu == torch.cuda.get_device_name()
    assert [t.config for t in r.timings] == pair and all(t.seconds and t.seconds < 1e-2 for t in r.timings)
    assert "tilec.autotune 512x512x512 f16 row/row" in capsys.readouterr().err
    ref = a.double() @ b.double()
    for use in ("config", "autotune=True"):
        out.fill_(float("nan"))
        if use == "config":
            tilec.matmul(a, b, out=out, config=r.config)
        else:  # the stored winner, found in memory: nothing is timed again
            tilec.matmul(a, b, out=out, autotune=True)
        torch.cuda.synchronize()
        assert int(torch.isnan(out).sum()) == 0, f"{use}: elements of C were never written"
        err = ((out.double() - ref).norm() / ref.norm()).item()
        assert err < 1e-2, f"{use}: relative error {err:.2e}"
    at.forget()
    assert tilec.autotune(a, b, out=out, progress=False).source == "disk"
    record = at.read_winners(gt.winners_path())[r.key.text]
    assert gc.config_from_json(record["config"]) == r.config and record["candidates"] == 2
