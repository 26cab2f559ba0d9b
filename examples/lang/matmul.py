"""A GEMM in tilec.lang: block tiles staged through shared memory, warp tiles on the tensor cores.

    python examples/lang/matmul.py [--size 4096] [--arch sm_90]

Each block computes a BM x BN tile of C (blocks taken in groups of GROUP rows of tiles, so that
neighbouring blocks share A's rows in L2), each warp a WM x WN part of it. The K loop copies a
BM x BK tile of A and a BK x BN tile of B into shared memory, then each warp multiplies its
rows of A by its columns of B with ``tl.mma`` (mma.sync). Compiled with ``num_stages=4``, the
compiler's ``tile-pipeline`` turns the loop's copies into a 4-stage ``cp.async`` pipeline, and
``tile-swizzle`` picks bank-conflict-free layouts for the shared tiles: the same passes the
built-in ``tilec.matmul`` goes through.
"""

from __future__ import annotations

import argparse

import numpy as np

import tilec.lang as tl


def block_origin(M, N, BM: int, BN: int, GROUP: int, pid=None):
    """(row, column) of tile ``pid`` (default: this block's) of C's BM x BN tiles: tiles go in
    groups of GROUP rows (neighbours share A's rows in L2), as in Triton's tutorial. A plain
    helper: kernels call it while they are traced."""
    pid = tl.block_id(0) if pid is None else pid
    tiles_m, tiles_n = (M + BM - 1) // BM, (N + BN - 1) // BN
    width = tiles_n * GROUP
    first_m = pid // width * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    return (first_m + pid % width % group_m) * BM, (pid % width // group_m) * BN


@tl.kernel(num_warps=8, num_stages=4)
def matmul(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, WM: tl.constexpr,
           WN: tl.constexpr, GROUP: tl.constexpr = 8):
    K = a.shape[1]
    row0, col0 = block_origin(a.shape[0], b.shape[1], BM, BN, GROUP)
    # this warp's part of the block's tile
    warp = tl.warp_id()
    wrow, wcol = warp // (BN // WN) * WM, warp % (BN // WN) * WN
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    acc = tl.zeros((WM, WN))
    for k in tl.range(0, K, BK):
        tl.copy(a, (row0, k), sa)
        tl.copy(b, (k, col0), sb)
        tl.barrier()
        acc = tl.mma(tl.load(sa, (wrow, 0), shape=(WM, BK)), tl.load(sb, (0, wcol), shape=(BK, WN)), acc)
        tl.barrier()
    tl.store(c, (row0 + wrow, col0 + wcol), acc.to(c.dtype))


@tl.kernel(num_warps=4, num_stages=3)
def matmul_block(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr = 8):
    """The Triton tutorial's GEMM as a Triton user writes it: block tiles only, no shared memory and no
    warp ids. The compiler stages the operands through shared memory (``tile-stage``, then the same
    ``cp.async`` pipeline) and splits the product over the block's warps (``tile-layout``'s warp grid).
    Compiled for ``arch="sm_90a"`` (the default on an sm_90 GPU), the product is warpgroup MMAs reading
    the staged tiles in shared memory (:data:`BLOCK_WGMMA`: two warpgroups and bulk tensor copies)."""
    row0, col0 = block_origin(a.shape[0], b.shape[1], BM, BN, GROUP)
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, a.shape[1], BK):
        acc = tl.dot(tl.load(a, (row0, k), shape=(BM, BK)), tl.load(b, (k, col0), shape=(BK, BN)), acc)
    tl.store(c, (row0, col0), acc.to(c.dtype))


