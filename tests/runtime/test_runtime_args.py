"""Argument checking: pure, so it runs (and must fail loudly) without a GPU."""

from __future__ import annotations

import ctypes
import math
import struct

import numpy as np
import pytest

from tilec.runtime import Kernel, NoDeviceError, Param, bind_arguments, describe_array, has_device
from tilec.runtime.args import DeviceArg, HostArg, ScalarArg, normalize_dims, normalize_shared_mem, stream_handle
from tilec.runtime.arrays import ArrayInfo, NotAnArray, parse_dlpack_capsule

from runtime_kernels import AXPY_PTX, AXPY_SIGNATURE


class FakeCudaArray:
    """A device array as cupy/numba would expose it (the pointer is never used)."""

    def __init__(self, shape, typestr="<f4", ptr=0x7F0000000000, strides=None, readonly=False, version=3):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, readonly),
            "strides": strides,
            "version": version,
        }


_DLTENSOR_NAME = b"dltensor"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeDLPack:
    """A DLPack producer whose capsule describes memory on ``device_type``.

    The capsule is hand-made (no deleter) so a "CUDA" tensor can be described
    on a machine without a GPU; the address is never dereferenced.
    """

    def __init__(self, shape, ptr=0x7F0000000000, device_type=2, device_id=0, code=2, bits=32):
        from tilec.runtime.arrays import _DLManagedTensor

        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        mt = _DLManagedTensor()
        mt.dl_tensor.data = ptr
        mt.dl_tensor.device.device_type = device_type
        mt.dl_tensor.device.device_id = device_id
        mt.dl_tensor.ndim = len(shape)
        mt.dl_tensor.dtype.code, mt.dl_tensor.dtype.bits, mt.dl_tensor.dtype.lanes = code, bits, 1
        mt.dl_tensor.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        self._mt = mt
        self._dev = (device_type, device_id)
        self.stream_seen = "not called"

    def __dlpack_device__(self):
        return self._dev

    def __dlpack__(self, stream=None):
        self.stream_seen = stream
        return _capsule_new(ctypes.addressof(self._mt), _DLTENSOR_NAME, None)


