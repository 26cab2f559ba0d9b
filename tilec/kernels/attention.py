"""``tilec.attention``: flash attention (forward), written in tilec.lang.

    o = tilec.attention(q, k, v, causal=False, scale=None)            # like F.scaled_dot_product_attention
    o, lse = tilec.attention(q, k, v, return_lse=True)                # lse: (B, H, Sq) f32, natural log
    k = tilec.attention_kernel(q, k, v, arch="sm_80")                 # the compiled kernel, no GPU needed

q is (B, Hq, Sq, D), k and v (B, Hkv, Sk, D) with Hq a multiple of Hkv (GQA/MQA), any strides
(e.g. (B, S, H, D) tensors transposed), f16 or bf16. Causal masking is top-left aligned, like
``is_causal=True`` of PyTorch's SDPA: query i sees keys 0..i.

Two kernels, one schedule (FlashAttention-2's, on the register algebra), chosen by the target like
``tilec.matmul``'s paths. Each block owns BM query rows of one (batch, head), each warp 16 of those
rows (32 on the mma.sync kernel up to D = 64). With a causal mask the blocks start longest first,
through groups of heads whose K/V fit in L2 (:func:`block_tile`). The K/V tiles of ``tl.range``
loops are staged through shared memory: ``num_stages`` turns them into a ``cp.async`` pipeline, and
``tile-swizzle`` lays the tiles out. Per K/V tile:

- ``S = q @ k.T`` on the tensor cores;
- the online softmax (:func:`softmax_step`): a row maximum of the raw scores and a rescaled row
  sum, carried as register vectors; each probability is one fused multiply-add and an ``ex2``;
- ``O = O * alpha + P @ V``, P taken from S's accumulator fragment; the mma.sync kernel's 32-row
  warps past D = 64 rescale O only when a row's maximum moved by more than 2^8 (:func:`online_softmax`,
  a ``@tl.func`` with a run-time ``if`` each warp takes or skips whole).

:data:`attention_fwd` (sm_80 and up) multiplies with ``mma.sync`` on register tiles
(``tl.mma``; P's accumulator fragment is its A fragment). :data:`attention_fwd_wgmma` (sm_90, compiled
for sm_90a) uses the warpgroup MMA: q's and k's tiles stay in shared memory in the layout the wgmma
descriptors read, and ``P @ V`` takes P from registers. Its K/V tiles are bulk tensor copies (TMA,
``bulk=True``) through a tensor map of the whole (B, H, S, D) argument, addressed at (column, row,
head, batch), so strided views need no copy. With two warpgroups of query rows (BM 128) a third,
the producer (``producer=True``: warp specialisation), issues them ahead of the consumers and gives
its registers to them (``setmaxnreg``); each consumer warp releases a stage on its own barrier after
its last read, and the loops have no block barrier. The tiles wholly inside the keys (and, with
causal masking, left of the block's first row) run in a loop without masks; the ragged last tile
and the causal diagonal in a second loop over the same stages, and with causal masking the tiles
past the block's last row are not visited. Past D = 64 each warp stores its rows of O through shared
memory and a bulk tensor store where the buffers fit beside q's tile and the stages (up to D = 224;
:data:`attention_fwd_wgmma_stored`, the same function with ``bulk_store=True``). Nothing below the
language is specific to attention.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

import tilec.lang as tl
from tilec.lang.tracing import error
from tilec.runtime.arrays import is_torch_tensor

LOG2E = 1.4426950408889634


def key_range(n, row0, BM: int, BN: int, CAUSAL: bool):
    """``(full, hi)``: the K/V tiles ``[0, full)`` need no mask (inside the keys and, with ``CAUSAL``,
    wholly left of the block's first row); ``[full, hi)`` are masked, and none past ``hi`` is visited
    (causal: past the block's last row)."""
    hi = tl.minimum(n, row0 + BM) if CAUSAL else n
    full = tl.minimum(row0 + 1, n) // BN * BN if CAUSAL else n // BN * BN
    return full, hi


def block_tile(q, BM: int, CAUSAL: bool, heads_per_group):
    """``(row0, bh)``: the first query row and the (batch, head) index of this block's tile.

    The grid is (query blocks, batch x heads); its blocks, numbered in launch order, go through the
    heads in groups of ``heads_per_group``: every query block of a group's heads before the next group, query
    block by query block. With ``CAUSAL`` the query blocks go last rows first: those see the most
    keys, so the longest blocks start first and the short ones fill the GPU's tail (FlashAttention's
    longest-processing-time order). One head a group is head by head (a head's K/V stays in L2 while
    its blocks run); more heads a group put the long blocks of more heads ahead of the short ones, at
    the cost of more K/V live in L2 (:func:`order_heads`). A run-time argument, not a constexpr: it
    depends on the sequence length, which must not make a kernel of its own."""
    blocks = (q.shape[2] + (BM - 1)) // BM
    heads = q.shape[0] * q.shape[1]
    heads_per_group = tl.maximum(heads_per_group, 1)  # a caller's 0 or less: head by head, no division by 0
    index = tl.block_id(1) * blocks + tl.block_id(0)
    first = index // (heads_per_group * blocks) * heads_per_group  # this group's first (batch, head)
    size = tl.minimum(heads - first, heads_per_group)  # the last group may be short
    rest = index - first * blocks
    qb, bh = rest // size, first + rest % size
    return ((blocks - 1 - qb) if CAUSAL else qb) * BM, bh


def warp_rows(BM: int, WM: int):
    """This warp's first query row in its block: each of the block's warps owns WM consecutive rows,
    so ``num_warps`` must be BM / WM (:func:`warps`); anything else is an error here, not rows
    computed twice or never."""
    if tl.num_warps() * WM != BM:
        raise error(f"{tl.num_warps()} warps of {WM} query rows do not cover a block of {BM}: launch with "
                    f"num_warps = BM // WM = {BM // WM} (tilec.kernels.attention.warps)")
    return tl.warp_id() * WM


def head_views(q, k, v, o, bh, GROUP: int):
    """Batch ``b`` and head ``h`` of (batch, head) index ``bh``, and the views of that head: q's, o's
    and the k and v head its group of ``GROUP`` query heads shares (GQA)."""
    heads = q.shape[1]
    b, h = bh // heads, bh % heads
    return b, h, q[b, h], k[b, h // GROUP], v[b, h // GROUP], o[b, h]


def softmax_start(rows: int, D: int, NEG: bool):
    """The online softmax's state before any key: the running extreme, the running sum and O (a warp's rows)."""
    m = tl.full((rows,), float("inf") if NEG else float("-inf"), axis=0)
    return m, tl.zeros((rows,), axis=0), tl.zeros((rows, D))


def store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale):
    """This warp's rows of O (``acc / l``) and, when asked for, their log-sum-exp (natural log)."""
    tl.store(oh, (wrow, 0), (acc / l[:, None]).to(oh.dtype))
    if lse is not None:
        tl.store(lse[b, h], (wrow,), (m * qk_scale + tl.log2(l)) * (1.0 / LOG2E))


def masked(s, n0, n, wrow, CAUSAL: bool, none: float):
    """``(s, keep)``: the scores of the keys past ``n`` (with ``CAUSAL``, also past the row) set to
    ``none``, and which are kept."""
    cols = tl.iota(s.shape, 1, n0)
    keep = cols < n
    if CAUSAL:
        keep = keep & (cols <= tl.iota(s.shape, 0, wrow))
    return tl.where(keep, s, none), keep


def softmax_step(s, m, l, qk_scale, n0, n, wrow, MASK: bool, CAUSAL: bool, NEG: bool):
    """One K/V tile of the online softmax (FlashAttention-2) on raw scores ``s`` (a warp's rows x BN, f32).

    ``m`` is each row's running extreme of the raw scores, the maximum (the minimum when the scale
    is negative, ``NEG``), so that ``m * qk_scale`` is the maximum of the scaled scores and each
    probability is one fused multiply-add and an ``ex2``: ``exp2(s * qk_scale - m * qk_scale)``.
    ``l`` is the running sum. ``MASK``: keys past ``n`` (and, with ``CAUSAL``, past the row) count
    as absent: out of the extreme, and a probability of 0 (not ``exp2(-inf * qk_scale)``, which is
    NaN for a zero scale). Returns ``(p, alpha, m, l)``: the tile's probabilities and the factor
    that rescales what was accumulated before."""
    none = float("inf") if NEG else float("-inf")  # the extreme of a row with no key so far
    if MASK:
        s, keep = masked(s, n0, n, wrow, CAUSAL, none)
    m_new = tl.minimum(m, tl.row_min(s)) if NEG else tl.maximum(m, tl.row_max(s))
    # a row with no key so far keeps m = -inf (+inf): its terms are 0, and -inf * scale is no number
    m_scaled = tl.where(m_new == none, 0.0, m_new * qk_scale)
    p = tl.exp2(s * qk_scale - m_scaled[:, None])
    if MASK:
        p = tl.where(keep, p, 0.0)
    alpha = tl.where(m == none, 0.0, tl.exp2(m * qk_scale - m_scaled))
    return p, alpha, m_new, l * alpha + tl.row_sum(p)


@tl.func
def online_softmax(s, m, l, acc, qk_scale, n0, n, wrow, MASK: bool, CAUSAL: bool, NEG: bool, LAZY: float):
    """:func:`softmax_step` with O: ``(p, m, l, acc)``, what was accumulated in ``acc`` rescaled.

    ``LAZY`` > 0 (FlashAttention-4's conditional rescale): ``m`` moves, and O and ``l`` are rescaled,
    only when a row of the warp's scores passes its running extreme by more than ``LAZY`` powers of
    two; else the stale extreme stays, the tile's probabilities are at most ``2**LAZY``, and the
    result is the same (``acc / l`` and the log-sum-exp take ``m`` as it is). The test is one value
    the warp agrees on (a maximum over its rows): a branch a warp takes or skips whole, and with it
    the rescale's multiplies (one per element of O)."""
    if not LAZY:
        p, alpha, m, l = softmax_step(s, m, l, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG)
        return p, m, l, acc * alpha[:, None]
    none = float("inf") if NEG else float("-inf")
    if MASK:
        s, keep = masked(s, n0, n, wrow, CAUSAL, none)
    m_new = tl.minimum(m, tl.row_min(s)) if NEG else tl.maximum(m, tl.row_max(s))
    # how far each row's extreme moves, in powers of two of its probabilities (its first key: inf)
    grow = tl.where(m_new == m, 0.0, tl.where(m == none, float("inf"), (m_new - m) * qk_scale))
    if tl.max(grow) > LAZY:
        m_scaled = tl.where(m_new == none, 0.0, m_new * qk_scale)
        alpha = tl.where(m == none, 0.0, tl.exp2(m * qk_scale - m_scaled))
        acc = acc * alpha[:, None]
        l = l * alpha
        m = m_new
    p = tl.exp2(s * qk_scale - tl.where(m == none, 0.0, m * qk_scale)[:, None])
    if MASK:
        p = tl.where(keep, p, 0.0)
    return p, m, l + tl.row_sum(p), acc


Q_IN_REGISTERS_MAX_D = 64
"""The largest head dimension at which a 32-row warp of :data:`attention_fwd` keeps its q in registers
(32 a thread); past it q is read from shared memory each K/V tile. 16-row warps keep it (up to 96)."""


# heads_per_group is a schedule (how many heads a block walks), not a stride: one variant for every value
@tl.kernel(num_warps=4, num_stages=2, do_not_specialize=("heads_per_group",))
def attention_fwd(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
                  GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False, heads_per_group=1,
                  WM: tl.constexpr = 16, LAZY: tl.constexpr = 0.0):
    """``o[b, h] = softmax(q[b, h] @ k[b, h // GROUP].T * scale) @ v[b, h // GROUP]``, BM query rows a
    block, WM (16 or 32) a warp: a warp of 32 rows reads each K and V fragment once for two row tiles.

    A 32-row warp keeps its q in registers up to D = 64 (:data:`Q_IN_REGISTERS_MAX_D`, 32 registers a
    thread); past it q would take the registers O and S need, so the block's q goes to shared memory
    once and each K/V tile reads the warp's rows from there, a K step at a time (FlashAttention-2's
    choice). A 16-row warp keeps its q in registers. ``LAZY``: :func:`online_softmax`'s threshold
    (0: O rescaled every tile)."""
    row0, bh = block_tile(q, BM, CAUSAL, heads_per_group)
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, bh, GROUP)
    n = kh.shape[0]
    wloc = warp_rows(BM, WM)
    wrow = row0 + wloc  # this warp's WM query rows
    if WM == 32 and D > Q_IN_REGISTERS_MAX_D:
        sq = tl.alloc((BM, D), q.dtype)
        tl.copy(qh, (row0, 0), sq)
        tl.barrier()
    else:
        qt = tl.load(qh, (wrow, 0), shape=(WM, D))
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(WM, D, NEG)  # running extreme and sum of each row's scores, O
    qk_scale = scale * LOG2E  # exp(x) = exp2(x log2 e)
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    # whole tiles without a mask, then the ragged last tile and the causal diagonal (a Python loop: two K loops)
    for lo, end, MASK in ((0, full, False), (full, hi, True)):
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (n0, 0), sv)
            tl.barrier()
            qw = tl.load(sq, (wloc, 0), (WM, D)) if WM == 32 and D > Q_IN_REGISTERS_MAX_D else qt
            s = tl.mma(qw, tl.load(sk), tl.zeros((WM, BN)), trans_b=True)
            p, m, l, acc = online_softmax(s, m, l, acc, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG, LAZY)
            acc = tl.mma(p.to(q.dtype), tl.load(sv), acc)
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)


