"""The per-call fast path of a kernel with tensor-map parameters (sm_90 TMA descriptors), on CPU.

A repeated launch with torch tensors, Python numbers and ``TensorMapArg``
values must skip :func:`~tilec.runtime.args.bind_arguments` and still put
into the parameter buffer exactly the bytes the checked path puts there (a
map's 128 bytes from the map cache, re-encoded when its view's pointer
moves); every map the checked path would refuse (wrong spec, another
address, not a ``TensorMapArg``, an unencodable view) must be sent back to
the checked path, which raises its own error. The fake driver stands in for
the GPU (its ``cuTensorMapEncodeTiled`` puts its inputs into the 128 bytes,
see ``fake_map_bytes``) and the fake torch tensors of
``tests/test_launch_overhead.py`` for torch.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tilec.runtime import Kernel, Param, dtypes, tensor_map
from tilec.runtime import args as runtime_args
from tilec.runtime.args import FastArgs, bind_arguments
from tilec.runtime.launch import ParamBuffer
from tilec.runtime.tensor_map import MAP_BYTES, TensorMapArg

from runtime_fake_driver import fake_map_bytes, installed

_spec = importlib.util.spec_from_file_location(
    "_fast_tensor_maps_fakes", Path(__file__).resolve().parents[1] / "test_launch_overhead.py")
_fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fakes)
FakeTensor, FakeDevice, FLOAT16, FLOAT32 = _fakes.FakeTensor, _fakes.FakeDevice, _fakes.FLOAT16, _fakes.FLOAT32


# ------------------------------------------------------------------ the kernel


def _gl(name: str, *, output: bool = False) -> list[Param]:
    return [Param.pointer(name, "float16", is_output=output, contiguous=False),
            *(Param.scalar(f"{name}_{what}{d}", "int64") for what in ("dim", "stride") for d in (0, 1))]


A_BOX, B_BOX = (64, 64), (32, 64)
SIGNATURE = (*_gl("a"), Param.tensor_map("a_map0", "a", "float16", A_BOX, 128, view_index=0),
             *_gl("b"), Param.tensor_map("b_map0", "b", "float16", B_BOX, 128, view_index=6),
             *_gl("c", output=True), Param.scalar("n", "int32"))
A_MAP, B_MAP = 5, 11
SIZES = [MAP_BYTES if p.is_tensor_map else 4 if p.dtype == "int32" else 8 for p in SIGNATURE]

PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry tma_fast(.param .u64 a, .param .u64 a_dim0, .param .u64 a_dim1, .param .u64 a_stride0,
    .param .u64 a_stride1, .param .align 64 .b8 a_map0[128], .param .u64 b, .param .u64 b_dim0,
    .param .u64 b_dim1, .param .u64 b_stride0, .param .u64 b_stride1, .param .align 64 .b8 b_map0[128],
    .param .u64 c, .param .u64 c_dim0, .param .u64 c_dim1, .param .u64 c_stride0, .param .u64 c_stride1,
    .param .u32 n)
{
    ret;
}
"""
LAUNCH = {"grid": 2, "block": 128}


def f16(*shape, **kwargs) -> FakeTensor:
    return FakeTensor(shape, FLOAT16, **kwargs)


def a_map(t, box=A_BOX, swizzle=128, dtype="float16", *, address=None, shape=None, strides=None) -> TensorMapArg:
    """The map ``tilec.runtime.gl_views.expand`` makes of ``t`` (fields overridable)."""
    return TensorMapArg.of(t.data_ptr() if address is None else address, dtype, shape or t.shape,
                           strides or t.stride(), box, swizzle)


def flat(a, b, c, n: int = 7) -> list:
    """The flat arguments of ``tma_fast`` for views a, b, c, with fresh maps (as every call of expand makes)."""
    out = []
    for t, box in ((a, A_BOX), (b, B_BOX), (c, None)):
        out += [t, *t.shape, *t.stride()]
        if box is not None:
            out.append(a_map(t, box))
    return [*out, n]


@pytest.fixture
def fake(monkeypatch):
    with installed(monkeypatch) as fake:
        yield fake


