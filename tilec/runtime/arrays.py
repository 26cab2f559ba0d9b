"""Read what an array argument is (address, shape, strides, dtype, device).

Why a module of its own: kernels accept torch and cupy tensors (through
``__cuda_array_interface__``, DLPack, or torch's own attributes) and numpy
arrays (copied by the launcher).  This module turns any of them into one
:class:`ArrayInfo` *without touching the CUDA driver*, so argument checking
is a pure function that runs, and is tested, on machines with no GPU.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import dtypes


@dataclass(frozen=True)
class ArrayInfo:
    """An array argument as the launcher sees it.

    ``ptr`` is the address of element 0 (host address for numpy arrays,
    device address otherwise); ``strides`` are in bytes, None meaning
    C-contiguous.
    """

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None
    dtype: str
    itemsize: int
    readonly: bool
    on_host: bool
    source: str
    device_id: int | None = None
    keepalive: Any = None  # objects that must outlive the launch (DLPack capsule)
    host_array: np.ndarray | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def byte_strides(self) -> tuple[int, ...]:
        """Strides in bytes, computing the C-contiguous ones when implicit."""
        if self.strides is not None:
            return self.strides
        out, step = [], self.itemsize
        for d in reversed(self.shape):
            out.append(step)
            step *= max(d, 1)
        return tuple(reversed(out))

    def is_c_contiguous(self) -> bool:
        if self.strides is None or self.size == 0:
            return True
        step = self.itemsize
        for d, s in zip(reversed(self.shape), reversed(self.strides)):
            if d != 1 and s != step:
                return False
            step *= d
        return True

    def has_negative_strides(self) -> bool:
        return any(s < 0 and d > 1 for d, s in zip(self.shape, self.byte_strides()))

    def span_bytes(self) -> int:
        """Bytes from element 0 to the end of the last element (strides >= 0)."""
        if self.size == 0:
            return 0
        return self.itemsize + sum((d - 1) * s for d, s in zip(self.shape, self.byte_strides()))


class NotAnArray(TypeError):
    """The value is none of the array kinds the runtime accepts."""


# --------------------------------------------------------------- numpy


def _from_numpy(arr: np.ndarray) -> ArrayInfo:
    if arr.dtype.hasobject or arr.dtype.fields is not None:
        raise TypeError(f"numpy arrays of dtype {arr.dtype} cannot be passed to a kernel")
    if arr.dtype.kind == "V" or arr.dtype.name in ("float8_e4m3fn", "float8_e5m2"):
        name = arr.dtype.name  # ml_dtypes' FP8 and bf16 (a void or 1-byte float typestr): named by the dtype
    else:
        name = dtypes.from_typestr(arr.dtype.str) if arr.dtype.byteorder != "|" else dtypes.canonical(arr.dtype)
    return ArrayInfo(
        ptr=int(arr.__array_interface__["data"][0]),
        shape=tuple(int(d) for d in arr.shape),
        strides=tuple(int(s) for s in arr.strides),
        dtype=name,
        itemsize=arr.dtype.itemsize,
        readonly=not arr.flags.writeable,
        on_host=True,
        source="numpy",
        host_array=arr,
    )


# --------------------------------------------------------------- torch


def _is_torch_tensor(value) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "data_ptr") and hasattr(value, "device")


_TORCH_TYPES: dict[type, bool] = {}
_TORCH_DTYPE_NAMES: dict[Any, str] = {}


def is_torch_tensor(value) -> bool:
    """Whether ``value`` is a torch tensor, decided once per class (from its first instance).

    Why: the launch fast paths ask this for every array of every call; the
    module-name test of :func:`describe_array` costs more than a dict lookup.
    """
    cls = type(value)
    known = _TORCH_TYPES.get(cls)
    if known is None:
        known = _TORCH_TYPES[cls] = _is_torch_tensor(value)
    return known


def torch_dtype_name(dtype) -> str:
    """The canonical name of a torch dtype (``torch.float16`` -> ``float16``), cached per dtype object."""
    name = _TORCH_DTYPE_NAMES.get(dtype)
    if name is None:
        name = _TORCH_DTYPE_NAMES[dtype] = dtypes.canonical(dtype)
    return name


def _from_torch(t) -> ArrayInfo:
    dev = t.device
    if dev.type != "cuda":
        raise ValueError(
            f"got a torch tensor on device '{dev}', but kernels need CUDA memory: "
            "move it with tensor.cuda() (numpy arrays are copied automatically; torch CPU tensors are not)"
        )
    item = int(t.element_size())
    return ArrayInfo(
        ptr=int(t.data_ptr()),
        shape=tuple(int(d) for d in t.shape),
        strides=tuple(int(s) * item for s in t.stride()),
        dtype=dtypes.canonical(t.dtype),
        itemsize=item,
        readonly=False,
        on_host=False,
        source="torch",
        device_id=dev.index if dev.index is not None else None,
    )


# ------------------------------------------------- __cuda_array_interface__


def _from_cai(cai: dict) -> ArrayInfo:
    try:
        shape = tuple(int(d) for d in cai["shape"])
        typestr = cai["typestr"]
        ptr, readonly = cai["data"]
    except (KeyError, TypeError, ValueError) as e:
        raise TypeError(f"malformed __cuda_array_interface__ ({e!r}): {cai!r}") from None
    if cai.get("mask") is not None:
        raise TypeError("masked arrays (__cuda_array_interface__ 'mask') are not supported")
    name = dtypes.from_typestr(typestr)
    item = np.dtype(typestr).itemsize
    strides = cai.get("strides")
    return ArrayInfo(
        ptr=int(ptr or 0),
        shape=shape,
        strides=None if strides is None else tuple(int(s) for s in strides),
        dtype=name,
        itemsize=item,
        readonly=bool(readonly),
        on_host=False,
        source="__cuda_array_interface__",
    )


# --------------------------------------------------------------- DLPack

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13
_DL_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                    10: "ROCm", 11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


_capsule_get_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_get_name.restype = ctypes.c_char_p
_capsule_get_name.argtypes = [ctypes.py_object]
_capsule_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_get_pointer.restype = ctypes.c_void_p
_capsule_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def parse_dlpack_capsule(capsule) -> ArrayInfo:
    """Read a DLPack capsule without consuming it.

    The capsule is not renamed, so its own destructor releases the producer's
    tensor when the capsule dies; the returned info keeps it alive.
    """
    name = _capsule_get_name(capsule)
    if name == b"dltensor":
        mt = _DLManagedTensor.from_address(_capsule_get_pointer(capsule, name))
        dl, readonly = mt.dl_tensor, False
    elif name == b"dltensor_versioned":
        mt = _DLManagedTensorVersioned.from_address(_capsule_get_pointer(capsule, name))
        dl, readonly = mt.dl_tensor, bool(mt.flags & 1)
    else:
        raise TypeError(f"not a usable DLPack capsule (name {name!r})")
    name_ = dtypes.from_dlpack(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)
    item = dl.dtype.bits * dl.dtype.lanes // 8
    ndim = int(dl.ndim)
    shape = tuple(int(dl.shape[i]) for i in range(ndim))
    strides = tuple(int(dl.strides[i]) * item for i in range(ndim)) if dl.strides else None
    dev_type = int(dl.device.device_type)
    return ArrayInfo(
        ptr=int(dl.data or 0) + int(dl.byte_offset),
        shape=shape,
        strides=strides,
        dtype=name_,
        itemsize=item,
        readonly=readonly,
        on_host=dev_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED),
        source="dlpack",
        device_id=int(dl.device.device_id),
        keepalive=capsule,
    )


def _from_dlpack(value, stream: int | None) -> ArrayInfo:
    dev_type, dev_id = value.__dlpack_device__()
    dev_type = int(dev_type)
    if dev_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        where = _DL_DEVICE_NAMES.get(dev_type, f"type {dev_type}")
        raise ValueError(
            f"got a {type(value).__name__} on DLPack device {where}, but kernels need CUDA memory "
            "(numpy arrays are copied automatically; other host arrays are not)"
        )
    # DLPack stream convention for CUDA: 1 = legacy default stream; 0 is not allowed.
    dl_stream = 1 if not stream else int(stream)
    try:
        capsule = value.__dlpack__(stream=dl_stream)
    except TypeError:
        capsule = value.__dlpack__()
    info = parse_dlpack_capsule(capsule)
    if info.on_host:
        raise ValueError(f"{type(value).__name__}.__dlpack_device__ says CUDA, but its DLPack capsule is not in CUDA memory")
    return info


# --------------------------------------------------------------- entry


def describe_array(value, *, stream: int | None = None) -> ArrayInfo:
    """Describe ``value`` as an :class:`ArrayInfo`.

    Order: numpy (host, copied), torch (its own attributes, which also work
    for bfloat16 and tensors that require grad), ``__cuda_array_interface__``
    (cupy, numba, ...), then DLPack.  Raises :class:`NotAnArray` for other
    values and ValueError for arrays that live on the wrong device.
    """
    if isinstance(value, np.ndarray):
        return _from_numpy(value)
    if _is_torch_tensor(value):
        return _from_torch(value)
    try:
        cai = getattr(value, "__cuda_array_interface__", None)
    except Exception as e:  # some producers raise instead of lacking the attribute
        raise TypeError(f"{type(value).__name__}.__cuda_array_interface__ raised {type(e).__name__}: {e}") from None
    if cai is not None:
        return _from_cai(cai)
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return _from_dlpack(value, stream)
    raise NotAnArray(
        f"expected an array (a CUDA tensor such as torch/cupy, or a numpy array), "
        f"got {type(value).__name__}"
    )
