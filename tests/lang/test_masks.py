"""``mask=`` on ``tl.load``, ``tl.store`` and the atomics, as Triton's: a boolean tile, vector or scalar
broadcast to the value; a store (atomic) leaves the elements where it is false alone, a load reads
``other`` there.

Each kernel runs on the tile-level interpreter and lane by lane after ``tile-distribute`` against numpy
on fresh random inputs, into outputs poisoned with NaN (or a known integer); the PTX is assembled by the
session's ptxas check (tests/conftest.py). A masked store must write exactly the masked-in elements: a
read-modify-write would race with another block writing the others (what the varlen kernel checks).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl
from tilec.lang import LangError

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4)
def keep_positive(x, o, n, BM: tl.constexpr, BN: tl.constexpr):
    """Rows below ``n`` of the positive elements, doubled; the rest of ``o`` is not written."""
    r, c = tl.program_id(0) * BM, tl.program_id(1) * BN
    t = tl.load(x, (r, c), shape=(BM, BN))
    rows = r + tl.arange(0, BM, axis=0)
    tl.store(o, (r, c), t * 2, mask=(t > 0) & (rows[:, None] < n))


@tl.kernel(num_warps=2)
def every_third(x, o, B: tl.constexpr):
    """A 1-D masked store: elements whose index is not a multiple of 3."""
    i = tl.program_id(0) * B
    idx = i + tl.arange(0, B)
    tl.store(o, (i,), tl.load(x, (i,), shape=(B,)) + 1, mask=idx % 3 != 0)


@tl.kernel(num_warps=4)
def padded_columns(x, o, n, BN: tl.constexpr):
    """A masked load: columns from ``n`` on read as ``other``; the row maximum ignores them."""
    r = tl.program_id(0) * 8
    t = tl.load(x, (r, 0), shape=(8, BN), mask=tl.arange(0, BN)[None, :] < n, other=float("-inf"))
    tl.store(o, (r,), tl.max(t, axis=1))


@tl.kernel(num_warps=4)
def varlen_rows(x, starts, o, BM: tl.constexpr, D: tl.constexpr):
    """Packed sequences (``starts`` their cumulative offsets): block (s, j) writes rows ``j*BM`` on of
    sequence ``s`` and must not touch the next sequence's rows, which another block writes."""
    s, j = tl.program_id(0), tl.program_id(1)
    begin, end = tl.load_scalar(starts, (s,)), tl.load_scalar(starts, (s + 1,))
    r = begin + j * BM
    rows = r + tl.arange(0, BM, axis=0)
    t = tl.load(x, (r, 0), shape=(BM, D))
    tl.store(o, (r, 0), t + s.to(tl.float32), mask=rows[:, None] < end)


@tl.kernel(num_warps=4)
def masked_atomics(x, h, n, B: tl.constexpr):
    """Atomics with masks: a vector add where the values are positive, a scalar add only when ``n`` is
    large, and old values that are 0 where masked off."""
    i = tl.program_id(0) * B
    v = tl.load(x, (i,), shape=(B,))
    tl.atomic_add(h, (0,), tl.full((B,), 1, tl.int32), mask=(v > 0) & ((i + tl.arange(0, B)) < n))
    ticket = tl.atomic_add(h, (B,), 1, mask=n > 5)
    tl.atomic_add(h, (B + 1,), 1, mask=n < 5)
    old = tl.atomic_xchg(h, (B + 2,), tl.full((B,), 7, tl.int32), mask=tl.arange(0, B) < 3)
    tl.store(h, (2 * B + 2 + tl.program_id(0) * B,), old)
    tl.store(h, (2 * B + 2 + tl.num_programs(0) * B + tl.program_id(0),), ticket)


def _run(kernel, after, *args, **kwargs):
    kernel.interpret(*args, after=after, **kwargs)


@pytest.mark.parametrize("after", STAGES)
def test_a_masked_tile_store_writes_exactly_the_masked_in_elements(after):
    x = RNG.standard_normal((70, 100)).astype(np.float32)
    o = np.full_like(x, np.nan)
    _run(keep_positive, after, x, o, 53, grid=(3, 2), BM=32, BN=64)
    keep = (x > 0) & (np.arange(70)[:, None] < 53)
    assert np.array_equal(np.isnan(o), ~keep)
    assert np.array_equal(o[keep], 2 * x[keep])


