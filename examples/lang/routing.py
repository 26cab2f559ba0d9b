"""Lookups and top-k in tilec.lang: NF4 weights decoded through their codebook (``tl.gather``) and the
top-k expert routing of a mixture-of-experts layer (``tl.topk``).

    python examples/lang/routing.py     # the CPU interpreters against numpy, then the GPU if there is one

:func:`nf4_dequant` decodes QLoRA's 4-bit NormalFloat weights: two 4-bit codes a byte, each an index into
a codebook of 16 values, scaled by its block's absolute maximum. The codebook is a vector of 16 values in
registers, and ``tl.gather(codebook, codes, 0)`` picks one value a code (``tile.take``: through shared
memory). :func:`topk_route` is the router of a mixture-of-experts layer: a softmax over each token's expert
logits, its K largest probabilities renormalised, and which experts they are. Each probability's bits are
an ordered integer key (a non-negative float's bits sort as it does), with the expert's number in its low
bits, so one ``tl.topk`` of the keys gives both (ties go to the lower expert).
"""

from __future__ import annotations

import numpy as np

import tilec.lang as tl

NF4 = np.array([-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
                -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
                0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
                0.7229568362236023, 1.0], np.float32)
"""QLoRA's NormalFloat4 codebook: 16 quantiles of the standard normal, scaled to [-1, 1]."""


@tl.kernel(num_warps=4)
def nf4_dequant(packed_ptr, absmax_ptr, code_ptr, out_ptr, n_bytes, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    """``out[2i]``, ``out[2i + 1]`` = the codebook's values of byte ``i``'s high and low nibbles, times the
    absolute maximum of their group of GROUP weights (BLOCK bytes a program)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    byte = tl.load(packed_ptr + offs, mask=offs < n_bytes, other=0)
    codebook = tl.load(code_ptr + tl.arange(0, 16))
    high = tl.gather(codebook, (byte >> 4).to(tl.int32), 0)
    low = tl.gather(codebook, (byte & 15).to(tl.int32), 0)
    w = tl.interleave(high, low)  # weight 2i from the high nibble, 2i + 1 from the low one
    outs = tl.program_id(0) * (2 * BLOCK) + tl.arange(0, 2 * BLOCK)
    scale = tl.load(absmax_ptr + outs // GROUP, mask=outs < 2 * n_bytes, other=0.0)
    tl.store(out_ptr + outs, (w * scale).to(out_ptr.dtype.element_ty), mask=outs < 2 * n_bytes)


@tl.kernel(num_warps=4)
def topk_route(logits_ptr, weight_ptr, expert_ptr, tokens, E: tl.constexpr, K: tl.constexpr, BT: tl.constexpr):
    """For each of BT tokens a program: the K largest softmax probabilities over its E experts' logits
    (E a power of two), renormalised to sum to 1, largest first, and their experts' numbers."""
    tl.static_assert(E & (E - 1) == 0, "E must be a power of two")
    rows = tl.program_id(0) * BT + tl.arange(0, BT)
    cols = tl.arange(0, E)
    inside = rows[:, None] < tokens
    x = tl.load(logits_ptr + rows[:, None] * E + cols[None, :], mask=inside, other=0.0).to(tl.float32)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    key = (p.to(tl.int32, bitcast=True) & ~(E - 1)) | (E - 1 - cols[None, :])  # the larger, the lower expert
    top = tl.topk(key, K)
    expert = (E - 1) - (top & (E - 1))
    w = (top & ~(E - 1)).to(tl.float32, bitcast=True)
    w = w / tl.sum(w, axis=1)[:, None]
    outs = rows[:, None] * K + tl.arange(0, K)[None, :]
    tl.store(weight_ptr + outs, w, mask=inside)
    tl.store(expert_ptr + outs, expert, mask=inside)


def nf4_reference(packed: np.ndarray, absmax: np.ndarray, group: int) -> np.ndarray:
    """numpy's decoded weights of :func:`nf4_dequant` (float32)."""
    codes = np.stack([packed >> 4, packed & 15], -1).reshape(-1)
    return NF4[codes] * np.repeat(absmax, group)[:codes.size]


def route_reference(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy's (weights, experts) of :func:`topk_route`: the probabilities' low bits dropped as the kernel's
    keys drop them (ties to the lower expert), from float64 softmax."""
    e = logits.shape[1]
    x = logits.astype(np.float64)
    p = np.exp(x - x.max(1, keepdims=True))
    p = (p / p.sum(1, keepdims=True)).astype(np.float32)
    trimmed = (p.view(np.int32) & ~(e - 1)).view(np.float32)
    order = np.lexsort((np.broadcast_to(np.arange(e), p.shape), -trimmed), axis=1)[:, :k]
    w = np.take_along_axis(trimmed, order, 1).astype(np.float64)
    return w / w.sum(1, keepdims=True), order.astype(np.int32)


def main() -> int:
    rng = np.random.default_rng(0)
    n_bytes, group = 1000, 64
    packed = rng.integers(0, 256, n_bytes).astype(np.uint8)
    absmax = rng.uniform(0.5, 2, -(-2 * n_bytes // group)).astype(np.float32)
    out = np.full(2 * n_bytes, np.nan, np.float32)
    nf4_dequant.interpret(packed, absmax, NF4, out, n_bytes, BLOCK=256, GROUP=group, grid=(-(-n_bytes // 256),),
                          after="tile-distribute")
    nf4_ok = np.array_equal(out, nf4_reference(packed, absmax, group))
    print(f"interpreter after tile-distribute, nf4_dequant of {n_bytes} bytes: {'exact' if nf4_ok else 'WRONG'}")
    tokens, e, k = 100, 64, 8
    logits = rng.standard_normal((tokens, e)).astype(np.float32)
    w, ids = np.full((tokens, k), np.nan, np.float32), np.full((tokens, k), -1, np.int32)
    topk_route.interpret(logits, w, ids, tokens, E=e, K=k, BT=16, grid=(-(-tokens // 16),), after="tile-distribute")
    want_w, want_ids = route_reference(logits, k)
    route_ok = np.array_equal(ids, want_ids) and float(np.abs(w - want_w).max()) < 1e-5
    print(f"interpreter after tile-distribute, topk_route {tokens}x{e} top {k}: {'right' if route_ok else 'WRONG'}")
    if not (nf4_ok and route_ok):
        return 1
    ptx = nf4_dequant.compile(packed, absmax, NF4, out, n_bytes, BLOCK=256, GROUP=group, arch="sm_80").asm["ptx"]
    print(f"PTX for sm_80, nf4_dequant: {ptx.count('ld.shared')} shared loads, {ptx.count('bar.sync')} block barriers")
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU: not launched")
        return 0
    logits_g = torch.randn(4096, e, device="cuda")
    w_g = torch.full((4096, k), float("nan"), device="cuda")
    ids_g = torch.full((4096, k), -1, device="cuda", dtype=torch.int32)
    topk_route[(4096 // 16,)](logits_g, w_g, ids_g, 4096, E=e, K=k, BT=16)
    want_w, want_ids = route_reference(logits_g.cpu().numpy(), k)
    gpu_ok = np.array_equal(ids_g.cpu().numpy(), want_ids) and float(np.abs(w_g.cpu().numpy() - want_w).max()) < 1e-5
    print(f"GPU, topk_route 4096x{e} top {k}: {'right' if gpu_ok else 'WRONG'}")
    return 0 if gpu_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
