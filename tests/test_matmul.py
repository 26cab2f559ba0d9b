"""tilec.matmul without a GPU: argument checks, config choice, the IR, PTX, and meaning.

- errors: every bad argument is a TypeError/ValueError naming the argument
  and the numbers, raised before anything is compiled or launched;
- config: the heuristic's choice per (M, N, K, dtype); every configuration
  of the table assembles with ptxas for sm_80 and sm_90 without spills (with
  the heaviest epilogue, bias + ReLU);
- layouts: row-major operands are passed as is, column-major ones as their
  transpose with ``transpose_a/b``, other strides as strided views (never
  copied), composed with ``trans_a/trans_b``;
- IR: the whole-problem ``tile.matmul`` and its epilogue for each option;
- meaning: the kernel at fragment level (pipeline up to tile-distribute) runs
  in the lane interpreter on ragged shapes with the very arguments
  ``tilec.matmul`` would launch it with, against float64; and the whole
  ``tilec.matmul`` call (numpy in, numpy out) runs on the runtime's fake
  driver, whose launch runs that kernel in the interpreter on the staged
  device memory.
"""

from __future__ import annotations

import dataclasses

import ctypes
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.passes import PassPipeline

import tilec
import tilec.kernels.gemm as mm
from tilec.api import make_context
from tilec.codegen.ptxas import find_ptxas, kernel_resources
from tilec.dialects.tile.ops import MatmulOp, YieldOp
from tilec.dialects.abi import ALIGNED_ROWS_ATTR, DTYPE_ATTR, gl_params
from tilec.runtime.gl_views import GlView, expand
from tilec.kernels.gemm_config import (
    ALIGNED_CONFIGS,
    ALIGNED_MIN_ROWS,
    BULK_CONFIG,
    BULK_MEDIUM_CONFIG,
    CONFIGS,
    ELEMENT_ROWS_LARGE,
    FP8_CANDIDATES,
    FP8_WGMMA_LADDER,
    WGMMA_LADDER,
    MatmulConfig,
    as_fp8,
    choose_config,
)
from tilec.runtime import NoDeviceError, has_device

from test_launch_overhead import load_fake_driver

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Cubins go to a fresh folder, never the user's ~/.cache/tilec."""
    d = tmp_path / "tilec-cache"
    monkeypatch.setenv("TILEC_CACHE_DIR", str(d))
    return d


def f16(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float16)


# ---------------------------------------------------------------- stand-ins for device arrays


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))
_DL_CODES = {"float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float8_e4m3fn": (10, 8),
             "float8_e5m2": (12, 8)}


class FakeCudaArray:
    """A CUDA array exported through DLPack at a made-up address (only described, never touched)."""

    _next = [0x7F0000100000]

    def __init__(self, shape, dtype="float16", *, strides=None, device_id=0, address=None):
        if address is None:  # each array its own memory (tilec.matmul refuses an output overlapping an input)
            address = FakeCudaArray._next[0]
            FakeCudaArray._next[0] += 1 << 24
        self.shape = tuple(shape)
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = None if strides is None else (ctypes.c_int64 * len(shape))(*strides)
        self._managed = _DLManagedTensor()
        t = self._managed.dl_tensor
        t.data, t.device, t.ndim = address, _DLDevice(2, device_id), len(shape)
        code, bits = _DL_CODES[dtype]
        t.dtype, t.shape, t.strides, t.byte_offset = _DLDataType(code, bits, 1), self._shape, self._strides, 0

    def __dlpack_device__(self):
        return (2, self._managed.dl_tensor.device.device_id)

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self._managed), b"dltensor", None)


class _CpuDevice:
    type, index = "cpu", None

    def __str__(self):
        return "cpu"


class CpuTorchTensor:
    """What the runtime sees of a torch tensor on the CPU (no torch on this machine)."""

    __module__ = "torch"

    def __init__(self, shape):
        self.shape = shape
        self.device = _CpuDevice()

    def data_ptr(self):
        return 0


# ---------------------------------------------------------------- argument errors


def _no_compile(fn, *args, **kwargs):
    before = len(mm.cached_kernels())
    try:
        fn(*args, **kwargs)
    finally:
        assert len(mm.cached_kernels()) == before, "an argument error must come before any compile"


ERRORS = [
    ("K differs", dict(a=f16(4, 5), b=f16(6, 3)), ValueError,
     r"K differs: op\(a\) is 4x5 .*op\(b\) is 6x3"),
    ("K with trans", dict(a=f16(4, 5), b=f16(6, 3), trans_a=True), ValueError,
     r"op\(a\) is 5x4 \(a has shape \(4, 5\), trans_a=True\)"),
    ("bias length", dict(a=f16(4, 5), b=f16(5, 3), bias=np.zeros(4, np.float32)), ValueError,
     r"bias has 4 elements, expected N = 3"),
    ("bias rank", dict(a=f16(4, 5), b=f16(5, 3), bias=np.zeros((1, 3), np.float32)), ValueError,
     r"bias must be 1-D with N = 3 elements.*\(1, 3\)"),
    ("bias dtype", dict(a=f16(4, 5), b=f16(5, 3), bias=np.zeros(3, np.float64)), TypeError,
     r"bias has dtype float64; expected one of float16, float32"),
    ("mixed dtypes", dict(a=f16(4, 5), b=np.ones((5, 3), np.float32)), TypeError,
     r"a has dtype float16 but b has dtype float32"),
    ("int inputs", dict(a=np.ones((4, 5), np.int32), b=np.ones((5, 3), np.int32)), TypeError,
     r"a has dtype int32; expected float16, bfloat16, float32, float8_e4m3fn or float8_e5m2"),
    ("rank", dict(a=f16(4), b=f16(4, 3)), ValueError, r"a must be a 2-D matrix, got shape \(4,\)"),
    ("not an array", dict(a=[[1.0]], b=f16(1, 1)), TypeError, r"a must be an array .* got list"),
    ("out shape", dict(a=f16(4, 5), b=f16(5, 3), out=np.zeros((3, 4), np.float16)), ValueError,
     r"out has shape \(3, 4\), expected \(4, 3\)"),
    ("out dtype", dict(a=f16(4, 5), b=f16(5, 3), out=np.zeros((4, 3), np.float32)), TypeError,
     r"out has dtype float32, expected float16 .*out_dtype='float32'"),
    ("out dtype given", dict(a=f16(4, 5), b=f16(5, 3), out=np.zeros((4, 3), np.float16), out_dtype="float32"),
     TypeError, r"out has dtype float16, expected float32$"),
    ("out overlaps", dict(a=f16(4, 5), b=f16(5, 3),
                          out=np.lib.stride_tricks.as_strided(np.zeros(3, np.float16), (4, 3), (0, 2))),
     ValueError, r"out: shape \(4, 3\) with element strides \(0, 1\) has elements that share memory"),
    ("out dtype name", dict(a=f16(4, 5), b=f16(5, 3), out_dtype="int8"), TypeError, r"out_dtype='int8'"),
    ("activation", dict(a=f16(4, 5), b=f16(5, 3), activation="tanh"), ValueError,
     r"activation='tanh' is not supported; expected one of \(None, 'relu', 'gelu', 'silu'\)"),
    ("negative strides", dict(a=f16(4, 5)[::-1], b=f16(5, 3)), ValueError, r"a: negative strides \(-5, 1\)"),
    ("torch cpu with cuda", dict(a=CpuTorchTensor((4, 5)), b=FakeCudaArray((5, 3))), ValueError,
     r"tilec.matmul: a: got a torch tensor on device 'cpu', but kernels need CUDA memory"),
    ("devices", dict(a=FakeCudaArray((4, 5)), b=FakeCudaArray((5, 3), device_id=1)), ValueError,
     r"different CUDA devices \(a on cuda:0, b on cuda:1\)"),
    ("bf16 with f16", dict(a=FakeCudaArray((4, 5), "bfloat16"), b=FakeCudaArray((5, 3))), TypeError,
     r"a has dtype bfloat16 but b has dtype float16"),
    ("config for f32", dict(a=f16(4, 5), b=f16(5, 3), config=CONFIGS[("simt", "small")]), ValueError,
     r"config: 64x64x8, 3 stages, SIMT thread tile 4x4 is for float32 inputs, a and b are float16"),
    ("bool flag", dict(a=f16(4, 5), b=f16(5, 3), trans_a=1), TypeError, r"trans_a must be a bool"),
    ("wgmma with A transposed", dict(a=f16(5, 4), b=f16(5, 3), trans_a=True, config=WGMMA_LADDER[0]),
     ValueError, r"reads A as M x K rows \(row-major\) and op\(a\) is stored K x M"),
    ("wgmma with A a transposed view", dict(a=f16(5, 4).T, b=f16(5, 3), config=WGMMA_LADDER[0]),
     ValueError, r"reads A as M x K rows"),
]


