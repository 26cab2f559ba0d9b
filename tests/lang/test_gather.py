"""``tl.gather`` (``tilec.lang.take``: ``tile.take``), ``tl.topk`` and ``tl.bitonic_merge``
(``tilec.lang.sorting``), and Triton's other names the language now has (``tilec.lang.compat``).

Each kernel runs on the tile interpreter and, after tile-distribute, on the lane interpreter, against numpy
on fresh random values with NaN-poisoned outputs; examples/lang/routing.py's kernels (NF4 weights through
their codebook, a mixture-of-experts router) are among them, and every kernel is compiled and assembled for
sm_80 and sm_90a.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng()
STAGES = (None, "tile-distribute")

_spec = importlib.util.spec_from_file_location(
    "lang_example_routing", Path(__file__).resolve().parents[2] / "examples" / "lang" / "routing.py")
routing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(routing)


@tl.kernel(num_warps=4)
def gathers(x, i_rows, i_cols, o_rows, o_cols, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    """Along axis 1 (K picks a row, as Triton's pointers), along axis 0 (a method), and a vector's."""
    t = tl.load(x + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    ir = tl.load(i_rows + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    tl.store(o_rows + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :], tl.gather(t, ir, axis=1))
    ic = tl.load(i_cols, (0, 0), shape=(K, N))
    tl.store(o_cols, (0, 0), t.gather(ic, 0) * 2.0)


def gathers_reference(x, ir, ic):
    return np.take_along_axis(x, ir.astype(np.int64), 1), np.take_along_axis(x, ic.astype(np.int64), 0) * 2


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("m, n, k", [(16, 64, 8), (32, 32, 64), (8, 128, 128)])
def test_gather_along_either_axis(after, m, n, k):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    ir = RNG.integers(0, n, (m, k)).astype(np.int32)
    ic = RNG.integers(0, m, (k, n)).astype(np.int16)  # a narrow index: widened
    outs = [np.full((m, k), np.nan, np.float32), np.full((k, n), np.nan, np.float32)]
    gathers.interpret(x, ir, ic, *outs, M=m, N=n, K=k, grid=(1,), after=after)
    for got, want in zip(outs, gathers_reference(x, ir, ic)):
        np.testing.assert_array_equal(got, want)


@tl.kernel(num_warps=2)
def gather_types(x, i, o, N: tl.constexpr):
    """A vector table picked by unsigned bytes, outside the table too (which reads 0)."""
    table = tl.load(x + tl.arange(0, N))
    picks = tl.load(i + tl.arange(0, 4 * N))
    tl.store(o + tl.arange(0, 4 * N), tl.gather(table, picks, 0))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.uint16, "e4m3"])
def test_gather_types(after, dtype):
    n = 64
    if dtype == "e4m3":
        import ml_dtypes

        x = RNG.standard_normal(n).astype(ml_dtypes.float8_e4m3fn)
    else:
        x = (RNG.standard_normal(n) * 50).astype(dtype)
    picks = RNG.integers(0, 80, 4 * n).astype(np.uint8)  # 64..79: outside
    out = np.zeros(4 * n, x.dtype)
    out.view(np.uint8)[:] = 0x7F  # a poison byte pattern (NaN for the floats)
    gather_types.interpret(x, picks, out, N=n, grid=(1,), after=after)
    want = np.where(picks < n, x[np.minimum(picks, n - 1)], np.zeros((), x.dtype))
    np.testing.assert_array_equal(out.view(np.uint8), want.astype(x.dtype).view(np.uint8))


@tl.kernel(num_warps=4)
def topks(x, o_large, o_small, o_vec, o_merge, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(M, N))
    tl.store(o_large, (0, 0), tl.topk(t, K))
    tl.store(o_small, (0, 0), t.topk(K, descending=False))
    row = tl.load(x, (0, 0), shape=(1, N)).reshape(N)
    tl.store(o_vec + tl.arange(0, K), tl.topk(row, K))
    rising_then_falling = tl.cat(tl.sort(t), tl.sort(t * 0.5, descending=True), dim=1)
    tl.store(o_merge, (0, 0), tl.bitonic_merge(rising_then_falling, descending=True))


def topks_reference(x: np.ndarray, k: int) -> list[np.ndarray]:
    both = np.concatenate([x, x * 0.5], 1)
    return [-np.sort(-x, 1)[:, :k], np.sort(x, 1)[:, :k], -np.sort(-x[0])[:k], -np.sort(-both, 1)]


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("m, n, k", [(16, 64, 8), (8, 32, 1), (4, 128, 128), (8, 256, 32), (32, 16, 2)])
def test_topk_and_bitonic_merge(after, m, n, k):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    outs = [np.full(d, np.nan, np.float32) for d in ((m, k), (m, k), (k,), (m, 2 * n))]
    topks.interpret(x, *outs, M=m, N=n, K=k, grid=(1,), after=after)
    for got, want in zip(outs, topks_reference(x, k)):
        np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("after", STAGES)
def test_nf4_dequant(after):
    n_bytes, group = 1000, 64
    packed = RNG.integers(0, 256, n_bytes).astype(np.uint8)
    absmax = RNG.uniform(0.5, 2, -(-2 * n_bytes // group)).astype(np.float32)
    out = np.full(2 * n_bytes, np.nan, np.float32)
    routing.nf4_dequant.interpret(packed, absmax, routing.NF4, out, n_bytes, BLOCK=256, GROUP=group,
                                  grid=(4,), after=after)
    np.testing.assert_array_equal(out, routing.nf4_reference(packed, absmax, group))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("e, k", [(64, 8), (8, 2), (128, 4)])
def test_topk_route(after, e, k):
    tokens = 100
    logits = RNG.standard_normal((tokens, e)).astype(np.float32) * 3
    w, ids = np.full((tokens, k), np.nan, np.float32), np.full((tokens, k), -1, np.int32)
    routing.topk_route.interpret(logits, w, ids, tokens, E=e, K=k, BT=16, grid=(-(-tokens // 16),), after=after)
    want_w, want_ids = routing.route_reference(logits, k)
    np.testing.assert_array_equal(ids, want_ids)
    # the keys drop log2(e) low bits: a probability one ulp off the reference's may lose e ulps more
    np.testing.assert_allclose(w, want_w, rtol=2 * e * 2.0**-23 + 1e-6, atol=1e-7)


@tl.kernel(num_warps=4)
def triton_names(x, i, o_or, o_sq, o_b, o_u, o_n, o_bc, M: tl.constexpr, N: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(M, N))
    bits = tl.load(i, (0, 0), shape=(M, N))
    tl.store(o_or + tl.arange(0, M), tl.reduce_or(bits, axis=1))
    col = tl.load(x, (0, 0), shape=(M, 1))
    tl.store(o_sq + tl.arange(0, M), tl.fdiv(tl.squeeze(col, 1), 2.0) + tl.mul(tl.add(1.0, 2.0), tl.sub(3.0, 2.0)))
    row = tl.arange(0, N).to(tl.float32)
    a, b = tl.broadcast(t, row)
    tl.store(o_b, (0, 0), a + tl.unsqueeze(row, 0) * 2.0 - b)
    u = tl.uint_to_uniform_float(bits)
    tl.store(o_u, (0, 0), u)
    n0, n1 = tl.pair_uniform_to_normal(u, tl.uint_to_uniform_float(bits * 7 + 1))
    tl.store(o_n, (0, 0), n0 * n0 + n1 * n1)
    s, v = tl.broadcast(2.0, row)
    tl.store(o_bc + tl.arange(0, N), s + v)


@pytest.mark.parametrize("after", STAGES)
def test_triton_names(after):
    m, n = 16, 32
    x = RNG.standard_normal((m, n)).astype(np.float32)
    bits = RNG.integers(-2**31, 2**31, (m, n)).astype(np.int32)
    outs = [np.full(m, -1, np.int32), np.full(m, np.nan, np.float32)]
    outs += [np.full((m, n), np.nan, np.float32) for _ in range(3)] + [np.full(n, np.nan, np.float32)]
    triton_names.interpret(x, bits, *outs, M=m, N=n, grid=(1,), after=after)
    o_or, o_sq, o_b, o_u, o_n, o_bc = outs
    np.testing.assert_array_equal(o_or, np.bitwise_or.reduce(bits, axis=1))
    np.testing.assert_array_equal(o_sq, x[:, 0] / 2 + 3)
    r = np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(o_b, (x + r * np.float32(2)) - r)  # in f32, in the kernel's order
    u = np.where(bits < 0, -(bits.astype(np.int64)) - 1, bits).astype(np.float32) * np.float32(4.6566127342e-10)
    np.testing.assert_allclose(o_u, u, rtol=1e-6)
    assert ((o_u >= 0) & (o_u < 1)).all()
    np.testing.assert_allclose(o_n, -2 * np.log(np.maximum(u, 1e-7)), rtol=2e-5, atol=1e-5)  # r^2 (cos^2 + sin^2)
    np.testing.assert_array_equal(o_bc, 2.0 + np.arange(n, dtype=np.float32))


@pytest.mark.parametrize("source, message", [
    ("tl.gather(t, tl.load(i, (0, 0), shape=(8, 8)), 1)", "must have the extents of"),
    ("tl.gather(t, t, 1)", "holds integers"),
    ("tl.gather(t, tl.arange(0, 16), 0)", "a tile of integers like its source"),
    ("tl.gather(t, tl.load(i, (0, 0), shape=(16, 8)), 2)", "axis is one of"),
    ("tl.topk(t, 3)", "power of two"),
    ("tl.topk(t, 64)", "no larger than the extent, 32"),
    ("tl.topk(t, 4, dim=0)", "works along the last axis"),
    ("tl.reduce_or(t, 1)", "takes integers"),
    ("tl.squeeze(t, 0)", "axis of extent 1"),
    ("tl.map_elementwise(lambda a: a, t, pack=2)", "pack=1"),
])
def test_clear_errors(source, message):
    namespace: dict = {"tl": tl}
    exec(f"""
@tl.kernel
def bad(x, i, o):
    t = tl.load(x, (0, 0), shape=(16, 32))
    tl.store(o, (0, 0), {source})
""", namespace)
    x = np.zeros((16, 32), np.float32)
    with pytest.raises(tl.LangError, match=message):
        namespace["bad"].compile(x, np.zeros((16, 32), np.int32), x, arch="sm_80")


def test_annotations_and_classes():
    """``tl.tensor``, ``tl.const`` and ``tl.dtype`` as Triton's kernels write them in signatures."""
    @tl.kernel
    def annotated(x_ptr: tl.const, o_ptr: tl.tensor, N: tl.constexpr):
        v = tl.load(x_ptr + tl.arange(0, N))
        assert isinstance(v, tl.tensor) and isinstance(v.dtype, tl.dtype)
        one = tl.constexpr(1.0)  # Triton's mark of a value known when the kernel is built: the value
        tl.store(o_ptr + tl.arange(0, N), v + one)

    x = RNG.standard_normal(32).astype(np.float32)
    o = np.full(32, np.nan, np.float32)
    annotated.interpret(x, o, N=32, grid=(1,))
    np.testing.assert_array_equal(o, x + 1)


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_the_kernels_compile(arch):
    m, n, k = 16, 64, 8
    x = np.zeros((m, n), np.float32)
    gathers.compile(x, np.zeros((m, k), np.int32), np.zeros((k, n), np.int16), np.zeros((m, k), np.float32),
                    np.zeros((k, n), np.float32), M=m, N=n, K=k, arch=arch)
    gather_types.compile(np.zeros(64, np.float16), np.zeros(256, np.uint8), np.zeros(256, np.float16), N=64, arch=arch)
    topks.compile(x, *(np.zeros(d, np.float32) for d in ((m, k), (m, k), (k,), (m, 2 * n))), M=m, N=n, K=k, arch=arch)
    routing.nf4_dequant.compile(np.zeros(1000, np.uint8), np.zeros(32, np.float32), routing.NF4,
                                np.zeros(2000, np.float16), 1000, BLOCK=256, GROUP=64, arch=arch)
    routing.topk_route.compile(np.zeros((100, 64), np.float32), np.zeros((100, 8), np.float32),
                               np.zeros((100, 8), np.int32), 100, E=64, K=8, BT=16, arch=arch)


@tl.kernel(num_warps=4)
def inline_asm(x, o_round, o_bits, o_sum, N: tl.constexpr):
    """Triton's ``tl.inline_asm_elementwise``: one output, and two (a tuple of dtypes) with a Python number."""
    v = tl.load(x + tl.arange(0, N))
    r = tl.inline_asm_elementwise("cvt.rni.f32.f32 $0, $1;", "=f,f", [v], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(o_round + tl.arange(0, N), r)
    bits, total = tl.inline_asm_elementwise("{ mov.b32 $0, $2; add.f32 $1, $2, $3; }", "=r,=f,f,f", [v, 2.5],
                                            dtype=(tl.int32, tl.float32), is_pure=True, pack=1)
    tl.store(o_bits + tl.arange(0, N), bits)
    tl.store(o_sum + tl.arange(0, N), total)


def inline_asm_outputs(n: int) -> list[np.ndarray]:
    return [np.full(n, np.nan, np.float32), np.full(n, -1, np.int32), np.full(n, np.nan, np.float32)]


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_inline_asm_is_in_the_ptx(arch):
    ptx = inline_asm.compile(np.zeros(256, np.float32), *inline_asm_outputs(256), N=256, arch=arch).asm["ptx"]
    assert ptx.count("cvt.rni.f32.f32") == 2  # 256 elements over 128 threads
    assert ptx.count("add.f32") >= 2


def test_inline_asm_is_not_interpreted():
    with pytest.raises(tl.LangError, match="CPU interpreters cannot"):
        inline_asm.interpret(np.zeros(256, np.float32), *inline_asm_outputs(256), N=256, grid=(1,))


@pytest.mark.parametrize("source, message", [
    ('tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [t], dtype=tl.int32, is_pure=True, pack=4)', "pack=1"),
    ('tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r,r", [t], dtype=tl.int32, is_pure=True, pack=1)',
     "name 1 outputs and 2 inputs, but dtype gives 1 and args 1"),
    ('tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,=r,r", [t], dtype=(tl.int32, tl.int32), is_pure=False, pack=1)',
     "must be pure"),
])
def test_inline_asm_errors(source, message):
    test_clear_errors(source, message)


@tl.kernel(num_warps=4)
def tensor_methods(x, o_math, o_flip, o_or, o_last, o_and, M: tl.constexpr, N: tl.constexpr):
    """Triton's tensor methods, tl.flip along the first axis, tl.argmax's tie_break_left=False."""
    t = tl.load(x, (0, 0), shape=(M, N))
    tl.store(o_math, (0, 0), t.exp().sqrt() + t.abs().cast(tl.float32) + t.sigmoid().log2().exp2())
    tl.store(o_flip, (0, 0), tl.flip(t, 0))
    m = t > 0
    tl.store(o_or + tl.arange(0, M), m.to(tl.int32).reduce_or(1) + t.to(tl.int32).xor_sum(1) * 0)
    tl.store(o_last + tl.arange(0, M), tl.argmax(tl.floor(t * 2.0), axis=1, tie_break_left=False))
    tl.store(o_and, (0, 0), m.logical_and(t < 1.0).to(tl.float32) + m.logical_or(t < -1.0).to(tl.float32))


@pytest.mark.parametrize("after", STAGES)
def test_tensor_methods(after):
    m, n = 8, 32
    x = RNG.standard_normal((m, n)).astype(np.float32)
    outs = [np.full((m, n), np.nan, np.float32), np.full((m, n), np.nan, np.float32), np.full(m, -7, np.int32),
            np.full(m, -7, np.int32), np.full((m, n), np.nan, np.float32)]
    tensor_methods.interpret(x, *outs, M=m, N=n, grid=(1,), after=after)
    sig = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(outs[0], np.sqrt(np.exp(x)) + np.abs(x) + sig, rtol=2e-6)
    np.testing.assert_array_equal(outs[1], x[::-1])
    np.testing.assert_array_equal(outs[2], (x > 0).any(1).astype(np.int32))
    np.testing.assert_array_equal(outs[3], (n - 1) - np.argmax(np.floor(x * 2)[:, ::-1], 1))
    np.testing.assert_array_equal(outs[4], ((x > 0) & (x < 1)).astype(np.float32) + ((x > 0) | (x < -1)).astype(np.float32))


def test_the_nf4_decoder_moves_nothing_through_shared_memory():
    """Every warp holds the 16-value codebook whole, so each pick is one shuffle (``take_shuffles``), and
    ``tl.interleave`` of two vectors is a ``tile.join`` of vectors whose result holds both parts' registers
    side by side: no shared memory, no barrier, and eight f16 weights a thread stored as one vector."""
    ptx = routing.nf4_dequant.compile(np.zeros(1000, np.uint8), np.zeros(32, np.float32), routing.NF4,
                                      np.zeros(2000, np.float16), 1000, BLOCK=1024, GROUP=64, arch="sm_80").asm["ptx"]
    assert "bar.sync" not in ptx and "ld.shared" not in ptx
    assert ptx.count("shfl.sync.idx") == 16  # 8 bytes a thread, two nibbles each
    assert "st.global.v4.b32" in ptx


@tl.kernel(num_warps=1)
def nan_sorts(x, o_sort, o_desc, o_top, N: tl.constexpr):
    v = tl.load(x + tl.arange(0, N))
    tl.store(o_sort + tl.arange(0, N), tl.sort(v))
    tl.store(o_desc + tl.arange(0, N), tl.sort(v, descending=True))
    tl.store(o_top + tl.arange(0, 2), tl.topk(v, 2))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float64"])
def test_floats_sort_as_numpy_orders_them(after, dtype):
    """NaN sorts last (first when descending, and in a top-k), -inf first, as numpy and torch order them;
    every other value in order (a NaN would stop a network of float compares)."""
    import ml_dtypes

    dt = getattr(ml_dtypes, dtype, None) or np.dtype(dtype)
    low = -8 if dtype == "float8_e4m3fn" else -np.inf  # e4m3fn has no infinity
    x = np.array([3, 1, np.nan, 7, 5, -0.0, 0.0, -2, low, 8, 0.5, -np.nan, 2, 4, 6, -1], dt)
    outs = [np.zeros(16, dt), np.zeros(16, dt), np.zeros(2, dt)]
    nan_sorts.interpret(x, *outs, N=16, grid=(1,), after=after)
    want = np.sort(x.astype(np.float64))
    np.testing.assert_array_equal(outs[0].astype(np.float64), want)
    np.testing.assert_array_equal(outs[1].astype(np.float64), want[::-1])
    assert np.isnan(outs[2].astype(np.float64)).all()


def test_a_move_in_a_turn_is_an_error():
    """Inside ``tl.turns`` only one group of warps runs: a move through shared memory (a block barrier) there
    would wait for the others forever (a hang on the GPU): a located error instead."""
    from tilec.api import CompilationError

    @tl.kernel(num_warps=8)
    def gather_in_turn(x, i, o):
        r = tl.warp_id() * 16
        t = tl.load(x, (r, 0), shape=(16, 16))
        idx = tl.load(i, (r, 0), shape=(16, 16))
        with tl.turns(2):
            t = tl.gather(t, idx, 1)
        tl.store(o, (r, 0), t)

    x = np.zeros((128, 16), np.float32)
    with pytest.raises(CompilationError, match=r"'tile.take': it synchronises the whole block .* inside the turn"):
        gather_in_turn.compile(x, np.zeros((128, 16), np.int32), x, arch="sm_90a")


@tl.kernel(num_warps=4)
def group_scales(x, s, o, n, shift, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    """A group's scale an element (``offs // GROUP``: equal on aligned runs of GROUP), and the same read
    through offsets that may be negative (``(offs - shift) // GROUP`` rounds to zero: no runs assumed)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    v = tl.load(x + offs, mask=inside, other=0.0)
    w = tl.load(s + offs // GROUP, mask=inside, other=0.0) + tl.load(s + (offs - shift) // GROUP, mask=inside, other=0.0)
    tl.store(o + offs, v * w, mask=inside)


@pytest.mark.parametrize("after", STAGES)
def test_group_scales_load_once_a_run(after):
    n, block, group, shift = 1000, 256, 32, 100
    x = RNG.standard_normal(n).astype(np.float32)
    s = RNG.standard_normal(-(-n // group) + 1).astype(np.float32)
    o = np.full(n, np.nan, np.float32)
    group_scales.interpret(x, s, o, n, shift, BLOCK=block, GROUP=group, grid=(-(-n // block),), after=after)
    offs = np.arange(n)
    shifted = np.fix((offs - shift) / group).astype(np.int64)  # C's quotient: -99 // 32 is 0
    want = x * (s[offs // group] + np.where(shifted >= 0, s[np.maximum(shifted, 0)], 0))
    np.testing.assert_array_equal(o, want.astype(np.float32))


def test_a_group_scale_is_loaded_once_a_run():
    """tile-distribute loads the scale once for each thread's run of equal offsets (four runs of 4 consecutive
    elements a thread here: 4 loads, not 16); the shifted offsets, whose sign is not known, keep one load
    an element, and x's 16-byte runs their element-by-element fallback at the edge (16)."""
    ptx = group_scales.compile(np.zeros(1000, np.float32), np.zeros(40, np.float32), np.zeros(1000, np.float32), 1000,
                               100, BLOCK=2048, GROUP=64, arch="sm_80").asm["ptx"]
    scalar_loads = [line for line in ptx.splitlines() if "ld.global" in line and ".b32 " in line and ".v" not in line]
    assert len(scalar_loads) == 16 + 4 + 16


def test_volatile_pointer_loads_name_the_atomic():
    @tl.kernel
    def spin(x_ptr, o_ptr):
        tl.store(o_ptr, tl.load(x_ptr + 3, volatile=True))

    x = np.zeros(8, np.float32)
    with pytest.raises(tl.LangError, match=r"volatile=True\) is not in tilec.lang: .*tl.atomic_add\(x \+ offsets, 0\)"):
        spin.compile(x, x, arch="sm_80")


@pytest.mark.parametrize("after", STAGES)
def test_libdevice_llrint(after):
    """bitsandbytes' row quantizer rounds with ``libdevice.llrint`` (to nearest even, as an int64)."""
    @tl.kernel
    def rounded(x, o, N: tl.constexpr):
        v = tl.load(x + tl.arange(0, N))
        tl.store(o + tl.arange(0, N), tl.extra.cuda.libdevice.llrint(127.0 * v))

    x = (RNG.standard_normal(64) * 0.5).astype(np.float32)
    o = np.zeros(64, np.int64)
    rounded.interpret(x, o, N=64, grid=(1,), after=after)
    np.testing.assert_array_equal(o, np.rint(np.float32(127.0) * x).astype(np.int64))
