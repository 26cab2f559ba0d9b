"""Unsigned integers (``tl.uint8`` ... ``tl.uint64``) and ``bool`` arrays in tilec.lang.

The IR's integers are signless (as MLIR's and Triton's); the language reads the values of unsigned
arrays, of ``.to(tl.uint32)`` and of operations on them as unsigned numbers, and emits the unsigned ops
(``divui``, ``remui``, ``shrui``, ``cmpi ult``, ``maxui``, ``uitofp``, ``fptoui``, zero extension,
``atom.max.u32``). Promotion is Triton's: an unsigned operand as wide as the result makes it unsigned.
A ``bool`` array is a byte an element: loads read it as a mask (nonzero), stores write 0 / 1.

Each kernel runs on the tile interpreter and lane by lane after ``tile-distribute`` against Python's
exact integers (or float64), outputs poisoned first; the PTX of the compiled variants is assembled by
the session's ptxas check (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl
from tilec.lang.tracing import LangError

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")
UNSIGNED = (np.uint8, np.uint16, np.uint32, np.uint64)


def randu(dtype, shape, low=0):
    info = np.iinfo(dtype)
    return RNG.integers(low, info.max, shape, dtype=dtype, endpoint=True)


def wrap(values, bits):
    return [v % (1 << bits) for v in values]


# ---------------------------------------------------------------- elementwise


@tl.kernel
def arith_kernel(x_ptr, y_ptr, q_ptr, f_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    q = x // y + x % y + (x >> 3) + tl.maximum(x, y) - tl.minimum(x, y) + (x > y).to(x.dtype)
    tl.store(q_ptr + offs, q, mask=m)
    tl.store(f_ptr + offs, x.to(tl.float64), mask=m)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", UNSIGNED, ids=lambda d: d.__name__)
def test_unsigned_arithmetic_comparisons_and_conversions(dtype, after):
    n = 300
    bits = np.dtype(dtype).itemsize * 8
    x, y = randu(dtype, n), randu(dtype, n, low=1)
    x[:4] = [np.iinfo(dtype).max, 1 << (bits - 1), 0, 7]  # the top, the sign bit, zero
    q, f = np.zeros(n, dtype), np.full(n, np.nan)
    arith_kernel.interpret(x, y, q, f, n, BLOCK=128, grid=(3,), after=after)
    a, b = [int(v) for v in x], [int(v) for v in y]
    ref = wrap([u // v + u % v + (u >> 3) + max(u, v) - min(u, v) + (u > v) for u, v in zip(a, b)], bits)
    assert [int(v) for v in q] == ref
    assert np.array_equal(f, np.array(a, dtype=np.float64))  # exact up to 2^53; rounded alike above


@tl.kernel
def promote_kernel(u_ptr, s_ptr, o_ptr, w_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    u = tl.load(u_ptr + offs, mask=m)  # uint8
    s = tl.load(s_ptr + offs, mask=m)  # int32
    tl.store(o_ptr + offs, (u + s) // 3, mask=m)  # u8 + i32: i32, signed (the wider signed operand wins)
    w = s.to(tl.uint32)  # the same bits, read unsigned: a negative one is large
    tl.store(w_ptr + offs, (w // 3).to(tl.int64) + (u.to(tl.int8) >> 1).to(tl.int64), mask=m)


@pytest.mark.parametrize("after", STAGES)
def test_triton_promotion_between_signed_and_unsigned(after):
    n = 200
    u = randu(np.uint8, n)
    s = RNG.integers(-1000, 1000, n, dtype=np.int32)
    o, w = np.zeros(n, np.int32), np.zeros(n, np.int64)
    promote_kernel.interpret(u, s, o, w, n, BLOCK=128, grid=(2,), after=after)
    trunc_div = [int(np.trunc((int(a) + int(b)) / 3)) for a, b in zip(u, s)]
    assert o.tolist() == trunc_div
    signed_byte = [int(np.int8(np.uint8(a).view(np.int8))) for a in u]
    assert w.tolist() == [(int(b) % (1 << 32)) // 3 + (c >> 1) for b, c in zip(s, signed_byte)]


@tl.kernel
def convert_kernel(x_ptr, u8_ptr, u32_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(u8_ptr + offs, x.to(tl.uint8), mask=m)  # saturated to 0 .. 255, as PTX's cvt
    tl.store(u32_ptr + offs, x.to(tl.uint32) | 0x80000000, mask=m)  # a constant past int32's range


@pytest.mark.parametrize("after", STAGES)
def test_float_to_unsigned_saturates(after):
    n = 100
    x = (RNG.standard_normal(n) * 400).astype(np.float32)
    u8, u32 = np.zeros(n, np.uint8), np.zeros(n, np.uint32)
    convert_kernel.interpret(x, u8, u32, n, BLOCK=128, grid=(1,), after=after)
    assert u8.tolist() == [int(min(max(np.trunc(v), 0), 255)) for v in x]
    assert u32.tolist() == [int(max(np.trunc(v), 0)) | 0x80000000 for v in x]


# ---------------------------------------------------------------- hashes: loop-carried unsigned values


@tl.kernel
def hash_kernel(seed_ptr, out_ptr, n, ROUNDS, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.load(seed_ptr + offs, mask=offs < n)  # uint32
    for _ in tl.range(0, ROUNDS):  # xorshift-multiply rounds, carried as uint32
        h = h ^ (h >> 16)
        h = h * 0x45D9F3B
        h = h ^ (h >> 16)
    tl.store(out_ptr + offs, h, mask=offs < n)


@pytest.mark.parametrize("after", STAGES)
def test_loop_carried_uint32_hash(after):
    n = 130
    seed = randu(np.uint32, n)
    out = np.zeros(n, np.uint32)
    hash_kernel.interpret(seed, out, n, 3, BLOCK=64, grid=(3,), after=after)
    ref = []
    for h in (int(v) for v in seed):
        for _ in range(3):
            h ^= h >> 16
            h = (h * 0x45D9F3B) % (1 << 32)
            h ^= h >> 16
        ref.append(h)
    assert out.tolist() == ref


# ---------------------------------------------------------------- int4 weights in bytes


@tl.kernel
def dequant_kernel(w_ptr, s_ptr, out_ptr, K2, N, BK2: tl.constexpr, BN: tl.constexpr):
    """Two 4-bit weights a byte (low nibble: row k, high nibble: row k + K/2), times each column's scale."""
    rows = tl.program_id(0) * BK2 + tl.arange(0, BK2)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rows[:, None] < K2) & (cols[None, :] < N)
    packed = tl.load(w_ptr + rows[:, None] * N + cols[None, :], mask=m, other=0)  # uint8
    scale = tl.load(s_ptr + cols, mask=cols < N, other=0.0)
    low = ((packed & 0xF).to(tl.float32) - 8.0) * scale[None, :]
    high = ((packed >> 4).to(tl.float32) - 8.0) * scale[None, :]
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], low, mask=m)
    tl.store(out_ptr + (rows[:, None] + K2) * N + cols[None, :], high, mask=m)


