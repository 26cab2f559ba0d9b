"""Hypothesis strategies and brute-force helpers for the layout-algebra tests.

Every generated layout is small (a few hundred elements at most) so that the
properties can be checked by enumerating whole domains. Shapes are
hierarchical, up to depth 2 by default, and may contain extent-1 modes.

Kinds of strides:
- ``any``: independent small strides, 0 included (broadcast, non-injective).
- ``bijective``: the compact strides of a random permutation of the modes, so
  the layout is a bijection onto ``[0, size)``.
- ``injective``: like ``bijective`` but with gaps (each stride a multiple of
  the span below it), so the layout is injective and has a complement.
- ``pow2``: power-of-two extents and strides (0 included).
"""

from __future__ import annotations

import os
from itertools import product as cartesian

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tilec.layout import Layout
from tilec.layout.int_tuple import flatten, is_tuple, product, unflatten

# Example budgets: the whole folder has to run in about a minute on 2 cores.
# TILEC_LAYOUT_EXAMPLES=20 multiplies every budget by 20 for a deep (slow) run.
_SCALE = float(os.environ.get("TILEC_LAYOUT_EXAMPLES", "1"))


def _budget(n: int) -> settings:
    return settings(
        max_examples=max(1, int(n * _SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


FEW = _budget(60)
SOME = _budget(150)
MANY = _budget(300)


@st.composite
def shapes(draw, max_depth: int = 2, max_rank: int = 3, max_size: int = 256, leaf_max: int = 6, pow2: bool = False):
    """A hierarchical shape whose size stays within ``max_size``."""
    budget = [max_size]

    def leaf() -> int:
        hi = min(leaf_max, budget[0])
        if pow2:
            choices = [v for v in (1, 2, 4, 8) if v <= hi]
            v = draw(st.sampled_from(choices))
        else:
            v = draw(st.integers(1, max(1, hi)))
        budget[0] = max(1, budget[0] // v)
        return v

    def build(depth: int, top: bool):
        if depth == 0 or (not top and draw(st.integers(0, 2)) == 0):
            return leaf()
        n = draw(st.integers(1, max_rank))
        return tuple(build(depth - 1, False) for _ in range(n))

    if draw(st.integers(0, 5)) == 0:
        return leaf()
    return build(max_depth, True)


def _permuted_compact(draw, flat: tuple[int, ...], gaps: bool) -> tuple[int, ...]:
    order = draw(st.permutations(range(len(flat))))
    strides = [0] * len(flat)
    covered = 1
    for i in order:
        if gaps:
            covered *= draw(st.sampled_from((1, 1, 2, 3)))
        strides[i] = covered
        covered *= flat[i]
    return tuple(strides)


@st.composite
def layouts(draw, kind: str = "any", max_depth: int = 2, max_rank: int = 3, max_size: int = 256, leaf_max: int = 6):
    """A random hierarchical ``Layout`` of the given ``kind`` (see the module docstring)."""
    shape = draw(shapes(max_depth, max_rank, max_size, leaf_max, pow2=(kind == "pow2")))
    flat = flatten(shape)
    if kind == "any":
        strides = tuple(draw(st.integers(0, 12)) for _ in flat)
    elif kind == "pow2":
        strides = tuple(draw(st.sampled_from((0, 1, 2, 4, 8, 16, 32))) for _ in flat)
    elif kind in ("bijective", "injective"):
        strides = _permuted_compact(draw, flat, gaps=(kind == "injective"))
        if kind == "injective":
            # extent-1 modes may carry any stride without hurting injectivity
            strides = tuple(draw(st.integers(0, 9)) if s == 1 else d for s, d in zip(flat, strides))
    else:
        raise AssertionError(kind)
    return Layout(shape, unflatten(strides, shape))


@st.composite
def pow2_injective(draw, max_size: int = 64):
    """An injective layout with power-of-two extents and strides (each mode its own bits)."""
    shape = draw(shapes(2, 3, max_size, 8, pow2=True))
    flat = flatten(shape)
    order = draw(st.permutations(range(len(flat))))
    strides = [0] * len(flat)
    covered = 1
    for i in order:
        covered *= draw(st.sampled_from((1, 1, 2, 4)))
        strides[i] = covered
        covered *= flat[i]
    return Layout(shape, unflatten(tuple(strides), shape))


def prefix_tile(draw, layout: Layout) -> int:
    """A tile size that splits ``layout`` admissibly: a prefix of its coalesced shape times a divisor."""
    from tilec.layout import coalesce

    flat = flatten(coalesce(layout).shape)
    j = draw(st.integers(0, len(flat) - 1))
    e = draw(st.sampled_from([d for d in range(1, flat[j] + 1) if flat[j] % d == 0]))
    return product(flat[:j]) * e


# -- brute force --------------------------------------------------------------
def values(layout, n: int | None = None) -> list[int]:
    """``[layout(i) for i < n]`` (default: the whole domain)."""
    return [layout(i) for i in range(layout.size() if n is None else n)]


def image(layout) -> set[int]:
    return set(values(layout))


def is_injective(layout) -> bool:
    v = values(layout)
    return len(set(v)) == len(v)


def is_bijective_onto_range(layout) -> bool:
    """Whether ``layout`` maps its domain one-to-one onto ``[0, size)``."""
    return sorted(values(layout)) == list(range(layout.size()))


def compatible(a, b) -> bool:
    """CuTe's ``compatible(A, B)``: every coordinate of shape ``a`` is one of shape ``b``."""
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return product(b) == a


def all_coords(shape):
    """Every natural (fully nested) coordinate of ``shape``, colexicographic (first leaf fastest).

    Built by enumeration, independently of ``idx2crd``.
    """
    leaves = flatten(shape)
    flat = [tuple(reversed(c)) for c in cartesian(*(range(n) for n in reversed(leaves)))]
    return [unflatten(c, shape) for c in flat]