@pytest.fixture
def seen(fake):
    """Per launch: the bytes of every parameter, as the driver would read them, and the map entries."""
    launches = []

    def run(p, grid, block, smem):
        entries = (ctypes.c_void_p * len(SIGNATURE)).from_address(ctypes.addressof(p))
        launches.append({"bytes": [ctypes.string_at(entries[i], SIZES[i]) for i in range(len(SIGNATURE))],
                         "entries": list(entries)})
        return fake._ok()

    fake._run_tma_fast = run
    return launches


@pytest.fixture
def binds(monkeypatch):
    """The calls of bind_arguments (the checked path) from here on."""
    calls = []

    def spy(*args, **kwargs):
        calls.append(args[2])
        return bind_arguments(*args, **kwargs)

    monkeypatch.setattr(runtime_args, "bind_arguments", spy)
    return calls


@pytest.fixture
def kernel(fake):
    return Kernel(PTX, "tma_fast", SIGNATURE, cache=False)


def u64(data: bytes) -> int:
    return int.from_bytes(data[:8], "little")


# ----------------------------------------------------------- the fast path


def test_a_kernel_with_tensor_maps_takes_the_fast_path(kernel, fake, seen, binds):
    a, b, c = f16(128, 64), f16(96, 64), f16(128, 96)
    kernel(*flat(a, b, c), **LAUNCH)  # checked: loads, encodes both maps
    assert len(binds) == 1 and kernel._fast is not None
    assert fake.count("cuTensorMapEncodeTiled") == 2
    kernel(*flat(a, b, c, n=9), **LAUNCH)  # new TensorMapArg objects, as expand makes them
    kernel(*flat(a, b, c, n=9), **LAUNCH)
    assert len(binds) == 1, "a launch after the first was checked by bind_arguments"
    assert fake.count("cuTensorMapEncodeTiled") == 2 and len(fake.launches) == 3
    checked, fast, again = seen
    # the fast path put what the checked path put, but n
    assert fast["bytes"][:-1] == checked["bytes"][:-1] and again["bytes"] == fast["bytes"]
    assert int.from_bytes(fast["bytes"][-1], "little") == 9
    maps = {r["address"]: fake_map_bytes(r) for r in fake.tensor_maps}
    assert fast["bytes"][A_MAP] == maps[a.data_ptr()] and fast["bytes"][B_MAP] == maps[b.data_ptr()]
    assert [u64(fast["bytes"][i]) for i in (0, 6, 12)] == [a.data_ptr(), b.data_ptr(), c.data_ptr()]
    assert all(fast["entries"][i] % 64 == 0 for i in (A_MAP, B_MAP))
    # and the checked path, given the fast call's arguments, puts the same bytes in
    kernel._launch_checked(flat(a, b, c, n=9), LAUNCH["grid"], LAUNCH["block"], 0, None)
    assert seen[-1]["bytes"] == fast["bytes"] and len(binds) == 2


def test_fast_args_give_the_encoded_bytes(fake):
    a, b, c = f16(128, 64), f16(96, 64), f16(128, 96)
    check = FastArgs.for_signature(SIGNATURE, 0)
    assert check is not None
    values = check.values(flat(a, b, c))
    assert values[A_MAP] == tensor_map.encode(a_map(a).spec, a.data_ptr())
    assert values[B_MAP] == tensor_map.encode(a_map(b, B_BOX).spec, b.data_ptr())
    assert values[0] == a.data_ptr() and values[1:5] == [128, 64, 64, 1] and values[-1] == 7