@pytest.mark.parametrize("after", STAGES)
def test_int4_weights_unpacked_from_bytes(after):
    k2, n = 40, 72
    w = randu(np.uint8, (k2, n))
    s = RNG.uniform(0.5, 2.0, n).astype(np.float32)
    out = np.full((2 * k2, n), np.nan, np.float32)
    dequant_kernel.interpret(w, s, out, k2, n, BK2=16, BN=32, grid=(3, 3), after=after)
    ref = np.concatenate([(w & 0xF).astype(np.float64) - 8, (w >> 4).astype(np.float64) - 8]) * s
    assert np.array_equal(out, ref.astype(np.float32))


# ---------------------------------------------------------------- reductions and scans


@tl.kernel
def reduce_kernel(x_ptr, sums_ptr, maxs_ptr, mins_ptr, arg_ptr, total_ptr, R: tl.constexpr, C: tl.constexpr):
    rows, cols = tl.arange(0, R), tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
    tl.store(sums_ptr + rows, tl.sum(x, axis=1))
    tl.store(maxs_ptr + cols, tl.max(x, axis=0))
    tl.store(mins_ptr + rows, tl.min(x, axis=1))
    tl.store(arg_ptr + rows, tl.argmax(x, axis=1))
    tl.store(total_ptr, tl.max(x))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("dtype", (np.uint8, np.uint32), ids=lambda d: d.__name__)