@pytest.mark.parametrize("after", STAGES)
def test_a_masked_vector_store(after):
    x = RNG.standard_normal(1000).astype(np.float32)
    o = np.full_like(x, np.nan)
    _run(every_third, after, x, o, grid=(8,), B=128)
    keep = np.arange(1000) % 3 != 0
    assert np.array_equal(np.isnan(o), ~keep) and np.array_equal(o[keep], x[keep] + 1)


@pytest.mark.parametrize("after", STAGES)
def test_a_masked_load_reads_other(after):
    x = RNG.standard_normal((24, 64)).astype(np.float32) * 30
    o = np.full(24, np.nan, np.float32)
    _run(padded_columns, after, x, o, 37, grid=(3,), BN=64)
    assert np.array_equal(o, x[:, :37].max(1))


@pytest.mark.parametrize("after", STAGES)
def test_masked_stores_of_packed_sequences_leave_the_next_sequence_alone(after):
    lengths = [5, 40, 1, 33]
    starts = np.cumsum([0] + lengths).astype(np.int32)
    x = RNG.standard_normal((int(starts[-1]), 32)).astype(np.float32)
    o = np.full_like(x, np.nan)
    # blocks past a sequence's end store nothing; each block's window runs into the next sequence
    _run(varlen_rows, after, x, starts, o, grid=(len(lengths), 3), BM=16, D=32)
    seq = np.repeat(np.arange(len(lengths)), lengths).astype(np.float32)
    assert np.array_equal(o, x + seq[:, None])


@pytest.mark.parametrize("after", STAGES)
def test_masked_atomics(after):
    b, n, grid = 64, 300, 6
    x = RNG.standard_normal(grid * b).astype(np.float32)
    h = np.full(2 * b + 2 + grid * b + grid, -5, np.int32)
    _run(masked_atomics, after, x, h, n, grid=(grid,), B=b)
    counts = np.full(b, -5)
    for p in range(grid):
        w = x[p * b:(p + 1) * b]
        counts += (w > 0) & (p * b + np.arange(b) < n)
    assert np.array_equal(h[:b], counts)
    assert h[b] == -5 + grid and h[b + 1] == -5  # the scalar add only where n > 5
    olds = h[2 * b + 2:2 * b + 2 + grid * b].reshape(grid, b)
    assert np.all(olds[:, 3:] == 0)  # masked off: 0
    first = [row[:3] for row in olds]  # the first block to swap saw what was there, the others 7
    assert sorted(tuple(int(v) for v in r) for r in first) == [(-5, -5, -5)] + [(7, 7, 7)] * (grid - 1)
    tickets = h[2 * b + 2 + grid * b:]
    assert sorted(tickets) == list(range(-5, -5 + grid))


def test_mask_errors_name_the_line():
    @tl.kernel
    def not_boolean(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        tl.store(o, (0, 0), t, mask=t)

    @tl.kernel
    def wrong_shape(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        tl.store(o, (0, 0), t, mask=tl.arange(0, 32) < 3)

    x = np.zeros((16, 16), np.float32)
    with pytest.raises(LangError, match=r"test_masks.py:\d+:\d+: error: tl.store's mask= must be boolean"):
        not_boolean.ir(x, x)
    with pytest.raises(LangError, match=r"tl.store's mask= .* does not broadcast to the value's shape \(16, 16\)"):
        wrong_shape.ir(x, x)


def test_python_bool_masks():
    """``mask=True`` is no mask; ``mask=False`` stores nothing and loads ``other``."""
    @tl.kernel
    def k(x, o, M: tl.constexpr):
        t = tl.load(x, (0,), shape=(32,), mask=M, other=3.0)
        tl.store(o, (0,), t, mask=True)
        tl.store(o, (0,), t * 0, mask=False)

    x = RNG.standard_normal(32).astype(np.float32)
    for m, want in ((True, x), (False, np.full(32, 3.0, np.float32))):
        o = np.full_like(x, np.nan)
        k.interpret(x, o, grid=(1,), M=m)
        assert np.array_equal(o, want)
        assert str(k.ir(x, o, M=m)).count("tile.store") == 1


def test_masked_stores_stay_off_bulk_tensor_stores():
    """tile-bulk-store turns whole-tile epilogue stores into TMA stores; a masked one writes only some
    elements, which a bulk copy of the box cannot, so it stays a predicated store."""
    from tilec.api import compile as tilec_compile

    text = str(keep_positive.ir(np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32), 64, BM=64, BN=64))
    k = tilec_compile(text, pipeline="tile-layout,tile-bulk-store,tile-distribute,tile-to-llvm", arch="sm_90a")
    assert "cp.async.bulk.tensor" not in k.asm["ptx"] and "st.global" in k.asm["ptx"]


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_kernels_compile(arch):
    """PTX of each kernel above (assembled by the session's ptxas check)."""
    x2, x1 = np.zeros((64, 64), np.float32), np.zeros(256, np.float32)
    starts, h = np.zeros(5, np.int32), np.zeros(512, np.int32)
    ptx = [keep_positive.compile(x2, x2, 64, BM=32, BN=64, arch=arch),
           every_third.compile(x1, x1, B=128, arch=arch),
           padded_columns.compile(x2, x1, 64, BN=64, arch=arch),
           varlen_rows.compile(x2, starts, x2, BM=16, D=64, arch=arch),
           masked_atomics.compile(x1, h, 9, B=64, arch=arch)]
    assert all("st.global" in k.asm["ptx"] or "red.global" in k.asm["ptx"] for k in ptx)


@tl.kernel
def fill_from(x, y, o, n, BN: tl.constexpr):
    """``other=`` a tile, as Triton allows: ``y``'s values where the mask is false."""
    cols = tl.arange(0, BN)[None, :]
    fallback = tl.load(y, (0, 0), shape=(8, BN))
    tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(8, BN), mask=cols < n, other=fallback * 2))