def test_a_moved_pointer_gets_the_map_of_its_new_address(kernel, fake, seen, binds):
    a1, a2, b, c = f16(128, 64), f16(128, 64), f16(96, 64), f16(128, 96)
    kernel(*flat(a1, b, c), **LAUNCH)
    kernel(*flat(a2, b, c), **LAUNCH)
    assert len(binds) == 1 and fake.count("cuTensorMapEncodeTiled") == 3  # a1, b, then a2
    assert fake.tensor_maps[-1]["address"] == a2.data_ptr()
    assert seen[1]["bytes"][A_MAP] == fake_map_bytes(fake.tensor_maps[-1]) != seen[0]["bytes"][A_MAP]
    assert u64(seen[1]["bytes"][0]) == a2.data_ptr() and seen[1]["bytes"][B_MAP] == seen[0]["bytes"][B_MAP]
    hits = tensor_map.cache_info().hits
    kernel(*flat(a1, b, c), **LAUNCH)  # back to a1: its map is in the cache
    assert fake.count("cuTensorMapEncodeTiled") == 3 and tensor_map.cache_info().hits == hits + 2
    assert seen[2]["bytes"] == seen[0]["bytes"] and len(binds) == 1
    # a view of another shape at the same address: another spec, another map
    kernel(*flat(f16(64, 64, address=a1.data_ptr()), b, c), **LAUNCH)
    assert fake.count("cuTensorMapEncodeTiled") == 4 and fake.tensor_maps[-1]["dims"] == [64, 64]
    assert seen[3]["bytes"][A_MAP] == fake_map_bytes(fake.tensor_maps[-1]) and len(binds) == 1


class CudaArray:
    """A device array that is not a torch tensor (``__cuda_array_interface__``; host memory, as the fake's)."""

    def __init__(self, shape):
        n = int(np.prod(shape)) * 2
        self._raw = np.zeros(n + 256, np.uint8)
        self.ptr = self._raw.ctypes.data + (-self._raw.ctypes.data % 256)
        self.shape = tuple(shape)
        self.__cuda_array_interface__ = {"shape": self.shape, "typestr": "<f2", "data": (self.ptr, False),
                                         "strides": None, "version": 3}


def _bad_calls():
    """(name, change to the good arguments): calls the checked path refuses."""
    a, b, c, other = f16(128, 64), f16(96, 64), f16(128, 96), f16(128, 64)
    return a, b, c, [
        ("box", {A_MAP: a_map(a, (32, 64))}),
        ("dtype", {A_MAP: a_map(a, (64, 32), dtype="float32")}),
        ("swizzle", {A_MAP: a_map(a, swizzle=0)}),
        ("another address", {A_MAP: a_map(other)}),
        ("another address, second map", {B_MAP: a_map(other, B_BOX)}),
        ("an int", {A_MAP: 1234}),
        ("a tensor", {A_MAP: a}),
        ("None", {B_MAP: None}),
        ("row stride", {A_MAP: a_map(a, strides=(4, 1))}),
        ("inner stride", {A_MAP: a_map(a, strides=(128, 2))}),
        ("extent", {A_MAP: a_map(a, shape=(2**33, 64))}),
        ("unaligned map", {0: a.offset(8), A_MAP: a_map(a.offset(8))}),
        ("scalar out of range", {17: 2**31}),
    ]


@pytest.mark.parametrize("case", [name for name, _ in _bad_calls()[3]])
def test_a_bad_map_goes_to_the_checked_path_and_its_error(case, kernel, fake, seen, binds):
    a, b, c, cases = _bad_calls()
    change = dict(cases)[case]
    kernel(*flat(a, b, c), **LAUNCH)  # the fast path is set up
    args = flat(a, b, c)
    for i, value in change.items():
        args[i] = value
    with pytest.raises((TypeError, ValueError)) as expected:  # what the checked path says (before: always)
        bind_arguments("tma_fast", SIGNATURE, args, device=0, stream=0)
    assert kernel._fast.check.values(args) is None or case == "scalar out of range"
    launches, calls = len(fake.launches), len(binds)
    with pytest.raises(type(expected.value)) as got:
        kernel(*args, **LAUNCH)
    assert str(got.value) == str(expected.value)
    assert "'a_map0'" in str(got.value) or "'b_map0'" in str(got.value) or case == "scalar out of range"
    assert len(binds) == calls + 1, "the refusal did not come from the checked path"
    assert len(fake.launches) == launches, "a refused call must not launch"
    kernel(*flat(a, b, c), **LAUNCH)  # and the good call still runs, on the fast path
    assert len(binds) == calls + 1 and seen[-1]["bytes"] == seen[0]["bytes"]


