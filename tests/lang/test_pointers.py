"""Elements at coordinates held in tiles (numpy's fancy indexing) and Triton's pointer arithmetic
(``x + offsets``): ``tile.gather`` / ``tile.scatter``.

Each kernel is written as a Triton user writes it and runs on the tile-level interpreter and lane by
lane after ``tile-distribute`` against numpy on fresh random inputs, into outputs poisoned with NaN;
its PTX is assembled for sm_80 and sm_90a (the session's ptxas check, tests/conftest.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilec.lang as tl
from tilec.lang import LangError

RNG = np.random.default_rng(20261130)
STAGES = (None, "tile-distribute")

# Triton's vector add and matmul tutorial, and a histogram, as users write them: examples/lang/pointers.py
_spec = importlib.util.spec_from_file_location(
    "lang_example_pointers", Path(__file__).resolve().parents[2] / "examples" / "lang" / "pointers.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)
add_kernel, pointer_gemm, histogram = ex.add_kernel, ex.matmul_kernel, ex.histogram


@tl.kernel(num_warps=4)
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    """Triton's fused softmax: a row's pointer from the row stride, then its columns."""
    row_idx = tl.program_id(0)
    row_start_ptr = input_ptr + row_idx * input_row_stride
    col_offsets = tl.arange(0, BLOCK_SIZE)
    input_ptrs = row_start_ptr + col_offsets
    row = tl.load(input_ptrs, mask=col_offsets < n_cols, other=-float("inf"))
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    softmax_output = numerator / tl.sum(numerator, axis=0)
    output_ptrs = output_ptr + row_idx * output_row_stride + col_offsets
    tl.store(output_ptrs, softmax_output.to(output_ptr.dtype.element_ty), mask=col_offsets < n_cols)


@tl.kernel(num_warps=4)
def scale_2d(x_ptr, o_ptr, M, N, stride_xm, stride_xn, stride_om, BM: tl.constexpr, BN: tl.constexpr):
    """A 2-D tile of pointers from two strides (x may be transposed), masked on both edges."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=mask, other=0.0)
    tl.store(o_ptr + rm[:, None] * stride_om + rn[None, :], x * 3.0 + 1.0, mask=mask)


@tl.kernel(num_warps=4)
def embedding(ids, table, out, n, BM: tl.constexpr, D: tl.constexpr):
    """Rows of ``table`` picked by ``ids`` (numpy's ``table[ids]``): a gather with index tiles."""
    r = tl.program_id(0) * BM
    idx = tl.load(ids, (r,), shape=(BM,), axis=0)
    rows = tl.load(table, (idx[:, None], tl.arange(0, D)[None, :]))
    tl.store(out, (r, 0), rows * 2.0)


@tl.kernel(num_warps=2)
def permute_rows(x, perm, out, BM: tl.constexpr, D: tl.constexpr):
    """``out[perm] = x``: a scatter with index tiles, masked where ``perm`` is negative."""
    r = tl.program_id(0) * BM
    dst = tl.load(perm, (r,), shape=(BM,), axis=0)
    t = tl.load(x, (r, 0), shape=(BM, D))
    tl.store(out, (dst[:, None], tl.arange(0, D)[None, :]), t, mask=dst[:, None] >= 0)


@tl.kernel(num_warps=1)
def row_lengths(starts, x, out, D: tl.constexpr):
    """Scalar pointers: a sequence's bounds read from memory, one result stored at ``out + pid``."""
    pid = tl.program_id(0)
    begin = tl.load(starts + pid)
    end = tl.load(starts + pid + 1)
    first = tl.load(x + begin * D, mask=begin < end, other=-1.0)
    tl.store(out + pid, (end - begin).to(tl.float32) + first)


@tl.kernel(num_warps=4)
def wild_offsets(x, idx, out, y, B: tl.constexpr):
    """Offsets outside the array (negative, past the end) read ``other`` and are not written."""
    i = tl.arange(0, B)
    off = tl.load(idx + i)
    got = tl.load(x + off, other=-7.0)
    tl.store(out + i, got)
    tl.store(y + off, got * 0.0 + 5.0)


@pytest.mark.parametrize("after", STAGES)
def test_the_tutorials_vector_add(after):
    n = 1000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    out = np.full(n, np.nan, np.float32)
    add_kernel.interpret(x, y, out, n, grid=(8,), BLOCK_SIZE=128, after=after)
    np.testing.assert_array_equal(out, x + y)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("n_cols", [1, 300, 512])