@pytest.mark.parametrize("kwargs,error,match", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_arguments_fail_before_compiling(kwargs, error, match):
    kwargs = dict(kwargs)
    a, b = kwargs.pop("a"), kwargs.pop("b")
    with pytest.raises(error, match=match):
        _no_compile(tilec.matmul, a, b, **kwargs)
    with pytest.raises(error, match=match):
        _no_compile(tilec.matmul_kernel, a, b, **kwargs)


@pytest.mark.skipif(has_device(), reason="a GPU is present")
def test_without_a_gpu_valid_calls_raise_no_device_after_checking():
    with pytest.raises(NoDeviceError, match="no CUDA device: .*tilec.matmul_kernel"):
        _no_compile(tilec.matmul, f16(4, 5), f16(5, 3))
    with pytest.raises(ValueError, match="K differs"):  # the checks come first
        tilec.matmul(f16(4, 5), f16(4, 3))


def test_tilec_matmul_is_the_gemm_function():
    import inspect

    assert tilec.matmul is mm.matmul and "tilec.matmul" not in sys.modules
    assert "activation" in inspect.signature(tilec.matmul).parameters
    assert tilec.matmul_kernel is mm.matmul_kernel and tilec.MatmulConfig is MatmulConfig
    assert {"matmul", "matmul_kernel", "autotune", "MatmulConfig", "compile"} <= set(tilec.__all__)


# ---------------------------------------------------------------- config choice


@pytest.mark.parametrize("m,n,k,dtype,tf32,expected", [
    (4096, 4096, 4096, "float16", False, ("mma", "large")),
    (4096, 4096, 4096, "bfloat16", False, ("mma", "large")),
    (1000, 1000, 1000, "float16", False, ("mma", "small")),  # 64 large blocks < 132 SMs
    (17, 33, 65, "float16", False, ("mma", "small")),
    (1, 1, 1, "float16", False, ("mma", "small")),
    (127, 129, 1000, "bfloat16", False, ("mma", "small")),
    (1536, 1536, 64, "float16", False, ("mma", "large")),  # 144 blocks
    (4096, 4096, 4096, "float32", False, ("simt", "large")),
    (1000, 1000, 1000, "float32", False, ("simt", "small")),
    (4096, 4096, 4096, "float32", True, ("tf32", "large")),
    (17, 33, 65, "float32", True, ("tf32", "small")),
])
def test_config_choice(m, n, k, dtype, tf32, expected):
    assert choose_config(m, n, k, dtype, allow_tf32=tf32, sm_count=132) is CONFIGS[expected]


@pytest.mark.parametrize("m,n,k,expected", [
    (4096, 4096, 4096, "wide"),
    (8192, 1024, 8192, "wide"),  # 256 wide blocks
    (8192, 8192, 1024, "large"),  # K below WIDE_MIN_K
    (2048, 2048, 2048, "large"),  # 128 wide blocks < 132 SMs, 256 large ones
    (1000, 1000, 1000, "medium"),
    (128, 4096, 4096, "short"),
    (16, 4096, 4096, "decode"),
])
def test_aligned_config_choice(m, n, k, expected):
    assert choose_config(m, n, k, "float16", sm_count=132, aligned=True) is ALIGNED_CONFIGS[expected]


def test_config_follows_the_sm_count_and_pipeline_text():
    assert choose_config(1000, 1000, 1000, "float16", sm_count=64) is CONFIGS[("mma", "large")]
    large = CONFIGS[("mma", "large")]
    assert str(large) == "tile-to-ptx{block=128,128,32 warps=4,2 stages=4}"
    assert large.grid(4096, 4096) == 1024 and large.grid(129, 1) == 2
    assert str(CONFIGS[("tf32", "small")]) == "tile-to-ptx{block=64,64,16 warps=2,2 tf32=true}"
    assert str(CONFIGS[("simt", "large")]) == "tile-to-ptx{block=128,128,8 thread_tile=8,8}"
    assert large.pipeline() == ("tile-tiling{block=128,128,32 group=8 thread_tile=8,8 warps=4,2},tile-swizzle,"
                                "tile-pipeline{stages=4},tile-layout,tile-distribute,tile-to-llvm")
    assert CONFIGS[("simt", "small")].pipeline_to("tile-distribute") == (
        "tile-tiling{block=64,64,8 thread_tile=4,4},tile-swizzle,tile-pipeline,tile-layout,tile-distribute")
    with pytest.raises(ValueError, match="no pass 'tile-regalloc'"):
        large.passes_to("tile-regalloc")
    with pytest.raises(ValueError, match="tf32 .* and thread_tile .* exclude"):
        MatmulConfig((64, 64, 8), tf32=True, thread_tile=(4, 4))
    for option in ("producer", "bulk_store"):  # both work on bulk tensor copies: without them, an error
        with pytest.raises(ValueError, match=f"MatmulConfig: {option}=True works on bulk tensor copies"):
            MatmulConfig((128, 128, 64), (2, 2), 3, **{option: True})
    with pytest.raises(ValueError, match="no matmul for inputs of dtype int8"):
        choose_config(1, 1, 1, "int8")


# ---------------------------------------------------------------- layouts


def _plan(a, b, **kw):
    return mm.plan_matmul(a, b, sm_count=132, **kw)


def test_layouts_row_col_strided():
    x = f16(64, 96)
    y = f16(96, 48)
    p = _plan(x, y)
    assert (p.m, p.n, p.k, p.layouts) == (64, 48, 96, "row/row")
    assert (p.a.shape, p.a.strides, p.b.shape, p.b.strides) == ((64, 96), (96, 1), (96, 48), (48, 1))
    assert (p.spec.transpose_a, p.spec.transpose_b) == (False, False)

    # x.T of a contiguous array is column-major: the kernel reads the array itself, transposed
    xt = f16(96, 64)
    p = _plan(xt.T, y)
    assert p.layouts == "col/row" and p.spec.transpose_a and not p.spec.transpose_b
    assert (p.a.shape, p.a.strides) == ((96, 64), (64, 1)) and p.a.operand.value.base is xt

    yt = f16(48, 96)
    p = _plan(x, yt.T)
    assert p.layouts == "row/col" and p.spec.transpose_b and (p.b.shape, p.b.strides) == ((48, 96), (96, 1))

    # a non-contiguous view: strides, no copy
    wide = f16(64, 192)
    p = _plan(wide[:, ::2], y)
    assert p.layouts == "strided/row" and (p.a.shape, p.a.strides) == ((64, 96), (192, 2))
    assert not p.spec.transpose_a and p.a.operand.value.base is wide


def test_trans_flags_compose_with_layouts():
    x = f16(96, 64)  # K x M, contiguous
    p = _plan(x, f16(96, 48), trans_a=True)  # op(A) = x.T: column-major
    assert (p.m, p.k, p.layouts, p.spec.transpose_a) == (64, 96, "col/row", True)
    assert (p.a.shape, p.a.strides) == ((96, 64), (64, 1))
    p = _plan(x.T, f16(64, 48), trans_a=True)  # op(A) = x, row-major again
    assert (p.m, p.k, p.layouts, p.spec.transpose_a) == (96, 64, "row/row", False)
    p = _plan(f16(64, 96), f16(48, 96), trans_b=True)  # the usual A @ W.T
    assert (p.n, p.layouts, p.spec.transpose_b) == (48, "row/col", True)
    assert (p.b.shape, p.b.strides) == ((48, 96), (96, 1))
    p = _plan(f16(64, 96), f16(96, 48).T, trans_b=True)
    assert (p.n, p.layouts, p.spec.transpose_b) == (48, "row/row", False)


def test_vectors_and_single_elements():
    p = _plan(f16(1, 1), f16(1, 1))
    assert (p.m, p.n, p.k, p.layouts, p.grid) == (1, 1, 1, "row/row", 1)
    assert p.a.strides == (8, 1)  # the unused stride of one row: a whole number of vectors
    p = _plan(f16(1, 40), f16(40, 1))  # GEMV-like: one row times one column
    assert p.layouts == "row/col" and (p.b.shape, p.b.strides) == ((1, 40), (40, 1))
    p = _plan(f16(40, 1).T, f16(5, 40).T)  # a 1 x 40 row with unit strides, B column-major
    assert (p.m, p.k, p.n, p.layouts) == (1, 40, 5, "row/col") and p.a.strides == (40, 1)
    wide = f16(3, 80)
    p = _plan(wide[:1, ::2], f16(40, 2))  # a row whose elements are not adjacent: its transpose, one stride
    assert (p.layouts, p.a.shape, p.a.strides, p.spec.transpose_a) == ("col/row", (40, 1), (2, 1), True)


def test_device_arrays_and_bias_views():
    a = FakeCudaArray((32, 64), "bfloat16")
    b = FakeCudaArray((48, 64), "bfloat16")  # N x K contiguous, used as B.T
    bias = FakeCudaArray((48,), "float32", strides=(2,))  # every other element of a longer vector
    out = FakeCudaArray((32, 48), "bfloat16")
    p = _plan(a, b, trans_b=True, bias=bias, out=out, activation="relu")
    assert p.spec == mm.MatmulSpec("bfloat16", "bfloat16", transpose_b=True, bias_dtype="float32", activation="relu",
                                   align=(16, 16, 16, 0))
    assert (p.bias.shape, p.bias.strides) == ((48,), (2,))
    with pytest.raises(TypeError, match="cannot allocate the output like a FakeCudaArray; pass out="):
        _plan(a, b, trans_b=True)


# ---------------------------------------------------------------- the IR


def _ops(module):
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    (mat,) = [op for op in fn.walk() if isinstance(op, MatmulOp)]
    return fn, mat, list(mat.epilogue.block.ops)


def test_ir_plain():
    fn, mat, body = _ops(mm.build_module(mm.MatmulSpec("float16", "float16")))
    assert fn.sym_name.data == "matmul_f16_nn_f16"
    assert [a.name_hint for a in fn.args] == ["a", "b", "c"]
    assert [str(a.type) for a in fn.args] == ["!tile.gl<f16, [?, ?]>"] * 3
    assert mat.transpose_a is None and mat.transpose_b is None and not mat.inputs
    assert [type(op) for op in body] == [arith.TruncFOp, YieldOp]


def test_ir_transposes_bias_relu_out_dtype():
    spec = mm.MatmulSpec("bfloat16", "float32", transpose_a=True, transpose_b=True, bias_dtype="bfloat16",
                         activation="relu")
    module = mm.build_module(spec)
    fn, mat, body = _ops(module)
    assert fn.sym_name.data == "matmul_bf16_tt_f32_bias_bf16_relu"
    assert [str(a.type) for a in fn.args] == ["!tile.gl<bf16, [?, ?]>"] * 2 + ["!tile.gl<f32, [?, ?]>",
                                                                               "!tile.gl<bf16, [?]>"]
    assert mat.transpose_a is not None and mat.transpose_b is not None and list(mat.inputs) == [fn.args[3]]
    assert [type(op) for op in body] == [arith.ExtFOp, arith.AddfOp, arith.ConstantOp, arith.MaximumfOp, YieldOp]
    ext, add, zero, relu, yld = body
    acc, bv = mat.epilogue.block.args
    assert ext.input is bv and add.lhs is acc and add.rhs is ext.result
    assert zero.value.value.data == 0.0 and relu.lhs is add.result and relu.rhs is zero.result
    assert yld.values[0] is relu.result and str(relu.result.type) == "f32"
    text = str(module)
    assert "transpose_a transpose_b" in text and "arith.maximumf" in text


def test_ir_f32_bias_needs_no_extension_and_f16_output_truncates():
    _, _, body = _ops(mm.build_module(mm.MatmulSpec("float32", "float16", bias_dtype="float32")))
    assert [type(op) for op in body] == [arith.AddfOp, arith.TruncFOp, YieldOp]
    assert str(body[1].result.type) == "f16"
    _, _, body = _ops(mm.build_module(mm.MatmulSpec("float32", "float32", activation="relu")))
    assert [type(op) for op in body] == [arith.ConstantOp, arith.MaximumfOp, YieldOp]


def test_kernel_signature_is_the_gl_abi():
    k = mm.compile_matmul(mm.MatmulSpec("float16", "float16", bias_dtype="float32", activation="relu"),
                          CONFIGS[("mma", "small")], arch="sm_80")
    assert [g.name for g in k.gl_params] == ["a", "b", "c", "bias"]
    assert [(g.pointer, g.dims, g.strides, g.is_output) for g in k.gl_params] == [
        (0, (1, 2), (3, 4), False), (5, (6, 7), (8, 9), False), (10, (11, 12), (13, 14), True),
        (15, (16,), (17,), False)]
    sig = k.signature
    assert sig[0].dtype == "float16" and not sig[0].contiguous and sig[10].is_output and sig[15].dtype == "float32"
    assert all(p.kind == "scalar" and p.dtype == "int64" for i, p in enumerate(sig) if i not in (0, 5, 10, 15))
    a, b = f16(40, 30), f16(20, 30)
    c = np.empty((40, 20), np.float16)
    bias = np.zeros(64, np.float32)[::2][:20]
    args = expand(k, a, GlView(b, (20, 30), (30, 1)), c, bias)
    assert args[1:5] == [40, 30, 30, 1] and args[6:10] == [20, 30, 30, 1] and args[16:] == [20, 2]
    assert args[0] is a and args[5] is b and args[15] is bias
    k.validate(*args)  # strided views pass the runtime's checks
    with pytest.raises(TypeError, match=r"expected 4 argument\(s\) \(a, b, c, bias\)"):
        expand(k, a, b, c)


# ---------------------------------------------------------------- PTX of every configuration


@pytest.fixture(scope="module")
def ptxas():
    found = find_ptxas()
    if found is None:
        pytest.skip("ptxas not found: install 'nvidia-cuda-nvcc>=13'")
    return str(found)


_KIND_DTYPE = {"mma": "float16", "tf32": "float32", "simt": "float32"}
_ITEMSIZE = {"float16": 2, "float32": 4}
_INSTRUCTIONS = {
    "mma": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ldmatrix.sync.aligned.m8n8.x4",
            "cp.async.cg.shared.global"),
    "tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "cp.async.cg.shared.global"),
    "simt": ("fma.rn.f32", "cp.async.cg.shared.global"),
}


