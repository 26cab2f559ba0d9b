"""Temporary: FA3 schedules of attention_fwd_wgmma (session 15 experiment)."""
import tilec.lang as tl
from tilec.kernels.attention import (LOG2E, block_rows, head_views, key_range, online_softmax,
                                     softmax_start, store_rows)


@tl.kernel(num_warps=8, num_stages=2, bulk=True, producer=True)
def base_turns(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
               GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False):
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, GROUP)
    n = kh.shape[0]
    row0 = block_rows(q, BM, CAUSAL)
    warp = tl.warp_id()
    band = warp // 4 * 64
    wrow = row0 + warp * 16
    sq = tl.alloc((BM, D), q.dtype)
    tl.copy(qh, (row0, 0), sq)
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(D, NEG)
    qk_scale = scale * LOG2E
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    for lo, end, MASK in ((0, full, False), (full, hi, True)):
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (n0, 0), sv)
            tl.barrier()
            with tl.turns(2):
                s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
            s = tl.wgmma_wait(s, 0)
            p, alpha, m, l = online_softmax(s, m, l, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG)
            with tl.turns(2):
                acc = tl.wgmma(p.to(q.dtype), None, sv, 0, acc * alpha[:, None], wait=False)
            acc = tl.wgmma_wait(acc, 0)
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)


@tl.kernel(num_warps=8, num_stages=2, bulk=True, producer=True)
def ov(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
       GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False):
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, GROUP)
    n = kh.shape[0]
    row0 = block_rows(q, BM, CAUSAL)
    warp = tl.warp_id()
    band = warp // 4 * 64
    wrow = row0 + warp * 16
    sq = tl.alloc((BM, D), q.dtype)
    tl.copy(qh, (row0, 0), sq)
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(D, NEG)
    p = tl.zeros((16, BN), q.dtype)
    qk_scale = scale * LOG2E
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    for lo, end, MASK in ((0, full, False), (full, hi + BN, True)):
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (tl.maximum(n0 - BN, 0), 0), sv)
            tl.barrier()
            s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
            acc = tl.wgmma(p, None, sv, 0, acc, wait=False)
            s = tl.wgmma_wait(s, 1)
            p_new, alpha, m, l = online_softmax(s, m, l, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG)
            acc = tl.wgmma_wait(acc, 0) * alpha[:, None]
            p = p_new.to(q.dtype)
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)


@tl.kernel(num_warps=8, num_stages=2, bulk=True, producer=True)
def ov_fa3(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
           GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False, TURNS: tl.constexpr = False):
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, GROUP)
    n = kh.shape[0]
    row0 = block_rows(q, BM, CAUSAL)
    warp = tl.warp_id()
    band = warp // 4 * 64
    wrow = row0 + warp * 16
    sq = tl.alloc((BM, D), q.dtype)
    tl.copy(qh, (row0, 0), sq)
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(D, NEG)
    p = tl.zeros((16, BN), q.dtype)
    alpha = tl.full((16,), 1.0, axis=0)
    qk_scale = scale * LOG2E
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    for lo, end, MASK in ((0, full, False), (full, hi + BN, True)):
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (tl.maximum(n0 - BN, 0), 0), sv)
            tl.barrier()
            if TURNS:
                with tl.turns(2):
                    s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
                    acc = tl.wgmma(p, None, sv, 0, acc * alpha[:, None], wait=False)
            else:
                s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
                acc = tl.wgmma(p, None, sv, 0, acc * alpha[:, None], wait=False)
            s = tl.wgmma_wait(s, 1)
            p_new, alpha, m, l = online_softmax(s, m, l, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG)
            p_new = p_new.to(q.dtype)
            acc = tl.wgmma_wait(acc, 0)
            p = p_new
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)


@tl.kernel(num_warps=8, num_stages=2, bulk=True, producer=True)
def ov_fa3b(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
           GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False, TURNS: tl.constexpr = False):
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, GROUP)
    n = kh.shape[0]
    row0 = block_rows(q, BM, CAUSAL)
    warp = tl.warp_id()
    band = warp // 4 * 64
    wrow = row0 + warp * 16
    sq = tl.alloc((BM, D), q.dtype)
    tl.copy(qh, (row0, 0), sq)
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(D, NEG)
    p = tl.zeros((16, BN), q.dtype)
    alpha = tl.full((16,), 1.0, axis=0)
    qk_scale = scale * LOG2E
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    for lo, end, MASK in ((0, full, False), (full, hi + BN, True)):
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (tl.maximum(n0 - BN, 0), 0), sv)
            tl.barrier()
            acc = acc * alpha[:, None]
            if TURNS:
                with tl.turns(2):
                    s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
                    acc = tl.wgmma(p, None, sv, 0, acc, wait=False)
            else:
                s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True, wait=False)
                acc = tl.wgmma(p, None, sv, 0, acc, wait=False)
            s = tl.wgmma_wait(s, 1)
            p_new, alpha, m, l = online_softmax(s, m, l, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG)
            acc = tl.wgmma_wait(acc, 0)
            p = p_new.to(q.dtype)
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)
