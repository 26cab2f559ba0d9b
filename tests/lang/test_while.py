"""``while`` loops on run-time values (``scf.while``): the test and the body traced once each, the
names the body changes carried, as a ``tl.range`` loop's; a test on Python values stays Python's loop.

Each kernel runs on the tile-level interpreter and lane by lane after ``tile-distribute`` on fresh
random inputs against numpy references (outputs poisoned first); their PTX is assembled by the
session's ptxas check (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(20261129)
STAGES = (None, "tile-distribute")


@tl.kernel(num_warps=4)
def locked_sum(x, lock, out, N: tl.constexpr):
    """Triton's layer-norm-backward lock: spin on a compare-and-swap, add into ``out``, release."""
    part = tl.sum(tl.load(x, (tl.program_id(0) * N,), shape=(N,)))
    while tl.atomic_cas(lock, (0,), 0, 1) == 1:
        pass
    tl.store(out, (0,), tl.load(out, (0,), shape=(1,)) + part)
    tl.debug_barrier()
    tl.atomic_xchg(lock, (0,), 0)


@tl.kernel(num_warps=2)
def countdown(x, out):
    """A scalar loop whose trip count is read at run time, and a Python loop beside it."""
    n = tl.load_scalar(x, (0,))
    total = 0
    steps = 0
    while n > 0:
        total += n
        n = n - 1
        steps += 1
    k = 0
    while k < 3:  # Python values: Python's loop, unrolled while tracing
        k += 1
    tl.store(out, (0,), total)
    tl.store(out, (1,), steps + k)


@tl.kernel(num_warps=4)
def halvings(x, y, count, BM: tl.constexpr, BN: tl.constexpr):
    """A tile carried through the loop, its test a reduction of it: halve until every |x| <= 1."""
    t = tl.load(x, (tl.program_id(0) * BM, 0), shape=(BM, BN))
    n = 0
    while tl.max(tl.abs(t)) > 1.0:
        t = t * 0.5
        n += 1
    tl.store(y, (tl.program_id(0) * BM, 0), t)
    tl.store(count, (tl.program_id(0),), n)


@tl.kernel(num_warps=1)
def search(a, targets, found, N: tl.constexpr):
    """Binary search of a sorted array, one target a block: a run-time if inside the while."""
    target = tl.load_scalar(targets, (tl.program_id(0),))
    lo = 0
    hi = N
    while lo < hi:
        mid = (lo + hi) // 2
        if tl.load_scalar(a, (mid,)) < target:
            lo = mid + 1
        else:
            hi = mid
    tl.store(found, (tl.program_id(0),), lo)


@pytest.mark.parametrize("after", STAGES)
def test_a_spin_lock_serialises_the_blocks(after):
    x = RNG.standard_normal(6 * 256).astype(np.float32)
    lock, out = np.zeros(1, np.int32), np.full(1, 0.5, np.float32)
    locked_sum.interpret(x, lock, out, grid=(6,), N=256, after=after)
    assert lock[0] == 0 and np.isclose(out[0], x.astype(np.float64).sum() + 0.5, rtol=1e-5)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("n", [0, 1, 7])
