"""Compile one warp's tensor-core kernel to PTX, and run it when a GPU is there.

    python examples/mma_one_warp.py [--arch sm_90]

The kernel (examples/kernels/mma_f16.mlir) is fragment-level tile IR: cp.async
global -> shared, ldmatrix, mma.sync m16n8k16, store. `tilec.compile` runs
the `tile-to-llvm` pass, LLVM's NVPTX backend and (on a GPU) the driver's
JIT; the result is checked against a float64 numpy reference.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

import tilec
from tilec.codegen.arch import ACCEPTED_ARCHS
from tilec.runtime import has_device, no_device_reason

KERNEL = Path(__file__).resolve().parent / "kernels" / "mma_f16.mlir"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=ACCEPTED_ARCHS, help="default: the GPU's, else sm_80")
    args = parser.parse_args()

    kernel = tilec.compile(KERNEL, arch=args.arch)
    ptx = kernel.asm["ptx"]
    wanted = ("ldmatrix.sync.aligned", "mma.sync.aligned.m16n8k16", "cp.async.cg.shared.global")
    print(f"compiled {kernel.name} for {kernel.arch}: {len(ptx.splitlines())} lines of PTX")
    for instruction in wanted:
        print(f"  {len(re.findall(re.escape(instruction), ptx)):2d} x {instruction}")

    if not has_device():
        print(f"not run: no CUDA device ({no_device_reason()})")
        return 0
    rng = np.random.default_rng()
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    d = np.full((16, 8), np.nan, np.float32)
    kernel(a, np.ascontiguousarray(b.T), d)  # B is passed column-major, as mma.sync's "col" operand
    ref = a.astype(np.float64) @ b.astype(np.float64)
    error = float(np.abs(d - ref).max() / np.abs(ref).max())
    print(f"ran on the GPU: max relative error vs float64 = {error:.2e}")
    return 0 if error < 1e-3 else 1


if __name__ == "__main__":
    sys.exit(main())
