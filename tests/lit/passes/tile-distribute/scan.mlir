// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// The running sum of a 1 x 512 row held by four warps as a tile of the block (4 columns a thread,
// consecutive threads consecutive runs): the scanned column is value bits 0-1, lane bits 2-6 and
// thread bits 7-8. Each bit is a step, lowest first: the values' own bits combine registers (an
// element with the bit set adds its neighbour run's total to its prefix), the lane bits are five
// butterflies (a prefix takes the neighbour's total where the lane's bit is set), and the two thread
// bits past the lane's exchange the totals through shared memory, a barrier either side. After the
// value bits a thread's four values hold one run's total, so each step moves one value, not four.
func.func @k(%x: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64})
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %b = tile.block_id x
  %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<1x512xf32>
  %c = tile.scan "sum" %t dim 1 : !tile.rt<1x512xf32> -> !tile.rt<1x512xf32>
  tile.store %c, %o[%b, %c0] : !tile.rt<1x512xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @k(
// CHECK: frag.load %{{[0-9]+}} if %{{[0-9]+}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-COUNT-5: frag.shfl "bfly"
// CHECK: %[[S:[0-9]+]] = frag.shared "k_c_totals", 2048, align 128 : !llvm.ptr<3>
// CHECK-NEXT: %[[P:[0-9]+]] = arith.xori %tid
// CHECK-NEXT: %[[MINE:[0-9]+]] = llvm.getelementptr %[[S]][%tid]
// CHECK-NEXT: frag.store %{{[0-9]+}}, %[[MINE]] : f32, !llvm.ptr<3>
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %[[THEIRS:[0-9]+]] = llvm.getelementptr %[[S]][%[[P]]]
// CHECK-NEXT: frag.load %[[THEIRS]] : !llvm.ptr<3> -> f32
// CHECK-NEXT: tile.barrier
// CHECK-COUNT-4: arith.select
// CHECK: frag.shared "k_c_totals"
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} if %{{[0-9]+}} : vector<4xf32>, !llvm.ptr<1>

// A row vector scanned from its end (a running maximum of the row maxima of a tile in the m16n8k16
// C fragment): its values sit in lane bits 2-4 and, 8 rows apart, in registers: butterflies and
// register steps, no shared memory.
func.func @vector(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x8xf32>
  %r = tile.row_max %t : !tile.rt<16x8xf32> -> !tile.rv<16xf32, row>
  %s = tile.scan "max" %r dim 0 reverse : !tile.rv<16xf32, row> -> !tile.rv<16xf32, row>
  tile.store %s, %o[%c0] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @vector(
// CHECK: frag.shfl "bfly"
// CHECK: arith.select
// CHECK-NOT: tile.barrier
// CHECK: func.return
