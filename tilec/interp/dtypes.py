"""Element types as numpy values, and the bf16 rounding helper.

Each element type of the tile dialect is one numpy dtype during interpretation:

========  ===============================================================
``f16``   ``np.float16``
``bf16``  ``np.float32`` arrays (and scalars) whose values are bf16 values:
          every value an op produces is rounded with :func:`round_bf16`
``f32``   ``np.float32``
``f64``   ``np.float64``
========  ===============================================================

Float scalars are numpy scalars of the same dtypes, so that scalar arithmetic
rounds like the element type does; integers and ``index`` are Python ints.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute

_DTYPES: dict[type, np.dtype] = {
    Float16Type: np.dtype(np.float16),
    BFloat16Type: np.dtype(np.float32),
    Float32Type: np.dtype(np.float32),
    Float64Type: np.dtype(np.float64),
}


def is_float_type(t: Attribute) -> bool:
    return type(t) in _DTYPES


_INT_DTYPES = {1: np.dtype(np.bool_), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}


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


def to_element(x: Any, element_type: Attribute) -> Any:
    """``x`` (a scalar or an array) converted to ``element_type``, rounding to nearest even.

    Arrays come back as new arrays of :func:`numpy_dtype`; scalars as numpy scalars.
    """
    dtype = numpy_dtype(element_type)
    if np.ndim(x) == 0:
        value = dtype.type(x)
        return round_bf16(value) if isinstance(element_type, BFloat16Type) else value
    a = np.asarray(x).astype(dtype)
    return round_bf16(a) if isinstance(element_type, BFloat16Type) else a


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