@tl.kernel(num_warps=4, num_stages=3)
def matmul_masked(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GROUP: tl.constexpr = 8):
    """The Triton tutorial's GEMM with its masks as written: the K residue read as zeros (``mask=offs_k
    < K - k * BK, other=0.0``) and C's edges stored under a mask. ``tile-stage`` gives each load's
    mask to its staged copy (``cp.async`` zero-fills the elements it masks off), so the product reads
    the staged tiles as :func:`matmul_block`'s does: on sm_90a, the block's warpgroup MMAs."""
    row0, col0 = block_origin(M, N, BM, BN, GROUP)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN))
    for k in tl.range(0, tl.cdiv(K, BK)):
        x = tl.load(a, (row0, k * BK), shape=(BM, BK), mask=offs_k[None, :] < K - k * BK, other=0.0)
        y = tl.load(b, (k * BK, col0), shape=(BK, BN), mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
    rows, cols = row0 + tl.arange(0, BM), col0 + tl.arange(0, BN)
    tl.store(c, (row0, col0), acc.to(c.dtype), mask=(rows[:, None] < M) & (cols[None, :] < N))


@tl.kernel(num_warps=8, num_stages=3, bulk=True, producer=True)
def matmul_wgmma(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr = 8):
    """The same GEMM for sm_90a: bulk tensor copies (TMA) into shared memory and warpgroup MMAs
    reading it there (``tl.wgmma``); each warp accumulates 16 rows of its warpgroup's 64. With
    ``producer=True`` a third warpgroup issues the copies ahead of the two that multiply."""
    K = a.shape[1]
    row0, col0 = block_origin(a.shape[0], b.shape[1], BM, BN, GROUP)
    warp = tl.warp_id()
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    acc = tl.zeros((16, BN))
    for k in tl.range(0, K, BK):
        tl.copy(a, (row0, k), sa)
        tl.copy(b, (k, col0), sb)
        tl.barrier()
        acc = tl.wgmma(sa, warp // 4 * 64, sb, 0, acc)
        tl.barrier()
    tl.store(c, (row0 + warp * 16, col0), acc.to(c.dtype))


@tl.kernel(num_warps=8, num_stages=3, bulk=True, producer=True, bulk_store=True)
def matmul_persistent(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr = 8):
    """``matmul_wgmma`` as a persistent kernel: the launch's blocks (one an SM, :func:`persistent_blocks`)
    loop over C's tiles, block ``i`` of ``n`` taking tiles ``i``, ``i + n``, ... The producer
    warpgroup runs the same loop over tiles and goes on to the next tile's K steps while the
    consumers store this one's, each warp through shared memory and a bulk tensor store
    (``bulk_store=True``: whole lines written, the warp free at once)."""
    M, N, K = a.shape[0], b.shape[1], a.shape[1]
    tiles = ((M + BM - 1) // BM) * ((N + BN - 1) // BN)
    warp = tl.warp_id()
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    for tile in tl.range(tl.block_id(0), tiles, tl.num_blocks(0)):
        row0, col0 = block_origin(M, N, BM, BN, GROUP, tile)
        acc = tl.zeros((16, BN))
        for k in tl.range(0, K, BK):
            tl.copy(a, (row0, k), sa)
            tl.copy(b, (k, col0), sb)
            tl.barrier()
            acc = tl.wgmma(sa, warp // 4 * 64, sb, 0, acc)
            tl.barrier()
        tl.store(c, (row0 + warp * 16, col0), acc.to(c.dtype))


@tl.kernel(num_warps=8, num_stages=3, bulk=True, producer=True, bulk_store=True)
def matmul_fp8(a, w, c, scale_a, scale_b, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               GROUP: tl.constexpr = 8):
    """``matmul_persistent`` on FP8 (e4m3 or e5m2), as ``torch._scaled_mm`` takes it: A is M x K and W
    is N x K, both K-major (an FP8 wgmma has no transpose: ``trans_b=True`` reads W's rows), and C is
    ``scale_a * scale_b * (A @ W.T)``, the two per-tensor scales read from device memory by
    ``tl.load_scalar`` (no host synchronisation; each one register, not a tile of copies)."""
    M, N, K = a.shape[0], w.shape[0], a.shape[1]
    tiles = ((M + BM - 1) // BM) * ((N + BN - 1) // BN)
    warp = tl.warp_id()
    sa, sw = tl.alloc((BM, BK), a.dtype), tl.alloc((BN, BK), w.dtype)
    scale = tl.load_scalar(scale_a, (0,)) * tl.load_scalar(scale_b, (0,))
    for tile in tl.range(tl.block_id(0), tiles, tl.num_blocks(0)):
        row0, col0 = block_origin(M, N, BM, BN, GROUP, tile)
        acc = tl.zeros((16, BN))
        for k in tl.range(0, K, BK):
            tl.copy(a, (row0, k), sa)
            tl.copy(w, (col0, k), sw)
            tl.barrier()
            acc = tl.wgmma(sa, warp // 4 * 64, sw, 0, acc, trans_b=True)
            tl.barrier()
        tl.store(c, (row0 + warp * 16, col0), (acc * scale).to(c.dtype))


def persistent_blocks(m: int, n: int, sms: int, BM: int = 128, BN: int = 256, **_) -> int:
    """Blocks of :func:`matmul_persistent`: one an SM, never more than there are tiles."""
    return min(-(-m // BM) * -(-n // BN), sms)


CONFIG = dict(BM=128, BN=128, BK=32, WM=32, WN=64)
"""128x128 block tiles, 4x2 warps of 32x64: what tilec.matmul runs for large f16 problems before sm_90."""

CONFIG_BLOCK = dict(BM=128, BN=128, BK=32)
""":func:`matmul_block`'s tiles: four warps of 64x64 parts (``bench/lang.py``, H200, 4096^3 f16: 391 TFLOP/s)."""

BLOCK_WGMMA = matmul_block.with_options(num_warps=8, bulk=True)
""":func:`matmul_block` for sm_90a: two warpgroups, the staged copies bulk tensor copies (TMA)."""

CONFIG_BLOCK_WGMMA = dict(BM=128, BN=256, BK=64)
""":data:`BLOCK_WGMMA`'s tiles (``bench/lang.py``, H200, 4096^3 f16: 679 TFLOP/s, Triton's GEMM 635)."""

MASKED_WGMMA = matmul_masked.with_options(num_warps=8, num_stages=4)
""":func:`matmul_masked` for sm_90a: two warpgroups, four stages of ``cp.async`` (masked copies are no bulk
copies), the wgmmas kept in flight across K steps."""

CONFIG_WGMMA = dict(BM=128, BN=256, BK=64)
"""sm_90a: 128x256 block tiles, two warpgroups, K steps of 64 in 3 stages (tilec.matmul's WGMMA_CONFIG)."""

CONFIG_FP8 = dict(BM=128, BN=256, BK=128)
"""FP8 on sm_90a: the same tiles with K steps of 128 one-byte elements (the same 128-byte rows)."""


def grid(m: int, n: int, BM: int = 128, BN: int = 128, **_) -> tuple[int]:
    return (-(-m // BM) * -(-n // BN),)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--arch", default="sm_80")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    m, n, k = 200, 136, 72
    a, b = rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    small = dict(BM=64, BN=64, BK=32, WM=32, WN=32)
    matmul.interpret(a, b, c, grid=grid(m, n, **small), num_warps=4, **small)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.abs(c - ref).max() / np.abs(ref).max()
    print(f"interpreter: {m}x{n}x{k}, max relative error {err:.1e}")
    if not err < 2e-3:
        return 1
    ptx = matmul.compile(a, b, c, arch=args.arch, **CONFIG).asm["ptx"]
    print(f"PTX for {args.arch}: {len(ptx.splitlines())} lines, {ptx.count('mma.sync')} mma.sync, "
          f"{ptx.count('cp.async.cg') + ptx.count('cp.async.ca')} cp.async")
    ptx = BLOCK_WGMMA.compile(a, b, c, arch="sm_90a", **CONFIG_BLOCK_WGMMA).asm["ptx"]
    print(f"PTX of matmul_block for sm_90a: {ptx.count('wgmma.mma_async')} wgmma.mma_async, "
          f"{ptx.count('mma.sync')} mma.sync")
    ptx = matmul_wgmma.compile(a, b, c, arch="sm_90a", **CONFIG_WGMMA).asm["ptx"]
    print(f"PTX of matmul_wgmma for sm_90a: {len(ptx.splitlines())} lines, {ptx.count('wgmma.mma_async')} "
          f"wgmma.mma_async, {ptx.count('cp.async.bulk.tensor')} bulk tensor copies")
    from tilec.runtime import has_device

    if not has_device():
        print("no GPU: not launched")
        return 0
    import torch

    s = args.size
    a, b = (torch.randn(s, s, device="cuda", dtype=torch.float16) for _ in range(2))
    c = torch.full((s, s), float("nan"), device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double()
    worst = 0.0
    runs = [("matmul", lambda: matmul[grid(s, s)](a, b, c, **CONFIG))]
    if torch.cuda.get_device_capability() == (9, 0):
        runs.append(("matmul_wgmma", lambda: matmul_wgmma[grid(s, s, **CONFIG_WGMMA)](a, b, c, arch="sm_90a",
                                                                                     **CONFIG_WGMMA)))
        runs.append(("matmul_block (sm_90a)", lambda: BLOCK_WGMMA[grid(s, s, **CONFIG_BLOCK_WGMMA)](
            a, b, c, arch="sm_90a", **CONFIG_BLOCK_WGMMA)))
        blocks = persistent_blocks(s, s, torch.cuda.get_device_properties(0).multi_processor_count, **CONFIG_WGMMA)
        runs.append(("matmul_persistent", lambda: matmul_persistent[(blocks,)](a, b, c, arch="sm_90a",
                                                                              **CONFIG_WGMMA)))
    for name, run in runs:
        c.fill_(float("nan"))
        run()
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        worst = max(worst, err)
        print(f"GPU, {name}: {s}^3 f16, max relative error {err:.1e}")
    if torch.cuda.get_device_capability() == (9, 0):  # FP8: e4m3 A and W (N x K), per-tensor scales
        a8, w8 = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn)
        sa, sb = torch.tensor([0.5], device="cuda"), torch.tensor([4.0], device="cuda")
        c16 = torch.full((s, s), float("nan"), device="cuda", dtype=torch.bfloat16)
        blocks = persistent_blocks(s, s, torch.cuda.get_device_properties(0).multi_processor_count, **CONFIG_FP8)
        matmul_fp8[(blocks,)](a8, w8, c16, sa, sb, arch="sm_90a", **CONFIG_FP8)
        ref8 = a8.double() @ w8.double().t() * 2.0
        err = ((c16.double() - ref8).abs().max() / ref8.abs().max()).item()
        worst = max(worst, err)
        print(f"GPU, matmul_fp8: {s}^3 e4m3 -> bf16, max relative error {err:.1e}")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
