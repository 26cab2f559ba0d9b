"""Compile the whole-problem GEMM in examples/gemm.mlir to PTX, and run it when a GPU is there.

    python examples/gemm.py [--arch sm_90] [--size 1000] [--stages 3]

`tile-to-ptx` tiles the `tile.matmul` over blocks, warps and mma.sync atoms,
swizzles the shared tiles, pipelines the K loop with cp.async and allocates
the register tiles into per-lane fragments; LLVM's NVPTX backend writes the
PTX. On a GPU the kernel multiplies random f16 matrices (dynamic shapes: any
M, N, K) and is checked against float64.
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
from tilec.runtime.gl_views import expand

SOURCE = Path(__file__).resolve().parent / "gemm.mlir"
BLOCK = (128, 128, 32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=ACCEPTED_ARCHS, help="default: the GPU's, else sm_80")
    parser.add_argument("--size", type=int, default=1000, help="M = N = K (default 1000)")
    parser.add_argument("--stages", type=int, default=3)
    args = parser.parse_args()

    pipeline = f"tile-to-ptx{{block={','.join(map(str, BLOCK))} stages={args.stages}}}"
    kernel = tilec.compile(SOURCE, pipeline=pipeline, arch=args.arch)
    ptx = kernel.asm["ptx"]
    print(f"compiled {kernel.name} with {pipeline} for {kernel.arch}: {len(ptx.splitlines())} lines of PTX")
    for instruction in ("cp.async.cg.shared.global", "ldmatrix.sync.aligned", "mma.sync.aligned.m16n8k16"):
        print(f"  {len(re.findall(re.escape(instruction), ptx)):3d} x {instruction}")

    if not has_device():
        print(f"not run: no CUDA device ({no_device_reason()})")
        return 0
    m = n = k = args.size
    rng = np.random.default_rng()
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    blocks = -(-m // BLOCK[0]) * -(-n // BLOCK[1])
    # the kernel ABI (tilec/dialects/abi.py): each global view is a pointer, its extents and its strides
    kernel(*expand(kernel, a, b, c), grid=(blocks, 1, 1))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    error = float(np.linalg.norm(c.astype(np.float64) - ref) / np.linalg.norm(ref))
    print(f"ran {m}x{n}x{k} on the GPU: relative error vs float64 = {error:.2e}, unwritten = {int(np.isnan(c).sum())}")
    return 0 if error < 1e-2 and not np.isnan(c).any() else 1


if __name__ == "__main__":
    sys.exit(main())