@tl.kernel(num_warps=8, num_stages=2, bulk=True, producer=True, do_not_specialize=("heads_per_group",))
def attention_fwd_wgmma(q, k, v, o, lse, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr,
                        GROUP: tl.constexpr, CAUSAL: tl.constexpr, NEG: tl.constexpr = False,
                        heads_per_group=1, LAZY: tl.constexpr = 0.0):
    """:func:`attention_fwd` on sm_90a's warpgroup MMA: q's tile stays in shared memory for
    ``S = q @ k.T`` (``tl.wgmma`` with ``trans_b``), and ``O += P @ V`` takes P from registers.
    Each warpgroup owns 64 of the block's BM query rows, each warp 16 of those."""
    row0, bh = block_tile(q, BM, CAUSAL, heads_per_group)
    b, h, qh, kh, vh, oh = head_views(q, k, v, o, bh, GROUP)
    n = kh.shape[0]
    wrow = row0 + warp_rows(BM, 16)  # this warp's 16 query rows
    band = tl.warp_id() // 4 * 64  # this warpgroup's rows of the block's q tile
    sq = tl.alloc((BM, D), q.dtype)
    tl.copy(qh, (row0, 0), sq)
    sk, sv = tl.alloc((BN, D), k.dtype), tl.alloc((BN, D), v.dtype)
    m, l, acc = softmax_start(16, D, NEG)
    qk_scale = scale * LOG2E
    full, hi = key_range(n, row0, BM, BN, CAUSAL)
    for lo, end, MASK in ((0, full, False), (full, hi, True)):  # unmasked tiles, then the masked ones
        for n0 in tl.range(lo, end, BN):
            tl.copy(kh, (n0, 0), sk)
            tl.copy(vh, (n0, 0), sv)
            tl.barrier()
            s = tl.wgmma(sq, band, sk, 0, tl.zeros((16, BN)), trans_b=True)
            p, m, l, acc = online_softmax(s, m, l, acc, qk_scale, n0, n, wrow, MASK, CAUSAL, NEG, LAZY)
            acc = tl.wgmma(p.to(q.dtype), None, sv, 0, acc)
            tl.barrier()
    store_rows(oh, lse, b, h, wrow, acc, m, l, qk_scale)


