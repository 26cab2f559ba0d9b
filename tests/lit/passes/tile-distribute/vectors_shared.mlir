// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// One warp: a row vector of 16 values spread over the lanes (lane t holds element t % 16: lanes
// t and t + 16 hold copies) goes to a rank-1 shared tile and comes back as the row vector of a
// 16x64 tile in m16n8k16's C fragment (lane 4g + q holds rows g and g + 8).
func.func @k(%x: !tile.gl<f32, [?]>, %t: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 64>} {
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : !tile.gl<f32, [?]> -> !tile.rv<16xf32, row>
  %s = tile.alloc : !tile.st<16xf32>
  tile.store %v, %s[%c0] : !tile.rv<16xf32, row> -> !tile.st<16xf32>
  tile.barrier
  %w = tile.load %s[%c0] : !tile.st<16xf32> -> !tile.rv<16xf32, row>
  %a = tile.load %t[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %b = tile.broadcast %w : !tile.rv<16xf32, row> -> !tile.rt<16x64xf32>
  %d = tile.add %a, %b : !tile.rt<16x64xf32>
  tile.store %d, %y[%c0, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// The store: only the lanes whose copy bit (lane bit 4) is zero write their element.
// CHECK: %[[LEADER:[0-9]+]] = arith.cmpi eq, %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} if %[[LEADER]] : f32, !llvm.ptr<3>
// CHECK-NEXT: tile.barrier
// The load: each lane reads its two rows (g and g + 8).
// CHECK-COUNT-2: frag.load %{{[0-9]+}} : !llvm.ptr<3> -> f32
