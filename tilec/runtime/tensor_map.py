"""CUDA tensor maps (``CUtensorMap``, sm_90 TMA descriptors) for kernel parameters.

Why: a kernel that loads tiles with TMA takes, next to a global view's
pointer, a 128-byte descriptor of that view passed by value
(``.param .align 64 .b8 name[128]``). The descriptor can only be made on the
host, by the driver's ``cuTensorMapEncodeTiled``; this module checks the
request in pure Python first (so a bad view is a ValueError naming it, not a
``CUDA_ERROR_INVALID_VALUE``), encodes through :mod:`driver` (so the fake
driver of the tests stands in) and keeps the encoded bytes in a small LRU
cache: the same tensors are launched thousands of times, and a hit costs a
dict lookup instead of a driver call.

Views of rank 2 to 5 with a contiguous last dimension are described:
``shape = (..., rows, cols)``, ``strides = (..., row_stride, 1)`` in
elements (the outer strides in any order: a (B, S, H, D) tensor transposed
to (B, H, S, D) is one map, no copy), a box of ``(box_rows, box_inner)``
elements over the last two dimensions (``box_inner`` along the contiguous
one) and of extent 1 in the leading ones, swizzle 0/32/64/128 bytes, L2
promotion 256 B and zero fill out of bounds. A kernel addresses a box by its
coordinates in every dimension: the leading ones are where a
``tile.subview`` fixed them (a head of an attention tensor), so one map
serves every subview of the argument.

An empty view (an extent of 0, e.g. ``K = 0``) cannot be described (the
driver rejects extent 0): its map is encoded with extent 1 at the same
address, whatever it is (0 for torch's empty tensors is accepted by the
driver, which never dereferences it). The kernel must not load through such
a map (the compiler issues no TMA load for an empty view: no blocks along
it, no iterations over it). The stride of a dimension of extent at most 1
is never used to address memory, so it is replaced by the bytes of one
index of it (the inner extents' product, rounded up to 16 bytes), which the
driver always accepts.
"""

from __future__ import annotations

import ctypes
import functools
import math
from dataclasses import dataclass

from . import driver
from .errors import CudaError

MAX_RANK = 5
"""``cuTensorMapEncodeTiled`` describes tensors of rank 1 to 5 (tilec uses 2 to 5)."""
MAP_BYTES = 128
"""Size of an encoded ``CUtensorMap``."""
MAP_ALIGN = 64
"""Alignment of a tensor-map kernel parameter (``.param .align 64``)."""
SWIZZLES = (0, 32, 64, 128)
CACHE_SIZE = 256
"""Encoded maps kept (LRU): a workload has a few views, each at a few addresses."""

_ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float8_e4m3fn": 1, "float8_e5m2": 1, "int8": 1,
                  "int16": 2, "int32": 4}
_DATA_TYPES = {"float16": "FLOAT16", "bfloat16": "BFLOAT16", "float32": "FLOAT32",
               "float8_e4m3fn": "UINT8", "float8_e5m2": "UINT8", "int8": "UINT8",  # a copy moves 8-bit types as bytes
               "int16": "UINT16", "int32": "INT32"}
_SWIZZLE_NAMES = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}
_INVALID_CONTEXT = 201  # CUDA_ERROR_INVALID_CONTEXT: this thread has no context current


def element_bytes(dtype: str) -> int | None:
    """Bytes per element of a dtype a tensor map can describe, None for the others."""
    return _ELEMENT_BYTES.get(dtype)


