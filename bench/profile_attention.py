"""One launch of each tilec.attention path on one shape, for Nsight Compute.

    ncu --clock-control none --section SpeedOfLight --section WarpStateStats \\
        --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,... \\
        -k regex:attention python bench/profile_attention.py [--d 128] [--s 4096] [--causal]

Each path is warmed up (compiled, launched) before the launch ncu should read, which is the
third of each kernel's (``--launch-skip 2 --launch-count 1`` per kernel name, or filter by name).
"""

from __future__ import annotations

import argparse

import torch

import tilec


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--s", type=int, default=4096)
    p.add_argument("--causal", action="store_true")
    args = p.parse_args()
    b, h = 16384 // args.s, 2048 // args.d
    q, k, v = (torch.randn(b, h, args.s, args.d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    out = torch.empty_like(q)
    for arch in (None, "sm_80"):  # the GPU's path (wgmma on sm_90), then mma.sync
        for _ in range(3):
            tilec.attention(q, k, v, causal=args.causal, out=out, arch=arch)
        torch.cuda.synchronize()


if __name__ == "__main__":
    main()