def test_unsigned_reductions(dtype, after):
    r, c = 16, 32
    x = randu(dtype, (r, c))
    x[3, 5] = np.iinfo(dtype).max  # the sign bit set: the largest as unsigned, the smallest as signed
    sums = np.zeros(r, np.uint32 if dtype == np.uint8 else dtype)  # Triton sums 8-bit values in 32 bits
    maxs, mins, total = np.zeros(c, dtype), np.zeros(r, dtype), np.zeros(1, dtype)
    arg = np.full(r, -1, np.int32)
    reduce_kernel.interpret(x, sums, maxs, mins, arg, total, R=r, C=c, grid=(1,), after=after)
    wide = x.astype(np.uint64)
    assert sums.tolist() == [int(v) % (1 << 32) for v in wide.sum(1)]
    assert maxs.tolist() == x.max(0).tolist() and mins.tolist() == x.min(1).tolist()
    assert arg.tolist() == x.argmax(1).tolist() and int(total[0]) == int(x.max())


@tl.kernel
def scan_kernel(x_ptr, run_ptr, top_ptr, umax_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)  # uint32
    tl.store(run_ptr + i, tl.cumsum(x, axis=0))
    tl.store(top_ptr + i, tl.cummax(x, axis=0))
    tl.store(umax_ptr, tl.reduce(x, 0, lambda a, b: tl.where(a > b, a, b)))  # the comparison unsigned


@pytest.mark.parametrize("after", STAGES)
def test_unsigned_scans_and_combine_functions(after):
    n = 64
    x = randu(np.uint32, n)
    run, top, umax = np.zeros(n, np.uint32), np.zeros(n, np.uint32), np.zeros(1, np.uint32)
    scan_kernel.interpret(x, run, top, umax, N=n, grid=(1,), after=after)
    assert run.tolist() == [int(v) % (1 << 32) for v in np.cumsum(x.astype(np.uint64))]
    assert top.tolist() == np.maximum.accumulate(x).tolist() and int(umax[0]) == int(x.max())


@tl.kernel
def atomic_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_max(out_ptr + offs % 4, x, mask=offs < n)


@pytest.mark.parametrize("after", STAGES)
def test_unsigned_atomic_maximum(after):
    n = 200
    x = randu(np.uint32, n)
    out = np.zeros(4, np.uint32)
    atomic_kernel.interpret(x, out, n, BLOCK=64, grid=(4,), after=after)
    assert out.tolist() == [int(x[i::4].max()) for i in range(4)]


# ---------------------------------------------------------------- bool arrays


@tl.kernel
def bool_kernel(x_ptr, keep_ptr, y_ptr, pos_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0.0)
    keep = tl.load(keep_ptr + offs, mask=m, other=False)  # a mask (nonzero bytes)
    tl.store(y_ptr + offs, tl.where(keep, x, 0.0) + tl.sum(keep.to(tl.int32)), mask=m)
    tl.store(pos_ptr + offs, x > 0, mask=m)


@pytest.mark.parametrize("after", STAGES)
def test_bool_arrays_are_masks(after):
    n = 100
    x = RNG.standard_normal(n).astype(np.float32)
    keep = RNG.random(n) < 0.5
    y, pos = np.full(n, np.nan, np.float32), np.zeros(n, np.bool_)
    bool_kernel.interpret(x, keep, y, pos, n, BLOCK=128, grid=(1,), after=after)
    assert np.array_equal(y, np.where(keep, x, 0) + np.float32(keep.sum()))
    assert np.array_equal(pos, x > 0) and set(pos.view(np.uint8).tolist()) <= {0, 1}