def test_a_map_over_another_kind_of_array_takes_the_checked_path(kernel, fake, seen, binds):
    a, b, c = f16(128, 64), f16(96, 64), f16(128, 96)
    kernel(*flat(a, b, c), **LAUNCH)
    d = CudaArray((128, 64))
    args = flat(a, b, c)
    args[0], args[A_MAP] = d, a_map(a, address=d.ptr)
    assert kernel._fast.check.values(args) is None
    kernel(*args, **LAUNCH)  # accepted by the checked path
    assert len(binds) == 2 and u64(seen[-1]["bytes"][0]) == d.ptr
    assert seen[-1]["bytes"][A_MAP] == fake_map_bytes(fake.tensor_maps[-1])
    assert fake.tensor_maps[-1]["address"] == d.ptr


def test_an_empty_view_with_a_map_of_another_address_is_accepted_by_the_checked_path(kernel, fake, seen, binds):
    """bind_arguments does not compare the addresses of an empty view; the fast path sends it there."""
    a, b, c = f16(0, 64), f16(96, 64), f16(0, 96)
    kernel(*flat(a, b, c), **LAUNCH)
    kernel(*flat(a, b, c), **LAUNCH)
    assert len(binds) == 1  # same address: the fast path
    args = flat(a, b, c)
    args[A_MAP] = a_map(a, address=a.data_ptr() + 256)
    kernel(*args, **LAUNCH)
    assert len(binds) == 2 and fake.tensor_maps[-1]["address"] == a.data_ptr() + 256


def test_a_wrong_device_or_dtype_of_the_view_still_refused(kernel, fake, binds):
    a, b, c = f16(128, 64), f16(96, 64), f16(128, 96)
    kernel(*flat(a, b, c), **LAUNCH)
    on1 = f16(128, 64, device=FakeDevice("cuda", 1))
    with pytest.raises(ValueError, match=r"parameter #0 'a': the array is on CUDA device 1"):
        kernel(*flat(on1, b, c), **LAUNCH)
    f32 = FakeTensor((128, 64), FLOAT32)
    args = flat(f32, b, c)
    args[A_MAP] = a_map(a, address=f32.data_ptr())
    with pytest.raises(TypeError, match=r"parameter #0 'a': expected dtype float16, got an array of dtype float32"):
        kernel(*args, **LAUNCH)
    assert len(binds) == 3 and len(fake.launches) == 1


# ----------------------------------------------------------- the pieces


def test_for_signature_takes_maps():
    assert FastArgs.for_signature(SIGNATURE, 0) is not None
    loose = (Param.pointer("a", "float16"), Param.tensor_map("m", "a", "float16", A_BOX, 128))
    assert FastArgs.for_signature(loose, 0) is not None  # no view_index: encoded at its own address
    bad = (Param.scalar("n", "int32"), Param.tensor_map("m", "a", "float16", A_BOX, 128, view_index=0))
    assert FastArgs.for_signature(bad, 0) is None  # its "view" is a scalar (a Kernel refuses it)
    far = (Param.tensor_map("m", "a", "float16", A_BOX, 128, view_index=3),)
    assert FastArgs.for_signature(far, 0) is None


def test_a_map_without_view_index_is_encoded_at_its_own_address(fake):
    loose = (Param.pointer("a", "float16"), Param.tensor_map("m", "a", "float16", A_BOX, 128))
    check = FastArgs.for_signature(loose, 0)
    a, other = f16(128, 64), f16(128, 64)
    values = check.values([a, a_map(other)])  # as bind_arguments: no view pointer to compare with
    assert values[0] == a.data_ptr() and values[1] == tensor_map.encode(a_map(other).spec, other.data_ptr())
    bind_arguments("k", loose, [a, a_map(other)], device=0)  # accepted there too