@pytest.mark.parametrize("kind,size", sorted(CONFIGS), ids=lambda x: x)
@pytest.mark.parametrize("rows", ["generic", "element"])
def test_every_config_assembles_without_spills(kind, size, rows, ptxas):
    """Each entry's heaviest variant of the sweep in tilec/kernels/gemm_config.py (bias + ReLU; SIMT: B
    given N x K with an f16 output, 248 registers on sm_80; else both transposed, f32 out), sm_80 and sm_90,
    as the generic kernel and as the kernel for rows aligned only to their element size."""
    dtype = _KIND_DTYPE[kind]
    if kind == "simt":
        spec = mm.MatmulSpec(dtype, "float16", transpose_b=True, bias_dtype="float32", activation="relu",
                             align=(4, 4, 2, 4) if rows == "element" else ())
    else:
        spec = mm.MatmulSpec(dtype, "float32", transpose_a=True, transpose_b=True, bias_dtype="float32",
                             activation="relu", align=(_ITEMSIZE[dtype],) * 2 + (4, 4) if rows == "element" else ())
    k = mm.compile_matmul(spec, CONFIGS[(kind, size)], arch="sm_80")
    ptx = k.asm["ptx"]
    for instruction in _INSTRUCTIONS[kind]:
        if rows == "element" and instruction.startswith("cp.async"):
            # 4-byte rows (f32) take 4-byte cp.async ("ca"); 2-byte rows (f16) are copied element by element
            assert ("cp.async.ca.shared.global" in ptx) == (dtype == "float32"), f"{kind} {size}"
            assert "cp.async.cg" not in ptx
            continue
        assert instruction in ptx, f"{kind} {size}: no {instruction}"
    if kind == "simt":
        assert "mma.sync" not in ptx
    for arch in ("sm_80", "sm_90"):
        used = kernel_resources(ptx, arch, ptxas=ptxas)[k.name]
        print(f"{kind} {size} {CONFIGS[(kind, size)].describe()} {arch}: {used.registers} registers")
        assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used
    threads = {("mma", "small"): 128, ("tf32", "small"): 128}.get((kind, size), 256)
    assert k.launch_defaults.block == (threads, 1, 1)