@pytest.mark.parametrize("after", STAGES)
def test_other_may_be_a_tile_with_a_mask(after):
    x, y = (RNG.standard_normal((8, 32)).astype(np.float32) for _ in range(2))
    o = np.full_like(x, np.nan)
    _run(fill_from, after, x, y, o, 20, grid=(1,), BN=32)
    assert np.array_equal(o, np.where(np.arange(32)[None, :] < 20, x, 2 * y))


@tl.kernel(num_warps=4)
def warp_counts(x, h, cas_out, BN: tl.constexpr):
    """The value and place are the same in every warp, the mask (or cas's compared value) is not: each
    warp combines with its own (one warp's copy stood for all before, with its own mask: adds lost)."""
    w = tl.warp_id()
    t = tl.load(x, (w * 16, 0), shape=(16, BN))
    tl.atomic_add(h, (0, 0), tl.full((16, BN), 1, tl.int32), mask=t > 0)
    tl.atomic_cas(cas_out, (0,), w, 7)


@tl.kernel(num_warps=4)
def warp_branch(h, B: tl.constexpr):
    """An atomic of a value every warp has, under a branch only warp 1 takes: warp 1 combines it."""
    if tl.warp_id() == 1:
        tl.atomic_add(h, (0,), tl.full((B,), 1, tl.int32))


@pytest.mark.parametrize("after", STAGES)
def test_masks_and_branches_that_differ_between_warps(after):
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    h, c = np.zeros((16, 32), np.int32), np.full(1, 2, np.int32)
    _run(warp_counts, after, x, h, c, grid=(1,), BN=32)
    assert np.array_equal(h, (x.reshape(4, 16, 32) > 0).sum(0)) and c[0] == 7  # warp 2 compares equal
    g = np.full(64, 3, np.int32)
    _run(warp_branch, after, g, grid=(1,), B=64)
    assert np.array_equal(g, np.full(64, 4))


@tl.kernel(num_warps=4)
def old_values_held_by_all(x, h, o):
    """A tile every thread holds whole (7 x 65: no power-of-two factor to split): thread 0 combines each
    element and the others take its old values, one slot of shared memory per element (not per thread)."""
    t = tl.load(x, (0, 0), shape=(7, 65))
    tl.store(o, (0, 0), tl.atomic_add(h, (0, 0), t, mask=t < 0.5))


@pytest.mark.parametrize("after", STAGES)
def test_old_values_of_a_tile_every_thread_holds(after):
    x = RNG.standard_normal((7, 65)).astype(np.float32)
    h = RNG.standard_normal((7, 65)).astype(np.float32)
    o, before = np.full_like(x, np.nan), h.copy()
    _run(old_values_held_by_all, after, x, h, o, grid=(1,))
    keep = x < 0.5
    assert np.array_equal(o, np.where(keep, before, 0)) and np.array_equal(h, np.where(keep, before + x, before))
    k = old_values_held_by_all.compile(x, h, o, arch="sm_80")
    assert k.launch_defaults.shared_mem < 8 * 1024  # was 233 KB: refused


