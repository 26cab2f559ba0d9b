"""C math functions libdevice has and PTX does not, written in the language (as ``random.py``'s Philox is).

Each is elementwise code on the language's own operations (one fused map where it is used), computed in
f32 (f16 and bf16 inputs are widened, as libdevice has f32 and f64 versions only; f64 stays f64 but is
computed with these f32 approximations, as the language's other transcendental functions are). The
polynomials are Cephes' single-precision ones (``asinf``, ``atanf``, ``tanf``, ``logf``'s for ``log1p``),
and near 0 ``expm1`` and ``sinh`` are their Taylor polynomials: PTX's approximate ``ex2``/``lg2``/``sin``
have absolute errors, which near 0 would be most of a small result. Errors against float64 are a few
f32 ulps (tests/lang/test_libm.py on the interpreters, tests/gpu/test_libm_gpu.py on the GPU).
"""

from __future__ import annotations

import math as pymath
from typing import Any

from tilec.lang import ops
from tilec.lang.dtypes import float32
from tilec.lang.tracing import error
from tilec.lang.values import Expanded, Value

_PI = pymath.pi


def _float(x: Any, who: str) -> Any:
    """``x`` as the float values the function computes on: f32 for 16-bit floats and integers."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if not isinstance(x, (Value, Expanded)):
        raise error(f"libdevice.{who} takes a float tile, vector or scalar, got {type(x).__name__}")
    return x if x.dtype.name in ("float32", "float64") else x.to(float32)


def _where(c: Any, a: Any, b: Any) -> Any:
    return ops.where(c, a, b)


def _horner(x: Any, coefficients: tuple[float, ...]) -> Any:
    """``c0 x^n + c1 x^(n-1) + ... + cn``, highest power first."""
    r = coefficients[0]
    for c in coefficients[1:]:
        r = r * x + c
    return r


def tan(x: Any) -> Any:
    """Cephes' ``tanf``: ``|x|`` reduced by the octant ``j`` (``pi/4`` in three parts, so the reduction is
    exact to f32), an odd polynomial on ``[-pi/4, pi/4]``, ``-1/tan`` in odd quadrants. PTX's approximate
    sine and cosine, whose errors are absolute, would be far off in relative terms near 0."""
    x = _float(x, "tan")
    a = ops.abs(x)
    j = ops.floor(a * (4.0 / _PI))
    j = j + (j - ops.floor(j * 0.5) * 2.0)  # to even
    z = ((a - j * 0.78515625) - j * 2.4187564849853515625e-4) - j * 3.77489497744594108e-8
    zz = z * z
    y = _horner(zz, (9.38540185543e-3, 3.11992232697e-3, 2.44301354525e-2, 5.34112807005e-2, 1.33387994085e-1,
                     3.33331568548e-1)) * zz * z + z
    odd_quadrant = (j - ops.floor(j * 0.25) * 4.0) == 2.0
    r = _where(odd_quadrant, -1.0 / y, y)
    return _where(x < 0.0, -r, r)


def expm1(x: Any) -> Any:
    """``exp(x) - 1``: its Taylor polynomial below 1/2 in magnitude (exp's error would be most of the
    result near 0), ``exp(x) - 1`` above."""
    x = _float(x, "expm1")
    small = _horner(x, (1 / 40320, 1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 0.5, 1.0)) * x
    return _where(ops.abs(x) < 0.5, small, ops.exp(x) - 1.0)


def log1p(x: Any) -> Any:
    """``log(1 + x)``: Cephes' ``logf`` polynomial for ``log(1 + x)`` where ``1 + x`` is in ``[sqrt(1/2),
    sqrt(2))`` (log's error would be most of the result near 0), ``log(1 + x)`` elsewhere."""
    x = _float(x, "log1p")
    z = x * x
    p = _horner(x, (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
                    -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
    near = x + (x * z * p - 0.5 * z)
    return _where((x > -0.2928932188134524) & (x < 0.4142135623730950), near, ops.log(x + 1.0))


def sinh(x: Any) -> Any:
    """Its Taylor polynomial below 1 in magnitude, ``(e - 1/e) / 2`` above."""
    x = _float(x, "sinh")
    zz = x * x
    small = _horner(zz, (1 / 362880, 1 / 5040, 1 / 120, 1 / 6, 1.0)) * x
    e = ops.exp(ops.abs(x))
    big = (e - 1.0 / e) * 0.5
    return _where(ops.abs(x) < 1.0, small, _where(x < 0.0, -big, big))


def cosh(x: Any) -> Any:
    x = _float(x, "cosh")
    e = ops.exp(ops.abs(x))
    return (e + 1.0 / e) * 0.5


def _asin_magnitude(a: Any) -> Any:
    """``asin(a)`` for ``0 <= a <= 1`` (Cephes' ``asinf``: a polynomial in ``a^2`` below 1/2, in
    ``(1 - a) / 2`` through ``pi/2 - 2 asin(sqrt(.))`` above)."""
    big = a > 0.5
    z = _where(big, (1.0 - a) * 0.5, a * a)
    s = _where(big, ops.sqrt(z), a)
    p = ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z
         + 1.6666752422e-1) * z * s + s
    return _where(big, _PI / 2 - 2.0 * p, p)


def asin(x: Any) -> Any:
    x = _float(x, "asin")
    r = _where(ops.abs(x) > 1.0, float("nan"), _asin_magnitude(ops.abs(x)))
    return _where(x < 0.0, -r, r)


def acos(x: Any) -> Any:
    """Cephes' ``acosf``: ``2 asin(sqrt((1 - x) / 2))`` above 1/2 (and its mirror below -1/2), else
    ``pi/2 - asin(x)``."""
    x = _float(x, "acos")
    a = ops.abs(x)
    half = 2.0 * _asin_magnitude(ops.sqrt((1.0 - a) * 0.5))
    r = _where(a > 0.5, _where(x < 0.0, _PI - half, half), _PI / 2 - asin(x))
    return _where(a > 1.0, float("nan"), r)


def atan(x: Any) -> Any:
    """Cephes' ``atanf``: reduced to ``|t| <= tan(pi/8)`` by ``pi/2 - atan(1/a)`` and ``pi/4 + atan((a - 1) /
    (a + 1))``, then an odd polynomial."""
    x = _float(x, "atan")
    a = ops.abs(x)
    big = a > 2.414213562373095
    mid = a > 0.4142135623730950
    y0 = _where(big, _PI / 2, _where(mid, _PI / 4, 0.0))
    t = _where(big, -1.0 / a, _where(mid, (a - 1.0) / (a + 1.0), a))
    z = t * t
    r = y0 + ((((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1)
              * z * t + t)
    return _where(x < 0.0, -r, r)


def atan2(y: Any, x: Any) -> Any:
    """The angle of ``(x, y)`` in ``(-pi, pi]``: ``atan(y / x)`` moved to its quadrant (0 at the origin)."""
    y, x = _float(y, "atan2"), _float(x, "atan2")
    r = atan(y / x)
    r = _where(x < 0.0, _where(y < 0.0, r - _PI, r + _PI), r)
    return _where((x == 0.0) & (y == 0.0), 0.0, r)


def cbrt(x: Any) -> Any:
    """The real cube root: ``2^(log2|x| / 3)`` with one Newton step, the sign kept (0 and infinities as
    they are)."""
    x = _float(x, "cbrt")
    a = ops.abs(x)
    r = ops.exp2(ops.log2(a) * (1.0 / 3.0))
    r = r - (r * r * r - a) / (3.0 * r * r)
    r = _where((a == 0.0) | (a == float("inf")), a, r)
    return _where(x < 0.0, -r, r)


def isinf(x: Any) -> Any:
    """Where ``x`` is an infinity (a mask)."""
    return ops.abs(_float(x, "isinf")) == float("inf")


def exp10(x: Any) -> Any:
    return ops.exp2(_float(x, "exp10") * 3.321928094887362)


def log10(x: Any) -> Any:
    return ops.log2(_float(x, "log10")) * 0.3010299956639812


def hypot(a: Any, b: Any) -> Any:
    a, b = _float(a, "hypot"), _float(b, "hypot")
    return ops.sqrt(a * a + b * b)


def round_half_away(x: Any) -> Any:
    """C's ``round``: to the nearest integer, halves away from zero."""
    x = _float(x, "round")
    r = ops.trunc(x)
    return _where(ops.abs(x - r) >= 0.5, _where(x < 0.0, r - 1.0, r + 1.0), r)


FUNCTIONS = dict(tan=tan, expm1=expm1, log1p=log1p, sinh=sinh, cosh=cosh, asin=asin, acos=acos, atan=atan,
                 atan2=atan2, cbrt=cbrt, isinf=isinf, exp10=exp10, log10=log10, hypot=hypot, round=round_half_away)
"""The functions, by libdevice's names (and the ``f``-suffixed ones: :mod:`tilec.lang.compat`)."""
