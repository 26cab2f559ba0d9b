"""The per-call host path of ``tilec.matmul`` and ``CompiledKernel``, on CPU with stand-ins.

A repeated call must take the fast path (no planning, no ``bind_arguments``,
one driver call) and still refuse every bad argument with the checked
path's message. Torch is not installed here: :class:`FakeTensor` has the
attributes the runtime reads from a torch tensor, :func:`fake_torch` the
functions tilec calls (``empty``, the current stream), and the runtime's
fake driver stands in for the GPU (it checks each call's arity against the
real binding and, where there is no driver library, lets the real binding
convert the arguments). ``python bench/launch_overhead.py --stub`` times the
same paths with these stand-ins; nothing here asserts a time.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import time
import types
from pathlib import Path

import numpy as np
import pytest

import tilec
import tilec.kernels.gemm as mm
from tilec.kernels import fast_path
from tilec.runtime import Param, driver
from tilec.runtime import args as runtime_args

HERE = Path(__file__).resolve().parent


# ---------------------------------------------------------------- stand-ins for torch


class FakeDtype:
    """``torch.float16`` and friends: the runtime reads ``str(dtype)`` of a dtype from module ``torch``."""

    __module__ = "torch"

    def __init__(self, name: str, itemsize: int):
        self.name, self.itemsize = name, itemsize

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class FakeDevice:
    __module__ = "torch"

    def __init__(self, type: str = "cuda", index: int | None = 0):  # noqa: A002 - torch's name
        self.type, self.index = type, index

    def __eq__(self, other) -> bool:
        return isinstance(other, FakeDevice) and (other.type, other.index) == (self.type, self.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


FLOAT16, BFLOAT16, FLOAT32 = FakeDtype("float16", 2), FakeDtype("bfloat16", 2), FakeDtype("float32", 4)
_NUMPY = {"float16": np.float16, "float32": np.float32}
_next_address = [0x7F0000000000]


class FakeTensor:
    """What tilec reads of a torch CUDA tensor. Backed by host memory (``numpy=``) when a fake kernel
    reads it, else at a made-up, 256-byte aligned address that nothing dereferences."""

    __module__ = "torch"

    def __init__(self, shape, dtype=FLOAT16, *, strides=None, device=None, address=None, numpy=None):
        self.shape = tuple(shape)
        if strides is None:
            strides, step = [], 1
            for d in reversed(self.shape):
                strides.append(step)
                step *= max(d, 1)
            strides = tuple(reversed(strides))
        self._strides = tuple(strides)
        self.dtype = dtype
        self.device = device if device is not None else FakeDevice()
        self.numpy = numpy
        if address is None:
            if numpy is not None:
                address = numpy.ctypes.data
            else:
                address = _next_address[0]
                _next_address[0] += 1 << 24
        self._address = address

    @classmethod
    def of(cls, array: np.ndarray) -> "FakeTensor":
        """A tensor over a numpy array's memory (its strides, in elements)."""
        dtype = {np.dtype(np.float16): FLOAT16, np.dtype(np.float32): FLOAT32}[array.dtype]
        return cls(array.shape, dtype, strides=tuple(s // array.itemsize for s in array.strides), numpy=array)

    def stride(self):
        return self._strides

    def data_ptr(self) -> int:
        return self._address

    def element_size(self) -> int:
        return self.dtype.itemsize

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else self.device.index

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def dim(self) -> int:
        return len(self.shape)

    def is_contiguous(self) -> bool:
        step = 1
        for d, s in zip(reversed(self.shape), reversed(self._strides)):
            if d != 1 and s != step:
                return False
            step *= d
        return True

    @property
    def T(self) -> "FakeTensor":  # noqa: N802 - torch's name
        return FakeTensor(self.shape[::-1], self.dtype, strides=self._strides[::-1], device=self.device,
                          address=self._address)

    def offset(self, nbytes: int) -> "FakeTensor":
        """The same view, ``nbytes`` further on (to make an unaligned address)."""
        return FakeTensor(self.shape, self.dtype, strides=self._strides, device=self.device,
                          address=self._address + nbytes)


RAW_STREAM = 0x5A00
"""What the fake ``torch._C._cuda_getCurrentRawStream(0)`` answers: torch's current stream."""


def fake_torch() -> types.ModuleType:
    """A module ``torch`` with what tilec calls: dtypes, ``empty``, the current stream."""
    torch = types.ModuleType("torch")
    torch.float16, torch.bfloat16, torch.float32 = FLOAT16, BFLOAT16, FLOAT32
    torch.Tensor = FakeTensor
    torch.allocations = 0

    def empty(shape, dtype=None, device=None):
        torch.allocations += 1
        return FakeTensor(shape, dtype, device=device)

    class Stream:
        def __init__(self, device):
            self.cuda_stream = RAW_STREAM + (device.index or 0)

    torch.empty = empty
    torch.cuda = types.SimpleNamespace(current_stream=Stream)
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda index: RAW_STREAM + index)
    return torch


def load_fake_driver():
    """The runtime tests' fake driver module (``FakeDriver``, ``installed``), from ``tests/runtime``."""
    sys.path.insert(0, str(HERE / "runtime"))
    try:
        import runtime_fake_driver
    finally:
        sys.path.remove(str(HERE / "runtime"))
    return runtime_fake_driver


def instrument(fake) -> None:
    """Make ``fake``'s launch keep the 8-byte parameter words of every launch (``fake.params``, a list
    per launch) and fail with the codes put in ``fake.fail_next`` first. Installed once: the runtime
    binds ``cuLaunchKernel`` when it prepares a launch."""
    fake.params, fake.fail_next, fake.timing = [], [], False
    original = fake.cuLaunchKernel
    success = (fake.CUresult.CUDA_SUCCESS,)

    def launch(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        if fake.timing:  # a launch that costs nothing, to time the host path alone
            return success
        if fake.fail_next:
            fake.calls.append("cuLaunchKernel")
            return (fake.fail_next.pop(0),)
        result = original(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra)
        name = fake.functions[int(f)]["name"]
        count = next((len(k.signature) for k in mm.cached_kernels().values() if k.name == name), 5)
        slots = (ctypes.c_void_p * count).from_address(params)
        fake.params.append([ctypes.c_uint64.from_address(slots[i]).value for i in range(count)])
        return result

    fake.cuLaunchKernel = launch


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def fake_gpu(tmp_path_factory):
    """The fake driver and a fake torch for the whole module; kernels compiled here are forgotten after."""
    from cuda.bindings import driver as cu

    fake = load_fake_driver().FakeDriver(cu)
    instrument(fake)
    saved = mm.cached_kernels()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TILEC_CACHE_DIR", str(tmp_path_factory.mktemp("tilec-cache")))
        driver._reset_for_tests()
        mp.setattr(driver, "_import_bindings", lambda: fake)
        mp.setitem(sys.modules, "torch", fake_torch())
        mm.clear_cache()
        try:
            yield fake
        finally:
            mm.clear_cache()  # their runtime kernels hold this fake driver's handles
            mm._KERNELS.update(saved)
            driver._reset_for_tests()


@pytest.fixture
def gpu(fake_gpu):
    """Per test: no prepared calls yet, no launches recorded."""
    mm._FAST.clear()
    fake_gpu.params.clear()
    fake_gpu.launches.clear()
    yield fake_gpu
    mm._FAST.clear()
    fake_gpu.fail_next.clear()


def no_planning(monkeypatch):
    """From here on, planning a call (the checked path) fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("the checked path ran: plan_matmul was called")

    monkeypatch.setattr(mm, "plan_matmul", refuse)


def f16(*shape, **kwargs) -> FakeTensor:
    return FakeTensor(shape, FLOAT16, **kwargs)


# ---------------------------------------------------------------- tilec.matmul


def test_repeated_matmul_replays_the_checked_plan(gpu, monkeypatch):
    a, b, c = f16(64, 48), f16(48, 32), f16(64, 32)
    assert tilec.matmul(a, b, out=c) is c
    first = gpu.params[-1]
    assert first == [a.data_ptr(), 64, 48, 48, 1, b.data_ptr(), 48, 32, 32, 1, c.data_ptr(), 64, 32, 32, 1]
    assert len(mm._FAST) == 1
    no_planning(monkeypatch)
    binds = []
    monkeypatch.setattr(runtime_args, "bind_arguments", lambda *a, **k: binds.append(1))
    for _ in range(3):
        a2, b2, c2 = f16(64, 48), f16(48, 32), f16(64, 32)
        assert tilec.matmul(a2, b2, out=c2) is c2
        assert gpu.params[-1] == [a2.data_ptr(), 64, 48, 48, 1, b2.data_ptr(), 48, 32, 32, 1,
                                  c2.data_ptr(), 64, 32, 32, 1]
    assert binds == [] and len(gpu.launches) == 4
    config = mm.choose_config(64, 32, 48, "float16", aligned=True)  # fake tensors are 16-byte aligned
    warps = config.warps[0] * config.warps[1]
    assert {launch["grid"] for launch in gpu.launches} == {(config.grid(64, 32), 1, 1)}
    assert gpu.launches[-1]["block"] == (32 * warps, 1, 1)
    assert gpu.count("cuModuleLoadData") >= 1 and len(mm._FAST) == 1


def test_fast_path_streams_and_allocation(gpu, monkeypatch):
    torch = sys.modules["torch"]
    a, b = f16(40, 24), f16(24, 16)
    c = tilec.matmul(a, b)  # checked: allocates with torch.empty
    assert isinstance(c, FakeTensor) and c.shape == (40, 16) and c.dtype is FLOAT16
    no_planning(monkeypatch)
    before = torch.allocations
    c2 = tilec.matmul(f16(40, 24), f16(24, 16))
    assert c2 is not c and c2.shape == (40, 16) and torch.allocations == before + 1
    assert gpu.params[-1][10] == c2.data_ptr()
    assert gpu.launches[-1]["stream"] == RAW_STREAM  # torch's current stream of cuda:0
    tilec.matmul(a, b, stream=0x777)
    assert gpu.launches[-1]["stream"] == 0x777
    tilec.matmul(a, b, stream=types.SimpleNamespace(cuda_stream=0x778))  # a torch.cuda.Stream
    assert gpu.launches[-1]["stream"] == 0x778


def test_fast_path_replans_for_other_address_alignment(gpu):
    """The kernel is specialised for each operand's row alignment, which the address decides too: a
    prepared call whose address has other low bits goes back to the checked path, which plans (and
    compiles) the kernel for them, and then prepares that one."""
    a, b, c = f16(64, 48), f16(48, 32), f16(64, 32)
    tilec.matmul(a, b, out=c)
    assert gpu.launches[-1]["name"] == "matmul_f16_nn_f16_a16"
    shifted = a.offset(8)  # the same shape and strides, 8 bytes on: rows 8-byte aligned
    tilec.matmul(shifted, b, out=c)
    assert gpu.launches[-1]["name"] == "matmul_f16_nn_f16_a8_16_16"
    assert gpu.params[-1][0] == shifted.data_ptr()
    tilec.matmul(a.offset(16), b, out=c)  # 16-byte aligned again: the a16 kernel
    assert gpu.launches[-1]["name"] == "matmul_f16_nn_f16_a16"


def test_fast_path_with_bias_transposes_and_strides(gpu, monkeypatch):
    w = f16(32, 48)  # N x K: used as w.T (the kernel reads it as its transpose)
    wide = f16(64, 96)
    a = FakeTensor((64, 48), FLOAT16, strides=(96, 2), address=wide.data_ptr())  # wide[:, ::2]
    bias = FakeTensor((32,), FLOAT32)
    out = f16(64, 32)
    kwargs = dict(trans_b=True, bias=bias, activation="relu")
    tilec.matmul(a, w, out=out, **kwargs)
    checked = gpu.params[-1]
    assert gpu.launches[-1]["name"] == "matmul_f16_nt_f16_bias_f32_relu_a0_16_16_16"
    no_planning(monkeypatch)
    bias2, out2 = FakeTensor((32,), FLOAT32), f16(64, 32)
    tilec.matmul(a, w, out=out2, bias=bias2, trans_b=True, activation="relu")
    fast = gpu.params[-1]
    assert fast[:10] == checked[:10] and fast[11:15] == checked[11:15] and fast[16:] == checked[16:] == [32, 1]
    assert (fast[10], fast[15]) == (out2.data_ptr(), bias2.data_ptr())
    assert fast[1:5] == [64, 48, 96, 2]  # A: the strided view, strides in elements


def test_fast_path_still_refuses_bad_arguments(gpu):
    a, b, c = f16(64, 48), f16(48, 32), f16(64, 32)
    tilec.matmul(a, b, out=c)  # now prepared
    launches = len(gpu.launches)
    with pytest.raises(ValueError, match=r"K differs: op\(a\) is 64x48 .*op\(b\) is 40x32"):
        tilec.matmul(a, f16(40, 32), out=c)
    with pytest.raises(TypeError, match="out has dtype float32, expected float16"):
        tilec.matmul(a, b, out=FakeTensor((64, 32), FLOAT32))
    with pytest.raises(ValueError, match=r"out has shape \(64, 31\), expected \(64, 32\)"):
        tilec.matmul(a, b, out=f16(64, 31))
    with pytest.raises(TypeError, match="a has dtype bfloat16 but b has dtype float16"):
        tilec.matmul(FakeTensor((64, 48), BFLOAT16), b, out=c)
    with pytest.raises(ValueError, match="a: got a torch tensor on device 'cpu'"):
        tilec.matmul(f16(64, 48, device=FakeDevice("cpu", None)), b, out=c)
    with pytest.raises(ValueError, match="a is on cuda:1; tilec launches on device 0"):
        tilec.matmul(f16(64, 48, device=FakeDevice("cuda", 1)), f16(48, 32, device=FakeDevice("cuda", 1)),
                     out=f16(64, 32, device=FakeDevice("cuda", 1)))
    with pytest.raises(TypeError, match="trans_a must be a bool"):  # 0 == False must not find the entry
        tilec.matmul(a, b, out=c, trans_a=0)
    with pytest.raises(TypeError, match="autotune must be a bool"):
        tilec.matmul(a, b, out=c, autotune=0)
    with pytest.raises(ValueError, match="activation='tanh' is not supported"):
        tilec.matmul(a, b, out=c, activation="tanh")
    # an unhashable option: no key, the checked path
    with pytest.raises(TypeError, match=r"out_dtype=\['float16'\]: expected float16, bfloat16 or float32"):
        tilec.matmul(a, b, out=c, out_dtype=["float16"])
    with pytest.raises(ValueError, match=r"parameter #0 'a': address 0x[0-9a-f]+ is not aligned to 2 bytes"):
        tilec.matmul(a.offset(1), b, out=c)  # same shapes: found prepared, sent back for the message
    with pytest.raises(ValueError, match="out: shape .* has elements that share memory"):
        tilec.matmul(a, b, out=FakeTensor((64, 32), FLOAT16, strides=(0, 1)))
    assert len(gpu.launches) == launches, "a refused call must not launch"
    tilec.matmul(a, b, out=c)  # and the good call still runs
    assert len(gpu.launches) == launches + 1


def test_a_replay_never_writes_memory_an_input_shares(gpu, monkeypatch):
    """The key holds the arrays' kinds, not their addresses: an output of the prepared kinds placed over
    an input goes back to the checked path (which refuses it) instead of launching; one that shares no
    byte with them (the other half of a wide buffer) replays."""
    a, b, c = f16(64, 64), f16(64, 64), f16(64, 64)
    tilec.matmul(a, b, out=c)  # prepared
    launches = len(gpu.launches)
    with pytest.raises(ValueError, match="out overlaps a in memory"):
        tilec.matmul(a, b, out=a)
    with pytest.raises(ValueError, match="out overlaps b in memory"):
        tilec.matmul(a, b, out=b.offset(64 * 2 * 16))  # rows 16.. of b and on: the same kinds, overlapping
    assert len(gpu.launches) == launches, "an overlapping call must not launch"
    wide = f16(64, 128)  # A and C side by side in one buffer: no element shared
    left = FakeTensor((64, 64), FLOAT16, strides=(128, 1), address=wide.data_ptr())
    right = FakeTensor((64, 64), FLOAT16, strides=(128, 1), address=wide.data_ptr() + 64 * 2)
    tilec.matmul(left, b, out=right)  # checked once for these kinds, then replayed
    no_planning(monkeypatch)
    tilec.matmul(left, b, out=right)
    assert len(gpu.launches) == launches + 2
    with pytest.raises(AssertionError, match="the checked path ran"):
        tilec.matmul(left, b, out=left)  # the same kinds over A: sent back to be checked


def test_output_guard_spans():
    """Byte spans of strided views (negative strides, broadcast and empty ones) and the guard's test:
    an output meeting an input is let through only at the distance the checked call had it."""
    t = FakeTensor((4, 3), FLOAT16, strides=(3, 1))
    assert fast_path.byte_span(t) == (0, 24)
    assert fast_path.byte_span(FakeTensor((4, 3), FLOAT16, strides=(-3, 1))) == (-18, 6)
    assert fast_path.byte_span(FakeTensor((4, 3), FLOAT32, strides=(0, 1))) == (0, 12)
    assert fast_path.byte_span(FakeTensor((0, 3), FLOAT16)) == (0, 0)
    x, o = FakeTensor((4, 3), FLOAT16, address=1000), FakeTensor((4, 3), FLOAT16, address=5000)
    guard = fast_path.OutputGuard([x, o], 1)  # checked apart
    assert not guard.meets((1000, 5000)) and not guard.meets((1000, 1024)) and not guard.meets((1000, 976))
    assert guard.meets((1000, 1000)) and guard.meets((1000, 1002)) and guard.meets((1000, 980))
    same = fast_path.OutputGuard([x, FakeTensor((4, 3), FLOAT16, address=1000)], 1)  # checked in place
    assert not same.meets((2000, 2000)) and same.meets((2000, 2002)) and not same.meets((2000, 3000))
    left = FakeTensor((4, 3), FLOAT16, strides=(6, 1), address=1000)  # two halves of a 4 x 6 buffer
    right = FakeTensor((4, 3), FLOAT16, strides=(6, 1), address=1006)
    halves = fast_path.OutputGuard([left, right], 1)
    assert not halves.meets((2000, 2006)) and halves.meets((2000, 2002)) and halves.meets((2006, 2000))


def test_numpy_and_other_arrays_take_the_checked_path(gpu):
    """numpy inputs are staged (copied in and out) every call: never prepared."""
    a, b = np.ones((8, 16), np.float16), np.ones((16, 8), np.float16)
    for _ in range(2):
        out = tilec.matmul(a, b)
        assert isinstance(out, np.ndarray)
    assert len(mm._FAST) == 0 and gpu.count("cuMemAlloc") >= 6
    assert gpu.memory == {}, "device memory leaked"


def test_the_prepared_entries_are_bounded(gpu, monkeypatch):
    monkeypatch.setattr(fast_path, "LIMIT", 3)
    for n in range(1, 6):
        tilec.matmul(f16(8, 8), f16(8, n), out=f16(8, n))
        assert 1 <= len(mm._FAST) <= 3


def test_row_kernels_replay_their_checked_launch(gpu, monkeypatch):
    """tilec.softmax and the norms prepare their launch like tilec.matmul: a second call with tensors of
    the same kinds plans nothing; an address with other low bits (another alignment) plans again."""
    from tilec.kernels import norms, softmax

    softmax._FAST.clear()
    norms._FAST.clear()
    x, o = f16(64, 300), f16(64, 300)
    w, b = f16(300), f16(300)
    assert tilec.softmax(x, out=o) is o
    assert tilec.layer_norm(x, w, b, 1e-5, out=o) is o
    assert len(softmax._FAST) == 1 and len(norms._FAST) == 1
    launches = len(gpu.launches)
    real_row_view = softmax.row_view

    def refuse(*args, **kwargs):
        raise AssertionError("the checked path ran")

    monkeypatch.setattr(softmax, "row_view", refuse)
    monkeypatch.setattr(norms, "row_view", refuse)
    x2, o2 = f16(64, 300), f16(64, 300)
    assert tilec.softmax(x2, out=o2) is o2
    assert gpu.params[-1][0] == x2.data_ptr()
    assert tilec.layer_norm(x2, w, b, 1e-5, out=o2) is o2
    assert gpu.params[-1][0] == x2.data_ptr() and len(gpu.launches) == launches + 2
    with pytest.raises(AssertionError, match="the checked path ran"):
        tilec.layer_norm(x2, w, b, 1e-3, out=o2)  # another eps: another key
    with pytest.raises(AssertionError, match="the checked path ran"):
        tilec.softmax(x2.offset(2), out=o2)  # 2-byte aligned rows: another kernel
    monkeypatch.setattr(softmax, "row_view", real_row_view)
    assert tilec.softmax(x2.offset(2), out=o2) is o2
    # in place replays; an output over part of the input (same kinds) goes back to be refused
    assert tilec.softmax(x2, out=x2) is x2
    monkeypatch.setattr(softmax, "row_view", refuse)
    assert tilec.softmax(x2, out=x2) is x2
    launches = len(gpu.launches)
    monkeypatch.setattr(softmax, "row_view", real_row_view)
    with pytest.raises(ValueError, match="overlaps x"):
        tilec.softmax(x2, out=x2.offset(600))
    assert len(gpu.launches) == launches
    softmax._FAST.clear()
    norms._FAST.clear()


# ---------------------------------------------------------------- CompiledKernel and Kernel


AXPY_FLAT = (Param.pointer("x", "float32", contiguous=False), Param.pointer("y", "float32"),
             Param.pointer("out", "float32", is_output=True, ndim=1), Param.scalar("alpha", "float32"),
             Param.scalar("n", "int32"))


@pytest.fixture
def axpy(fake_gpu):
    sys.path.insert(0, str(HERE / "runtime"))
    try:
        from runtime_kernels import AXPY_PTX
    finally:
        sys.path.remove(str(HERE / "runtime"))
    from tilec.runtime import Kernel

    return Kernel(AXPY_PTX, "axpy", AXPY_FLAT, cache=False)


def _arrays(n=100):
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 2.0, np.float32)
    out = np.full(n, np.nan, np.float32)
    return x, y, out


def test_kernel_fast_path_packs_pointers_and_scalars(axpy, fake_gpu, monkeypatch):
    x, y, out = _arrays()
    axpy(FakeTensor.of(x), FakeTensor.of(y), FakeTensor.of(out), 0.5, 100, grid=1, block=128)  # checked
    np.testing.assert_array_equal(out, 0.5 * x + 2.0)
    calls = []
    original = runtime_args.bind_arguments
    monkeypatch.setattr(runtime_args, "bind_arguments", lambda *a, **k: calls.append(1) or original(*a, **k))
    out[:] = np.nan
    axpy(FakeTensor.of(x), FakeTensor.of(y), FakeTensor.of(out), -3.0, 60, grid=1, block=128)
    assert calls == [], "the second launch was checked by bind_arguments"
    np.testing.assert_array_equal(out[:60], -3.0 * x[:60] + 2.0)  # float32 alpha and int32 n packed right
    assert np.isnan(out[60:]).all()
    axpy(FakeTensor.of(x), FakeTensor.of(y), FakeTensor.of(out), 1, 100, grid=1, block=128)  # an int for f32
    np.testing.assert_array_equal(out, x + 2.0)
    assert calls == []
    axpy(x, y, out, 1.0, 100, grid=1, block=128)  # numpy: staged, through the checked path
    assert calls == [1] and fake_gpu.memory == {}


def test_kernel_fast_path_refuses_what_the_checked_path_refuses(axpy):
    x, y, out = (FakeTensor.of(v) for v in _arrays())
    axpy(x, y, out, 1.0, 100, grid=1, block=128)
    bad = [
        ((x, y, out, 1.0), {}, TypeError, r"takes 5 argument\(s\) \(x, y, out, alpha, n\), got 4"),
        ((x, y, out, 1.0, 2 ** 31), {}, ValueError, r"parameter #4 'n': 2147483648 is out of range for int32"),
        ((x, y, out, 1.0, 2.0), {}, TypeError, r"parameter #4 'n': expected a int32 scalar, got float"),
        ((x, y, out, 1e39, 100), {}, ValueError, r"parameter #3 'alpha': 1e\+39 overflows float32"),
        ((x, y, out, np.float32(1.0), True), {}, None, None),  # numpy scalars and bools: the checked path, accepted
        ((x, FakeTensor((100,), FLOAT16), out, 1.0, 100), {}, TypeError,
         r"parameter #1 'y': expected dtype float32, got an array of dtype float16"),
        ((x, FakeTensor((50,), FLOAT32, strides=(2,)), out, 1.0, 50), {}, ValueError,
         r"parameter #1 'y': must be C-contiguous"),
        ((x, y, FakeTensor((10, 10), FLOAT32), 1.0, 100), {}, ValueError, r"parameter #2 'out': expected a 1-d array"),
        ((x.offset(2), y, out, 1.0, 100), {}, ValueError, r"parameter #0 'x': address 0x[0-9a-f]+ is not aligned"),
        ((x, y, FakeTensor((100,), FLOAT32, device=FakeDevice("cuda", 1)), 1.0, 100), {}, ValueError,
         r"parameter #2 'out': the array is on CUDA device 1"),
        ((x, y, out, 1.0, 100), {"grid": (1.5,)}, TypeError, r"grid must be an int or a tuple"),
        ((x, y, out, 1.0, 100), {"shared_mem": -1}, ValueError, r"shared_mem must be a non-negative int"),
        ((x, y, out, 1.0, 100), {"stream": "default"}, TypeError, r"stream must be None, an int handle"),
    ]
    for args, kwargs, error, match in bad:
        kwargs = {"grid": 1, "block": 128, **kwargs}
        if error is None:
            axpy(*args, **kwargs)
            continue
        with pytest.raises(error, match=match):
            axpy(*args, **kwargs)


def test_compiled_kernel_launches_through_the_fast_path(gpu, monkeypatch):
    a, b, c = f16(64, 48), f16(48, 32), f16(64, 32)
    plan = mm.plan_matmul(a, b, out=c)
    k = mm.compile_matmul(plan.spec, plan.config)
    flat = plan.kernel_args(k, c)
    k(*flat, grid=(plan.grid, 1, 1))  # checked (and loads)
    calls = []
    monkeypatch.setattr(runtime_args, "bind_arguments", lambda *a, **kw: calls.append(1))
    k(*flat, grid=(plan.grid, 1, 1))
    assert calls == [] and gpu.params[-1] == gpu.params[-2]
    with pytest.raises(TypeError):  # checked path (bind_arguments is the stub, so the count check is k's own)
        k(*flat[:-1], grid=(plan.grid, 1, 1))


def test_launch_in_a_thread_without_the_context_current(axpy, gpu):
    """A new thread has no current context: the failed launch makes it current and is tried again."""
    x, y, out = (FakeTensor.of(v) for v in _arrays())
    axpy(x, y, out, 1.0, 100, grid=1, block=128)
    fake_gpu = gpu
    sets, launches = fake_gpu.count("cuCtxSetCurrent"), fake_gpu.count("cuLaunchKernel")
    fake_gpu.fail_next.append(fake_gpu.CUresult.CUDA_ERROR_INVALID_CONTEXT)
    errors = []

    def run():
        try:
            axpy(x, y, out, 2.0, 100, grid=1, block=128)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert errors == [] and fake_gpu.fail_next == []
    np.testing.assert_array_equal(out.numpy, 2.0 * x.numpy + 2.0)
    assert fake_gpu.count("cuCtxSetCurrent") == sets + 1 and fake_gpu.count("cuLaunchKernel") == launches + 2


def test_a_launch_error_is_still_a_cuda_error(axpy, fake_gpu, monkeypatch):
    from tilec.runtime import CudaError

    x, y, out = (FakeTensor.of(v) for v in _arrays())
    axpy(x, y, out, 1.0, 100, grid=1, block=128)
    monkeypatch.setattr(fake_gpu, "fail_launch_with", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
    with pytest.raises(CudaError, match=r"cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES.*'axpy'"):
        axpy(x, y, out, 1.0, 100, grid=1, block=128)


# ---------------------------------------------------------------- the numbers (printed, never asserted)


def microseconds(fn, n: int = 2000) -> float:
    """Best of 5 rounds of ``n`` calls, in µs per call."""
    for _ in range(100):
        fn()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def overhead_table(fake, n: int = 2000) -> list[tuple[str, float]]:
    """µs per call of the host paths, with a launch that does nothing (``fake`` from :func:`instrument`)."""
    a, b, c = f16(64, 64), f16(64, 64), f16(64, 64)
    tilec.matmul(a, b, out=c)  # compiles and loads
    fake._enter = lambda name, args: None  # no per-call arity check while timing
    fake.timing = True
    plan = mm.plan_matmul(a, b, out=c)
    k = mm.compile_matmul(plan.spec, plan.config)
    flat = plan.kernel_args(k, c)

    def checked():
        mm._FAST.clear()
        tilec.matmul(a, b, out=c)

    rows = [
        ("tilec.matmul(a, b, out=c), fast path", microseconds(lambda: tilec.matmul(a, b, out=c), n)),
        ("tilec.matmul(a, b), fast path (allocates)", microseconds(lambda: tilec.matmul(a, b), n)),
        ("CompiledKernel(*args), fast path", microseconds(lambda: k(*flat, grid=(1, 1, 1)), n)),
        ("tilec.matmul(a, b, out=c), checked path", microseconds(checked, max(1, n // 7))),
    ]
    del fake._enter
    fake.timing = False
    return rows


def test_overhead_report(gpu):
    """``pytest -s`` prints the table; the assertions are only that the paths ran."""
    rows = overhead_table(gpu)
    print()
    for name, us in rows:
        print(f"{name:45s} {us:8.1f} us/call")
    assert len(rows) == 4 and gpu.launches, "the checked path ran (and launched) first"
