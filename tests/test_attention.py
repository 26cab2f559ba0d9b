"""tilec.attention on the CPU: the language kernel against a float64 reference in the interpreter (at
tile level and after tile-distribute), argument checks, and the compiled kernel without a GPU."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tilec
import tilec.lang as tl
from tilec.kernels import attention as A


def reference(q, k, v, causal=False, scale=None):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.transpose(0, 1, 3, 2) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    m = s.max(-1, keepdims=True)
    p = np.exp(s - m)
    lse = np.log(p.sum(-1)) + m[..., 0]
    return p @ v / p.sum(-1, keepdims=True), lse


def run(q, k, v, causal=False, scale=None, after=None, wgmma=False, bm=None, bn=None, heads=None, lazy=None):
    o = np.full_like(q, np.nan)
    lse = np.full(q.shape[:3], np.nan, np.float32)
    args, constexprs = A._arguments(q, k, v, o, lse, causal, scale, wgmma)
    if lazy is not None:  # another rescale threshold than config() takes
        constexprs["LAZY"] = lazy
    if heads is not None:  # another order of the blocks than config() takes
        constexprs["heads_per_group"] = heads
    grid = A.grid(q, wgmma)
    if bm is not None:  # other blocks than config() takes for this length
        constexprs["BM"], constexprs["BN"], grid = bm, bn or constexprs["BN"], (-(-q.shape[2] // bm), grid[1])
    kernel = A.path("sm_90a", q.shape[-1])[0] if wgmma else A.attention_fwd  # past D 64: O stored by TMA
    kernel.interpret(*args, grid=grid, after=after, num_warps=A.warps(constexprs), **constexprs)
    return o, lse


def agrees(q, k, v, causal=False, **run_options):
    """The kernel's O and log-sum-exp (``run``) against float64 (``reference``)."""
    want, want_lse = reference(q, k, v, causal, run_options.get("scale"))
    o, lse = run(q, k, v, causal, **run_options)
    assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
    assert np.abs(lse - want_lse).max() < 2e-3


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", [(1, 2, 2, 70, 70, 64), (2, 4, 1, 17, 100, 64), (1, 2, 2, 100, 33, 128)], ids=str)
def test_attention_in_the_interpreter(shape, causal):
    b, hq, hkv, sq, sk, d = shape
    rng = np.random.default_rng(sum(shape))
    q = (rng.standard_normal((b, hq, sq, d)) * 2).astype(np.float16)
    k, v = (rng.standard_normal((b, hkv, sk, d)).astype(np.float16) for _ in range(2))
    want, want_lse = reference(q, k, v, causal)
    o, lse = run(q, k, v, causal)
    assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
    assert np.abs(lse - want_lse).max() < 2e-3


@pytest.mark.parametrize("heads", [0, 2, 4])
def test_blocks_ordered_by_groups_of_heads(heads):
    """Blocks numbered through groups of ``heads`` (batch, head) pairs, longest query block first with
    a causal mask: 2 x 3 heads in groups of 4 leave a short last group; every row is computed once.
    A group of 0 (a caller's mistake) runs head by head."""
    rng = np.random.default_rng(heads)
    q = rng.standard_normal((2, 3, 150, 64)).astype(np.float16)
    k, v = (rng.standard_normal((2, 3, 150, 64)).astype(np.float16) for _ in range(2))
    for causal in (False, True):
        want, want_lse = reference(q, k, v, causal)
        o, lse = run(q, k, v, causal, heads=heads)
        assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
        assert np.abs(lse - want_lse).max() < 2e-3
    if heads == 2:  # the lane interpreter too: the run-time divisions as the lanes compute them
        q, k, v = q[:1, :, :40], k[:1, :, :50], v[:1, :, :50]
        want, _ = reference(q, k, v, True)
        o, _ = run(q, k, v, True, after="tile-distribute", heads=heads)
        assert np.abs(o - want).max() / np.abs(want).max() < 2e-3


def test_the_block_order_makes_no_kernel_of_its_own():
    """How many heads a group of the causal order holds depends on the keys' length; it is a run-time
    argument, so lengths share one compiled kernel."""
    q = np.zeros((1, 64, 300, 64), np.float16)
    calls = []
    for sk in (1000, 3000):  # 64 and 43 heads a group
        k = np.zeros((1, 64, sk, 64), np.float16)
        args, constexprs = A._arguments(q, k, k, q, None, True, None, True)
        calls.append((constexprs["heads_per_group"], A.attention_fwd_wgmma.specialize(*args, **constexprs)))
    (heads_a, spec_a), (heads_b, spec_b) = calls
    assert heads_a != heads_b and spec_a == spec_b