_ALIGNED_ENTRIES = {**{(size, "sm_80"): c for size, c in ALIGNED_CONFIGS.items()},
                    **{(size, "sm_90"): c for size, c in ALIGNED_CONFIGS.items()},
                    ("bulk", "sm_90"): BULK_CONFIG, ("bulk-medium", "sm_90"): BULK_MEDIUM_CONFIG}


_ALIGNED_CASES = [(size, arch, align) for size, arch in sorted(_ALIGNED_ENTRIES) for align in (16, 8, 4)
                  if align == 16 or (not size.startswith("bulk") and align >= ALIGNED_MIN_ROWS.get(size, 0))]
"""Entry, arch and row alignment, as choose_config pairs them: bulk copies only for 16-byte rows,
the large entry not for 4-byte rows (ALIGNED_MIN_ROWS)."""


@pytest.mark.parametrize("size,arch,align", _ALIGNED_CASES, ids=lambda x: str(x))
def test_every_aligned_config_assembles_without_spills(size, arch, align, ptxas):
    """The aligned f16 table and the sm_90 bulk configs, on their heaviest variant (both operands
    transposed, bias + ReLU, f32 output), for the arch and row alignments they are chosen for (the
    table also for rows of 8 and 4 bytes: 8- and 4-byte cp.async)."""
    spec = mm.MatmulSpec("float16", "float32", transpose_a=True, transpose_b=True, bias_dtype="float32",
                         activation="relu", align=align)
    k = mm.compile_matmul(spec, _ALIGNED_ENTRIES[(size, arch)], arch=arch)
    used = kernel_resources(k.asm["ptx"], arch, ptxas=ptxas)[k.name]
    assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used


def test_odd_rows_kernel_means_the_same_in_the_interpreter():
    """Rows of odd length (every view 2-byte aligned): element copies, a K loop of two stages
    (tile-pipeline caps it), element stores; run at the fragment level in the lane interpreter."""
    from tilec.interp import run

    m, n, k = 40, 23, 37
    rng = np.random.default_rng(11)
    a, ta = _operand(rng, m, k, "row", np.float16)
    b, tb = _operand(rng, k, n, "row", np.float16)
    plan = _plan(a, b)
    plan = dataclasses.replace(plan, spec=dataclasses.replace(plan.spec, align=2))
    assert plan.spec.kernel_name.endswith("_a2_2_2")
    module, fn = _fragment_level(plan)
    assert "frag.cp_async " not in str(module)
    out = np.full((m, n), np.nan, np.float16)
    args = expand(gl_params(fn), *plan.views(out), signature_length=len(fn.args))
    run(module, fn.sym_name.data, *args, grid=(plan.grid, 1, 1))
    assert not np.isnan(out).any()
    assert _rel_error(out, _reference(a, b, ta, tb, None, None)) < 2e-3


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_element_rows_config_assembles_without_spills(arch, dtype, ptxas):
    """ELEMENT_ROWS_LARGE on 2-byte rows, heaviest variant (both transposed, bias + ReLU, f32 out)."""
    spec = mm.MatmulSpec(dtype, "float32", transpose_a=True, transpose_b=True, bias_dtype="float32",
                         activation="relu", align=(2, 2, 4, 4))
    k = mm.compile_matmul(spec, ELEMENT_ROWS_LARGE, arch=arch)
    used = kernel_resources(k.asm["ptx"], arch, ptxas=ptxas)[k.name]
    assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used


@pytest.mark.parametrize("m,n,k,align,expected", [
    (4096, 4096, 4100, 8, "wide"),
    (4096, 4096, 4098, 4, "wide"),
    (4096, 4096, 1000, 8, "large"),
    (4096, 4096, 1002, 4, "general large"),  # ALIGNED_MIN_ROWS
    (512, 512, 1002, 4, "medium"),
    (4095, 4095, 4095, 2, "element"),
    (500, 500, 501, 2, "general small"),
    (4096, 4096, 4096, 0, "general large"),  # a view without a unit stride
])
def test_config_by_row_alignment(m, n, k, align, expected):
    got = choose_config(m, n, k, "float16", sm_count=132, row_align=align, arch="sm_90")
    want = {"general large": CONFIGS[("mma", "large")], "general small": CONFIGS[("mma", "small")],
            "element": ELEMENT_ROWS_LARGE}.get(expected) or ALIGNED_CONFIGS[expected]
    assert got == want
    assert not got.bulk and not got.wgmma  # they need 16-byte rows


@pytest.mark.parametrize("m,n,k,expected", [
    (4096, 4096, 4096, "deep"),  # 512 tiles of 128x256: more than the SMs, four stages
    (8192, 28672, 4096, "deep"),
    (8192, 8192, 1024, "deep"),
    (8192, 1024, 8192, "deep"),
    (2048, 2048, 2048, "persistent"),  # 128 tiles: one wave, three stages
    (1536, 1536, 1536, "persistent"),  # 72 tiles: over half the SMs
    (512, 4096, 4096, "mid"),  # 64 tiles: under half
    (1024, 1024, 1024, "thin-wide"),  # 64 tiles of 128x128, 128 of 64x128
    (128, 4096, 4096, "thin"),
])
def test_wgmma_choice_on_sm90(m, n, k, expected):
    """Aligned row-major f16 on sm_90 (132 SMs): the widest tile of WGMMA_LADDER whose grid fills
    the SMs, the first being the persistent warp-specialised kernel with the TMA-store epilogue."""
    from tilec.kernels.gemm_config import DEEP_PERSISTENT_WGMMA_CONFIG, PERSISTENT_WGMMA_CONFIG, WGMMA_LADDER

    got = choose_config(m, n, k, "float16", sm_count=132, aligned=True, arch="sm_90")
    want = {"persistent": PERSISTENT_WGMMA_CONFIG, "deep": DEEP_PERSISTENT_WGMMA_CONFIG, "mid": WGMMA_LADDER[1],
            "thin-wide": WGMMA_LADDER[2], "thin": WGMMA_LADDER[4]}[expected]
    assert got == want and WGMMA_LADDER[0] is PERSISTENT_WGMMA_CONFIG
    assert got.persistent == got.producer == (expected in ("persistent", "deep"))
    if got.persistent:  # four stages past one wave of tiles, three up to it
        assert got.stages == (4 if expected == "deep" else 3)
    assert got.bulk_store == (expected != "thin")  # the 64x64 tile keeps its direct stores
    assert got.in_flight
    if got.persistent:  # one block a SM, never more than there are tiles
        assert got.grid(m, n, sm_count=132) == min(132, got.tiles(m, n)) and got.grid(100, 300, sm_count=132) == 2
    assert choose_config(m, n, k, "float16", sm_count=132, aligned=True, arch="sm_90", transpose_a=True).wgmma is False


def test_bf16_kernel_and_matmul_kernel_without_gpu():
    a, b = FakeCudaArray((100, 70), "bfloat16"), FakeCudaArray((70, 45), "bfloat16")
    out = FakeCudaArray((100, 45), "bfloat16")
    k = tilec.matmul_kernel(a, b, out=out, arch="sm_80")
    assert k.name == "matmul_bf16_nn_bf16_a4_2_2" and "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in k.asm["ptx"]
    assert tilec.matmul_kernel(a, b, out=out, arch="sm_80") is k  # compiled once per process
    k2 = tilec.matmul_kernel(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), allow_tf32=True, arch="sm_80")
    assert "tf32" in k2.asm["ptx"]


