// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// One warp: a causal softmax of a 16 x 64 window at (r0, c0): column > row reads as -inf.
func.func @causal(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %r0: index, %c0: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %t = tile.load %x[%r0, %c0] other(0xFFF0000000000000 : f64) : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %row = tile.iota %r0 dim 0 : !tile.rt<16x64xi32>
  %col = tile.iota %c0 dim 1 : !tile.rt<16x64xi32>
  %masked = tile.map %row, %col, %t : !tile.rt<16x64xi32>, !tile.rt<16x64xi32>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32> {
  ^bb0(%i: i32, %j: i32, %v: f32):
    %keep = arith.cmpi sle, %j, %i : i32
    %ninf = arith.constant 0xFF800000 : f32
    %y = arith.select %keep, %v, %ninf : f32
    tile.yield %y : f32
  }
  %m = tile.row_max %masked : !tile.rt<16x64xf32> -> !tile.rv<16xf32, row>
  %mb = tile.broadcast %m : !tile.rv<16xf32, row> -> !tile.rt<16x64xf32>
  %d = tile.sub %masked, %mb : !tile.rt<16x64xf32>
  %e = tile.exp %d : !tile.rt<16x64xf32>
  %s = tile.row_sum %e : !tile.rt<16x64xf32> -> !tile.rv<16xf32, row>
  %sb = tile.broadcast %s : !tile.rv<16xf32, row> -> !tile.rt<16x64xf32>
  %p = tile.div %e, %sb : !tile.rt<16x64xf32>
  tile.store %p, %o[%r0, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// The coordinates share the data's fragment (tile.map makes its operands agree), in i32.
// LAYOUT: %row = tile.iota %r0 dim 0 : !tile.rt<16x64xi32, [[C:.*]]>
// LAYOUT: %col = tile.iota %c0 dim 1 : !tile.rt<16x64xi32, [[C]]>
// LAYOUT: %masked = tile.map %row, %col, %t : !tile.rt<16x64xi32, [[C]]>, !tile.rt<16x64xi32, [[C]]>, !tile.rt<16x64xf32, [[C]]> -> !tile.rt<16x64xf32, [[C]]>

// A value's row is the offset + the lane's row part + the value's: one add each. The map's body
// runs once per value on those registers.
// CHECK: %[[R0:[0-9]+]] = arith.index_cast %r0 : index to i32
// CHECK-NEXT: %[[ROW:[0-9]+]] = arith.addi %[[R0]], %{{[0-9]+}} : i32
// CHECK: %[[C0:[0-9]+]] = arith.index_cast %c0 : index to i32
// CHECK-NEXT: %[[COL:[0-9]+]] = arith.addi %[[C0]], %{{[0-9]+}} : i32
// CHECK: %keep = arith.cmpi sle, %[[COL]], %[[ROW]] : i32
// CHECK: arith.select %keep, %{{[0-9]+}}, %{{[0-9]+}} : f32