def test_attention_after_tile_distribute_and_a_scale():
    rng = np.random.default_rng(7)
    q = rng.standard_normal((1, 2, 40, 64)).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 50, 64)).astype(np.float16) for _ in range(2))
    want, _ = reference(q, k, v, True, scale=0.3)
    o, _ = run(q, k, v, True, scale=0.3, after="tile-distribute")
    assert np.abs(o - want).max() / np.abs(want).max() < 2e-3


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", [(1, 2, 1, 150, 150, 64), (1, 1, 1, 70, 200, 128)], ids=str)
@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_the_wgmma_kernel_in_the_interpreter(shape, causal, after):
    """sm_90's kernel (wgmma with P from registers, q @ k.T on a transposed B), at tile level and as
    the lane interpreter runs its warpgroup MMAs; 150 keys: a whole tile and a masked one."""
    b, hq, hkv, sq, sk, d = shape
    rng = np.random.default_rng(sum(shape) + 1)
    q = (rng.standard_normal((b, hq, sq, d)) * 2).astype(np.float16)
    k, v = (rng.standard_normal((b, hkv, sk, d)).astype(np.float16) for _ in range(2))
    want, want_lse = reference(q, k, v, causal)
    o, lse = run(q, k, v, causal, after=after, wgmma=True)
    assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
    assert np.abs(lse - want_lse).max() < 2e-3


@pytest.mark.parametrize("d,bn,causal", [(64, 128, True), (128, 112, False), (128, 96, True)],
                         ids=["d64-causal", "d128-full", "d128-causal"])
def test_long_query_blocks_of_the_wgmma_kernel(d, bn, causal):
    """From LONG_QUERIES query rows on, d <= 128 takes blocks of 192 rows (three consumer warpgroups
    and a producer; at d = 128 with K/V tiles of 112 rows, 96 with a causal mask). Interpreted lane
    by lane on a ragged short case (200 rows: a whole block and one of 8 rows; 150 keys: a ragged
    K/V tile; causal blocks whose rows end inside a K/V tile)."""
    long = A.LONG_QUERIES
    assert A.config(64, True, long[64])["BM"] == 192 and A.config(64, True, long[64] - 1)["BM"] == 64
    assert A.config(128, True, long[128]) == {"BM": 192, "BN": 112, "D": 128}
    assert A.config(128, True, long[128], causal=True) == {"BM": 192, "BN": 96, "D": 128}  # BN divides BM
    assert A.config(128, True, long[128] - 1)["BM"] == 128 and A.config(64, False, long[64])["BM"] == 64
    assert A.config(256, True, 1 << 20)["BM"] == 128
    rng = np.random.default_rng(19)
    q = (rng.standard_normal((1, 2, 200, d)) * 2).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 150, d)).astype(np.float16) for _ in range(2))
    want, want_lse = reference(q, k, v, causal)
    o, lse = run(q, k, v, causal, after="tile-distribute", wgmma=True, bm=192, bn=bn)
    assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
    assert np.abs(lse - want_lse).max() < 2e-3


