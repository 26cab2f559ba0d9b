"""Element types as numpy values, and the bf16 and FP8 rounding helpers.

Each element type of the tile dialect is one numpy dtype during interpretation:

========  ===============================================================
``f16``   ``np.float16``
``bf16``  ``np.float32`` arrays (and scalars) whose values are bf16 values:
          every value an op produces is rounded with :func:`round_bf16`
``f32``   ``np.float32``
``f64``   ``np.float64``
``f8*``   ``np.float32`` arrays of FP8 values (``f8E4M3FN``, ``f8E5M2``),
          rounded with :func:`round_f8` where a conversion makes them (saturating, as
          PTX's), held as :func:`stored_f8` where bytes are moved; their bytes are :func:`f8_bits`
          and :func:`f8_values` of them
========  ===============================================================

Float scalars are numpy scalars of the same dtypes, so that scalar arithmetic
rounds like the element type does; integers and ``index`` are Python ints.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
)
from xdsl.ir import Attribute

from tilec.ir.float8 import FLOAT8_FORMATS, f8_bits, f8_values, saturated_f8  # noqa: F401  (re-exported)

_DTYPES: dict[type, np.dtype] = {
    Float16Type: np.dtype(np.float16),
    BFloat16Type: np.dtype(np.float32),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
    Float8E4M3FNType: np.dtype(np.float32),
    Float8E5M2Type: np.dtype(np.float32),
}


def is_float_type(t: Attribute) -> bool:
    return type(t) in _DTYPES


_INT_DTYPES = {1: np.dtype(np.bool_), 8: np.dtype(np.int8), 16: np.dtype(np.int16), 32: np.dtype(np.int32),
               64: np.dtype(np.int64)}


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of ``element_type`` (bf16 → float32; i1 → bool)."""
    if isinstance(element_type, IntegerType) and element_type.width.data in _INT_DTYPES:
        return _INT_DTYPES[element_type.width.data]
    try:
        return _DTYPES[type(element_type)]
    except KeyError:
        raise TypeError(f"no numpy representation for element type {element_type}") from None


def round_bf16(x: Any) -> np.ndarray | np.float32:
    """Round float32 values to the nearest bf16 value, ties to even, kept as float32.

    Works on the bit pattern: add ``0x7FFF`` plus the lowest kept bit and clear
    the 16 dropped bits. Infinities stay infinite, finite values that round past
    the largest bf16 become infinite, NaNs stay (quiet) NaNs with their sign,
    f32 subnormals round like any other value (bf16 has the same exponent range).
    A scalar input gives an ``np.float32`` scalar.
    """
    scalar = np.ndim(x) == 0
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    nan = np.isnan(a)
    if np.any(nan):
        rounded = np.where(nan, (bits & 0x80000000) | 0x7FC00000, rounded)
    out = rounded.astype(np.uint32).view(np.float32)
    return np.float32(out) if scalar else out.reshape(a.shape)


def round_tf32(x: Any) -> np.ndarray:
    """Round float32 values to tf32 (10 mantissa bits) as ``cvt.rna.tf32.f32`` does: to nearest, ties away
    from zero; kept as float32. NaNs stay NaN. What a tf32 tensor-core atom reads of f32 operands."""
    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, rounded).reshape(a.shape)


# -- FP8 (OCP 8-bit floats): the encoding lives in tilec.ir.float8, below codegen and the interpreters


def round_f8(x: Any, name: str) -> np.ndarray:
    """Float values rounded to FP8 type ``name`` as every conversion into FP8 here rounds them: saturating
    (PTX's ``cvt.rn.satfinite``, :func:`~tilec.ir.float8.saturated_f8`) to nearest (:func:`f8_bits`), as
    float32 values."""
    return f8_values(f8_bits(saturated_f8(x, name), name), name).astype(np.float32)


def stored_f8(x: Any, name: str) -> np.ndarray:
    """Float values as an FP8 array of type ``name`` holds them, as float32: to nearest, an infinity kept
    where the type has one (e5m2; a byte moved is not converted, so nothing saturates: :func:`round_f8` is
    what a conversion into FP8 does)."""
    return f8_values(f8_bits(x, name), name).astype(np.float32)


def _round(a: Any, element_type: Attribute) -> Any:
    if isinstance(element_type, BFloat16Type):
        return round_bf16(a)
    if element_type.name in FLOAT8_FORMATS:
        out = round_f8(a, element_type.name)
        return np.float32(out) if np.ndim(a) == 0 else out
    return a


def to_element(x: Any, element_type: Attribute) -> Any:
    """``x`` (a scalar or an array) converted to ``element_type``, rounding to nearest even.

    Arrays come back as new arrays of :func:`numpy_dtype`; scalars as numpy scalars.
    """
    dtype = numpy_dtype(element_type)
    if np.ndim(x) == 0:
        return _round(dtype.type(x), element_type)
    return _round(np.asarray(x).astype(dtype), element_type)


def saturated(x: Any, width: int, signed: bool, source_bits: int = 32) -> np.ndarray:
    """``x`` truncated toward zero and clamped to the range of a ``width``-bit integer, as integers
    (int64; uint64 unsigned): PTX's ``cvt.rzi.s32.f32`` (and LLVM's ``fptosi``/``fptoui`` on the GPU)
    saturate, they do not wrap. A NaN becomes 0 from an f32 (or narrower) source, but the smallest
    integer from an f64 one (``cvt.rzi.s32.f64``, ``.s16.f64``) and for ``cvt.rzi.s64`` (measured on an
    H200, sessions 30 and 32). A signed conversion into fewer than 16 bits is PTX's into 16 bits, its low
    bits kept. Past 53 bits the bounds are no float64: a value at or past the top is the top exactly."""
    if signed and width < 16:
        wide = saturated(x, 16, True, source_bits)
        return (wide + (1 << (width - 1))) % (1 << width) - (1 << (width - 1))
    x = np.trunc(np.asarray(x, dtype=np.float64))
    lo, hi = (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if signed else (0, 2**width - 1)
    kind = np.int64 if signed else np.uint64
    nan = float(lo) if signed and (width == 64 or source_bits == 64) else 0.0
    below_top = float(np.nextafter(float(hi), 0.0)) if float(hi) > hi else float(hi)
    inside = np.clip(np.where(np.isnan(x), nan, x), float(lo), below_top).astype(kind)
    return np.where(x >= float(hi), kind(hi), inside)


def nan_fill(shape, element_type: Attribute) -> np.ndarray:
    """An array of NaNs: what memory nobody has written holds."""
    return np.full(shape, np.nan, dtype=numpy_dtype(element_type))


F32_MIN_NORMAL = 2.0**-126


def exp2_ftz(x: Any) -> np.ndarray:
    """``2**x`` in float64 with the results below f32's smallest normal flushed to 0: what the GPU's
    ``ex2.approx.ftz.f32`` (tilec's ``exp2``/``exp`` lowering) returns for them."""
    y = np.exp2(np.asarray(x, dtype=np.float64))
    return np.where(y < F32_MIN_NORMAL, 0.0, y)


def exp_ftz(x: Any) -> np.ndarray:
    """``e**x`` as :func:`exp2_ftz` flushes it."""
    y = np.exp(np.asarray(x, dtype=np.float64))
    return np.where(y < F32_MIN_NORMAL, 0.0, y)
