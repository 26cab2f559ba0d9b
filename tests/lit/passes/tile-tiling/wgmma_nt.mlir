// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true},tile-swizzle,tile-pipeline{stages=3 bulk=true}' | filecheck %s --check-prefix=PIPE

// tile-tiling{wgmma=true} with B stored N x K (x @ w.T, a linear layer's weights):
// B's shared tile is BN x BK, copied row by row along K, and the warpgroups read
// it K-major (tile.wgmma ... transpose_b). With bulk copies its stages are 256
// rows of one 64-column box (128-byte rows, 128-byte swizzle). (A stored K x M is
// refused: wgmma_transposed_a.mlir.)

func.func @nt(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) {
  tile.matmul %a, %b -> %c transpose_b : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to f16
    tile.yield %0 : f16
  }
  func.return
}

// CHECK:       %N = tile.dim %b, 0
// CHECK:       %sb = tile.alloc : !tile.st<256x64xf16, (256,64):(64,1)>
// CHECK:         tile.copy %b[%col0, %k] -> %sb
// CHECK:         %d = tile.wgmma %sa[%wg_row], %sb[%c0], %acc_i transpose_b : !tile.st<128x64xf16, (128,64):(64,1)>, !tile.st<256x64xf16, (256,64):(64,1)>, !tile.rt<16x256xf32> -> !tile.rt<16x256xf32>

// PIPE:        %sb = tile.alloc : !tile.st<3x256x64xf16, Sw<3,3,3> o 0 o (3,256,64):(16384,64,1)>
// PIPE:        tile.wgmma %sa_r[%wg_row], %sb_r[%c0], %acc_i transpose_b async
// PIPE:        tile.bulk_copy %b[%col0, %k_next] -> %sb_w,
