"""Launches on a real GPU (marked ``gpu``; skipped with the reason elsewhere).

Inputs are fresh random numbers each run (the seed is printed in failures);
outputs are poisoned with NaN first so a kernel that writes nothing fails.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from tilec.runtime import (
    CudaError,
    JitError,
    Kernel,
    LaunchConfigError,
    Param,
    compile_with_driver,
    driver,
    driver_version,
    find_ptxas,
    get_device,
    ptxas_version,
)

from runtime_kernels import (
    AXPY_PTX,
    AXPY_SIGNATURE,
    BROKEN_PTX,
    FILL_I64_PTX,
    FILL_I64_SIGNATURE,
    REPO_ROOT,
    SMEM_PROBE_PTX,
    SMEM_PROBE_SIGNATURE,
)

pytestmark = pytest.mark.gpu


@pytest.fixture
def rng():
    seed = int(np.random.SeedSequence().entropy % (2**63))
    print(f"random seed: {seed}")
    return np.random.default_rng(seed)


def _grid(n, block=256):
    return ((n + block - 1) // block,)


def test_device_properties():
    dev = get_device(0)
    assert dev.arch.startswith("sm_") and dev.compute_capability[0] >= 7
    assert dev.sm_count > 0
    assert dev.max_shared_per_block_optin >= dev.max_shared_per_block >= 48 * 1024
    assert driver_version() >= 11000


def test_axpy_numpy_with_driver_jit(rng, cache_dir):
    n = 10_000  # not a multiple of the block: the bounds check matters
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    alpha = float(rng.uniform(-2, 2))
    out = np.full(n + 37, np.nan, np.float32)  # elements past n must stay NaN
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
    k(x, y, out, alpha, n, grid=_grid(n), block=256)
    ref = np.float32(alpha).astype(np.float64) * x.astype(np.float64) + y.astype(np.float64)
    np.testing.assert_allclose(out[:n], ref, rtol=1e-6, atol=1e-6)
    assert np.isnan(out[n:]).all()
    # inputs are not copied back
    assert np.isfinite(x).all()


def test_int64_scalar_packing(rng):
    n = 1000
    value = int(rng.integers(2**40, 2**62))
    out = np.full(n, -1, np.int64)
    Kernel(FILL_I64_PTX, "fill_i64", FILL_I64_SIGNATURE)(out, value, n, grid=_grid(n), block=256)
    np.testing.assert_array_equal(out, value + np.arange(n, dtype=np.int64))


class _CudaBuffer:
    """Device memory from cuMemAlloc exposed through __cuda_array_interface__."""

    def __init__(self, n, dtype=np.float32):
        self.nbytes = n * np.dtype(dtype).itemsize
        self.ptr = driver.call("cuMemAlloc", self.nbytes)
        self.__cuda_array_interface__ = {
            "shape": (n,), "typestr": np.dtype(dtype).str, "data": (int(self.ptr), False),
            "strides": None, "version": 3,
        }

    def upload(self, arr):
        driver.call("cuMemcpyHtoD", self.ptr, arr.ctypes.data, self.nbytes)

    def download(self, dtype=np.float32):
        out = np.empty(self.nbytes // np.dtype(dtype).itemsize, dtype)
        driver.call("cuMemcpyDtoH", out.ctypes.data, self.ptr, self.nbytes)
        return out

    def free(self):
        driver.call("cuMemFree", self.ptr)


def test_axpy_cuda_array_interface_on_a_stream(rng):
    get_device(0).make_current()
    n = 4099
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    bx, by, bout = _CudaBuffer(n), _CudaBuffer(n), _CudaBuffer(n)
    stream = driver.call("cuStreamCreate", 0)
    try:
        bx.upload(x)
        by.upload(y)
        bout.upload(np.full(n, np.nan, np.float32))
        k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
        k(bx, by, bout, 0.5, n, grid=_grid(n), block=256, stream=stream)
        driver.call("cuStreamSynchronize", stream)
        np.testing.assert_allclose(bout.download(), 0.5 * x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)
    finally:
        for b in (bx, by, bout):
            b.free()
        driver.call("cuStreamDestroy", stream)


def test_axpy_torch(rng):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA support here")
    n = 12_345
    x = torch.from_numpy(rng.standard_normal(n + 1).astype(np.float32)).cuda()
    y = torch.from_numpy(rng.standard_normal(n).astype(np.float32)).cuda().requires_grad_(True)
    out = torch.full((n,), float("nan"), device="cuda")
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE)
    xs = x[1:]  # a view with an offset pointer
    k(xs, y, out, 2.0, n, grid=_grid(n), block=256)
    torch.cuda.synchronize()
    ref = 2.0 * xs.double() + y.detach().double()
    torch.testing.assert_close(out.double(), ref, rtol=1e-6, atol=1e-6)
    # on a torch side stream
    s = torch.cuda.Stream()
    out2 = torch.full((n,), float("nan"), device="cuda")
    s.wait_stream(torch.cuda.current_stream())  # out2's fill ran on the default stream
    with torch.cuda.stream(s):
        k(xs, y, out2, 2.0, n, grid=_grid(n), block=256, stream=s)
    s.synchronize()
    torch.testing.assert_close(out2.double(), ref, rtol=1e-6, atol=1e-6)
    with pytest.raises(TypeError, match="expected dtype float32, got an array of dtype float16"):
        k(xs.half(), y, out, 2.0, n, grid=_grid(n), block=256)


def test_jit_failure_shows_the_jit_log():
    k = Kernel(BROKEN_PTX, "broken", [Param.pointer("p", "float32")], cache=False)
    with pytest.raises(JitError) as info:
        k.load()
    err = info.value
    assert err.call in ("cuLinkAddData", "cuLinkComplete")
    assert "rd_undeclared" in err.log, err.log
    assert "JIT error log" in str(err) and "rd_undeclared" in str(err)
    assert err.kernel == "broken"


def test_missing_entry_names_the_call_and_kernel():
    k = Kernel(AXPY_PTX, "no_such_kernel", AXPY_SIGNATURE, cache=False)
    with pytest.raises(CudaError) as info:
        k.load()
    assert info.value.call == "cuModuleGetFunction"
    assert "CUDA_ERROR_NOT_FOUND" in str(info.value) and "no_such_kernel" in str(info.value)


def test_driver_jit_produces_a_cubin():
    cubin = compile_with_driver(AXPY_PTX, kernel="axpy")
    assert cubin[:4] == b"\x7fELF"
    # and it loads as a cubin kernel
    n = 300
    x = np.ones(n, np.float32)
    out = np.full(n, np.nan, np.float32)
    Kernel.from_cubin(cubin, "axpy", AXPY_SIGNATURE)(x, x, out, 3.0, n, grid=_grid(n), block=256)
    np.testing.assert_array_equal(out, 4.0)


def test_ptxas_cubin_loads_on_the_device(cache_dir):
    exe = find_ptxas()
    if exe is None:
        pytest.skip("ptxas not found")
    ptxas_major = int(ptxas_version(exe).split(".")[0])
    if driver_version() // 1000 < ptxas_major:
        pytest.skip(f"driver {driver_version()} is older than ptxas {ptxas_version(exe)}")
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, backend="ptxas")
    n = 500
    x = np.arange(n, dtype=np.float32)
    out = np.full(n, np.nan, np.float32)
    k(x, x, out, -1.0, n, grid=_grid(n), block=256)
    np.testing.assert_array_equal(out, 0.0)


def test_dynamic_shared_memory_over_48k():
    dev = get_device(0)
    smem = 100 * 1024
    if dev.max_shared_per_block_optin < smem:
        pytest.skip(f"{dev.name} allows only {dev.max_shared_per_block_optin} bytes of shared memory per block")
    block = 256
    k = Kernel(SMEM_PROBE_PTX, "smem_probe", SMEM_PROBE_SIGNATURE)
    out = np.full(block, np.nan, np.float32)
    k(out, smem // 4, grid=1, block=block, shared_mem=smem)
    np.testing.assert_array_equal(out, block - np.arange(block, dtype=np.float32))
    assert k.attributes()["max_dynamic_shared_bytes"] >= smem
    # a smaller request afterwards still works
    out2 = np.full(block, np.nan, np.float32)
    k(out2, 1024, grid=1, block=block, shared_mem=4096)
    np.testing.assert_array_equal(out2, block - np.arange(block, dtype=np.float32))


def test_shared_memory_over_the_device_maximum_is_a_clear_error():
    dev = get_device(0)
    too_much = dev.max_shared_per_block_optin + 1
    k = Kernel(SMEM_PROBE_PTX, "smem_probe", SMEM_PROBE_SIGNATURE)
    out = np.full(256, np.nan, np.float32)
    with pytest.raises(LaunchConfigError) as info:
        k(out, too_much // 4, grid=1, block=256, shared_mem=too_much)
    msg = str(info.value)
    assert "smem_probe" in msg and str(too_much) in msg and str(dev.max_shared_per_block_optin) in msg
    assert np.isnan(out).all()  # nothing ran


_CHILD = r"""
import json, sys
import numpy as np
from tilec.runtime import Kernel, Param, default_cache
sig = [Param.pointer("x", "float32"), Param.pointer("y", "float32"),
       Param.pointer("out", "float32", is_output=True), Param.scalar("alpha", "float32"),
       Param.scalar("n", "int32")]
