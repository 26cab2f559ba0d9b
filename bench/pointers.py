"""Pointers and index tiles (examples/lang/pointers.py) against the window form, torch and Triton.

    python bench/pointers.py [--json out.json] [--gemm-only]

GB/s = bytes read + written / time, the median of batches of back-to-back calls (bench/softmax.py's
timer). Rows: Triton's vector add as written (``x_ptr + offsets``) in tilec and in Triton, tilec's
window form of it (examples/lang/vector_add.py), torch.add; an embedding lookup (rows gathered by an
index tile) against ``F.embedding`` and a Triton kernel of the same structure; a histogram (atomics at
pointers) against ``torch.bincount`` and the same Triton kernel; Triton's matmul tutorial on pointers
(TFLOP/s) against the window form, the same Triton kernel and cuBLAS. Every output is checked against
torch before it is timed.
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


@triton.jit
def triton_add(x_ptr, y_ptr, out_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(out_ptr + offs, ttl.load(x_ptr + offs, mask=mask) + ttl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def triton_embedding(ids, table, out, D_ALL, BM: ttl.constexpr, D: ttl.constexpr):
    r = ttl.program_id(0) * BM + ttl.arange(0, BM)
    c = ttl.program_id(1) * D + ttl.arange(0, D)
    rows = ttl.load(ids + r)
    t = ttl.load(table + rows[:, None].to(ttl.int64) * D_ALL + c[None, :])
    ttl.store(out + r[:, None] * D_ALL + c[None, :], t)


@triton.jit
def triton_histogram(x_ptr, hist_ptr, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.atomic_add(hist_ptr + ttl.load(x_ptr + offs, mask=mask, other=0), 1, mask=mask)


@triton.jit
def triton_matmul_tutorial(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                           stride_cn, BLOCK_SIZE_M: ttl.constexpr, BLOCK_SIZE_N: ttl.constexpr,
                           BLOCK_SIZE_K: ttl.constexpr):
    """examples/lang/pointers.py's matmul_kernel (the tutorial's body, no grouped order) in Triton."""
    pid_m, pid_n = ttl.program_id(0), ttl.program_id(1)
    offs_am = (pid_m * BLOCK_SIZE_M + ttl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + ttl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = ttl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = ttl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=ttl.float32)
    for k in range(0, ttl.cdiv(K, BLOCK_SIZE_K)):
        a = ttl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = ttl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = ttl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    offs_cm = pid_m * BLOCK_SIZE_M + ttl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + ttl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    ttl.store(c_ptrs, accumulator.to(ttl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


GEMM_CONFIGS = {"sm_90a": (8, 4, dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=256, BLOCK_SIZE_K=64)),
                "sm_80": (4, 3, dict(BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32))}
"""(warps, stages, tiles) of the pointer GEMM per target: examples/lang/matmul.py's masked kernel's."""


def gemm_rows(ptrs, report) -> None:
    """The matmul tutorial on pointers (examples/lang/pointers.py: its loads gathers that tile-stage stages
    through shared memory) against the window form with the same masks (examples/lang/matmul.py's
    matmul_masked), the same kernel in Triton with the same tiles, and cuBLAS; TFLOP/s, f16."""
    lang_matmul = _example("matmul")
    hopper = torch.cuda.get_device_capability() == (9, 0)
    for size in (4096, 2000):
        a, b = (torch.randn(size, size, device="cuda", dtype=torch.float16) for _ in range(2))
        c = torch.full((size, size), float("nan"), device="cuda", dtype=torch.float16)
        ref = a.double() @ b.double()
        tflops = lambda ms: 2 * size ** 3 / ms / 1e9  # noqa: E731
        for arch in (["sm_90a"] if hopper else []) + ["sm_80"]:
            warps, stages, tiles = GEMM_CONFIGS[arch]
            grid = (-(-size // tiles["BLOCK_SIZE_M"]), -(-size // tiles["BLOCK_SIZE_N"]))
            strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
            run = lambda: ptrs.matmul_kernel[grid](a, b, c, size, size, size, *strides, arch=arch,  # noqa: E731
                                                   num_warps=warps, num_stages=stages, **tiles)
            c.fill_(float("nan"))
            run()
            err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
            assert err < 2e-3, f"pointer GEMM {arch} {size}: relative error {err}"
            window = lang_matmul.matmul_masked.with_options(num_warps=warps, num_stages=stages)
            wcfg = dict(BM=tiles["BLOCK_SIZE_M"], BN=tiles["BLOCK_SIZE_N"], BK=tiles["BLOCK_SIZE_K"])
            report(f"gemm {size}^3 f16 {arch} pointers", tflops(time_ms(run, batches=20, batch=5)), unit="TFLOP/s",
                   window=tflops(time_ms(lambda: window[lang_matmul.grid(size, size, **wcfg)](
                       a, b, c, size, size, size, arch=arch, **wcfg), batches=20, batch=5)),
                   triton=tflops(time_ms(lambda: triton_matmul_tutorial[grid](
                       a, b, c, size, size, size, *strides, num_warps=warps, num_stages=stages, **tiles),
                       batches=20, batch=5)),
                   cuBLAS=tflops(time_ms(lambda: torch.matmul(a, b), batches=20, batch=5)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--gemm-only", action="store_true", help="the matmul tutorial's rows only")
    args = p.parse_args()
    ptrs, window = _example("pointers"), _example("vector_add")
    rows = []
    print(f"{torch.cuda.get_device_name()}; GB/s, the GEMMs TFLOP/s")

    def report(name, ours, unit="GB/s", **others):
        row = {"kernel": name, "unit": unit, "tilec": round(ours, 1), **{k: round(v, 1) for k, v in others.items()}}
        rows.append(row)
        print(f"{name:>34}: tilec {ours:7.0f}  " + "  ".join(f"{k} {v:7.0f} ({ours / v:.2f})" for k, v in others.items()))

    if args.gemm_only:
        gemm_rows(ptrs, report)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return
    n = 1 << 26
    for dtype in (torch.float32, torch.float16):
        a, b = (torch.randn(n, device="cuda", dtype=dtype) for _ in range(2))
        c = torch.full_like(a, float("nan"))
        gbs = lambda ms: 3 * n * a.element_size() / ms / 1e6  # noqa: E731
        for block, warps in ((1024, 4), (4096, 8)):
            kernel = ptrs.add_kernel.with_options(num_warps=warps)
            run = lambda: kernel[(n // block,)](a, b, c, n, BLOCK_SIZE=block)  # noqa: E731
            run()
            assert torch.equal(c, a + b)
            win = window.vector_add.with_options(num_warps=warps)
            report(f"add {str(dtype)[6:]} x+offs BLOCK {block}", gbs(time_ms(run)),
                   window=gbs(time_ms(lambda: win[(n // block,)](a, b, c, BLOCK=block))),
                   triton=gbs(time_ms(lambda: triton_add[(n // block,)](a, b, c, n, BLOCK=block, num_warps=warps))),
                   torch=gbs(time_ms(lambda: torch.add(a, b, out=c))))
    for dtype in (torch.float16, torch.float32):
        vocab, d, tokens = 32000, 4096, 8192
        table = torch.randn(vocab, d, device="cuda", dtype=dtype)
        ids = torch.randint(0, vocab, (tokens,), device="cuda", dtype=torch.int32)
        out = torch.full((tokens, d), float("nan"), device="cuda", dtype=dtype)
        gbs = lambda ms: 2 * tokens * d * table.element_size() / ms / 1e6  # noqa: E731
        bm, bd = 16, 256
        run = lambda: ptrs.embedding[(tokens // bm, d // bd)](ids, table, out, tokens, BM=bm, D=bd)  # noqa: E731
        run()
        assert torch.equal(out, table[ids.long()])
        report(f"embedding {str(dtype)[6:]} {tokens}x{d}", gbs(time_ms(run)),
               triton=gbs(time_ms(lambda: triton_embedding[(tokens // bm, d // bd)](ids, table, out, d, BM=bm, D=bd))),
               torch=gbs(time_ms(lambda: torch.nn.functional.embedding(ids, table))))
    n, bins = 1 << 26, 4096  # elements per second, reported as GB/s of the int32 input read
    x = torch.randint(0, bins, (n,), device="cuda", dtype=torch.int32)
    h = torch.zeros(bins, device="cuda", dtype=torch.int32)
    ptrs.histogram[(n // 1024,)](x, h, n, BLOCK=1024)
    assert torch.equal(h, torch.bincount(x, minlength=bins).to(torch.int32))
    gbs = lambda ms: 4 * n / ms / 1e6  # noqa: E731
    report(f"histogram {n} into {bins} bins", gbs(time_ms(lambda: ptrs.histogram[(n // 1024,)](x, h, n, BLOCK=1024))),
           triton=gbs(time_ms(lambda: triton_histogram[(n // 1024,)](x, h, n, BLOCK=1024, num_warps=4))),
           torch=gbs(time_ms(lambda: torch.bincount(x, minlength=bins))))
    gemm_rows(ptrs, report)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
