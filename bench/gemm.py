"""GEMM benchmark, one script, one run: tilec vs cuBLAS (torch.matmul) vs Triton (wgmma and mma.sync).

    python bench/gemm.py                        # everything (about 5 minutes on an H100)
    python bench/gemm.py --quick                # 4096^3 and one decode shape, f16, fewer runs
    python bench/gemm.py --shapes llm,decode --dtypes bfloat16 --json out.json

What is measured, per shape and dtype (f16 and bf16 in, f32 accumulate, C in
the inputs' dtype, A and B row-major: A is M x K, B is K x N):

- tilec: ``tilec.matmul(a, b, out=c)`` as users call it (its config is the
  one ``tilec.kernels.gemm_config.choose_config`` picks; ``--autotune`` passes
  ``autotune=True`` where tilec.matmul accepts it);
- cuBLAS: ``torch.matmul(a, b, out=c)``;
- Triton: ``bench/triton_matmul.py`` (a plain tiled kernel, small autotune
  set), twice, in worker processes with fresh TRITON_CACHE_DIRs: with
  Triton's defaults (wgmma on sm_90) and with ``DISABLE_MMA_V3=1`` (mma.sync,
  the instruction tilec uses). The PTX of each winning kernel says which.

Shapes: square 1024-8192; LLM-like M=8192 with (N, K) = (8192, 1024),
(1024, 8192), (28672, 4096); decode M = 16 and 128 with N = K = 4096;
ragged: near 4096 with rows that are not whole 16-byte vectors (tilec.matmul
compiles for the alignment each operand's rows have; ``tilec_generic`` beside
it is the kernel that tests alignment at run time). Then
f32 without tf32 (tilec's SIMT path vs cuBLAS sgemm with
``torch.backends.cuda.matmul.allow_tf32 = False``), the mma.sync ceiling of
``bench/mma_ceiling.py`` on the same GPU, and the host cost of one call on a
tiny problem (tilec.matmul, tilec's bare kernel launch, torch, Triton).
On sm_90 and later, FP8 (``--shapes fp8``): e4m3 A (M x K) and W (N x K),
per-tensor f32 scales, bf16 C: ``tilec.matmul(a, w.t(), scale_a=, scale_b=)``
against ``torch._scaled_mm`` (cuBLASLt) with and without ``use_fast_accum``.

Every implementation is checked before it is timed: fresh random inputs
(torch.randn), the output filled with NaN, then every element must be finite
and the relative error ||C - ref|| / ||ref|| (Frobenius) against a float64
reference must be below the tolerance (1e-2 f16/bf16, 2e-5 f32); for M > 2048
the reference covers 256 random rows. A failing check flags the row (``!``)
and its timing is still reported.

Timing (``--timer events``, the default): CUDA events around each call, the
L2 cache flushed before each (a 256 MB memset, as triton.testing.do_bench
does), a warmup, then the median over at least ``--min-runs`` calls. These
are GPU times per call; host costs are the separate launch-overhead table.
``--timer do_bench`` uses triton.testing.do_bench (median) instead. After
both are checked and timed, tilec and cuBLAS are timed again in ``--rounds``
rounds (5) that take turns, each a fifth of the time: the GPU's clock drifts
by a few percent over a run, and two implementations timed one after the
other each get a different part of it. Their TFLOP/s in the table are the
medians of their rounds and ``t/cuB`` is the ratio of those two (the JSON
keeps the first timing as ``sequential_*``, each round's time, and the median
of the rounds' own ratios). Triton runs in worker processes and is timed once
as before, so ``t/Tri`` and ``t/TriMS`` set tilec's rounds against Triton's
single timing.

Output: a table on stdout and a JSON file (``--json``; default
``$OUT/gemm-<time>.json`` when $OUT is set, else
``bench/results/gemm-<time>.json``).
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

SHAPES = {
    "square": [(s, s, s) for s in (1024, 2048, 4096, 8192)],
    "llm": [(8192, 8192, 1024), (8192, 1024, 8192), (8192, 28672, 4096)],
    "decode": [(16, 4096, 4096), (128, 4096, 4096)],
    # rows that are not whole 16-byte vectors: A's rows 8200 B (8-aligned), B's and C's 8200 B, A's 8196 B
    # (4-aligned), and odd sizes (2-aligned rows everywhere); tilec's generic kernel is timed beside
    "ragged": [(4096, 4096, 4100), (4096, 4100, 4096), (4096, 4096, 4098), (4095, 4095, 4095)],
}
QUICK_SHAPES = [("square", (4096, 4096, 4096)), ("decode", (16, 4096, 4096))]
F32_SIZES = (1024, 2048, 4096)
FP8_SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (8192, 1024, 8192),
              (8192, 28672, 4096), (16, 4096, 4096), (128, 4096, 4096)]
"""FP8 (sm_90): A M x K and W N x K in float8_e4m3fn, per-tensor scales, C bf16: tilec.matmul(a, w.t()) against
torch._scaled_mm (cuBLASLt) with and without use_fast_accum (tilec's wgmma accumulates as the fast mode does)."""
DTYPES = ("float16", "bfloat16")
TOLERANCE = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 2e-5}
SAMPLED_ROWS = 256
FULL_CHECK_MAX_M = 2048
OVERHEAD_SHAPE = (64, 64, 64)
CEILING_SETTINGS = [(4, 4, 2), (8, 4, 2), (8, 8, 1), (8, 8, 2), (16, 4, 2)]  # chains, warps, blocks/SM
TRITON_MODES = {"triton": None, "triton_mma_sync": "1"}  # column name -> DISABLE_MMA_V3
SHORT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}


