"""Layer norm and RMS norm in tilec.lang: row statistics as register vectors, weights as column vectors.

    python examples/lang/layer_norm.py [--rows 4096 --cols 1000]

Columns past the row's end read as 0; the deviations are masked there (``tl.where`` on the
column coordinates) so they add nothing to the variance.
"""

from __future__ import annotations

import argparse

import numpy as np

import tilec.lang as tl


@tl.kernel
def layer_norm(x, w, b, y, BM: tl.constexpr, N: tl.constexpr, eps: tl.constexpr = 1e-5):
    r = tl.block_id(0) * BM
    n = x.shape[1].to(tl.float32)
    t = tl.load(x, (r, 0), shape=(BM, N)).to(tl.float32)
    mean = tl.row_sum(t) / n
    d = tl.where(tl.iota((BM, N), 1) < x.shape[1], t - mean[:, None], 0.0)
    inv = tl.rsqrt(tl.row_sum(d * d) / n + eps)
    wv = tl.load(w, (0,), shape=(N,)).to(tl.float32)
    bv = tl.load(b, (0,), shape=(N,)).to(tl.float32)
    tl.store(y, (r, 0), (d * inv[:, None] * wv[None, :] + bv[None, :]).to(y.dtype))


@tl.kernel
def rms_norm(x, w, y, BM: tl.constexpr, N: tl.constexpr, eps: tl.constexpr = 1e-6):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N)).to(tl.float32)
    inv = tl.rsqrt(tl.row_sum(t * t) / x.shape[1].to(tl.float32) + eps)
    tl.store(y, (r, 0), (t * inv[:, None] * tl.load(w, (0,), shape=(N,)).to(tl.float32)[None, :]).to(y.dtype))


def layer_norm_reference(x, w, b, eps=1e-5):
    x = x.astype(np.float64)
    mu = x.mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + eps) * w + b


def rms_norm_reference(x, w, eps=1e-6):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * w


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    w, b = (rng.standard_normal(300).astype(np.float32) for _ in range(2))
    y = np.full_like(x, np.nan)
    layer_norm.interpret(x, w, b, y, grid=(16,), BM=4, N=512)
    ref = layer_norm_reference(x, w, b)
    err = np.abs(y - ref).max() / np.abs(ref).max()
    print(f"interpreter, layer_norm: max relative error {err:.1e}")
    y[:] = np.nan
    rms_norm.interpret(x, w, y, grid=(16,), BM=4, N=512)
    ref = rms_norm_reference(x, w)
    err = max(err, np.abs(y - ref).max() / np.abs(ref).max())
    print(f"interpreter, rms_norm: max relative error {np.abs(y - ref).max() / np.abs(ref).max():.1e}")
    if not err < 1e-5:
        return 1
    from tilec.runtime import has_device

    if not has_device():
        print("no GPU: not launched")
        return 0
    import torch

    x = torch.randn(args.rows, args.cols, device="cuda", dtype=torch.float16)
    w, b = (torch.randn(args.cols, device="cuda", dtype=torch.float16) for _ in range(2))
    n = 1 << (args.cols - 1).bit_length()
    grid = (-(-args.rows // 4),)
    y = torch.full_like(x, float("nan"))
    layer_norm[grid](x, w, b, y, BM=4, N=n, num_warps=8)
    ref = torch.nn.functional.layer_norm(x.double(), (args.cols,), w.double(), b.double(), 1e-5)
    err1 = ((y.double() - ref).abs().max() / ref.abs().max()).item()
    y = torch.full_like(x, float("nan"))
    rms_norm[grid](x, w, y, BM=4, N=n, num_warps=8)
    ref = x.double() * torch.rsqrt((x.double() ** 2).mean(1, keepdim=True) + 1e-6) * w.double()
    err2 = ((y.double() - ref).abs().max() / ref.abs().max()).item()
    print(f"GPU: {args.rows}x{args.cols} f16, layer_norm max relative error {err1:.1e}, rms_norm {err2:.1e}")
    return 0 if max(err1, err2) < 1e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
