"""Tensor-map (CUtensorMap) kernel parameters: signature, gl expansion, binding, encoding, launching.

All on the fake driver (its ``cuTensorMapEncodeTiled`` records the arguments
and "encodes" them into the 128 bytes, so tests can tell maps apart); the
real encoding is in test_runtime_gpu.py.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from cuda.bindings import driver as cu
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    Float16Type,
    IntAttr,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Region

from tilec.api import CompilationError, LaunchDefaults, derive_signature
from tilec.compile_cache import decode, encode as encode_entry
from tilec.dialects.abi import (
    ALIGNED_ROWS_ATTR,
    BOX_ATTR,
    DIM_ATTR,
    DTYPE_ATTR,
    GL_ATTR,
    OUTPUT_ATTR,
    STRIDE_ATTR,
    SWIZZLE_ATTR,
    TENSOR_MAP_ATTR,
    GlParam,
    gl_params,
)
from tilec.runtime.gl_views import GlView, expand
from tilec.runtime import Kernel, Param, bind_arguments, tensor_map
from tilec.runtime.args import TENSOR_MAP, TensorMapBound
from tilec.runtime.launch import ParamBuffer, pack_params, param_values
from tilec.runtime.tensor_map import TensorMapArg, TensorMapSpec

from runtime_fake_driver import fake_map_bytes, installed

# ------------------------------------------------------------------ helpers


def _gl_attrs(name: str, *, output: bool = False) -> list[DictionaryAttr]:
    ptr = {GL_ATTR: StringAttr(name), DTYPE_ATTR: Float16Type(), ALIGNED_ROWS_ATTR: IntegerAttr(16, i64)}
    if output:
        ptr[OUTPUT_ATTR] = UnitAttr()
    out = [DictionaryAttr(ptr)]
    out += [DictionaryAttr({GL_ATTR: StringAttr(name), DIM_ATTR: IntegerAttr(d, i64)}) for d in (0, 1)]
    out += [DictionaryAttr({GL_ATTR: StringAttr(name), STRIDE_ATTR: IntegerAttr(d, i64)}) for d in (0, 1)]
    return out


def _map_attrs(name: str, number: int, box=(64, 64), swizzle: int = 128) -> DictionaryAttr:
    return DictionaryAttr({GL_ATTR: StringAttr(name), TENSOR_MAP_ATTR: IntegerAttr(number, i64),
                           BOX_ATTR: DenseArrayBase.from_list(i64, list(box)),
                           SWIZZLE_ATTR: IntegerAttr(swizzle, i64)})


def tma_kernel(map_type=None, **map_kwargs) -> llvm.FuncOp:
    """``k(a: gl f16 [a_map0 (64x64, 128B)], c: gl f16 out, n: i32)``, as tile-distribute + TMA would emit it."""
    g1 = llvm.LLVMPointerType(IntAttr(1))
    mp = map_type or llvm.LLVMPointerType()
    types = [g1, i64, i64, i64, i64, mp, g1, i64, i64, i64, i64, i32]
    attrs = _gl_attrs("a")[:5] + [_map_attrs("a", 0, **map_kwargs)] + _gl_attrs("c", output=True) + [DictionaryAttr({})]
    block = Block(arg_types=types)
    names = ["a", "a_dim0", "a_dim1", "a_stride0", "a_stride1", "a_map0",
             "c", "c_dim0", "c_dim1", "c_stride0", "c_stride1", "n"]
    for arg, name in zip(block.args, names):
        arg.name_hint = name
    fn = llvm.FuncOp("tma_probe", llvm.LLVMFunctionType(types), body=Region(block))
    fn.properties["arg_attrs"] = ArrayAttr(attrs)
    return fn


def aligned(shape, dtype=np.float16, align: int = 256) -> np.ndarray:
    """A zeroed numpy array whose data is ``align``-byte aligned."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(n + align, np.uint8)
    offset = -raw.ctypes.data % align
    return raw[offset:offset + n].view(dtype).reshape(shape)


class DevArray:
    """Host memory posing as device memory (the fake driver's device is the host)."""

    def __init__(self, arr):
        self.arr = arr
        self.__cuda_array_interface__ = {"shape": arr.shape, "typestr": arr.dtype.str,
                                         "data": (arr.ctypes.data, False), "strides": arr.strides
                                         if not arr.flags.c_contiguous else None, "version": 3}


@pytest.fixture
def fake(monkeypatch):
    with installed(monkeypatch) as fake:
        yield fake


# --------------------------------------------------------------- signature


