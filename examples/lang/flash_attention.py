"""Flash attention as a Triton user writes it: block tiles only, no shared memory, no warp ids.

    python examples/lang/flash_attention.py            # CPU interpreters, PTX; on a GPU also runs

Each block takes BM query rows of one head and walks the keys BN at a time with the online softmax
(a running row maximum ``m`` and sum ``l``, the output rescaled as the maximum grows): the
structure of Triton's fused-attention tutorial. Keys every row of the block sees whole go through an
unmasked loop; the ragged last tile and, for ``CAUSAL``, the diagonal through a masked one.

Nothing in the kernel says how to map it onto the GPU. The compiler stages the K and V tiles
through shared memory (``tile-stage``: both loops share the tiles, and ``tile-pipeline`` makes
their copies asynchronous), and gives the chained dots (``P = softmax(Q K^T)``, then ``P V``) warps
along the rows only, so a warp's rows of S stay in its registers through the softmax and become its
A operand of ``P V`` unmoved (``mma.sync``). Compiled for ``arch="sm_90a"`` (the default on an sm_90
GPU) both dots are the block's warpgroup MMAs: ``Q K^T`` reads K in shared memory and Q from
registers, ``P V`` reads V in shared memory and P from registers, FlashAttention-3's operand placement.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import tilec.lang as tl

LOG2E = 1.4426950408889634


def attention_step(qt, kh, vh, j, m, l, acc, qk_scale, rows, BN: int, D: int, MASK: bool, CAUSAL: bool):
    """One tile of keys at ``j``: the scores, the online softmax's update, ``acc += P V``."""
    s = tl.dot(qt, tl.trans(tl.load(kh, (j, 0), shape=(BN, D)))) * qk_scale
    if MASK:  # keys past the end, and for CAUSAL keys after the row
        cols = j + tl.arange(0, BN)
        keep = cols[None, :] < kh.shape[0]
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None])
        s = tl.where(keep, s, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with no key yet rescales nothing
    alpha = tl.exp2(m - m_safe)
    p = tl.exp2(s - m_safe[:, None])
    l = l * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(vh.dtype), tl.load(vh, (j, 0), shape=(BN, D)))
    return m_new, l, acc


