"""One warp's mma.sync on the GPU: the sample kernels against float64 numpy.

    pytest tests/gpu -v -s        # -s shows the measured errors

Each test compiles ``examples/kernels/mma_{f16,bf16,tf32}.mlir`` with
``tilec.compile(path)`` and launches it through the runtime with fresh
random inputs (never zeros) and an output poisoned with NaN, then compares
with a float64 reference: max |D - ref| / max |ref|. f16/bf16 products are
exact in the f32 accumulator, so only rounding of the f32 sums remains
(tolerance 1e-3); tf32 rounds the inputs to 10 mantissa bits (1e-2).

numpy has no bfloat16, so bf16 inputs are put in device memory here and
handed over through DLPack (``BF16DeviceArray``), the way a torch bf16
tensor would be; its capsule layout is checked without a GPU too.
Without a GPU every test but that one is skipped with the driver's reason.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

import tilec
from tilec.runtime import driver, has_device, no_device_reason
# The consumer's DLPack structures: this test produces a capsule the runtime then reads.
from tilec.runtime.arrays import _DLDataType, _DLDevice, _DLManagedTensor

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "examples" / "kernels"

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")



def relative_error(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - ref).max() / np.abs(ref).max())


def random(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Standard normal values, none of them zero (a zero hides a wrong layout less well)."""
    x = rng.standard_normal(shape)
    x[np.abs(x) < 1e-3] = 0.5
    return x


# ---------------------------------------------------------------- bf16 through DLPack


def to_bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 → bfloat16 bit patterns (uint16), rounded to nearest even (no NaNs here)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


_CAPSULE_NAME = b"dltensor"
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_KDL_CUDA, _KDL_BFLOAT = 2, 4


class BF16DeviceArray:
    """A C-contiguous bfloat16 array in device memory, exported through DLPack.

    ``BF16DeviceArray(bits)`` allocates and uploads (a GPU is needed);
    ``BF16DeviceArray(bits, address=...)`` only describes memory at ``address``
    (for checking the capsule without a GPU).
    """

    def __init__(self, bits: np.ndarray, *, address: int | None = None):
        assert bits.dtype == np.uint16
        self.shape = bits.shape
        self.nbytes = bits.nbytes
        self._allocation = None
        if address is None:
            driver.get_device(0).make_current()
            self._allocation = driver.call("cuMemAlloc", self.nbytes)
            host = np.ascontiguousarray(bits)
            driver.call("cuMemcpyHtoD", self._allocation, host.ctypes.data, self.nbytes)
            address = int(self._allocation)
        self.address = address
        self._shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        t.data = address
        t.device = _DLDevice(_KDL_CUDA, 0)
        t.ndim = len(self.shape)
        t.dtype = _DLDataType(_KDL_BFLOAT, 16, 1)
        t.shape = self._shape
        t.strides = None  # C-contiguous
        t.byte_offset = 0

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_KDL_CUDA, 0)

    def __dlpack__(self, stream: int | None = None):
        # No destructor: the memory and the struct belong to this object, which
        # the caller keeps alive for the launch.
        return _capsule_new(ctypes.addressof(self._managed), _CAPSULE_NAME, None)

    def free(self) -> None:
        if self._allocation is not None:
            driver.call("cuMemFree", self._allocation)
            self._allocation = None


def test_bf16_dlpack_capsule_is_read_as_bfloat16() -> None:
    """The DLPack export the bf16 test relies on, checked without a GPU."""
    from tilec.runtime.arrays import describe_array

    bits = to_bf16_bits(np.array([[1.0, -2.5, 3.0]], np.float32))
    assert from_bf16_bits(bits).tolist() == [[1.0, -2.5, 3.0]]
    array = BF16DeviceArray(bits, address=0x7F0000001000)
    info = describe_array(array)
    assert (info.dtype, info.shape, info.ptr, info.on_host) == ("bfloat16", (1, 3), 0x7F0000001000, False)
    assert info.is_c_contiguous()


# ---------------------------------------------------------------- the kernels on the GPU


def _launch_and_check(name: str, a, b, ref: np.ndarray, tolerance: float) -> float:
    kernel = tilec.compile(KERNELS / f"{name}.mlir")
    d = np.full((16, 8), np.nan, np.float32)
    kernel(a, b, d)  # grid, block and shared memory from #tile.launch
    assert not np.isnan(d).any(), f"{name}: some outputs were never written:\n{d}"
    err = relative_error(d, ref)
    print(f"\n{name} on {driver.get_device(0).name} ({kernel.arch} PTX): max relative error {err:.3e}")
    assert err < tolerance, f"{name}: max relative error {err:.3e} >= {tolerance}\ngot\n{d}\nexpected\n{ref}"
    assert "cubin" in kernel.asm
    return err


@gpu
@pytest.mark.gpu
def test_mma_f16() -> None:
    rng = np.random.default_rng()
    a = random(rng, (16, 16)).astype(np.float16)
    b = random(rng, (16, 8)).astype(np.float16)
    bt = np.ascontiguousarray(b.T)  # the kernel takes B column-major: B^T stored row-major
    ref = a.astype(np.float64) @ b.astype(np.float64)
    _launch_and_check("mma_f16", a, bt, ref, 1e-3)


@gpu
@pytest.mark.gpu
def test_mma_bf16() -> None:
    rng = np.random.default_rng()
    a_bits = to_bf16_bits(random(rng, (16, 16)))
    b_bits = to_bf16_bits(random(rng, (16, 8)))  # row-major K x N: the kernel reads it with ldmatrix.trans
    ref = from_bf16_bits(a_bits).astype(np.float64) @ from_bf16_bits(b_bits).astype(np.float64)
    a, b = BF16DeviceArray(a_bits), BF16DeviceArray(b_bits)
    try:
        _launch_and_check("mma_bf16", a, b, ref, 1e-3)
    finally:
        a.free()
        b.free()


@gpu
@pytest.mark.gpu
def test_mma_tf32() -> None:
    rng = np.random.default_rng()
    a = random(rng, (16, 8)).astype(np.float32)
    b = random(rng, (8, 8)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    _launch_and_check("mma_tf32", a, b, ref, 1e-2)


@gpu
@pytest.mark.gpu
def test_relaunch_with_new_inputs() -> None:
    """The loaded kernel is reused; each launch sees its own inputs."""
    kernel = tilec.compile(KERNELS / "mma_f16.mlir")
    rng = np.random.default_rng()
    for _ in range(3):
        a = random(rng, (16, 16)).astype(np.float16)
        b = random(rng, (16, 8)).astype(np.float16)
        d = np.full((16, 8), np.nan, np.float32)
        kernel(a, np.ascontiguousarray(b.T), d)
        assert relative_error(d, a.astype(np.float64) @ b.astype(np.float64)) < 1e-3


@gpu
@pytest.mark.gpu
def test_wrong_arguments_fail_before_launch() -> None:
    kernel = tilec.compile(KERNELS / "mma_f16.mlir")
    a = np.ones((16, 16), np.float16)
    bt = np.ones((8, 16), np.float16)
    d = np.full((16, 8), np.nan, np.float32)
    with pytest.raises(TypeError, match=r"takes 3 argument\(s\)"):
        kernel(a, bt)
    with pytest.raises(TypeError, match="expected dtype float16"):
        kernel(a.astype(np.float32), bt, d)
    with pytest.raises(TypeError, match="expected dtype float32"):
        kernel(a, bt, d.astype(np.float16))
    assert np.isnan(d).all()  # nothing ran
    kernel(a, bt, d)  # and the right call still works
    np.testing.assert_allclose(d, np.full((16, 8), 16.0, np.float32))
