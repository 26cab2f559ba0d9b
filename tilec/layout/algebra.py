"""The core layout algebra: coalesce, filter, composition, complement, inverses.

Each function is CuTe's operation of the same name, over ``Layout`` values. Where
CuTe would reject an input at compile time (a composition that is not
admissible, a complement of a non-injective layout) we raise ``ValueError``
naming the layouts involved.
"""

from __future__ import annotations

import math

from tilec.layout.int_tuple import IntTuple, ceil_div, flatten, is_int, is_tuple, prefix_product, product
from tilec.layout.layout import Layout, as_layout, make_layout

# A tiler is what composition and the divides accept on the right: a layout,
# an int (a compact layout of that size), None (keep the mode as is), or a
# tuple of tilers applied mode by mode.
Tiler = "Layout | int | None | tuple[Tiler, ...]"


def _from_modes(shapes: list[int], strides: list[int]) -> Layout:
    """A layout from flat modes: a single mode stays un-tupled, none is ``1:0``."""
    if not shapes:
        return Layout(1, 0)
    if len(shapes) == 1:
        return Layout(shapes[0], strides[0])
    return Layout(tuple(shapes), tuple(strides))


def expect_layout(name: str, value: object, what: str = "layout") -> Layout:
    """``value`` if it is a plain :class:`Layout`, else a TypeError naming the operation and the argument
    (a swizzled ``ComposedLayout`` is not one: its ``.layout`` is)."""
    if isinstance(value, Layout):
        return value
    hint = " (a swizzled layout: apply it to its .layout)" if hasattr(value, "inner") else ""
    raise TypeError(f"{name}: the {what} must be a Layout, got {type(value).__name__} {value!r}{hint}")


def _by_mode(fn, layout: Layout, profile: tuple, name: str) -> Layout:
    """Apply ``fn(mode, profile_mode)`` to the leading modes, keep the others."""
    if len(profile) > len(layout):
        raise ValueError(f"{name}: profile {profile} has more modes than layout {layout}")
    modes = [fn(layout[i], p) for i, p in enumerate(profile)]
    modes += [layout[i] for i in range(len(profile), len(layout))]
    return make_layout(*modes)


def coalesce(layout: Layout, profile: IntTuple | None = None) -> Layout:
    """The same function with as few modes as possible.

    With a tuple ``profile`` each leading mode is coalesced on its own, which
    keeps the rank; otherwise the result is flat.
    """
    expect_layout("coalesce", layout)
    if is_tuple(profile):
        return _by_mode(coalesce, layout, profile, "coalesce")
    shapes: list[int] = []
    strides: list[int] = []
    for s, d in zip(flatten(layout.shape), flatten(layout.stride)):
        if s == 1:
            continue
        if shapes and shapes[-1] * strides[-1] == d:
            shapes[-1] *= s
        else:
            shapes.append(s)
            strides.append(d)
    return _from_modes(shapes, strides)


def filter(layout: Layout, profile: IntTuple | None = None) -> Layout:  # noqa: A001 - CuTe's name
    """Coalesce after dropping broadcast (stride-0) modes."""
    expect_layout("filter", layout)
    if is_tuple(profile):
        return _by_mode(filter, layout, profile, "filter")
    kept = [(s, d) for s, d in zip(flatten(layout.shape), flatten(layout.stride)) if d != 0 and s != 1]
    return coalesce(_from_modes([s for s, _ in kept], [d for _, d in kept]))


def filter_zeros(layout: Layout) -> Layout:
    """Same profile, with every stride-0 mode's extent set to 1."""

    def walk(s: IntTuple, d: IntTuple) -> IntTuple:
        if is_tuple(s):
            return tuple(walk(a, b) for a, b in zip(s, d))
        return 1 if d == 0 else s

    return Layout(walk(layout.shape, layout.stride), layout.stride)


def composition(a, b):
    """``R = A o B``: ``R(i) == A(B(i))`` on the domain of ``B``.

    ``a`` may be a layout, a swizzle or a composed layout; ``b`` a layout, an
    int, ``None`` or a tuple of those applied by mode.
    """
    if not isinstance(a, Layout):
        if not hasattr(a, "compose"):  # a swizzle or a composed layout composes itself
            expect_layout("composition", a, "outer layout (a)")
        return a.compose(b)
    if b is None:
        return a
    if is_int(b):
        return composition(a, Layout(b))
    if isinstance(b, tuple):
        return _by_mode(composition, a, b, "composition")
    if not isinstance(b, Layout):
        raise ValueError(f"composition: cannot compose layout {a} with {b!r}")
    if is_tuple(b.shape):
        result = make_layout(*(composition(a, mode) for mode in b))
        _check_modes_add(a, b)
        return result
    return _compose_single_mode(a, b)


