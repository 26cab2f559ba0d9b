// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// tile.extract reads the one element of a register value. A full reduction (tl.sum(x) of the
// language) leaves it in every thread: the rows are summed by shuffles and across the two warps
// through shared memory, then the row vector, broadcast along a tile of one column, down that
// column (two more shuffles). The element is the thread's own register: the last add is what is
// stored at the one address, with no instruction between; the stored vector of one element is the
// block's (a vector of no tile spreads over the block's threads), so one thread stores it.
func.func @total(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<4x256xf32>
  %r = tile.row_sum %t : !tile.rt<4x256xf32> -> !tile.rv<4xf32, row>
  %c = tile.broadcast %r : !tile.rv<4xf32, row> -> !tile.rt<4x1xf32>
  %one = tile.col_sum %c : !tile.rt<4x1xf32> -> !tile.rv<1xf32, col>
  %s = tile.extract %one : !tile.rv<1xf32, col> -> f32
  %v = tile.fill %s : f32 -> !tile.rv<1xf32, col>
  tile.store %v, %o[%c0] : !tile.rv<1xf32, col> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @total(
// CHECK: frag.shfl "bfly"
// CHECK: frag.shared
// CHECK: tile.barrier
// CHECK: frag.shfl "bfly"
// CHECK-NEXT: arith.addf
// CHECK-NEXT: frag.shfl "bfly"
// CHECK-NEXT: %[[S:.*]] = arith.addf
// CHECK-NEXT: arith.andi %tid
// CHECK-NEXT: arith.cmpi eq
// CHECK-NEXT: arith.cmpi ult
// CHECK-NEXT: arith.andi
// CHECK-NEXT: frag.store %[[S]], %o
// CHECK-NEXT: func.return
