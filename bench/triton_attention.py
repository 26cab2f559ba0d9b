"""A Triton flash-attention forward kernel for bench/attention.py: the structure of Triton's fused-
attention tutorial (a BLOCK_M query block per program, K/V blocks in a loop, the online softmax in
exp2 form, causal blocks past the diagonal skipped), written here from that description.

    attention(q, k, v, causal, scale) -> o          # q, k, v: (B, H, S, D) contiguous, f16/bf16

Configurations are autotuned over a few block sizes per (D, causal, dtype), as the tutorial does.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
    for bm, bn, w, s in ((128, 64, 8, 3), (128, 64, 4, 3), (128, 32, 4, 4), (64, 64, 4, 3), (128, 128, 8, 2))
]


@triton.autotune(configs=CONFIGS, key=["N_CTX", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _fwd(Q, K, V, O, sm_scale, H, N_CTX,
         sqb, sqh, sqs, skb, skh, sks, svb, svh, svs, sob, soh, sos,
         HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    b, h = bh // H, bh % H
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = Q + b * sqb + h * sqh + offs_m[:, None] * sqs + offs_d[None, :]
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)
    k_base = K + b * skb + h * skh
    v_base = V + b * svb + h * svh
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    hi = tl.minimum((start_m + 1) * BLOCK_M, N_CTX) if CAUSAL else N_CTX
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_base + cols[None, :] * sks + offs_d[:, None], mask=cols[None, :] < N_CTX, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        keep = cols[None, :] < N_CTX
        if CAUSAL:
            keep = keep & (cols[None, :] <= offs_m[:, None])
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_base + cols[:, None] * svs + offs_d[None, :], mask=cols[:, None] < N_CTX, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    o_ptrs = O + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :]
    tl.store(o_ptrs, out.to(O.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              scale: float | None = None) -> torch.Tensor:
    b, h, s, d = q.shape
    q, k, v = (x.contiguous() for x in (q, k, v))
    o = torch.empty_like(q)
    scale = 1.0 / math.sqrt(d) if scale is None else scale

    def grid(meta):
        return (triton.cdiv(s, meta["BLOCK_M"]), b * h)

    _fwd[grid](q, k, v, o, scale, h, s, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3], *o.stride()[:3],
               HEAD_DIM=d, CAUSAL=causal)
    return o