HEAD_DIMS = (64, 128)
"""Head dimensions the kernels are tuned for. Any multiple of 16 up to 256 runs on sm_90's wgmma
kernel, up to :data:`MMA_MAX_HEAD_DIM` on the mma.sync kernel (sm_80 and up)."""

MMA_MAX_HEAD_DIM = 192
"""The mma.sync kernel keeps a warp's 16 x D accumulator and its 16 x D query tile in registers: at
D = 256 that spills (28 bytes with 16-row K/V tiles; D = 192 fits in 248 registers)."""

DTYPES = ("float16", "bfloat16")

OWNER = "tilec.attention"


WGMMA_ARCHS = ("sm_90", "sm_90a")
"""Targets that run :data:`attention_fwd_wgmma` (compiled for sm_90a, where the warpgroup MMA is)."""

attention_fwd_wgmma_stored = attention_fwd_wgmma.with_options(bulk_store=True)
""":data:`attention_fwd_wgmma` whose warps store their rows of O through shared memory and bulk tensor
stores (``tile-bulk-store``: whole lines written, the warp free at once) instead of one ``st.global``
per fragment pair. Taken past :data:`TMA_STORE_PAST_D`; at D = 240 and 256 whole-row buffers do not fit
beside q's tile and the K/V stages: at 256 ``tile-bulk-store`` stores the rows in column chunks of one
128-byte box through a ring of two a warp, at 240 (32-byte boxes) the stores stay direct."""

