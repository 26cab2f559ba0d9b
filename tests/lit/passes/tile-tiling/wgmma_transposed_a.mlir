// RUN: not tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true}' 2>&1 | filecheck %s

// tile-tiling{wgmma=true} with A stored K x M: refused, naming what is supported.

func.func @tn(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c transpose_a : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to f16
    tile.yield %0 : f16
  }
  func.return
}

// CHECK: error: 'tile.matmul' op tile-tiling: wgmma=true: A must be M x K in memory (row-major); a transposed A is not supported yet (B may be either: K x N, or N x K with transpose_b) (in @tn)
// CHECK-NOT: Traceback
