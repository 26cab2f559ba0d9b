"""Reshapes in the language: ``tl.reshape`` / ``.reshape`` / ``tl.view`` / ``tl.ravel``, ``tl.interleave``,
``tl.cat``, ``tl.join`` of tiles and three axes with one of 2 (``tilec.lang.shapes``: ``tile.reshape``,
``tile.join``, ``tile.split``), and ``tl.sort`` / ``tl.flip`` built on them (``tilec.lang.sorting``).

Each kernel runs on the tile interpreter and, after tile-distribute, on the lane interpreter, against
numpy on fresh random values with NaN-poisoned outputs; the kernels Triton users write with them
(per-group scales of a quantizer, 4-bit weights packed two rows a byte) are among them, and every
kernel is compiled and assembled for sm_80 and sm_90a.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4)
def shapes(x, o_rows, o_flat, o_inter, o_cat0, o_cat1, o_vinter, o_vcat, M: tl.constexpr, N: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(M, N))
    tl.store(o_rows, (0, 0), tl.reshape(t, (2 * M, -1)) + 1.0)
    v = t.ravel()
    tl.store(o_flat, (0,), v.view(M * N) * 2.0)
    tl.store(o_inter, (0, 0), tl.interleave(t, t + 100.0))
    tl.store(o_cat0, (0, 0), tl.cat(t, -t, can_reorder=True))
    tl.store(o_cat1, (0, 0), tl.cat(t, t * 3.0, dim=1))
    head = tl.load(x, (0, 0), shape=(1, N)).reshape(N)
    tl.store(o_vinter, (0,), tl.interleave(head, head - 1.0))
    tl.store(o_vcat, (0,), tl.cat(head, head * 0.5))


def _shapes_outputs(m: int, n: int) -> list[np.ndarray]:
    dims = [(2 * m, n // 2), (m * n,), (m, 2 * n), (2 * m, n), (m, 2 * n), (2 * n,), (2 * n,)]
    return [np.full(d, np.nan, np.float32) for d in dims]


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("m, n", [(16, 32), (8, 64), (32, 16)])
def test_reshape_interleave_and_cat(after, m, n):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    outs = _shapes_outputs(m, n)
    shapes.interpret(x, *outs, M=m, N=n, grid=(1,), after=after)
    for got, ref in zip(outs, shapes_reference(x)):
        np.testing.assert_array_equal(got, ref.astype(np.float32))


def shapes_reference(x: np.ndarray) -> list[np.ndarray]:
    """numpy's outputs of :func:`shapes` (the GPU test checks against them too)."""
    m, n = x.shape
    head = x[0]
    return [x.reshape(2 * m, n // 2) + 1, x.reshape(-1) * 2, np.stack([x, x + 100], -1).reshape(m, 2 * n),
            np.concatenate([x, -x]), np.concatenate([x, x * 3], 1), np.stack([head, head - 1], -1).reshape(-1),
            np.concatenate([head, head * 0.5])]


_spec = importlib.util.spec_from_file_location(
    "lang_example_quantize", Path(__file__).resolve().parents[2] / "examples" / "lang" / "quantize.py")
quantize = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(quantize)
group_quantize = quantize.group_quantize
"""Per-group int8 quantization (examples/lang/quantize.py): a block reshaped into its groups and back."""


@pytest.mark.parametrize("after", STAGES)
def test_group_quantize(after):
    n, block, group = 1000, 256, 32
    x = RNG.standard_normal(n).astype(np.float32) * RNG.uniform(0.1, 10, n).astype(np.float32)
    q, s = np.full(n, 99, np.int8), np.full(-(-n // group), np.nan, np.float32)
    group_quantize.interpret(x, q, s, n, BLOCK=block, GROUP=group, grid=(-(-n // block),), after=after)
    want, scale = quantize.reference(x, group)
    np.testing.assert_allclose(s, scale, rtol=1e-6)
    assert np.abs(q.astype(np.int32) - want).max() <= 1  # a quotient at .5 may round either way


@tl.kernel(num_warps=4)
def w4_rows_interleaved(a_ptr, w_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``c = a @ (w - 8)`` with 4-bit weights packed two consecutive rows a byte (GPTQ's order: row 2i in
    the low nibble of byte row i, row 2i + 1 in the high one), unpacked by interleaving the rows."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        kp = k0 // 2 + tl.arange(0, BK // 2)
        packed = tl.load(w_ptr + kp[:, None] * N + cols[None, :], mask=(kp[:, None] < K // 2) & (cols[None, :] < N),
                         other=0x88)
        low = ((packed & 0xF).to(tl.int32) - 8).to(tl.float16)
        high = ((packed >> 4).to(tl.int32) - 8).to(tl.float16)
        w = tl.interleave(low.T, high.T).T  # (BK, BN): rows 2i and 2i + 1 from byte row i
        acc = tl.dot(a, w, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@tl.kernel(num_warps=4)
def w4_joined(a_ptr, w_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """:func:`w4_rows_interleaved` as Triton's int4 kernels write the unpacking: ``tl.join`` of the low and
    high nibbles, the pair axis moved between the rows and the columns, reshaped to (BK, BN)."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        kp = k0 // 2 + tl.arange(0, BK // 2)
        packed = tl.load(w_ptr + kp[:, None] * N + cols[None, :], mask=(kp[:, None] < K // 2) & (cols[None, :] < N),
                         other=0x88)
        low = ((packed & 0xF).to(tl.int32) - 8).to(tl.float16)
        high = ((packed >> 4).to(tl.int32) - 8).to(tl.float16)
        w = tl.join(low, high).permute(0, 2, 1).reshape(BK, BN)
        acc = tl.dot(a, w, acc)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("kernel", [w4_rows_interleaved, w4_joined], ids=["interleave", "join"])
def test_four_bit_rows_unpacked(after, kernel):
    m, n, k = 40, 48, 64
    q = RNG.integers(0, 16, (k, n), dtype=np.uint8)
    w = (q[0::2] | (q[1::2] << 4)).astype(np.uint8)
    a = RNG.standard_normal((m, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    kernel.interpret(a, w, c, m, n, k, BM=32, BN=32, BK=32, grid=(2, 2), after=after)
    ref = a.astype(np.float64) @ (q.astype(np.float64) - 8)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-3


def test_four_bit_rows_unpack_in_registers():
    """The join of the nibbles is held as the mma's B operand (each thread's k, k + 1 pairs from one byte):
    tile-layout gives the byte tile the parts' fragment, so the bytes are gathered where they are used and
    no tile of the weights is converted or moved through shared memory."""
    from tilec.dialects.tile import ops as t
    from tilec.passes.tile_distribute.convert import needs_scratch

    args = (np.zeros((64, 64), np.float16), np.zeros((32, 64), np.uint8), np.zeros((64, 64), np.float32), 64, 64, 64)
    for kernel in (w4_rows_interleaved, w4_joined):
        module = kernel._lowered(kernel.ir(*args, BM=64, BN=64, BK=32), None, "tile-layout")
        ops = list(module.walk())
        joins = [op for op in ops if isinstance(op, t.JoinOp)]
        assert len(joins) == 1 and not needs_scratch(joins[0]), kernel.name
        assert not [op for op in ops if isinstance(op, t.ConvertLayoutOp) and op.input.type.name == "tile.rt"]


@tl.kernel(num_warps=4)
def joined_forms(x, o_pairs, o_rows, o_cols, o_t, o_a, o_b, M: tl.constexpr, N: tl.constexpr):
    a = tl.load(x, (0, 0), shape=(M, N))
    b = a * 2.0 + 1.0  # exact with or without a fused multiply-add
    j = tl.join(a, b)  # (M, N, 2)
    tl.store(o_pairs, (0, 0), j.reshape(M, 2 * N))
    tl.store(o_rows, (0, 0), tl.reshape(tl.permute(j, (0, 2, 1)), (2 * M, N)))
    tl.store(o_cols, (0, 0), j.permute(2, 0, 1).reshape(2 * M, N))
    tl.store(o_t, (0, 0), tl.trans(j, (1, 0, 2)).reshape(N, 2 * M))
    first, second = tl.split(j)
    tl.store(o_a, (0, 0), first)
    tl.store(o_b, (0, 0), second)


@pytest.mark.parametrize("after", STAGES)
def test_joined_tiles_read_as_numpy_reads_them(after):
    m, n = 16, 32
    x = RNG.standard_normal((m, n)).astype(np.float32)
    dims = [(m, 2 * n), (2 * m, n), (2 * m, n), (n, 2 * m), (m, n), (m, n)]
    outs = [np.full(d, np.nan, np.float32) for d in dims]
    joined_forms.interpret(x, *outs, M=m, N=n, grid=(1,), after=after)
    for got, ref in zip(outs, joined_reference(x)):
        np.testing.assert_array_equal(got, ref)


def joined_reference(x: np.ndarray) -> list[np.ndarray]:
    """numpy's outputs of :func:`joined_forms`."""
    m, n = x.shape
    j = np.stack([x, x * np.float32(2) + np.float32(1)], -1)
    return [j.reshape(m, 2 * n), j.transpose(0, 2, 1).reshape(2 * m, n), j.transpose(2, 0, 1).reshape(2 * m, n),
            j.transpose(1, 0, 2).reshape(n, 2 * m), j[..., 0], j[..., 1]]


@tl.kernel(num_warps=4)
def three_axes(x, o_pairs, o_rows, o_halves, o_moved, M: tl.constexpr, N: tl.constexpr):
    """Tiles read as three axes with one of 2 (Triton's ``x.reshape(m, n // 2, 2)`` and the like), split."""
    t = tl.load(x, (0, 0), shape=(M, N))
    even, odd = tl.split(t.reshape(M, N // 2, 2))
    tl.store(o_pairs, (0, 0), even - odd)
    top, bottom = tl.split(t.reshape(M // 2, 2, N).permute(0, 2, 1))
    tl.store(o_rows, (0, 0), top * 2.0 + bottom)
    first, second = tl.split(tl.reshape(t, (2, M // 2, N)).permute(1, 2, 0))
    tl.store(o_halves, (0, 0), first - second)
    tl.store(o_moved, (0, 0), tl.reshape(t, (2, M // 2, N)).permute(1, 0, 2).reshape(M // 2, 2 * N))


@pytest.mark.parametrize("after", STAGES)
def test_three_axes_with_a_pair(after):
    m, n = 16, 32
    x = RNG.standard_normal((m, n)).astype(np.float32)
    outs = [np.full(d, np.nan, np.float32) for d in [(m, n // 2), (m // 2, n), (m // 2, n), (m // 2, 2 * n)]]
    three_axes.interpret(x, *outs, M=m, N=n, grid=(1,), after=after)
    p, r, h = x.reshape(m, n // 2, 2), x.reshape(m // 2, 2, n), x.reshape(2, m // 2, n)
    for got, ref in zip(outs, [p[..., 0] - p[..., 1], r[:, 0] * 2 + r[:, 1], h[0] - h[1],
                               h.transpose(1, 0, 2).reshape(m // 2, 2 * n)]):
        np.testing.assert_array_equal(got, ref)


@tl.kernel(num_warps=4)
def sorts(x, ids, o_up, o_down, o_flip, o_cols, o_vec, o_ids, o_rowvec, M: tl.constexpr, N: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(M, N))
    tl.store(o_up, (0, 0), tl.sort(t))
    tl.store(o_down, (0, 0), tl.sort(t, dim=1, descending=True))
    tl.store(o_flip, (0, 0), tl.flip(t))
    tl.store(o_cols, (0, 0), tl.trans(tl.sort(tl.trans(t))))
    v = tl.load(x, (0, 0), shape=(1, N)).reshape(N)
    tl.store(o_vec, (0,), tl.flip(tl.sort(v)))
    tl.store(o_ids, (0,), tl.sort(tl.load(ids, (0,), shape=(N,))))
    tl.store(o_rowvec, (0,), tl.sort(tl.sum(t, axis=1)))  # a vector of one value a row


def _sorts_outputs(m: int, n: int, ints) -> list[np.ndarray]:
    return [np.full((m, n), np.nan, np.float32) for _ in range(4)] + [np.full(n, np.nan, np.float32),
                                                                      np.full(n, -7, ints.dtype),
                                                                      np.full(m, np.nan, np.float32)]


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("m, n", [(16, 64), (32, 32), (8, 128), (4, 2)])
def test_sort_and_flip(after, m, n):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    x[0, :2] = x[0, 2 % n]  # ties
    ids = RNG.integers(-(2 ** 31), 2 ** 31 - 1, n, dtype=np.int64).astype(np.int32)
    outs = _sorts_outputs(m, n, ids)
    sorts.interpret(x, ids, *outs, M=m, N=n, grid=(1,), after=after)
    want = [np.sort(x, 1), -np.sort(-x, 1), x[:, ::-1], np.sort(x, 0), np.sort(x[0])[::-1], np.sort(ids),
            np.sort(x.astype(np.float32).sum(1, dtype=np.float32))]
    for i, (got, ref) in enumerate(zip(outs, want)):
        if i == 6:  # a sum's rounding may differ from numpy's order of adds: compare sorted values closely
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, ref)


@tl.kernel
def masks_and_methods(x, y, o_sorted, o_gt, o_ptr, N: tl.constexpr):
    """A hunt's findings: masks compare as 0 < 1 (a signed i1 would read true as -1), so a sort of masks
    puts False first; Triton's tensor methods x.sort(), x.flip(); an (n, 2) tensor of pointers splits."""
    a = tl.load(x, (0,), shape=(N,)) > 0
    b = tl.load(y, (0,), shape=(N,)) > 0
    tl.store(o_sorted, (0,), a.sort().to(tl.int32) * 2 + a.flip().to(tl.int32))
    tl.store(o_gt, (0,), (a > b).to(tl.int32) * 4 + (a >= b).to(tl.int32) * 2 + (a < b).to(tl.int32))
    pairs = o_ptr + tl.arange(0, N // 2)[:, None] * 2 + tl.arange(0, 2)[None, :]
    even, odd = tl.split(pairs)
    tl.store(even, tl.load(x + tl.arange(0, N // 2) * 2))
    tl.store(odd, -tl.load(x + tl.arange(0, N // 2) * 2 + 1))


@pytest.mark.parametrize("after", STAGES)
def test_masks_order_as_triton_orders_them(after):
    n = 16
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    o_sorted, o_gt, o_ptr = np.full(n, -1, np.int32), np.full(n, -1, np.int32), np.full(n, np.nan, np.float32)
    masks_and_methods.interpret(x, y, o_sorted, o_gt, o_ptr, N=n, grid=(1,), after=after)
    a, b = x > 0, y > 0
    np.testing.assert_array_equal(o_sorted, np.sort(a).astype(np.int32) * 2 + a[::-1])
    np.testing.assert_array_equal(o_gt, (a > b) * 4 + (a >= b) * 2 + (a < b))
    np.testing.assert_array_equal(o_ptr, np.where(np.arange(n) % 2 == 0, x, -x))


@tl.kernel
def sorted_with_nan(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.sort(tl.load(x, (0,), shape=(N,))))


@pytest.mark.parametrize("after", STAGES)
def test_a_sort_keeps_every_value(after):
    """NaN compares false, so a network of compares and selects keeps it (and every other value): the
    result is a permutation of the input."""
    x = RNG.standard_normal(64).astype(np.float32)
    x[[3, 40]] = np.nan
    o = np.full(64, 0.5, np.float32)
    sorted_with_nan.interpret(x, o, N=64, grid=(1,), after=after)
    assert np.isnan(o).sum() == 2
    np.testing.assert_array_equal(np.sort(o[~np.isnan(o)]), np.sort(x[~np.isnan(x)]))


@tl.kernel
def unsigned_and_masks(x_ptr, o_ptr, b_ptr, N: tl.constexpr):
    """A uint8 tile stays unsigned through a reshape (``>>`` logical); a mask keeps its bits."""
    t = tl.load(x_ptr + tl.arange(0, 8)[:, None] * N + tl.arange(0, N)[None, :])
    flat = tl.reshape(t, (8 * N,))
    tl.store(o_ptr + tl.arange(0, 8 * N), (flat >> 4).to(tl.int32))
    big = tl.reshape(t > 200, (4, 2 * N))
    tl.store(b_ptr + tl.arange(0, 4)[:, None] * 2 * N + tl.arange(0, 2 * N)[None, :], tl.where(big, 1.0, -1.0))


@pytest.mark.parametrize("after", STAGES)
def test_unsigned_values_and_masks(after):
    n = 32
    x = RNG.integers(0, 256, (8, n), dtype=np.uint8)
    o, b = np.full(8 * n, -7, np.int32), np.full((4, 2 * n), np.nan, np.float32)
    unsigned_and_masks.interpret(x, o, b, N=n, grid=(1,), after=after)
    np.testing.assert_array_equal(o, (x.reshape(-1) >> 4).astype(np.int32))
    np.testing.assert_array_equal(b, np.where(x.reshape(4, 2 * n) > 200, 1.0, -1.0))


@tl.kernel
def mixed_parts(x8, y8, f16, f32, o_u8, o_cat, o_fp8, o_split, o_ptr, N: tl.constexpr):
    """A hunt's findings: unsigned parts stay unsigned, u8 with i8 is u8, f16 with f32 meet in f32, FP8
    vectors join as bytes (e5m2's infinities kept), a vector read as (1, n) joins and splits, a tensor of
    pointers reshapes."""
    rows = tl.arange(0, 4)[:, None] * N + tl.arange(0, N)[None, :]
    u = tl.load(x8 + rows)  # uint8 tile
    i = tl.load(y8 + rows).to(tl.int8, bitcast=True)  # the same bytes as int8
    tl.store(o_u8 + tl.arange(0, 8)[:, None] * N + tl.arange(0, N)[None, :], (tl.cat(u, i) >> 4).to(tl.int32))
    a, b = tl.load(f16 + tl.arange(0, N)), tl.load(f32 + tl.arange(0, N))
    tl.store(o_cat + tl.arange(0, 2 * N), tl.cat(a, b))
    e = tl.load(o_fp8 + tl.arange(0, N))
    tl.store(o_fp8 + N + tl.arange(0, 2 * N), tl.interleave(e, e))
    r = tl.reshape(b, (1, N))
    first, second = tl.split(tl.reshape(tl.join(r, r * 2.0), (N, 2)))
    tl.store(o_split + tl.arange(0, N), first + second)
    p = tl.reshape(o_ptr + tl.arange(0, 2 * N), (2, N))
    tl.store(p, tl.reshape(tl.cat(a, b), (2, N)))


@pytest.mark.parametrize("after", STAGES)
def test_what_a_hunt_found(after):
    import ml_dtypes

    n = 16
    x8 = RNG.integers(0, 256, (4, n), dtype=np.uint8)
    f16, f32 = RNG.standard_normal(n).astype(np.float16), RNG.standard_normal(n).astype(np.float32)
    fp8 = np.zeros(3 * n, ml_dtypes.float8_e5m2)
    fp8[:n] = np.array([np.inf, -np.inf, 1.5, -2.0] * (n // 4), np.float32).astype(ml_dtypes.float8_e5m2)
    o_u8, o_cat = np.full((8, n), -7, np.int32), np.full(2 * n, np.nan, np.float32)
    o_split, o_ptr = np.full(n, np.nan, np.float32), np.full(2 * n, np.nan, np.float32)
    mixed_parts.interpret(x8, x8, f16, f32, o_u8, o_cat, fp8, o_split, o_ptr, N=n, grid=(1,), after=after)
    np.testing.assert_array_equal(o_u8, np.concatenate([x8, x8]) >> 4)
    np.testing.assert_array_equal(o_cat, np.concatenate([f16.astype(np.float32), f32]))
    np.testing.assert_array_equal(fp8[n:].astype(np.float32), np.repeat(fp8[:n].astype(np.float32), 2))
    np.testing.assert_array_equal(o_split, f32 * 3)
    np.testing.assert_array_equal(o_ptr, np.concatenate([f16.astype(np.float32), f32]))


@tl.kernel(num_warps=4)
def warp_copies(x, w_ptr, a_ptr, o, c_ptr, p, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """A review's findings: values that depend on the warp keep a fragment of their own where a move or an
    mma operand split over the warps meets them (each warp stores its own copy)."""
    wid = tl.warp_id()
    t = tl.load(x, (0, 0), shape=(M, N))
    tl.store(o, (wid * N, 0), tl.reshape(t, (N, M)) + wid)
    w = tl.load(w_ptr, (0, 0), shape=(N, K))
    tl.store(c_ptr, (0, 0), tl.dot(tl.load(a_ptr, (0, 0), shape=(M, K)), tl.trans(w)))
    tl.store(p, (wid * N, 0), w + wid)


@pytest.mark.parametrize("after", STAGES)
def test_values_of_each_warp_keep_their_fragments(after):
    m, n, k = 64, 64, 32
    x = RNG.standard_normal((m, n)).astype(np.float32)
    w, a = (RNG.standard_normal(s).astype(np.float16) for s in ((n, k), (m, k)))
    o, c = np.full((4 * n, m), np.nan, np.float32), np.full((m, n), np.nan, np.float32)
    p = np.full((4 * n, k), np.nan, np.float16)
    warp_copies.interpret(x, w, a, o, c, p, M=m, N=n, K=k, grid=(1,), after=after)
    np.testing.assert_array_equal(o, np.concatenate([x.reshape(n, m) + i for i in range(4)]))
    np.testing.assert_array_equal(p, np.concatenate([w + np.float16(i) for i in range(4)]))
    ref = a.astype(np.float64) @ w.astype(np.float64).T
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-3


@tl.kernel
def fp8_fill(x, o, n, OTHER: tl.constexpr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o + offs, tl.load(x + offs, mask=offs < n, other=OTHER).to(tl.float32))


@pytest.mark.parametrize("name, other, fill", [("float8_e5m2", 1e6, 57344.0), ("float8_e5m2", float("inf"), 57344.0),
                                               ("float8_e4m3fn", 1000.0, 448.0), ("float8_e5m2", 0.3, 0.3125)])
def test_fp8_fills_convert_and_bytes_move(name, other, fill):
    """An FP8 array's bytes are read as they are (e5m2's infinities kept: a byte moved converts nothing),
    and ``other=`` is converted as the compiled kernel converts a number (saturating): both interpreters."""
    import ml_dtypes

    dt = getattr(ml_dtypes, name)
    x = np.array([np.inf if "e5m2" in name else 448.0, -2.0, 1.5] + [1.0] * 29, np.float32).astype(dt)
    for after in STAGES:
        o = np.full(32, 7.0, np.float32)
        fp8_fill.interpret(x, o, 8, OTHER=other, N=32, grid=(1,), after=after)
        np.testing.assert_array_equal(o[:3], x[:3].astype(np.float32))
        assert o[8] == fill and o[31] == fill


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_the_kernels_compile(arch):
    m, n = 16, 32
    shapes.compile(np.zeros((m, n), np.float32), *_shapes_outputs(m, n), M=m, N=n, arch=arch)
    import ml_dtypes

    u8, f = np.zeros((4, 16), np.uint8), np.zeros(32, np.float32)
    mixed_parts.compile(u8, u8, np.zeros(16, np.float16), f, np.zeros((8, 16), np.int32), f,
                        np.zeros(48, ml_dtypes.float8_e5m2), f, f, N=16, arch=arch)
    x = np.zeros(1000, np.float32)
    group_quantize.compile(x, np.zeros(1000, np.int8), x, 1000, BLOCK=256, GROUP=32, arch=arch)
    sorts.compile(np.zeros((16, 64), np.float32), np.zeros(64, np.int32),
                  *_sorts_outputs(16, 64, np.zeros(1, np.int32)), M=16, N=64, arch=arch)
    three_axes.compile(np.zeros((16, 32), np.float32), *(np.zeros(d, np.float32) for d in
                       [(16, 16), (8, 32), (8, 32), (8, 64)]), M=16, N=32, arch=arch)
    for kernel in (w4_rows_interleaved, w4_joined):
        kernel.compile(np.zeros((64, 64), np.float16), np.zeros((32, 64), np.uint8), np.zeros((64, 64), np.float32),
                       64, 64, 64, BM=64, BN=64, BK=32, arch=arch)
    warp_copies.compile(np.zeros((64, 64), np.float32), np.zeros((64, 32), np.float16), np.zeros((64, 32), np.float16),
                        np.zeros((256, 64), np.float32), np.zeros((64, 64), np.float32), np.zeros((256, 32), np.float16),
                        M=64, N=64, K=32, arch=arch)
    m, n = 16, 32
    joined_forms.compile(np.zeros((m, n), np.float32), *(np.zeros(d, np.float32) for d in
                         [(m, 2 * n), (2 * m, n), (2 * m, n), (n, 2 * m), (m, n), (m, n)]), M=m, N=n, arch=arch)


def _error(body, *args, match):
    with pytest.raises(tl.LangError, match=match):
        body.ir(*args)


def test_errors_name_the_shapes():
    @tl.kernel
    def three_dims(x):
        tl.reshape(tl.load(x, (0, 0), shape=(8, 8)), (4, 4, 4))

    _error(three_dims, np.zeros((8, 8), np.float32), match=r"to \(4, 4, 4\): tilec's values have one or two dimensions "
                                                           r"\(or three with an extent of 2")

    @tl.kernel
    def wrong_count(x):
        tl.load(x, (0, 0), shape=(8, 8)).reshape(8, 4)

    _error(wrong_count, np.zeros((8, 8), np.float32), match=r"\(64 elements\) to \(8, 4\): the shape must hold as many")

    @tl.kernel
    def not_ints(x):
        tl.reshape(tl.load(x, (0, 0), shape=(8, 8)), (8.0, 8))

    _error(not_ints, np.zeros((8, 8), np.float32), match=r"tl.reshape's shape is one or two Python ints")

    @tl.kernel
    def mismatched(x):
        t = tl.load(x, (0, 0), shape=(8, 8))
        tl.cat(t, tl.load(x, (0, 0), shape=(4, 8)))

    _error(mismatched, np.zeros((8, 8), np.float32), match=r"tl.cat takes two tiles or two vectors of one shape")

    @tl.kernel
    def third_axis(x):
        t = tl.load(x, (0, 0), shape=(8, 8))
        tl.cat(t, t, dim=2)

    _error(third_axis, np.zeros((8, 8), np.float32), match=r"along dim 2: 0 \(one below the other\) or, for tiles, 1")

    @tl.kernel
    def scalar(x):
        tl.reshape(tl.program_id(0), (1,))

    _error(scalar, np.zeros((8, 8), np.float32), match=r"tl.reshape takes a tile or a vector")

    @tl.kernel
    def not_a_power_of_two(x):
        tl.sort(tl.load(x, (0, 0), shape=(8, 24)))

    _error(not_a_power_of_two, np.zeros((8, 24), np.float32), match=r"the last extent, 24, must be a power of two")

    @tl.kernel
    def first_axis(x):
        tl.sort(tl.load(x, (0, 0), shape=(8, 8)), dim=0)  # Triton's sort too: its last axis only (tl.flip: either)

    _error(first_axis, np.zeros((8, 8), np.float32), match=r"tl.sort works along the last axis .* got dim=0")

    @tl.kernel
    def arithmetic_on_a_join(x):
        t = tl.load(x, (0, 0), shape=(8, 8))
        tl.join(t, t) * 2.0

    _error(arithmetic_on_a_join, np.zeros((8, 8), np.float32), match=r"mul of tl.join of two tiles, shape \(8, 8, 2\)")

    @tl.kernel
    def split_moved(x):
        t = tl.load(x, (0, 0), shape=(8, 8))
        tl.split(tl.join(t, t).permute(2, 0, 1))

    _error(split_moved, np.zeros((8, 8), np.float32), match=r"its last axis must have an extent of 2")

    @tl.kernel(num_warps=4)
    def moved_by_some_warps(x, o):
        if tl.warp_id() == 1:
            t = tl.load(x, (0, 0), shape=(16, 32))
            tl.store(o, (0, 0), tl.reshape(tl.sum(t, axis=1), (4, 4)))  # through shared memory: a block barrier

    from tilec.api import CompilationError

    with pytest.raises(CompilationError, match=r"'tile.reshape': a move of values through shared memory \(it synchronises "
                                               r"the block\) inside an if or while loop whose condition differs"):
        moved_by_some_warps.compile(np.zeros((16, 32), np.float32), np.zeros((4, 4), np.float32), arch="sm_80")

    @tl.kernel
    def carried(x, n):
        j = tl.join(tl.load(x, (0, 0), shape=(8, 8)), tl.load(x, (0, 0), shape=(8, 8)))
        for _ in range(n):
            j = j.permute(1, 0, 2)

    _error(carried, np.zeros((8, 8), np.float32), 3, match=r"is neither compared nor carried by a loop: reshape it")

    @tl.kernel
    def math_on_a_join(x):
        t = tl.load(x, (0, 0), shape=(8, 8))
        tl.abs(tl.join(t, t))

    _error(math_on_a_join, np.zeros((8, 8), np.float32), match=r"'abs' takes tiles, vectors, scalars and numbers, got "
                                                               r"tl.join of two tiles")

    @tl.kernel
    def trans_without_dims(x):
        t = tl.load(x, (0, 0), shape=(8, 8))
        tl.trans(tl.join(t, t))

    _error(trans_without_dims, np.zeros((8, 8), np.float32), match=r"needs its axes' order")