# ---------------------------------------------------------------- FP8


def _fp8(m, n, k, dtype="float8_e4m3fn"):
    """A (M x K), B = W.t() (K x N stored N x K), a bf16 C and two one-element f32 scales, all on the 'GPU'."""
    at = [0x7F0000000000 + (i << 32) for i in range(5)]  # apart: C of 8192^2 is larger than the default spacing
    return (FakeCudaArray((m, k), dtype, address=at[0]), FakeCudaArray((k, n), dtype, strides=(1, k), address=at[1]),
            FakeCudaArray((m, n), "bfloat16", address=at[2]), FakeCudaArray((), "float32", address=at[3]),
            FakeCudaArray((1,), "float32", address=at[4]))


@pytest.mark.parametrize("m,n,k,rung", [(4096, 4096, 4096, 0), (8192, 8192, 1024, 0), (1024, 1024, 1024, 2),
                                        (128, 4096, 4096, 4), (16, 4096, 4096, 4), (64, 64, 64, 4)])
def test_fp8_plan_and_config(m, n, k, rung):
    """FP8 takes the wgmma ladder with twice the K elements a step (the same bytes); B read K-major."""
    a, b, c, sa, sb = _fp8(m, n, k)
    p = mm.plan_matmul(a, b, out=c, scale_a=sa, scale_b=sb, sm_count=132, arch="sm_90a")
    assert p.spec == mm.MatmulSpec("float8_e4m3fn", "bfloat16", transpose_b=True, align=(16, 16, 16, 0, 0),
                                   scale_a=True, scale_b=True)
    assert p.spec.kernel_name == "matmul_e4m3_nt_bf16_scaled_a16" and p.spec.row_align == 16
    assert p.config == FP8_WGMMA_LADDER[rung] == as_fp8(WGMMA_LADDER[rung])
    assert [v.shape for v in p.scales] == [(1,), (1,)]


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(b="row"), ValueError, r"read K-major: op\(a\) must be M x K .* got op\(a\) with contiguous rows and "
                                r"op\(b\) with contiguous rows"),
    (dict(a="col"), ValueError, "read K-major"),
    (dict(a="strided"), ValueError, "read K-major: .* got op\\(a\\) with no contiguous dimension"),
    (dict(arch="sm_80"), ValueError, "FP8 inputs are multiplied by the warpgroup MMA of sm_90 .* the target is sm_80"),
    (dict(k=40), ValueError, "rows of a, b and the output must start at 16-byte aligned"),
    (dict(scale_a=(2,)), ValueError, r"scale_a must hold one number \(a per-tensor scale\), got shape \(2,\)"),
    (dict(scale_b="float16"), TypeError, "scale_b has dtype float16; expected float32"),
    (dict(bias="float8_e4m3fn"), TypeError, r"bias has dtype float8_e4m3fn; expected one of bfloat16, float32 "
                                            r"\(the output's or float32\)"),
    (dict(b_dtype="float8_e5m2"), TypeError, "mixed input dtypes"),
    (dict(config=BULK_CONFIG), ValueError, "float8_e4m3fn inputs are multiplied by wgmma only"),
])
def test_fp8_errors(kwargs, error, match):
    m, n, k = 256, 256, kwargs.pop("k", 256)
    a, b, c, sa, sb = _fp8(m, n, k)
    if kwargs.pop("b", None) == "row":
        b = FakeCudaArray((k, n), "float8_e4m3fn")
    how_a = kwargs.pop("a", None)
    if how_a == "col":
        a = FakeCudaArray((m, k), "float8_e4m3fn", strides=(1, m))
    elif how_a == "strided":
        a = FakeCudaArray((m, k), "float8_e4m3fn", strides=(2 * k, 2))
    if "b_dtype" in kwargs:
        b = FakeCudaArray((k, n), kwargs.pop("b_dtype"), strides=(1, k))
    if "scale_a" in kwargs:
        sa = FakeCudaArray(kwargs.pop("scale_a"), "float32")
    if "scale_b" in kwargs:
        sb = FakeCudaArray((1,), kwargs.pop("scale_b"))
    if "bias" in kwargs:
        kwargs["bias"] = FakeCudaArray((n,), kwargs.pop("bias"))
    kwargs.setdefault("arch", "sm_90a")
    with pytest.raises(error, match=match):
        mm.plan_matmul(a, b, out=c, scale_a=sa, scale_b=sb, **kwargs)


def test_fp8_autotune_times_the_fp8_ladder(tmp_path, monkeypatch):
    """Without a GPU (``measure=``, the target taken as sm_90a): the FP8 candidates are the wgmma ones
    with K steps of 128/256, the heuristic's first; a config that does other math is refused."""
    import tilec.kernels.gemm_plan as plan_module
    import tilec.kernels.gemm_tune as tune_module

    monkeypatch.setattr(plan_module, "target_arch", lambda arch: "sm_90a" if arch is None else arch)
    monkeypatch.setattr(tune_module, "default_arch", lambda: "sm_90a")
    a, b, c, sa, sb = _fp8(2048, 2048, 2048)
    seen = []

    def measure(config):
        seen.append(config)
        return config.block[1] / 1e6  # the narrowest tile "wins"

    r = tilec.autotune(a, b, out=c, scale_a=sa, scale_b=sb, measure=measure, progress=False,
                       path=tmp_path / "t.json")
    assert seen[0] == FP8_WGMMA_LADDER[0] and all(cfg.wgmma and cfg in FP8_CANDIDATES for cfg in seen)
    assert r.config.block[1] == min(cfg.block[1] for cfg in seen)
    with pytest.raises(ValueError, match="multiplied by wgmma only"):
        tilec.autotune(a, b, out=c, candidates=[CONFIGS[("mma", "large")]], measure=measure, path=tmp_path / "u.json")


def test_fp8_kernel_without_gpu(ptxas):
    """The decode-shaped FP8 kernel: K = 32 e4m3 wgmmas, the scales two loads, no spills."""
    a, b, c, sa, sb = _fp8(16, 4096, 4096)
    k = tilec.matmul_kernel(a, b, out=c, scale_a=sa, scale_b=sb, arch="sm_90a")
    ptx = k.asm["ptx"]
    assert k.name == "matmul_e4m3_nt_bf16_scaled_a16"
    assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" in ptx and ptx.count("ld.global") == 2
    used = kernel_resources(ptx, "sm_90a", ptxas=ptxas)[k.name]
    assert (used.spill_stores, used.spill_loads) == (0, 0), used


# ---------------------------------------------------------------- meaning, in the lane interpreter


def _fragment_level(plan):
    """The kernel of ``plan`` after tile-distribute (fragment level), and its function."""
    module = mm.build_module(plan.spec)
    PassPipeline(plan.config.passes_to("tile-distribute")).apply(make_context(), module)
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return module, fn


def _reference(a, b, trans_a=False, trans_b=False, bias=None, activation=None):
    ref = (a.T if trans_a else a).astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
    if bias is not None:
        ref = ref + bias.astype(np.float64)
    if activation == "gelu":  # torch's exact gelu, written out (not the code under test's helper)
        return 0.5 * ref * (1 + np.vectorize(math.erf)(ref / math.sqrt(2)))
    if activation == "silu":
        return ref / (1 + np.exp(-ref))
    return np.maximum(ref, 0) if activation == "relu" else ref


def _rel_error(got, ref):
    return float(np.linalg.norm(got.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-30))