def test_dtypes_read_back_from_values():
    seen = {}

    @tl.kernel
    def k(u_ptr, b_ptr):
        u = tl.load(u_ptr + tl.arange(0, 16))
        seen.update(view=u_ptr.dtype, load=u.dtype, sum=tl.sum(u).dtype, f=(u + 1.5).dtype, mask=b_ptr.dtype,
                    signed=u.to(tl.int16).dtype, bits=u.to(tl.int8, bitcast=True).dtype)

    k.ir(np.zeros(16, np.uint8), np.zeros(16, np.bool_))
    assert seen == dict(view=tl.uint8, load=tl.uint8, sum=tl.uint32, f=tl.float32, mask=tl.int1, signed=tl.int16,
                        bits=tl.int8)


# ---------------------------------------------------------------- errors


def test_errors_name_the_unsigned_type():
    @tl.kernel
    def too_big(x_ptr):
        x = tl.load(x_ptr + tl.arange(0, 16))
        tl.store(x_ptr + tl.arange(0, 16), x + 256)

    with pytest.raises(LangError, match=r"the integer 256 does not fit tl.uint8"):
        too_big.ir(np.zeros(16, np.uint8))

    @tl.kernel
    def dot(a_ptr, c_ptr):
        i = tl.arange(0, 16)
        a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
        tl.store(c_ptr + i[:, None] * 16 + i[None, :], tl.dot(a, a))

    with pytest.raises(LangError, match=r"tl.dot multiplies float or int8 tiles.*uint8"):
        dot.ir(np.zeros((16, 16), np.uint8), np.zeros((16, 16), np.float32))


# ---------------------------------------------------------------- the PTX


@pytest.mark.parametrize("arch", ("sm_80", "sm_90a"))
def test_unsigned_kernels_compile_to_the_unsigned_instructions(arch):
    """Each kernel compiles (the session's ptxas check assembles it); the unsigned reading shows in the
    instructions: unsigned division, shift and comparison, zero extension, unsigned atomics."""
    u32 = np.zeros(64, np.uint32)
    ptx = {
        "arith": arith_kernel.compile(u32, u32, u32, np.zeros(64), 64, BLOCK=64, arch=arch).asm["ptx"],
        "hash": hash_kernel.compile(u32, u32, 64, 3, BLOCK=64, arch=arch).asm["ptx"],
        "dequant": dequant_kernel.compile(np.zeros((8, 8), np.uint8), np.zeros(8, np.float32),
                                          np.zeros((16, 8), np.float32), 8, 8, BK2=16, BN=32, arch=arch).asm["ptx"],
        "reduce": reduce_kernel.compile(np.zeros((16, 32), np.uint8), u32, np.zeros(32, np.uint8),
                                        np.zeros(16, np.uint8), np.zeros(16, np.int32), np.zeros(1, np.uint8),
                                        R=16, C=32, arch=arch).asm["ptx"],
        "atomic": atomic_kernel.compile(u32, u32, 64, BLOCK=64, arch=arch).asm["ptx"],
        "bool": bool_kernel.compile(np.zeros(64, np.float32), np.zeros(64, np.bool_), np.zeros(64, np.float32),
                                    np.zeros(64, np.bool_), 64, BLOCK=64, arch=arch).asm["ptx"],
    }
    assert "div.u32" in ptx["arith"] and "shr.u32" in ptx["arith"]  # (LLVM takes the remainder from the quotient)
    assert "setp.gt.u32" in ptx["arith"] or "setp.lt.u32" in ptx["arith"]
    assert "cvt.rn.f64.u32" in ptx["arith"]
    assert "shr.u32" in ptx["hash"] and "mul.lo.s32" in ptx["hash"]
    assert "max.u32" in ptx["atomic"]
    assert "ld.global" in ptx["bool"] and "st.global.u8" in ptx["bool"] or "st.global.b8" in ptx["bool"]


