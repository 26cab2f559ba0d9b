"""tl.rand / tl.randint4x / tl.randn (Philox4x32-10, Triton's counter-based generator) on both
interpreters against a numpy Philox written here from Random123's definition, and the low-memory
dropout of Triton's tutorial: the mask is a function of (seed, offset) alone."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

STAGES = (None, "tile-distribute")
M32 = np.uint64(0xFFFFFFFF)


def philox_reference(seed: int, offsets: np.ndarray, rounds: int = 10, wide: bool = False) -> list[np.ndarray]:
    """Random123's Philox4x32 on counter (offset, 0, 0, 0) and key (seed's low word, high word), in uint64;
    ``wide``: a 64-bit offset's high word is the counter's second (Triton's rule for int64 offsets)."""
    bits = offsets.astype(np.int64).astype(np.uint64)
    high = (bits >> np.uint64(32)) if wide else np.zeros(offsets.shape, np.uint64)
    c = [bits & M32, high, *(np.zeros(offsets.shape, np.uint64) for _ in range(2))]
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64((seed >> 32) & 0xFFFFFFFF)
    for _ in range(rounds):
        p0 = c[0] * np.uint64(0xD2511F53)
        p2 = c[2] * np.uint64(0xCD9E8D57)
        c = [(p2 >> np.uint64(32)) ^ c[1] ^ k0, p2 & M32, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & M32]
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & M32, (k1 + np.uint64(0xBB67AE85)) & M32
    return [x.astype(np.uint32).view(np.int32) for x in c]


def uniform_reference(words: np.ndarray) -> np.ndarray:
    w = words.astype(np.int64)
    return (np.where(w < 0, -w - 1, w).astype(np.float32) * np.float32(4.6566127342e-10)).astype(np.float32)


@tl.kernel
def words(seed, w0, w1, w2, w3, u, BN: tl.constexpr):
    offsets = tl.program_id(0) * BN + tl.arange(0, BN)
    a, b, c, d = tl.randint4x(seed, offsets)
    tl.store(w0, (tl.program_id(0) * BN,), a)
    tl.store(w1, (tl.program_id(0) * BN,), b)
    tl.store(w2, (tl.program_id(0) * BN,), c)
    tl.store(w3, (tl.program_id(0) * BN,), d)
    tl.store(u, (tl.program_id(0) * BN,), tl.rand(seed, offsets))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("seed", [7, -3, 2**31 - 1])
def test_philox_words_and_uniforms(after, seed):
    n = 128
    out = [np.full(n, -7, np.int32) for _ in range(4)]
    u = np.full(n, np.nan, np.float32)
    words.interpret(seed, *out, u, grid=(2,), BN=64, after=after)
    # a kernel's int seed is an i32: its high word is its sign extended
    want = philox_reference(seed if seed >= 0 else seed + 2**64, np.arange(n))
    for got, w in zip(out, want):
        assert (got == w).all()
    assert (u == uniform_reference(want[0])).all() and 0 <= u.min() and u.max() < 1


@tl.kernel
def wide_offsets(seed, base, w0, w1, u, BN: tl.constexpr):
    """int64 offsets (large tensors' ``pid.to(tl.int64) * BN``): the high word is Philox's second counter."""
    offsets = base + tl.program_id(0).to(tl.int64) * BN + tl.arange(0, BN)
    a, b, _, _ = tl.randint4x(seed, offsets)
    tl.store(w0 + tl.program_id(0) * BN + tl.arange(0, BN), a)
    tl.store(w1 + tl.program_id(0) * BN + tl.arange(0, BN), b)
    tl.store(u + tl.program_id(0) * BN + tl.arange(0, BN), tl.rand(seed, offsets))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("base", [(5 << 32) + 17, -(3 << 32) - 64])
def test_int64_offsets(after, base):
    n = 128
    w0, w1, u = np.full(n, -7, np.int32), np.full(n, -7, np.int32), np.full(n, np.nan, np.float32)
    wide_offsets.interpret(99, base, w0, w1, u, grid=(2,), BN=64, after=after)
    want = philox_reference(99, base + np.arange(n, dtype=np.int64), wide=True)
    np.testing.assert_array_equal(w0, want[0])
    np.testing.assert_array_equal(w1, want[1])
    np.testing.assert_array_equal(u, uniform_reference(want[0]))


@tl.kernel
def dropout(x, o, seed, p, BN: tl.constexpr):
    """Triton's low-memory dropout: keep x / (1 - p) where tl.rand(seed, offset) > p."""
    offsets = tl.program_id(0) * BN + tl.arange(0, BN)
    t = tl.load(x, (tl.program_id(0) * BN,), shape=(BN,))
    keep = tl.rand(seed, offsets) > p
    tl.store(o, (tl.program_id(0) * BN,), tl.where(keep, t / (1 - p), 0.0))


@tl.kernel
def normals(seed, o, BN: tl.constexpr):
    offsets = tl.program_id(0) * BN + tl.arange(0, BN)
    tl.store(o, (tl.program_id(0) * BN,), tl.randn(seed, offsets))


@pytest.mark.parametrize("after", STAGES)
def test_dropout_and_normals(after):
    rng = np.random.default_rng(30)
    n = 4096
    x = rng.standard_normal(n).astype(np.float32)
    o = np.full_like(x, np.nan)
    dropout.interpret(x, o, 123, 0.3, grid=(n // 256,), BN=256, after=after)
    keep = uniform_reference(philox_reference(123, np.arange(n))[0]) > np.float32(0.3)
    assert np.abs(o - np.where(keep, x / np.float32(0.7), 0)).max() < 1e-6 and 0.65 < keep.mean() < 0.75
    z = np.full(n, np.nan, np.float32)
    normals.interpret(11, z, grid=(n // 256,), BN=256, after=after)
    assert abs(z.mean()) < 0.06 and abs(z.std() - 1) < 0.05 and np.isfinite(z).all()


def test_rand_takes_integers():
    @tl.kernel
    def float_offsets(o, BN: tl.constexpr):
        tl.store(o, (0,), tl.rand(1, tl.arange(0, BN).to(tl.float32)))

    with pytest.raises(tl.LangError, match="tl.rand's seed and offsets are integers, got tl.float32 values"):
        float_offsets.ir(np.zeros(16, np.float32), BN=16)
