"""A W4A16 linear layer written in tilec.lang (examples/lang/int4.py) against the same kernel in Triton and torch.

    python bench/int4_lang.py [--json out.json] [--shapes 16x4096x4096,128x4096x4096,4096x4096x4096]

f16 activations A (M x K) times 4-bit weights packed two a byte in a ``uint8`` array (K/2 x N: the low
nibble row k, the high nibble row k + K/2), a scale a column, f16 out; TFLOP/s (2 M N K / time, the
median of batches of back-to-back calls: bench/softmax.py's timer), every output checked against float64
torch first (:data:`TOLERANCE`). Rows:

- ``tilec``: examples/lang/int4.py's ``matmul_w4a16`` (bytes unpacked in registers, two ``tl.dot`` a K step);
- ``triton``: the same kernel in Triton (:func:`triton_w4a16`, the same source but for Triton's names), same
  tiles and warps;
- ``tilec rows`` / ``triton rows``: ``matmul_w4a16_rows`` on GPTQ's packing (two consecutive rows a byte),
  the nibbles joined into rows taking turns (``tl.join(...).permute(0, 2, 1).reshape``) and one ``tl.dot`` a
  step of 2 BK rows (the same bytes a step), in tilec and in Triton (:func:`triton_w4a16_rows`);
- ``torch f16``: ``a @ w16`` on weights dequantized once beforehand (cuBLAS's f16 GEMM: what the packed
  weights save memory against, not a W4A16 kernel);
- ``torch unpack``: dequantizing the bytes with torch ops, then the matmul, every call.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as ttl

from lang import _example  # bench/lang.py's loader of examples/lang (this folder is on sys.path)
from softmax import time_ms  # bench/softmax.py's timer

TOLERANCE = 2e-3
"""Relative to the largest |C|: f16 products summed in f32 (the same for every row)."""

TILES = dict(BM=64, BN=128, BK=64, warps=8)
"""The block of the tilec and Triton rows (BK counts bytes of K: 2 BK values of K a step; not tuned per shape)."""


@triton.jit
def triton_w4a16(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K2, stride_am, stride_wk, stride_cm,
                 BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    rows = ttl.program_id(0) * BM + ttl.arange(0, BM)
    cols = ttl.program_id(1) * BN + ttl.arange(0, BN)
    ks = ttl.arange(0, BK)
    acc = ttl.zeros((BM, BN), dtype=ttl.float32)
    for k in range(0, ttl.cdiv(K2, BK)):
        kk = k * BK + ks
        a_mask = (rows[:, None] < M) & (kk[None, :] < K2)
        a_low = ttl.load(a_ptr + rows[:, None] * stride_am + kk[None, :], mask=a_mask, other=0.0)
        a_high = ttl.load(a_ptr + rows[:, None] * stride_am + (kk[None, :] + K2), mask=a_mask, other=0.0)
        packed = ttl.load(w_ptr + kk[:, None] * stride_wk + cols[None, :],
                          mask=(kk[:, None] < K2) & (cols[None, :] < N), other=0)
        w_low = ((packed & 0xF).to(ttl.int32) - 8).to(ttl.float16)
        w_high = ((packed >> 4).to(ttl.int32) - 8).to(ttl.float16)
        acc = ttl.dot(a_low, w_low, acc)
        acc = ttl.dot(a_high, w_high, acc)
    scale = ttl.load(scale_ptr + cols, mask=cols < N, other=0.0)
    c = (acc * scale[None, :]).to(ttl.float16)
    ttl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def triton_w4a16_rows(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_wk, stride_cm,
                      BM: ttl.constexpr, BN: ttl.constexpr, BK: ttl.constexpr):
    rows = ttl.program_id(0) * BM + ttl.arange(0, BM)
    cols = ttl.program_id(1) * BN + ttl.arange(0, BN)
    acc = ttl.zeros((BM, BN), dtype=ttl.float32)
    for k in range(0, ttl.cdiv(K, BK)):
        ks = k * BK + ttl.arange(0, BK)
        a = ttl.load(a_ptr + rows[:, None] * stride_am + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K),
                     other=0.0)
        kp = k * (BK // 2) + ttl.arange(0, BK // 2)
        packed = ttl.load(w_ptr + kp[:, None] * stride_wk + cols[None, :],
                          mask=(kp[:, None] < K // 2) & (cols[None, :] < N), other=0)
        low = ((packed & 0xF).to(ttl.int32) - 8).to(ttl.float16)
        high = ((packed >> 4).to(ttl.int32) - 8).to(ttl.float16)
        acc = ttl.dot(a, ttl.join(low, high).permute(0, 2, 1).reshape(BK, BN), acc)
    scale = ttl.load(scale_ptr + cols, mask=cols < N, other=0.0)
    c = (acc * scale[None, :]).to(ttl.float16)
    ttl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--shapes", default="16x4096x4096,128x4096x4096,4096x4096x4096", help="MxNxK, comma-separated")
    p.add_argument("--tiles", help="BM,BN,BK,warps (default: TILES)")
    args = p.parse_args()
    if args.tiles:
        TILES.update(zip(("BM", "BN", "BK", "warps"), (int(x) for x in args.tiles.split(","))))
    int4 = _example("int4")
    print(f"{torch.cuda.get_device_name()}; TFLOP/s, f16 A, 4-bit W in bytes, f16 out; tiles {TILES}")
    rows = []
    for shape in args.shapes.split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        q = torch.randint(0, 16, (k, n), device="cuda", dtype=torch.uint8)
        w = q[: k // 2] | (q[k // 2:] << 4)
        scale = torch.rand(n, device="cuda") * 0.04 + 0.01
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        w16 = ((q.float() - 8) * scale).half()
        ref = a.double() @ ((q.double() - 8) * scale.double())
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        bm, bn, bk = TILES["BM"], TILES["BN"], TILES["BK"]
        grid, call, consts = int4.matmul_call(a, w, scale, c, BM=bm, BN=bn, BK=bk)
        kernel = int4.matmul_w4a16.with_options(num_warps=TILES["warps"])

        def unpack() -> torch.Tensor:
            low, high = (w & 0xF).half() - 8, (w >> 4).half() - 8
            return a @ (torch.cat([low, high]) * scale.half())

        # GPTQ's packing (two consecutive rows a byte), the same bytes a K step
        _, call_rows, consts_rows = int4.matmul_rows_call(a, int4.pack_rows(q), scale, c, BM=bm, BN=bn, BK=2 * bk)
        rows_kernel = int4.matmul_w4a16_rows.with_options(num_warps=TILES["warps"])

        runs = {
            "tilec": lambda: kernel[grid](*call, **consts),
            "triton": lambda: triton_w4a16[grid](*call, **consts, num_warps=TILES["warps"]),
            "tilec rows": lambda: rows_kernel[grid](*call_rows, **consts_rows),
            "triton rows": lambda: triton_w4a16_rows[grid](*call_rows, **consts_rows, num_warps=TILES["warps"]),
            "torch f16": lambda: torch.matmul(a, w16, out=c),
            "torch unpack": lambda: c.copy_(unpack()),
        }
        row = {"shape": shape}
        for name, run in runs.items():
            c.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            if not err < (TOLERANCE if name != "torch f16" else 5e-3):
                raise SystemExit(f"{name} at {shape}: relative error {err:.2e}")
            row[name] = round(2 * m * n * k / time_ms(run) / 1e9, 1)
        row["tilec/triton"] = round(row["tilec"] / row["triton"], 3)
        row["rows tilec/triton"] = round(row["tilec rows"] / row["triton rows"], 3)
        rows.append(row)
        print(row)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "tiles": TILES,
                                               "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
