"""Attention with asynchronous warpgroup MMAs: FlashAttention-3's intra-warpgroup overlap in tilec.lang.

    python examples/lang/attention_overlap.py          # CPU interpreter check, PTX; on an H100 also runs

``tl.wgmma(..., wait=False)`` leaves a wgmma group running and ``tl.wgmma_wait(x, pending)`` takes
its result once at most ``pending`` newer groups are still running (groups finish in order). Here
iteration ``j`` issues ``S_j = q @ K_j.T`` and then ``O += P_{j-1} @ V_{j-1}``, waits for ``S_j``
alone (``pending=1``) and runs ``S_j``'s softmax while the tensor cores finish the second product.
It reuses ``tilec.attention``'s online softmax and key ranges: only the schedule differs.

Measured against ``tilec.attention``'s synchronous kernel on an H100 (``bench/attention_configs.py
--path overlap``, bf16, S = 4k, one run): 411 against 456 TFLOP/s at D = 128 (BM 128, BN 128) and
323 against 438 at D = 64. It is slower: in the SASS, ptxas moved the wait for ``P @ V`` above
the softmax (250 registers live at BN 128), so nothing overlaps (bench/NOTES.md). Attention's use
waits for producer/consumer warpgroups with their own register budgets (``setmaxnreg``).
"""

from __future__ import annotations

import argparse

import numpy as np

import tilec.lang as tl
from tilec.kernels.attention import (LOG2E, block_tile, config, head_views, key_range, softmax_step,
                                     softmax_start, store_rows)


@tl.kernel(num_warps=8, num_stages=2)
def attention_overlap(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
                          GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False,
                          heads_per_group=1):
    """``tilec.attention_fwd_wgmma`` with FlashAttention-3's overlap inside a warpgroup: K/V iteration
    ``j`` multiplies ``P_{j-1} @ V_{j-1}`` (V copied one tile behind K) while the softmax of
    ``S_j = q @ K_j.T`` runs, both wgmmas left in flight (``wait=False``) and waited for in order.
    One iteration more than there are K tiles: the last one's keys are all masked (``P = 0``)."""
    row0, bh = block_tile(q, BM, CAUSAL, heads_per_group)
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, bh, GROUP)
    n = kh.shape[0]
    warp = tl.warp_id()
    band = warp // 4 * 64
    wrow = row0 + warp * 16
    sq = tl.alloc((BM, D), q.dtype)
    tl.copy(qh, (row0, 0), sq)
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(16, D, NEG)
    p = tl.zeros((16, BN), q.dtype)  # P_{-1}: nothing to add yet
    qk_scale = scale * LOG2E
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    # unmasked tiles, then the ragged last one, the causal diagonal and one past the end (masked)
    for lo, end, MASK in ((0, full, False), (full, hi + BN, True)):
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (tl.maximum(n0 - BN, 0), 0), sv)  # V_{j-1} (tile 0 again at j = 0, times P = 0)
            tl.barrier()
            s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
            acc = tl.wgmma(p, None, sv, 0, acc, wait=False)
            s = tl.wgmma_wait(s, 1)  # S_j is done; P_{j-1} @ V_{j-1} may still run
            p_new, alpha, m, l = softmax_step(s, m, l, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG)
            acc = tl.wgmma_wait(acc, 0) * alpha[:, None]
            p = p_new.to(q.dtype)
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)


def reference(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return p @ v / p.sum(-1, keepdims=True)


def launch_args(q, k, v, o, causal):
    ce = {**config(q.shape[-1], True), "GROUP": q.shape[1] // k.shape[1], "CAUSAL": causal}
    grid = (-(-q.shape[2] // ce["BM"]), q.shape[0] * q.shape[1])
    return (q, k, v, o, None, 1.0 / float(np.sqrt(q.shape[-1]))), ce, grid


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    rng = np.random.default_rng(0)
    q = rng.standard_normal((1, 2, 150, 64)).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 200, 64)).astype(np.float16) for _ in range(2))
    for causal in (False, True):
        for after in (None, "tile-distribute"):  # the lane interpreter checks every wgmma wait
            o = np.full_like(q, np.nan)
            args, ce, grid = launch_args(q, k, v, o, causal)
            attention_overlap.interpret(*args, grid=grid, after=after, num_warps=ce["BM"] // 16, **ce)
            ref = reference(q, k, v, causal)
            err = np.abs(o - ref).max() / np.abs(ref).max()
            print(f"interpreter{'' if after is None else ' after ' + after}, causal={causal}: "
                  f"max relative error {err:.1e}")
            if not err < 2e-3:
                return 1
    q128 = np.zeros((1, 16, 4096, 128), np.float16)
    args, ce, grid = launch_args(q128, q128, q128, q128, False)
    ptx = attention_overlap.compile(*args, arch="sm_90a", num_warps=ce["BM"] // 16, **ce).asm["ptx"]
    print(f"PTX for sm_90a: {ptx.count('wgmma.mma_async')} wgmma.mma_async, "
          f"{ptx.count('wgmma.wait_group.sync.aligned 1;')} wgmma.wait_group 1")
    from tilec.runtime import has_device

    if not has_device():
        print("no GPU: not launched")
        return 0
    import torch

    if torch.cuda.get_device_capability() != (9, 0):
        print("GPU is not sm_90: not launched (the warpgroup MMA is an sm_90a instruction)")
        return 0
    worst = 0.0
    for causal in (False, True):
        qt, kt, vt = (torch.randn(2, 4, 1000, 128, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        ot = torch.full_like(qt, float("nan"))
        args, ce, grid = launch_args(qt, kt, vt, ot, causal)
        attention_overlap[grid](*args, arch="sm_90a", num_warps=ce["BM"] // 16, **ce)
        ref = torch.from_numpy(reference(*(x.float().cpu().numpy() for x in (qt, kt, vt)), causal))
        err = ((ot.double().cpu() - ref).abs().max() / ref.abs().max()).item()
        worst = max(worst, err)
        print(f"GPU, causal={causal}: 2x4x1000x128 bf16, max relative error {err:.1e}")
    return 0 if worst < 2e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