TMA_STORE_PAST_D = 64
"""Head dimensions above this store O by TMA. H200, bf16, session 20, TFLOP/s, direct / TMA store (two
rounds of one call): D 128 S 1k 388, 397 / 426, 429; S 4k 592, 567 / 614, 578 (causal 480, 457 / 490,
468); S 8k 584, 599 / 601, 599 (causal 523, 534 / 534, 540); S 16k even. At D 64 its buffers cost the
64-row blocks their second block an SM: S 4k 460, 454 / 413, 375."""


LONG_QUERIES = {64: 8192, 128: 2048}
"""From how many query rows on the wgmma kernel gives a head dimension up to 64 (up to 128) blocks of
192 rows, three consumer warpgroups and the producer, instead of 64 rows (one warpgroup, two blocks
an SM; 128: two warpgroups). A ragged last block pads up to 191 rows: the longer, the less that costs."""


def config(d: int, wgmma: bool = False, sq: int = 0, causal: bool = False) -> dict[str, int]:
    """Block sizes for head dimension ``d``, ``sq`` query rows and a causal mask or not: BM query
    rows a block, K/V tiles of BN rows, and (mma.sync) WM rows a warp; a block has
    :func:`warps` warps.

    mma.sync (:data:`attention_fwd`): up to d = 128 a warp owns 32 query rows, so that each K and V
    fragment it loads from shared memory serves two row tiles (FlashAttention-2's warp tile). Up to
    d = 64: 64-row blocks (two warps; 28-40 bytes of spills at d = 64), q in registers, K/V tiles of 64
    rows. H200, bf16, session 22, TFLOP/s, 16 rows BN 128 / 32 rows BN 64 (FlashAttention-2): S 4k
    293 / 315 (298), causal 263 / 291 (276), S 16k 294 / 311 (306). Past d = 64 up to 128: 128-row
    blocks (four warps), q read from shared memory (:data:`Q_IN_REGISTERS_MAX_D`), K/V tiles of 32
    rows: O alone is 128 registers a thread at d = 128, and with 64-row K/V tiles S's 64 more spill
    (ptxas: 200-260 bytes). Session 26, d = 128, BM 64 / 16 rows BN 64 (the previous choice) against
    BM 128 / 32 rows BN 32 (FlashAttention-2): S 4k 310-319 / 321-326 (343-355), causal 282-297 /
    289-295 (300-305), S 16k 312-320 / 334-336 (346-349). Past d = 128 a warp owns 16 rows of 64-row
    blocks, with K/V tiles of 32 rows up to d = 160, else 16. ``tile-pipeline`` splits both
    mmas into their K steps (K's and V's operands loaded from shared memory a step ahead, q's and P's
    taken as ``tile.slice``\\ s of the registers that hold them), so a warp never holds a whole K or V
    tile: session 18, d = 128 BN 64 312 / 316 against BN 32 272 / 281 (S 4k / 16k).

    wgmma (:data:`attention_fwd_wgmma`): the operands stay in shared memory and a thread holds S
    (BN / 2) and O (d / 2) accumulators; 128 query rows (two warpgroups, one block an SM) for
    d = 128, 64 rows (one warpgroup, two blocks an SM) for d <= 64 (H100,
    ``bench/attention_configs.py``: 448 against 385 TFLOP/s at d = 128, 328 against 262 at d = 64).
    K/V tiles of 128 rows up to d = 128, 64 past it (shared memory: q's tile and two stages of K
    and V). With BM 128 the kernel has a producer warpgroup (``producer=True``) and its consumers
    240 registers a thread: BN 128 then beats BN 160 without a producer (H200, S = 4k: 529 against
    502 TFLOP/s), and BN 160 with one runs out of registers (131).
    From :data:`LONG_QUERIES` query rows on, 192 query rows (three consumer warpgroups of 160
    registers and a producer). Their K/V tiles past d = 64 are 112 rows without a causal mask (8
    bytes of spills) and 96 with one (96 divides the block, so a causal block has two masked tiles,
    not three). H200, bf16, session 22, TFLOP/s, BN 96 / 112 / 128 (124 bytes of spills): S 2k 560 /
    571 / 587, 4k 636 / 646 / 643, 8k 666 / 670 / 650, 16k 637 / 652 / 628; causal 96 / 112: 4k 535 /
    522, 8k 638 / 608, 16k 683 / 626. Session 19: d = 64, BN 128, BM 64 / 192: S 16k 447 / 504, S 4k
    473 / 464 (4224 rows for 4096: 3% of the work is padding); d = 128, BM 128 BN 128 / BM 192 BN 96
    (causal in brackets): S 2k 487 / 517, 4k 555 / 568 (438 / 466), 8k 546 / 596 (500 / 540), 16k
    532 / 613 (558 / 584)."""
    if wgmma:
        if d <= 64:
            return {"BM": 192 if sq >= LONG_QUERIES[64] else 64, "BN": 128, "D": d}
        if d <= 128:
            bm, bn = (192, 96 if causal else 112) if sq >= LONG_QUERIES[128] else (128, 128)
            return {"BM": bm, "BN": bn, "D": d}
        return {"BM": 128, "BN": 64, "D": d}
    if d <= 64:
        return {"BM": 64, "BN": 64, "D": d, "WM": 32}
    if d <= 128:
        return {"BM": 128, "BN": 32, "D": d, "WM": 32, "LAZY": LAZY_RESCALE}
    return {"BM": 64, "BN": 32 if d <= 160 else 16, "D": d}


