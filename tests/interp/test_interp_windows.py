"""tile.dim, shared windows, rank-1 loads into column vectors and tile.map, run on numpy."""

import numpy as np

from tilec.interp import run_text

KERNEL = """
func.func @k(%a: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>, %out: !tile.gl<f16, [?, ?]>, %dims: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m = tile.dim %a, 0 : !tile.gl<f16, [?, ?]>
  %k = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  tile.copy %a[%c0, %c0] -> %s : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %r = tile.load %s[%c32, %c0] : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<32x64xf16>
  %v = tile.load %bias[%c32] : !tile.gl<f32, [?]> -> !tile.rv<64xf32, col>
  %vb = tile.broadcast %v : !tile.rv<64xf32, col> -> !tile.rt<32x64xf32>
  %o = tile.map %r, %vb : !tile.rt<32x64xf16>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf16> {
  ^bb0(%x: f16, %y: f32):
    %xe = arith.extf %x : f16 to f32
    %z = arith.addf %xe, %y : f32
    %h = arith.truncf %z : f32 to f16
    tile.yield %h : f16
  }
  tile.store %o, %s[%c0, %c0] : !tile.rt<32x64xf16> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %w = tile.load %s : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<64x64xf16>
  tile.store %w, %out[%c0, %c0] : !tile.rt<64x64xf16> -> !tile.gl<f16, [?, ?]>
  %mi = arith.index_cast %m : index to i64
  %ki = arith.index_cast %k : index to i64
  %mf = arith.sitofp %mi : i64 to f32
  %kf = arith.sitofp %ki : i64 to f32
  %t0 = tile.fill %mf : f32 -> !tile.rt<1x1xf32>
  %t1 = tile.fill %kf : f32 -> !tile.rt<1x1xf32>
  tile.store %t0, %dims[%c0, %c0] : !tile.rt<1x1xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %t1, %dims[%c0, %c32] : !tile.rt<1x1xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
"""


def test_windows_dim_vector_load_and_map():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((70, 50)).astype(np.float16)  # K = 50 < 64: the copy zero-fills
    bias = rng.standard_normal(100).astype(np.float32)
    out = np.full((64, 64), np.nan, np.float16)
    dims = np.full((1, 33), np.nan, np.float32)
    run_text(KERNEL, "k", a, bias, out, dims)
    tile = np.zeros((64, 64), np.float32)
    tile[:, :50] = a[:64]
    expect = tile.copy()
    expect[:32] = (tile[32:64] + bias[32:96][None, :]).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), expect, rtol=1e-3, atol=1e-3)
    assert dims[0, 0] == 70 and dims[0, 32] == 50
