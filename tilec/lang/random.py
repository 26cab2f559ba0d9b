"""Counter-based random numbers in kernels: Triton's ``tl.rand``, ``tl.randn``, ``tl.randint``,
``tl.randint4x`` (Philox4x32 with ten rounds, as Random123 defines it and Triton computes it), so
that ``tl.rand(seed, offsets)`` gives the numbers Triton's does for the same seed and offsets.

Each element's numbers are a function of ``(seed, offset)`` alone: no state, the same in every run,
on any block and warp split (the low-memory dropout of Triton's tutorial regenerates its mask in
the backward pass from the seed). Written in the language itself: a 32-bit word is an int32 with
its bits (tilec has no unsigned type; adds and xors are the same), and a round's product is the
64-bit product of the zero-extended words, whose high and low words are ``mulhi`` and ``mullo``.
"""

from __future__ import annotations

import math
from typing import Any

from tilec.lang.compat import static_assert
from tilec.lang.dtypes import float32, int32, int64
from tilec.lang.ops import cos, log, sin, sqrt, where
from tilec.lang.tracing import error
from tilec.lang.values import Expanded, Value

ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
"""Philox4x32's round multipliers."""
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85
"""Philox4x32's key increments (the golden ratio's and sqrt(3) - 1's bits)."""
WORD = 0xFFFFFFFF
DEFAULT_ROUNDS = 10


def _word(x: Any) -> Any:
    """``x`` as a 32-bit word: an int32 with its bits (a Python int as the int32 of its low word)."""
    if isinstance(x, int):
        return _signed(x & WORD)
    if not isinstance(x, (Value, Expanded)):
        raise error(f"tl.rand's seed and offsets are integers (Python ints or traced), got {x!r}")
    if x.dtype.is_float:
        raise error(f"tl.rand's seed and offsets are integers, got {x.dtype} values")
    if x.dtype.bits == 64:
        raise error("tl.philox's counters are 32-bit words here (Triton takes its 64-bit Philox for 64-bit "
                    "counters, which tilec does not have; tl.rand and tl.randint take 64-bit offsets)")
    return x if x.dtype == int32 else x.to(int32)  # the low word's bits


def _signed(word: int) -> int:
    return word - (1 << 32) if word >> 31 else word


def _product(word: Any, factor: int) -> Any:
    """``word`` (int32 bits) times a 32-bit ``factor`` as the 64-bit product of unsigned words: the zero
    extension is an ``and`` of the sign extension (LLVM makes the pair one ``mul.wide.u32``)."""
    if isinstance(word, int):
        return (word & WORD) * factor
    return (word.to(int64) & WORD) * factor


def _high(p: Any) -> Any:
    return _signed((p >> 32) & WORD) if isinstance(p, int) else (p >> 32).to(int32)


def _low(p: Any) -> Any:
    return _signed(p & WORD) if isinstance(p, int) else p.to(int32)


def _add(word: Any, increment: int) -> Any:
    """``word + increment`` modulo 2**32 (int32 adds wrap)."""
    return _signed((word + increment) & WORD) if isinstance(word, int) else word + _signed(increment)


def philox(seed: Any, c0: Any, c1: Any, c2: Any, c3: Any, n_rounds: int = DEFAULT_ROUNDS) -> tuple:
    """Philox4x32's counter ``(c0, c1, c2, c3)`` under key ``seed`` (its low and high words), as four
    int32 values with the words' bits."""
    static_assert(isinstance(n_rounds, int) and n_rounds > 0, "n_rounds is a positive Python int")
    if isinstance(seed, int):
        k0, k1 = _signed(seed & WORD), _signed((seed >> 32) & WORD)
    elif isinstance(seed, (Value, Expanded)) and not seed.dtype.is_float:
        wide = seed.to(int64)
        k0, k1 = wide.to(int32), (wide >> 32).to(int32)
    else:
        raise error(f"tl.rand's seed is an integer (a Python int or a traced scalar), got {seed!r}")
    c0, c1, c2, c3 = (_word(c) for c in (c0, c1, c2, c3))
    for _ in range(n_rounds):
        p0, p2 = _product(c0, ROUND_A), _product(c2, ROUND_B)  # high word: mulhi, low word: mullo
        c0, c1, c2, c3 = _high(p2) ^ c1 ^ k0, _low(p2), _high(p0) ^ c3 ^ k1, _low(p0)
        k0, k1 = _add(k0, KEY_A), _add(k1, KEY_B)
    return c0, c1, c2, c3


