"""Triton's pointer arithmetic and numpy's fancy indexing in tilec.lang: ``x + offsets`` and index tiles.

Triton's first tutorials as they are written there (``x_ptr + offsets``, the strides passed as
arguments), an embedding lookup (rows gathered by an index tile), a scatter of rows, a histogram and
an index-add (atomics at pointers and index tiles), and the matmul tutorial's K loop on pointers it
advances. Each load and store of pointers is a ``tile.gather`` / ``tile.scatter`` (an atomic a
``tile.scatter_atomic``): correct for any offsets (outside the array they read ``other`` and
write nothing), an element at a time. Where the offsets are a window (``start + tl.arange(...)``),
``tl.load(x, (start,), shape=(BLOCK,))`` says so and moves whole 16-byte vectors (docs/tutorial.md).

    python examples/lang/pointers.py      # the CPU interpreters against numpy, then the GPU if there is one
"""

from __future__ import annotations

import numpy as np

import tilec.lang as tl


@tl.kernel(num_warps=4)
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    """Triton's vector add, as its tutorial writes it."""
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


@tl.kernel(num_warps=8)
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    """Triton's fused softmax: a row's pointer from the row stride."""
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    row = tl.load(row_start_ptr + col_offsets, mask=col_offsets < n_cols, other=-float("inf")).to(tl.float32)
    numerator = tl.exp(row - tl.max(row, axis=0))
    softmax_output = numerator / tl.sum(numerator, axis=0)
    output_row_ptr = output_ptr + row_idx * output_row_stride
    tl.store(output_row_ptr + col_offsets, softmax_output, mask=col_offsets < n_cols)


@tl.kernel(num_warps=4)
def embedding(ids, table, out, n, BM: tl.constexpr, D: tl.constexpr):
    """``out = table[ids]`` (torch's ``F.embedding``): each block gathers ``BM`` rows by an index tile."""
    r = tl.program_id(0) * BM
    rows = tl.load(ids, (r,), shape=(BM,), axis=0)
    cols = tl.program_id(1) * D + tl.arange(0, D)
    t = tl.load(table, (rows[:, None], cols[None, :]))
    tl.store(out, (r, tl.program_id(1) * D), t)


@tl.kernel(num_warps=4)
def scatter_rows(x, index, out, BM: tl.constexpr, D: tl.constexpr):
    """``out[index] = x`` (torch's ``index_copy_`` along rows); a negative index drops its row."""
    r = tl.program_id(0) * BM
    dst = tl.load(index, (r,), shape=(BM,), axis=0)
    cols = tl.arange(0, D)
    tl.store(out, (dst[:, None], cols[None, :]), tl.load(x, (r, 0), shape=(BM, D)), mask=dst[:, None] >= 0)


@tl.kernel(num_warps=4)
def histogram(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    """Counts of each value of ``x`` (``torch.bincount``): an atomic add at a tensor of pointers, each
    element added however many others name its bin."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(hist_ptr + tl.load(x_ptr + offsets, mask=mask, other=0), 1, mask=mask)


@tl.kernel(num_warps=4)
def index_add(src, index, out, BM: tl.constexpr, D: tl.constexpr):
    """``out.index_add_(0, index, src)``: rows added atomically at the rows ``index`` names."""
    r = tl.program_id(0) * BM
    rows = tl.load(index, (r,), shape=(BM,), axis=0)
    tl.atomic_add(out, (rows[:, None], tl.arange(0, D)[None, :]), tl.load(src, (r, 0), shape=(BM, D)))


@tl.kernel(num_warps=4, num_stages=1)
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    """The matmul tutorial's body, as Triton's tutorial writes it: pointers advanced through the K loop.
    tile-stage stages its loads through shared memory (gathering copies, ``cp.async`` stages with
    ``num_stages``; on sm_90a the warpgroup MMA). The same kernel runs on FP8 (examples/lang/fp8.py)."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, accumulator.to(c_ptr.dtype.element_ty), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def main() -> int:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = np.full(1000, np.nan, np.float32)
    add_kernel.interpret(x, y, out, 1000, grid=(4,), BLOCK_SIZE=256)
    err = float(np.abs(out - (x + y)).max())
    print("vector add (tile interpreter): max error", err)
    table = rng.standard_normal((100, 64)).astype(np.float16)
    ids = rng.integers(0, 100, 48).astype(np.int32)
    rows = np.full((48, 64), np.nan, np.float16)
    embedding.interpret(ids, table, rows, 48, grid=(3, 1), BM=16, D=64, after="tile-distribute")
    same = bool(np.array_equal(rows, table[ids]))
    print("embedding (lane by lane after tile-distribute): equal", same)
    ptx = add_kernel.compile(x, y, out, 1000, BLOCK_SIZE=1024, arch="sm_90a").asm["ptx"]
    print("vector add PTX for sm_90a:", len(ptx.splitlines()), "lines")
    if err > 0 or not same:
        return 1
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU: not launched")
        return 0
    a, b = torch.randn(1 << 20, device="cuda"), torch.randn(1 << 20, device="cuda")
    c = torch.full_like(a, float("nan"))
    add_kernel[(1 << 10,)](a, b, c, a.numel(), BLOCK_SIZE=1024)
    gpu_err = (c.double() - (a.double() + b.double())).abs().max().item()
    print("vector add on the GPU: max error", gpu_err)
    return 0 if gpu_err == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