def test_signature_of_a_tensor_map_argument():
    sig = derive_signature(tma_kernel())
    p = sig[5]
    assert p == Param.tensor_map("a_map0", "a", "float16", (64, 64), 128, view_index=0)
    assert (p.kind, p.view, p.view_index, p.box, p.swizzle, p.dtype) == (TENSOR_MAP, "a", 0, (64, 64), 128, "float16")
    assert sig[0].is_pointer and sig[0].dtype == "float16" and not sig[0].contiguous
    assert "tensor map of gl view 'a'" in p.describe()


@pytest.mark.parametrize("change, message", [
    ({"map_type": llvm.LLVMPointerType(IntAttr(1))}, "generic !llvm.ptr"),
    ({"box": (64, 32)}, "must equal the swizzle"),
    ({"box": (300, 64)}, "1..256"),
    ({"swizzle": 16}, "swizzle 16 must be one of"),
])
def test_bad_tensor_map_attributes_are_compilation_errors(change, message):
    with pytest.raises(CompilationError, match=message):
        derive_signature(tma_kernel(**change))


def test_a_tensor_map_of_an_unknown_view_is_an_error():
    fn = tma_kernel()
    attrs = list(fn.arg_attrs.data)
    attrs[5] = _map_attrs("zz", 0)
    fn.properties["arg_attrs"] = ArrayAttr(attrs)
    with pytest.raises(CompilationError, match="naming a gl view"):
        derive_signature(fn)
    with pytest.raises(ValueError, match="gl view 'zz', which has no pointer"):
        gl_params(fn)


def test_signature_and_gl_params_round_trip_through_the_compile_cache():
    fn = tma_kernel()
    sig, views = derive_signature(fn), gl_params(fn)
    launch = LaunchDefaults(grid=(None, 1, 1), block=(128, 1, 1), smem=0, static_shared=0, dynamic_shared=False)
    data = encode_entry("ab" * 32, name="tma_probe", asm={"llvm": "", "ptx": ""}, signature=sig, launch=launch,
                        gl_params=views, pipeline="tile-to-llvm opt_level=3")
    entry = decode(data, "ab" * 32)
    assert entry["signature"] == sig and entry["gl_params"] == views


# ------------------------------------------------------------- gl_params


def test_gl_params_record_the_tensor_maps():
    a, c = gl_params(tma_kernel())
    assert (a.name, a.pointer, a.dims, a.strides, a.dtype) == ("a", 0, (1, 2), (3, 4), "float16")
    assert a.tensor_maps == ((5, 64, 64, 128),)
    assert (c.name, c.pointer, c.tensor_maps, c.is_output) == ("c", 6, (), True)


def test_expand_gives_a_tensor_map_arg_of_the_same_view():
    fn = tma_kernel()
    a = aligned((100, 256))[:, :192]  # a strided view: row stride 256 elements
    c = aligned((100, 64))
    flat = expand(gl_params(fn), a, c, 7, signature_length=12)
    assert flat[:5] == [a, 100, 192, 256, 1] and flat[6:] == [c, 100, 64, 64, 1, 7]
    m = flat[5]
    assert isinstance(m, TensorMapArg)
    assert (m.address, m.dtype, m.shape, m.strides, m.box, m.swizzle) == (
        a.ctypes.data, "float16", (100, 192), (256, 1), (64, 64), 128)
    # an explicit GlView: its extents and strides, its array's address
    flat = expand(gl_params(fn), GlView(a, (192, 100), (1, 256)), c, 7, signature_length=12)
    assert (flat[5].shape, flat[5].strides, flat[5].address) == ((192, 100), (1, 256), a.ctypes.data)


# ---------------------------------------------------------------- binding


def _bind(fn, a, c, n=7):
    return bind_arguments("tma_probe", derive_signature(fn), expand(gl_params(fn), a, c, n, signature_length=12))


def test_bind_accepts_the_expanded_map():
    a, c = aligned((128, 64)), aligned((128, 64))
    bound = _bind(tma_kernel(), DevArray(a), DevArray(c))
    b = bound[5]
    assert isinstance(b, TensorMapBound) and b.base == 0 and b.value.address == a.ctypes.data