@dataclass
class Timing:
    """How every implementation is timed (the same for all, and passed to the Triton workers)."""

    timer: str = "events"
    warmup_ms: float = 25.0
    rep_ms: float = 200.0
    min_runs: int = 50
    max_runs: int = 1000
    flush_l2: bool = True
    rounds: int = 5
    """tilec and cuBLAS are timed again in this many alternating rounds (see :func:`interleaved`)."""


def _torch():
    import torch  # imported lazily so that --help works without torch

    return torch


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- inputs, checks, timing


def make_inputs(m: int, n: int, k: int, dtype: str, seed: int):
    """Random A (M x K), B (K x N) and a NaN-filled C (M x N) on the GPU."""
    torch = _torch()
    gen = torch.Generator(device="cuda").manual_seed(seed)
    dt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=dt, generator=gen)
    b = torch.randn(k, n, device="cuda", dtype=dt, generator=gen)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
    return a, b, c


def seed_of(m: int, n: int, k: int, dtype: str) -> int:
    """The same inputs for a shape in the main process and in the Triton workers."""
    return (m * 1_000_003 + n * 10_007 + k * 101 + list(SHORT).index(dtype)) % (2**31)


def reference(a, b, seed: int):
    """float64 reference rows: all rows for M <= 2048, else 256 random ones (fast, and it fits memory)."""
    torch = _torch()
    m = a.shape[0]
    if m <= FULL_CHECK_MAX_M:
        rows = torch.arange(m, device=a.device)
    else:
        gen = torch.Generator(device="cpu").manual_seed(seed)
        rows = torch.randperm(m, generator=gen)[:SAMPLED_ROWS].sort().values.to(a.device)
    ref = a[rows].double() @ b.double()
    return rows, ref


def check(c, rows, ref, tol: float) -> dict:
    """Every element finite (NaN means unwritten) and the relative Frobenius error of the checked rows."""
    torch = _torch()
    nonfinite = int((~torch.isfinite(c)).sum().item())
    err = ((c[rows].double() - ref).norm() / ref.norm()).item()
    ok = nonfinite == 0 and err < tol
    return {"rel_err": err, "nonfinite": nonfinite, "tol": tol, "ok": ok,
            "checked_rows": int(rows.numel()), "rows": int(c.shape[0])}


_FLUSH = {}


def _flush_buffer():
    torch = _torch()
    if "buf" not in _FLUSH:
        _FLUSH["buf"] = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    return _FLUSH["buf"]