k = Kernel(open(sys.argv[1]).read(), "axpy", sig)
n = 1000
x = np.random.default_rng().standard_normal(n).astype(np.float32)
out = np.full(n, np.nan, np.float32)
k(x, x, out, 1.0, n, grid=(n + 255) // 256, block=256)
assert np.allclose(out, 2 * x), "wrong result in the child"
print(json.dumps(default_cache().stats.as_dict()))
"""


def test_second_process_with_warm_cache_compiles_nothing(tmp_path, subprocess_env, python_exe, cache_dir):
    ptx = tmp_path / "axpy.ptx"
    ptx.write_text(AXPY_PTX)

    def run():
        out = subprocess.run([python_exe, "-c", _CHILD, str(ptx)], env=subprocess_env, cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run() == {"hits": 0, "misses": 1, "compiles": 1}
    assert run() == {"hits": 1, "misses": 0, "compiles": 0}


MAP_ECHO_PTX = r"""
.version 8.0
.target sm_90
.address_size 64

// out[0..15] = the 128 bytes of the tensor map m (passed by value)
.visible .entry map_echo(.param .u64 map_echo_a, .param .u64 map_echo_out, .param .align 64 .b8 map_echo_m[128])
{
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [map_echo_out];
    cvta.to.global.u64 %rd1, %rd1;
""" + "".join(f"    ld.param.b64 %rd2, [map_echo_m+{8 * i}];\n    st.global.b64 [%rd1+{8 * i}], %rd2;\n"
              for i in range(16)) + """    ret;
}
"""


def test_tensor_map_of_a_torch_tensor_is_encoded_and_passed_by_value():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA support here")
    if get_device(0).compute_capability < (9, 0):
        pytest.skip("tensor maps need sm_90")
    from tilec.runtime.tensor_map import TensorMapArg, encode

    a = torch.empty((256, 192), dtype=torch.float16, device="cuda")[:, :128]  # row stride 192 elements
    arg = TensorMapArg.of(a.data_ptr(), "float16", a.shape, a.stride(), (64, 64), 128)
    data = arg.encode()
    assert len(data) == 128 and data != bytes(128)
    for dtype, box, swizzle in (("bfloat16", (128, 32), 64), ("float32", (8, 8), 32), ("float32", (16, 4), 0)):
        assert len(TensorMapArg.of(a.data_ptr(), dtype, (256, 96), (96, 1), box, swizzle).encode()) == 128
    empty = torch.empty((0, 128), dtype=torch.float16, device="cuda")  # data_ptr() is 0
    assert len(TensorMapArg.of(empty.data_ptr(), "float16", empty.shape, empty.stride(), (64, 64), 128).encode()) \
        == 128

    sig = (Param.pointer("a", "float16", contiguous=False), Param.pointer("out", "uint8", is_output=True),
           Param.tensor_map("m", "a", "float16", (64, 64), 128, view_index=0))
    k = Kernel(MAP_ECHO_PTX, "map_echo", sig)
    out = torch.zeros(128, dtype=torch.uint8, device="cuda")
    k(a, out, arg, grid=1, block=1)
    torch.cuda.synchronize()
    assert bytes(out.cpu().numpy()) == data
    # the prepared launch re-encodes for a new address of the view
    prepared = k.prepare(a, out, arg, grid=1, block=1)
    b = torch.empty((256, 192), dtype=torch.float16, device="cuda")[:, :128]
    prepared.launch(torch.cuda.current_stream().cuda_stream, (b.data_ptr(), out.data_ptr()))
    torch.cuda.synchronize()
    assert bytes(out.cpu().numpy()) == encode(arg.spec, b.data_ptr()) != data
