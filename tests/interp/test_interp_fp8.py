"""FP8 (f8E4M3FN, f8E5M2) in the interpreters: the codecs, the GEMM's meaning after each pass at the tile
level, and the whole sm_90a kernel (bulk copies of bytes, K = 32 wgmmas reading one-byte elements through
their descriptors, per-tensor scales read in the kernel, TMA-store epilogue) lane by lane."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from interp_util import rel_error
from xdsl.dialects import func

from tilec.api import make_context
from tilec.dialects import frag
from tilec.dialects.abi import gl_params
from tilec.dialects.tile import ops as t
from tilec.interp import run
from tilec.interp.dtypes import f8_bits, f8_values, round_f8
from tilec.kernels.gemm_config import FP8_WGMMA_LADDER
from tilec.kernels.gemm_ir import MatmulSpec, build_module
from tilec.passes.registry import build_pipeline
from tilec.runtime.gl_views import expand

FORMATS = ("f8E4M3FN", "f8E5M2")
TORCH_NAMES = {"f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2"}


@pytest.mark.parametrize("name", FORMATS)
def test_every_pattern_round_trips_and_the_extremes_are_right(name):
    codes = np.arange(256, dtype=np.uint8)
    values = f8_values(codes, name)
    back = f8_bits(values, name)
    assert np.all((back == codes) | np.isnan(values))
    finite = values[np.isfinite(values)]
    assert finite.max() == {"f8E4M3FN": 448.0, "f8E5M2": 57344.0}[name]
    assert values[1] == {"f8E4M3FN": 2.0**-9, "f8E5M2": 2.0**-16}[name]  # the smallest subnormal
    assert np.isnan(values).sum() == {"f8E4M3FN": 2, "f8E5M2": 6}[name]
    assert np.isinf(values).sum() == {"f8E4M3FN": 0, "f8E5M2": 2}[name]


def test_rounding_is_to_nearest_even_and_overflow_follows_the_format():
    # 1.0625 is halfway between 1.0 (even pattern 0x38) and 1.125 (0x39); 1.1875 between 0x39 and 0x3A
    assert list(f8_bits([1.0625, 1.1875, -1.0625], "f8E4M3FN")) == [0x38, 0x3A, 0xB8]
    assert list(round_f8([3 * 2.0**-10, 2.0**-11], "f8E4M3FN")) == [2.0**-8, 0.0]  # subnormal ties, underflow
    # the encoding alone (f8_bits): past the largest value by more than half a step NaN (E4M3FN has no
    # infinity), infinity for E5M2; the tie halfway goes to the even pattern: E4M3FN's 448 (0x7E), E5M2's
    # infinity (57344 is 0x7B, odd)
    assert f8_bits([464.0], "f8E4M3FN")[0] == 0x7E and f8_bits([464.5], "f8E4M3FN")[0] == 0x7F
    assert f8_bits([-61440.0], "f8E5M2")[0] == 0xFC and f8_bits([61439.0], "f8E5M2")[0] == 0x7B
    # a conversion (round_f8, as PTX's cvt.rn.satfinite) saturates: the largest value, infinities too; NaN stays
    assert list(round_f8([464.5, 1e9, np.inf, -np.inf], "f8E4M3FN")) == [448.0, 448.0, 448.0, -448.0]
    assert round_f8([-61440.0], "f8E5M2")[0] == -57344.0 and np.isnan(round_f8([np.nan], "f8E5M2")[0])


def _module(dtype: str, config, last: str):
    module = build_module(MatmulSpec(dtype, "float32", transpose_b=True, bias_dtype="float32", activation="relu",
                                     align=16, scale_a=True, scale_b=True))
    if last:
        build_pipeline(config.pipeline_to(last)).apply(make_context(), module)
    return module


def _inputs(rng, name: str, m: int, n: int, k: int):
    a = round_f8(rng.standard_normal((m, k)) * 3, name)
    w = round_f8(rng.standard_normal((n, k)), name)
    bias = rng.standard_normal(n).astype(np.float32)
    scales = np.array([0.37], np.float32), np.array([1.9], np.float32)
    ref = np.maximum(a.astype(np.float64) @ w.astype(np.float64).T * (0.37 * 1.9) + bias, 0.0)
    return a, w, bias, scales, ref


@pytest.mark.parametrize("last", ["", "tile-tiling", "tile-pipeline"])
def test_fp8_gemm_meaning_at_the_tile_level(rng, last):
    """The scaled FP8 matmul as written, after tiling (the scales one ``tile.load_scalar`` each, used by
    the epilogue's ``tile.map``) and after the bulk pipeline, on a ragged problem: the same numbers."""
    config = dataclasses.replace(FP8_WGMMA_LADDER[1], producer=True, persistent=True)
    module = _module("float8_e4m3fn", config, last)
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    if last:
        assert len([op for op in fn.walk() if isinstance(op, t.LoadScalarOp)]) == 2
    m, n, k = 200, 136, 320
    a, w, bias, (sa, sb), ref = _inputs(rng, "f8E4M3FN", m, n, k)
    c = np.full((m, n), np.nan, np.float32)
    run(module, fn.sym_name.data, a, w, c, bias, sa, sb, **({"grid": (3, 1, 1)} if last else {}))
    assert rel_error(c, ref) < 1e-5


@pytest.mark.parametrize("name", FORMATS)
def test_fp8_persistent_gemm_lane_by_lane(rng, name):
    """The persistent kernel with a producer and the TMA-store epilogue, three blocks over 2x3 tiles."""
    config = dataclasses.replace(FP8_WGMMA_LADDER[1], producer=True, persistent=True, bulk_store=True)
    module = _module(TORCH_NAMES[name], config, "tile-distribute")
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    wgmmas = [op for op in fn.walk() if isinstance(op, frag.WgmmaOp)]
    assert wgmmas and {op.dtype.data for op in wgmmas} == {name[2:].lower().replace("fn", "")}
    m, n, k = 200, 264, 288  # K = 288: two K steps of 128 and a ragged third
    a, w, bias, (sa, sb), ref = _inputs(rng, name, m, n, k)
    c = np.full((m, n), np.nan, np.float32)
    run(module, fn.sym_name.data, *expand(gl_params(fn), a, w, c, bias, sa, sb, signature_length=len(fn.args)),
        grid=(3, 1, 1))
    assert not np.isnan(c).any()
    assert rel_error(c, ref) < 1e-5


def test_fp8_gemm_of_unaligned_rows_lane_by_lane(rng):
    """Without ``tile.aligned_rows`` the copies into shared memory take the element path: an 8-bit float
    is moved as a byte (there are no f8 registers). Ragged M, N and K on four blocks (2x2 tiles of 64x64)."""
    config = dataclasses.replace(FP8_WGMMA_LADDER[1], block=(64, 64, 64), stages=2, bulk_store=False)
    module = build_module(MatmulSpec("float8_e4m3fn", "float32", transpose_b=True, bias_dtype="float32",
                                     activation="relu", align=0, scale_a=True, scale_b=True))
    build_pipeline(config.pipeline_to("tile-distribute")).apply(make_context(), module)
    module.verify()  # frag.load has no 8-bit float registers: the bytes are i8
    fn = next(op for op in module.ops if isinstance(op, func.FuncOp))
    m, n, k = 100, 72, 104
    a, w, bias, (sa, sb), ref = _inputs(rng, "f8E4M3FN", m, n, k)
    c = np.full((m, n), np.nan, np.float32)
    run(module, fn.sym_name.data, *expand(gl_params(fn), a, w, c, bias, sa, sb, signature_length=len(fn.args)),
        grid=(4, 1, 1))
    assert not np.isnan(c).any()
    assert rel_error(c, ref) < 1e-5