MEANING = [
    # name, dtype, (m, n, k), how A and B are given, bias, activation[, config]
    ("f16 row/row", np.float16, (17, 33, 65), "row", "row", None, None),
    ("f16 1x1x1", np.float16, (1, 1, 1), "row", "col", None, None),
    ("f16 col/col bias relu", np.float16, (17, 33, 65), "col", "col", np.float32, "relu"),
    ("f16 strided/trans_b f16 bias", np.float16, (100, 70, 45), "strided", "trans", np.float16, None),
    ("f16 trans_a/strided relu", np.float16, (70, 100, 45), "trans", "strided", None, "relu"),
    ("f16 K=0 bias", np.float16, (9, 10, 0), "row", "row", np.float32, None),
    ("f16 large config col/row bias relu", np.float16, (130, 129, 40), "col", "row", np.float16, "relu",
     ("mma", "large")),
    ("f32 simt row/col bias relu", np.float32, (17, 33, 65), "row", "col", np.float32, "relu"),
    ("f16 row/col bias gelu", np.float16, (17, 33, 65), "row", "col", np.float32, "gelu"),
    ("f32 simt row/row silu", np.float32, (17, 33, 65), "row", "row", None, "silu"),
    ("f32 simt strided/row", np.float32, (40, 20, 19), "strided", "row", None, None),
    ("f32 simt large config", np.float32, (130, 20, 19), "row", "row", None, None, ("simt", "large")),
    ("tf32 col/row", np.float32, (17, 33, 65), "col", "row", None, None, ("tf32", "small")),
]


def _operand(rng, rows, cols, how, dtype):
    """(array to pass, trans flag): op(x) is rows x cols, given as ``how``."""
    x = rng.standard_normal((rows, cols)).astype(dtype)
    if how == "row":
        return x, False
    if how == "col":  # the transpose of a contiguous array
        return np.ascontiguousarray(x.T).T, False
    if how == "trans":  # stored transposed, trans flag set
        return np.ascontiguousarray(x.T), True
    wide = np.zeros((rows, 2 * cols + 1), dtype)  # a strided view of a wider array
    wide[:, 1::2] = x
    return wide[:, 1::2], False


@pytest.mark.parametrize("case", MEANING, ids=[c[0] for c in MEANING])
def test_meaning_in_the_interpreter(case):
    from tilec.interp import run

    name, dtype, (m, n, k), how_a, how_b, bias_dtype, activation, *config = case
    config = CONFIGS[config[0]] if config else None
    rng = np.random.default_rng(m * 131 + n * 7 + k)
    a, ta = _operand(rng, m, k, how_a, dtype)
    b, tb = _operand(rng, k, n, how_b, dtype)
    bias = None if bias_dtype is None else rng.standard_normal(n).astype(bias_dtype)
    tf32 = config is not None and config.tf32
    plan = _plan(a, b, trans_a=ta, trans_b=tb, bias=bias, activation=activation, config=config, allow_tf32=tf32)
    if how_a == "strided":
        assert plan.a.layout == "strided" and plan.a.operand.value.base is not None
    module, fn = _fragment_level(plan)
    out = np.full((m, n), np.nan, dtype)
    args = expand(gl_params(fn), *plan.views(out), signature_length=len(fn.args))
    run(module, fn.sym_name.data, *args, grid=(plan.grid, 1, 1))
    ref = _reference(a, b, ta, tb, bias, activation)
    err = _rel_error(out, ref)
    print(f"{name}: {plan.spec.kernel_name} {plan.layouts} {m}x{n}x{k} {plan.config.describe()}: rel error {err:.1e}")
    assert not np.isnan(out).any()
    assert err < (2e-3 if dtype == np.float16 else 2e-3 if tf32 else 1e-6)


# ---------------------------------------------------------------- the whole call, on the fake driver


@pytest.fixture
def fake_gpu(monkeypatch):
    with load_fake_driver().installed(monkeypatch) as fake:
        yield fake


def _emulate_with_interpreter(fake, *plans):
    """Make the fake driver's launches run the kernels of ``plans`` (fragment level, found by name) in
    the lane interpreter, on the device memory the runtime staged, reading the parameters as the GPU would."""
    from tilec.interp import run

    kernels = {plan.spec.kernel_name: _fragment_level(plan) for plan in plans}
    original = fake.cuLaunchKernel

    def memory_at(address, dtype):
        for buf in fake.memory.values():
            start = ctypes.addressof(buf)
            if start <= address < start + len(buf):
                n = (start + len(buf) - address) // np.dtype(dtype).itemsize
                return np.frombuffer((ctypes.c_uint8 * (n * np.dtype(dtype).itemsize)).from_address(address), dtype)
        raise AssertionError(f"address {address:#x} is not in the fake device memory")

    def launch(f, gx, gy, gz, bx, by, bz, smem, stream, params_addr, extra):
        result = original(f, gx, gy, gz, bx, by, bz, smem, stream, params_addr, extra)
        module, fn = kernels[fake.launches[-1]["name"]]
        pointers = {g.pointer for g in gl_params(fn)}
        slots = (ctypes.c_void_p * len(fn.args)).from_address(params_addr)
        args = []
        for i, arg in enumerate(fn.args):
            if i in pointers:
                dtype = {"f16": np.float16, "f32": np.float32}[str(fn.arg_attrs.data[i].data[DTYPE_ATTR])]
                args.append(memory_at(ctypes.c_uint64.from_address(slots[i]).value, dtype))
            else:
                args.append(ctypes.c_int64.from_address(slots[i]).value)
        run(module, fn.sym_name.data, *args, grid=(gx, gy, gz))
        return result

    fake.cuLaunchKernel = launch


def test_matmul_end_to_end_on_the_fake_driver(fake_gpu):
    """numpy in, numpy out: staging, the gl arguments, the grid, the copy back — and the kernel's answer."""
    rng = np.random.default_rng(5)
    m, n, k = 70, 45, 33
    base_a = rng.standard_normal((k, m)).astype(np.float16)
    a = base_a.T  # column-major: handed over as transpose_a
    wide_b = rng.standard_normal((k, 2 * n)).astype(np.float16)
    b = wide_b[:, ::2]  # strided
    bias = rng.standard_normal(n).astype(np.float16)
    plan = mm.plan_matmul(a, b, bias=bias, activation="relu")
    assert plan.layouts == "col/strided" and plan.config is CONFIGS[("mma", "small")]
    wide_c = np.full((m, 2 * n), np.nan, np.float16)  # a strided output: the generic kernel for c
    strided_out = mm.plan_matmul(a, b, bias=bias, activation="relu", out=wide_c[:, ::2])
    assert strided_out.spec.align == (0, 0, 0, 0)
    _emulate_with_interpreter(fake_gpu, plan, strided_out)
    c = tilec.matmul(a, b, bias=bias, activation="relu")
    assert isinstance(c, np.ndarray) and c.shape == (m, n) and c.dtype == np.float16
    err = _rel_error(c, _reference(a, b, bias=bias, activation="relu"))
    print(f"fake-driver tilec.matmul {m}x{n}x{k} col/strided bias relu: rel error {err:.1e}")
    assert err < 2e-3
    (launch,) = fake_gpu.launches
    assert launch["name"] == "matmul_f16_tn_f16_bias_f16_relu"  # numpy arrays, staged: no promises
    assert launch["grid"] == (plan.grid, 1, 1) == (2, 1, 1) and launch["block"] == (128, 1, 1)
    assert fake_gpu.memory == {}, "device memory leaked"
    # into a given output, strided: only its elements are written
    fake_gpu.launches.clear()
    assert tilec.matmul(a, b, bias=bias, activation="relu", out=wide_c[:, ::2]) is not None
    assert np.isnan(wide_c[:, 1::2]).all() and _rel_error(wide_c[:, ::2], _reference(a, b, bias=bias, activation="relu")) < 2e-3
    assert len(fake_gpu.launches) == 1


# ---------------------------------------------------------------- the aligned-rows specialisation