def test_a_run_time_trip_count(after, n):
    out = np.full(2, -1, np.int32)
    countdown.interpret(np.array([n], np.int32), out, grid=(1,), after=after)
    assert out.tolist() == [n * (n + 1) // 2, n + 3]


@pytest.mark.parametrize("after", STAGES)
def test_a_carried_tile_and_a_test_that_reduces_it(after):
    x = (RNG.standard_normal((3 * 32, 64)) * np.array([[0.5], [4.0], [100.0]]).repeat(32, 0)).astype(np.float32)
    y, count = np.full_like(x, np.nan), np.full(3, -1, np.int32)
    halvings.interpret(x, y, count, grid=(3,), BM=32, BN=64, after=after)
    for b in range(3):
        rows = x[b * 32:(b + 1) * 32]
        n = int(max(0, np.ceil(np.log2(np.abs(rows).max()))))
        assert count[b] == n and np.array_equal(y[b * 32:(b + 1) * 32], rows * np.float32(0.5) ** n)


@pytest.mark.parametrize("after", STAGES)
def test_a_binary_search(after):
    a = np.sort(RNG.integers(0, 1000, 100)).astype(np.int32)
    targets = RNG.integers(-5, 1005, 8).astype(np.int32)
    found = np.full(8, -1, np.int32)
    search.interpret(a, targets, found, grid=(8,), N=100, after=after)
    assert found.tolist() == np.searchsorted(a, targets).tolist()


@tl.kernel
def leaks(x, out):
    n = tl.load_scalar(x, (0,))
    while n > 0:  # MARK-leak
        n = n - 1
        last = n
    tl.store(out, (0,), last)


@tl.kernel
def changes_type(x, out):
    n = tl.load_scalar(x, (0,))
    while n > 0:  # MARK-type
        n = tl.zeros((16,), tl.int32)
    tl.store(out, (0,), n)


@tl.kernel
def breaks(x, out):
    n = tl.load_scalar(x, (0,))
    while n > 0:  # MARK-break
        n = n - 1
        if n == 3:
            break
    tl.store(out, (0,), n)


@pytest.mark.parametrize("kernel, marker, match", [
    (leaks, "MARK-leak", r"'last' is first assigned inside this while loop, which runs on the GPU, and used after it"),
    (changes_type, "MARK-type", r"'n' is a scalar i32 before the while loop and a vector .* after its body: a carried value keeps its type"),
    (breaks, "MARK-break", r"known only when the kernel runs: Python cannot decide on it here \(a while loop"),
])
def test_errors_point_at_the_loop(kernel, marker, match):
    with pytest.raises(tl.LangError, match=match) as info:
        kernel.ir(np.zeros(1, np.int32), np.zeros(1, np.int32))
    line = next(i + 1 for i, text in enumerate(open(__file__).read().splitlines()) if marker in text)
    assert str(info.value).startswith(f"{__file__}:{line}:")


def test_while_loops_compile_for_both_targets():
    x = RNG.standard_normal((64, 64)).astype(np.float32)
    i32 = np.zeros(8, np.int32)
    for arch in ("sm_80", "sm_90"):
        ptx = locked_sum.compile(x[0], i32, x[0], N=64, arch=arch).asm["ptx"]
        assert "atom.acq_rel.gpu.global.cas.b32" in ptx and "atom.acq_rel.gpu.global.exch.b32" in ptx
        halvings.compile(x, x, i32, BM=32, BN=64, arch=arch)
        search.compile(i32, i32, i32, N=8, arch=arch)
        countdown.compile(i32, i32, arch=arch)


CALLS: list[int] = []


def _more(limit: int) -> bool:
    CALLS.append(1)
    return len(CALLS) <= limit


@tl.kernel(num_warps=1)
def python_test_once(out, LIM: tl.constexpr):
    """A test on Python values is evaluated once an iteration, as Python's while does (side effects too)."""
    c = 0
    while _more(LIM):
        c += 1
    tl.store(out, (0,), c)


@tl.kernel(num_warps=1)
def fibonacci(x, out):
    """Names swapped in one assignment: ``b`` is still a Python number where ``a`` is already carried."""
    n = tl.load_scalar(x, (0,))
    a, b = 0, 1
    while n > 0:
        a, b = b, a + b
        n -= 1
    c, d = 0, 1
    for _ in tl.range(0, tl.load_scalar(x, (0,))):
        c, d = d, c + d
    tl.store(out, (0,), a)
    tl.store(out, (1,), c)


def test_a_python_test_runs_once_an_iteration():
    CALLS.clear()
    out = np.zeros(1, np.int32)
    python_test_once.interpret(out, grid=(1,), LIM=6)
    assert out[0] == 6 and len(CALLS) == 7


@pytest.mark.parametrize("after", STAGES)
def test_names_a_loop_carries_in_one_assignment(after):
    out = np.zeros(2, np.int32)
    fibonacci.interpret(np.array([10], np.int32), out, grid=(1,), after=after)
    assert out.tolist() == [55, 55]


@tl.kernel(num_warps=1)
def chained(x, out):
    """``a < n < b`` on a run-time scalar, in an if and a while test: Python's ``(a < n) and (n < b)``."""
    n = tl.load_scalar(x, (0,))
    c = 0
    if 0 < n < 10:
        c = 100
    while 0 < n < 10:
        n += 1
        c += 1
    tl.store(out, (0,), c)


@tl.kernel(num_warps=1)
def for_else_break(out):
    """A ``break`` in a nested for's ``else:`` is the while's own: the while stays Python's."""
    k = 0
    while k < 100:
        for j in range(2):
            if j == 5:
                break
        else:
            k += 8
            if k > 7:
                break
    tl.store(out, (0,), k)


@pytest.mark.parametrize("after", STAGES)
def test_chained_comparisons_and_a_for_else_break(after):
    out = np.zeros(1, np.int32)
    chained.interpret(np.array([3], np.int32), out, grid=(1,), after=after)
    assert out[0] == 107
    for_else_break.interpret(out, grid=(1,), after=after)
    assert out[0] == 8
