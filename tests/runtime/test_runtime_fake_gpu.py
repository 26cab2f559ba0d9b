"""The driver-facing paths (load, JIT, shared memory, staging, launch) on a fake driver.

These run everywhere; the real-GPU versions are in test_runtime_gpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from cuda.bindings import driver as cu

from tilec.runtime import CubinCache, CudaError, JitError, Kernel, LaunchConfigError, Param, get_device

from runtime_fake_driver import FakeDriver, installed
from tilec.runtime import find_ptxas
from runtime_kernels import AXPY_PTX, AXPY_SIGNATURE, BROKEN_PTX, SMEM_PROBE_PTX, SMEM_PROBE_SIGNATURE


@pytest.fixture
def fake(monkeypatch):
    with installed(monkeypatch) as fake:
        yield fake


class DevArray:
    """Host memory posing as device memory (the fake driver's device is the host)."""

    def __init__(self, arr):
        self.arr = arr
        self.__cuda_array_interface__ = {"shape": arr.shape, "typestr": arr.dtype.str,
                                         "data": (arr.ctypes.data, False), "strides": None, "version": 3}


def test_device_query(fake):
    dev = get_device(0)
    assert (dev.name, dev.arch, dev.sm_count, dev.max_shared_per_block_optin) == ("Fake GPU", "sm_90", 132, 232448)
    assert get_device(0) is dev
    dev.make_current()
    assert fake.count("cuDevicePrimaryCtxRetain") == 1


def test_numpy_axpy_stages_copies_and_frees(fake):
    rng = np.random.default_rng()
    n = 300
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full(n, np.nan, np.float32)
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
    k(x, y, out, 0.5, n, grid=2, block=256)
    np.testing.assert_allclose(out, 0.5 * x + y, rtol=1e-6)
    assert fake.count("cuMemAlloc") == 3 and fake.count("cuMemcpyHtoDAsync") == 3
    assert fake.count("cuMemcpyDtoHAsync") == 1  # only the output comes back
    assert fake.count("cuStreamSynchronize") == 1
    assert fake.memory == {}, "device memory leaked"
    assert fake.launches[-1] == {"name": "axpy", "grid": (2, 1, 1), "block": (256, 1, 1), "shared_mem": 0,
                                 "stream": 0}
    assert fake.links == {}, "link state not destroyed"


def test_device_arrays_launch_without_copies_or_sync(fake):
    n = 64
    x, y = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
    out = np.full(n, np.nan, np.float32)
    stream = cu.CUstream(0x5000)
    Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)(DevArray(x), DevArray(y), DevArray(out), 3.0, n,
                                             grid=1, block=64, stream=stream)
    np.testing.assert_array_equal(out, 5.0)
    assert fake.count("cuMemAlloc") == 0 and fake.count("cuStreamSynchronize") == 0
    assert int(fake.launches[-1]["stream"]) == 0x5000


def test_module_loaded_once_and_cubin_cached(fake, tmp_path):
    cache = CubinCache(tmp_path)
    a = np.zeros(4, np.float32)
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, cache=cache, backend="driver")  # the JIT's path
    for _ in range(3):
        k(a, a, a, 1.0, 4, grid=1, block=32)
    assert fake.count("cuModuleLoadData") == 1 and fake.count("cuLinkCreate") == 1
    assert cache.stats.as_dict() == {"hits": 0, "misses": 1, "compiles": 1}
    # a new Kernel object for the same PTX hits the cache: no JIT at all
    Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, cache=cache, backend="driver").load()
    assert fake.count("cuLinkCreate") == 1
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "compiles": 1}
    # the cached cubin is the image the JIT produced (copied before cuLinkDestroy)
    (cubin,) = list(tmp_path.rglob("*.cubin"))
    assert cubin.read_bytes().startswith(b"\x7fELF-fake-cubin\n") and b".entry axpy(" in cubin.read_bytes()


def test_jit_error_carries_the_log(fake):
    """A PTX ptxas refuses goes on to the device's JIT (``auto``), whose log the error carries."""
    k = Kernel(BROKEN_PTX, "broken", [Param.pointer("p")], cache=False)
    with pytest.raises(JitError) as info:
        k.load()
    assert info.value.call == "cuLinkAddData" and "CUDA_ERROR_INVALID_PTX" in str(info.value)
    assert "Unknown symbol '%rd_undeclared'" in info.value.log
    assert "[kernel 'broken']" in str(info.value)
    assert fake.links == {}, "link state not destroyed after the failure"


def test_missing_entry_names_the_call(fake):
    with pytest.raises(CudaError, match=r"cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND .*\[kernel 'nope'\]"):
        Kernel(AXPY_PTX, "nope", AXPY_SIGNATURE, cache=False).load()


