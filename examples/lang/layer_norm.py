"""Layer norm and RMS norm in tilec.lang: row statistics as register vectors, weights as column vectors;
and layer norm's backward pass as Triton's tutorial writes it.

    python examples/lang/layer_norm.py [--rows 4096 --cols 1000]

Columns past the row's end read as 0; the deviations are masked there (``tl.where`` on the
column coordinates) so they add nothing to the variance.

The backward pass is two kernels. ``layer_norm_backward_dx`` computes a row's dx and adds the row's
share of dw and db into one of ``GROUP`` rows of partial sums, taking that row's lock first
(a spin on ``tl.atomic_cas``; the first block to arrive at a row writes it, the later ones add);
``layer_norm_backward_dwdb`` then sums the ``GROUP`` partial rows, a block a slice of columns.
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


@tl.kernel(num_warps=4)
def layer_norm_backward_dx(dx, dy, dw, db, count, lock, x, w, mean, rstd, GROUP: tl.constexpr, N: tl.constexpr):
    row = tl.program_id(0)
    n = x.shape[1].to(tl.float32)
    inside = tl.iota((1, N), 1) < x.shape[1]
    xt = tl.load(x, (row, 0), shape=(1, N)).to(tl.float32)
    dyt = tl.load(dy, (row, 0), shape=(1, N)).to(tl.float32)
    r = tl.load_scalar(rstd, (row,))
    xhat = tl.where(inside, (xt - tl.load_scalar(mean, (row,))) * r, 0.0)
    wdy = tl.where(inside, tl.load(w, (0,), shape=(N,)).to(tl.float32)[None, :] * dyt, 0.0)
    c1 = tl.sum(xhat * wdy) / n
    c2 = tl.sum(wdy) / n
    tl.store(dx, (row, 0), ((wdy - (xhat * c1 + c2)) * r).to(dx.dtype))
    partial_dw = dyt * xhat
    partial_db = dyt
    g = row % GROUP
    while tl.atomic_cas(lock, (g,), 0, 1) == 1:
        pass
    first = tl.load_scalar(count, (g,)) == 0  # the first block at this row of partials writes it
    tl.debug_barrier()  # every warp has read the count before thread 0 changes it (Triton's tutorial races here)
    if first:
        tl.atomic_xchg(count, (g,), 1)
    else:
        partial_dw += tl.load(dw, (g, 0), shape=(1, N))
        partial_db += tl.load(db, (g, 0), shape=(1, N))
    tl.store(dw, (g, 0), partial_dw)
    tl.store(db, (g, 0), partial_db)
    tl.debug_barrier()  # every thread's stores before the lock is released
    tl.atomic_xchg(lock, (g,), 0)


@tl.kernel(num_warps=4)
def layer_norm_backward_dwdb(dw, db, final_dw, final_db, BM: tl.constexpr, BN: tl.constexpr):
    col = tl.program_id(0) * BN
    acc_w = tl.zeros((BM, BN), tl.float32)
    acc_b = tl.zeros((BM, BN), tl.float32)
    for i in tl.range(0, dw.shape[0], BM):
        acc_w += tl.load(dw, (i, col), shape=(BM, BN))
        acc_b += tl.load(db, (i, col), shape=(BM, BN))
    tl.store(final_dw, (col,), tl.sum(acc_w, axis=0).to(final_dw.dtype))
    tl.store(final_db, (col,), tl.sum(acc_b, axis=0).to(final_db.dtype))


def layer_norm_backward(dy, x, w, mean, rstd, group: int = 64, **launch):
    """dx, dw, db of layer norm (torch tensors on the GPU): the two kernels above, partial sums in f32."""
    import torch

    m, cols = x.shape
    n = 1 << (cols - 1).bit_length()
    dx = torch.empty_like(x)
    dw, db = (torch.zeros(group, cols, device=x.device, dtype=torch.float32) for _ in range(2))
    count, lock = (torch.zeros(group, device=x.device, dtype=torch.int32) for _ in range(2))
    layer_norm_backward_dx[(m,)](dx, dy, dw, db, count, lock, x, w, mean, rstd, GROUP=group, N=n, **launch)
    final_dw, final_db = torch.empty_like(w), torch.empty_like(w)
    layer_norm_backward_dwdb[(-(-cols // 64),)](dw, db, final_dw, final_db, BM=32, BN=64, **launch)
    return dx, final_dw, final_db


def layer_norm_backward_reference(dy, x, w, eps=1e-5):
    """dx, dw, db in float64 (numpy), from the formulas the kernels implement."""
    x, dy, w = (a.astype(np.float64) for a in (x, dy, w))
    mu = x.mean(axis=1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    wdy = w * dy
    dx = (wdy - (xhat * (xhat * wdy).mean(axis=1, keepdims=True) + wdy.mean(axis=1, keepdims=True))) * rstd
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)


def statistics(x, eps=1e-5):
    """Each row's mean and 1 / standard deviation (what the forward pass keeps for the backward), float32."""
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1)
    return mu.astype(np.float32), (1 / np.sqrt(x64.var(axis=1) + eps)).astype(np.float32)


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
    dy = rng.standard_normal(x.shape).astype(np.float32)
    mean, rstd = statistics(x)
    dx = np.full_like(x, np.nan)
    dw, db = (np.full((4, 300), np.nan, np.float32) for _ in range(2))
    count, lock = np.zeros(4, np.int32), np.zeros(4, np.int32)
    layer_norm_backward_dx.interpret(dx, dy, dw, db, count, lock, x, w, mean, rstd, grid=(64,), GROUP=4, N=512)
    fdw, fdb = np.full_like(w, np.nan), np.full_like(w, np.nan)
    layer_norm_backward_dwdb.interpret(dw, db, fdw, fdb, grid=(5,), BM=32, BN=64)
    backward = [np.abs(got - ref).max() / np.abs(ref).max()
                for got, ref in zip((dx, fdw, fdb), layer_norm_backward_reference(dy, x, w))]
    print(f"interpreter, layer_norm_backward: max relative error of dx, dw, db {max(backward):.1e}")
    if not max(err, *backward) < 1e-5:
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
    dy = torch.randn_like(x)
    x64, mean, rstd = x.double(), x.double().mean(1), torch.rsqrt(x.double().var(1, unbiased=False) + 1e-5)
    grads = layer_norm_backward(dy, x, w, mean.float(), rstd.float())
    refs = layer_norm_backward_reference(*(t.cpu().numpy() for t in (dy, x64, w)))
    err3 = max(((g.double().cpu() - torch.from_numpy(r)).abs().max() / abs(r).max()).item() for g, r in zip(grads, refs))
    print(f"GPU: layer_norm_backward (Triton's tutorial, a lock per row of partials) max relative error {err3:.1e}")
    return 0 if max(err1, err2, err3) < 1e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
