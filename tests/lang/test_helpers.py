"""``@tl.func`` helpers (Triton's ``@triton.jit`` functions a kernel calls): their ``tl.range`` loops
and run-time ``if``s are traced as the kernel's own; a ``@tl.kernel`` called from a kernel is inlined
the same way. Early returns (``if pid >= n: return``, a helper returning from its branches) and
``and``/``or``/``not`` on run-time scalars. Both interpreters (tile level, lane by lane after
tile-distribute) against numpy, outputs poisoned with NaN."""

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


# ---------------------------------------------------------------- early returns, and / or / not


@tl.kernel
def early_exit(x, o, n, BN: tl.constexpr, DOUBLE: tl.constexpr = True):
    """Triton's early exit: blocks past ``n`` leave at once."""
    pid = tl.program_id(0)
    if pid >= n:
        return
    t = tl.load(x, (pid * BN,), shape=(BN,))
    if not DOUBLE:  # a Python condition with a return: as Python runs it
        tl.store(o, (pid * BN,), t)
        return
    tl.store(o, (pid * BN,), t * 2.0)


@pytest.mark.parametrize("after", STAGES)
@pytest.mark.parametrize("double", [True, False])
def test_an_early_exit(after, double):
    x = RNG.standard_normal(64).astype(np.float32)
    o = np.full_like(x, np.nan)
    early_exit.interpret(x, o, 3, grid=(4,), BN=16, DOUBLE=double, after=after)
    assert np.abs(o[:48] - x[:48] * (2 if double else 1)).max() == 0 and np.isnan(o[48:]).all()


@tl.func
def pick(v, limit):
    """Returns from both branches of a run-time if, and early with a pair."""
    if tl.sum(v) > limit:
        return v * 2.0, 1.0
    if tl.sum(v) < -limit:
        return v - 1.0, -1.0
    return v, 0.0


@tl.kernel
def uses_pick(x, o, which, limit, BN: tl.constexpr):
    pid = tl.program_id(0)
    v, w = pick(tl.load(x, (pid * BN,), shape=(BN,)), limit)
    tl.store(o, (pid * BN,), v)
    tl.store(which, (pid,), w)


@pytest.mark.parametrize("after", STAGES)
def test_a_helper_that_returns_from_its_branches(after):
    x = (RNG.standard_normal(64) + np.repeat([3.0, -3.0, 0.0, 0.1], 16)).astype(np.float32)
    o, which = np.full_like(x, np.nan), np.full(4, np.nan, np.float32)
    uses_pick.interpret(x, o, which, 8.0, grid=(4,), BN=16, after=after)
    sums = x.reshape(4, 16).astype(np.float64).sum(1)
    want_w = np.where(sums > 8, 1.0, np.where(sums < -8, -1.0, 0.0))
    want = x.reshape(4, 16) * np.where(want_w == 1, 2.0, 1.0)[:, None] - (want_w == -1)[:, None]
    assert (which == want_w).all() and np.abs(o - want.ravel()).max() < 1e-6


@tl.kernel
def conditions(x, o, n, BN: tl.constexpr, SCALE: tl.constexpr = None):
    """and / or / not on run-time scalars (Triton's conditions), and on Python values as Python's."""
    pid = tl.program_id(0)
    t = tl.load(x, (pid * BN,), shape=(BN,))
    scale = SCALE or 3.0  # a Python `or`: None picks 3.0
    r = t
    if pid < n and tl.sum(t) > 0.0:
        r = t * scale
    if not pid < n or tl.max(t) < -1.0:
        r = r - 100.0
    tl.store(o, (pid * BN,), r)


@pytest.mark.parametrize("after", STAGES)
def test_and_or_not_on_run_time_scalars(after):
    x = RNG.standard_normal(64).astype(np.float32)
    o = np.full_like(x, np.nan)
    conditions.interpret(x, o, 3, grid=(4,), BN=16, after=after)
    t = x.reshape(4, 16).astype(np.float64)
    pid = np.arange(4)[:, None]
    r = np.where((pid < 3) & (t.sum(1, keepdims=True) > 0), t * 3.0, t)
    r = np.where((pid >= 3) | (t.max(1, keepdims=True) < -1), r - 100, r)
    assert np.abs(o - r.ravel()).max() < 1e-5
    with pytest.raises(tl.LangError, match="'and' on a vector .* use & for elementwise masks"):
        mask_and.ir(x, o, BN=16)


@tl.kernel
def mask_and(x, o, BN: tl.constexpr):
    t = tl.load(x, (0,), shape=(BN,))
    tl.store(o, (0,), tl.where(t > 0 and t < 1, t, 0.0))


@tl.kernel
def walrus_in_and(x, o, N: tl.constexpr):
    t = tl.load(x, (0,), shape=(N,))
    if N > 0 and (s := 2.0):  # a walrus on the right of and binds in the kernel, as Python's
        t = t * s
    tl.store(o, (0,), t)


@tl.func
def doubled_or_none(v, C: int):
    if C > 0:
        return v * 2.0  # the other way falls off the end: None, as Python returns


@tl.kernel
def falls_off(x, o, C: tl.constexpr):
    t = tl.load(x, (0,), shape=(8,))
    r = doubled_or_none(t, C)
    tl.store(o, (0,), t if r is None else r)


def test_python_semantics_the_rewrite_keeps():
    """Found by session 30's review: a walrus inside and/or, a helper that falls off its end."""
    x = RNG.standard_normal(8).astype(np.float32)
    o = np.full_like(x, np.nan)
    walrus_in_and.interpret(x, o, grid=(1,), N=8)
    assert (o == x * 2).all()
    for c, want in ((1, x * 2), (0, x)):
        o = np.full_like(x, np.nan)
        falls_off.interpret(x, o, grid=(1,), C=c)
        assert (o == want).all()
    i, j = tl.swizzle2d(1, 1, 8, 3, 2)  # Python numbers in, Python numbers out
    assert (i, j) == (0, 2)