def randint4x(seed: Any, offset: Any, n_rounds: int = DEFAULT_ROUNDS) -> tuple:
    """Four random 32-bit words per element of ``offset`` (int32 values, as Triton's ``uint32`` bits). A
    64-bit offset is the counter's two low words (its low and high halves), as Triton's."""
    if isinstance(offset, (Value, Expanded)) and not offset.dtype.is_float and offset.dtype.bits == 64:
        low, high = offset.to(int32), (offset >> 32).to(int32)  # the conversions keep the low word's bits
        zero = low * 0
        return philox(seed, low, high, zero, zero, n_rounds)
    zero = offset * 0 if isinstance(offset, (Value, Expanded)) else 0
    return philox(seed, offset, zero, zero, zero, n_rounds)


def randint(seed: Any, offset: Any, n_rounds: int = DEFAULT_ROUNDS) -> Any:
    """One random 32-bit word per element of ``offset`` (int32, Triton's ``uint32`` bits)."""
    return randint4x(seed, offset, n_rounds)[0]


def rand(seed: Any, offset: Any, n_rounds: int = DEFAULT_ROUNDS) -> Any:
    """A float32 uniform in [0, 1) per element of ``offset``: Triton's ``tl.rand``."""
    return _uniform(randint(seed, offset, n_rounds))


def rand4x(seed: Any, offset: Any, n_rounds: int = DEFAULT_ROUNDS) -> tuple:
    """Four independent uniforms per element of ``offset``."""
    return tuple(_uniform(w) for w in randint4x(seed, offset, n_rounds))


def randn(seed: Any, offset: Any, n_rounds: int = DEFAULT_ROUNDS) -> Any:
    """A float32 standard normal per element of ``offset`` (Box-Muller on two of Philox's words)."""
    w0, w1, _, _ = randint4x(seed, offset, n_rounds)
    u1, u2 = _pair_uniform(w0), _uniform(w1)
    return sqrt(-2.0 * log(u1)) * cos((2.0 * math.pi) * u2)


def randn4x(seed: Any, offset: Any, n_rounds: int = DEFAULT_ROUNDS) -> tuple:
    """Four standard normals per element of ``offset``."""
    w = randint4x(seed, offset, n_rounds)
    out = []
    for a, b in ((w[0], w[1]), (w[2], w[3])):
        u1, u2 = _pair_uniform(a), _uniform(b)
        r = sqrt(-2.0 * log(u1))
        out += [r * cos((2.0 * math.pi) * u2), r * sin((2.0 * math.pi) * u2)]
    return tuple(out)


def _uniform(x: Any) -> Any:
    """An int32 word's bits as a float32 in [0, 1): ``|x|`` (``-x - 1`` for negatives, so the 2**32 words
    fold onto 2**31 values) times 2**-31, as Triton's ``uint_to_uniform_float``."""
    if not isinstance(x, (Value, Expanded)):
        raise error(f"tl.rand's words are traced int32 values, got {x!r}")
    return where(x < 0, -x - 1, x).to(float32) * 4.6566127342e-10


def _pair_uniform(x: Any) -> Any:
    """:func:`_uniform` kept away from 0 (the logarithm of Box-Muller): in (0, 1)."""
    u = _uniform(x)
    return where(u < 1.0e-7, 1.0e-7, u)


__all__ = ["philox", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x"]
