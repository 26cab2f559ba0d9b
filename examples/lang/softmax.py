"""Softmax in tilec.lang: a block of rows held as one tile of the block, and an online two-pass form.

    python examples/lang/softmax.py [--rows 4096 --cols 1000]

``softmax`` holds ``BM`` whole rows (``N`` at least the row length): the row maximum and sum are
register-vector reductions (across the block's warps through shared memory, placed by the
compiler). ``softmax_online`` walks long rows ``BN`` columns at a time with the running maximum
and sum carried through a ``tl.range`` loop (an ``scf.for``), then writes a second pass.
"""

from __future__ import annotations

import argparse

import numpy as np

import tilec.lang as tl


@tl.kernel
def softmax(x, o, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N), other=float("-inf")).to(tl.float32)
    e = tl.exp(t - tl.row_max(t)[:, None])
    tl.store(o, (r, 0), (e / tl.row_sum(e)[:, None]).to(o.dtype))


@tl.kernel
def softmax_online(x, o, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.block_id(0) * BM
    m = tl.full((BM,), float("-inf"), axis=0)
    s = tl.zeros((BM,), axis=0)
    for c in tl.range(0, x.shape[1], BN):
        t = tl.load(x, (r, c), shape=(BM, BN), other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.row_max(t))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row all -inf so far: e^(-inf - -inf) is NaN
        s = s * tl.exp(m - m_safe) + tl.row_sum(tl.exp(t - m_safe[:, None]))
        m = m_new
    inv = 1.0 / s
    for c in tl.range(0, x.shape[1], BN):
        t = tl.load(x, (r, c), shape=(BM, BN), other=float("-inf")).to(tl.float32)
        tl.store(o, (r, c), (tl.exp(t - m[:, None]) * inv[:, None]).to(o.dtype))


def reference(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 300)).astype(np.float16)
    for name, run in (("softmax", lambda o: softmax.interpret(x, o, grid=(25,), BM=4, N=512)),
                      ("softmax_online", lambda o: softmax_online.interpret(x, o, grid=(13,), BM=8, BN=128))):
        o = np.full_like(x, np.nan)
        run(o)
        err = np.abs(o - reference(x)).max() / reference(x).max()
        print(f"interpreter, {name}: max relative error {err:.1e}")
        if not err < 2e-3:
            return 1
    from tilec.runtime import has_device

    if not has_device():
        print("no GPU: not launched")
        return 0
    import torch

    x = torch.randn(args.rows, args.cols, device="cuda", dtype=torch.float16)
    ref = torch.softmax(x.double(), dim=1)
    n = 1 << (args.cols - 1).bit_length()
    worst = 0.0
    for name, launch in (("softmax", lambda o: softmax[(-(-args.rows // 4),)](x, o, BM=4, N=n, num_warps=8)),
                         ("softmax_online", lambda o: softmax_online[(-(-args.rows // 8),)](x, o, BM=8, BN=256))):
        o = torch.full_like(x, float("nan"))
        launch(o)
        err = ((o.double() - ref).abs().max() / ref.abs().max()).item()
        worst = max(worst, err)
        print(f"GPU, {name}: {args.rows}x{args.cols}, max relative error {err:.1e}")
    return 0 if worst < 1e-2 else 1


if __name__ == "__main__":
    raise SystemExit(main())
