"""Python's ``range`` in a kernel, as Triton reads it: a run-time bound makes it a ``tl.range`` loop
(one ``scf.for``, the names the body changes carried), Python ints keep Python's loop (unrolled while
tracing, ``break`` and all). Triton's tutorials write ``for k in range(0, tl.cdiv(K, BLOCK_SIZE_K))``.

Each kernel runs on the tile-level interpreter and lane by lane after ``tile-distribute`` on fresh
random inputs against numpy references (outputs poisoned first).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261130)
STAGES = (None, "tile-distribute")


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(got).any(), "an output was not written"
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


@tl.kernel(num_warps=4)
def row_sums(x_ptr, o_ptr, M, N, stride, BM: tl.constexpr, BN: tl.constexpr):
    """Row sums over a run-time number of column blocks, pointers advanced as Triton's tutorials do."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.arange(0, BN)
    ptrs = x_ptr + rows[:, None] * stride + cols[None, :]
    acc = tl.zeros((BM,), dtype=tl.float32)
    for j in range(0, tl.cdiv(N, BN)):
        t = tl.load(ptrs, mask=(rows[:, None] < M) & (cols[None, :] < N - j * BN), other=0.0)
        acc += tl.sum(t, axis=1)
        ptrs += BN
    tl.store(o_ptr + rows, acc, mask=rows < M)


@pytest.mark.parametrize("after", STAGES)
def test_a_run_time_bound_makes_one_loop(after):
    x = RNG.standard_normal((37, 150)).astype(np.float32)
    o = np.full(37, np.nan, np.float32)
    row_sums.interpret(x, o, 37, 150, 150, grid=(3,), BM=16, BN=32, after=after)
    assert rel_err(o, x.astype(np.float64).sum(1)) < 1e-5
    text = str(row_sums.ir(x, o, 37, 150, 150, BM=16, BN=32))
    assert text.count("scf.for") == 1 and text.count("tile.gather") == 1


@tl.kernel(num_warps=1)
def python_and_traced(x, o, n, STEPS: tl.constexpr, B: tl.constexpr):
    """A constexpr range unrolls (and may break); a range whose step is a run-time value is a loop, and
    one nested in an unrolled loop is a loop each time."""
    v = tl.load(x, (0,), shape=(B,))
    total = tl.zeros((B,), dtype=tl.float32)
    for i in range(STEPS):
        if i == 3:
            break
        last = i
        for _ in range(0, n, tl.program_id(0) + 1):  # a run-time step: counts n iterations
            total = total + v * (i + 1)
    tl.store(o, (0,), total + last)


@pytest.mark.parametrize("after", STAGES)
def test_python_ints_unroll_and_traced_bounds_loop(after):
    x = RNG.standard_normal(32).astype(np.float32)
    o = np.full(32, np.nan, np.float32)
    python_and_traced.interpret(x, o, 5, grid=(1,), STEPS=6, B=32, after=after)
    # i = 0, 1, 2 (the break at 3), each adding n = 5 times v * (i + 1); last = 2
    assert rel_err(o, x.astype(np.float64) * 5 * (1 + 2 + 3) + 2) < 1e-6
    assert str(python_and_traced.ir(x, o, 5, STEPS=6, B=32)).count("scf.for") == 3


@tl.kernel(num_warps=1)
def breaks_out(x, o, n, B: tl.constexpr):
    v = tl.load(x, (0,), shape=(B,))
    for i in range(n):
        if i == 2:
            break  # MARK-break
        v = v + 1.0
    tl.store(o, (0,), v)


@tl.kernel(num_warps=1)
def leaks(x, o, n, B: tl.constexpr):
    for i in range(n):  # MARK-leak
        w = tl.load(x, (0,), shape=(B,))
    tl.store(o, (0,), w)


def test_what_a_loop_cannot_do_is_an_error_only_with_run_time_bounds():
    """(With constexpr bounds, ``python_and_traced`` breaks out of its Python loop.)"""
    x = RNG.standard_normal(32).astype(np.float32)
    o = np.full(32, np.nan, np.float32)
    lines = open(__file__).read().splitlines()
    for kernel, marker, says in ((breaks_out, "# MARK-break", "'break' inside a tl.range loop"),
                                 (leaks, "# MARK-leak", "'w' is first assigned inside this tl.range loop")):
        line = next(k + 1 for k, text in enumerate(lines) if marker in text)
        with pytest.raises(tl.LangError) as info:
            kernel.ir(x, o, 4, B=32)
        message = str(info.value)
        assert message.startswith(f"{__file__}:{line}:"), message
        assert says in message and "range() of a run-time bound is a tl.range loop" in message, message


@tl.kernel(num_warps=1)
def wide_counter(o, start, stop, step):
    acc = tl.zeros((1,), dtype=tl.int64)
    for i in range(start, stop, step):
        acc += i - start
    tl.store(o, (0,), acc)


@pytest.mark.parametrize("after", STAGES)
def test_a_counter_of_i64_bounds_is_i64(after):
    """As Triton types it: a bound past i32 (an i64 argument) makes the counter i64, so ``i - start`` does
    not wrap where it meets an i32 start."""
    o = np.zeros(1, np.int64)
    wide_counter.interpret(o, 5, 2**31 + 5, 2**30, grid=(1,), after=after)
    assert o[0] == sum(range(0, 2**31, 2**30))


@tl.kernel(num_warps=2)
def stages_as_a_parameter(x, o, n_rows, B: tl.constexpr, num_stages: tl.constexpr):
    """Triton's fused-softmax tutorial takes ``num_stages: tl.constexpr`` and passes it to ``tl.range``."""
    for r in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=num_stages):
        tl.store(o, (r, 0), tl.load(x, (r, 0), shape=(1, B)) * 2.0)


def test_num_stages_reaches_a_parameter_of_that_name():
    x = RNG.standard_normal((5, 32)).astype(np.float32)
    o = np.full((5, 32), np.nan, np.float32)
    stages_as_a_parameter.interpret(x, o, 5, grid=(2,), B=32, num_stages=2)
    np.testing.assert_array_equal(o, x * 2.0)
    assert ".entry" in stages_as_a_parameter.compile(x, o, 5, B=32, num_stages=2, arch="sm_80").asm["ptx"]
