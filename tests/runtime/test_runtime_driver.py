"""The driver door: error mapping, no-device behaviour, parameter packing."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from cuda.bindings import driver as cu

from tilec.runtime import CudaError, JitError, Kernel, NoDeviceError, Param, driver, has_device
from tilec.runtime.launch import pack_params, param_values
from tilec.runtime.args import bind_arguments

from runtime_kernels import AXPY_PTX, AXPY_SIGNATURE


@pytest.fixture
def no_driver(monkeypatch):
    """Pretend cuda.bindings cannot load the driver; restore the real probe after."""

    def fail():
        raise ImportError("simulated: libcuda.so.1 not found")

    driver._reset_for_tests()
    monkeypatch.setattr(driver, "_import_bindings", fail)
    yield
    monkeypatch.undo()
    driver._reset_for_tests()


def test_import_and_probe_never_raise():
    assert isinstance(has_device(), bool)
    reason = driver.no_device_reason()
    assert (reason is None) == has_device()


def test_simulated_missing_driver(no_driver):
    assert driver.has_device() is False
    assert "simulated: libcuda.so.1 not found" in driver.no_device_reason()
    assert driver.driver_version() is None
    assert driver.device_count() == 0
    with pytest.raises(NoDeviceError, match=r"^no CUDA device: cuda-python .* simulated"):
        driver.get_device(0)
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
    a = np.zeros(4, np.float32)
    with pytest.raises(NoDeviceError, match="^no CUDA device: "):
        k(a, a, a, 1.0, 4, grid=1, block=32)


def test_simulated_cuinit_failure(monkeypatch):
    class FakeDriver:
        CUresult = cu.CUresult

        @staticmethod
        def cuInit(flags):
            return (cu.CUresult.CUDA_ERROR_NO_DEVICE,)

        @staticmethod
        def cuGetErrorName(code):
            raise RuntimeError("no library")

        cuGetErrorString = cuGetErrorName

    driver._reset_for_tests()
    monkeypatch.setattr(driver, "_import_bindings", lambda: FakeDriver)
    try:
        assert not driver.has_device()
        with pytest.raises(NoDeviceError, match=r"no CUDA device: cuInit failed: CUDA_ERROR_NO_DEVICE \(100\)"):
            driver.init()
    finally:
        monkeypatch.undo()
        driver._reset_for_tests()


def test_simulated_zero_devices(monkeypatch):
    class FakeDriver:
        CUresult = cu.CUresult

        @staticmethod
        def cuInit(flags):
            return (cu.CUresult.CUDA_SUCCESS,)

        @staticmethod
        def cuDeviceGetCount():
            return (cu.CUresult.CUDA_SUCCESS, 0)

    driver._reset_for_tests()
    monkeypatch.setattr(driver, "_import_bindings", lambda: FakeDriver)
    try:
        with pytest.raises(NoDeviceError, match="reports 0 CUDA devices"):
            driver.init()
    finally:
        monkeypatch.undo()
        driver._reset_for_tests()


@pytest.mark.skipif(has_device(), reason="a CUDA device is present")
def test_real_cuinit_failure_maps_to_no_device_error():
    driver._reset_for_tests()
    with pytest.raises(NoDeviceError, match="^no CUDA device: "):
        driver.init()


def test_check_names_the_call_and_the_kernel():
    with pytest.raises(CudaError) as info:
        driver.check((cu.CUresult.CUDA_ERROR_INVALID_PTX,), "cuModuleLoadData", kernel="axpy")
    err = info.value
    assert err.call == "cuModuleLoadData" and err.code == 218 and err.kernel == "axpy"
    assert "CUDA_ERROR_INVALID_PTX" in err.name
    msg = str(err)
    assert msg.startswith("cuModuleLoadData failed: ") and "218" in msg and "[kernel 'axpy']" in msg


def test_check_unpacks_values():
    ok = cu.CUresult.CUDA_SUCCESS
    assert driver.check((ok,), "f") is None
    assert driver.check((ok, 7), "f") == 7
    assert driver.check((ok, 7, 8), "f") == (7, 8)


def test_jit_error_message_contains_the_log():
    e = JitError("cuLinkAddData", 218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed",
                 log="ptxas application ptx input, line 10; error : Unknown symbol", kernel="broken")
    assert isinstance(e, CudaError)
    assert "JIT error log:" in str(e) and "Unknown symbol" in str(e) and e.log.startswith("ptxas")


def test_pack_params_points_at_each_value():
    sig = (Param.pointer("p", "float32"), Param.scalar("a", "float32"), Param.scalar("n", "int64"),
           Param.scalar("h", "float16"))
    fake = type("Dev", (), {"__cuda_array_interface__": {
        "shape": (4,), "typestr": "<f4", "data": (0x7F00DEAD0000, False), "version": 3}})()
    bound = bind_arguments("k", sig, [fake, 2.5, -(2**40), 1.0])
    addr, keep = pack_params(param_values(bound, {}))
    ptrs = (ctypes.c_void_p * 4).from_address(addr)
    assert ctypes.c_uint64.from_address(ptrs[0]).value == 0x7F00DEAD0000
    assert ctypes.c_float.from_address(ptrs[1]).value == 2.5
    assert ctypes.c_int64.from_address(ptrs[2]).value == -(2**40)
    assert ctypes.c_uint16.from_address(ptrs[3]).value == 0x3C00
    assert pack_params([]) == (None, None)


def test_host_args_get_their_staged_address():
    sig = (Param.pointer("p", "float32"),)
    bound = bind_arguments("k", sig, [np.zeros(4, np.float32)])
    (v,) = param_values(bound, {0: 0xABC000})
    assert v.value == 0xABC000


def test_missing_driver_library_is_no_device_without_cuda_python(monkeypatch):
    """Without the driver library the probe stops at a failed dlopen, before importing cuda-python."""
    import sys

    monkeypatch.setitem(driver._DRIVER_LIBRARY, sys.platform, "libtilec-no-such-driver.so.1")
    monkeypatch.setitem(sys.modules, "cuda.bindings", None)  # importing it would now fail loudly
    driver._reset_for_tests()
    try:
        with pytest.raises(driver.DriverLibraryMissing):
            driver._import_bindings()
        assert not driver.has_device()
        assert driver.no_device_reason().startswith("the NVIDIA driver library cannot be loaded (")
        with pytest.raises(NoDeviceError, match="driver library cannot be loaded"):
            driver.init()
    finally:
        monkeypatch.undo()
        driver._reset_for_tests()