@pytest.mark.parametrize("case,align", [
    (dict(a=FakeCudaArray((64, 32)), b=FakeCudaArray((32, 48)), out=FakeCudaArray((64, 48))), (16, 16, 16)),
    (dict(a=FakeCudaArray((64, 32)), b=FakeCudaArray((48, 32)), trans_b=True, out=FakeCudaArray((64, 48))),
     (16, 16, 16)),
    (dict(a=FakeCudaArray((64, 30)), b=FakeCudaArray((30, 48)), out=FakeCudaArray((64, 48))), (4, 16, 16)),  # 60 B
    (dict(a=FakeCudaArray((64, 31)), b=FakeCudaArray((31, 48)), out=FakeCudaArray((64, 48))), (2, 16, 16)),  # 62 B
    (dict(a=FakeCudaArray((64, 32), address=0x7F0000100008), b=FakeCudaArray((32, 48)),
          out=FakeCudaArray((64, 48))), (8, 16, 16)),  # address
    (dict(a=FakeCudaArray((64, 32), strides=(36, 1)), b=FakeCudaArray((32, 48)), out=FakeCudaArray((64, 48))),
     (8, 16, 16)),  # row stride of 72 bytes
    (dict(a=FakeCudaArray((64, 32), strides=(1, 64)), b=FakeCudaArray((32, 48)), out=FakeCudaArray((64, 48))),
     (16, 16, 16)),  # column-major A: the kernel reads it as its transpose, rows of 64 elements
    (dict(a=FakeCudaArray((64, 32), strides=(64, 2)), b=FakeCudaArray((32, 48)), out=FakeCudaArray((64, 48))),
     (0, 16, 16)),  # no contiguous dimension: the generic path for A
    (dict(a=FakeCudaArray((64, 32)), b=FakeCudaArray((32, 48)), out=FakeCudaArray((64, 48)),
          bias=FakeCudaArray((48,), "float32", strides=(2,))), (16, 16, 16, 0)),  # bias not contiguous
    (dict(a=np.zeros((64, 32), np.float16), b=np.zeros((32, 48), np.float16)), (0, 0, 0)),  # host arrays
    (dict(a=FakeCudaArray((64, 32)), b=FakeCudaArray((32, 45)), out=FakeCudaArray((64, 45))), (16, 2, 2)),  # 90 B
])
def test_each_view_gets_the_widest_alignment_it_allows(case, align):
    plan = _plan(**case)
    assert plan.spec.align == align
    aligned = min(align) == 16
    assert plan.spec.aligned is aligned
    assert plan.spec.kernel_name.endswith("_a16") is aligned
    if aligned:
        assert plan.config == choose_config(64, 48, 32, "float16", aligned=True)
    elif any(align):
        assert plan.spec.kernel_name.endswith("_a" + "_".join(map(str, align)))
    else:
        assert plan.spec.rows == "any" and plan.spec.kernel_name == "matmul_f16_nn_f16"  # the generic kernel
    (fn,) = [op for op in mm.build_module(plan.spec).ops if isinstance(op, func.FuncOp)]
    if not any(align):
        assert fn.arg_attrs is None
        return
    promised = [d.data.get(ALIGNED_ROWS_ATTR) for d in fn.arg_attrs.data]
    assert [0 if p is None else p.value.data for p in promised] == list(align)


def test_matmul_spec_checks_its_alignments():
    assert mm.MatmulSpec("float16", "float32", bias_dtype="float32", align=8).align == (8, 8, 8, 8)
    assert mm.MatmulSpec("float16", "float16", align=0).align == ()
    with pytest.raises(ValueError, match=r"align=\(16, 16\) has 2 entries; expected one per argument \(a, b, c\)"):
        mm.MatmulSpec("float16", "float16", align=(16, 16))
    with pytest.raises(ValueError, match=r"align of 'c' is 2; expected 0 or a power of two from its element size "
                                         r"\(4\) to 16"):
        mm.MatmulSpec("float16", "float32", align=(16, 16, 2))
    with pytest.raises(ValueError, match=r"align of 'a' is 12"):
        mm.MatmulSpec("float16", "float16", align=(12, 16, 16))


def test_aligned_kernel_carries_and_checks_the_promise():
    from tilec.runtime.gl_views import aligned_rows_problem, check_aligned_rows

    spec = mm.MatmulSpec("float16", "float16", align=16)
    (fn,) = [op for op in mm.build_module(spec).ops if isinstance(op, func.FuncOp)]
    assert [str(d) for d in fn.arg_attrs.data] == ["{tile.aligned_rows = 16 : i64}"] * 3
    kernel = mm.compile_matmul(spec, CONFIGS[("mma", "small")], arch="sm_80")
    assert [(g.name, g.aligned_rows, g.element_bytes) for g in kernel.gl_params] == [
        ("a", 16, 2), ("b", 16, 2), ("c", 16, 2)]
    a, b, c = (np.zeros((64, 64), np.float16) for _ in range(3))
    check_aligned_rows(kernel.gl_params, expand(kernel, a, b, c), kernel.name)  # fine
    g = kernel.gl_params[0]
    assert aligned_rows_problem(g, 0x1000, (64, 64), (64, 1)) is None
    assert "innermost stride is 2" in aligned_rows_problem(g, 0x1000, (64, 64), (128, 2))
    assert "not a multiple of 16 bytes" in aligned_rows_problem(g, 0x1008, (64, 64), (64, 1))
    assert "stride 0 is 60 elements = 120 bytes" in aligned_rows_problem(g, 0x1000, (64, 60), (60, 1))
    assert "rows are 60 elements = 120 bytes" in aligned_rows_problem(g, 0x1000, (64, 60), (64, 1))
    wide = np.zeros((64, 68), np.float16)[:, :64]  # rows of 64 elements, 136 bytes apart
    with pytest.raises(ValueError, match=r"kernel 'matmul_f16_nn_f16_a16': gl argument 'a' was compiled with "
                                         r"tile.aligned_rows = 16 .* but stride 0 is 68 elements"):
        kernel.validate(*expand(kernel, wide, b, c))


@pytest.mark.parametrize("shape,how_a,how_b,bias_dtype,size", [
    ((72, 40, 56), "row", "row", None, "medium"),
    ((40, 24, 136), "col", "trans", np.float32, "short"),
    ((8, 16, 264), "row", "col", np.float16, "decode"),
    ((136, 72, 72), "row", "row", np.float32, "large"),
    ((136, 264, 72), "col", "row", None, "wide"),
])
def test_aligned_kernels_mean_the_same_in_the_interpreter(shape, how_a, how_b, bias_dtype, size):
    """Ragged shapes that keep every row a whole number of 16-byte vectors, through each aligned config."""
    from tilec.interp import run

    m, n, k = shape
    rng = np.random.default_rng(m + 3 * n + 7 * k)
    a, ta = _operand(rng, m, k, how_a, np.float16)
    b, tb = _operand(rng, k, n, how_b, np.float16)
    bias = None if bias_dtype is None else rng.standard_normal(n).astype(bias_dtype)
    plan = _plan(a, b, trans_a=ta, trans_b=tb, bias=bias, activation="relu", config=ALIGNED_CONFIGS[size])
    plan = dataclasses.replace(plan, spec=dataclasses.replace(plan.spec, align=16))
    module, fn = _fragment_level(plan)
    out = np.full((m, n), np.nan, np.float16)
    args = expand(gl_params(fn), *plan.views(out), signature_length=len(fn.args))
    run(module, fn.sym_name.data, *args, grid=(plan.grid, 1, 1))
    ref = _reference(a, b, ta, tb, bias, "relu")
    assert not np.isnan(out).any()
    assert _rel_error(out, ref) < 2e-3


# ---------------------------------------------------------------- split-K


@pytest.mark.parametrize("m,n,k,size,tiles,expected", [
    (16, 4096, 4096, 2, 64, 2), (16, 4096, 4096, 1, 64, 1), (128, 1024, 8192, 2, 64, 4), (128, 1024, 8192, 1, 32, 4),
    (16, 8192, 8192, 2, 128, 1), (1024, 1024, 1024, 2, 128, 1), (16, 4096, 6144, 2, 64, 3), (16, 4096, 4100, 2, 64, 1),
])
def test_choose_split(m, n, k, size, tiles, expected):
    from tilec.kernels.splitk import choose_split

    assert choose_split(m, n, k, size, tiles, 132) == expected


