"""Values of fragment-level IR while it runs lane by lane: one numpy array per SSA value and warp.

Every SSA value of a warp is a numpy array whose first axis is the warp's 32
lanes (entry ``l`` is lane ``l``'s value); vectors add their shape after it
(``vector<4xi32>`` → shape ``(32, 4)``). Warp-uniform values are no different:
all 32 entries are equal. Element representation:

=============  ===================================================================
``iN``, index  ``int64`` holding the *signed* value (sign-extended to 64 bits);
               every result is wrapped to N bits, so ``i32`` arithmetic wraps
               like the GPU's; unsigned ops reinterpret with :func:`unsigned`
``i1``         ``bool``
``f16``        ``float16``
``bf16``       ``float32`` holding bf16 values (as :mod:`tilec.interp.dtypes`)
``f8*``        ``float32`` holding FP8 values (E4M3FN, E5M2), one byte in memory
``f32``/``f64`` ``float32``/``float64``
pointers       :class:`~tilec.interp.lane_memory.Ptr` (a memory and 32 byte offsets)
=============  ===================================================================

In memory (loads, stores, bitcasts) values are their little-endian bytes:
``bf16`` as its 16 bits, ``i1`` as one byte.
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
    IndexType,
    IntegerType,
    VectorType,
)
from xdsl.dialects.llvm import LLVMArrayType, LLVMPointerType, LLVMStructType
from xdsl.ir import Attribute

from tilec.interp.dtypes import f8_bits, f8_values, round_bf16, round_f8
from tilec.interp.errors import OpError

LANES = 32
LANE_IDS = np.arange(LANES, dtype=np.int64)
LANE_IDS.setflags(write=False)

# -- integers ------------------------------------------------------------------------


def int_width(t: Attribute) -> int | None:
    """Bits of an integer or index type (index is 64 bits), None for other types."""
    if isinstance(t, IntegerType):
        return t.width.data
    if isinstance(t, IndexType):
        return 64
    return None


def wrap(x: Any, width: int) -> np.ndarray:
    """``x`` (any integer array) reduced to ``width`` bits: signed ``int64`` values (``bool`` for i1)."""
    x = np.asarray(x)
    if width == 1:
        return (x.astype(np.int64) & 1).astype(bool)
    if x.dtype != np.int64:
        x = x.astype(np.int64)  # uint64 wraps modulo 2**64
    if width >= 64:
        return x
    mask, half = (1 << width) - 1, 1 << (width - 1)
    return ((x & mask) ^ half) - half


def signed(x: np.ndarray, width: int) -> np.ndarray:
    """The signed value of a canonical integer (i1 true is -1)."""
    if width == 1:
        return -np.asarray(x).astype(np.int64)
    return x


def unsigned(x: np.ndarray, width: int) -> np.ndarray:
    """The unsigned value of a canonical integer, as ``uint64``."""
    x = np.asarray(x)
    if width == 1:
        return x.astype(np.uint64)
    if width >= 64:
        return x.astype(np.int64).astype(np.uint64)
    return (x.astype(np.int64) & ((1 << width) - 1)).astype(np.uint64)


# -- element types -------------------------------------------------------------------

_FLOAT_VALUE = {Float16Type: np.float16, BFloat16Type: np.float32, Float32Type: np.float32, Float64Type: np.float64,
                Float8E4M3FNType: np.float32, Float8E5M2Type: np.float32}
_FLOAT_STORAGE = {Float16Type: np.float16, BFloat16Type: np.uint16, Float32Type: np.float32, Float64Type: np.float64,
                  Float8E4M3FNType: np.uint8, Float8E5M2Type: np.uint8}
_INT_STORAGE = {1: np.uint8, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def element_type(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, VectorType) else t


def vector_shape(t: Attribute) -> tuple[int, ...]:
    return tuple(t.get_shape()) if isinstance(t, VectorType) else ()


def is_float(t: Attribute) -> bool:
    return type(element_type(t)) in _FLOAT_VALUE


def value_dtype(t: Attribute) -> np.dtype:
    """The numpy dtype of a (vector of) scalar type's lane values."""
    e = element_type(t)
    if type(e) in _FLOAT_VALUE:
        return np.dtype(_FLOAT_VALUE[type(e)])
    w = int_width(e)
    if w == 1:
        return np.dtype(bool)
    if w is not None:
        return np.dtype(np.int64)
    raise OpError(f"values of type {t} are not supported by the lane interpreter")


def storage_dtype(t: Attribute) -> np.dtype:
    e = element_type(t)
    if type(e) in _FLOAT_STORAGE:
        return np.dtype(_FLOAT_STORAGE[type(e)])
    w = int_width(e)
    if w in _INT_STORAGE:
        return np.dtype(_INT_STORAGE[w])
    raise OpError(f"values of type {t} cannot be loaded, stored or bitcast")


