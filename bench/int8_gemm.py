"""int8 GEMMs written in tilec.lang (tests/lang/test_int8_dot.py's kernel: ``tl.dot`` of int8 tiles, int32
sums on ``mma.sync.m16n8k32.s8``) against cuBLAS's int8 GEMM (``torch._int_mm``) and the same tile loop
in Triton (its ``tl.dot`` of int8 tiles; wgmma on sm_90) in one run.

    python bench/int8_gemm.py [--json out.json]

TOPS = 2 M N K / time, the median of batches of back-to-back calls (bench/softmax.py's timer); each
result is checked against cuBLAS's (exact integers) first. The tilec kernel is the plain tile loop
(the block's copies staged and pipelined by tile-stage and tile-pipeline; no ldmatrix for 8-bit
operands yet, no warpgroup MMA): a first measure of the general path, not a tuned product.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as ttl

from softmax import time_ms  # bench/softmax.py's timer (this folder is on sys.path)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.lang.test_int8_dot import int8_matmul, int8_matmul_nt  # noqa: E402

@triton.jit
def triton_int8_matmul(a, b, c, m, n, k, sbk, sbn, BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    """The tile loop of tests/lang/test_int8_dot.py in Triton (int32 sums; b's strides given: K x N
    row-major, or the transpose of N x K weights)."""
    rows = ttl.program_id(0) * BM + ttl.arange(0, BM)
    cols = ttl.program_id(1) * BN + ttl.arange(0, BN)
    acc = ttl.zeros((BM, BN), dtype=ttl.int32)
    for k0 in range(0, k, BK):
        ks = k0 + ttl.arange(0, BK)
        x = ttl.load(a + rows[:, None] * k + ks[None, :], mask=(rows[:, None] < m) & (ks[None, :] < k), other=0)
        y = ttl.load(b + ks[:, None] * sbk + cols[None, :] * sbn, mask=(ks[:, None] < k) & (cols[None, :] < n),
                     other=0)
        acc += ttl.dot(x, y)
    ttl.store(c + rows[:, None] * n + cols[None, :], acc, mask=(rows[:, None] < m) & (cols[None, :] < n))


SHAPES = [(1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192)]
CONFIGS = [((128, 128, 64), 8, 3), ((128, 256, 64), 8, 3), ((64, 128, 64), 4, 4)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--arch", help="tilec's target (default: the GPU's; sm_80 measures the mma.sync path on a Hopper)")
    args = p.parse_args()
    arch = {} if args.arch is None else {"arch": args.arch}
    print(f"{torch.cuda.get_device_name()}; TOPS (2 M N K / time); tilec for {args.arch or 'this GPU'}")
    rows = []
    for (m, n, k), layout in [(s, lay) for lay in ("b K x N", "w N x K") for s in SHAPES]:
        a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
        w = torch.randint(-128, 128, (n, k), device="cuda", dtype=torch.int8)
        b = w.T if layout == "w N x K" else w.T.contiguous()  # a K x N view either way
        operand = w if layout == "w N x K" else b
        ours_kernel = int8_matmul_nt if layout == "w N x K" else int8_matmul
        ref = torch._int_mm(a, b)
        tops = lambda ms: 2 * m * n * k / ms / 1e9  # noqa: E731
        cublas = tops(time_ms(lambda: torch._int_mm(a, b)))
        row = {"shape": [m, n, k], "layout": layout, "cublas": round(cublas, 1), "tilec": {}}
        for (bm, bn, bk), warps, stages in CONFIGS:
            kernel = ours_kernel.with_options(num_warps=warps, num_stages=stages)
            c = torch.full((m, n), -7, device="cuda", dtype=torch.int32)
            run = lambda: kernel[(-(-m // bm), -(-n // bn))](a, operand, c, BM=bm, BN=bn, BK=bk, **arch)  # noqa: E731
            try:
                run()
            except Exception as e:  # a configuration the compiler refuses (registers, shared memory): reported
                row["tilec"][f"{bm}x{bn}x{bk}/{warps}w/{stages}s"] = f"refused: {str(e).splitlines()[0][:120]}"
                continue
            assert torch.equal(c, ref), f"{(m, n, k)} {(bm, bn, bk)}: wrong result"
            row["tilec"][f"{bm}x{bn}x{bk}/{warps}w/{stages}s"] = round(tops(time_ms(run)), 1)
        best = max((v for v in row["tilec"].values() if isinstance(v, float)), default=0.0)
        row["best/cublas"] = round(best / cublas, 3)
        row["triton"] = {}
        for (bm, bn, bk), warps, stages in CONFIGS:
            c = torch.full((m, n), -7, device="cuda", dtype=torch.int32)
            run = lambda: triton_int8_matmul[(-(-m // bm), -(-n // bn))](  # noqa: E731
                a, b, c, m, n, k, b.stride(0), b.stride(1), BM=bm, BN=bn, BK=bk, num_warps=warps, num_stages=stages)
            run()
            assert torch.equal(c, ref), f"Triton {(m, n, k)} {(bm, bn, bk)}: wrong result"
            row["triton"][f"{bm}x{bn}x{bk}/{warps}w/{stages}s"] = round(tops(time_ms(run)), 1)
        row["best/triton"] = round(best / max(row["triton"].values()), 3)
        rows.append(row)
        print(f"{layout} {str((m, n, k)):>20} cuBLAS {cublas:7.1f}  tilec {row['tilec']}  Triton {row['triton']}  "
              f"best/cuBLAS {row['best/cublas']:.3f}  best/Triton {row['best/triton']:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "arch": args.arch, "rows": rows},
                                              indent=1))


if __name__ == "__main__":
    main()