def time_ms(fn: Callable[[], Any], timing: Timing) -> dict:
    """Median GPU time of ``fn()`` in ms, over many calls, each after an L2 flush."""
    torch = _torch()
    if timing.timer == "do_bench":
        from triton.testing import do_bench

        try:
            ms = do_bench(fn, warmup=timing.warmup_ms, rep=timing.rep_ms, return_mode="median")
        except TypeError:  # older Triton: no return_mode
            ms = do_bench(fn, warmup=timing.warmup_ms, rep=timing.rep_ms, quantiles=[0.5])
        return {"median_ms": float(ms), "runs": None, "timer": "do_bench"}
    flush = _flush_buffer() if timing.flush_l2 else None
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    end.synchronize()
    estimate = max(start.elapsed_time(end) / 5, 1e-3)
    for _ in range(min(timing.max_runs, max(1, int(timing.warmup_ms / estimate)))):
        fn()
    runs = min(timing.max_runs, max(timing.min_runs, int(timing.rep_ms / estimate)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for s, e in zip(starts, ends):
        if flush is not None:
            flush.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]  # noqa: E731
    return {"median_ms": statistics.median(times), "p20_ms": q(0.2), "p80_ms": q(0.8), "runs": runs,
            "timer": "events"}


def measure(fn: Callable[[], Any], c, rows, ref, tol: float, timing: Timing, flop: int) -> dict:
    """First call (with compile/tuning) on a NaN-filled ``c``, the check, then the timing."""
    torch = _torch()
    c.fill_(float("nan"))
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    result = {"first_call_s": time.perf_counter() - t0}
    result.update(check(c, rows, ref, tol))
    t = time_ms(fn, timing)
    result.update(t)
    result["tflops"] = flop / (t["median_ms"] * 1e-3) / 1e12
    return result


def interleaved(fns: dict[str, Callable[[], Any]], timing: Timing, flop: int) -> dict:
    """Each of ``fns`` timed in ``timing.rounds`` rounds, taking turns (the first of a round alternates),
    each round a ``rep_ms / rounds`` share of the usual timing: the GPU's clock drifts by a few percent
    over a run (heat, power), and implementations timed one after the other each get a different
    part of that drift; taking turns gives them the same. Returns per implementation the median time
    of each round, and the median over the rounds of each round's time ratio to the first."""
    share = replace(timing, rep_ms=timing.rep_ms / timing.rounds, warmup_ms=timing.warmup_ms / 5,
                                min_runs=max(5, timing.min_runs // timing.rounds))
    names = list(fns)
    ms: dict[str, list[float]] = {name: [] for name in names}
    for r in range(timing.rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            ms[name].append(time_ms(fns[name], share)["median_ms"])
    first = names[0]
    return {name: {"round_ms": ms[name], "median_ms": statistics.median(ms[name]),
                   "tflops": flop / (statistics.median(ms[name]) * 1e-3) / 1e12,
                   # other/first time ratio = first's speed relative to other, round by round
                   f"{first}_speedup": statistics.median(o / f for o, f in zip(ms[name], ms[first]))}
            for name in names}


def guarded(what: str, body: Callable[[], dict]) -> dict:
    """Run one measurement; an exception becomes ``{"error": ...}`` so the rest of the run goes on."""
    try:
        return body()
    except Exception as e:  # noqa: BLE001 - a benchmark reports failures and carries on
        log(f"  {what}: {type(e).__name__}: {e}")
        return {"error": f"{type(e).__name__}: {e}"}


def host_overhead(fn: Callable[[], Any], calls: int, repeats: int = 5) -> dict:
    """Host time per call of ``calls`` back-to-back calls (no sync between them), median of ``repeats``:
    ``submit_us`` until the last call returns, ``total_us`` until the GPU is done."""
    torch = _torch()
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    submit, total = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        submit.append((t1 - t0) / calls * 1e6)
        total.append((t2 - t0) / calls * 1e6)
    return {"submit_us": statistics.median(submit), "total_us": statistics.median(total), "calls": calls}


# ---------------------------------------------------------------- tilec


def tilec_accepts(keyword: str) -> bool:
    """Whether ``tilec.matmul`` takes ``keyword`` (e.g. ``autotune``, being added elsewhere)."""
    from tilec.kernels.gemm import matmul

    return keyword in inspect.signature(matmul).parameters


def tilec_call(a, b, c, autotune: bool, **kw) -> Callable[[], Any]:
    """``tilec.matmul(a, b, out=c)`` as a user calls it (host checks included)."""
    import tilec

    if autotune:
        kw["autotune"] = True
    return lambda: tilec.matmul(a, b, out=c, **kw)


def tilec_plan_info(a, b, c, autotune: bool, **kw) -> dict:
    """The config that ran (the heuristic's, or the autotuner's remembered choice) and the tensor-core
    instruction in its PTX."""
    from tilec.kernels.gemm import autotune as tilec_autotune
    from tilec.kernels.gemm import compile_matmul, plan_matmul

    plan = plan_matmul(a, b, out=c, **kw)
    config = plan.config
    info = {"config": config.describe(), "heuristic_config": config.describe(), "grid": plan.grid,
            "layouts": plan.layouts, "kernel": plan.spec.kernel_name}
    if autotune:
        try:  # tilec.matmul(autotune=True) asks tilec.autotune, which remembers its choice
            config = tilec_autotune(a, b, out=c, **kw).config
            info["config"], info["grid"] = config.describe(), config.grid(plan.m, plan.n)
        except Exception as e:  # noqa: BLE001 - a report: fall back to saying what we know
            info["config"] = f"autotuned (not read back: {type(e).__name__}: {e})"
    try:
        from triton_matmul import instruction_kind  # the same PTX reading as for Triton's kernels

        info["instr"] = instruction_kind(compile_matmul(plan.spec, config).asm.get("ptx"))
    except Exception as e:  # noqa: BLE001 - e.g. no triton here: the instruction stays unknown
        info["instr"] = {"kind": "unknown", "note": f"{type(e).__name__}: {e}"}
    return info


def tilec_bare_launch(a, b, c) -> Callable[[], Any]:
    """The compiled kernel's own launch with precomputed arguments (no planning), on torch's stream."""
    torch = _torch()
    from tilec.kernels.gemm import compile_matmul, plan_matmul

    plan = plan_matmul(a, b, out=c)
    kernel = compile_matmul(plan.spec, plan.config)
    args = plan.kernel_args(kernel, c)
    grid = (plan.grid, 1, 1)
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: kernel(*args, grid=grid, stream=stream)


def tilec_generic_launch(a, b, c) -> Callable[[], Any]:
    """:func:`tilec_bare_launch` of the generic kernel (no ``tile.aligned_rows``: alignment tested at run
    time), with the configuration ``tilec.matmul`` chose: what tilec.matmul ran before it specialised on
    the alignment of each operand's rows."""
    torch = _torch()
    from tilec.kernels.gemm import compile_matmul, plan_matmul

    plan = plan_matmul(a, b, out=c)
    if plan.spec.aligned:
        raise ValueError("the rows are 16-byte aligned: tilec.matmul runs the aligned kernel, not a generic one")
    kernel = compile_matmul(replace(plan.spec, align=()), plan.config)
    args = plan.kernel_args(kernel, c)
    grid = (plan.grid, 1, 1)
    stream = torch.cuda.current_stream().cuda_stream
    return lambda: kernel(*args, grid=grid, stream=stream)


# ---------------------------------------------------------------- sections of the main process


def run_ceiling(quick: bool) -> dict:
    """bench/mma_ceiling.py's settings on this GPU; the best is the mma.sync roof."""
    import mma_ceiling

    rows = []
    for chains, warps, per_sm in CEILING_SETTINGS:
        r = guarded(f"ceiling {chains}/{warps}/{per_sm}",
                    lambda: mma_ceiling.measure(chains, warps, per_sm, 4096, 20 if quick else 50))
        rows.append(r)
        if "tflops" in r:
            log(f"  mma.sync ceiling chains={chains} warps={warps} blocks/SM={per_sm}: {r['tflops']:.1f} TFLOP/s")
    best = max((r["tflops"] for r in rows if "tflops" in r), default=None)
    return {"rows": rows, "best_tflops": best}


def tilec_and_cublas(group: str, m: int, n: int, k: int, dtype: str, timing: Timing, autotune: bool,
                     **kw) -> dict:
    """One row: tilec and cuBLAS on the same inputs and reference (``kw``: e.g. allow_tf32=False)."""
    torch = _torch()
    seed = seed_of(m, n, k, dtype)
    a, b, c = make_inputs(m, n, k, dtype, seed)
    rows, ref = reference(a, b, seed)
    flop, tol = 2 * m * n * k, TOLERANCE[dtype]
    row = {"group": group, "m": m, "n": n, "k": k, "dtype": dtype, "flop": flop, "impls": {}}
    label = f"{m}x{n}x{k} {SHORT[dtype]}"
    tl = row["impls"]["tilec"] = guarded(f"tilec {label}", lambda: measure(
        tilec_call(a, b, c, autotune, **kw), c, rows, ref, tol, timing, flop))
    if "error" not in tl:
        tl.update(guarded("tilec config", lambda: tilec_plan_info(a, b, c, autotune, **kw)))
    if group == "ragged":
        row["impls"]["tilec_generic"] = guarded(f"tilec generic {label}", lambda: measure(
            tilec_generic_launch(a, b, c), c, rows, ref, tol, timing, flop))
    cublas = lambda: torch.matmul(a, b, out=c)  # noqa: E731
    row["impls"]["cublas"] = guarded(f"cuBLAS {label}", lambda: measure(cublas, c, rows, ref, tol, timing, flop))
    cb = row["impls"]["cublas"]
    if timing.rounds > 1 and "error" not in tl and "error" not in cb:
        # the table's TFLOP/s and t/cuB for these two come from rounds taking turns (see interleaved)
        turns = guarded(f"tilec/cuBLAS in turns {label}", lambda: interleaved(
            {"tilec": tilec_call(a, b, c, autotune, **kw), "cublas": cublas}, timing, flop))
        if "error" in turns:  # the row keeps the first timing, and says why
            row["rounds_error"] = turns["error"]
        for name, impl in (("tilec", tl), ("cublas", cb)):
            if name in turns:
                for key in ("tflops", "median_ms", "p20_ms", "p80_ms", "runs"):
                    if key in impl:
                        impl[f"sequential_{key}"] = impl.pop(key)
                impl.update(median_ms=turns[name]["median_ms"], tflops=turns[name]["tflops"],
                            round_ms=turns[name]["round_ms"], rounds=timing.rounds)
        if "cublas" in turns:  # kept beside the table's ratio of the medians (the two agree within noise)
            row["tilec_over_cublas_median_of_rounds"] = turns["cublas"]["tilec_speedup"]
    log(f"  {label}: " + ", ".join(f"{name} {_fmt_tflops(r)}" for name, r in row["impls"].items()))
    return row


def failed_row(group: str, m: int, n: int, k: int, dtype: str, names, error: Exception) -> dict:
    """A row whose inputs could not be made (e.g. out of memory): every implementation gets the error."""
    log(f"  {m}x{n}x{k} {SHORT[dtype]}: {type(error).__name__}: {error}")
    return {"group": group, "m": m, "n": n, "k": k, "dtype": dtype, "flop": 2 * m * n * k,
            "impls": {name: {"error": f"{type(error).__name__}: {error}"} for name in names}}


def run_rows(shapes, dtypes, timing: Timing, autotune: bool, **kw) -> list[dict]:
    """tilec and cuBLAS for each (shape, dtype)."""
    out = []
    for group, (m, n, k) in shapes:
        for dtype in dtypes:
            try:
                out.append(tilec_and_cublas(group, m, n, k, dtype, timing, autotune, **kw))
            except Exception as e:  # noqa: BLE001 - the inputs or the reference failed; the rest goes on
                out.append(failed_row(group, m, n, k, dtype, ("tilec", "cublas"), e))
    _torch().cuda.empty_cache()
    return out


def run_f32(sizes, timing: Timing, autotune: bool) -> list[dict]:
    """f32 without tf32: tilec's SIMT FMA path vs cuBLAS sgemm."""
    torch = _torch()
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        out = run_rows([("f32", (s, s, s)) for s in sizes], ["float32"], timing, autotune, allow_tf32=False)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    torch.cuda.empty_cache()
    return out


def run_fp8(shapes, timing: Timing) -> list[dict]:
    """tilec.matmul vs torch._scaled_mm on FP8 inputs (sm_90 and later)."""
    import tilec
    import tilec.kernels.gemm

    torch = _torch()
    out = []
    for m, n, k in shapes:
        label = f"{m}x{n}x{k} e4m3"
        try:
            seed = seed_of(m, n, k, "float16") + 7
            gen = torch.Generator(device="cuda").manual_seed(seed)
            a = torch.randn(m, k, device="cuda", generator=gen).to(torch.float8_e4m3fn)
            w = torch.randn(n, k, device="cuda", generator=gen).to(torch.float8_e4m3fn)
            sa = torch.rand((), device="cuda", generator=gen) + 0.5
            sb = torch.rand((), device="cuda", generator=gen) + 0.5
            c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            rows, ref = reference(a.to(torch.float16), w.t().to(torch.float16), seed)  # f16 holds e4m3 exactly
            ref = ref * (sa.double() * sb.double())
        except Exception as e:  # noqa: BLE001 - the rest goes on
            out.append(failed_row("fp8", m, n, k, "float8_e4m3fn", ("tilec", "scaled_mm", "scaled_mm_fast"), e))
            continue
        flop, tol = 2 * m * n * k, TOLERANCE["bfloat16"]
        row = {"group": "fp8", "m": m, "n": n, "k": k, "dtype": "float8_e4m3fn", "flop": flop, "impls": {}}
        tl = row["impls"]["tilec"] = guarded(f"tilec {label}", lambda: measure(
            lambda: tilec.matmul(a, w.t(), out=c, scale_a=sa, scale_b=sb), c, rows, ref, tol, timing, flop))
        if "error" not in tl:
            plan = tilec.kernels.gemm.plan_matmul(a, w.t(), out=c, scale_a=sa, scale_b=sb)
            tl.update(config=plan.config.describe(), kernel=plan.spec.kernel_name)
        for name, fast in (("scaled_mm", False), ("scaled_mm_fast", True)):
            row["impls"][name] = guarded(f"{name} {label}", lambda fast=fast: measure(
                lambda: torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                         use_fast_accum=fast, out=c), c, rows, ref, tol, timing, flop))
        log(f"  {label}: " + ", ".join(f"{name} {_fmt_tflops(r)}" for name, r in row["impls"].items()))
        out.append(row)
        del a, w, c, ref
        torch.cuda.empty_cache()
    return out


def run_overhead(calls: int, autotune: bool) -> dict:
    """Host cost per call on a tiny f16 problem: tilec.matmul, tilec's bare kernel launch, torch.matmul."""
    torch = _torch()
    m, n, k = OVERHEAD_SHAPE
    seed = seed_of(m, n, k, "float16")
    a, b, c = make_inputs(m, n, k, "float16", seed)
    rows, ref = reference(a, b, seed)
    tol = TOLERANCE["float16"]
    makers = {  # name -> makes the zero-argument call to time (making it may fail, e.g. a compile)
        "tilec.matmul": lambda: tilec_call(a, b, c, autotune),
        "tilec kernel launch": lambda: tilec_bare_launch(a, b, c),
        "torch.matmul": lambda: lambda: torch.matmul(a, b, out=c),
    }
    return {name: guarded(f"overhead {name}", lambda: checked_overhead(make(), c, rows, ref, tol, calls))
            for name, make in makers.items()}


def checked_overhead(fn: Callable[[], Any], c, rows, ref, tol: float, calls: int) -> dict:
    """Check one call's result on a NaN-filled ``c``, then measure its host cost."""
    torch = _torch()
    c.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    result = check(c, rows, ref, tol)
    result.update(host_overhead(fn, calls))
    return result


# ---------------------------------------------------------------- Triton, in worker processes


def run_triton_mode(column: str, disable_mma_v3: str | None, shapes, dtypes, timing: Timing,
                    overhead_calls: int, timeout_s: float) -> dict:
    """One worker process with or without DISABLE_MMA_V3 and its own fresh TRITON_CACHE_DIR."""
    with tempfile.TemporaryDirectory(prefix=f"gemm-{column}-") as tmp:
        spec = {"shapes": [[g, *s] for g, s in shapes], "dtypes": list(dtypes), "timing": asdict(timing),
                "overhead_calls": overhead_calls}
        spec_path, out_path = Path(tmp, "spec.json"), Path(tmp, "result.json")
        spec_path.write_text(json.dumps(spec))
        env = dict(os.environ, TRITON_CACHE_DIR=str(Path(tmp, "triton-cache")))
        env.pop("DISABLE_MMA_V3", None)
        if disable_mma_v3 is not None:
            env["DISABLE_MMA_V3"] = disable_mma_v3
        cmd = [sys.executable, str(Path(__file__).resolve()), "--triton-worker", str(spec_path),
               "--worker-out", str(out_path)]
        log(f"Triton worker '{column}' (DISABLE_MMA_V3={disable_mma_v3 or 'unset'})")
        t0 = time.perf_counter()
        try:
            # the worker logs to stderr (shown as it runs); its stdout is only Triton's own chatter
            proc = subprocess.run(cmd, env=env, timeout=timeout_s, stdout=subprocess.PIPE, text=True)
            rc, why = proc.returncode, None
            if proc.stdout.strip():
                log(proc.stdout.strip()[-2000:])
        except subprocess.TimeoutExpired:
            rc, why = None, f"timed out after {timeout_s:.0f} s"
        meta = {"disable_mma_v3": disable_mma_v3, "returncode": rc, "elapsed_s": time.perf_counter() - t0}
        if out_path.exists():
            result = json.loads(out_path.read_text())
        else:
            result = {"rows": []}
        if why or rc != 0:
            result.setdefault("error", why or f"worker exited with status {rc}")
        result["worker"] = meta
        if "error" in result:
            log(f"  Triton worker '{column}': {result['error']}")
        return result


def triton_worker(spec_path: str, out_path: str) -> int:
    """The worker: every shape/dtype through the autotuned Triton kernel, results as JSON in ``out_path``.

    Writes its result after every row, so a crash keeps what was measured."""
    torch = _torch()
    spec = json.loads(Path(spec_path).read_text())
    timing = Timing(**spec["timing"])
    result: dict = {"env": {"DISABLE_MMA_V3": os.environ.get("DISABLE_MMA_V3")}, "rows": []}

    def save():
        Path(out_path).write_text(json.dumps(result, indent=1, default=str))

    try:
        import triton

        import triton_matmul as tm
    except Exception as e:  # noqa: BLE001
        result["error"] = f"cannot import Triton: {type(e).__name__}: {e}"
        save()
        return 1
    result["triton_version"] = triton.__version__
    result["configs"] = [list(c) for c in tm.CONFIG_TABLE]
    save()
    for group, m, n, k in spec["shapes"]:
        for dtype in spec["dtypes"]:
            try:
                row = triton_row(tm, group, m, n, k, dtype, timing)
            except Exception as e:  # noqa: BLE001 - the inputs or the reference failed; the rest goes on
                row = failed_row(group, m, n, k, dtype, ("triton",), e)
                row = {**{x: row[x] for x in ("group", "m", "n", "k", "dtype")}, **row["impls"]["triton"]}
            result["rows"].append(row)
            save()
    torch.cuda.empty_cache()
    result["launch_overhead"] = guarded("Triton overhead", lambda: triton_overhead(tm, spec["overhead_calls"]))
    save()
    return 0


def triton_row(tm, group: str, m: int, n: int, k: int, dtype: str, timing: Timing) -> dict:
    """One shape/dtype through the autotuned kernel (tuned on its first call), then what won."""
    seed = seed_of(m, n, k, dtype)
    a, b, c = make_inputs(m, n, k, dtype, seed)
    rows, ref = reference(a, b, seed)
    flop = 2 * m * n * k
    label = f"{m}x{n}x{k} {SHORT[dtype]}"
    row = {"group": group, "m": m, "n": n, "k": k, "dtype": dtype}
    row.update(guarded(f"Triton {label}", lambda: measure(
        lambda: tm.launch(a, b, c), c, rows, ref, TOLERANCE[dtype], timing, flop)))
    if "error" not in row:
        row.update(tm.winning_kernel(a, b, c))
    log(f"  Triton {label}: {_fmt_tflops(row)} {row.get('config', '')} {row.get('instr', {}).get('kind', '')}")
    return row


def triton_overhead(tm, calls: int) -> dict:
    """Host cost per call on the tiny problem: the autotuned wrapper, and the JIT kernel with its config fixed."""
    torch = _torch()
    m, n, k = OVERHEAD_SHAPE
    seed = seed_of(m, n, k, "float16")
    a, b, c = make_inputs(m, n, k, "float16", seed)
    rows, ref = reference(a, b, seed)
    tm.launch(a, b, c)  # tunes this shape
    torch.cuda.synchronize()
    info = tm.winning_kernel(a, b, c)
    out = {"config": info.get("config"), "instr": info.get("instr")}
    fns = {"triton (autotuned)": lambda: tm.launch(a, b, c)}
    config = tm.chosen_config(a, b, c)
    if config is not None:
        fns["triton (fixed config)"] = tm.fixed_config_launcher(a, b, c, config)
    for name, fn in fns.items():
        out[name] = guarded(name, lambda: checked_overhead(fn, c, rows, ref, TOLERANCE["float16"], calls))
    return out


# ---------------------------------------------------------------- merging and printing


def _fmt_tflops(r: dict | None) -> str:
    if not r or "tflops" not in r:
        return "err" if r and "error" in r else "-"
    return f"{r['tflops']:.1f}" + ("" if r.get("ok") else "!")


def _ratio(x: dict | None, y: dict | None) -> float | None:
    if not x or not y or "tflops" not in x or "tflops" not in y or not y["tflops"]:
        return None
    return x["tflops"] / y["tflops"]


def merge_triton(rows: list[dict], column: str, worker: dict) -> None:
    """Put each worker row next to the main process's row of the same shape and dtype."""
    by_key = {(r["m"], r["n"], r["k"], r["dtype"]): r for r in worker.get("rows", [])}
    for row in rows:
        r = by_key.get((row["m"], row["n"], row["k"], row["dtype"]))
        if r is not None:
            row["impls"][column] = {k: v for k, v in r.items() if k not in ("group", "m", "n", "k", "dtype")}
        elif "error" in worker:
            row["impls"][column] = {"error": worker["error"]}


def add_ratios(rows: list[dict], ceiling: float | None) -> None:
    for row in rows:
        im = row["impls"]
        t = im.get("tilec")
        row["ratios"] = {f"tilec/{name}": _ratio(t, im.get(name)) for name in ("cublas", *TRITON_MODES)}
        if row["dtype"] != "float32":
            row["ratios"]["tilec/ceiling"] = t["tflops"] / ceiling if ceiling and t and "tflops" in t else None


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _triton_cfg(r: dict | None) -> str:
    if not r or "config" not in r:
        return "-"
    return f"{r['config']} {r.get('instr', {}).get('kind', '?')}"


def shape_text(row: dict) -> str:
    return f"{row['m']}x{row['n']}x{row['k']}"


def _print_pairs(rows: list[dict], other: str, other_title: str, info: str, label: Callable[[dict], str]) -> None:
    """tilec against one other implementation, row by row: TFLOP/s, their ratio and tilec's ``info``."""
    print(f"{'shape':<23} {'tilec':>7} {other_title:>7} {'ratio':>6}  tilec {info}")
    for row in rows:
        im = row["impls"]
        print(f"{label(row):<23} {_fmt_tflops(im.get('tilec')):>7} {_fmt_tflops(im.get(other)):>7} "
              f"{_fmt_ratio(_ratio(im.get('tilec'), im.get(other))):>6}  {(im.get('tilec') or {}).get(info, '-')}")


def print_table(rows: list[dict], ceiling: float | None, f32_rows: list[dict], overhead: dict,
                fp8_rows: list[dict] = ()) -> None:
    """The human-readable report (the JSON has everything)."""
    roof = f"mma.sync ceiling from registers: {ceiling:.1f} TFLOP/s" if ceiling else "no mma.sync ceiling"
    print(f"\nTFLOP/s, medians ('!' = failed check). Tri-ms = Triton with DISABLE_MMA_V3=1 (mma.sync). {roof}")
    head = (f"{'shape (MxNxK)':<18} {'dt':<4} {'tilec':>7} {'cuBLAS':>7} {'Triton':>7} {'Tri-ms':>7} "
            f"{'t/cuB':>6} {'t/Tri':>6} {'t/TriMS':>7} {'t/ceil':>6}  {'tilec config':<38} "
            f"{'Triton config, instr':<28} Tri-ms config, instr")
    print(head)
    print("-" * len(head))
    for row in rows:
        im, ra = row["impls"], row["ratios"]
        print(f"{shape_text(row):<18} {SHORT[row['dtype']]:<4} "
              f"{_fmt_tflops(im.get('tilec')):>7} {_fmt_tflops(im.get('cublas')):>7} "
              f"{_fmt_tflops(im.get('triton')):>7} {_fmt_tflops(im.get('triton_mma_sync')):>7} "
              f"{_fmt_ratio(ra.get('tilec/cublas')):>6} {_fmt_ratio(ra.get('tilec/triton')):>6} "
              f"{_fmt_ratio(ra.get('tilec/triton_mma_sync')):>7} {_fmt_ratio(ra.get('tilec/ceiling')):>6}  "
              f"{(im.get('tilec') or {}).get('config', '-')[:38]:<38} {_triton_cfg(im.get('triton')):<28} "
              f"{_triton_cfg(im.get('triton_mma_sync'))}")
    ragged = [row for row in rows if "tilec_generic" in row["impls"]]
    if ragged:
        print("\nragged rows: tilec.matmul (kernel for each operand's row alignment) vs tilec's generic kernel")
        _print_pairs(ragged, "tilec_generic", "generic", "kernel", lambda row: f"{shape_text(row)} {SHORT[row['dtype']]}")
    if f32_rows:
        print("\nf32 without tf32: tilec SIMT vs cuBLAS sgemm (torch.backends.cuda.matmul.allow_tf32 = False)")
        _print_pairs(f32_rows, "cublas", "cuBLAS", "config", shape_text)
    if fp8_rows:
        print("\nFP8 e4m3 in, bf16 out, per-tensor scales: tilec.matmul(a, w.t()) vs torch._scaled_mm (cuBLASLt), "
              "TFLOP/s")
        print(f"  {'shape':<18} {'tilec':>7} {'_scaled_mm':>10} {'fast_accum':>10} {'t/sm':>6} {'t/fast':>6}  config")
        for row in fp8_rows:
            im = row["impls"]
            t, s, f = (im.get(x) for x in ("tilec", "scaled_mm", "scaled_mm_fast"))
            print(f"  {shape_text(row):<18} {_fmt_tflops(t):>7} {_fmt_tflops(s):>10} {_fmt_tflops(f):>10} "
                  f"{_fmt_ratio(_ratio(t, s)):>6} {_fmt_ratio(_ratio(t, f)):>6}  {(t or {}).get('config', '-')}")
    if overhead:
        m, n, k = OVERHEAD_SHAPE
        print(f"\nhost cost per call, {m}x{n}x{k} f16, back-to-back calls, microseconds "
              "(submit: until the last call returns; total: until the GPU is done)")
        for name, r in overhead.items():
            if "ratio" in r:
                print(f"  {name:<44} {r['ratio']:.2f} (submit)")
            elif "error" in r:
                print(f"  {name:<44} error: {r['error']}")
            else:
                flag = "" if r.get("ok") else "  (check FAILED)"
                print(f"  {name:<44} submit {r['submit_us']:7.1f}   total {r['total_us']:7.1f}{flag}")
    failed: dict[str, list[str]] = {}  # one line per distinct problem (a dead worker fails every row alike)
    for row in [*rows, *f32_rows, *fp8_rows]:
        for name, r in row["impls"].items():
            if "error" in r:
                problem = f"{name}: {r['error']}"
            elif not r.get("ok"):
                problem = f"{name}: rel err {r.get('rel_err', float('nan')):.2e} (tol {r.get('tol')}), " \
                          f"{r.get('nonfinite')} non-finite"
            else:
                continue
            failed.setdefault(problem, []).append(f"{shape_text(row)} {SHORT[row['dtype']]}")
    if failed:
        print("\nFAILED:")
        for problem, where in failed.items():
            at = ", ".join(where) if len(where) <= 3 else f"{len(where)} rows"
            print(f"  {problem}  [{at}]")


# ---------------------------------------------------------------- environment, CLI


def environment() -> dict:
    """GPU, library versions and the tilec git revision, for the JSON."""
    torch = _torch()
    props = torch.cuda.get_device_properties(0)
    env = {"gpu": torch.cuda.get_device_name(0), "sm_count": props.multi_processor_count,
           "capability": list(torch.cuda.get_device_capability(0)), "python": platform.python_version(),
           "torch": torch.__version__, "cuda": torch.version.cuda}
    try:
        import triton

        env["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        env["triton"] = None
    import tilec

    env["tilec"] = tilec.__version__
    try:
        rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        env["tilec_git_rev"] = rev + ("-dirty" if dirty else "") if rev else None
    except (OSError, subprocess.SubprocessError):
        env["tilec_git_rev"] = None
    for what in ("fp16", "bf16"):  # what cuBLAS may do in its reductions
        key = f"allow_{what}_reduced_precision_reduction"
        env[f"torch_{key}"] = getattr(torch.backends.cuda.matmul, key, None)
    return env


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:5]))
    p.add_argument("--quick", action="store_true",
                   help="only 4096^3 and 16x4096x4096 (f16 unless --dtypes; f32 4096^3 only if --shapes "
                        "names f32), fewer runs")
    p.add_argument("--shapes", default=None,
                   help="comma-separated groups: square, llm, decode, ragged, f32 (default: all)")
    p.add_argument("--dtypes", default=None,
                   help="comma-separated: float16, bfloat16 (default: both; float16 with --quick)")
    p.add_argument("--f32-8192", action="store_true", help="add 8192^3 to the f32 section")
    p.add_argument("--skip-triton", action="store_true", help="no Triton workers")
    p.add_argument("--skip-ceiling", action="store_true", help="no mma.sync ceiling")
    p.add_argument("--autotune", action="store_true", help="pass autotune=True to tilec.matmul (if it takes it)")
    p.add_argument("--timer", choices=("events", "do_bench"), default="events",
                   help="CUDA events with L2 flush (default) or triton.testing.do_bench")
    p.add_argument("--min-runs", type=int, default=None, help="timed calls per measurement, at least (50)")
    p.add_argument("--rounds", type=int, default=None,
                   help="rounds in which tilec and cuBLAS are timed again taking turns (5; 1: no rounds)")
    p.add_argument("--overhead-calls", type=int, default=2000, help="calls per launch-overhead measurement")
    p.add_argument("--worker-timeout", type=float, default=600, help="seconds per Triton worker")
    p.add_argument("--json", help="where to write the results (default: $OUT/ or bench/results/gemm-<time>.json)")
    p.add_argument("--triton-worker", metavar="SPEC", help=argparse.SUPPRESS)
    p.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    groups = [g.strip() for g in (args.shapes or "square,llm,decode,ragged,f32,fp8").split(",") if g.strip()]
    bad = [g for g in groups if g not in (*SHAPES, "f32", "fp8")]
    if bad:
        p.error(f"--shapes: unknown group(s) {', '.join(bad)}; expected square, llm, decode, ragged, f32, fp8")
    dtypes = [d.strip() for d in (args.dtypes or ",".join(DTYPES)).split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad:
        p.error(f"--dtypes: unknown {', '.join(bad)}; expected float16, bfloat16")
    if args.rounds is not None and args.rounds < 1:
        p.error(f"--rounds: expected at least 1 (1: no rounds), got {args.rounds}")
    args.groups, args.dtype_list = groups, dtypes
    return args


def plan(args: argparse.Namespace):
    """(shapes, dtypes, f32 sizes, timing) from the CLI; --quick narrows the shapes and dtypes."""
    if args.quick:
        shapes = [(g, s) for g, s in QUICK_SHAPES if g in args.groups]
        dtypes = args.dtype_list if args.dtypes else ["float16"]
        f32 = [4096] if args.shapes is not None and "f32" in args.groups else []
        timing = Timing(rep_ms=100.0, min_runs=args.min_runs or 20, max_runs=300, rounds=3 if args.rounds is None else args.rounds)
    else:
        shapes = [(g, s) for g in SHAPES if g in args.groups for s in SHAPES[g]]
        dtypes = args.dtype_list
        f32 = [*F32_SIZES, *([8192] if args.f32_8192 else [])] if "f32" in args.groups else []
        timing = Timing(min_runs=args.min_runs or 50, rounds=Timing.rounds if args.rounds is None else args.rounds)
    timing.timer = args.timer
    return shapes, dtypes, f32, timing


def default_json_path() -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(os.environ["OUT"]) if os.environ.get("OUT") else BENCH / "results"
    return base / f"gemm-{stamp}.json"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.path.insert(0, str(BENCH))  # mma_ceiling, triton_matmul
    if args.triton_worker:
        return triton_worker(args.triton_worker, args.worker_out)
    try:
        torch = _torch()
    except ImportError:
        log("needs torch with CUDA")
        return 1
    if not torch.cuda.is_available():
        log("no CUDA device")
        return 1
    shapes, dtypes, f32_sizes, timing = plan(args)
    autotune = args.autotune
    if autotune and not tilec_accepts("autotune"):
        log("--autotune: tilec.matmul takes no 'autotune' keyword yet; measuring the heuristic's config")
        autotune = False
    env = environment()
    log(f"{env['gpu']}, torch {env['torch']}, triton {env['triton']}, tilec {env['tilec_git_rev']}")
    t_start = time.perf_counter()
    report: dict = {"schema": "tilec-gemm-bench/1", "date": datetime.datetime.now().isoformat(timespec="seconds"),
                    "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
                    "environment": env, "timing": asdict(timing), "autotune": autotune,
                    "tolerance": TOLERANCE, "layout": "A row-major M x K, B row-major K x N, C M x N"}

    ceiling = None
    if not args.skip_ceiling:
        log("mma.sync ceiling")
        report["ceiling"] = run_ceiling(args.quick)
        ceiling = report["ceiling"]["best_tflops"]
    log("tilec and cuBLAS")
    rows = run_rows(shapes, dtypes, timing, autotune)
    log("f32 (no tf32)")
    f32_rows = run_f32(f32_sizes, timing, autotune)
    fp8_rows = []
    if "fp8" in args.groups and torch.cuda.get_device_capability() >= (9, 0):
        log("FP8 (tilec vs torch._scaled_mm)")
        fp8_rows = run_fp8(FP8_SHAPES[1:2] if args.quick else FP8_SHAPES, timing)
    log("host cost per call")
    overhead = run_overhead(args.overhead_calls, autotune)

    report["triton"] = {}
    if not args.skip_triton:
        torch.cuda.empty_cache()
        for column, flag in TRITON_MODES.items():
            worker = run_triton_mode(column, flag, shapes, dtypes, timing, args.overhead_calls, args.worker_timeout)
            merge_triton(rows, column, worker)
            report["triton"][column] = {k: v for k, v in worker.items() if k != "rows"}
            for name, r in (worker.get("launch_overhead") or {}).items():
                if isinstance(r, dict) and ("submit_us" in r or "error" in r):
                    overhead[name if flag is None else f"{name}, DISABLE_MMA_V3=1"] = r
    add_ratios(rows, ceiling)
    add_ratios(f32_rows, None)
    for row in fp8_rows:
        im = row["impls"]
        row["ratios"] = {"tilec/scaled_mm": _ratio(im.get("tilec"), im.get("scaled_mm")),
                         "tilec/scaled_mm_fast": _ratio(im.get("tilec"), im.get("scaled_mm_fast"))}
    tilec_host, triton_host = overhead.get("tilec.matmul", {}), overhead.get("triton (autotuned)", {})
    if "submit_us" in tilec_host and "submit_us" in triton_host:
        overhead["tilec.matmul / triton (autotuned)"] = {
            "ratio": tilec_host["submit_us"] / triton_host["submit_us"]}
    report.update(rows=rows, f32=f32_rows, fp8=fp8_rows, launch_overhead={"shape": list(OVERHEAD_SHAPE), "dtype": "float16",
                                                          "results": overhead})
    report["elapsed_s"] = time.perf_counter() - t_start

    print_table(rows, ceiling, f32_rows, overhead, fp8_rows)
    path = Path(args.json) if args.json else default_json_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1, default=str))
    print(f"\nJSON: {path}  ({report['elapsed_s']:.0f} s)")
    failed = any("error" in r or not r.get("ok") for row in [*rows, *f32_rows, *fp8_rows]
                 for r in row["impls"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
