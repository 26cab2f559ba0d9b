"""4-bit weights in bytes (a W4A16 linear layer) in tilec.lang: unsigned integers in a user's kernel.

    python examples/lang/int4.py     # the CPU interpreters against numpy, then the GPU if there is one

The weights of an N-column layer are 4-bit integers ``q`` in 0..15 standing for ``(q - 8) * scale[n]``,
packed two a byte into a ``uint8`` array ``w`` of K/2 x N: the low nibble of ``w[k, n]`` is row ``k`` of
the K x N weight matrix, the high nibble row ``k + K/2``. The kernels read the bytes as ``tl.uint8``
(``>>`` is then the logical shift, ``.to(tl.float16)`` the unsigned value), as a Triton user writes them.
:func:`matmul_w4a16` multiplies f16 activations by such weights, unpacking each K step's bytes in
registers into the two halves of the products (two ``tl.dot`` a step), and scales the columns at the end.
:func:`matmul_w4a16_rows` takes GPTQ's packing (two consecutive rows a byte) and joins the nibbles.
"""

from __future__ import annotations

import numpy as np

import tilec.lang as tl


@tl.kernel(num_warps=4)
def dequantize(w_ptr, scale_ptr, out_ptr, K2, N, BK: tl.constexpr, BN: tl.constexpr):
    """The K x N f16 weights of the packed ``w`` (K/2 x N bytes) and each column's scale."""
    rows = tl.program_id(0) * BK + tl.arange(0, BK)[:, None]
    cols = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    inside = (rows < K2) & (cols < N)
    packed = tl.load(w_ptr + rows * N + cols, mask=inside, other=0)
    scale = tl.load(scale_ptr + cols, mask=cols < N, other=0.0)
    low = ((packed & 0xF).to(tl.float32) - 8.0) * scale
    high = ((packed >> 4).to(tl.float32) - 8.0) * scale
    tl.store(out_ptr + rows * N + cols, low.to(tl.float16), mask=inside)
    tl.store(out_ptr + (rows + K2) * N + cols, high.to(tl.float16), mask=inside)


@tl.kernel(num_warps=4)
def matmul_w4a16(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K2, stride_am, stride_wk, stride_cm,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``c = a @ dequantize(w)``: ``a`` M x K (f16, K = 2 * K2), ``w`` K2 x N bytes, ``c`` M x N (f16)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K2, BK)):
        kk = k * BK + ks
        a_mask = (rows[:, None] < M) & (kk[None, :] < K2)
        a_low = tl.load(a_ptr + rows[:, None] * stride_am + kk[None, :], mask=a_mask, other=0.0)
        a_high = tl.load(a_ptr + rows[:, None] * stride_am + (kk[None, :] + K2), mask=a_mask, other=0.0)
        # other=0 (two -8s) where K ends: a's columns there read 0, so those products are 0 (a 0 fill lets the
        # bytes be staged through shared memory by cp.async, as a's tiles are)
        packed = tl.load(w_ptr + kk[:, None] * stride_wk + cols[None, :],
                         mask=(kk[:, None] < K2) & (cols[None, :] < N), other=0)
        w_low = ((packed & 0xF).to(tl.int32) - 8).to(tl.float16)
        w_high = ((packed >> 4).to(tl.int32) - 8).to(tl.float16)
        acc = tl.dot(a_low, w_low, acc)
        acc = tl.dot(a_high, w_high, acc)
    scale = tl.load(scale_ptr + cols, mask=cols < N, other=0.0)
    c = (acc * scale[None, :]).to(tl.float16)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


