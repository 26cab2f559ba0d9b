// RUN: tile-opt %s -p tile-stage | filecheck %s

// Triton's masked operand (tl.where(k < K, tl.load(...), 0) into tl.dot, the tutorial's K residue):
// the load is staged like a bare one, and the select stays where it was, computed from the tile
// read in shared memory (the same tile: the copy reads 0 outside the view as the load did).
func.func @masked(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %i = arith.muli %bx, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%i, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %cols = tile.iota %k dim 1 : !tile.rt<64x32xi32>
    %ma = tile.map %cols, %ta : !tile.rt<64x32xi32>, !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
    ^bb0(%col: i32, %v: f16):
      %lim = arith.index_cast %kk : index to i32
      %in = arith.cmpi slt, %col, %lim : i32
      %zero = arith.constant 0.000000e+00 : f16
      %s = arith.select %in, %v, %zero : f16
      tile.yield %s : f16
    }
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ma, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @masked
// CHECK-SAME: smem = 8192
// CHECK: %acc = scf.for %k = %c0 to %kk step %c32
// CHECK-NEXT: tile.copy %a[%i, %k] -> %[[SA:[a-z_]+]]
// CHECK-NEXT: tile.copy %b[%k, %c0] -> %[[SB:[a-z_]+]]
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK: %ma = tile.map %cols, %ta
// CHECK: %tb = tile.load %[[SB]]
// CHECK-NEXT: %d = tile.mma %ma, %tb, %x
// CHECK-NOT: tile.load %a