def test_mma_warps_of_32_rows_up_to_d128():
    """Up to D = 128 a warp of the mma.sync kernel owns 32 query rows (two row tiles share each K and V
    fragment it loads): blocks of 64 rows (two warps) up to D = 64, of 128 rows (four warps) past it;
    past D = 128 16 rows a warp. Interpreted lane by lane with 32-row warps over a ragged block and a
    ragged K/V tile."""
    assert A.config(64) == {"BM": 64, "BN": 64, "D": 64, "WM": 32} and A.warps(A.config(64)) == 2
    assert A.config(128) == {"BM": 128, "BN": 32, "D": 128, "WM": 32, "LAZY": A.LAZY_RESCALE}
    assert A.warps(A.config(128)) == 4
    assert "WM" not in A.config(160) and A.warps(A.config(160)) == 4
    assert A.warps(A.config(128, True, 1 << 20)) == 12  # the wgmma kernel: 16 rows a warp
    rng = np.random.default_rng(32)
    q = rng.standard_normal((1, 1, 90, 32)).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 100, 32)).astype(np.float16) for _ in range(2))
    agrees(q, k, v, after="tile-distribute")


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_a_warps_q_read_from_shared_memory(causal):
    """A 32-row warp past D = 64 reads its q from shared memory each K/V tile instead of holding it in
    registers (``Q_IN_REGISTERS_MAX_D``; D = 96 here): a ragged block of 128 rows
    over two heads and a ragged last K/V tile, after tile-distribute, lane by lane, against float64."""
    assert A.config(96)["WM"] == 32 and 96 > A.Q_IN_REGISTERS_MAX_D
    rng = np.random.default_rng(96 + causal)
    q = (rng.standard_normal((1, 2, 70, 96)) * 2).astype(np.float16)
    k, v = (rng.standard_normal((1, 2, 45, 96)).astype(np.float16) for _ in range(2))
    agrees(q, k, v, causal, after="tile-distribute")


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_more_heads_than_a_grid_column_holds(causal, monkeypatch):
    """Past 65535 (batch, head) pairs (CUDA's limit on grid y) the grid is one row of query blocks x
    pairs, numbered in the same order: A.grid for 2048 x 64 heads, and a small case with the limit
    lowered to 1, interpreted against float64 (GQA, two query blocks a head, causal and not)."""
    q = np.zeros((2048, 64, 100, 64), np.float16)
    assert A.grid(q) == (2 * 2048 * 64, 1) and A.grid(q[:1]) == (2, 64)
    monkeypatch.setattr(A, "GRID_Y_MAX", 1)
    rng = np.random.default_rng(65535)
    q = rng.standard_normal((2, 2, 70, 32)).astype(np.float16)
    k, v = (rng.standard_normal((2, 1, 50, 32)).astype(np.float16) for _ in range(2))
    assert A.grid(q) == (2 * 4, 1)
    agrees(q, k, v, causal)


def test_the_warps_must_cover_the_block():
    """A launch whose warps do not own the block's rows exactly (num_warps * WM != BM) is an error at
    trace time, not rows computed twice or never; warps() refuses a WM that does not divide BM."""
    q = np.zeros((1, 2, 100, 64), np.float16)
    args, constexprs = A._arguments(q, q, q, q, None, False, None, False)
    assert constexprs["WM"] == 32
    with pytest.raises(tl.LangError, match="4 warps of 32 query rows do not cover a block of 64"):
        A.attention_fwd.compile(*args, arch="sm_80", num_warps=4, **constexprs)
    with pytest.raises(ValueError, match="BM = 80 query rows in warps of WM = 32"):
        A.warps({"BM": 80, "WM": 32})


