// RUN: tile-opt %s -p tile-layout,tile-bulk-store | filecheck %s

// A masked store writes only some elements of its window; a bulk tensor store writes the whole box,
// so tile-bulk-store leaves it a store (the same warp's unmasked store next to it becomes a bulk one).
func.func @k(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %e: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %warp = tile.warp_id
  %row = arith.muli %warp, %c16 : index
  %v = tile.load %a[%row, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x64xf16>
  %m = tile.map %v : !tile.rt<16x64xf16> -> !tile.rt<16x64xi1> {
  ^bb0(%x: f16):
    %z = arith.constant 0.000000e+00 : f16
    %p = arith.cmpf ogt, %x, %z : f16
    tile.yield %p : i1
  }
  tile.store %v, %c[%row, %c0] mask %m : !tile.rt<16x64xf16> -> !tile.gl<f16, [?, ?]>, !tile.rt<16x64xi1>
  tile.store %v, %e[%row, %c0] : !tile.rt<16x64xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK:     tile.store %v, %c[%row, %c0] mask %m
// CHECK:     tile.bulk_store %{{.*}} -> %e[%row, %c0]
// CHECK-NOT: tile.bulk_store %{{.*}} -> %c