def test_shared_memory_opt_in(fake):
    k = Kernel(SMEM_PROBE_PTX, "smem_probe", SMEM_PROBE_SIGNATURE, cache=False)
    out = np.full(256, np.nan, np.float32)
    k(out, 1024, grid=1, block=256, shared_mem=4096)  # under 48 KB: no opt-in
    assert fake.count("cuFuncSetAttribute") == 0
    smem = 100 * 1024
    k(out, smem // 4, grid=1, block=256, shared_mem=smem)
    np.testing.assert_array_equal(out, 256 - np.arange(256, dtype=np.float32))
    assert fake.count("cuFuncSetAttribute") == 1
    k(out, smem // 4, grid=1, block=256, shared_mem=smem)  # already opted in
    assert fake.count("cuFuncSetAttribute") == 1
    assert k.attributes()["max_dynamic_shared_bytes"] == smem


def test_shared_memory_over_the_device_max(fake):
    k = Kernel(SMEM_PROBE_PTX, "smem_probe", SMEM_PROBE_SIGNATURE, cache=False)
    out = np.zeros(256, np.float32)
    launches = fake.count("cuLaunchKernel")
    with pytest.raises(LaunchConfigError, match=r"smem_probe.*232449 bytes per block, more than the device's "
                                                r"opt-in maximum of 232448 bytes"):
        k(out, 1, grid=1, block=256, shared_mem=232449)
    assert fake.count("cuLaunchKernel") == launches and fake.count("cuFuncSetAttribute") == 0
    assert fake.memory == {}


def test_launch_failure_names_kernel_and_frees_memory(fake):
    fake.fail_launch_with = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
    a = np.zeros(8, np.float32)
    with pytest.raises(CudaError) as info:
        Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, cache=False)(a, a, a, 1.0, 8, grid=1, block=32)
    assert info.value.call == "cuLaunchKernel" and info.value.kernel == "axpy"
    assert "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" in str(info.value)
    assert fake.memory == {}


def test_non_contiguous_numpy_output_copied_back_in_place(fake):
    base = np.zeros((4, 8), np.float32)
    view = base[:, ::2]  # every other column
    sig = (Param.pointer("x", "float32", contiguous=False), Param.pointer("y", "float32", contiguous=False),
           Param.pointer("out", "float32", is_output=True, contiguous=False),
           Param.scalar("alpha", "float32"), Param.scalar("n", "int32"))
    ones = np.ones(32, np.float32)
    # the kernel sees the span from view[0,0] to view[3,6] as a flat array
    span = 3 * 8 + 6 + 1
    Kernel(AXPY_PTX, "axpy", sig, cache=False)(ones, ones, view, 1.0, span, grid=1, block=64)
    assert (base[:, :7] == 2.0).all() and (base[3, 7] == 0.0)


def test_fake_driver_checks_calls_like_the_real_binding():
    fake = FakeDriver(cu)
    with pytest.raises(TypeError):  # arity, from the real signature
        fake.cuMemcpyHtoDAsync(1, 2, 3)
    if not fake._probe_conversions:
        pytest.skip("the real driver library is present: argument conversion is not probed")
    with pytest.raises(AssertionError, match="real cuLaunchKernel rejected"):
        fake.cuLaunchKernel(cu.CUfunction(1), 1, 1, 1, 1, 1, 1, 0, 0, "not params", 0)


needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found (PATH or nvidia-cuda-nvcc wheel)")


@needs_ptxas
def test_auto_builds_with_ptxas_for_the_device(fake, tmp_path):
    """``auto`` on a GPU: ptxas, for the device's arch (its ``a`` variant when the PTX asks for it),
    no JIT; the cache key names ptxas."""
    from tilec.runtime import jit

    cache = CubinCache(tmp_path)
    a = np.zeros(4, np.float32)
    Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, cache=cache)(a, a, a, 1.0, 4, grid=1, block=32)
    assert fake.count("cuLinkCreate") == 0 and fake.count("cuModuleLoadData") == 1
    (cubin,) = list(tmp_path.rglob("*.cubin"))
    assert cubin.read_bytes().startswith(b"\x7fELF") and b".text.axpy\0" in cubin.read_bytes()
    assert jit.device_target("sm_90", "sm_90a") == "sm_90a" and jit.device_target("sm_90", "sm_80") == "sm_90"
    assert jit.device_target("sm_100", "sm_90a") == "sm_100"
    assert jit.ptx_target(".version 8.0\n.target sm_90a\n") == "sm_90a" and jit.ptx_target("") is None


@needs_ptxas
def test_auto_keeps_the_jit_where_ptxas_is_newer_than_the_driver(fake, tmp_path):
    """A ptxas of a newer CUDA than the driver's may write cubins the driver cannot load: ``auto``
    then builds with the driver's JIT."""
    from tilec.runtime import jit

    fake.version = 12040  # a CUDA 12.4 driver; the test extra's ptxas is 13
    assert jit.resolve_backend("auto")[0] == "driver"
    a = np.zeros(4, np.float32)
    Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, cache=CubinCache(tmp_path))(a, a, a, 1.0, 4, grid=1, block=32)
    assert fake.count("cuLinkCreate") == 1