LAZY_RESCALE = 8.0
"""How many powers of two a row's running maximum may lag before O is rescaled (:func:`online_softmax`'s
``LAZY``), taken by the mma.sync kernel's 32-row warps past D = 64 (:func:`config`); elsewhere O is
rescaled every tile (FlashAttention-2's way). H200, bf16, session 30 (``bench/attention_rescale.py``,
two rounds of one call), TFLOP/s, every tile / lazy (FlashAttention-2): mma.sync D 128 S 4k 309, 306
/ 321, 325 (348, 338), causal 271, 271 / 293, 292 (297), S 16k 321, 327 / 333, 329 (339, 338),
causal 318, 319 / 327, 330 (315), S 1k 280, 279 / 277, 276. D 64 is slower lazily (S 4k 302, 302 /
289, 285: half as many multiplies saved, the same branch and vote), and so is the wgmma kernel at
every shape (D 128 S 4k 650, 640 / 573, 559)."""


def warps(constexprs: dict[str, Any]) -> int:
    """The warps of a block with these :func:`config` constexprs: BM query rows, WM (16 unless given)
    a warp; ValueError when BM is not a multiple of WM."""
    bm, wm = constexprs["BM"], constexprs.get("WM", 16)
    if wm not in (16, 32) or bm % wm:
        raise ValueError(f"{OWNER}: a block of BM = {bm} query rows in warps of WM = {wm}: WM is 16 or 32 and "
                         "divides BM")
    return bm // wm