def round_to(x: Any, t: Attribute) -> np.ndarray:
    """Float values rounded to the (element) type ``t`` (nearest even), as its value dtype."""
    e = element_type(t)
    a = np.asarray(x).astype(_FLOAT_VALUE[type(e)])
    if isinstance(e, (Float8E4M3FNType, Float8E5M2Type)):
        return round_f8(a, e.name)
    return round_bf16(a) if isinstance(e, BFloat16Type) else a


def convert(x: Any, t: Attribute) -> np.ndarray:
    """Numbers converted to the lane representation of ``t`` (floats rounded, integers wrapped)."""
    if is_float(t):
        return round_to(x, t)
    w = int_width(element_type(t))
    if w is None:
        raise OpError(f"values of type {t} are not supported by the lane interpreter")
    if w == 1:
        return np.asarray(x).astype(bool)
    return wrap(np.asarray(x).astype(np.int64), w)


def splat(value: Any, t: Attribute) -> np.ndarray:
    """A warp-uniform value: ``value`` (a scalar or a vector's elements) in every lane."""
    v = convert(np.asarray(value), t)
    shape = vector_shape(t)
    return np.array(np.broadcast_to(v.reshape(shape) if shape else v, (LANES, *shape)))


def sizeof(t: Attribute) -> int:
    """Bytes of a type in memory (LLVM data layout of nvptx64, natural alignment)."""
    if isinstance(t, VectorType):
        return sizeof(t.element_type) * int(np.prod(t.get_shape()))
    if isinstance(t, LLVMArrayType):
        return t.size.data * sizeof(t.type)
    if isinstance(t, LLVMStructType):
        return struct_layout(t)[1]
    if isinstance(t, LLVMPointerType):
        return 8
    w = int_width(t)
    if w is not None:
        return max(1, (w + 7) // 8)
    if type(t) in _FLOAT_STORAGE:
        return np.dtype(_FLOAT_STORAGE[type(t)]).itemsize
    raise OpError(f"the size of {t} is unknown")


def alignof(t: Attribute) -> int:
    if isinstance(t, LLVMArrayType):
        return alignof(t.type)
    if isinstance(t, LLVMStructType):
        return max((alignof(f) for f in t.types.data), default=1)
    n = sizeof(t)
    return n if n & (n - 1) == 0 else sizeof(element_type(t))


def struct_layout(t: LLVMStructType) -> tuple[list[int], int]:
    """Field offsets and total size of a (non-packed) struct."""
    offsets, pos, align = [], 0, 1
    for f in t.types.data:
        a = alignof(f)
        pos = -(-pos // a) * a
        offsets.append(pos)
        pos += sizeof(f)
        align = max(align, a)
    return offsets, -(-pos // align) * align


# -- bytes -----------------------------------------------------------------------------


def to_bytes(value: np.ndarray, t: Attribute) -> np.ndarray:
    """Lane values of type ``t`` as their bytes in memory: shape ``(lanes, sizeof(t))``, uint8."""
    value = np.asarray(value)
    e = element_type(t)
    if isinstance(e, BFloat16Type):
        stored = (round_bf16(value.astype(np.float32)).view(np.uint32) >> 16).astype(np.uint16)
    elif isinstance(e, (Float8E4M3FNType, Float8E5M2Type)):
        stored = f8_bits(value, e.name)
    elif int_width(e) is not None:
        stored = value.astype(np.int64).astype(storage_dtype(t)) if int_width(e) > 1 else value.astype(np.uint8)
    else:
        stored = value.astype(storage_dtype(t))
    lanes = value.shape[0]
    return np.ascontiguousarray(stored).view(np.uint8).reshape(lanes, -1)


def from_bytes(data: np.ndarray, t: Attribute) -> np.ndarray:
    """The inverse of :func:`to_bytes`: ``(lanes, sizeof(t))`` bytes → lane values of ``t``."""
    data = np.ascontiguousarray(data, dtype=np.uint8)
    lanes = data.shape[0]
    raw = data.view(storage_dtype(t)).reshape((lanes, *vector_shape(t)))
    e = element_type(t)
    if isinstance(e, BFloat16Type):
        return (raw.astype(np.uint32) << 16).view(np.float32)
    if isinstance(e, (Float8E4M3FNType, Float8E5M2Type)):
        return f8_values(raw, e.name).astype(np.float32)
    w = int_width(e)
    if w == 1:
        return raw != 0
    if w is not None:
        return raw.astype(np.int64)
    return raw.copy()


def bitcast(value: np.ndarray, src: Attribute, dst: Attribute) -> np.ndarray:
    if sizeof(src) != sizeof(dst):
        raise OpError(f"cannot bitcast {src} ({sizeof(src)} bytes) to {dst} ({sizeof(dst)} bytes)")
    return from_bytes(to_bytes(value, src), dst)


def u32(x: np.ndarray) -> np.ndarray:
    """A 32-bit register's bits as ``uint32`` (from an i32 lane value or an f32 one)."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return x.view(np.uint32)
    return (x.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32)


def from_u32(bits: np.ndarray) -> np.ndarray:
    """``uint32`` bits as an i32 lane value."""
    return wrap(np.asarray(bits).astype(np.int64), 32)
