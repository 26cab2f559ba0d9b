"""Hierarchical integer tuples (CuTe's IntTuple), the vocabulary of layouts.

An IntTuple is an ``int`` or a (possibly nested) ``tuple`` of IntTuples. Shapes,
strides and coordinates are all IntTuples; the functions here are the small
pieces every layout operation is built from. Coordinates are colexicographic:
the leftmost mode varies fastest, as in CuTe.
"""

from __future__ import annotations

import numbers

from functools import reduce
from typing import Union

IntTuple = Union[int, tuple["IntTuple", ...]]


def is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def is_tuple(x: object) -> bool:
    return isinstance(x, tuple)


def flatten(t: IntTuple) -> tuple[int, ...]:
    """The leaves of ``t`` in order, as a flat tuple."""
    if is_tuple(t):
        return tuple(leaf for mode in t for leaf in flatten(mode))
    return (t,)


def product(t: IntTuple) -> int:
    return reduce(lambda acc, v: acc * v, flatten(t), 1)


def rank(t: IntTuple) -> int:
    return len(t) if is_tuple(t) else 1


def depth(t: IntTuple) -> int:
    if is_tuple(t):
        return 1 + max((depth(m) for m in t), default=0)
    return 0


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Whether ``a`` and ``b`` have the same hierarchical profile."""
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def unflatten(flat: tuple[int, ...], profile: IntTuple) -> IntTuple:
    """Rebuild a tuple with the nesting of ``profile`` from flat leaves."""
    leaves = iter(flat)

    def build(p: IntTuple) -> IntTuple:
        if is_tuple(p):
            return tuple(build(m) for m in p)
        return next(leaves)

    return build(profile)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def shape_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """Divide shape ``a`` by ``b`` from the left, mode by mode (CuTe's shape_div).

    An int divisor is consumed by the leading modes: ``shape_div((4,6), 8)`` is
    ``(1,3)``. Each step needs one of the two to divide the other.
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise ValueError(f"shape_div: ranks differ in {a} and {b}")
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for mode in a:
            out.append(shape_div(mode, b))
            b = shape_div(b, product(mode))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if a % b != 0 and b % a != 0:
        raise ValueError(f"shape_div: neither of {a} and {b} divides the other")
    return ceil_div(a, b)


def prefix_product(shape: IntTuple, init: int = 1) -> IntTuple:
    """Exclusive prefix product congruent to ``shape``: compact column-major strides."""
    if is_tuple(shape):
        out = []
        for mode in shape:
            out.append(prefix_product(mode, init))
            init *= product(mode)
        return tuple(out)
    return init


def suffix_product(shape: IntTuple, init: int = 1) -> IntTuple:
    """Compact row-major strides congruent to ``shape`` (rightmost mode fastest)."""
    if is_tuple(shape):
        out = []
        for mode in reversed(shape):
            out.append(suffix_product(mode, init))
            init *= product(mode)
        return tuple(reversed(out))
    return init


def idx2crd(idx: IntTuple, shape: IntTuple) -> IntTuple:
    """The natural coordinate of linear index ``idx`` in ``shape`` (colexicographic).

    The last mode is not reduced modulo its extent, so indices past the end
    land in an extended last mode, as CuTe defines.
    """
    if is_tuple(idx):
        if not is_tuple(shape) or len(idx) != len(shape):
            raise ValueError(f"idx2crd: coordinate {idx} does not match shape {shape}")
        return tuple(idx2crd(i, s) for i, s in zip(idx, shape))
    if is_tuple(shape):
        out = []
        for k, mode in enumerate(shape):
            n = product(mode)
            if k == len(shape) - 1:
                out.append(idx2crd(idx, mode))
            else:
                out.append(idx2crd(idx % n, mode))
                idx //= n
        return tuple(out)
    return idx


def idx2crd_strided(idx: int, shape: IntTuple, stride: IntTuple) -> IntTuple:
    """The coordinate whose leaves are ``(idx // stride) % shape``: inverts a bijective layout."""
    if is_tuple(shape):
        return tuple(idx2crd_strided(idx, s, d) for s, d in zip(shape, stride))
    return (idx // stride) % shape if stride else 0


def crd2idx(crd: IntTuple | None, shape: IntTuple, stride: IntTuple) -> int:
    """The offset of coordinate ``crd`` in the layout ``shape:stride``.

    ``crd`` may be less nested than ``shape``: an int in place of a tuple mode is
    first split colexicographically over that mode.
    """
    if crd is None:
        crd = 0
    if not is_tuple(crd) and (type(crd) is bool or not isinstance(crd, numbers.Integral)):
        raise TypeError(f"crd2idx: a coordinate is an int or a tuple of them, got {crd!r}")
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise ValueError(f"crd2idx: coordinate {crd} does not match shape {shape}")
        return sum(crd2idx(c, s, d) for c, s, d in zip(crd, shape, stride))
    if is_tuple(shape):
        return crd2idx(idx2crd(crd, shape), shape, stride)
    return crd * stride


def compact_idx(crd: IntTuple, shape: IntTuple) -> int:
    """Colexicographic linear index of ``crd`` in ``shape`` (inverse of idx2crd)."""
    return crd2idx(crd, shape, prefix_product(shape))


def has_none(t: object) -> bool:
    if is_tuple(t):
        return any(has_none(m) for m in t)
    return t is None


def slice_modes(crd: object, t: IntTuple) -> tuple:
    """The modes of ``t`` where ``crd`` holds ``None`` (CuTe's ``_``), flattened one level."""
    if is_tuple(crd):
        if not is_tuple(t) or len(crd) != len(t):
            raise ValueError(f"slice: coordinate {crd} does not match {t}")
        return tuple(m for c, s in zip(crd, t) for m in slice_modes(c, s))
    if crd is None:
        return (t,)
    return ()


def dice_modes(crd: object, t: IntTuple) -> tuple:
    """The modes of ``t`` where ``crd`` holds an int (the complement of slice)."""
    if is_tuple(crd):
        if not is_tuple(t) or len(crd) != len(t):
            raise ValueError(f"dice: coordinate {crd} does not match {t}")
        return tuple(m for c, s in zip(crd, t) for m in dice_modes(c, s))
    if crd is None:
        return ()
    return (t,)


def fill_none(crd: object) -> IntTuple:
    """Replace every ``None`` in ``crd`` by 0."""
    if is_tuple(crd):
        return tuple(fill_none(c) for c in crd)
    return 0 if crd is None else crd


def to_text(t: IntTuple) -> str:
    """CuTe's printed form: ``(8,(4,2))`` with no spaces."""
    if is_tuple(t):
        return "(" + ",".join(to_text(m) for m in t) + ")"
    return str(t)
