// RUN: tile-opt %s -p tile-stage | filecheck %s

// Triton's matmul tutorial on pointers: A's tile of pointers is its start tile plus the K loop's
// offset (tl.load(a_ptrs, mask=offs_k < K - k * BK, other=0.0), a linear tile.gather with a mask).
// The gather is an mma operand whose offsets and mask the body's start can compute: staged as a
// gathering copy (tile.copy with offsets, taking the gather's mask; each row of it falls: prefix)
// into a shared tile, read back where the gather was. B, a window, is staged as before.
func.func @pointers(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: i32,
                    %start: !tile.rt<64x32xi32>, %n: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %kb = arith.muli %k, %c32 : index
    %kb32 = arith.index_cast %kb : index to i32
    %offs = tile.map %start : !tile.rt<64x32xi32> -> !tile.rt<64x32xi32> {
    ^bb0(%s: i32):
      %o = arith.addi %s, %kb32 : i32
      tile.yield %o : i32
    }
    %cols = tile.iota %c0 dim 0 : !tile.rv<32xi32, col>
    %in = tile.map %cols : !tile.rv<32xi32, col> -> !tile.rv<32xi1, col> {
    ^bb0(%j: i32):
      %lim = arith.subi %kk, %kb32 : i32
      %lt = arith.cmpi slt, %j, %lim : i32
      tile.yield %lt : i1
    }
    %m = tile.broadcast %in : !tile.rv<32xi1, col> -> !tile.rt<64x32xi1>
    %ta = tile.gather %a[%offs] linear mask %m : !tile.gl<f16, [?, ?]>[!tile.rt<64x32xi32>], !tile.rt<64x32xi1> -> !tile.rt<64x32xf16>
    %tb = tile.load %b[%kb, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @pointers
// CHECK-SAME: smem = 8192
// CHECK: %[[SA:[a-z_]+]] = tile.alloc : !tile.st<64x32xf16
// CHECK: scf.for %k
// CHECK: %offs = tile.map %start
// CHECK: %m = tile.broadcast %in
// CHECK: tile.copy %a offsets %offs -> %[[SA]] mask %m prefix : !tile.gl<f16, [?, ?]>[!tile.rt<64x32xi32>] -> !tile.st<64x32xf16{{.*}}>, !tile.rt<64x32xi1>
// CHECK-NEXT: tile.copy %b[%kb, %c0] -> %[[SB:[a-z_]+]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK-NEXT: %tb = tile.load %[[SB]]
// CHECK-NEXT: %d = tile.mma %ta, %tb, %x
// CHECK-NOT: tile.gather
