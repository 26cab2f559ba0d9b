"""Compile time of one GEMM configuration: tilec against Triton, side by side on this machine.

    python bench/compile_time.py                 # 5 fresh processes per measurement
    python bench/compile_time.py --runs 3 --json compile_time.json
    python bench/compile_time.py --no-triton

Every measurement runs in a fresh Python process (this script started again
with ``--worker``) with empty caches: a new temporary ``TILEC_CACHE_DIR``
and ``TRITON_CACHE_DIR`` per cold run (Python's ``.pyc`` files are not such
a cache: an untimed warm-up run writes them first, as installing a package
does). Measured, as medians over the runs:

- **tilec cold**: ``tilec.compile(build_module(f16 GEMM), pipeline=<128x128x32,
  warps 4x2, 4 stages>, arch="sm_80")`` and ``.cubin("sm_80")`` (ptxas for
  that target, touching no GPU, as Triton's compile below does), from
  building the module to holding the cubin; ``import tilec`` is timed
  separately (``import``).
- **tilec cold, aligned**: the same for the kernel specialised with
  ``tile.aligned_rows = 16`` (``MatmulSpec(..., align=16)``, what
  ``tilec.matmul`` runs on 16-byte aligned rows): the counterpart of the
  Triton compile below, which is specialised for pointers and sizes divisible
  by 16 as Triton's launcher does for such arguments.
- **tilec cold, 2-byte rows**: the kernel specialised with
  ``tile.aligned_rows = 2`` (``align=2``: contiguous rows, nothing known of
  their alignment beyond the element's; what ``tilec.matmul`` runs on rows
  of an odd number of f16): element loads, synchronous copies. The
  counterpart of Triton's unhinted compile below.
- **tilec warm**: the same call in another fresh process whose cache folder
  the cold run filled (the compile cache and the cubin cache both hit);
  ``warm, 2nd call`` is a second identical call in that process. The first
  call includes what a process does once: the stat calls of the ptxas
  binary and of tilec's sources for the cache keys (a millisecond).
- **CPU time**: user + system seconds of the worker and its children
  (ptxas) over the same span, which another load on the machine disturbs
  less than wall time (tilec's LLVM runs in a second thread meanwhile its IR
  is verified, so on a free core its wall time is below its CPU time).
- **Triton cold**: ``triton.compile(ASTSource(matmul_kernel, ...),
  target=GPUTarget("cuda", 80, 32))`` of the usual Triton GEMM (below)
  with the same block sizes (BLOCK 128x128x32, GROUP_M 8, 4 stages, f16,
  unit strides specialised as Triton's launcher does) for ``num_warps=8``
  (256 threads, as tilec's 4x2 warps) and ``num_warps=4``; the result holds
  the cubin (Triton runs its own ptxas). No GPU is needed. Skipped with a
  message if ``triton`` cannot be imported.
- **Triton cold, no hints**: the same with ``num_warps=8`` but without the
  divisibility-16 hints (what Triton compiles for sizes or pointers that
  are not multiples of 16; the unit inner strides stay specialised): the
  counterpart of tilec's 2-byte-rows kernel. tilec's generic kernel (any
  strides and alignment, its vector or element paths chosen at run time:
  what ``tilec.matmul`` runs on views without a unit stride) is measured
  against it too.

The goal (issue 6) is tilec cold <= 0.5 x Triton cold with the same block
sizes; the like-for-like pairs are the aligned kernel against the hinted
Triton compile and the 2-byte-rows kernel against the unhinted one.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BLOCK = (128, 128, 32)
WARPS = (4, 2)
STAGES = 4
ARCH = "sm_80"


# ---------------------------------------------------------------- the Triton kernel

# The Triton side compiles bench/triton_matmul.py's kernel (the one bench/gemm.py times), without
# its autotuner: one configuration, the same block sizes as tilec's.


# ---------------------------------------------------------------- workers (run in a fresh process)


def _worker_tilec(repeat: int, align: int = 0) -> dict:
    t0 = time.perf_counter()
    from tilec.api import compile as tilec_compile
    from tilec.kernels.gemm_config import MatmulConfig
    from tilec.kernels.gemm_ir import MatmulSpec, build_module

    t1 = time.perf_counter()
    spec = MatmulSpec("float16", "float16", align=align)
    config = MatmulConfig(BLOCK, WARPS, STAGES)
    times, cpu = [], []
    for _ in range(repeat):
        c = _cpu()
        t = time.perf_counter()
        kernel = tilec_compile(build_module(spec), pipeline=config, arch=ARCH)
        cubin = kernel.cubin(ARCH)  # ptxas for the target, no GPU touched: what triton.compile does
        times.append(time.perf_counter() - t)
        cpu.append(_cpu() - c)
        assert cubin[:4] == b"\x7fELF"
    return {"import": t1 - t0, "compile": times, "cpu": cpu, "ptx_bytes": len(kernel.asm["ptx"]),
            "cubin_bytes": len(cubin)}


def _worker_triton(num_warps: int, repeat: int, hints: bool = True) -> dict:
    t0 = time.perf_counter()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import triton
    import triton_matmul
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    t1 = time.perf_counter()
    fn = triton_matmul.matmul_kernel.fn  # the @triton.jit function under the autotuner
    bm, bn, bk = BLOCK
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                 "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
                 "stride_cm": "i32", "stride_cn": "constexpr",
                 "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "GROUP_M": "constexpr"}
    constexprs = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1,
                  "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}
    # what Triton's launcher specialises for a 16-aligned problem: pointers and ints divisible by 16
    aligned = ("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm")
    attrs = {(fn.arg_names.index(n),): [["tt.divisibility", 16]] for n in aligned} if hints else {}
    target = GPUTarget("cuda", 80, 32)
    times, cpu = [], []
    for _ in range(repeat):
        c = _cpu()
        t = time.perf_counter()
        src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
        compiled = triton.compile(src, target=target, options={"num_warps": num_warps, "num_stages": STAGES})
        cubin = compiled.asm["cubin"]
        times.append(time.perf_counter() - t)
        cpu.append(_cpu() - c)
        assert cubin[:4] == b"\x7fELF"
    return {"import": t1 - t0, "compile": times, "cpu": cpu, "ptx_bytes": len(compiled.asm["ptx"]),
            "cubin_bytes": len(cubin), "triton": triton.__version__}


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its finished children (ptxas) so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _worker(argv: list[str]) -> None:
    kind, repeat = argv[0], int(argv[1])
    if kind.startswith("tilec"):
        out = _worker_tilec(repeat, align=int(kind.removeprefix("tilec").removeprefix("_a") or 0))
    else:
        generic = kind.endswith("g")  # no divisibility hints: what a launch with odd sizes compiles
        out = _worker_triton(int(kind.removeprefix("triton").removesuffix("g")), repeat, hints=not generic)
    print("RESULT " + json.dumps(out))


# ---------------------------------------------------------------- driver


def _spawn(kind: str, repeat: int, cache: Path) -> dict:
    env = dict(os.environ, TILEC_CACHE_DIR=str(cache / "tilec"), TRITON_CACHE_DIR=str(cache / "triton"))
    # Python's own bytecode cache is not one of the caches measured: let it be written (once, by
    # the untimed warm-up run) as for any installed package
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name in ("TILEC_COMPILE_CACHE", "TILEC_VERIFY_EACH"):  # the defaults are measured
        env.pop(name, None)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9's default, without its warning
    proc = subprocess.run([sys.executable, __file__, "--worker", kind, str(repeat)], env=env,
                          capture_output=True, text=True)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker {kind} failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return json.loads(lines[-1][len("RESULT "):])


def _triton_available() -> str | None:
    proc = subprocess.run([sys.executable, "-c", "import triton; print(triton.__version__)"],
                          capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="fresh processes per measurement (default 5)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--no-triton", action="store_true", help="measure tilec only")
    args = ap.parse_args()

    results: dict[str, dict] = {}
    samples: dict[str, list[float]] = {}
    version = None if args.no_triton else _triton_available()
    # untimed warm-up runs: Python writes the .pyc files of tilec (and Triton) once
    with tempfile.TemporaryDirectory(prefix="compile-time-") as tmp:
        _spawn("tilec", 1, Path(tmp))
        if version is not None:
            _spawn("triton8", 1, Path(tmp))

    def add(name: str, value: float) -> None:
        samples.setdefault(name, []).append(value)

    if args.no_triton:
        print("Triton: skipped (--no-triton)")
    elif version is None:
        print("Triton: skipped (cannot import triton in this Python; pip install triton to compare)")
    paired: dict[int, list[float]] = {8: [], 4: []}  # tilec cold / Triton cold, run by run
    paired_aligned: dict[int, list[float]] = {8: [], 4: []}  # the same for tilec's aligned kernel
    paired_generic: list[float] = []  # tilec cold / Triton cold without divisibility hints (8 warps)
    paired_rows2: list[float] = []  # the same for tilec's 2-byte-rows kernel
    # the measurements interleaved, run by run, so that a change of load on the machine meets all alike
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="compile-time-") as tmp:
            cold = _spawn("tilec", 1, Path(tmp))
            warm = _spawn("tilec", 2, Path(tmp))
        add("tilec import", cold["import"])
        add("tilec cold", cold["compile"][0])
        add("tilec cold, CPU time", cold["cpu"][0])
        add("tilec warm", warm["compile"][0])
        add("tilec warm, 2nd call", warm["compile"][1])
        with tempfile.TemporaryDirectory(prefix="compile-time-") as tmp:
            aligned = _spawn("tilec_a16", 1, Path(tmp))
        add("tilec cold, aligned", aligned["compile"][0])
        # what a user waits for in a fresh process: the import, then the first compile
        add("tilec fresh process, generic", cold["import"] + cold["compile"][0])
        add("tilec fresh process, aligned", aligned["import"] + aligned["compile"][0])
        add("tilec cold, aligned, CPU time", aligned["cpu"][0])
        with tempfile.TemporaryDirectory(prefix="compile-time-") as tmp:
            rows2 = _spawn("tilec_a2", 1, Path(tmp))
        add("tilec cold, 2-byte rows", rows2["compile"][0])
        if version is None:
            continue
        with tempfile.TemporaryDirectory(prefix="compile-time-") as tmp:
            generic = _spawn("triton8g", 1, Path(tmp))
        add("triton cold, num_warps=8, no hints", generic["compile"][0])
        paired_generic.append(samples["tilec cold"][-1] / generic["compile"][0])
        paired_rows2.append(samples["tilec cold, 2-byte rows"][-1] / generic["compile"][0])
        for warps in (8, 4):
            with tempfile.TemporaryDirectory(prefix="compile-time-") as tmp:
                cold = _spawn(f"triton{warps}", 1, Path(tmp))
                warm = _spawn(f"triton{warps}", 1, Path(tmp))
            add("triton import", cold["import"])
            add(f"triton cold, num_warps={warps}", cold["compile"][0])
            add(f"triton fresh process, num_warps={warps}", cold["import"] + cold["compile"][0])
            add(f"triton cold, num_warps={warps}, CPU time", cold["cpu"][0])
            add(f"triton warm, num_warps={warps}", warm["compile"][0])
            paired[warps].append(samples["tilec cold"][-1] / cold["compile"][0])
            paired_aligned[warps].append(samples["tilec cold, aligned"][-1] / cold["compile"][0])

    for name, values in samples.items():
        results[name] = {"median_s": statistics.median(values), "min_s": min(values), "max_s": max(values),
                         "runs": len(values)}
    print(f"GEMM f16 {BLOCK[0]}x{BLOCK[1]}x{BLOCK[2]}, warps {WARPS[0]}x{WARPS[1]}, {STAGES} stages, {ARCH} "
          f"(medians of {args.runs} fresh processes; Triton {version or '-'})")
    print(f"{'measurement':36s} {'median':>10s} {'min':>10s} {'max':>10s}")
    for name, r in results.items():
        print(f"{name:36s} {r['median_s'] * 1e3:8.1f}ms {r['min_s'] * 1e3:8.1f}ms {r['max_s'] * 1e3:8.1f}ms")
    ratios = {}
    if "triton cold, num_warps=8" in results:
        def ratio(a: str, b: str) -> float:
            return results[a]["median_s"] / results[b]["median_s"]

        # like for like: each tilec kernel against the Triton compile with the same specialisation
        for warps in (8, 4):
            triton_cold = f"triton cold, num_warps={warps}"
            ratios[f"tilec cold, aligned / triton cold (num_warps={warps})"] = ratio("tilec cold, aligned", triton_cold)
            ratios[f"  median of the ratios of each run, aligned (num_warps={warps})"] = (
                statistics.median(paired_aligned[warps]))
            if warps == 8:
                ratios["  the same in CPU time, aligned (num_warps=8)"] = ratio(
                    "tilec cold, aligned, CPU time", "triton cold, num_warps=8, CPU time")
        ratios["tilec cold, 2-byte rows / triton cold without hints (num_warps=8)"] = ratio(
            "tilec cold, 2-byte rows", "triton cold, num_warps=8, no hints")
        ratios["  median of the ratios of each run, 2-byte rows (num_warps=8)"] = statistics.median(paired_rows2)
        ratios["tilec cold / triton cold without hints (num_warps=8)"] = ratio(
            "tilec cold", "triton cold, num_warps=8, no hints")
        ratios["  median of the ratios of each run, generic (num_warps=8)"] = statistics.median(paired_generic)
        # tilec's generic kernel (any strides and alignment, checked at run time) against the
        # specialised Triton compile, as reported before
        for warps in (8, 4):
            ratios[f"tilec cold / triton cold (num_warps={warps})"] = ratio(
                "tilec cold", f"triton cold, num_warps={warps}")
            ratios[f"  the same in CPU time (num_warps={warps})"] = ratio(
                "tilec cold, CPU time", f"triton cold, num_warps={warps}, CPU time")
            ratios[f"  median of the ratios of each run (num_warps={warps})"] = statistics.median(paired[warps])
        for warps in (8, 4):
            ratios[f"fresh process (import + compile), aligned / triton (num_warps={warps})"] = ratio(
                "tilec fresh process, aligned", f"triton fresh process, num_warps={warps}")
            ratios[f"fresh process (import + compile), generic / triton (num_warps={warps})"] = ratio(
                "tilec fresh process, generic", f"triton fresh process, num_warps={warps}")
        for name, r in ratios.items():
            print(f"{name}: {r:.2f}  (goal <= 0.5)")
    print(f"tilec warm: {results['tilec warm']['median_s'] * 1e3:.1f} ms  (goal <= 20 ms)")
    if args.json:
        args.json.write_text(json.dumps({"config": {"block": BLOCK, "warps": WARPS, "stages": STAGES, "arch": ARCH},
                                         "triton": version, "results": results, "ratios": ratios}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