# ---------------------------------------------------------------- what a review of the change found


@tl.kernel
def made_unsigned(x_ptr, s_ptr, out_ptr, top_ptr, N: tl.constexpr, ROUNDS):
    i = tl.arange(0, N)
    f = tl.full((N,), 200, tl.uint8)  # a constant fill of an unsigned type is unsigned
    tl.store(out_ptr + i, ((f // 3) + (tl.zeros((N,), tl.uint8) + 1)).to(tl.int32))
    acc = tl.zeros((N,), tl.uint32)  # an unsigned accumulator carried through a loop
    for r in tl.range(0, ROUNDS):
        acc = tl.maximum(acc, tl.load(x_ptr + r * N + i))
    tl.store(top_ptr + i, acc | tl.full((N,), 0x80000000, tl.uint32) * 0)
    s = tl.load_scalar(s_ptr, (0,))  # uint32
    signed = tl.full((N,), s, tl.int32)  # the scalar's bits, read signed
    tl.store(out_ptr + N + i, signed >> 28)


@pytest.mark.parametrize("after", STAGES)
def test_fills_zeros_and_carried_accumulators_of_unsigned_types(after):
    n, rounds = 16, 3
    x = randu(np.uint32, rounds * n)
    s = np.array([0xF0000000], np.uint32)
    out, top = np.zeros(2 * n, np.int32), np.zeros(n, np.uint32)
    made_unsigned.interpret(x, s, out, top, N=n, ROUNDS=rounds, grid=(1,), after=after)
    assert out[:n].tolist() == [66 + 1] * n and out[n:].tolist() == [-1] * n
    assert top.tolist() == x.reshape(rounds, n).max(0).tolist()


@tl.kernel
def branches_and_maps(x_ptr, flag, out_ptr, big_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    u = tl.load(x_ptr + i)  # uint32
    if flag > 0:
        y = 0
    else:
        y = tl.load_scalar(x_ptr, (0,))
    tl.store(out_ptr + i, tl.full((N,), y >> 28, tl.uint32))  # unsigned from either branch: a logical shift
    tl.store(out_ptr + N + i, tl.map(lambda e: e // 2, u))  # tl.map's element is unsigned too
    b = tl.load_scalar(big_ptr, (0,))  # a uint64 past 2^63
    tl.store(big_ptr + 1 + i, tl.maximum(b, tl.load_scalar(big_ptr, (1,))) // (b - b + 0 * i + 1))


@pytest.mark.parametrize("after", STAGES)
def test_branches_maps_and_wide_scalars_keep_the_unsigned_reading(after):
    n = 16
    x = randu(np.uint32, n)
    x[0] = 0xF0000000
    out = np.zeros(2 * n, np.uint32)
    big = np.array([2**64 - 3] + [5] * n, np.uint64)
    branches_and_maps.interpret(x, 0, out, big, N=n, grid=(1,), after=after)
    assert out[:n].tolist() == [0xF] * n and out[n:].tolist() == [int(v) // 2 for v in x]
    assert big[1:].tolist() == [2**64 - 3] * n


def test_signedness_mismatches_and_negative_numbers_are_errors():
    @tl.kernel
    def mixed(x_ptr, s_ptr, flag):
        u = tl.load(x_ptr + tl.arange(0, 16))
        if flag > 0:
            y = u
        else:
            y = tl.load(s_ptr + tl.arange(0, 16))
        tl.store(x_ptr + tl.arange(0, 16), y)

    with pytest.raises(LangError, match=r"'y' is a .* after the if branch and a .* after the else branch"):
        mixed.ir(np.zeros(16, np.uint32), np.zeros(16, np.int32), 1)

    @tl.kernel
    def negative(x_ptr):
        u = tl.load(x_ptr + tl.arange(0, 16))
        tl.store(x_ptr + tl.arange(0, 16), tl.where(u > -1, u, 0))

    with pytest.raises(LangError, match=r"the integer -1 does not fit tl.uint32 .* a negative number and unsigned"):
        negative.ir(np.zeros(16, np.uint32))


@tl.kernel
def shared_bytes_and_a_row(x_ptr, w_ptr, out_ptr, q_ptr, M: tl.constexpr, N: tl.constexpr):
    s = tl.alloc((M, N), tl.uint8)
    tl.copy(x_ptr, (0, 0), s)
    tl.barrier()
    rows, cols = tl.arange(0, M)[:, None], tl.arange(0, N)[None, :]
    tl.store(out_ptr + rows * N + cols, (tl.load(s) // 2).to(tl.int32))
    w = tl.load(w_ptr + cols)  # a (1, N) tile stored through (M, N) pointers: broadcast over the rows
    tl.store(q_ptr + rows * N + cols, w)


@pytest.mark.parametrize("after", STAGES)
def test_shared_unsigned_tiles_and_a_row_stored_to_every_row(after):
    m, n = 16, 32
    x = randu(np.uint8, (m, n))
    w = RNG.standard_normal(n).astype(np.float32)
    out, q = np.zeros((m, n), np.int32), np.full((m, n), np.nan, np.float32)
    shared_bytes_and_a_row.interpret(x, w, out, q, M=m, N=n, grid=(1,), after=after)
    assert np.array_equal(out, x // 2) and np.array_equal(q, np.broadcast_to(w, (m, n)))


def test_uint32_offsets_are_zero_extended():
    """Triton zero-extends unsigned offsets narrower than 64 bits: 2^31 and up are no negative offsets."""

    @tl.kernel
    def far(x_ptr, u_ptr, o_ptr):
        i = tl.arange(0, 16)
        tl.store(o_ptr + i, tl.load(x_ptr + tl.load(u_ptr + i)))

    text = str(far.ir(np.zeros(16, np.float32), np.zeros(16, np.uint32), np.zeros(16, np.float32)))
    assert "arith.extui %3 : i32 to i64" in text or ("arith.extui" in text and "i32 to i64" in text)
    assert "tile.gather %x_ptr" in text and "xi64, col>] -> !tile.rv<16xf32, col>" in text


def test_w4a16_stages_its_bytes_through_shared_memory():
    """examples/lang/int4.py's layer: the packed weights (a gather whose values reach the mma through the
    unpacking maps, 0 where it reads nothing) are staged by cp.async as a's tiles are, not read byte by byte
    from global memory in the mma's fragment (71.6 against 118-132 TFLOP/s at 4096^3 on an H200)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "lang_example_int4", Path(__file__).resolve().parents[2] / "examples" / "lang" / "int4.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    a, w = np.zeros((256, 256), np.float16), np.zeros((128, 256), np.uint8)
    grid, args, consts = ex.matmul_call(a, w, np.zeros(256, np.float32), np.zeros((256, 256), np.float16),
                                        BM=64, BN=128, BK=64)
    kernel = ex.matmul_w4a16.with_options(num_warps=8)
    for arch in ("sm_80", "sm_90a"):
        staged = kernel._lowered(kernel._module(kernel.specialize(*args, **consts)),
                                 kernel._pipeline(None, None, None, arch), "tile-layout")
        text = str(staged)
        assert "tile.async_copy %w_ptr offsets" in text and "tile.gather %w_ptr" not in text


# ---------------------------------------------------------------- what hunt 3 found


@tl.kernel
def numbers_into_arrays(u8_ptr, u32_ptr, u64_ptr, flags_ptr, seed, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(u8_ptr + i, 200)  # Python ints in the arrays' unsigned range
    tl.store(u32_ptr + i, 0xFFFFFFFF)
    tl.atomic_or(u32_ptr + N, 0x80000000)
    tl.atomic_xchg(u64_ptr + i, 1 << 63)
    tl.store(flags_ptr + i, True)  # a Python bool: Triton's int1 constant
    tl.store(flags_ptr + N + i, False)
    tl.store(u64_ptr + N + i, seed - i.to(tl.uint64))  # a uint64 argument past 2^63


@pytest.mark.parametrize("after", STAGES)
def test_python_numbers_stored_into_unsigned_and_bool_arrays(after):
    n = 8
    u8, u32 = np.zeros(n, np.uint8), np.zeros(n + 1, np.uint32)
    u64, flags = np.zeros(2 * n, np.uint64), np.zeros(2 * n, np.bool_)
    seed = 0xFEEDFACECAFEBEEF
    numbers_into_arrays.interpret(u8, u32, u64, flags, seed, N=n, grid=(1,), after=after)
    assert u8.tolist() == [200] * n and u32.tolist() == [0xFFFFFFFF] * n + [0x80000000]
    assert u64.tolist() == [1 << 63] * n + [seed - k for k in range(n)]
    assert flags.tolist() == [True] * n + [False] * n


@tl.kernel
def narrow_scans(x_ptr, s_ptr, r_ptr, v_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(x_ptr + i)  # uint8: combined in uint8, wrapping as Triton's
    tl.store(s_ptr + i, tl.associative_scan(x, 0, lambda a, b: a + b))
    tl.store(r_ptr, tl.reduce(x, 0, lambda a, b: a + b))
    v = (x.to(tl.int32) + 1)  # an int32 vector scanned with a function (the tile interpreter's scalars)
    tl.store(v_ptr + i, tl.associative_scan(v, 0, lambda a, b: a + b))


@pytest.mark.parametrize("after", STAGES)
def test_combine_functions_compute_in_narrow_types(after):
    n = 16
    x = randu(np.uint8, n, low=100)
    s, r, v = np.zeros(n, np.uint8), np.zeros(1, np.uint8), np.zeros(n, np.int32)
    narrow_scans.interpret(x, s, r, v, N=n, grid=(1,), after=after)
    assert s.tolist() == [int(t) % 256 for t in np.cumsum(x.astype(np.int64))]
    assert int(r[0]) == int(x.astype(np.int64).sum()) % 256
    assert v.tolist() == np.cumsum(x.astype(np.int64) + 1).tolist()


@tl.kernel(num_warps=4, num_stages=3, bulk=True)
def bytes_as_int8(a, w, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.int32)
    for k in tl.range(0, a.shape[1], BK):
        acc += tl.dot(tl.load(a, (m, k), shape=(BM, BK)).to(tl.int8, bitcast=True),
                      tl.load(w, (n, k), shape=(BN, BK)).to(tl.int8, bitcast=True).T)
    tl.store(c, (m, n), acc)


def test_a_bitcast_of_unsigned_bytes_keeps_the_warpgroup_mma():
    """A reading changed while tracing (uint8 bytes read as int8) is an identity map, dropped when the kernel
    is finished: the operand is the load tile-stage stages, so the s8 warpgroup MMA stays (hunt 5 of
    session 38: 0 wgmma and 32 mma.sync before)."""
    a, c = np.zeros((128, 256), np.uint8), np.zeros((128, 128), np.int32)
    ptx = bytes_as_int8.compile(a, a, c, BM=64, BN=128, BK=64, arch="sm_90a").asm["ptx"]
    assert ptx.count("wgmma.mma_async") == 2 and "mma.sync" not in ptx
    x = randu(np.uint8, (64, 128))
    w = randu(np.uint8, (64, 128))
    out = np.full((64, 64), -7, np.int32)
    bytes_as_int8.interpret(x, w, out, BM=64, BN=64, BK=64, grid=(1, 1), arch="sm_90a", after="tile-distribute")
    assert np.array_equal(out, x.view(np.int8).astype(np.int64) @ w.view(np.int8).astype(np.int64).T)