@pytest.mark.parametrize("wgmma,d", [(False, 64), (True, 128)], ids=["mma-d64", "wgmma-d128"])
def test_every_pass_keeps_the_meaning(wgmma, d):
    """The interpreter after each pass of the kernel's pipeline before tile-distribute (tile level;
    lane by lane after tile-distribute is checked above) on a ragged causal case: each pass's output
    computes what the traced kernel does (the wgmma kernel at D 128 also after tile-bulk-store)."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, 2, 40, d)).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 50, d)).astype(np.float16) for _ in range(2))
    want, want_lse = reference(q, k, v, True)
    kernel = A.path("sm_90a", d)[0] if wgmma else A.attention_fwd
    passes = [p for p in kernel._pipeline(None, None, None).split(",") if p not in ("tile-distribute", "tile-to-llvm")]
    assert len(passes) >= (4 if wgmma else 3)
    for after in passes:
        o, lse = run(q, k, v, True, after=after.split("{")[0], wgmma=wgmma)
        assert np.abs(o - want).max() / np.abs(want).max() < 2e-3, after
        assert np.abs(lse - want_lse).max() < 2e-3, after


@pytest.mark.parametrize("scale", [-0.4, 0.0, -0.0], ids=str)
def test_a_negative_or_zero_scale(scale):
    """The running extreme is the minimum of the raw scores when the scale is negative; a zero scale
    averages v (masked keys must not make -inf * 0 = NaN), causal or not."""
    rng = np.random.default_rng(11)
    q = rng.standard_normal((1, 1, 40, 64)).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 90, 64)).astype(np.float16) for _ in range(2))
    for wgmma in (False, True):
        for causal in (False, True):
            want, want_lse = reference(q, k, v, causal, scale=scale)
            o, lse = run(q, k, v, causal, scale=scale, wgmma=wgmma)
            assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
            assert np.abs(lse - want_lse).max() < 2e-3


def test_the_kernel_compiles_without_a_gpu():
    q = np.zeros((2, 8, 1000, 128), np.float16)
    kv = np.zeros((2, 2, 1000, 128), np.float16)
    k = tilec.attention_kernel(q, kv, kv, causal=True, arch="sm_80")
    ptx = k.asm["ptx"]
    assert "mma.sync" in ptx and "cp.async" in ptx and "ex2.approx" in ptx
    assert "tile.subview" in k.asm["tile"]
    # sm_90: the warpgroup kernel, for sm_90a; P @ V takes A from registers
    k = tilec.attention_kernel(q, kv, kv, causal=True, arch="sm_90")
    ptx = k.asm["ptx"]
    assert ".target sm_90a" in ptx and "cp.async" in ptx and "mma.sync" not in ptx
    assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16 \{[^}]*\}, \{%r", ptx)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_the_mma_kernel_of_32_row_warps_fits_its_registers(causal):
    """D = 128 on mma.sync: 32-row warps with O's 128 accumulators a thread; q read from shared memory,
    the K steps of one K/V tile sharing their ldmatrix addresses. ptxas (sm_80 and sm_90, what an H100
    or H200 runs) spills at most a few words: 20-36 bytes when this was written."""
    from tilec.codegen.ptxas import find_ptxas, kernel_resources

    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    q = np.zeros((2, 8, 1000, 128), np.float16)
    k = tilec.attention_kernel(q, q, q, causal=causal, arch="sm_80")
    for arch in ("sm_80", "sm_90"):
        used = kernel_resources(k.asm["ptx"], arch)[k.name]
        assert used.spill_stores <= 64 and used.spill_loads <= 96, (arch, used)


@pytest.mark.parametrize("d", [16, 48, 96, 144, 192, 240, 256])
def test_head_dimensions_past_the_tuned_ones(d):
    """Other multiples of 16: sm_90's kernel to 256 (descriptor layouts of 32/64/128-byte rows), the
    mma.sync kernel to 192 (in the interpreter after tile-distribute for one of each), and a clear
    error past that."""
    q = np.zeros((1, 2, 130, d), np.float16)
    ptx = tilec.attention_kernel(q, q, q, causal=True, arch="sm_90").asm["ptx"]
    assert ptx.count("wgmma.mma_async") > 0
    # past D 64 each warp stores its rows of O through shared memory and bulk tensor stores up to D 224;
    # at 240 and 256 whole-row buffers do not fit beside q's tile and the stages: at 256 tile-bulk-store
    # stores the rows in column chunks of one 128-byte box through a ring of two, at 240 (boxes of 32
    # bytes, partial lines) the stores stay direct
    assert (".global.shared::cta.tile.bulk_group" in ptx) == (A.TMA_STORE_PAST_D < d and d != 240)
    assert ("cp.async.bulk.wait_group.read 1" in ptx) == (d == 256)
    if d <= A.MMA_MAX_HEAD_DIM:
        assert "mma.sync" in tilec.attention_kernel(q, q, q, arch="sm_80").asm["ptx"]
    else:
        with pytest.raises(ValueError, match=f"head dimension {d} on the mma.sync kernel"):
            tilec.attention_kernel(q, q, q, arch="sm_80")
    if d in (48, 192):
        rng = np.random.default_rng(d)
        q = rng.standard_normal((1, 1, 70, d)).astype(np.float16)
        k, v = (rng.standard_normal((1, 1, 90, d)).astype(np.float16) for _ in range(2))
        want, _ = reference(q, k, v, True)
        for wgmma in (False, True):
            o, _ = run(q, k, v, True, after="tile-distribute", wgmma=wgmma)
            assert np.abs(o - want).max() / np.abs(want).max() < 2e-3


def test_bad_arguments_name_what_is_wrong():
    q = np.zeros((1, 4, 16, 64), np.float16)
    with pytest.raises(ValueError, match="k and v must have one shape"):
        tilec.attention_kernel(q, q, q[:, :2])
    with pytest.raises(ValueError, match="multiple of k's"):
        tilec.attention_kernel(q, q[:, :3], q[:, :3])
    with pytest.raises(TypeError, match="expected float16 or bfloat16"):
        tilec.attention_kernel(q.astype(np.float32), q, q)
    with pytest.raises(ValueError, match="must be a 4-D array"):
        tilec.attention_kernel(q[0], q, q)
    with pytest.raises(ValueError, match="head dimension 40"):
        z = np.zeros((1, 1, 16, 40), np.float16)
        tilec.attention_kernel(z, z, z)
    for scale in ("0.1", True):
        with pytest.raises(TypeError, match=r"scale must be a finite real number or None \(1 / sqrt\(D\)\), got"):
            tilec.attention_kernel(q, q, q, scale=scale, arch="sm_80")
    for scale in (float("nan"), float("inf"), -1e39, 10**400):  # f32's scale * log2(e) would be inf
        with pytest.raises(ValueError, match=r"scale=.* must be finite and below 1.7e\+38 in magnitude"):
            tilec.attention_kernel(q, q, q, scale=scale, arch="sm_80")
    for flag in ("causal", "return_lse"):
        with pytest.raises(TypeError, match=rf"{flag} must be a bool, got 1"):
            tilec.attention_kernel(q, q, q, arch="sm_80", **{flag: 1})
    with pytest.raises(ValueError, match=r"unsupported GPU architecture ''"):
        tilec.attention_kernel(q, q, q, arch="")
    assert tilec.attention_kernel(q, q, q, scale=np.float32(0.5), arch="sm_80") is not None


def test_strided_numpy_views_in_the_interpreter():
    """(B, S, H, D)-style strided inputs and output: interpret() runs the views themselves, their strides
    the kernel's, as the launcher copies host views with their strides."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, 2, 64, 70)).astype(np.float16).transpose(0, 1, 3, 2)
    k = rng.standard_normal((1, 1, 90, 64)).astype(np.float16)
    v = rng.standard_normal((1, 1, 64, 90)).astype(np.float16).transpose(0, 1, 3, 2)
    for wgmma in (False, True):
        want, _ = reference(q, k, v, True)
        o = np.full((1, 2, 64, 70), np.nan, np.float16).transpose(0, 1, 3, 2)
        args, constexprs = A._arguments(q, k, v, o, None, True, None, wgmma)
        kernel = A.attention_fwd_wgmma if wgmma else A.attention_fwd
        kernel.interpret(*args, grid=A.grid(q, wgmma), after="tile-distribute", num_warps=A.warps(constexprs),
                         **constexprs)
        assert np.abs(o - want).max() / np.abs(want).max() < 2e-3