def test_mask_messages_describe_what_was_given():
    @tl.kernel
    def expanded(x, o):
        tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(16, 16)), mask=(tl.arange(0, 8) < 3)[None, :])

    @tl.kernel
    def numpy_bool(x, o):
        tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(16, 16)), mask=np.bool_(False))

    x = RNG.standard_normal((16, 16)).astype(np.float32)
    with pytest.raises(LangError, match=r"mask= \(vector !tile.rv<8xi1, col> as v\[None, :\]\) does not broadcast"):
        expanded.ir(x, x)
    o = np.full_like(x, np.nan)
    numpy_bool.interpret(x, o, grid=(1,))
    assert np.isnan(o).all()


@tl.kernel(num_warps=4, num_stages=3)
def tutorial_gemm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Triton's tutorial GEMM with its masked K residue (``mask=offs_k < K - k * BK``) and masked rows."""
    rm, rn = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK)):
        x = tl.load(a, (rm, k * BK), shape=(BM, BK), mask=tl.arange(0, BK)[None, :] < K - k * BK, other=0.0)
        y = tl.load(b, (k * BK, rn), shape=(BK, BN), mask=tl.arange(0, BK, axis=0)[:, None] < K - k * BK, other=0.0)
        acc += tl.dot(x, y)
    tl.store(c, (rm, rn), acc.to(tl.float16), mask=(rm + tl.arange(0, BM, axis=0))[:, None] < M)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("K", [90, 70])
