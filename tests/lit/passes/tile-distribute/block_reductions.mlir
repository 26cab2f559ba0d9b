// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// Four warps hold one 1 x 512 row as a tile of the block (4 columns a thread, 128 threads along
// the row). The row maximum: each thread's 4 values in registers, a butterfly over the 5 lane
// bits, then across the warps: thread bits 5 and 6 move along the row, so lane 0 of each warp
// writes its partial in slot tid >> 5 of the row, the block synchronises, and every thread
// combines the 4 slots in order. The weight (a column vector of the same columns) loads as one
// 16-byte vector a thread: its rows are 16-byte aligned (tile.aligned_rows).
func.func @k(%x: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}, %w: !tile.gl<f32, [?]> {tile.aligned_rows = 16 : i64},
             %o: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64})
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %b = tile.block_id x
  %t = tile.load %x[%b, %c0] other(0xFFF0000000000000 : f64) : !tile.gl<f32, [?, ?]> -> !tile.rt<1x512xf32>
  %m = tile.row_max %t : !tile.rt<1x512xf32> -> !tile.rv<1xf32, row>
  %mb = tile.broadcast %m : !tile.rv<1xf32, row> -> !tile.rt<1x512xf32>
  %wv = tile.load %w[%c0] : !tile.gl<f32, [?]> -> !tile.rv<512xf32, col>
  %wb = tile.broadcast %wv : !tile.rv<512xf32, col> -> !tile.rt<1x512xf32>
  %d = tile.sub %t, %mb : !tile.rt<1x512xf32>
  %y = tile.mul %d, %wb : !tile.rt<1x512xf32>
  tile.store %y, %o[%b, %c0] : !tile.rt<1x512xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @k(
// CHECK: frag.load %{{[0-9]+}} if %{{[0-9]+}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-COUNT-3: arith.maximumf
// CHECK-COUNT-5: frag.shfl "bfly"
// CHECK: %[[P:[0-9]+]] = frag.shared "k_m_partials", 16, align 128 : !llvm.ptr<3>
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} if %{{[0-9]+}} : f32, !llvm.ptr<3>
// CHECK-NEXT: tile.barrier
// CHECK-COUNT-4: frag.load %{{[0-9]+}} : !llvm.ptr<3> -> f32
// CHECK-NOT: tile.barrier
// CHECK: frag.load %{{[0-9]+}} if %{{[0-9]+}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} if %{{[0-9]+}} : vector<4xf32>, !llvm.ptr<1>
// CHECK: func.return