def test_param_buffer_packs_maps_and_other_parameters(fake):
    buf = ParamBuffer(SIGNATURE)
    assert buf.packer is None  # a map has no slot format; pack handles maps itself
    a, b, c = f16(128, 64), f16(96, 64), f16(128, 96)
    values = FastArgs.for_signature(SIGNATURE, 0).values(flat(a, b, c, n=-5))
    buf.pack(values)
    entries = (ctypes.c_void_p * len(SIGNATURE)).from_address(buf.address)
    assert ctypes.string_at(entries[A_MAP], MAP_BYTES) == values[A_MAP]
    assert ctypes.string_at(entries[B_MAP], MAP_BYTES) == values[B_MAP]
    assert ctypes.c_uint64.from_address(entries[6]).value == b.data_ptr()
    assert ctypes.c_int32.from_address(entries[17]).value == -5
    assert entries[A_MAP] == buf.map_address(A_MAP) and entries[B_MAP] == buf.map_address(B_MAP)
    # the same bytes object again: nothing copied (the slot holds it already); an equal copy is copied
    ctypes.memset(entries[A_MAP], 0, MAP_BYTES)
    buf.pack(values)
    assert ctypes.string_at(entries[A_MAP], MAP_BYTES) == bytes(MAP_BYTES)
    values[A_MAP] = bytes(bytearray(values[A_MAP]))
    buf.pack(values)
    assert ctypes.string_at(entries[A_MAP], MAP_BYTES) == values[A_MAP]
    # fill (a prepared launch's) forgets what pack wrote
    buf.fill([ctypes.c_uint64(0)] * A_MAP + [(ctypes.c_uint8 * MAP_BYTES)()] + [ctypes.c_uint64(0)] * 12)
    buf.pack(values)
    assert ctypes.string_at(entries[A_MAP], MAP_BYTES) == values[A_MAP]
    values[B_MAP] = 0
    with pytest.raises(TypeError, match="#11: a tensor map's value must be its 128 encoded bytes"):
        buf.pack(values)


# ----------------------------------------------------------- end to end: the bulk-copy GEMM


def test_the_bulk_copy_gemm_launches_through_the_fast_path(fake, binds, monkeypatch):
    """``CompiledKernel(*args)`` of tilec.matmul's sm_90 bulk-copy kernel (three tensor maps): the
    second call is not checked by bind_arguments and passes the same parameters."""
    import tilec.kernels.gemm as mm

    params = []
    original = fake.cuLaunchKernel

    def launch(f, gx, gy, gz, bx, by, bz, smem, stream, p, extra):
        entries = (ctypes.c_void_p * len(sizes)).from_address(p)
        params.append([ctypes.string_at(entries[i], n) for i, n in enumerate(sizes)])
        return original(f, gx, gy, gz, bx, by, bz, smem, stream, p, extra)

    monkeypatch.setattr(fake, "cuLaunchKernel", launch)
    monkeypatch.setitem(sys.modules, "torch", _fakes.fake_torch())
    saved = mm.cached_kernels()
    mm.clear_cache()
    try:
        a, b, c = f16(1024, 1024), f16(1024, 1024), f16(1024, 1024)
        plan = mm.plan_matmul(a, b, out=c)
        assert plan.config.bulk, plan.config.describe()  # the fake device is an sm_90
        k = mm.compile_matmul(plan.spec, plan.config)
        sizes = [MAP_BYTES if p.is_tensor_map else 8 if p.is_pointer else dtypes.itemsize(p.dtype)
                 for p in k.signature]
        maps = [i for i, p in enumerate(k.signature) if p.is_tensor_map]
        assert len(maps) == 3  # A's and B's loads, C's TMA store
        k(*plan.kernel_args(k, c), grid=(plan.grid, 1, 1))
        calls = len(binds)
        k(*plan.kernel_args(k, c), grid=(plan.grid, 1, 1))
        assert len(binds) == calls and params[1] == params[0]
        a2 = f16(1024, 1024)
        k(*mm.plan_matmul(a2, b, out=c).kernel_args(k, c), grid=(plan.grid, 1, 1))
        assert len(binds) == calls and fake.tensor_maps[-1]["address"] == a2.data_ptr()
        assert params[2][maps[0]] == fake_map_bytes(fake.tensor_maps[-1]) and params[2][maps[1]] == params[0][maps[1]]
        assert params[2][maps[2]] == params[0][maps[2]]  # the same C
    finally:
        mm.clear_cache()  # its runtime kernel holds this fake driver's handles
        mm._KERNELS.update(saved)