def box_problem(dtype: str, box: tuple[int, ...], swizzle: int) -> str | None:
    """What is wrong with a (dtype, box, swizzle) triple, or None: checkable at compile time."""
    size = _ELEMENT_BYTES.get(dtype)
    if size is None:
        return f"element type {dtype!r} has no tensor map; expected one of {', '.join(_ELEMENT_BYTES)}"
    if len(box) != 2:
        return f"box {tuple(box)} must have 2 dims (rows, inner)"
    rows, inner = box
    if not (1 <= rows <= 256 and 1 <= inner <= 256):
        return f"box {tuple(box)} dims must be in 1..256"
    if (inner * size) % 16:
        return f"box inner dim {inner} x {size} bytes = {inner * size} bytes is not a multiple of 16"
    if swizzle not in SWIZZLES:
        return f"swizzle {swizzle} must be one of {SWIZZLES} (bytes)"
    if swizzle and inner * size != swizzle:
        return f"box inner dim {inner} x {size} bytes = {inner * size} bytes must equal the swizzle ({swizzle} bytes)"
    return None


@dataclass(frozen=True)
class TensorMapSpec:
    """A requested tiled tensor map of a view of rank 2 to 5, everything but its address.

    ``dtype``: canonical name (``float16``, ``bfloat16``, ``float32``);
    ``shape``: (..., rows, cols); ``strides``: in elements, dimension 0
    first; ``box``: (rows, inner) elements over the last two dimensions (1 in
    the others); ``swizzle``: bytes.
    """

    dtype: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, int]
    swizzle: int = 0

    @property
    def rank(self) -> int:
        return len(self.shape)

    def problem(self, address: int | None = None) -> str | None:
        """What makes this map (at ``address``; None: skip the address) unencodable, or None."""
        p = box_problem(self.dtype, self.box, self.swizzle)
        if p is not None:
            return p
        if not 2 <= len(self.shape) <= MAX_RANK or len(self.strides) != len(self.shape):
            return (f"a tensor map needs a view of rank 2 to {MAX_RANK}, got shape {self.shape} with strides "
                    f"{self.strides}")
        size = _ELEMENT_BYTES[self.dtype]
        for d, e in enumerate(self.shape):
            if not 0 <= e <= 2**32:
                return f"extent {d} is {e}, not in 0..2^32"
        if address is not None and address % 16:
            return f"its address {address:#x} is not a multiple of 16 bytes"
        if 0 in self.shape:
            return None  # empty: encoded as extent 1, see the module docstring
        if self.shape[-1] > 1 and self.strides[-1] != 1:
            return f"its innermost stride is {self.strides[-1]} elements, not 1"
        for d in range(self.rank - 1):
            stride = self.strides[d]
            if self.shape[d] > 1 and (stride < 0 or (stride * size) % 16 or stride * size >= 2**40):
                what = "row stride" if d == self.rank - 2 else f"stride {d}"
                return (f"its {what} is {stride} elements = {stride * size} bytes, not a multiple "
                        "of 16 bytes in 0..2^40")
        return None

    def check(self, address: int | None, what: str) -> None:
        """Raise ValueError naming ``what`` when :meth:`problem` finds one."""
        p = self.problem(address)
        if p is not None:
            raise ValueError(_message(self, what, p))

    def driver_dims(self) -> tuple[list[int], list[int], list[int]]:
        """(globalDim, globalStrides in bytes, boxDim), innermost first, as the driver takes them."""
        size = _ELEMENT_BYTES[self.dtype]
        dims = [max(e, 1) for e in self.shape]
        empty = 0 in self.shape
        strides = []
        for d in range(self.rank - 1):
            if empty or self.shape[d] == 1:
                strides.append(-(-math.prod(dims[d + 1:]) * size // 16) * 16)
            else:
                strides.append(self.strides[d] * size)
        box = [self.box[1], self.box[0]] + [1] * (self.rank - 2)
        return dims[::-1], strides[::-1], box

    def encode(self, address: int, *, what: str = "tensor map", device: int = 0) -> bytes:
        """The 128 bytes of this map at ``address`` (cached; see :func:`encode`)."""
        return encode(self, address, what=what, device=device)


@dataclass(frozen=True)
class TensorMapArg:
    """The value of a tensor-map kernel parameter: a view's address and the map to make of it.

    :func:`tilec.runtime.gl_views.expand` builds it from the same array as the view's
    pointer, extents and strides; the launcher encodes it (cached).
    """

    address: int
    spec: TensorMapSpec

    @classmethod
    def of(cls, address: int, dtype: str, shape, strides, box, swizzle: int = 0) -> "TensorMapArg":
        return cls(int(address), TensorMapSpec(dtype, tuple(int(d) for d in shape), tuple(int(s) for s in strides),
                                               tuple(int(b) for b in box), int(swizzle)))

    dtype = property(lambda self: self.spec.dtype)
    shape = property(lambda self: self.spec.shape)
    strides = property(lambda self: self.spec.strides)
    box = property(lambda self: self.spec.box)
    swizzle = property(lambda self: self.spec.swizzle)

    def encode(self, *, what: str = "tensor map", device: int = 0) -> bytes:
        return encode(self.spec, self.address, what=what, device=device)


def encode(spec: TensorMapSpec, address: int, *, what: str = "tensor map", device: int = 0) -> bytes:
    """The 128 bytes of ``spec``'s map at ``address``, through the LRU cache.

    Raises ValueError naming ``what`` for a request the driver would reject
    (checked before the driver), :class:`CudaError` if the driver rejects it
    anyway. A thread without a current context gets device ``device``'s
    primary context made current (the driver needs one to encode).
    """
    try:
        return _encoded(spec, address, device)
    except _Invalid as e:
        raise ValueError(_message(spec, what, str(e))) from None


class _Invalid(Exception):
    """A pure check failed (re-raised by :func:`encode` with the view's name)."""


def _message(spec: TensorMapSpec, what: str, problem: str) -> str:
    return (f"{what}: cannot make a tensor map (box {spec.box}, swizzle {spec.swizzle}) of the {spec.dtype} "
            f"view of shape {spec.shape}, strides {spec.strides}: {problem}")


@functools.lru_cache(maxsize=CACHE_SIZE)
def _encoded(spec: TensorMapSpec, address: int, device: int) -> bytes:
    problem = spec.problem(address)
    if problem is not None:
        raise _Invalid(problem)
    try:
        return _encode_now(spec, address)
    except CudaError as e:
        if e.code != _INVALID_CONTEXT:
            raise
    driver.get_device(device).make_current()
    return _encode_now(spec, address)


def _encode_now(spec: TensorMapSpec, address: int) -> bytes:
    drv = driver.init()
    dims, strides, box = spec.driver_dims()
    u64, u32 = drv.cuuint64_t, drv.cuuint32_t
    tensor_map = driver.call(
        "cuTensorMapEncodeTiled",
        getattr(drv.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + _DATA_TYPES[spec.dtype]),
        spec.rank,
        address,
        [u64(d) for d in dims],
        [u64(s) for s in strides],
        [u32(b) for b in box],
        [u32(1)] * spec.rank,
        drv.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(drv.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + _SWIZZLE_NAMES[spec.swizzle]),
        drv.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        drv.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    )
    return ctypes.string_at(tensor_map.getPtr(), MAP_BYTES)


def cache_info():
    """Hits, misses and size of the encoded-map cache (``functools`` ``CacheInfo``)."""
    return _encoded.cache_info()


def clear_cache() -> None:
    _encoded.cache_clear()


def aligned_map_buffer(data: bytes | None = None) -> ctypes.Array:
    """A fresh 64-byte aligned 128-byte ctypes buffer (holding ``data``), for ``kernelParams``."""
    raw = (ctypes.c_uint8 * (MAP_BYTES + MAP_ALIGN))()
    offset = -ctypes.addressof(raw) % MAP_ALIGN
    buf = (ctypes.c_uint8 * MAP_BYTES).from_buffer(raw, offset)  # keeps ``raw`` alive
    if data is not None:
        ctypes.memmove(buf, data, MAP_BYTES)
    return buf


__all__ = ["CACHE_SIZE", "MAP_ALIGN", "MAP_BYTES", "MAX_RANK", "SWIZZLES", "TensorMapArg", "TensorMapSpec", "aligned_map_buffer",
           "box_problem", "cache_info", "clear_cache", "element_bytes", "encode"]
