"""Matmul with an epilogue: whole-problem ``tile.matmul`` and a block kernel, against float64 numpy."""

from __future__ import annotations

import numpy as np
import pytest
from interp_util import assert_close, randn
from xdsl.interpreter import OpCounter

from tilec.interp import ExecContext, make_interpreter, parse_module, run
from tilec.interp.memory import GlobalView

GL16 = "!tile.gl<f16, [?, ?]>"


def matmul_text(transpose_a: bool = False, transpose_b: bool = False, out: str = "f16") -> str:
    flags = ("transpose_a " if transpose_a else "") + ("transpose_b" if transpose_b else "")
    gl_out = f"!tile.gl<{out}, [?, ?]>"
    cast = "%h = arith.truncf %r : f32 to f16\n    tile.yield %h : f16" if out == "f16" else "tile.yield %r : f32"
    return f"""
func.func @mm(%a: {GL16}, %b: {GL16}, %c: {gl_out}, %bias: !tile.gl<f32, [?]>) {{
  tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [?]>) {flags} : {GL16}, {GL16} -> {gl_out} {{
  ^bb0(%acc: f32, %bv: f32):
    %s = arith.addf %acc, %bv : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    {cast}
  }}
  func.return
}}
"""


def reference(a, b, bias, transpose_a=False, transpose_b=False):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    a64 = a64.T if transpose_a else a64
    b64 = b64.T if transpose_b else b64
    return np.maximum(a64 @ b64 + bias.astype(np.float64), 0)


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (False, True), (True, False), (True, True)])
def test_whole_problem_matmul_bias_relu_f16(rng, transpose_a, transpose_b):
    m = n = k = 64
    a = randn(rng, (k, m) if transpose_a else (m, k), np.float16)
    b = randn(rng, (n, k) if transpose_b else (k, n), np.float16)
    bias = randn(rng, n, np.float32)
    c = np.full((m, n), np.nan, np.float16)
    run(parse_module(matmul_text(transpose_a, transpose_b)), "mm", a, b, c, bias)
    assert_close(c, reference(a, b, bias, transpose_a, transpose_b), 1e-2, rng)
    assert (c >= 0).all() and (c == 0).any(), "relu must clamp"


def test_whole_problem_matmul_f32_out_is_f32_accurate(rng):
    a, b = randn(rng, (48, 80), np.float16), randn(rng, (80, 40), np.float16)
    bias = randn(rng, 40, np.float32)
    c = np.zeros((48, 40), np.float32)
    run(parse_module(matmul_text(out="f32")), "mm", a, b, c, bias)
    assert_close(c, reference(a, b, bias), 1e-5, rng)


def test_epilogue_runs_vectorised_once(rng):
    """The epilogue's ops run once on whole arrays, not once per element."""
    module = parse_module(matmul_text())
    a, b = randn(rng, (64, 64), np.float16), randn(rng, (64, 64), np.float16)
    bias, c = randn(rng, 64, np.float32), np.zeros((64, 64), np.float16)
    counter = OpCounter()
    interp = make_interpreter(module, ExecContext())
    interp.listeners = (counter,)
    fn = module.body.block.first_op
    types = fn.function_type.inputs.data
    interp.call_op(fn, tuple(GlobalView.bind(x, t, "arg") for x, t in zip((a, b, c, bias), types)))
    assert counter.ops["arith.addf"] == 1 and counter.ops["arith.truncf"] == 1
    assert_close(c, reference(a, b, bias), 1e-2, rng)


def test_epilogue_with_a_matrix_input_and_select(rng):
    """A rank-2 epilogue input is indexed by (row, column); cmpf/select work on arrays."""
    text = f"""
    func.func @mm(%a: !tile.gl<f32, [?, ?]>, %b: !tile.gl<f32, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %res: !tile.gl<f16, [?, ?]>) {{
      tile.matmul %a, %b -> %c epilogue(%res : !tile.gl<f16, [?, ?]>) : !tile.gl<f32, [?, ?]>, !tile.gl<f32, [?, ?]> -> !tile.gl<f32, [?, ?]> {{
      ^bb0(%acc: f32, %r: f16):
        %r32 = arith.extf %r : f16 to f32
        %s = arith.addf %acc, %r32 : f32
        %z = arith.constant 0.5 : f32
        %p = arith.cmpf ogt, %s, %z : f32
        %e = math.exp %s : f32
        %y = arith.select %p, %s, %e : f32
        tile.yield %y : f32
      }}
      func.return
    }}
    """
    a, b = randn(rng, (32, 16), np.float32), randn(rng, (16, 24), np.float32)
    res = randn(rng, (32, 24), np.float16)
    c = np.zeros((32, 24), np.float32)
    run(parse_module(text), "mm", a, b, c, res)
    s = a.astype(np.float64) @ b + res
    assert_close(c, np.where(s > 0.5, s, np.exp(s)), 1e-5, rng)


# -- the same problem as a block kernel ----------------------------------------------------