def test_bind_errors_name_the_parameter():
    fn = tma_kernel()
    sig = derive_signature(fn)
    a, c = aligned((128, 64)), aligned((128, 64))
    good = expand(gl_params(fn), DevArray(a), DevArray(c), 7, signature_length=12)

    def bind(i, value):
        args = list(good)
        args[i] = value
        return bind_arguments("tma_probe", sig, args)

    with pytest.raises(TypeError, match=r"parameter #5 'a_map0': expected a tensor map of gl view 'a'.*got int"):
        bind(5, 1234)
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*box"):
        bind(5, TensorMapArg.of(a.ctypes.data, "float16", (128, 64), (64, 1), (32, 64), 128))
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*dtype"):
        bind(5, TensorMapArg.of(a.ctypes.data, "float32", (128, 64), (64, 1), (64, 32), 128))
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*address 0x[0-9a-f]+ is not a multiple of 16"):
        bind(5, TensorMapArg.of(a.ctypes.data + 8, "float16", (128, 64), (64, 1), (64, 64), 128))
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*row stride is 4 elements = 8 bytes"):
        bind(5, TensorMapArg.of(a.ctypes.data, "float16", (128, 64), (4, 1), (64, 64), 128))
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*innermost stride is 2"):
        bind(5, TensorMapArg.of(a.ctypes.data, "float16", (128, 64), (128, 2), (64, 64), 128))
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*extent 0 is 8589934592"):
        bind(5, TensorMapArg.of(a.ctypes.data, "float16", (2**33, 64), (64, 1), (64, 64), 128))
    other = aligned((128, 64))
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0': the map is of address .* parameter #0 'a'"):
        bind(5, TensorMapArg.of(other.ctypes.data, "float16", (128, 64), (64, 1), (64, 64), 128))


def test_param_checks_its_box_and_swizzle():
    with pytest.raises(ValueError, match="box inner dim 64 x 4 bytes = 256 bytes must equal the swizzle"):
        Param.tensor_map("m", "a", "float32", (64, 64), 128)
    with pytest.raises(ValueError, match="not a multiple of 16"):
        Param.tensor_map("m", "a", "float16", (64, 4), 0)
    with pytest.raises(ValueError, match="only apply to tensor maps"):
        Param("p", "pointer", box=(64, 64))
    assert Param.tensor_map("m", "a", "bf16", [64, 64], 128).box == (64, 64)


# ---------------------------------------------------------------- encoding


def test_encode_passes_innermost_first_dims_byte_strides_and_enums(fake):
    a = aligned((100, 256))
    spec = TensorMapSpec("bfloat16", (100, 192), (256, 1), (64, 64), 128)
    data = tensor_map.encode(spec, a.ctypes.data)
    (r,) = fake.tensor_maps
    assert (r["rank"], r["address"], r["dims"], r["strides"], r["box"], r["element_strides"]) == (
        2, a.ctypes.data, [192, 100], [512], [64, 64], [1, 1])
    assert r["dtype"] == cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
    assert r["interleave"] == cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE
    assert r["swizzle"] == cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B
    assert r["l2"] == cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B
    assert r["oob"] == cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE
    assert len(data) == 128 and data == fake_map_bytes(r)

    tensor_map.encode(TensorMapSpec("float32", (8, 8), (8, 1), (8, 8), 32), a.ctypes.data)
    assert fake.tensor_maps[-1]["dtype"] == cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    assert fake.tensor_maps[-1]["swizzle"] == cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B
    tensor_map.encode(TensorMapSpec("float16", (8, 8), (8, 1), (8, 8), 0), a.ctypes.data)
    assert fake.tensor_maps[-1]["dtype"] == cu.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    assert fake.tensor_maps[-1]["swizzle"] == cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE


def test_a_rank_four_view_is_one_map_with_a_box_over_its_last_two_dims(fake):
    """(B, H, S, D) heads, and the same tensor stored (B, S, H, D) and transposed: dims and byte strides
    innermost first, in the view's own order (not sorted), the box 1 in the leading dims."""
    b, h, s, d = 2, 3, 100, 64
    tensor_map.encode(TensorMapSpec("float16", (b, h, s, d), (h * s * d, s * d, d, 1), (64, 64), 128), 0x10000)
    tensor_map.encode(TensorMapSpec("float16", (b, h, s, d), (s * h * d, d, h * d, 1), (64, 64), 128), 0x10000)
    tensor_map.encode(TensorMapSpec("float16", (1, h, s, d), (0, s * d, d, 1), (64, 64), 128), 0x10000)
    got = [(r["rank"], r["dims"], r["strides"], r["box"], r["element_strides"]) for r in fake.tensor_maps]
    assert got == [
        (4, [d, s, h, b], [2 * d, 2 * s * d, 2 * h * s * d], [64, 64, 1, 1], [1, 1, 1, 1]),
        (4, [d, s, h, b], [2 * h * d, 2 * d, 2 * s * h * d], [64, 64, 1, 1], [1, 1, 1, 1]),
        (4, [d, s, h, 1], [2 * d, 2 * s * d, 2 * h * s * d], [64, 64, 1, 1], [1, 1, 1, 1]),  # extent 1: its stride unused
    ]