def test_the_tutorials_masked_gemm(after, K):
    """K = 70 of 90 columns: the masks end inside the arrays (the copies' masks, not their bounds, decide)."""
    M, N, KA = 70, 50, 90
    a, b = RNG.standard_normal((M, KA)).astype(np.float16), RNG.standard_normal((KA, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    tutorial_gemm.interpret(a, b, c, M, N, K, grid=(3, 2), BM=32, BN=32, BK=32, after=after)
    ref = a[:, :K].astype(np.float64) @ b[:K].astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_masked_operands_are_staged_with_their_masks(arch):
    """tile-stage gives each load's mask to its staged copy: cp.async zero-fills the masked-off elements
    (a run's source size is its leading set bits, which LLVM proves is exact for ``iota < bound``, so no
    element path is left), the selects go, and on sm_90a the product is the block's warpgroup MMAs."""
    x = np.zeros((256, 256), np.float16)
    ptx = tutorial_gemm.compile(x, x, x, 256, 256, 256, BM=64, BN=64, BK=32, arch=arch).asm["ptx"]
    assert "cp.async.cg" in ptx and "ld.global" not in ptx
    assert ("wgmma.mma_async" in ptx) == (arch == "sm_90a") and ("ldmatrix" in ptx) == (arch == "sm_80")
    module = tutorial_gemm._lowered(tutorial_gemm.ir(x, x, x, 256, 256, 256, BM=64, BN=64, BK=32), None, "tile-stage")
    copies = [op for op in module.walk() if op.name == "tile.copy"]
    assert len(copies) == 2 and all(op.mask is not None for op in copies)
    assert not [op for op in module.walk() if op.name == "arith.select"]


@tl.kernel(num_warps=4, num_stages=3)
def every_third_k(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A GEMM over the K indices that are not multiples of 3, below ``K`` (which may end before the
    arrays do): masks that are no prefix of a copy's 16-byte runs (copied element by element)."""
    rm, rn = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    ks = tl.arange(0, BK)
    for k in tl.range(0, tl.cdiv(K, BK)):
        kk = k * BK + ks
        x = tl.load(a, (rm, k * BK), shape=(BM, BK), mask=((kk % 3 != 0) & (kk < K))[None, :], other=0.0)
        y = tl.load(b, (k * BK, rn), shape=(BK, BN), mask=(kk < K)[:, None], other=0.0)
        acc += tl.dot(x, y)
    tl.store(c, (rm, rn), acc.to(tl.float16))


@pytest.mark.parametrize("after", ["tile-stage", "tile-distribute"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_masked_copies_that_are_no_prefix_and_end_before_the_array(after, arch):
    M, N, KA, K = 64, 64, 112, 100  # the masks end before the array's K (inside whole 16-byte rows)
    a, b = RNG.standard_normal((M, KA)).astype(np.float16), RNG.standard_normal((KA, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    every_third_k.interpret(a, b, c, K, grid=(1, 1), BM=64, BN=64, BK=32, after=after, arch=arch)
    keep = (np.arange(KA) % 3 != 0) & (np.arange(KA) < K)
    ref = (a.astype(np.float64) * keep) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
    module = every_third_k._lowered(every_third_k.ir(a, b, c, K, BM=64, BN=64, BK=32), None, "tile-stage")
    copies = [op for op in module.walk() if op.name == "tile.copy"]
    assert all(op.mask is not None for op in copies)
    assert [op.prefix is not None for op in copies] == [False, True]  # A's rows rise and fall: tested per copy


@tl.kernel(num_warps=1)
def numbers_under_masks(o, n):
    """A number stored under a mask fills the mask's window (Triton's ``tl.store(ptrs, 0.0, mask=m)``)."""
    rows, cols = tl.arange(0, 16, axis=0), tl.arange(0, 16)
    tl.store(o, (0, 0), 0.0, mask=(rows[:, None] > cols[None, :]) & (cols[None, :] < n))
    tl.store(o, (16, 0), tl.full((1, 16), 7, tl.float32), mask=(cols < n)[None, :])


@pytest.mark.parametrize("after", STAGES)
def test_numbers_stored_under_masks(after):
    o = np.ones((17, 16), np.float32)
    numbers_under_masks.interpret(o, 10, grid=(1,), after=after)
    r, c = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    want = np.ones((17, 16), np.float32)
    want[:16][(r > c) & (c < 10)] = 0
    want[16, :10] = 7
    assert np.array_equal(o, want)


def test_a_number_under_a_vector_mask_into_a_2d_array_is_refused():
    """Triton's window would come from the pointers, which a mask of one row or column does not give."""
    @tl.kernel
    def k(o, n):
        tl.store(o, (0, 0), 0.0, mask=(tl.arange(0, 16, axis=0) < n)[:, None])

    with pytest.raises(LangError, match="a number under a vector mask into a 2-D array"):
        k.ir(np.zeros((16, 16), np.float32), 3)


@pytest.mark.parametrize("K", [0, 16, 200])
def test_wgmmas_stay_in_flight_over_cp_async_stages(K):
    """Masked copies stay cp.async on sm_90a; with four stages tile-pipeline keeps the K step's warpgroup
    MMAs in flight (waited for one step later, tiles issued one step less ahead into the stage two steps
    back): lane by lane over a ring that wraps, a single K step and none (the last wait only where a step ran)."""
    kernel = tutorial_gemm.with_options(num_stages=4)
    M, N = 64, 64
    a, b = RNG.standard_normal((M, max(K, 1))).astype(np.float16), RNG.standard_normal((max(K, 1), N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    kernel.interpret(a, b, c, M, N, K, grid=(1, 1), BM=64, BN=64, BK=16, after="tile-distribute", arch="sm_90a")
    ref = a[:, :K].astype(np.float64) @ b[:K].astype(np.float64)
    assert np.abs(c - ref).max() <= 2e-3 * max(np.abs(ref).max(), 1.0)
    module = kernel._lowered(kernel.ir(a, b, c, M, N, K, BM=64, BN=64, BK=16), kernel._pipeline(None, None, None, "sm_90a"),
                             "tile-pipeline")
    waits = [op.pending.value.data for op in module.walk() if op.name == "tile.wgmma_wait"]
    assert waits == [1, 0] and [op for op in module.walk() if op.name == "tile.async_wait"][0].pending.value.data == 1


@tl.kernel(num_warps=4, num_stages=3)
def edges_masked_gemm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """The GEMM with every edge masked on its loads too (Triton's older tutorial): rows of A past M,
    columns of B past N and the K residue, each mask an AND of a row and a column vector."""
    rm, rn = tl.program_id(0) * BM, tl.program_id(1) * BN
    rows, cols, ks = rm + tl.arange(0, BM), rn + tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK)):
        x = tl.load(a, (rm, k * BK), shape=(BM, BK), mask=(rows[:, None] < M) & (ks[None, :] < K - k * BK), other=0.0)
        y = tl.load(b, (k * BK, rn), shape=(BK, BN), mask=(ks[:, None] < K - k * BK) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
    tl.store(c, (rm, rn), acc.to(tl.float16), mask=(rows[:, None] < M) & (cols[None, :] < N))


@tl.kernel(num_warps=4, num_stages=2)
def masked_attention(q, k, v, o, n, scale, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    """Attention over the first ``n`` keys (which may end before the arrays do) with the keys' loads
    masked, as Triton's older fused-attention tutorial wrote it: K and V stage with their masks."""
    i = tl.program_id(0) * BM
    qt = tl.load(q, (i, 0), shape=(BM, D))
    m = tl.full((BM,), float("-inf"), tl.float32)
    l = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for j in tl.range(0, tl.cdiv(n, BN)):
        keys = j * BN + tl.arange(0, BN)
        kt = tl.load(k, (j * BN, 0), shape=(BN, D), mask=(keys < n)[:, None], other=0.0)
        s = tl.dot(qt, tl.trans(kt)) * scale
        s = tl.where((keys < n)[None, :], s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, axis=1)
        vt = tl.load(v, (j * BN, 0), shape=(BN, D), mask=(keys < n)[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), vt)
        m = m_new
    tl.store(o, (i, 0), (acc / l[:, None]).to(tl.float16))


@pytest.mark.parametrize("after", ["tile-stage", "tile-distribute"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_masks_on_every_edge_and_on_attentions_keys(after, arch):
    """Both kernels' masked loads become masked copies; the results match float64 on both interpreters."""
    M, N, KA, K = 70, 50, 90, 77
    a, b = RNG.standard_normal((M, KA)).astype(np.float16), RNG.standard_normal((KA, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    edges_masked_gemm.interpret(a, b, c, M, N, K, grid=(3, 2), BM=32, BN=32, BK=32, after=after, arch=arch)
    ref = a[:, :K].astype(np.float64) @ b[:K].astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
    S, SK, n, D = 64, 96, 83, 64
    q, k, v = (RNG.standard_normal((rows, D)).astype(np.float16) for rows in (S, SK, SK))
    o = np.full((S, D), np.nan, np.float16)
    masked_attention.interpret(q, k, v, o, n, D ** -0.5, grid=(1,), BM=64, BN=32, D=D, after=after, arch=arch)
    s = q.astype(np.float64) @ k[:n].astype(np.float64).T * D ** -0.5
    p = np.exp(s - s.max(1, keepdims=True))
    ref = (p / p.sum(1, keepdims=True)) @ v[:n].astype(np.float64)
    assert np.abs(o - ref).max() / np.abs(ref).max() < 1e-2
    for kernel, args, opts in ((edges_masked_gemm, (a, b, c, M, N, K), dict(BM=32, BN=32, BK=32)),
                               (masked_attention, (q, k, v, o, n, 0.125), dict(BM=64, BN=32, D=D))):
        module = kernel._lowered(kernel.ir(*args, **opts), kernel._pipeline(None, None, None, arch), "tile-stage")
        copies = [op for op in module.walk() if op.name == "tile.copy"]
        assert len(copies) == 2 and all(op.mask is not None and op.prefix is not None for op in copies), kernel.name
    x = np.zeros((128, 128), np.float16)  # rows of 16-byte vectors: cp.async (the session's ptxas check assembles it)
    for kernel, args, opts in ((edges_masked_gemm, (x, x, x, 128, 128, 128), dict(BM=64, BN=64, BK=32)),
                               (masked_attention, (x[:, :64], x[:, :64], x[:, :64], x[:, :64], 100, 0.125),
                                dict(BM=64, BN=32, D=64))):
        ptx = kernel.compile(*args, arch=arch, **opts).asm["ptx"]
        assert "cp.async.cg" in ptx and ("wgmma.mma_async" in ptx) == (arch == "sm_90a"), kernel.name


@tl.kernel(num_warps=4, num_stages=3)
def scalar_masked_k(a, b, c, K, KSTOP, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A mask that is one scalar for the whole tile (``mask=k * BK < KSTOP``): no copy's mask, a select."""
    rm, rn = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, tl.cdiv(K, BK)):
        x = tl.load(a, (rm, k * BK), shape=(BM, BK), mask=k * BK < KSTOP, other=0.0)
        acc += tl.dot(x, tl.load(b, (k * BK, rn), shape=(BK, BN)))
    tl.store(c, (rm, rn), acc.to(tl.float16))


@pytest.mark.parametrize("after", ["tile-stage", "tile-distribute"])
def test_a_scalar_mask_on_a_dot_operand_stays_a_select(after):
    """Found by a review: splitting this select's map crashed tile-stage (its test reads a scalar)."""
    a, b = RNG.standard_normal((64, 64)).astype(np.float16), RNG.standard_normal((64, 64)).astype(np.float16)
    c = np.full((64, 64), np.nan, np.float16)
    scalar_masked_k.interpret(a, b, c, 64, 32, grid=(1, 1), BM=64, BN=64, BK=16, after=after, arch="sm_90a")
    ref = a[:, :32].astype(np.float64) @ b[:32].astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3
