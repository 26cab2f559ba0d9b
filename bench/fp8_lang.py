"""FP8 GEMMs written in tilec.lang (examples/lang/fp8.py) against Triton, cuBLASLt and tilec.matmul.

    python bench/fp8_lang.py [--json out.json] [--sizes 4096,8192]

E4M3 A (M x K) and W (N x K), C = A @ W.T in f16, TFLOP/s (2 M N K / time, the median of batches of
back-to-back calls: bench/softmax.py's timer), every output checked against float64 torch first
(:data:`TOLERANCE`). Rows:

- ``tutorial``: Triton's matmul tutorial as its FP8 run writes it (pointers, B = W.T K-major), compiled
  by tilec for sm_90a (the FP8 warpgroup MMA over ``cp.async`` stages);
- ``triton``: the same kernel in Triton (bench/pointers.py's ``triton_matmul_tutorial``), same tiles,
  warps and stages;
- ``linear``: examples/lang/fp8.py's window form (``tl.dot(x, tl.trans(w))``), bulk tensor copies;
- ``scaled_mm``: ``torch._scaled_mm`` (cuBLASLt) with unit scales, ``use_fast_accum`` as tilec's and
  Triton's wgmma accumulate;
- ``tilec.matmul``: the library's FP8 GEMM (persistent, warp-specialised).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

import tilec
from lang import _example  # bench/lang.py's loader of examples/lang (this folder is on sys.path)
from pointers import triton_matmul_tutorial
from softmax import time_ms  # bench/softmax.py's timer

TOLERANCE = 2e-2
"""Relative to the largest |C|: Hopper's FP8 tensor cores keep fewer bits while they sum (about 0.004 at
K = 4096 and 0.007 at 8192 against float64, the same for every kernel here and for cuBLASLt)."""

CONFIG = dict(warps=8, stages=4, BM=128, BN=256, BK=128)
"""The tutorial rows' block (tilec and Triton alike): 48 KB a stage (A 128 x 128, B 128 x 256), four stages."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--sizes", default="4096,8192", help="square sizes, comma-separated")
    args = p.parse_args()
    fp8 = _example("fp8")
    print(f"{torch.cuda.get_device_name()}; TFLOP/s, E4M3 in, f16 out")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        a = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
        w = torch.randn(size, size, device="cuda").to(torch.float8_e4m3fn)
        c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.float16)
        ref = a.double() @ w.double().T
        one = torch.ones((), device="cuda")
        tflops = lambda ms: 2 * size ** 3 / ms / 1e9  # noqa: E731
        grid, call, consts = fp8.tutorial_call(a, w, c, CONFIG["BM"], CONFIG["BN"], CONFIG["BK"])
        tutorial = fp8.matmul_kernel.with_options(num_warps=CONFIG["warps"], num_stages=CONFIG["stages"])
        lin = fp8.linear.with_options(num_warps=8, num_stages=4, bulk=True)
        lgrid = (size // 128, size // 256)
        runs = {
            "tutorial": lambda: tutorial[grid](*call, **consts, arch="sm_90a"),
            "triton": lambda: triton_matmul_tutorial[grid](*call, num_warps=CONFIG["warps"],
                                                           num_stages=CONFIG["stages"], **consts),
            "linear": lambda: lin[lgrid](a, w, c, BM=128, BN=256, BK=128, arch="sm_90a"),
            "scaled_mm": lambda: torch._scaled_mm(a, w.t(), scale_a=one, scale_b=one, out_dtype=torch.float16,
                                                  use_fast_accum=True, out=c),
            "tilec.matmul": lambda: tilec.matmul(a, w.t(), out=c, out_dtype="float16", scale_a=one, scale_b=one),
        }
        row = {"size": size}
        for name, run in runs.items():
            try:
                c.fill_(float("nan"))
                run()
                torch.cuda.synchronize()
                err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
                if not err < TOLERANCE:
                    raise AssertionError(f"relative error {err}")
                row[name] = round(tflops(time_ms(run, batches=20, batch=5)), 1)
            except Exception as e:  # noqa: BLE001 - the other rows go on
                row[name] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        rows.append(row)
        print(f"{size}^3: " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "size"))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