@tl.kernel(num_warps=8, num_stages=2)
def flash_attention(q, k, v, o, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
                    GROUP: tl.constexpr = 1, CAUSAL: tl.constexpr = False):
    """``o[b, h] = softmax(q[b, h] @ k[b, h // GROUP].T * scale) @ v[b, h // GROUP]`` for q (B, H, Sq, D),
    k and v (B, H / GROUP, Sk, D); ``CAUSAL``: query row ``i`` sees keys ``j <= i`` (torch's
    ``is_causal``). Grid: (Sq / BM, B, H)."""
    b, h = tl.program_id(1), tl.program_id(2)
    qh, kh, vh, oh = q[b, h], k[b, h // GROUP], v[b, h // GROUP], o[b, h]
    i = tl.program_id(0) * BM
    n = kh.shape[0]
    rows = i + tl.arange(0, BM)
    qt = tl.load(qh, (i, 0), shape=(BM, D))
    qk_scale = scale * LOG2E
    m = tl.full((BM,), float("-inf"), axis=0)
    l = tl.zeros((BM,), axis=0)
    acc = tl.zeros((BM, D))
    # keys [0, full) every row of the block sees: BN-wide tiles before the ragged end and the diagonal
    full = tl.minimum(n, i) // BN * BN if CAUSAL else n // BN * BN
    for j in tl.range(0, full, BN):
        m, l, acc = attention_step(qt, kh, vh, j, m, l, acc, qk_scale, rows, BN, D, False, CAUSAL)
    end = tl.minimum(n, i + BM) if CAUSAL else n
    for j in tl.range(full, end, BN):
        m, l, acc = attention_step(qt, kh, vh, j, m, l, acc, qk_scale, rows, BN, D, True, CAUSAL)
    tl.store(oh, (i, 0), (acc / l[:, None]).to(oh.dtype))


CONFIG = {64: dict(BM=64, BN=128), 128: dict(BM=64, BN=64)}
"""mma.sync (any GPU from sm_80): four warps of 16 rows (H200, S = 4k, f16: BM 64 was 0.2-0.3x faster
than BM 128 on eight warps; bench/NOTES.md, session 29)."""

CONFIG_SM90A = {64: dict(BM=64, BN=128), 128: dict(BM=128, BN=128)}
"""``arch="sm_90a"``: the warpgroup MMAs; the compile options in :data:`OPTIONS_SM90A`."""

OPTIONS_SM90A = {64: dict(num_warps=4, bulk=True),
                 128: dict(num_warps=8, num_stages=3, bulk=True, producer=True)}
"""K and V by bulk tensor copies (TMA); at D = 128 two warpgroups and a producer warpgroup issuing the
copies (H200, S = 4k, f16: 564 against 533 TFLOP/s without it, causal 492 against 417; at D = 64 one
warpgroup is fastest and a producer changes nothing: bench/NOTES.md, session 29)."""


def kernel_for(d: int, arch: str | None) -> tuple[tl.Kernel, dict]:
    """The kernel variant and block shape for head dimension ``d`` on ``arch`` (tuned at 64 and 128; other
    head dimensions take the nearer one's at most)."""
    key = 64 if d <= 64 else 128
    if arch == "sm_90a":
        return flash_attention.with_options(**OPTIONS_SM90A[key]), CONFIG_SM90A[key]
    return flash_attention.with_options(num_warps=4), CONFIG[key]


def reference(q, k, v, causal: bool, scale: float) -> np.ndarray:
    group = q.shape[1] // k.shape[1]
    k, v = (np.repeat(x.astype(np.float64), group, axis=1) for x in (k, v))
    s = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k) * scale
    if causal:
        s = np.where(np.arange(s.shape[-1])[None, :] <= np.arange(s.shape[-2])[:, None], s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhij,bhjd->bhid", p / p.sum(-1, keepdims=True), v)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=128, choices=(64, 128))
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    worst = 0.0
    q = rng.standard_normal((1, 2, 100, 64)).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 150, 64)).astype(np.float16) for _ in range(2))
    for causal in (False, True):
        for arch, after in ((None, None), (None, "tile-distribute"), ("sm_90a", "tile-distribute")):
            o = np.full_like(q, np.nan)
            kern, cfg = kernel_for(64, arch)
            cfg = dict(BM=64, BN=64)
            kern.interpret(q, k, v, o, 0.125, grid=(2, 1, 2), GROUP=2, CAUSAL=causal, D=64, after=after, arch=arch,
                           **cfg)
            ref = reference(q, k, v, causal, 0.125)
            err = float(np.abs(o - ref).max() / np.abs(ref).max())
            worst = max(worst, err)
            print(f"interpreter{'' if after is None else ' after ' + after}{'' if arch is None else ', ' + arch}: "
                  f"GQA 100x150, causal={causal}, max relative error {err:.1e}")
    for arch in ("sm_80", "sm_90a"):  # (a launch on an sm_90 GPU without arch= takes sm_90a)
        kern, cfg = kernel_for(args.dim, arch)
        x = np.zeros((1, 1, 256, args.dim), np.float16)
        ptx = kern.compile(x, x, x, x, 1.0, D=args.dim, arch=arch, **cfg).asm["ptx"]
        print(f"PTX for {arch}: {ptx.count('mma.sync')} mma.sync, {ptx.count('wgmma.mma_async')} wgmma.mma_async, "
              f"{ptx.count('st.shared')} st.shared")
    from tilec.runtime import has_device

    if not has_device():
        print("no GPU: not launched")
        return 0 if worst < 2e-3 else 1
    import torch
    import torch.nn.functional as F

    s, d = args.seq, args.dim
    b, h = max(1, 16384 // s), 2048 // d
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
    archs = ["sm_80"] + (["sm_90a"] if torch.cuda.get_device_capability() == (9, 0) else [])  # mma.sync, wgmma
    for arch in archs:
        kern, cfg = kernel_for(d, arch)
        for causal in (False, True):
            o = torch.full_like(q, float("nan"))
            kern[(-(-s // cfg["BM"]), b, h)](q, k, v, o, 1 / math.sqrt(d), D=d, CAUSAL=causal, arch=arch, **cfg)
            ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
            err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
            worst = max(worst, err)
            print(f"GPU ({arch}): {b}x{h}x{s}x{d} f16, causal={causal}, max relative error {err:.1e}")
    return 0 if worst < 2e-3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