def test_what_a_map_of_higher_rank_refuses():
    good = TensorMapSpec("float16", (2, 3, 100, 64), (19200, 6400, 64, 1), (64, 64), 128)
    assert good.problem(0x10000) is None
    assert "stride 1 is 3 elements = 6 bytes" in good.__class__("float16", (2, 3, 100, 64), (19200, 3, 64, 1),
                                                                 (64, 64), 128).problem()
    assert "rank 2 to 5" in TensorMapSpec("float16", (1,) * 4 + (100, 64), (0,) * 4 + (64, 1), (64, 64), 128).problem()
    assert "rank 2 to 5" in TensorMapSpec("float16", (100, 64, 1), (64, 1), (64, 64), 128).problem()


def test_encode_is_cached_by_every_input(fake):
    spec = TensorMapSpec("float16", (128, 64), (64, 1), (64, 64), 128)
    first = tensor_map.encode(spec, 0x10000)
    assert tensor_map.encode(TensorMapSpec("float16", (128, 64), (64, 1), (64, 64), 128), 0x10000) is first
    assert fake.count("cuTensorMapEncodeTiled") == 1 and tensor_map.cache_info().hits == 1
    tensor_map.encode(spec, 0x20000)
    tensor_map.encode(TensorMapSpec("float16", (128, 64), (64, 1), (32, 64), 128), 0x10000)
    assert fake.count("cuTensorMapEncodeTiled") == 3


def test_empty_views_encode_as_extent_one(fake):
    tensor_map.encode(TensorMapSpec("float16", (0, 64), (64, 1), (64, 64), 128), 0)
    tensor_map.encode(TensorMapSpec("float16", (128, 0), (1, 1), (64, 64), 128), 0x10000)
    tensor_map.encode(TensorMapSpec("float16", (1, 40), (0, 1), (64, 64), 128), 0x10000)
    assert [(r["dims"], r["strides"]) for r in fake.tensor_maps] == [
        ([64, 1], [128]), ([1, 128], [16]), ([40, 1], [80])]


def test_encode_makes_a_context_current_when_the_thread_has_none(fake):
    fake.context_current = False
    tensor_map.encode(TensorMapSpec("float16", (128, 64), (64, 1), (64, 64), 128), 0x10000)
    assert fake.count("cuTensorMapEncodeTiled") == 2 and fake.count("cuCtxSetCurrent") == 1


def test_encode_error_names_the_view(fake):
    spec = TensorMapSpec("float16", (128, 64), (64, 1), (64, 64), 128)
    with pytest.raises(ValueError, match="gl view 'a': cannot make a tensor map .* not a multiple of 16 bytes"):
        tensor_map.encode(spec, 0x10008, what="gl view 'a'")
    assert fake.count("cuTensorMapEncodeTiled") == 0


# ----------------------------------------------------------------- launching

TMA_PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry tma_probe(.param .u64 a, .param .u64 a_dim0, .param .u64 a_dim1, .param .u64 a_stride0,
    .param .u64 a_stride1, .param .align 64 .b8 a_map0[128], .param .u64 c, .param .u64 c_dim0, .param .u64 c_dim1,
    .param .u64 c_stride0, .param .u64 c_stride1, .param .u32 n)
{
    ret;
}
"""


def _record_params(fake):
    """Keep, per launch, the address of the map's entry, its 128 bytes and the pointer parameters."""
    seen = []

    def run(p, grid, block, smem):
        seen.append({"map_address": p[5], "map": ctypes.string_at(p[5], 128),
                     "a": ctypes.c_uint64.from_address(p[0]).value,
                     "c": ctypes.c_uint64.from_address(p[6]).value})
        return fake._ok()

    fake._run_tma_probe = run
    return seen


def test_checked_launch_passes_the_map_by_value(fake):
    seen = _record_params(fake)
    fn = tma_kernel()
    k = Kernel(TMA_PTX, "tma_probe", derive_signature(fn))
    a, c = aligned((128, 64)), aligned((128, 64))
    k(*expand(gl_params(fn), DevArray(a), DevArray(c), 7, signature_length=12), grid=1, block=128)
    (r,) = fake.tensor_maps
    assert (r["address"], r["dims"], r["strides"], r["box"]) == (a.ctypes.data, [64, 128], [128], [64, 64])
    (s,) = seen
    assert s["map"] == fake_map_bytes(r) and s["map_address"] % 64 == 0
    assert (s["a"], s["c"]) == (a.ctypes.data, c.ctypes.data)
    # again with the same arrays: the map comes from the cache
    k(*expand(gl_params(fn), DevArray(a), DevArray(c), 7, signature_length=12), grid=1, block=128)
    assert fake.count("cuTensorMapEncodeTiled") == 1 and seen[1]["map"] == seen[0]["map"]