KV_L2_BYTES = 32 << 20
"""With a causal mask, the K/V bytes of the heads whose blocks run interleaved (:func:`order_heads`). H200,
session 21, bf16, TFLOP/s, heads a group 1 / 4 / 8 / 16 / 32 (K/V bytes a head): D 128 S 4k (2 MB)
461 / 471 / 482 / 482 / 478; S 8k (4 MB) 542 / 562 / 561 / 572 / 550; S 16k (8 MB) 552 / 622 / 597 /
594; S 1k, blocks of 128 rows (0.5 MB; 1 / 8 / 32 / 64 / 256) 271 / 275 / 277 / 270 / 256; D 64 S 4k
(1 MB; 1 / 8 / 32) 396 / 413 / 409, S 8k 401 / 421 / 413. Without a mask the order makes no
difference (D 128 S 4k, 1 / 8 heads: 570 / 570)."""


def order_heads(sk: int, d: int, group: int, causal: bool, pairs: int) -> int:
    """How many (batch, head) pairs a group of :func:`block_tile`'s order holds: with a causal mask as
    many as keep :data:`KV_L2_BYTES` of K and V live (``group`` query heads share one K/V head), so
    that the longest blocks of several heads start before the short ones; else 1, head by head. At
    most the ``pairs`` there are: the kernel multiplies it by the query blocks in 32 bits."""
    if not causal:
        return 1
    kv_bytes = 2 * sk * d * 2  # K and V of one head, 2-byte elements (f16, bf16)
    return max(1, min(pairs, KV_L2_BYTES * group // kv_bytes))


def path(arch: str | None, d: int) -> tuple[Any, str]:
    """The kernel and the target for ``arch`` (None: the GPU's) and head dimension ``d``: the wgmma
    kernel on sm_90 (storing O by TMA past :data:`TMA_STORE_PAST_D`), else the mma.sync one."""
    # lazy: tilec.api (xDSL, the runtime) loads with the first compile, ~250 ms (measured)
    from tilec.api import target_arch

    arch = target_arch(arch)
    if arch in WGMMA_ARCHS:
        return (attention_fwd_wgmma_stored if d > TMA_STORE_PAST_D else attention_fwd_wgmma), "sm_90a"
    return attention_fwd, arch


def _check(q: Any, k: Any, v: Any) -> tuple[int, int, int, int, int, int]:
    """(B, Hq, Hkv, Sq, Sk, D), or a TypeError/ValueError naming the argument."""
    # lazy: tilec.kernels.gemm_plan adds ~90 ms (measured) to importing the language
    from tilec.kernels.gemm_plan import describe_operand

    described = {}
    for name, x in (("q", q), ("k", k), ("v", v)):
        op = describe_operand(name, x, OWNER)  # torch, numpy, __cuda_array_interface__ or DLPack
        shape = tuple(int(n) for n in op.info.shape)
        if len(shape) != 4:
            raise ValueError(f"{OWNER}: {name} must be a 4-D array (B, H, S, D), got shape {shape}")
        if op.dtype not in DTYPES:
            raise TypeError(f"{OWNER}: {name} has dtype {op.dtype}; expected float16 or bfloat16")
        described[name] = (shape, op.dtype)
    (q_shape, q_dtype), (k_shape, k_dtype), (v_shape, v_dtype) = described.values()
    if not q_dtype == k_dtype == v_dtype:
        raise TypeError(f"{OWNER}: q, k and v must share a dtype, got {q_dtype}, {k_dtype}, {v_dtype}")
    b, hq, sq, d = q_shape
    bk, hkv, sk, dk = k_shape
    if k_shape != v_shape:
        raise ValueError(f"{OWNER}: k and v must have one shape, got {k_shape} and {v_shape}")
    if bk != b or dk != d:
        raise ValueError(f"{OWNER}: k is {k_shape}, expected batch {b} and head dimension {d} like q")
    if min(b, hq, hkv, sq, sk) == 0:
        raise ValueError(f"{OWNER}: empty input (q {q_shape}, k {k_shape})")
    if hq % hkv:
        raise ValueError(f"{OWNER}: q has {hq} heads, k and v {hkv}: q's heads must be a multiple of k's (GQA)")
    if d % 16 or not 16 <= d <= 256:
        raise ValueError(f"{OWNER}: head dimension {d}; expected a multiple of 16 up to 256 (64 and 128 are tuned)")
    return b, hq, hkv, sq, sk, d


def _check_out(out: Any, q: Any, k: Any, v: Any) -> None:
    """``out`` is an array of q's shape and dtype, one address per element, sharing no memory with q, k
    or v (other blocks still read them while one writes its rows)."""
    # lazy: tilec.kernels.gemm_plan adds ~90 ms (measured) to importing the language
    from tilec.kernels.gemm_plan import check_output_memory, describe_operand

    o, inputs = describe_operand("out", out, OWNER), [describe_operand(n, x, OWNER) for n, x in (("q", q), ("k", k), ("v", v))]
    if tuple(o.info.shape) != tuple(inputs[0].info.shape) or o.dtype != inputs[0].dtype:
        raise ValueError(f"{OWNER}: out is {tuple(o.info.shape)} {o.dtype}; expected q's "
                         f"{tuple(inputs[0].info.shape)} {inputs[0].dtype}")
    check_output_memory(o, inputs, OWNER)


def _arguments(q: Any, k: Any, v: Any, out: Any, lse: Any, causal: bool, scale: float | None,
               wgmma: bool = False) -> tuple[tuple, dict]:
    b, hq, hkv, sq, sk, d = _check(q, k, v)
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"{OWNER}: causal must be a bool, got {causal!r}")
    if not wgmma and d > MMA_MAX_HEAD_DIM:
        raise ValueError(f"{OWNER}: head dimension {d} on the mma.sync kernel (sm_80 to sm_89, or arch='sm_80'): "
                         f"it holds at most D = {MMA_MAX_HEAD_DIM} in registers; sm_90's wgmma kernel takes up to 256")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, numbers.Real)):
        raise TypeError(f"{OWNER}: scale must be a finite real number or None (1 / sqrt(D)), got {scale!r}")
    try:
        scale = 1.0 / math.sqrt(d) if scale is None else float(scale)
    except OverflowError:  # an int past the double range
        scale = math.inf
    if not abs(scale) < SCALE_LIMIT:
        raise ValueError(f"{OWNER}: scale={scale!r} must be finite and below {SCALE_LIMIT:.3g} in magnitude (the "
                         "kernel multiplies the scores by scale * log2(e) in f32)")
    return (q, k, v, out, lse, scale), {**config(d, wgmma, sq, causal), "GROUP": hq // hkv, "CAUSAL": bool(causal),
                                        "NEG": scale < 0, "heads_per_group": order_heads(sk, d, hq // hkv, causal, b * hq)}


GRID_Y_MAX = 65535
"""CUDA's limit on a grid's second dimension."""


def grid(q: Any, wgmma: bool = False, causal: bool = False) -> tuple[int, int]:
    """(query blocks, batch x heads): the launch grid for q on the wgmma kernel or not. Past
    :data:`GRID_Y_MAX` (batch x heads) pairs, (query blocks x pairs, 1): :func:`block_tile` numbers
    the blocks ``block_id(1) * blocks + block_id(0)``, the same order either way."""
    b, hq, sq, d = (int(x) for x in q.shape)
    blocks, pairs = -(-sq // config(d, wgmma, sq, causal)["BM"]), b * hq
    if blocks * pairs >= 1 << 31:  # block_tile numbers the blocks in 32 bits
        raise ValueError(f"{OWNER}: {blocks} query blocks x {pairs} (batch, head) pairs is more than the "
                         "2**31 - 1 blocks a launch can have")
    return (blocks * pairs, 1) if pairs > GRID_Y_MAX else (blocks, pairs)


def attention_kernel(q: Any, k: Any, v: Any, *, causal: bool = False, scale: float | None = None,
                     return_lse: bool = False, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` :func:`attention` runs for these arguments (no GPU needed
    with an ``arch``; sm_90 compiles the wgmma kernel for sm_90a)."""
    _check(q, k, v)
    _check_flag("return_lse", return_lse)
    kernel, arch = path(arch, _head_dim(q))
    lse = _lse_like(q) if return_lse else None
    args, constexprs = _arguments(q, k, v, q, lse, causal, scale, kernel is not attention_fwd)
    return kernel.compile(*args, arch=arch, num_warps=warps(constexprs), **constexprs)


SCALE_LIMIT = 2.0**127
"""The largest ``scale`` (in magnitude) whose ``scale * log2(e)`` an f32 holds: past it the scores are inf."""


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, (bool, np.bool_)):  # as causal's check: 1 is not a flag
        raise TypeError(f"{OWNER}: {name} must be a bool, got {value!r}")


def _head_dim(q: Any) -> int:
    """q's last dimension (checked with the rest by :func:`_check`), for the choice of kernel."""
    shape = getattr(q, "shape", None)
    return int(shape[-1]) if shape else 0


def _lse_like(q: Any) -> Any:
    """An f32 (B, H, Sq) array from q's library and device, for the log-sum-exp of each row."""
    shape = tuple(int(x) for x in q.shape[:3])
    if is_torch_tensor(q):
        # optional: torch is installed when q is a torch tensor
        import torch

        return torch.empty(shape, dtype=torch.float32, device=q.device)
    return np.empty(shape, np.float32)


def attention(q: Any, k: Any, v: Any, causal: bool = False, scale: float | None = None, return_lse: bool = False,
              *, out: Any = None, stream: Any = None, arch: str | None = None) -> Any:
    """Scaled dot-product attention of q over k, v (see the module docstring); ``out`` (q's shape and
    dtype) is written when given. Returns ``out``, or ``(out, lse)`` with ``return_lse``. ``arch``
    picks the path (default: the GPU's; ``"sm_80"`` runs the mma.sync kernel on any GPU)."""
    _check(q, k, v)
    _check_flag("return_lse", return_lse)
    if out is None:
        out = q.new_empty(tuple(q.shape)) if hasattr(q, "new_empty") else None
        if out is None:
            raise TypeError(f"{OWNER}: pass torch tensors (or out= for other arrays)")
    else:
        _check_out(out, q, k, v)
    lse = _lse_like(q) if return_lse else None
    kernel, arch = path(arch, _head_dim(q))
    wgmma = kernel is not attention_fwd
    args, constexprs = _arguments(q, k, v, out, lse, causal, scale, wgmma)
    kernel[grid(q, wgmma, causal)](*args, stream=stream, arch=arch, num_warps=warps(constexprs), **constexprs)
    return (out, lse) if return_lse else out


__all__ = ["KV_L2_BYTES", "LONG_QUERIES", "MMA_MAX_HEAD_DIM", "TMA_STORE_PAST_D", "attention", "attention_fwd", "attention_fwd_wgmma",
           "attention_fwd_wgmma_stored", "attention_kernel", "config", "grid", "warps", "order_heads", "path"]
