"""Per-group int8 quantization in tilec.lang: a block of values read as its groups with ``tl.reshape``.

    python examples/lang/quantize.py     # the CPU interpreters against numpy, then the GPU if there is one

FP8 and int8 quantizers of LLM activations scale each group of consecutive values (128 here) by its
largest magnitude. :func:`group_quantize` loads a block of values, reads it as a (groups, group) tile, takes
each row's maximum, divides, and reads the quotients back as the block: the two reshapes move no data
(tile-layout holds the tile and the vectors in the same registers), the maximum is a row reduction.
:func:`sort_rows` sorts each row of a matrix (``tl.sort``: a bitonic network on the same moves).
"""

from __future__ import annotations

import numpy as np

import tilec.lang as tl


@tl.kernel(num_warps=4)
def group_quantize(x_ptr, q_ptr, s_ptr, n, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    """``q = rint(x / scale)`` (int8) with ``scale = max(|x|) / 127`` of each GROUP values, written to ``s``."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    groups = tl.reshape(x, (BLOCK // GROUP, GROUP))
    scale = tl.maximum(tl.max(tl.abs(groups), axis=1), 1e-8) / 127.0
    q = tl.reshape(groups / scale[:, None], (BLOCK,))
    tl.store(q_ptr + offs, tl.extra.cuda.libdevice.rint(q).to(tl.int8), mask=offs < n)
    g = tl.program_id(0) * (BLOCK // GROUP) + tl.arange(0, BLOCK // GROUP)
    tl.store(s_ptr + g, scale, mask=g * GROUP < n)


@tl.kernel(num_warps=4)
def sort_rows(x_ptr, o_ptr, N: tl.constexpr):
    """Each row of N values sorted (one row a program)."""
    offs = tl.program_id(0) * N + tl.arange(0, N)
    tl.store(o_ptr + offs, tl.sort(tl.load(x_ptr + offs)))


def reference(x: np.ndarray, group: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy's (q, scale) of :func:`group_quantize` (the last group padded with zeros)."""
    n = x.shape[0]
    padded = np.concatenate([x, np.zeros(-n % group, np.float32)]).reshape(-1, group)
    scale = np.maximum(np.abs(padded).max(1), 1e-8).astype(np.float32) / np.float32(127.0)
    return np.rint(padded / scale[:, None]).reshape(-1)[:n], scale


def main() -> int:
    rng = np.random.default_rng(0)
    n, block, group = 1000, 256, 32
    x = rng.standard_normal(n).astype(np.float32) * rng.uniform(0.1, 10, n).astype(np.float32)
    q, s = np.full(n, 99, np.int8), np.full(-(-n // group), np.nan, np.float32)
    group_quantize.interpret(x, q, s, n, BLOCK=block, GROUP=group, grid=(-(-n // block),), after="tile-distribute")
    want_q, want_s = reference(x, group)
    q_err, s_err = int(np.abs(q.astype(np.int32) - want_q).max()), float(np.abs(s / want_s - 1).max())
    print(f"interpreter after tile-distribute, group_quantize of {n}: scales within {s_err:.1e}, quotients within {q_err}")
    rows = rng.standard_normal((4, 64)).astype(np.float32)
    out = np.full_like(rows, np.nan)
    sort_rows.interpret(rows, out, N=64, grid=(4,), after="tile-distribute")
    sorted_ok = np.array_equal(out, np.sort(rows, 1))
    print(f"interpreter after tile-distribute, sort_rows 4x64: {'sorted' if sorted_ok else 'WRONG'}")
    if s_err > 1e-6 or q_err > 1 or not sorted_ok:
        return 1
    ptx = group_quantize.compile(x, q, s, n, BLOCK=block, GROUP=group, arch="sm_80").asm["ptx"]
    print(f"PTX for sm_80: {ptx.count('bar.sync')} block barriers (the groups' maxima across warps)")
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU: not launched")
        return 0
    n = 1 << 24
    xg = torch.randn(n, device="cuda") * (torch.rand(n, device="cuda") * 10 + 0.1)
    qg, sg = torch.full((n,), 99, device="cuda", dtype=torch.int8), torch.full((n // 128,), float("nan"), device="cuda")
    group_quantize[(n // 1024,)](xg, qg, sg, n, BLOCK=1024, GROUP=128)
    want_q, want_s = reference(xg.cpu().numpy(), 128)
    gpu_err = float(np.abs(sg.cpu().numpy() / want_s - 1).max())
    print(f"GPU, group_quantize of {n}: scales within {gpu_err:.1e}")
    return 0 if gpu_err < 1e-6 and int(np.abs(qg.cpu().numpy().astype(np.int32) - want_q).max()) <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