def test_a_staged_numpy_view_gets_the_map_of_its_device_copy(fake):
    seen = _record_params(fake)
    fn = tma_kernel()
    k = Kernel(TMA_PTX, "tma_probe", derive_signature(fn))
    a, c = aligned((128, 64)), aligned((128, 64))
    k(*expand(gl_params(fn), a, c, 7, signature_length=12), grid=1, block=128)
    (r,) = fake.tensor_maps
    assert r["address"] == seen[0]["a"] != a.ctypes.data  # the staged copy's address


def test_param_values_point_at_aligned_map_bytes(fake):
    fn = tma_kernel()
    a, c = aligned((128, 64)), aligned((128, 64))
    values = param_values(_bind(fn, DevArray(a), DevArray(c)), {})
    addr, keep = pack_params(values)
    entries = (ctypes.c_void_p * 12).from_address(addr)
    assert entries[5] % 64 == 0 and ctypes.string_at(entries[5], 128) == fake_map_bytes(fake.tensor_maps[0])
    assert ctypes.c_uint64.from_address(entries[0]).value == a.ctypes.data


def test_param_buffer_gives_a_map_a_128_byte_aligned_slot():
    buf = ParamBuffer(derive_signature(tma_kernel()))
    entries = (ctypes.c_void_p * 12).from_address(buf.address)
    assert buf.packer is None and entries[5] == buf.map_address(5) and entries[5] % 64 == 0
    assert entries[6] - entries[4] == 16  # the 8-byte slots are where they were


def test_prepared_launch_re_encodes_only_when_the_pointer_moves(fake):
    seen = _record_params(fake)
    fn = tma_kernel()
    k = Kernel(TMA_PTX, "tma_probe", derive_signature(fn))
    a1, a2, c = aligned((128, 64)), aligned((128, 64)), aligned((128, 64))
    prepared = k.prepare(*expand(gl_params(fn), DevArray(a1), DevArray(c), 7, signature_length=12),
                         grid=1, block=128)
    assert prepared.pointer_slots == (0, 6) and fake.count("cuTensorMapEncodeTiled") == 1
    prepared.launch(0, (a1.ctypes.data, c.ctypes.data))
    prepared.launch(0, (a1.ctypes.data, aligned((128, 64)).ctypes.data))  # only c moved
    assert fake.count("cuTensorMapEncodeTiled") == 1
    assert seen[0]["map"] == seen[1]["map"] == fake_map_bytes(fake.tensor_maps[0])
    prepared.launch(0, (a2.ctypes.data, c.ctypes.data))
    assert fake.count("cuTensorMapEncodeTiled") == 2 and fake.tensor_maps[-1]["address"] == a2.ctypes.data
    assert seen[2]["map"] == fake_map_bytes(fake.tensor_maps[-1]) and seen[2]["a"] == a2.ctypes.data
    prepared.launch(0, (a1.ctypes.data, c.ctypes.data))  # back to a1: the cache has its map
    assert fake.count("cuTensorMapEncodeTiled") == 2 and seen[3]["map"] == seen[0]["map"]
    with pytest.raises(ValueError, match=r"parameter #5 'a_map0'.*not a multiple of 16"):
        prepared.launch(0, (a1.ctypes.data + 8, c.ctypes.data))


def test_a_kernel_without_maps_prepares_as_before(fake):
    from runtime_kernels import AXPY_PTX, AXPY_SIGNATURE

    x = aligned((64,), np.float32)
    prepared = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE).prepare(DevArray(x), DevArray(x), DevArray(x), 1.0, 64,
                                                                 grid=1, block=64)
    assert prepared.maps == () and "launch" not in vars(prepared)


def test_kernel_rejects_a_map_whose_view_is_not_a_pointer():
    sig = (Param.scalar("n", "int32"), Param.tensor_map("m", "a", "float16", (64, 64), 128, view_index=0))
    with pytest.raises(ValueError, match="tensor map #1 'm' names parameter #0"):
        Kernel(TMA_PTX, "tma_probe", sig)


def test_glparam_defaults_keep_old_entries_working():
    g = GlParam("x", 0, (1,), (2,), False)
    assert g.tensor_maps == () and g.dtype is None
