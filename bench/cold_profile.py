"""Where a fresh process's first compile spends its time: imports, passes, LLVM, ptxas.

    python bench/cold_profile.py                  # aligned GEMM kernel, top 30 functions
    python bench/cold_profile.py --kernel generic --top 50 --json cold.json

``bench/compile_time.py`` says how long a user waits; this script says why.
Each part runs in a fresh process with empty caches (``TILEC_CACHE_DIR`` a new
temporary folder), after an untimed run that writes Python's ``.pyc`` files:

- **imports**: ``python -X importtime -c "import tilec.api"``, the modules
  with the largest own time and their cumulative time;
- **phases**: the import, building the module, ``tilec.compile`` and
  ``.cubin("sm_80")`` (ptxas, no GPU touched) with wall times;
- **profile**: ``cProfile`` over import and compile, the functions with the
  largest cumulative and own time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCH = "sm_80"


def _worker(kernel: str, profile: bool, top: int) -> None:
    """In a fresh process: import and compile once, print phase times (and a profile) as JSON."""
    import cProfile
    import io
    import pstats
    import time

    prof = cProfile.Profile() if profile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    from tilec.api import compile as tilec_compile
    from tilec.kernels.gemm_config import MatmulConfig
    from tilec.kernels.gemm_ir import MatmulSpec, build_module

    t1 = time.perf_counter()
    spec = MatmulSpec("float16", "float16", align=16 if kernel == "aligned" else 0)
    module = build_module(spec)
    t2 = time.perf_counter()
    compiled = tilec_compile(module, pipeline=MatmulConfig((128, 128, 32), (4, 2), 4), arch=ARCH)
    t3 = time.perf_counter()
    compiled.cubin(ARCH)
    t4 = time.perf_counter()
    if prof:
        prof.disable()
    out = {"import": t1 - t0, "build": t2 - t1, "compile": t3 - t2, "ptxas": t4 - t3, "total": t4 - t0}
    if prof:
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        stats.sort_stats("cumulative").print_stats(top)
        stats.sort_stats("tottime").print_stats(top)
        out["profile"] = text.getvalue()
    print("RESULT " + json.dumps(out))


def _spawn(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TILEC_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, check=False)


def _result(proc: subprocess.CompletedProcess[str]) -> dict:
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return json.loads(lines[-1][len("RESULT "):])


def _imports(cache: Path, top: int) -> list[dict]:
    """The modules of ``import tilec.api`` with the largest own import time."""
    proc = _spawn(["-X", "importtime", "-c", "import tilec.api"], cache)
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line[len("import time:"):].split("|")
        rows.append({"module": name.strip(), "own_ms": int(own) / 1e3, "cumulative_ms": int(cumulative) / 1e3})
    return sorted(rows, key=lambda r: -r["own_ms"])[:top]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernel", choices=("aligned", "generic"), default="aligned")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes timed for the phases (median)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--worker", nargs=2, metavar=("KERNEL", "PROFILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker[0], args.worker[1] == "1", args.top)
        return 0
    me = str(Path(__file__).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        _result(_spawn([me, "--worker", args.kernel, "0"], Path(tmp) / "warmup"))  # writes the .pyc files
        phases = [_result(_spawn([me, "--worker", args.kernel, "0"], Path(tmp) / f"run{i}"))
                  for i in range(args.runs)]
        imports = _imports(Path(tmp) / "imports", args.top)
        profile = _result(_spawn([me, "--worker", args.kernel, "1", "--top", str(args.top)], Path(tmp) / "prof"))
    median = {k: sorted(p[k] for p in phases)[len(phases) // 2] for k in phases[0]}
    print(f"fresh process, {args.kernel} kernel, median of {args.runs}: "
          + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in median.items()))
    print("\nimport tilec.api, largest own times (ms):")
    for r in imports:
        print(f"  {r['own_ms']:8.1f} {r['cumulative_ms']:8.1f}  {r['module']}")
    print("\n" + profile["profile"])
    if args.json:
        args.json.write_text(json.dumps({"kernel": args.kernel, "phases": phases, "median": median,
                                         "imports": imports, "profile": profile["profile"]}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