def test_the_tutorials_softmax(after, n_cols):
    x = RNG.standard_normal((9, n_cols)).astype(np.float16)
    out = np.full((9, n_cols), np.nan, np.float16)
    softmax_kernel.interpret(out, x, x.strides[0] // 2, n_cols, n_cols, grid=(9,), BLOCK_SIZE=512, after=after)
    x64 = x.astype(np.float64)
    ref = np.exp(x64 - x64.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("transposed", [False, True])
def test_a_tile_of_pointers_from_strides(after, transposed):
    m, n = 45, 70
    x = RNG.standard_normal((n, m) if transposed else (m, n)).astype(np.float32)
    o = np.full((m, n), np.nan, np.float32)
    sm, sn = (1, m) if transposed else (n, 1)
    scale_2d.interpret(x, o, m, n, sm, sn, n, grid=(3, 2), BM=16, BN=64, after=after)
    ref = (x.T if transposed else x).astype(np.float64) * 3 + 1
    np.testing.assert_allclose(o, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("after", STAGES)
def test_an_embeddings_rows_by_index_tiles(after):
    table = RNG.standard_normal((50, 64)).astype(np.float16)
    ids = RNG.integers(-3, 53, 40).astype(np.int32)  # some outside the table: rows of zeros
    out = np.full((40, 64), np.nan, np.float16)
    embedding.interpret(ids, table, out, 40, grid=(3,), BM=16, D=64, after=after)
    inside = (ids >= 0) & (ids < 50)
    ref = np.zeros((40, 64))
    ref[inside] = table[ids[inside]].astype(np.float64) * 2
    np.testing.assert_array_equal(out.astype(np.float64), ref)


@pytest.mark.parametrize("after", STAGES)
def test_a_scatter_of_rows_with_a_mask(after):
    x = RNG.standard_normal((32, 8)).astype(np.float32)
    perm = RNG.permutation(32).astype(np.int64)
    perm[::5] = -1  # not written
    out = np.full((32, 8), np.nan, np.float32)
    permute_rows.interpret(x, perm, out, grid=(2,), BM=16, D=8, after=after)
    ref = np.full((32, 8), np.nan, np.float32)
    keep = perm >= 0
    ref[perm[keep]] = x[keep]
    np.testing.assert_array_equal(out, ref)


# (m, n, k, tiles, stages, arch): K rows not 16-byte aligned (element copies), aligned (cp.async runs),
# one stage (synchronous copies), columns wrapped by `% N` (runs compared, the wrapped ones element by
# element), warpgroup MMAs on the staged tiles (sm_90a); C's rows of an odd length (the stores' test a
# row fails on every other row: a test a run there)
GEMMS = [(48, 40, 37, (16, 16, 16), 3, None), (64, 64, 64, (32, 32, 32), 3, None), (64, 64, 64, (32, 32, 32), 1, None),
         (64, 40, 64, (32, 16, 32), 2, None), (128, 96, 80, (64, 32, 32), 3, "sm_90a"),
         (100, 72, 64, (64, 32, 32), 3, "sm_90a"), (50, 45, 64, (32, 32, 32), 3, None),
         (72, 67, 64, (64, 32, 32), 3, "sm_90a")]


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("m,n,k,tiles,stages,arch", GEMMS, ids=[f"{g[0]}x{g[1]}x{g[2]}-{g[4]}-{g[5]}" for g in GEMMS])
def test_the_matmul_tutorials_pointers(m, n, k, tiles, stages, arch, after):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    bm, bn, bk = tiles
    pointer_gemm.interpret(a, b, c, m, n, k, k, 1, n, 1, n, 1, grid=(-(-m // bm), -(-n // bn)), BLOCK_SIZE_M=bm,
                           BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, num_stages=stages, arch=arch, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


def test_the_matmul_tutorials_loads_are_staged_gathers():
    """Its strides of 1 are constants (Triton's specialisation), `a_ptrs += BLOCK_K * stride_ak` a multiple
    of the counter, so its gathers' offsets and masks are the body's start's: tile-stage stages both
    as gathering copies, and tile-distribute moves their runs by cp.async (examples/lang/pointers.py)."""
    from tilec.dialects.tile import ops as t

    a = np.zeros((256, 256), np.float16)
    module = pointer_gemm.ir(a, a, a, 256, 256, 256, 256, 1, 256, 1, 256, 1, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                             BLOCK_SIZE_K=32)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    assert len(loop.body.block.args) == 2  # the counter and the accumulator: the pointers are not carried
    strided = pointer_gemm.ir(a, a, a, 256, 256, 256, 256, 3, 256, 5, 256, 1, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                              BLOCK_SIZE_K=32)  # BLOCK_K * stride_ak of run-time strides: computed before the loop
    loop = next(op for op in strided.walk() if op.name == "scf.for")
    assert len(loop.body.block.args) == 2
    staged = pointer_gemm._lowered(module, pointer_gemm._pipeline(3, None, None, "sm_80"), "tile-stage")
    copies = [op for op in staged.walk() if isinstance(op, t.CopyOp)]
    assert len(copies) == 2 and all(op.offsets is not None and op.mask is not None for op in copies)
    assert not any(isinstance(op, t.GatherOp) for op in staged.walk())
    ptx = pointer_gemm.compile(a, a, a, 256, 256, 256, 256, 1, 256, 1, 256, 1, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                               BLOCK_SIZE_K=32, num_stages=3, arch="sm_80").asm["ptx"]
    assert "cp.async.cg.shared.global" in ptx and "ldmatrix" in ptx


@pytest.mark.parametrize("after", STAGES)
def test_scalar_pointers(after):
    starts = np.array([0, 3, 3, 10], np.int32)
    x = RNG.standard_normal(10 * 4).astype(np.float32)
    out = np.full(3, np.nan, np.float32)
    row_lengths.interpret(starts, x, out, grid=(3,), D=4, after=after)
    np.testing.assert_array_equal(out, [3 + x[0], 0 - 1.0, 7 + x[12]])


@pytest.mark.parametrize("after", STAGES)
def test_offsets_outside_the_array_are_not_touched(after):
    x = RNG.standard_normal(20).astype(np.float32)
    idx = np.array([-1, 0, 19, 20, 5, -100, 2**31 - 1, 7], np.int32)
    out = np.full(8, np.nan, np.float32)
    y = RNG.standard_normal(20).astype(np.float32)
    before = y.copy()
    wild_offsets.interpret(x, idx, out, y, grid=(1,), B=8, after=after)
    inside = (idx >= 0) & (idx < 20)
    np.testing.assert_array_equal(out, np.where(inside, x[np.clip(idx, 0, 19)], -7.0))
    before[idx[inside]] = 5.0
    np.testing.assert_array_equal(y, before)


def test_a_strided_views_pointers_count_memory():
    """``x + offsets`` counts elements in memory with the array's own strides, as Triton's pointers do:
    the column of a row-major array is ``x + r * stride``; the interpreter reads the view's memory."""
    from tilec.interp.memory import GlobalView
    from xdsl.dialects.builtin import Float32Type

    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    view = GlobalView(base[1:, 2:5], Float32Type())  # 5 x 3, rows 10 apart: it spans 43 elements
    got = view.gather([np.array([0, 1, 10, 42, 43, -1])], linear=True)
    np.testing.assert_array_equal(got, [12, 13, 22, 54, 0, 0])


def test_the_ptx_of_each_kernel():
    x1 = np.zeros(256, np.float32)
    x2 = np.zeros((64, 64), np.float16)
    i1 = np.zeros(64, np.int32)
    for arch in ("sm_80", "sm_90a"):
        ptx = [add_kernel.compile(x1, x1, x1, 256, BLOCK_SIZE=1024, arch=arch),
               softmax_kernel.compile(x2, x2, 64, 64, 64, BLOCK_SIZE=64, arch=arch),
               embedding.compile(i1, x2, x2, 64, BM=32, D=64, arch=arch),
               permute_rows.compile(x2, i1.astype(np.int64), x2, BM=16, D=64, arch=arch),
               pointer_gemm.compile(x2, x2, x2, 64, 64, 64, 64, 1, 64, 1, 64, 1, BLOCK_SIZE_M=64, BLOCK_SIZE_N=64,
                                    BLOCK_SIZE_K=32, arch=arch),
               row_lengths.compile(i1, x1, x1, D=4, arch=arch)]
        for k in ptx:
            assert "ld.global" in k.asm["ptx"]


def test_errors_name_the_line():
    @tl.kernel
    def float_offsets(x, o, B: tl.constexpr):
        t = tl.arange(0, B).to(tl.float32)
        tl.store(o + tl.arange(0, B), tl.load(x + t))

    a = np.zeros(64, np.float32)
    with pytest.raises(LangError, match=r"x \+ offsets: offsets are integers.*f32"):
        float_offsets.interpret(a, a, grid=(1,), B=64)

    @tl.kernel
    def product(x, o, B: tl.constexpr):
        tl.store(o, (0,), tl.load(x * 2, (0,), shape=(B,)))

    with pytest.raises(LangError, match=r"x \+ offsets points at"):
        product.interpret(a, a, grid=(1,), B=64)

    @tl.kernel
    def shapes(x, o, B: tl.constexpr):
        i = tl.arange(0, B)
        tl.store(o, (0,), tl.load(x, (i[:, None], i[None, :]), shape=(B, 2 * B)))

    b = np.zeros((64, 64), np.float32)
    with pytest.raises(LangError, match=r"shape=.* is not the shape of the offsets"):
        shapes.interpret(b, b, grid=(1,), B=8)


@tl.kernel(num_warps=2)
def index_max(src, index, out, old, BM: tl.constexpr, D: tl.constexpr):
    """np.maximum.at with index tiles, and the old values it read."""
    r = tl.program_id(0) * BM
    rows = tl.load(index, (r,), shape=(BM,), axis=0)
    cols = tl.arange(0, D)
    got = tl.atomic_max(out, (rows[:, None], cols[None, :]), tl.load(src, (r, 0), shape=(BM, D)))
    tl.store(old, (r, 0), got)


@tl.kernel(num_warps=1)
def tickets(counter, lock, out):
    """Scalar pointers: a ticket (the old value, a scalar) and a compare-and-swap written as Triton's."""
    t = tl.atomic_add(counter + 0, 1)
    tl.store(out + tl.program_id(0), t)
    tl.atomic_cas(lock + tl.program_id(0), 0, t + 100)


@pytest.mark.parametrize("after", STAGES)
def test_a_histogram_at_pointers(after):
    x = RNG.integers(0, 37, 1000).astype(np.int32)
    h = np.zeros(37, np.int32)
    histogram.interpret(x, h, 1000, grid=(8,), BLOCK=128, after=after)
    np.testing.assert_array_equal(h, np.bincount(x, minlength=37))


@pytest.mark.parametrize("after", STAGES)
def test_an_atomic_maximum_at_index_tiles(after):
    src = RNG.standard_normal((32, 8)).astype(np.float32)
    index = RNG.permutation(np.repeat(np.arange(8), 4)).astype(np.int32)
    out = np.full((8, 8), -np.inf, np.float32)
    old = np.full((32, 8), np.nan, np.float32)
    index_max.interpret(src, index, out, old, grid=(2,), BM=16, D=8, after=after)
    ref = np.full((8, 8), -np.inf)
    np.maximum.at(ref, index, src)
    np.testing.assert_array_equal(out, ref)
    assert np.isin(old, np.concatenate([src.ravel(), [-np.inf]])).all()  # each read a value some element wrote
    assert (np.maximum(old, src) <= out[index]).all()


@pytest.mark.parametrize("after", STAGES)
def test_scalar_pointer_atomics(after):
    counter, lock, out = np.zeros(1, np.int32), np.zeros(5, np.int32), np.full(5, -1, np.int32)
    lock[2] = 7  # not 0: its swap does not happen
    tickets.interpret(counter, lock, out, grid=(5,), after=after)
    assert sorted(out.tolist()) == list(range(5)) and counter[0] == 5
    np.testing.assert_array_equal(lock, np.where(np.arange(5) == 2, 7, out + 100))


def test_the_ptx_of_the_atomics():
    x, h = np.zeros(256, np.int32), np.zeros(37, np.int32)
    f = np.zeros((32, 8), np.float32)
    for arch in ("sm_80", "sm_90a"):
        assert "red.global.add" in histogram.compile(x, h, 256, BLOCK=128, arch=arch).asm["ptx"]
        index_max.compile(f, x, f, f, BM=16, D=8, arch=arch)
        assert "global.cas.b32" in tickets.compile(x, x, x, arch=arch).asm["ptx"]


def test_atomic_errors():
    @tl.kernel
    def halves(x, h, B: tl.constexpr):
        tl.atomic_add(h + tl.arange(0, B), tl.load(x + tl.arange(0, B)))

    a = np.zeros(64, np.int16)  # (f16 and bf16 sums are atomic: tests/lang/test_atomics.py)
    with pytest.raises(LangError, match=r"tl.atomic_add combines f32 or i32 or f64 or i64 or f16 or bf16 elements "
                                        r"atomically; 'h' holds tl.int16"):
        halves.interpret(a, a, grid=(1,), B=64)


@tl.kernel(num_warps=2)
def cross_entropy(logits, targets, loss, stride, n_cols, BLOCK: tl.constexpr):
    """Triton's cross entropy: a row's log-sum-exp, the target's logit through a scalar pointer into the
    2-D array, an int64 target read through a masked scalar pointer."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(logits + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    target = tl.load(targets + row, mask=row >= 0)
    tl.store(loss + row, lse - tl.load(logits + row * stride + target))


@tl.kernel(num_warps=1)
def bare_pointers(x_ptr, scale_ptr, out_ptr, amax_ptr, n, BLOCK: tl.constexpr):
    """Array arguments used as pointers to their first element (tl.load(scale_ptr)), a pointer argument
    advanced in a loop (x_ptr += BLOCK), a 1 x BLOCK tile of pointers (x + v[None, :])."""
    s = tl.load(scale_ptr)
    acc = tl.zeros((1, BLOCK), dtype=tl.float32)
    for _ in tl.range(0, n // BLOCK):
        acc += tl.load(x_ptr + tl.arange(0, BLOCK)[None, :])
        x_ptr += BLOCK
    tl.store(out_ptr + tl.arange(0, BLOCK)[None, :], acc * s)
    tl.atomic_max(amax_ptr, tl.max(tl.abs(acc)))
    tl.store(scale_ptr, s + 1.0)


@tl.kernel(num_warps=1)
def outside_reads_other(x, out, other_out, n):
    """A scalar pointer outside the array reads other (with and without a mask); a positional mask and other."""
    pid = tl.program_id(0)
    tl.store(out + pid, tl.load(x + (pid - 2), other=-9.0))
    tl.store(other_out + pid, tl.load(x + pid, pid < n, -5.0))


@pytest.mark.parametrize("after", STAGES)
def test_the_cross_entropy_of_rows(after):
    logits = RNG.standard_normal((6, 50)).astype(np.float32)
    targets = RNG.integers(0, 50, 6).astype(np.int64)
    loss = np.full(6, np.nan, np.float32)
    cross_entropy.interpret(logits, targets, loss, 50, 50, grid=(6,), BLOCK=64, after=after)
    x = logits.astype(np.float64)
    ref = np.log(np.exp(x - x.max(1, keepdims=True)).sum(1)) + x.max(1) - x[np.arange(6), targets]
    np.testing.assert_allclose(loss, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("after", STAGES)
def test_array_arguments_as_pointers(after):
    x = RNG.standard_normal(96).astype(np.float32)
    scale, out, amax = np.array([3.0], np.float32), np.full(32, np.nan, np.float32), np.zeros(1, np.float32)
    bare_pointers.interpret(x, scale, out, amax, 96, grid=(1,), BLOCK=32, after=after)
    acc = x.reshape(3, 32).astype(np.float64).sum(0)
    np.testing.assert_allclose(out, acc * 3, rtol=1e-5)
    np.testing.assert_allclose(amax, np.abs(acc).max(), rtol=1e-5)
    assert scale[0] == 4.0


@pytest.mark.parametrize("after", STAGES)
def test_scalar_pointers_outside_the_array_read_other(after):
    x = RNG.standard_normal(6).astype(np.float32)
    out, other_out = np.full(8, np.nan, np.float32), np.full(8, np.nan, np.float32)
    outside_reads_other.interpret(x, out, other_out, 5, grid=(8,), after=after)
    np.testing.assert_array_equal(out, [-9, -9, *x[0:6]])
    np.testing.assert_array_equal(other_out, [*x[:5], -5, -5, -5])


def test_a_value_wider_than_its_pointers_is_an_error():
    @tl.kernel
    def too_wide(x, B: tl.constexpr):
        tl.store(x + tl.arange(0, B), tl.zeros((B, B)))

    with pytest.raises(LangError, match=r"does not fit the \(8,\) offsets"):
        too_wide.interpret(np.zeros(64, np.float32), grid=(1,), B=8)


@tl.kernel(num_warps=4)
def row_sums(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    """A tile of pointers advanced through the loop (ptrs += BLOCK): it becomes the start plus the
    counter's multiple, so index_steps sees its steps and its loads move as vectors."""
    row = tl.program_id(0)
    ptrs = x_ptr + row * stride + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for off in tl.range(0, n_cols, BLOCK):
        acc += tl.load(ptrs, mask=off + tl.arange(0, BLOCK) < n_cols, other=0.0)
        ptrs += BLOCK
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
    tl.store(out_ptr + row + 8, tl.sum(tl.load(ptrs - BLOCK), axis=0))  # after the loop: start + trips * BLOCK


@pytest.mark.parametrize("after", STAGES)
def test_pointers_advanced_through_a_loop(after):
    x = RNG.standard_normal((5, 1000)).astype(np.float32)
    o = np.full(16, np.nan, np.float32)
    row_sums.interpret(x, o, 1000, 1000, grid=(5,), BLOCK=256, after=after)
    np.testing.assert_allclose(o[:5], x.astype(np.float64).sum(1), rtol=1e-5, atol=1e-4)
    flat = np.concatenate([x.ravel(), np.zeros(24, np.float32)]).astype(np.float64)  # 0 past the array
    np.testing.assert_allclose(o[8:13], [flat[r * 1000 + 768:r * 1000 + 1024].sum() for r in range(5)], rtol=1e-5,
                               atol=1e-4)
    from tilec.dialects.tile import ops as t
    from tilec.passes.index_steps import step_along
    gathers = [op for op in row_sums.ir(x, o, 1000, 1000, BLOCK=256).walk() if isinstance(op, t.GatherOp)]
    assert [step_along(op.indices[0], 0) for op in gathers] == [1, 1]


@tl.func
def _scaled_if(a, n):
    """An offset computed under a run-time if inside a map's body: index_steps must not see through it."""
    if n > 5:
        b = a * 3
    else:
        b = a * 0
    return a + b


@tl.kernel(num_warps=4)
def offsets_from_an_if(x, o, n, B: tl.constexpr):
    off = tl.map(lambda a: _scaled_if(a, n), tl.arange(0, B))
    tl.store(o + tl.arange(0, B), tl.load(x + off))


@pytest.mark.parametrize("after", STAGES)
def test_steps_are_unknown_through_an_if_in_a_map(after):
    x = RNG.standard_normal(4 * 256).astype(np.float32)
    o = np.full(256, np.nan, np.float32)
    offsets_from_an_if.interpret(x, o, 9, grid=(1,), B=256, after=after)
    np.testing.assert_array_equal(o, x[::4])


@tl.kernel(num_warps=1)
def pointers_misc(x, o, ids, n, B: tl.constexpr):
    """A tile-valued other reads outside the array too; an index scalar stored at a pointer; an index
    tile's gather with a tile other."""
    pid = tl.program_id(0)
    i = tl.arange(0, B)
    fallback = (i * 0 - 1).to(tl.float32)
    tl.store(o + pid * B + i, tl.load(x + pid * B + i, mask=i >= 0, other=fallback))
    tl.store(ids + pid, pid)
    rows = tl.load(ids + (i % 4))
    tl.store(o + 64 + i, tl.load(x, (rows + 100,), mask=i < 3, other=fallback + 0.5))


@pytest.mark.parametrize("after", STAGES)
def test_tile_valued_others_and_index_scalars(after):
    x = RNG.standard_normal(10).astype(np.float32)
    o = np.full(72, np.nan, np.float32)
    ids = np.full(4, -7, np.int64)
    pointers_misc.interpret(x, o, ids, 10, grid=(2,), B=8, after=after)
    np.testing.assert_array_equal(o[:16], np.concatenate([x, -np.ones(6)]).astype(np.float32))
    assert ids[:2].tolist() == [0, 1]
    np.testing.assert_array_equal(o[64:72], np.full(8, -0.5, np.float32))  # rows past the array, or masked


def test_a_kernels_own_min_is_not_rewritten():
    @tl.kernel
    def own_max(x, o, B: tl.constexpr):
        def max(a, b):  # noqa: A001 - the kernel's own, which the min/max rewrite must leave alone
            return a + b

        tl.store(o, (0,), max(tl.load(x, (0,), shape=(B,)), 1.0))

    x, o = RNG.standard_normal(16).astype(np.float32), np.full(16, np.nan, np.float32)
    own_max.interpret(x, o, grid=(1,), B=16)
    np.testing.assert_allclose(o, x + 1, rtol=1e-6)


def test_atomic_destinations_are_outputs():
    """A host array an atomic writes is copied back after a launch: its parameter is an output."""
    x, h = np.zeros(256, np.int32), np.zeros(37, np.int32)
    params = {p.name: p.is_output for p in histogram.compile(x, h, 256, BLOCK=128, arch="sm_80").signature}
    assert params["hist_ptr"] and not params["x_ptr"]


@tl.kernel(num_warps=4)
def wide_atomics(x, keys, total, counts, big, BLOCK: tl.constexpr):
    """64-bit atomics: an f64 sum, int64 counts past 2^32 with their old values, an int64 max and xor."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    k = tl.load(keys + offs)
    tl.atomic_add(total + 0, tl.sum(tl.load(x + offs), axis=0))
    old = tl.atomic_add(counts + k, 1 << 33)
    tl.atomic_max(big + k, old)
    tl.atomic_xor(big + 8 + k, k.to(tl.int64) << 40)


@tl.kernel
def wide_tickets(counter, out, B: tl.constexpr):
    """Old int64 values of a few elements every thread holds copies of (handed to the holders by 64-bit
    shuffles on one warp, through 8-byte slots of shared memory on several)."""
    i = tl.arange(0, B)
    old = tl.atomic_add(counter + i, (i + 1).to(tl.int64) << 35)
    tl.store(out + tl.program_id(0) * B + i, old)


@pytest.mark.parametrize("after", STAGES)
def test_64_bit_atomics(after):
    x = RNG.standard_normal(1024)
    keys = RNG.integers(0, 8, 1024).astype(np.int64)
    total, counts = np.zeros(1), np.zeros(8, np.int64)
    big = np.concatenate([np.full(8, -1, np.int64), np.zeros(8, np.int64)])
    wide_atomics.interpret(x, keys, total, counts, big, grid=(8,), BLOCK=128, after=after)
    c = np.bincount(keys, minlength=8)
    xor = np.zeros(8, np.int64)
    for k in keys:
        xor[k] ^= int(k) << 40
    assert abs(total[0] - x.sum()) < 1e-9 and np.array_equal(counts, c << 33)
    np.testing.assert_array_equal(big, np.concatenate([np.where(c > 0, (c - 1) << 33, -1), xor]))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("warps", [1, 4])
def test_64_bit_old_values_reach_every_holder(after, warps):
    counter, out = np.zeros(4, np.int64), np.full(12, -1, np.int64)
    wide_tickets.with_options(num_warps=warps).interpret(counter, out, grid=(3,), B=4, after=after)
    step = (np.arange(4) + 1).astype(np.int64) << 35
    np.testing.assert_array_equal(counter, 3 * step)
    for i in range(4):
        assert sorted(out[i::4].tolist()) == [0, int(step[i]), 2 * int(step[i])]


def test_the_ptx_of_64_bit_atomics():
    k64, f64 = np.zeros(1024, np.int64), np.zeros(1024)
    for arch in ("sm_80", "sm_90a"):
        ptx = wide_atomics.compile(f64, k64, f64, k64, k64, BLOCK=128, arch=arch).asm["ptx"]
        assert all(s in ptx for s in ("red.global.add.f64", "global.add.u64", "red.global.max.s64",
                                      "red.global.xor.b64"))
        for warps in (1, 4):
            wide_tickets.with_options(num_warps=warps).compile(k64, k64, B=4, arch=arch)


@tl.kernel(num_warps=1)
def wide_steps(x, o, n, s, B: tl.constexpr):
    """i32 offsets advanced by an i64 amount (an argument past 2**31, or a cast): carried as i64 from the
    start, as Triton's pointer keeps its type whatever it adds."""
    p = x + tl.arange(0, B)
    q = x + 1
    acc = tl.zeros((B,), dtype=tl.float32)
    for i in tl.range(0, n):
        acc += tl.load(p) + tl.load(q)
        p += s.to(tl.int64)
        q += s
    tl.store(o + tl.arange(0, B), acc)


@pytest.mark.parametrize("after", STAGES)
def test_pointers_advanced_by_64_bit_amounts(after):
    x = RNG.standard_normal(64).astype(np.float32)
    o = np.full(4, np.nan, np.float32)
    wide_steps.interpret(x, o, 3, 8, grid=(1,), B=4, after=after)
    ref = sum(x[8 * i:8 * i + 4] + x[1 + 8 * i] for i in range(3))
    np.testing.assert_allclose(o, ref, rtol=1e-6)
    wide_steps.interpret(x, o, 3, 2**33, grid=(1,), B=4, after=after)  # past the array after the first: reads 0
    np.testing.assert_allclose(o, x[:4] + x[1], rtol=1e-6)


@tl.kernel(num_warps=4)
def gemm_variants(a_ptr, b_ptr, c_ptr, M, N, K, S, FORM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
                  BK: tl.constexpr):
    """The tutorial's K loop written three more ways, each staged as gathering copies: pointers walked
    down from the last K tile (`-=`), int64 offsets, and a run-time loop step `S` (1 is specialised)."""
    pm, pn = tl.program_id(0), tl.program_id(1)
    om, on = (pm * BM + tl.arange(0, BM)) % M, (pn * BN + tl.arange(0, BN)) % N
    ok = tl.arange(0, BK)
    if FORM == "down":
        ok = K - BK + ok
    if FORM == "int64":
        ok = ok.to(tl.int64)
    a_ptrs = a_ptr + om[:, None] * K + ok[None, :]
    b_ptrs = b_ptr + ok[:, None] * N + on[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK), S):
        if FORM == "down":
            a = tl.load(a_ptrs, mask=ok[None, :] - k * BK >= 0, other=0.0)
            b = tl.load(b_ptrs, mask=ok[:, None] - k * BK >= 0, other=0.0)
        else:
            a = tl.load(a_ptrs, mask=ok[None, :] < K - k * BK, other=0.0)
            b = tl.load(b_ptrs, mask=ok[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        if FORM == "down":
            a_ptrs -= BK * S
            b_ptrs -= BK * S * N
        else:
            a_ptrs += BK * S
            b_ptrs += BK * S * N
    rows, cols = pm * BM + tl.arange(0, BM), pn * BN + tl.arange(0, BN)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("form,step", [("down", 1), ("int64", 1), ("up", 1), ("up", 2)])
def test_pointer_gemms_walked_other_ways_are_staged(form, step, after):
    from tilec.dialects.tile import ops as t

    m, n, k = 64, 48, 77
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    cfg = dict(FORM=form, BM=32, BN=16, BK=16)
    gemm_variants.interpret(a, b, c, m, n, k, step, grid=(2, 3), num_stages=3, after=after, **cfg)
    tiles = range(0, -(-k // 16), step)
    ks = [j for i in tiles for j in (range(k - 16 * (i + 1), k - 16 * i) if form == "down" else range(16 * i, 16 * i + 16))
          if 0 <= j < k]
    ref = a[:, ks].astype(np.float64) @ b[ks].astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
    module = gemm_variants._lowered(gemm_variants.ir(a, b, c, m, n, k, step, **cfg),
                                    gemm_variants._pipeline(3, None, None, "sm_80"), "tile-stage")
    assert sum(isinstance(op, t.CopyOp) and op.offsets is not None for op in module.walk()) == 2


@tl.kernel(num_warps=4)
def one_tile_dot(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A dot of pointer loads with no K loop (K fits one tile): each gather staged where it is, as a
    gathering copy and a barrier, so the mma reads its K steps from shared memory."""
    rows, cols, ks = tl.program_id(0) * BM + tl.arange(0, BM), tl.program_id(1) * BN + tl.arange(0, BN), tl.arange(0, BK)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], tl.dot(a, b), mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("arch", [None, "sm_90a"])
def test_a_dot_of_pointer_loads_outside_a_loop(arch, after):
    from tilec.dialects.tile import ops as t

    m, n, k = 100, 72, 60
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    one_tile_dot.interpret(a, b, c, m, n, k, grid=(2, 3), BM=64, BN=32, BK=64, arch=arch, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
    module = one_tile_dot._lowered(one_tile_dot.ir(a, b, c, m, n, k, BM=64, BN=32, BK=64),
                                   one_tile_dot._pipeline(None, None, None, arch), "tile-stage")
    assert sum(isinstance(op, t.CopyOp) and op.offsets is not None for op in module.walk()) == 2


@tl.kernel(num_warps=1)
def widened_counts(o, n, s, B: tl.constexpr):
    acc = tl.zeros((B,), dtype=tl.int32)
    for i in tl.range(0, n):
        acc += s.to(tl.int64)
    tl.store(o + tl.arange(0, B), acc)


def test_only_pointers_widen_through_a_loop():
    """A carried int32 tile that the body makes int64 keeps its type (Triton's rule: an error at the loop);
    only a pointer's offsets are carried as int64 from the start."""
    from tilec.lang.tracing import LangError

    with pytest.raises(LangError, match="a carried value keeps its type"):
        widened_counts.interpret(np.zeros(4, np.int64), 3, 5, grid=(1,), B=4)


@tl.kernel(num_warps=4)
def bump_in_place(p, n, i, BLOCK: tl.constexpr):
    """Read, change and write back the same places through pointers (Triton's layer-norm backward
    accumulating its partial sums; Liger's cross-entropy updating the target's logit)."""
    cols = tl.arange(0, BLOCK)
    x = tl.load(p + cols, mask=cols < n)
    tl.store(p + cols, x + 1.0, mask=cols < n)
    v = tl.load(p + i)
    tl.store(p + i, v + 10.0)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("block, warps", [(16, 4), (64, 8), (256, 4)])
def test_a_place_read_and_written_back_changes_once(block, warps, after):
    """A block tile smaller than the block's threads is held in copies by several lanes and warps: one
    holder of each element writes it (as an atomic combines), so a warp reading after another's write
    does not add again (before: 4.0 with 16 elements in four warps, after tile-distribute)."""
    a = np.zeros(block + 3, np.float32)
    bump_in_place.with_options(num_warps=warps).interpret(a, block, block + 1, grid=(1,), BLOCK=block, after=after)
    expected = np.zeros(block + 3, np.float32)
    expected[:block] = 1.0
    expected[block + 1] = 10.0
    np.testing.assert_array_equal(a, expected)
