// RUN: tile-opt %s -p tile-stage | filecheck %s
// RUN: tile-opt %s -p 'tile-stage{wgmma=true}' | filecheck %s --check-prefix=WGMMA

// The FP8 run of Triton's matmul tutorial: B passed K-major (b.T, stride_bk = 1), so B's K x N tile of
// offsets (offs_k[:, None] + offs_n[None, :] * K) is consecutive down its columns. tile-stage gathers it
// transposed (orient_gathers): the offsets and the K mask are built again N x K (an iota along the other
// dimension, the vectors in the other orientation: no data moves), the mma reads the gathered tile with
// transpose_b, and the staged copy is a K-major N x K tile whose rows are consecutive in memory. With
// wgmma=true, both operands staged K-major, the dot is the FP8 warpgroup MMA.
func.func @fp8_pointers(%a: !tile.gl<f8E4M3FN, [?, ?]>, %b: !tile.gl<f8E4M3FN, [?, ?]>, %c: !tile.gl<f32, [?, ?]>,
                        %kk: i32, %n: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %ks = tile.iota %c0 dim 0 : !tile.rv<64xi32, row>
  %ns = tile.iota %c0 dim 0 : !tile.rv<64xi32, col>
  %nk = tile.map %ns : !tile.rv<64xi32, col> -> !tile.rv<64xi32, col> {
  ^bb0(%j: i32):
    %o = arith.muli %j, %kk : i32
    tile.yield %o : i32
  }
  %kt = tile.broadcast %ks : !tile.rv<64xi32, row> -> !tile.rt<64x64xi32>
  %nt = tile.broadcast %nk : !tile.rv<64xi32, col> -> !tile.rt<64x64xi32>
  %start = tile.map %kt, %nt : !tile.rt<64x64xi32>, !tile.rt<64x64xi32> -> !tile.rt<64x64xi32> {
  ^bb0(%x: i32, %y: i32):
    %s = arith.addi %x, %y : i32
    tile.yield %s : i32
  }
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %kb = arith.muli %k, %c64 : index
    %kb32 = arith.index_cast %kb : index to i32
    %offs = tile.map %start : !tile.rt<64x64xi32> -> !tile.rt<64x64xi32> {
    ^bb0(%s: i32):
      %o = arith.addi %s, %kb32 : i32
      tile.yield %o : i32
    }
    %in = tile.map %ks : !tile.rv<64xi32, row> -> !tile.rv<64xi1, row> {
    ^bb0(%i: i32):
      %lim = arith.subi %kk, %kb32 : i32
      %lt = arith.cmpi slt, %i, %lim : i32
      tile.yield %lt : i1
    }
    %m = tile.broadcast %in : !tile.rv<64xi1, row> -> !tile.rt<64x64xi1>
    %ta = tile.load %a[%c0, %kb] : !tile.gl<f8E4M3FN, [?, ?]> -> !tile.rt<64x64xf8E4M3FN>
    %tb = tile.gather %b[%offs] linear mask %m : !tile.gl<f8E4M3FN, [?, ?]>[!tile.rt<64x64xi32>], !tile.rt<64x64xi1> -> !tile.rt<64x64xf8E4M3FN>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x64xf8E4M3FN>, !tile.rt<64x64xf8E4M3FN>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @fp8_pointers
// CHECK: %ks_t = tile.iota %c0 dim 0 : !tile.rv<64xi32, col>
// CHECK: %ns_t = tile.iota %c0 dim 0 : !tile.rv<64xi32, row>
// CHECK: %kt_t = tile.broadcast %ks_t : !tile.rv<64xi32, col> -> !tile.rt<64x64xi32>
// CHECK: %nt_t = tile.broadcast %nk_t : !tile.rv<64xi32, row> -> !tile.rt<64x64xi32>
// CHECK: %start_t = tile.map %kt_t, %nt_t
// CHECK: scf.for %k
// CHECK: %offs_t = tile.map %start_t
// CHECK: %m_t = tile.broadcast %in_t : !tile.rv<64xi1, col> -> !tile.rt<64x64xi1>
// CHECK: tile.copy %b offsets %offs_t -> %[[SB:[a-z_]+]] mask %m_t prefix :
// CHECK: %tb = tile.load %[[SB]]
// CHECK: %d = tile.mma %ta, %tb, %x{{.*}} transpose_b :
// CHECK-NOT: tile.transpose
// CHECK-NOT: tile.gather

// WGMMA: scf.for %k
// WGMMA: tile.copy %b offsets %offs_t -> %[[SB:[a-z_]+]] mask %m_t prefix :
// WGMMA: tile.wgmma %{{.*}}[%{{.*}}], %[[SB]][%{{.*}}], %x{{.*}} transpose_b groups array<i64: 1, 1> : !tile.st<64x64xf8E4M3FN
