"""Triton's block pointers (``tl.make_block_ptr``, ``tl.advance``) and tensor descriptors
(``tl.make_tensor_descriptor``) as windows of an array argument (tilec/lang/block_ptr.py), and the loop
rewrite that makes a carried offset advanced by a constant a function of the loop counter, so that the
loads at it are staged and pipelined like ``tl.load(a, (r, k))``.

Each kernel runs on the tile-level interpreter and lane by lane after ``tile-distribute`` against numpy
(float64 references, outputs poisoned with NaN); the PTX is assembled by the session's ptxas check.
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4, num_stages=3)
def matmul_bp(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Triton's block-pointer GEMM as written."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    a_bp = tl.make_block_ptr(base=a, shape=(M, K), strides=(K, 1), offsets=(pid_m * BM, 0), block_shape=(BM, BK),
                             order=(1, 0))
    b_bp = tl.make_block_ptr(base=b, shape=(K, N), strides=(N, 1), offsets=(0, pid_n * BN), block_shape=(BK, BN),
                             order=(1, 0))
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, K, BK):
        acc += tl.dot(tl.load(a_bp, boundary_check=(0, 1)), tl.load(b_bp, boundary_check=(0, 1), padding_option="zero"))
        a_bp = tl.advance(a_bp, (0, BK))
        b_bp = tl.advance(b_bp, (BK, 0))
    c_bp = tl.make_block_ptr(c, (M, N), (N, 1), (pid_m * BM, pid_n * BN), (BM, BN), (1, 0))
    tl.store(c_bp, acc.to(tl.float16), boundary_check=(0, 1))


@tl.kernel(num_warps=4)
def scale_rows(x, o, M, N, BM: tl.constexpr, BN: tl.constexpr):
    """Tensor descriptors: ``desc.load([i, j])`` and ``desc.store([i, j], v)``."""
    dx = tl.make_tensor_descriptor(x, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    do = tl.make_tensor_descriptor(o, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    i = tl.program_id(0) * BM
    for j in tl.range(0, N, BN):
        do.store([i, j], dx.load([i, j]) * 2 + 1)


@tl.kernel(num_warps=2)
def walk(x, o, n, B: tl.constexpr):
    """A block pointer carried through a run-time while loop and assigned in a run-time if; a counter
    carried through a tl.range loop and read after it; NaN padding."""
    p = tl.make_block_ptr(x, (n,), (1,), (0,), (B,), (0,))
    total = tl.zeros((B,), tl.float32)
    while tl.sum(total) < 1000.0:
        total += tl.abs(tl.load(p, boundary_check=(0,)))
        p = tl.advance(p, (B,))
    if tl.program_id(0) == 0:
        p = tl.advance(p, (B,))
    steps = 0
    for i in tl.range(0, n, B):
        steps = steps + 3
    tl.store(o, (0,), total + steps.to(tl.float32))
    q = tl.make_block_ptr(x, (n,), (1,), (n - 5,), (8,), (0,))
    tl.store(o, (B,), tl.load(q, boundary_check=(0,), padding_option="nan"))


@pytest.mark.parametrize("after", STAGES)
def test_a_block_pointer_gemm(after):
    M, N, K = 70, 50, 90  # ragged in every dimension
    a, b = RNG.standard_normal((M, K)).astype(np.float16), RNG.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    matmul_bp.interpret(a, b, c, M, N, K, grid=(3, 2), BM=32, BN=32, BK=32, after=after)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("arch, staged", [("sm_80", "cp.async"), ("sm_90a", "wgmma")])
def test_advanced_offsets_are_staged_like_windows(arch, staged):
    """The offsets tl.advance moves are functions of the loop counter after tracing: no carried index in
    the loop, and the loads are staged (cp.async) or warpgroup MMA operands, as the window form is."""
    a, c = np.zeros((256, 256), np.float16), np.zeros((256, 256), np.float16)
    ir = str(matmul_bp.ir(a, a, c, 256, 256, 256, BM=64, BN=64, BK=32))
    assert "iter_args(%acc_1 = " in ir and "-> (!tile.rt<64x64xf32>)" in ir  # only the accumulator is carried
    assert staged in matmul_bp.compile(a, a, c, 256, 256, 256, BM=64, BN=64, BK=32, arch=arch).asm["ptx"]


@pytest.mark.parametrize("after", STAGES)
def test_tensor_descriptors(after):
    x = RNG.standard_normal((37, 100)).astype(np.float32)
    o = np.full_like(x, np.nan)
    scale_rows.interpret(x, o, 37, 100, grid=(3,), BM=16, BN=64, after=after)
    assert np.array_equal(o, 2 * x + 1)


@pytest.mark.parametrize("after", STAGES)
def test_block_pointers_through_while_and_if_and_a_counted_value(after):
    x = (RNG.standard_normal(200) * 10).astype(np.float32)
    o = np.full(16 + 8, np.nan, np.float32)
    walk.interpret(x, o, 200, grid=(1,), B=16, after=after)
    total, start = np.zeros(16), 0
    while total.sum() < 1000:
        w = np.zeros(16)
        w[:max(0, min(16, 200 - start))] = np.abs(x[start:start + 16])
        total += w
        start += 16
    steps = 3 * len(range(0, 200, 16))
    assert np.allclose(o[:16], total + steps, rtol=1e-5)
    assert np.array_equal(o[16:21], x[195:]) and np.isnan(o[21:]).all()
    ir = str(walk.ir(x, o, 200, B=16))
    assert "scf.while" in ir and "%p_offset0" in ir  # the pointer crosses the while as its offset
    walk.compile(x, o, 200, B=16, arch="sm_80")  # assembled by the session's ptxas check


def test_counted_values_after_a_loop_that_does_not_run():
    @tl.kernel
    def counted(o, n):
        j = 5 * tl.program_id(0) + 7
        for i in tl.range(0, n, 4):
            j = j + 2
        tl.store(o, (0,), tl.full((1,), 0, tl.int32) + j)

    for n, want in ((0, 7), (-3, 7), (1, 9), (9, 13)):
        o = np.zeros(1, np.int32)
        counted.interpret(o, n, grid=(1,))
        assert o[0] == want, n


def test_block_pointer_errors_name_the_line():
    x = np.zeros((16, 16), np.float32)
    cases = {
        "base": ("tl.make_block_ptr(n, (16,), (1,), (0,), (16,), (0,))", "base is an array argument"),
        "rank": ("tl.make_block_ptr(x, (16,), (1,), (0,), (16,), (0,))", "shape gives the 2 dimensions of 'x'"),
        "mask": ("tl.load(tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (16, 16), (1, 0)), mask=True)",
                 "takes no mask, offsets or shape"),
        "made inside": ("None\n    for i in tl.range(0, n):\n        p = tl.make_block_ptr(x, (16, 16), (16, 1), (0, i), "
                        "(16, 16), (1, 0))\n    q = p", "block pointer"),
        "advance": ("tl.advance(x, (0, 16))", "tl.advance moves a block pointer"),
        "store shape": ("tl.store(tl.make_block_ptr(x, (16, 16), (16, 1), (0, 0), (8, 16), (1, 0)), "
                        "tl.zeros((16, 16)))", "tl.store of a value of shape (16, 16) into blocks of (8, 16)"),
    }
    for name, (expr, says) in cases.items():
        namespace: dict = {"tl": tl}
        source = f"@tl.kernel\ndef k(x, n):\n    p = {expr}\n"
        path = f"/tmp/tilec_block_ptr_case_{name.replace(' ', '_')}.py"
        with open(path, "w") as f:
            f.write(source)
        exec(compile(source, path, "exec"), namespace)
        with pytest.raises(tl.LangError) as info:
            namespace["k"].ir(x, 3)
        assert str(info.value).startswith(path) and says in str(info.value), (name, str(info.value))


@tl.kernel(num_warps=4, num_stages=3)
def split_k_bp(a, b, c, M, N, K, KS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """Offsets from i32 arguments (``pid_k * KS``), a pointer over K's transpose (Triton's K^T pointer:
    ``order=(0, 1)`` over a row-major array), advanced by an i32 amount: staged like windows."""
    pid = tl.program_id(0)
    pid_m, pid_n, pid_k = pid % tl.cdiv(M, BM), pid // tl.cdiv(M, BM) % tl.cdiv(N, BN), tl.program_id(1)
    a_bp = tl.make_block_ptr(a, (M, K), (K, 1), (pid_m * BM, pid_k * KS), (BM, BK), (1, 0))
    bt_bp = tl.make_block_ptr(b, (K, N), (1, K), (pid_k * KS, pid_n * BN), (BK, BN), (0, 1))  # b is N x K
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in tl.range(0, KS, BK):
        acc += tl.dot(tl.load(a_bp, boundary_check=(0, 1)), tl.load(bt_bp, boundary_check=(0, 1)))
        a_bp = tl.advance(a_bp, (0, BK))
        bt_bp = tl.advance(bt_bp, (BK, 0))
    q = tl.advance(a_bp, (0, 0)) if pid_k > 100 else a_bp  # a conditional expression of block pointers
    tl.atomic_add(c, (pid_m * BM, pid_n * BN), acc + 0 * tl.sum(tl.load(q, boundary_check=(0, 1)).to(tl.float32)))


@pytest.mark.parametrize("after", STAGES)
def test_transposed_pointers_i32_offsets_and_split_k(after):
    M, N, K = 40, 48, 96
    a = RNG.standard_normal((M, K)).astype(np.float16)
    bt = RNG.standard_normal((N, K)).astype(np.float16)  # B stored N x K, read through its transpose
    c = np.zeros((M, N), np.float32)
    split_k_bp.interpret(a, bt, c, M, N, K, 32, grid=(2 * 2, 3), BM=32, BN=32, BK=16, after=after)
    ref = a.astype(np.float64) @ bt.astype(np.float64).T
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-5


def test_i32_offsets_are_staged():
    a, bt, c = np.zeros((256, 256), np.float16), np.zeros((256, 256), np.float16), np.zeros((256, 256), np.float32)
    ir = str(split_k_bp.ir(a, bt, c, 256, 256, 256, 128, BM=64, BN=64, BK=32))
    assert "-> (!tile.rt<64x64xf32>)" in ir  # only the accumulator is carried
    assert "cp.async" in split_k_bp.compile(a, bt, c, 256, 256, 256, 128, BM=64, BN=64, BK=32, arch="sm_80").asm["ptx"]


@tl.kernel(num_warps=1)
def scalar_fills(x, o, n):
    """A number stored through a block pointer or a descriptor fills the block."""
    tl.store(tl.make_block_ptr(o, (n,), (1,), (0,), (32,), (0,)), 5.0)
    tl.make_tensor_descriptor(o, [n], [1], [16]).store([32], tl.load(x, (0,), shape=(1,)).sum())


def test_scalars_stored_through_pointers_fill_the_block():
    x = RNG.standard_normal(4).astype(np.float32)
    o = np.full(48, np.nan, np.float32)
    scalar_fills.interpret(x, o, 48, grid=(1,))
    assert np.array_equal(o, np.r_[np.full(32, 5.0), np.full(16, x[0])].astype(np.float32))
