"""Vector add in tilec.lang: the smallest kernel, one 1-D window per block.

    python examples/lang/vector_add.py [--n 100000]

Runs on the CPU interpreter, compiles to PTX, and on a GPU adds random torch tensors
(checked against float64, the output poisoned with NaN first).
"""

from __future__ import annotations

import argparse

import numpy as np

import tilec.lang as tl


@tl.kernel
def vector_add(a, b, c, BLOCK: tl.constexpr):
    i = tl.block_id(0) * BLOCK
    tl.store(c, (i,), tl.load(a, (i,), shape=(BLOCK,)) + tl.load(b, (i,), shape=(BLOCK,)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--block", type=int, default=1024)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    c = np.full_like(a, np.nan)
    vector_add.interpret(a, b, c, grid=(-(-1000 // 128),), BLOCK=128)
    err = np.abs(c - (a.astype(np.float64) + b)).max()
    print(f"interpreter: max error {err:.1e}")
    if not err < 1e-6:
        return 1
    print(f"PTX: {len(vector_add.compile(a, b, c, BLOCK=args.block, arch='sm_80').asm['ptx'])} bytes")
    from tilec.runtime import has_device

    if not has_device():
        print("no GPU: not launched")
        return 0
    import torch

    a, b = (torch.randn(args.n, device="cuda") for _ in range(2))
    c = torch.full_like(a, float("nan"))
    vector_add[(-(-args.n // args.block),)](a, b, c, BLOCK=args.block)
    err = (c.double() - (a.double() + b.double())).abs().max().item()
    print(f"GPU: n={args.n}, max error {err:.1e}")
    return 0 if err == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