BLOCK = """
func.func @mm_block(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [1, ?]>, %K: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 4096>} {
  %bx = tile.block_id x
  %by = tile.block_id y
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %row = arith.muli %by, %c32 : index
  %col = arith.muli %bx, %c32 : index
  %sa = tile.alloc : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
  %sb = tile.alloc : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
  %zero = tile.zeros : !tile.rt<32x32xf32>
  %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<32x32xf32>) {
    tile.copy %a[%row, %k] -> %sa : !tile.gl<f16, [?, ?]> -> !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
    tile.copy %b[%k, %col] -> %sb : !tile.gl<f16, [?, ?]> -> !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
    tile.barrier
    %ra = tile.load %sa : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)> -> !tile.rt<32x32xf16>
    %rb = tile.load %sb : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)> -> !tile.rt<32x32xf16>
    %d = tile.mma %ra, %rb, %acc_i : !tile.rt<32x32xf16>, !tile.rt<32x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
    tile.barrier
    scf.yield %d : !tile.rt<32x32xf32>
  }
  %bt = tile.load %bias[%c0, %col] : !tile.gl<f32, [1, ?]> -> !tile.rt<1x32xf32>
  %bv = tile.col_sum %bt : !tile.rt<1x32xf32> -> !tile.rv<32xf32, col>
  %bb = tile.broadcast %bv : !tile.rv<32xf32, col> -> !tile.rt<32x32xf32>
  %s = tile.add %acc, %bb : !tile.rt<32x32xf32>
  %r = tile.relu %s : !tile.rt<32x32xf32>
  %h = tile.convert %r : !tile.rt<32x32xf32> -> !tile.rt<32x32xf16>
  tile.store %h, %c[%row, %col] : !tile.rt<32x32xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
"""


def test_block_kernel_matches_reference_and_whole_problem(rng):
    m = n = k = 64
    a, b = randn(rng, (m, k), np.float16), randn(rng, (k, n), np.float16)
    bias = randn(rng, (1, n), np.float32)
    c_block = np.full((m, n), np.nan, np.float16)
    run(parse_module(BLOCK), "mm_block", a, b, c_block, bias, k, grid=(2, 2, 1))
    ref = reference(a, b, bias[0])
    assert_close(c_block, ref, 1e-2, rng, "block kernel")

    c_whole = np.full((m, n), np.nan, np.float16)
    run(parse_module(matmul_text()), "mm", a, b, c_whole, bias[0].copy())
    assert_close(c_whole, ref, 1e-2, rng, "tile.matmul")
    # Both accumulate in f32; they differ at most by f16 rounding of the output.
    assert_close(c_block, c_whole.astype(np.float64), 2e-3, rng, "block vs whole")


def test_block_kernel_ragged(rng):
    m, n, k = 50, 40, 64  # M and N are not multiples of the 32 x 32 block tile
    a, b = randn(rng, (m, k), np.float16), randn(rng, (k, n), np.float16)
    bias = randn(rng, (1, n), np.float32)
    c = np.full((m, n), np.nan, np.float16)
    run(parse_module(BLOCK), "mm_block", a, b, c, bias, k, grid=(2, 2, 1))
    assert_close(c, reference(a, b, bias[0]), 1e-2, rng)


def test_mma_transposes(rng):
    text = """
    func.func @f(%a: !tile.rt<16x32xbf16>, %b: !tile.rt<8x16xbf16>, %c: !tile.rt<32x8xf32>) -> !tile.rt<32x8xf32> {
      %d = tile.mma %a, %b, %c transpose_a transpose_b : !tile.rt<16x32xbf16>, !tile.rt<8x16xbf16>, !tile.rt<32x8xf32> -> !tile.rt<32x8xf32>
      func.return %d : !tile.rt<32x8xf32>
    }
    """
    from tilec.interp import round_bf16

    a = round_bf16(randn(rng, (16, 32), np.float32))
    b = round_bf16(randn(rng, (8, 16), np.float32))
    c = randn(rng, (32, 8), np.float32)
    (d,) = run(parse_module(text), "f", a, b, c)
    assert d.dtype == np.float32
    assert_close(d, a.T.astype(np.float64) @ b.T + c, 1e-5, rng)


def test_whole_problem_matmul_bf16(rng):
    """bf16 views are float32 arrays; values are read as bf16 and the output is rounded to bf16."""
    from tilec.interp import round_bf16

    gl = "!tile.gl<bf16, [?, ?]>"
    text = f"""
    func.func @mm(%a: {gl}, %b: {gl}, %c: {gl}) {{
      tile.matmul %a, %b -> %c : {gl}, {gl} -> {gl} {{
      ^bb0(%acc: f32):
        %h = arith.truncf %acc : f32 to bf16
        tile.yield %h : bf16
      }}
      func.return
    }}
    """
    a, b = randn(rng, (32, 48), np.float32), randn(rng, (48, 16), np.float32)
    c = np.full((32, 16), np.nan, np.float32)
    run(parse_module(text), "mm", a, b, c)
    assert not (c.view(np.uint32) & 0xFFFF).any(), "the output holds bf16 values"
    ref = round_bf16(a).astype(np.float64) @ round_bf16(b).astype(np.float64)
    assert_close(c, ref, 1e-2, rng)