class LyingDLPack:
    """Claims CUDA in __dlpack_device__ but hands out a host (numpy) capsule."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        return self._arr.__dlpack__()


def bind(args, sig=AXPY_SIGNATURE, **kw):
    return bind_arguments("axpy", sig, args, **kw)


def f32(n=8):
    return np.zeros(n, np.float32)


# ------------------------------------------------------------------ counts


def test_valid_numpy_arguments_bind():
    b = bind([f32(), f32(), f32(), 2.5, 8])
    assert [type(x) for x in b] == [HostArg, HostArg, HostArg, ScalarArg, ScalarArg]
    assert isinstance(b[3].value, ctypes.c_float) and b[3].value.value == 2.5
    assert isinstance(b[4].value, ctypes.c_int32) and b[4].value.value == 8


@pytest.mark.parametrize("n", [0, 4, 6])
def test_wrong_argument_count(n):
    args = [f32(), f32(), f32(), 1.0, 8, 9][:n]
    with pytest.raises(TypeError, match=r"kernel 'axpy' takes 5 argument\(s\) \(x, y, out, alpha, n\), got " + str(n)):
        bind(args)


# ------------------------------------------------------------------ dtypes


def test_wrong_dtype_names_parameter_and_index():
    with pytest.raises(TypeError, match=r"parameter #1 'y': expected dtype float32, got an array of dtype float64"):
        bind([f32(), np.zeros(8), f32(), 1.0, 8])


def test_wrong_dtype_on_device_array():
    with pytest.raises(TypeError, match=r"parameter #2 'out': expected dtype float32, got an array of dtype float16"):
        bind([f32(), f32(), FakeCudaArray((8,), "<f2"), 1.0, 8])


def test_an_integer_parameter_takes_unsigned_and_bool_arrays_of_its_width():
    """The IR's integers are signless: an i8 parameter holds uint8 and bool arrays (tilec.lang reads them as
    unsigned numbers and masks), an i32 one uint32; other widths and kinds are still refused."""
    sig = (Param.pointer("w", "int8"), Param.pointer("u", "int32"))
    bound = bind_arguments("k", sig, [np.zeros(8, np.uint8), np.zeros(8, np.uint32)])
    assert len(bound) == 2
    bind_arguments("k", sig, [np.zeros(8, np.bool_), np.zeros(8, np.int32)])
    with pytest.raises(TypeError, match=r"parameter #1 'u': expected dtype int32, got an array of dtype uint16"):
        bind_arguments("k", sig, [np.zeros(8, np.int8), np.zeros(8, np.uint16)])
    with pytest.raises(TypeError, match=r"parameter #1 'u': expected dtype int32, got an array of dtype float32"):
        bind_arguments("k", sig, [np.zeros(8, np.int8), np.zeros(8, np.float32)])


def test_not_an_array():
    with pytest.raises(TypeError, match=r"parameter #0 'x': expected a float32 1-d array .* got list"):
        bind([[1.0, 2.0], f32(), f32(), 1.0, 8])


def test_any_dtype_pointer_accepts_everything():
    sig = (Param.pointer("p"),)
    for arr in (np.zeros(3, np.int8), np.zeros(3, np.float64), FakeCudaArray((3,), "<u2")):
        (b,) = bind_arguments("k", sig, [arr])
        assert b.info.size == 3


# ------------------------------------------------------------------ shapes


def test_wrong_ndim():
    with pytest.raises(ValueError, match=r"parameter #0 'x': expected a 1-d array, got 2-d with shape \(2, 4\)"):
        bind([np.zeros((2, 4), np.float32), f32(), f32(), 1.0, 8])


def test_shape_constraint_with_wildcards():
    sig = (Param.pointer("a", "float32", shape=(None, 16)),)
    bind_arguments("k", sig, [np.zeros((3, 16), np.float32)])
    with pytest.raises(ValueError, match=r"parameter #0 'a': expected shape \(\?, 16\), got \(3, 8\)"):
        bind_arguments("k", sig, [np.zeros((3, 8), np.float32)])


def test_non_contiguous_numpy_rejected_when_contiguity_required():
    a = np.zeros((4, 8), np.float32)[:, ::2]
    sig = (Param.pointer("a", "float32", ndim=2),)
    with pytest.raises(ValueError, match=r"parameter #0 'a': must be C-contiguous.*np.ascontiguousarray"):
        bind_arguments("k", sig, [a])


def test_non_contiguous_numpy_allowed_when_not_required():
    base = np.arange(32, dtype=np.float32).reshape(4, 8)
    a = base[:, ::2]
    sig = (Param.pointer("a", "float32", ndim=2, contiguous=False),)
    (b,) = bind_arguments("k", sig, [a])
    assert isinstance(b, HostArg)
    # the copied span runs from a[0,0] to the end of a[3,6]
    assert b.info.span_bytes() == (3 * 8 + 6 + 1) * 4
    with pytest.raises(ValueError, match="negative strides"):
        bind_arguments("k", sig, [base[::-1]])


def test_non_contiguous_device_array_rejected():
    strided = FakeCudaArray((4, 4), "<f4", strides=(32, 8))
    sig = (Param.pointer("a", "float32", ndim=2),)
    with pytest.raises(ValueError, match=r"parameter #0 'a': must be C-contiguous, got shape \(4, 4\) with byte strides \(32, 8\)"):
        bind_arguments("k", sig, [strided])
    # explicit C strides are contiguous
    bind_arguments("k", sig, [FakeCudaArray((4, 4), "<f4", strides=(16, 4))])


# --------------------------------------------------------------- alignment


def test_misaligned_device_pointer():
    with pytest.raises(ValueError, match=r"parameter #0 'x': address 0x7f0000000002 is not aligned to 4 bytes"):
        bind([FakeCudaArray((8,), ptr=0x7F0000000002), f32(), f32(), 1.0, 8])


def test_explicit_alignment():
    sig = (Param.pointer("a", "float16", align=16),)
    bind_arguments("k", sig, [FakeCudaArray((8,), "<f2", ptr=0x1000)])
    with pytest.raises(ValueError, match="not aligned to 16 bytes"):
        bind_arguments("k", sig, [FakeCudaArray((8,), "<f2", ptr=0x1008)])


def test_alignment_must_be_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        Param.pointer("a", "float32", align=12)


# ------------------------------------------------------------- read-only


def test_readonly_output_rejected():
    ro = f32()
    ro.flags.writeable = False
    with pytest.raises(ValueError, match=r"parameter #2 'out': is an output, but the array is read-only"):
        bind([f32(), f32(), ro, 1.0, 8])
    bind([ro, f32(), f32(), 1.0, 8])  # read-only inputs are fine
    with pytest.raises(ValueError, match="read-only"):
        bind([f32(), f32(), FakeCudaArray((8,), readonly=True), 1.0, 8])


# ----------------------------------------------------------------- scalars


@pytest.mark.parametrize(
    "dtype,value",
    [("int32", 2**31), ("int32", -(2**31) - 1), ("uint32", -1), ("int8", 128), ("uint64", 2**64), ("int64", 2**63)],
)
def test_integer_scalar_out_of_range(dtype, value):
    sig = (Param.scalar("s", dtype),)
    with pytest.raises(ValueError, match=rf"parameter #0 's': {value} is out of range for {dtype}"):
        bind_arguments("k", sig, [value])


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint32", "int8"])
def test_integer_scalar_limits_accepted(dtype):
    info = np.iinfo(dtype)
    sig = (Param.scalar("s", dtype),)
    for v in (int(info.min), int(info.max), np.int64(0) if dtype != "uint32" else np.uint32(7)):
        (b,) = bind_arguments("k", sig, [v])
        assert b.value.value == int(v)


def test_float_for_int_scalar_is_type_error():
    with pytest.raises(TypeError, match=r"parameter #4 'n': expected a int32 scalar, got float 8.0"):
        bind([f32(), f32(), f32(), 1.0, 8.0])


def test_array_for_scalar_is_type_error():
    with pytest.raises(TypeError, match=r"parameter #3 'alpha': expected a float32 scalar, got an array"):
        bind([f32(), f32(), f32(), np.ones(1, np.float32), 8])


def test_string_for_scalar_is_type_error():
    with pytest.raises(TypeError, match=r"parameter #3 'alpha'"):
        bind([f32(), f32(), f32(), "2.0", 8])


def test_float_scalar_overflow():
    with pytest.raises(ValueError, match=r"parameter #3 'alpha': 1e\+39 overflows float32"):
        bind([f32(), f32(), f32(), 1e39, 8])
    # inf and nan are passed through on purpose
    (b,) = bind_arguments("k", (Param.scalar("a", "float32"),), [math.inf])
    assert math.isinf(b.value.value)


def test_float_scalar_from_int_and_numpy():
    (b,) = bind_arguments("k", (Param.scalar("a", "float64"),), [3])
    assert isinstance(b.value, ctypes.c_double) and b.value.value == 3.0
    (b,) = bind_arguments("k", (Param.scalar("a", "float32"),), [np.float64(0.1)])
    assert b.value.value == pytest.approx(0.1, rel=1e-7)


def test_half_and_bfloat16_scalar_bits():
    (h,) = bind_arguments("k", (Param.scalar("a", "float16"),), [1.5])
    assert h.value.value == int(np.array(1.5, np.float16).view(np.uint16))
    (b,) = bind_arguments("k", (Param.scalar("a", "bfloat16"),), [1.0])
    assert b.value.value == 0x3F80
    (b,) = bind_arguments("k", (Param.scalar("a", "bfloat16"),), [-2.5])
    assert b.value.value == struct.unpack("<I", struct.pack("<f", -2.5))[0] >> 16
    with pytest.raises(ValueError, match="overflows float16"):
        bind_arguments("k", (Param.scalar("a", "float16"),), [70000.0])
    with pytest.raises(ValueError, match="overflows bfloat16"):
        bind_arguments("k", (Param.scalar("a", "bfloat16"),), [1e39])
    (b,) = bind_arguments("k", (Param.scalar("a", "bfloat16"),), [math.nan])
    assert b.value.value & 0x7F80 == 0x7F80 and b.value.value & 0x7F


def test_scalar_kind_shorthand():
    p = Param("n", "int64")
    assert p.kind == "scalar" and p.dtype == "int64"
    with pytest.raises(ValueError, match="kind must be 'pointer' or 'scalar'"):
        Param("n", "tensor")
    with pytest.raises(ValueError, match="scalar dtype must be one of"):
        Param.scalar("n", "float8_e4m3fn")


# --------------------------------------------------------- array sources


def test_cuda_array_interface_is_read():
    a = FakeCudaArray((2, 3), "<f4", ptr=0x10000)
    info = describe_array(a)
    assert (info.ptr, info.shape, info.dtype, info.on_host, info.source) == (
        0x10000, (2, 3), "float32", False, "__cuda_array_interface__")
    assert info.is_c_contiguous()


def test_masked_cuda_array_interface_rejected():
    a = FakeCudaArray((4,))
    a.__cuda_array_interface__["mask"] = object()
    with pytest.raises(TypeError, match=r"parameter #0 'x': masked arrays"):
        bind([a, f32(), f32(), 1.0, 8])


def test_dlpack_capsule_parsed_like_numpy():
    base = np.arange(24, dtype=np.int16).reshape(4, 6)[:, 1:5]
    info = parse_dlpack_capsule(base.__dlpack__())
    assert info.ptr == base.__array_interface__["data"][0]
    assert info.shape == (4, 4)
    assert info.strides == base.strides
    assert info.dtype == "int16" and info.itemsize == 2 and info.on_host


def test_dlpack_cuda_object_binds_as_device_array_and_gets_stream():
    fake = FakeDLPack((8,), ptr=0x7F0000001000)
    b = bind([fake, f32(), f32(), 1.0, 8], stream=0)
    assert isinstance(b[0], DeviceArg) and b[0].info.source == "dlpack"
    assert b[0].info.ptr == 0x7F0000001000 and b[0].info.shape == (8,) and b[0].info.dtype == "float32"
    assert b[0].info.keepalive is not None  # the capsule lives as long as the binding
    assert fake.stream_seen == 1  # DLPack's name for the legacy default stream
    fake = FakeDLPack((8,))
    bind([fake, f32(), f32(), 1.0, 8], stream=0x55)
    assert fake.stream_seen == 0x55


def test_dlpack_dtype_checked():
    with pytest.raises(TypeError, match="expected dtype float32, got an array of dtype bfloat16"):
        bind([FakeDLPack((8,), code=4, bits=16), f32(), f32(), 1.0, 8])


def test_dlpack_on_cpu_rejected():
    fake = FakeDLPack((8,), device_type=1)
    with pytest.raises(ValueError, match=r"parameter #0 'x': got a FakeDLPack on DLPack device CPU"):
        bind([fake, f32(), f32(), 1.0, 8])


def test_dlpack_capsule_contradicting_its_device_rejected():
    with pytest.raises(ValueError, match="capsule is not in CUDA memory"):
        bind([LyingDLPack(f32()), f32(), f32(), 1.0, 8])


def test_dlpack_on_other_device_ordinal_rejected():
    fake = FakeDLPack((8,), device_id=1)
    with pytest.raises(ValueError, match=r"the array is on CUDA device 1, the kernel runs on device 0"):
        bind([fake, f32(), f32(), 1.0, 8], device=0)


def test_torch_cpu_tensor_rejected():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    with pytest.raises(ValueError, match=r"parameter #0 'x': got a torch tensor on device 'cpu'.*\.cuda\(\)"):
        bind([torch.zeros(8), f32(), f32(), 1.0, 8])


def test_not_an_array_error_class():
    with pytest.raises(NotAnArray):
        describe_array(3.0)


def test_array_info_helpers():
    info = ArrayInfo(ptr=0, shape=(2, 3), strides=None, dtype="float32", itemsize=4,
                     readonly=False, on_host=False, source="x")
    assert info.byte_strides() == (12, 4) and info.span_bytes() == 24 and info.size == 6
    empty = ArrayInfo(ptr=0, shape=(0, 3), strides=(12, 4), dtype="float32", itemsize=4,
                      readonly=False, on_host=True, source="x")
    assert empty.span_bytes() == 0 and empty.is_c_contiguous()


# ------------------------------------------------------------ launch config


def test_normalize_dims():
    assert normalize_dims(5, "grid") == (5, 1, 1)
    assert normalize_dims((2, 3), "block") == (2, 3, 1)
    with pytest.raises(ValueError, match=r"grid\[0\] must be in"):
        normalize_dims(0, "grid")
    with pytest.raises(ValueError, match="more than 1024"):
        normalize_dims((64, 32), "block")
    with pytest.raises(TypeError):
        normalize_dims((1, 2, 3, 4), "grid")
    with pytest.raises(TypeError):
        normalize_dims(2.0, "grid")
    with pytest.raises(ValueError):
        normalize_shared_mem(-1)


def test_stream_handle():
    class TorchLike:
        cuda_stream = 1234

    class CoreLike:
        def __cuda_stream__(self):
            return (0, 77)

    assert stream_handle(None) == 0
    assert stream_handle(5) == 5
    assert stream_handle(TorchLike()) == 1234
    assert stream_handle(CoreLike()) == 77
    with pytest.raises(TypeError):
        stream_handle("default")


# ------------------------------------- errors come before the driver is touched


def test_kernel_call_checks_arguments_before_the_driver(monkeypatch):
    from tilec.runtime import driver

    def boom(*a, **k):  # pragma: no cover - must not be reached
        raise AssertionError("the driver was touched")

    monkeypatch.setattr(driver, "init", boom)
    monkeypatch.setattr(driver, "get_device", boom)
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
    with pytest.raises(TypeError, match="takes 5 argument"):
        k(f32(), f32(), grid=1, block=32)
    with pytest.raises(TypeError, match="parameter #1 'y'"):
        k(f32(), np.zeros(8, np.int32), f32(), 1.0, 8, grid=1, block=32)
    with pytest.raises(ValueError, match="block"):
        k(f32(), f32(), f32(), 1.0, 8, grid=1, block=2048)
    assert len(k.validate(f32(), f32(), f32(), 1.0, 8)) == 5


@pytest.mark.skipif(has_device(), reason="a CUDA device is present")
def test_valid_launch_without_gpu_raises_no_device_error():
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
    with pytest.raises(NoDeviceError, match=r"^no CUDA device: "):
        k(f32(), f32(), f32(), 1.0, 8, grid=1, block=32)
    with pytest.raises(NoDeviceError):
        k.load()


def test_kernel_signature_checks():
    with pytest.raises(ValueError, match="duplicate parameter names"):
        Kernel(AXPY_PTX, "axpy", [Param("n", "int32"), Param("n", "int32")])
    with pytest.raises(TypeError, match="must be a Param"):
        Kernel(AXPY_PTX, "axpy", [("n", "int32")])
    with pytest.raises(ValueError, match="not a cubin"):
        Kernel.from_cubin(b"nope", "axpy", AXPY_SIGNATURE)