def test_heads_a_group_stay_within_the_pairs():
    """The group holds at most the (batch, head) pairs there are (the kernel multiplies it by the query
    blocks in 32 bits), at least one, and one without a mask."""
    assert A.order_heads(1, 16, 1, True, pairs=6) == 6  # a few short keys: every pair in one group
    assert A.order_heads(4096, 128, 1, True, pairs=64) == 16  # 32 MB of K/V: 16 heads of 2 MB
    assert A.order_heads(1 << 24, 256, 1, True, pairs=64) == 1
    assert A.order_heads(4096, 128, 1, False, pairs=64) == 1


@pytest.mark.parametrize("wgmma", [False, True], ids=["mma", "wgmma"])
@pytest.mark.parametrize("scale, spread", [(None, 30.0), (-0.3, 1.0), (0.0, 1.0)], ids=["x30", "negative", "zero"])
def test_the_lazy_rescale(wgmma, scale, spread):
    """O rescaled only when a row's extreme moves by more than 2**LAZY (FlashAttention-4's rule): the
    same O and log-sum-exp, lane by lane after tile-distribute, on scores x30 (the extreme moves
    often), a negative scale (the running minimum) and a zero one; causal, GQA, ragged keys. A
    threshold of 0.5 takes the rescale branch on most tiles, 8 on few."""
    rng = np.random.default_rng(30)
    q = (rng.standard_normal((1, 2, 70, 64)) * spread).astype(np.float16)
    k, v = (rng.standard_normal((1, 1, 150, 64)).astype(np.float16) for _ in range(2))
    want, want_lse = reference(q, k, v, True, scale)
    for lazy in (0.5, 8.0):
        o, lse = run(q, k, v, True, scale=scale, wgmma=wgmma, lazy=lazy, after="tile-distribute")
        assert np.abs(o - want).max() / np.abs(want).max() < 2e-3
        assert np.abs(lse - want_lse).max() < 2e-3 * max(1.0, np.abs(want_lse).max())


def test_the_lazy_rescale_is_one_branch_a_warp():
    """The mma.sync kernel at D = 128 (32-row warps) rescales lazily: an scf.if on the warp's maximum
    of how far its rows' extremes moved, holding O's multiplies; D = 64 and the wgmma kernel do not
    (measured slower: :data:`tilec.kernels.attention.LAZY_RESCALE`)."""
    q = np.zeros((1, 2, 256, 128), np.float16)
    assert A.config(128)["LAZY"] == A.LAZY_RESCALE and "LAZY" not in A.config(64) and "LAZY" not in A.config(128, True)
    args, constexprs = A._arguments(q, q, q, q, None, False, None)
    ir = str(A.attention_fwd.ir(*args, num_warps=A.warps(constexprs), **constexprs))
    assert ir.count("scf.if") == 2  # one a K/V loop
