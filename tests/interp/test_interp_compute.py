"""Register-tile compute: reductions, softmax-style row normalisation, elementwise maps, conversions."""

from __future__ import annotations

import numpy as np
import pytest
from interp_util import assert_close, randn

from tilec.interp import parse_module, round_bf16, run, run_text

RT = "!tile.rt<64x64xf32>"


def test_row_and_column_reductions(rng):
    text = f"""
    func.func @red(%x: {RT}) -> (!tile.rv<64xf32, row>, !tile.rv<64xf32, row>, !tile.rv<64xf32, col>, !tile.rv<64xf32, col>) {{
      %rm = tile.row_max %x : {RT} -> !tile.rv<64xf32, row>
      %rs = tile.row_sum %x : {RT} -> !tile.rv<64xf32, row>
      %cm = tile.col_max %x : {RT} -> !tile.rv<64xf32, col>
      %cs = tile.col_sum %x : {RT} -> !tile.rv<64xf32, col>
      func.return %rm, %rs, %cm, %cs : !tile.rv<64xf32, row>, !tile.rv<64xf32, row>, !tile.rv<64xf32, col>, !tile.rv<64xf32, col>
    }}
    """
    x = randn(rng, (64, 64), np.float32)
    rm, rs, cm, cs = run_text(text, "red", x)
    x64 = x.astype(np.float64)
    assert np.array_equal(rm, x.max(axis=1)) and np.array_equal(cm, x.max(axis=0)), f"seed {rng.seed}"
    assert_close(rs, x64.sum(axis=1), 1e-5, rng, "row_sum")
    assert_close(cs, x64.sum(axis=0), 1e-5, rng, "col_sum")
    assert rm.dtype == rs.dtype == np.float32


SOFTMAX = """
func.func @softmax(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f16, [?, ?]>, %m: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [64, 1, 1]>} {
  %bx = tile.block_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %row = arith.muli %bx, %c32 : index
  %t = tile.load %x[%row, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x64xf32>
  %mx = tile.row_max %t : !tile.rt<32x64xf32> -> !tile.rv<32xf32, row>
  %mb = tile.broadcast %mx : !tile.rv<32xf32, row> -> !tile.rt<32x64xf32>
  tile.store %mb, %m[%row, %c0] : !tile.rt<32x64xf32> -> !tile.gl<f32, [?, ?]>
  %d = tile.sub %t, %mb : !tile.rt<32x64xf32>
  %e = tile.exp %d : !tile.rt<32x64xf32>
  %s = tile.row_sum %e : !tile.rt<32x64xf32> -> !tile.rv<32xf32, row>
  %sb = tile.broadcast %s : !tile.rv<32xf32, row> -> !tile.rt<32x64xf32>
  %p = tile.div %e, %sb : !tile.rt<32x64xf32>
  %h = tile.convert %p : !tile.rt<32x64xf32> -> !tile.rt<32x64xf16>
  tile.store %h, %y[%row, %c0] : !tile.rt<32x64xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
"""


def test_row_max_and_softmax_kernel(rng):
    x = 4 * randn(rng, (128, 64), np.float32)
    y = np.full((128, 64), np.nan, np.float16)
    m = np.full((128, 64), np.nan, np.float32)
    run(parse_module(SOFTMAX), "softmax", x, y, m, grid=(4, 1, 1))
    assert np.array_equal(m, np.repeat(x.max(axis=1, keepdims=True), 64, axis=1)), f"seed {rng.seed}"
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    assert_close(y, e / e.sum(axis=1, keepdims=True), 1e-2, rng)
    assert np.allclose(y.astype(np.float64).sum(axis=1), 1, atol=2e-2)


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum}
UNARY = {"exp": np.exp, "exp2": np.exp2, "relu": lambda v: np.maximum(v, 0)}


@pytest.mark.parametrize("elem, dtype", [("f32", np.float32), ("f16", np.float16), ("f64", np.float64)])
def test_elementwise_ops_round_to_the_element_type(rng, elem, dtype):
    rt = f"!tile.rt<16x32x{elem}>"
    body = "\n".join(f"  %{name} = tile.{name} %x, %y : {rt}" for name in BINARY)
    body += "\n" + "\n".join(f"  %{name} = tile.{name} %x : {rt}" for name in UNARY)
    names = [*BINARY, *UNARY]
    text = f"""
    func.func @f(%x: {rt}, %y: {rt}) -> ({", ".join([rt] * len(names))}) {{
    {body}
      func.return {", ".join("%" + n for n in names)} : {", ".join([rt] * len(names))}
    }}
    """
    x, y = randn(rng, (16, 32), dtype), randn(rng, (16, 32), dtype)
    results = run_text(text, "f", x, y)
    for name, got in zip(names, results):
        fn = BINARY.get(name)
        want = fn(x.astype(np.float64), y.astype(np.float64)) if fn else UNARY[name](x.astype(np.float64))
        want = want.astype(dtype)  # one rounding, to nearest even
        assert got.dtype == dtype, name
        assert np.array_equal(got, want), f"tile.{name} on {elem} (seed {rng.seed})"