@tl.kernel(num_warps=4)
def matmul_w4a16_rows(a_ptr, w_ptr, scale_ptr, c_ptr, M, N, K, stride_am, stride_wk, stride_cm,
                      BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """:func:`matmul_w4a16` for weights packed as GPTQ packs them (:func:`pack_rows`): rows ``2i`` and ``2i + 1``
    in the low and high nibbles of byte row ``i``. A K step unpacks its BK / 2 byte rows into BK weight rows
    by joining the nibbles with their rows taking turns (``tl.join(...).permute(0, 2, 1).reshape``, as Triton's
    int4 kernels write it) and makes one ``tl.dot``; the join moves no data (each thread of the mma holds rows
    k and k + 1 of its columns, the two nibbles of one byte)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ks = k * BK + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * stride_am + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        kp = k * (BK // 2) + tl.arange(0, BK // 2)
        packed = tl.load(w_ptr + kp[:, None] * stride_wk + cols[None, :],
                         mask=(kp[:, None] < K // 2) & (cols[None, :] < N), other=0)
        low = ((packed & 0xF).to(tl.int32) - 8).to(tl.float16)
        high = ((packed >> 4).to(tl.int32) - 8).to(tl.float16)
        acc = tl.dot(a, tl.join(low, high).permute(0, 2, 1).reshape(BK, BN), acc)
    scale = tl.load(scale_ptr + cols, mask=cols < N, other=0.0)
    c = (acc * scale[None, :]).to(tl.float16)
    tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :], c, mask=(rows[:, None] < M) & (cols[None, :] < N))


def pack_rows(q):
    """4-bit integers ``q`` (K x N, values 0..15; numpy or torch) packed two consecutive rows a byte (GPTQ's
    order): K/2 x N."""
    packed = q[0::2] | (q[1::2] << 4)
    return packed.astype(np.uint8) if isinstance(packed, np.ndarray) else packed


def matmul_rows_call(a, w, scale, c, BM: int = 64, BN: int = 64, BK: int = 64):
    """The grid, arguments and constants of :func:`matmul_w4a16_rows` for ``c = a @ dequantize(w)``, ``w``
    packed by :func:`pack_rows` (BK counts rows of K: BK / 2 bytes a step)."""
    grid, args, _ = matmul_call(a, w, scale, c, BM=BM, BN=BN, BK=BK)
    a_, w_, scale_, c_, m, n, _k2, *strides = args
    return grid, (a_, w_, scale_, c_, m, n, a.shape[1], *strides), dict(BM=BM, BN=BN, BK=BK)


def pack(q: np.ndarray) -> np.ndarray:
    """4-bit integers ``q`` (K x N, values 0..15) packed as this layout has them: K/2 x N bytes."""
    half = q.shape[0] // 2
    return (q[:half] | (q[half:] << 4)).astype(np.uint8)


def matmul_call(a, w, scale, c, BM: int = 64, BN: int = 64, BK: int = 32):
    """The grid, arguments and constants of :func:`matmul_w4a16` for ``c = a @ dequantize(w)``."""
    m, k2, n = a.shape[0], w.shape[0], w.shape[1]
    stride = (lambda x, d: x.stride(d)) if hasattr(a, "stride") and callable(a.stride) else \
        (lambda x, d: x.strides[d] // x.itemsize)
    grid = (-(-m // BM), -(-n // BN))
    args = (a, w, scale, c, m, n, k2, stride(a, 0), stride(w, 0), stride(c, 0))
    return grid, args, dict(BM=BM, BN=BN, BK=BK)


def main() -> int:
    rng = np.random.default_rng(0)
    m, k, n = 80, 96, 72
    q = rng.integers(0, 16, (k, n), dtype=np.uint8)
    scale = rng.uniform(0.01, 0.05, n).astype(np.float32)
    w = pack(q)
    weights = (q.astype(np.float64) - 8) * scale
    out = np.full((k, n), np.nan, np.float16)
    dequantize.interpret(w, scale, out, k // 2, n, BK=16, BN=32, grid=(3, 3), after="tile-distribute")
    err_w = float(np.abs(out - weights).max() / np.abs(weights).max())
    print(f"interpreter after tile-distribute, dequantize {k}x{n}: max relative error {err_w:.1e}")
    a = rng.standard_normal((m, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    grid, args, consts = matmul_call(a, w, scale, c)
    matmul_w4a16.interpret(*args, grid=grid, after="tile-distribute", **consts)
    ref = a.astype(np.float64) @ weights
    err = float(np.abs(c - ref).max() / np.abs(ref).max())
    print(f"interpreter after tile-distribute, W4A16 matmul {m}x{n}x{k}: max relative error {err:.1e}")
    if err_w > 1e-3 or err > 2e-3:
        return 1
    c_rows = np.full((m, n), np.nan, np.float16)
    grid, args_rows, consts_rows = matmul_rows_call(a, pack_rows(q), scale, c_rows)
    matmul_w4a16_rows.interpret(*args_rows, grid=grid, after="tile-distribute", **consts_rows)
    err_rows = float(np.abs(c_rows - ref).max() / np.abs(ref).max())
    print(f"interpreter after tile-distribute, the same with GPTQ's packing (tl.join of the nibbles): max relative "
          f"error {err_rows:.1e}")
    if err_rows > 2e-3:
        return 1
    ptx = matmul_w4a16.compile(*args, arch="sm_80", **consts).asm["ptx"]
    print(f"PTX for sm_80: {ptx.count('mma.sync')} mma.sync of f16 a K step, {ptx.count('shr.u16') + ptx.count('shr.b16')} "
          "16-bit shifts unpacking the bytes")
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU: not launched")
        return 0
    m, k, n = 4096, 4096, 4096
    q = torch.randint(0, 16, (k, n), device="cuda", dtype=torch.uint8)
    w = q[: k // 2] | (q[k // 2:] << 4)
    scale = torch.rand(n, device="cuda") * 0.04 + 0.01
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid, args, consts = matmul_call(a, w, scale, c, BM=128, BN=128, BK=32)
    matmul_w4a16.with_options(num_warps=8)[grid](*args, **consts)
    ref = a.double() @ ((q.double() - 8) * scale.double())
    gpu_err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    print(f"GPU, W4A16 matmul {m}x{n}x{k}: max relative error {gpu_err:.1e}")
    c.fill_(float("nan"))
    grid, args, consts = matmul_rows_call(a, pack_rows(q), scale, c, BM=128, BN=128, BK=64)
    matmul_w4a16_rows.with_options(num_warps=8)[grid](*args, **consts)
    rows_err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    print(f"GPU, the same with GPTQ's packing: max relative error {rows_err:.1e}")
    return 0 if gpu_err < 2e-3 and rows_err < 2e-3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
