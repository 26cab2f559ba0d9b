"""The 8-bit floats' encodings (OCP FP8: ``f8E4M3FN``, ``f8E5M2``): values of bit patterns and the
nearest pattern of a value. Plain numpy, used by the interpreters (which hold FP8 values as float32) and
by the LLVM translation (an FP8 constant is its byte)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

FLOAT8_FORMATS = {"f8E4M3FN": (4, 3), "f8E5M2": (5, 2)}
"""Exponent and mantissa bits of the FP8 types, by their IR names (``e4m3``/``e5m2`` in PTX)."""


@lru_cache(maxsize=None)
def _f8_table(name: str) -> np.ndarray:
    """The value of each of the 256 bit patterns, float64. E4M3FN has no infinities (S.1111.111 is
    NaN, the largest value 448); E5M2 is IEEE-like (exponent 31: infinity or NaN, largest 57344)."""
    e_bits, m_bits = FLOAT8_FORMATS[name]
    bias = (1 << (e_bits - 1)) - 1
    codes = np.arange(256)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exp = (codes >> m_bits) & ((1 << e_bits) - 1)
    man = codes & ((1 << m_bits) - 1)
    frac = man / float(1 << m_bits)
    values = sign * np.where(exp == 0, frac * 2.0 ** (1 - bias), (1 + frac) * 2.0 ** (exp - bias))
    top = exp == (1 << e_bits) - 1
    if name == "f8E4M3FN":
        values[top & (man == (1 << m_bits) - 1)] = np.nan
    else:
        values[top] = np.where(man[top] == 0, sign[top] * np.inf, np.nan)
    values.setflags(write=False)
    return values


def f8_values(bits: Any, name: str) -> np.ndarray:
    """FP8 bit patterns (uint8) of type ``name`` as float64 values."""
    return _f8_table(name)[np.asarray(bits, dtype=np.uint8)]


def f8_bits(x: Any, name: str) -> np.ndarray:
    """Float values rounded to the nearest FP8 value of type ``name`` (ties to the even pattern), as uint8
    bits. Past the largest finite value by more than half a step (E4M3FN: 464 still rounds to 448, whose
    pattern is even; E5M2: from 61440 on): NaN for E4M3FN (it has no infinity), infinity for E5M2, as a
    conversion without ``.satfinite`` gives (torch's too); NaN stays NaN."""
    table = _f8_table(name)
    positive = table[:128]
    finite = np.flatnonzero(np.isfinite(positive))  # codes 0 .. largest, values increasing
    steps = positive[finite]
    a = np.asarray(x, dtype=np.float64)
    mag = np.abs(a)
    hi = np.clip(np.searchsorted(steps, mag), 1, len(steps) - 1)
    lo = hi - 1
    with np.errstate(invalid="ignore"):  # infinity's distances (inf - inf): overflow below decides for it
        below, above = mag - steps[lo], steps[hi] - mag
    pick = np.where(below < above, lo, np.where(above < below, hi, np.where(finite[lo] % 2 == 0, lo, hi)))
    code = finite[pick]
    limit = steps[-1] + (steps[-1] - steps[-2]) / 2  # halfway past the largest value: a tie goes to the even
    overflow = (mag > limit) | ((mag == limit) & (finite[-1] % 2 == 1))  # code (E4M3FN's 448 is, E5M2's is not)
    big = 0x7F if name == "f8E4M3FN" else 0x7C
    code = np.where(overflow, big, code)
    code = np.where(np.isnan(a), 0x7F, code)
    return (code | np.where(np.signbit(a), 0x80, 0)).astype(np.uint8)


def f8_max(name: str) -> float:
    """The largest finite value of FP8 type ``name``: 448 (E4M3FN), 57344 (E5M2)."""
    table = _f8_table(name)[:128]
    return float(table[np.isfinite(table)].max())


def saturated_f8(x: Any, name: str) -> np.ndarray:
    """``x`` clamped to FP8 type ``name``'s finite range, NaN kept: what PTX's ``cvt.rn.satfinite`` into
    FP8 (the only conversion into FP8 it has, and Triton's) rounds from, so that past the largest value,
    infinities included, it gives the largest value."""
    a = np.asarray(x, dtype=np.float64)
    top = f8_max(name)
    return np.where(np.isnan(a), a, np.clip(a, -top, top))