def test_rv_elementwise_and_col_broadcast(rng):
    text = """
    func.func @f(%a: !tile.rv<8xf32, col>, %b: !tile.rv<8xf32, col>) -> !tile.rt<4x8xf32> {
      %s = tile.mul %a, %b : !tile.rv<8xf32, col>
      %t = tile.broadcast %s : !tile.rv<8xf32, col> -> !tile.rt<4x8xf32>
      func.return %t : !tile.rt<4x8xf32>
    }
    """
    a, b = randn(rng, 8, np.float32), randn(rng, 8, np.float32)
    (t,) = run_text(text, "f", a, b)
    assert np.array_equal(t, np.broadcast_to(a * b, (4, 8))), f"seed {rng.seed}"


def test_convert_rounds_to_f16_and_bf16(rng):
    text = """
    func.func @f(%x: !tile.rt<16x16xf32>) -> (!tile.rt<16x16xf16>, !tile.rt<16x16xbf16>, !tile.rt<16x16xf32>) {
      %h = tile.convert %x : !tile.rt<16x16xf32> -> !tile.rt<16x16xf16>
      %b = tile.convert %x : !tile.rt<16x16xf32> -> !tile.rt<16x16xbf16>
      %back = tile.convert %b : !tile.rt<16x16xbf16> -> !tile.rt<16x16xf32>
      func.return %h, %b, %back : !tile.rt<16x16xf16>, !tile.rt<16x16xbf16>, !tile.rt<16x16xf32>
    }
    """
    x = randn(rng, (16, 16), np.float32)
    h, b, back = run_text(text, "f", x)
    assert h.dtype == np.float16 and np.array_equal(h, x.astype(np.float16))
    assert b.dtype == np.float32 and np.array_equal(b, round_bf16(x))
    assert not (b.view(np.uint32) & 0xFFFF).any(), "bf16 values have 16 zero low bits"
    assert np.array_equal(back, b)


def test_bf16_arithmetic_is_rounded(rng):
    text = """
    func.func @f(%x: !tile.rt<8x8xbf16>, %y: !tile.rt<8x8xbf16>, %s: bf16) -> !tile.rt<8x8xbf16> {
      %f = tile.fill %s : bf16 -> !tile.rt<8x8xbf16>
      %p = tile.mul %x, %y : !tile.rt<8x8xbf16>
      %q = tile.add %p, %f : !tile.rt<8x8xbf16>
      func.return %q : !tile.rt<8x8xbf16>
    }
    """
    x, y = round_bf16(randn(rng, (8, 8), np.float32)), round_bf16(randn(rng, (8, 8), np.float32))
    s = float(rng.standard_normal())
    (q,) = run_text(text, "f", x, y, s)
    want = round_bf16(round_bf16(x * y) + round_bf16(np.float32(s)))
    assert np.array_equal(q, want), f"seed {rng.seed}"


def test_scalar_arith_uses_the_element_precision(rng):
    """A scalar f16 computation rounds at every step, like the hardware would."""
    text = """
    func.func @f(%a: f16, %b: f16) -> (f16, f32) {
      %s = arith.addf %a, %b : f16
      %w = arith.extf %s : f16 to f32
      %d = arith.divf %w, %w : f32
      %r = arith.addf %w, %d : f32
      func.return %s, %r : f16, f32
    }
    """
    a, b = (float(v) for v in rng.standard_normal(2))
    s, r = run_text(text, "f", a, b)
    want = np.float16(np.float16(a) + np.float16(b))
    assert isinstance(s, np.float16) and s == want
    assert isinstance(r, np.float32) and r == np.float32(want) + np.float32(1)


def test_zeros_fill_and_scf_loop(rng):
    text = """
    func.func @f(%v: f32, %n: index) -> !tile.rt<4x4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %z = tile.zeros : !tile.rt<4x4xf32>
      %f = tile.fill %v : f32 -> !tile.rt<4x4xf32>
      %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (!tile.rt<4x4xf32>) {
        %s = tile.add %acc, %f : !tile.rt<4x4xf32>
        scf.yield %s : !tile.rt<4x4xf32>
      }
      func.return %r : !tile.rt<4x4xf32>
    }
    """
    v = float(rng.uniform(0.5, 2))
    (r,) = run_text(text, "f", v, 5)
    want = np.float32(0)
    for _ in range(5):
        want = np.float32(want + np.float32(v))
    assert (r == want).all(), f"seed {rng.seed}"