def _check_modes_add(a: Layout, b: Layout) -> None:
    """``A o (B0, B1, ...) = (A o B0, A o B1, ...)`` only if ``A(x + y) == A(x) + A(y)``.

    That holds when adding offsets of different modes of ``B`` never carries
    between the modes of (coalesced) ``A``: digit by digit, the largest digits
    the modes of ``B`` reach must sum below ``A``'s extent. Tilers whose modes
    take separate digits of ``A`` pass; ``(2,2):(2,2)`` on ``(4,2):(1,100)``
    (where ``B(3) = 4`` but ``A(4) != A(2) + A(2)``) does not.
    """
    flat = coalesce(a)
    extents = flatten(flat.shape)[:-1]  # the last mode of A is unbounded: no carry out of it
    if not extents:
        return
    modes = [(s, d) for s, d in zip(flatten(b.shape), flatten(b.stride)) if s != 1 and d != 0]
    span = 1

    def top_digit(s: int, d: int, span: int, extent: int) -> int:
        """The largest digit ``(d * i // span) % extent`` over ``i < s``, in time bounded by the extent, not s."""
        last = d * (s - 1) // span
        if last < extent:  # no wrap: the digit grows with the coordinate
            return last
        if d <= span:  # the digit grows by at most 1 a step, so it passes through extent - 1
            return extent - 1
        period = extent * span // math.gcd(d, extent * span)  # the digits repeat after this many steps
        top = 0
        for i in range(min(s, period)):
            top = max(top, (d * i // span) % extent)
            if top == extent - 1:
                break
        return top

    for extent in extents:
        top = sum(top_digit(s, d, span, extent) for s, d in modes)
        if top >= extent:
            raise ValueError(
                f"composition: {a} o {b} is not admissible: offsets of different modes of {b} "
                f"carry across the mode of extent {extent}"
            )
        span *= extent


def _compose_single_mode(a: Layout, b: Layout) -> Layout:
    """``A o (s:d)``: take every ``d``-th element of ``A``, ``s`` times."""
    s, d = b.shape, b.stride
    if d == 0:
        return Layout(s, 0)
    if d < 0:
        raise ValueError(f"composition: negative stride in {b} is not supported")
    flat = coalesce(a)
    a_shapes, a_strides = flatten(flat.shape), flatten(flat.stride)
    shapes: list[int] = []
    strides: list[int] = []
    rest_s, rest_d = s, d
    for ms, md in zip(a_shapes[:-1], a_strides[:-1]):
        if ms % rest_d != 0 and rest_d % ms != 0:
            raise ValueError(
                f"composition: {a} o {b} is not admissible: stride {rest_d} and extent {ms} do not divide"
            )
        take = min(max(1, ms // rest_d), rest_s)
        if rest_s % take != 0:
            raise ValueError(
                f"composition: {a} o {b} is not admissible: {take} elements of mode {ms} do not divide {rest_s}"
            )
        if take != 1:
            shapes.append(take)
            strides.append(rest_d * md)
        rest_s //= take
        rest_d = ceil_div(rest_d, ms)
    if rest_s != 1 or not shapes:
        shapes.append(rest_s)
        strides.append(rest_d * a_strides[-1])
    return _from_modes(shapes, strides)


def complement(layout: Layout | IntTuple, cotarget: IntTuple = 1) -> Layout:
    """The layout that fills the gaps of an injective ``layout`` up to ``cotarget``.

    Its modes are sorted by stride and its image is disjoint from ``layout``'s,
    so that ``(layout, complement)`` is a bijection onto ``[0, cosize)`` with
    cosize at least ``size(cotarget)``.
    """
    layout = as_layout(layout)
    target = product(cotarget)
    modes = sorted(
        (d, s) for s, d in zip(flatten(layout.shape), flatten(layout.stride)) if d != 0 and s != 1
    )
    shapes: list[int] = []
    strides: list[int] = []
    covered = 1
    for d, s in modes:
        if d < 0:
            raise ValueError(f"complement: negative stride in layout {layout} is not supported")
        if d < covered:
            raise ValueError(
                f"complement: layout {layout} is not injective, or its modes interleave "
                f"(stride {d} falls inside the span {covered} of the smaller strides)"
            )
        if d % covered != 0:
            raise ValueError(
                f"complement: layout {layout} has no complement: stride {d} is not a multiple of {covered}"
            )
        shapes.append(d // covered)
        strides.append(covered)
        covered = s * d
    shapes.append(ceil_div(target, covered))
    strides.append(covered)
    return coalesce(_from_modes(shapes, strides))


def right_inverse(layout: Layout | IntTuple) -> Layout:
    """``R`` with ``layout(R(i)) == i`` for every ``i`` in ``R``'s (largest possible) domain."""
    layout = as_layout(layout)
    flat_shape, flat_stride = flatten(layout.shape), flatten(layout.stride)
    compact = flatten(prefix_product(layout.shape))
    shapes: list[int] = []
    strides: list[int] = []
    reached = 1
    for d, s, cs in sorted(zip(flat_stride, flat_shape, compact)):
        if s == 1 or d == 0:  # as CuTe: broadcast modes reach nothing new
            continue
        if d != reached:
            break
        shapes.append(s)
        strides.append(cs)
        reached = s * d
    return coalesce(_from_modes(shapes, strides))


def left_inverse(layout: Layout | IntTuple) -> Layout:
    """``L`` with ``L(layout(i)) == i`` for every ``i`` in ``layout``'s domain."""
    layout = as_layout(layout)
    return right_inverse(make_layout(layout, complement(layout)))
