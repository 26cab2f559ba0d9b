"""``@tl.func`` helpers (Triton's ``@triton.jit`` functions a kernel calls): their ``tl.range`` loops
and run-time ``if``s are traced as the kernel's own; a ``@tl.kernel`` called from a kernel is inlined
the same way. Both interpreters (tile level, lane by lane after tile-distribute) against numpy,
outputs poisoned with NaN."""

from __future__ import annotations

import numpy as np
import pytest

import tilec.lang as tl

RNG = np.random.default_rng(3030)
STAGES = (None, "tile-distribute")


@tl.func
def clipped_row_sums(x, r, N: int, BN: int, limit):
    """Each row's sum over N columns, BN at a time (a loop), clipped to ``limit`` only where the
    block's largest sum passes it (a run-time if)."""
    acc = tl.zeros((16,), axis=0)
    for j in tl.range(0, N, BN):
        acc = acc + tl.row_sum(tl.load(x, (r, j), shape=(16, BN)))
    if tl.max(acc) > limit:
        acc = tl.minimum(acc, limit)
    return acc


@tl.kernel
def row_sums(x, o, limit, N: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(0) * 16
    tl.store(o, (r,), clipped_row_sums(x, r, N, BN, limit))


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("limit", [1e9, 2.0])
def test_a_helper_with_a_loop_and_a_run_time_if(after, limit):
    x = RNG.standard_normal((32, 96)).astype(np.float32)
    o = np.full(32, np.nan, np.float32)
    row_sums.interpret(x, o, limit, grid=(2,), N=96, BN=32, after=after)
    want = x.astype(np.float64).sum(1).reshape(2, 16)
    want = np.where(want.max(1, keepdims=True) > limit, np.minimum(want, limit), want).ravel()
    assert np.abs(o - want).max() < 1e-4
    ir = str(row_sums.ir(x, o, limit, N=96, BN=32))
    assert "scf.for" in ir and "scf.if" in ir  # traced, not unrolled or decided in Python


@tl.kernel
def scaled_copy(x, o, s, N: tl.constexpr):
    t = tl.load(x, (0,), shape=(N,))
    if s < 0:
        t = -t
    tl.store(o, (0,), t * s)


@tl.kernel
def calls_a_kernel(x, o, s, N: tl.constexpr):
    scaled_copy(x, o, s, N)  # inlined, as one @triton.jit function calls another


@pytest.mark.parametrize("after", STAGES)
def test_a_kernel_called_from_a_kernel_is_inlined(after):
    x = RNG.standard_normal(64).astype(np.float32)
    for s in (1.5, -2.0):
        o = np.full_like(x, np.nan)
        calls_a_kernel.interpret(x, o, s, grid=(1,), N=64, after=after)
        assert np.abs(o - (-x if s < 0 else x) * s).max() < 1e-6


def test_helpers_outside_a_kernel_say_how_they_run():
    with pytest.raises(tl.LangError, match="clipped_row_sums: a @tl.func helper runs inside a @tl.kernel"):
        clipped_row_sums(None, 0, 16, 16, 1.0)
    with pytest.raises(TypeError, match=r"scaled_copy: launch a kernel with scaled_copy\[grid\]"):
        scaled_copy(None, None, 1.0, 16)
    with pytest.raises(TypeError, match="@tl.func decorates a Python function"):
        tl.func(3)
    assert repr(clipped_row_sums) == "<tl.func clipped_row_sums>" and clipped_row_sums.__doc__.startswith("Each row")