def test_split_plan_views_and_kernels():
    """A decode step splits in two: op(A) and op(B) become batches of K's halves (strided views, no copy),
    the batched matmul writes f32 partials, the reduction carries the epilogue."""
    at = [0x7D0000000000 + (i << 32) for i in range(4)]
    a = FakeCudaArray((16, 4096), "float16", address=at[0])
    w = FakeCudaArray((4096, 4096), "float16", strides=(1, 4096), address=at[1])  # B = W.t(), stored N x K
    c = FakeCudaArray((16, 4096), "float16", address=at[2])
    bias = FakeCudaArray((4096,), "float32", address=at[3])
    p = mm.plan_matmul(a, w, out=c, bias=bias, activation="relu", sm_count=132, arch="sm_90a")
    assert p.split_k == 2
    va, vb = p.slice_views()
    assert (va.shape, va.strides) == ((2, 16, 2048), (2048, 4096, 1))
    assert (vb.shape, vb.strides) == ((2, 4096, 2048), (2048, 4096, 1))  # N x K rows, K halves
    g = p.gemm_spec()
    assert g.batched and g.out_dtype == "float32" and g.bias_dtype is None and g.align == (16, 16, 16)
    r = p.reduce_spec(c)
    assert (r.out_dtype, r.bias_dtype, r.activation, r.align) == ("float16", "float32", "relu", (16, 16, 16))
    k1 = tilec.matmul_kernel(a, w, out=c, bias=bias, activation="relu", arch="sm_90a")
    assert k1.name == "matmul_f16_nt_f32_batched_a16" and "%ctaid.y" in k1.asm["ptx"]
    k2 = mm.compile_reduce(r, arch="sm_90a")
    assert "ld.global" in k2.asm["ptx"] and k2.name.startswith("splitk_reduce_float16_bias_float32_relu")
    assert mm.plan_matmul(a, w, out=c, bias=bias, split_k=1, sm_count=132, arch="sm_90a").split_k == 1


@pytest.mark.parametrize("split_k,error,match", [
    (3, ValueError, r"split_k=3: K = 4096 must divide into 3 slices of whole 16-byte rows"),
    (5, ValueError, "split_k=5: expected an int from 1 to 4"),
    (2.0, ValueError, "expected an int"),
])
def test_split_k_errors(split_k, error, match):
    a, b = FakeCudaArray((16, 4096), "float16"), FakeCudaArray((4096, 64), "float16")
    with pytest.raises(error, match=match):
        mm.plan_matmul(a, b, out=FakeCudaArray((16, 64), "float16"), split_k=split_k)
    with pytest.raises(ValueError, match="needs device arrays"):
        mm.plan_matmul(np.ones((16, 64), np.float16), np.ones((64, 8), np.float16), split_k=2)


@pytest.mark.parametrize("activation", ["relu", "gelu", "silu"])
def test_split_meaning_in_the_interpreters(activation):
    """The two kernels of a split call, as the launcher runs them, on ragged M and N with A given
    transposed (K x M), a bias, an activation and an f32 C: the batched matmul lane by lane (mma.sync),
    the reduction at the tile level; equal to the unsplit product."""
    from tilec.interp import run
    from tilec.kernels.splitk_ir import build_reduce_module

    m, n, k, split = 40, 65, 192, 3
    rng = np.random.default_rng(5)
    at = rng.standard_normal((k, m)).astype(np.float16)  # op(A) = at.T
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    plan = _plan(at, b, trans_a=True, bias=bias, activation=activation, out_dtype="float32")
    plan = dataclasses.replace(plan, split_k=split)
    va, vb = plan.slice_views()
    # the alignments a device array of these shapes has (numpy arrays are staged, so the plan says 0):
    # A's rows of 40 f16 are 16-byte vectors, B's of 65 f16 only 2-byte ones, the workspace's rows of 65
    # f32 (in rows of 68) 4-byte ones
    assert (plan.workspace_row(), plan.workspace_align()) == (68, 4)
    gemm = dataclasses.replace(plan.gemm_spec(), align=(16, 2, 4))
    module = mm.build_module(gemm)
    PassPipeline(CONFIGS[("mma", "small")].passes_to("tile-distribute")).apply(make_context(), module)
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    workspace = np.full((split, m, plan.workspace_row()), np.nan, np.float32)
    ws = GlView(workspace, (split, m, n), (m * plan.workspace_row(), plan.workspace_row(), 1))  # as the launcher's
    args = expand(gl_params(fn), GlView(at, va.shape, va.strides), GlView(b, vb.shape, vb.strides), ws,
                  signature_length=len(fn.args))
    run(module, fn.sym_name.data, *args, grid=(CONFIGS[("mma", "small")].tiles(m, n), split, 1))
    assert np.isnan(workspace[:, :, n:]).all()  # the row padding is never written
    out = np.full((m, n), np.nan, np.float32)
    rspec = dataclasses.replace(plan.reduce_spec(out), align=(4, 0, 0))
    run(build_reduce_module(rspec), rspec.kernel_name,
        np.lib.stride_tricks.as_strided(workspace, (split, m, n), workspace.strides), out, bias,
        grid=(rspec.grid(m, n), 1, 1))
    assert rspec.kernel_name.startswith(f"splitk_reduce_float32_bias_float32_{activation}")
    assert _rel_error(out, _reference(at, b, True, False, bias, activation)) < 2e-3


def test_split_k_with_autotune_is_refused():
    a, b = FakeCudaArray((16, 4096), "float16"), FakeCudaArray((4096, 64), "float16")
    with pytest.raises(ValueError, match="split_k=2 with autotune=True"):
        tilec.matmul(a, b, out=FakeCudaArray((16, 64), "float16"), autotune=True, split_k=2)


@pytest.mark.parametrize("n", [65, 64])
def test_split_launch_arguments_keep_their_promises(n):
    """The workspace's rows are padded to whole 16-byte vectors (ragged N = 65 too), so both launches'
    flat arguments keep every ``tile.aligned_rows`` promise the kernels were compiled with."""
    from tilec.runtime.gl_views import check_aligned_rows

    m, k = 33, 4096
    at = [0x7C0000000000 + (i << 32) for i in range(4)]
    a = FakeCudaArray((m, k), "bfloat16", strides=(1, m), address=at[0])
    b = FakeCudaArray((k, n), "bfloat16", strides=(1, k), address=at[1])
    c = FakeCudaArray((m, n), "float32", address=at[2])
    plan = mm.plan_matmul(a, b, out=c, out_dtype="float32", split_k=4, arch="sm_80", sm_count=132)
    ws = FakeCudaArray((4, m, -(-n // 4) * 4), "float32", address=at[3])
    launches = mm._split_launches(plan, c, ws)
    assert [grid for _, _, grid, _ in launches] == [(plan.config.grid(m, n), 4, 1), (plan.reduce_spec(c).grid(m, n), 1, 1)]
    for kernel, flat, _, names in launches:
        assert [g.name for g in kernel.gl_params] == names
        check_aligned_rows(kernel.gl_params, flat, kernel.name)


def test_batched_generic_kernel_in_the_lane_interpreter():
    """A batched matmul without aligned rows (the generic kernel: run-time alignment tests per batch
    matrix, whose address is known only after its tile.subview), lane by lane, on overlapping strided
    views of one A (K's slices) and a B given N x K."""
    from tilec.interp import run

    m, n, k, split = 20, 24, 96, 3
    rng = np.random.default_rng(9)
    a = rng.standard_normal((m, k)).astype(np.float16)
    w = rng.standard_normal((n, k)).astype(np.float16)
    module = mm.build_module(mm.MatmulSpec("float16", "float32", transpose_b=True, batched=True))
    config = CONFIGS[("mma", "small")]
    PassPipeline(config.passes_to("tile-distribute")).apply(make_context(), module)
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    part = k // split
    ws = np.full((split, m, n), np.nan, np.float32)
    args = expand(gl_params(fn), GlView(a, (split, m, part), (part, k, 1)), GlView(w, (split, n, part), (part, k, 1)),
                  ws, signature_length=len(fn.args))
    run(module, fn.sym_name.data, *args, grid=(config.tiles(m, n), split, 1))
    for s in range(split):
        sl = slice(s * part, (s + 1) * part)
        assert _rel_error(ws[s], a[:, sl].astype(np.float64) @ w[:, sl].astype(np.float64).T) < 1e-5


def test_a_numpy_bf16_result_needs_ml_dtypes(monkeypatch):
    """numpy's bf16 type is ml_dtypes'; without it a bf16 result cannot be a numpy array."""
    import tilec.kernels.gemm_plan as plan_module

    monkeypatch.setattr(plan_module._dtypes, "numpy_dtype", lambda name: None)
    with pytest.raises(TypeError, match=r"numpy has no bfloat16, so a bf16 result cannot be returned as a numpy "
                                        r"array; install ml_dtypes"):
        tilec.matmul(f16(4, 5), f16(5, 3), out_dtype="bfloat16")
