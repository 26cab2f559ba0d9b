// RUN: tile-opt %s -p tile-layout,tile-distribute --split-input-file | filecheck %s

// tile.convert_layout between two fragments of one tile, cheapest path first.

// A renumbering within each lane: a 16x8 tile in m16n8k16's C fragment, and the same tile with
// the two row halves of each lane's values swapped in value order. No data moves.
func.func @permute(%g: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
  %y = tile.convert_layout %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(8,16))>
  tile.store %y, %o[%c0, %c0] : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(8,16))> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @permute(
// CHECK-NOT: frag.shared
// CHECK-NOT: tile.barrier
// CHECK: func.return

// -----

// tf32's C fragment to its A fragment (an mma result fed to the next mma): lanes exchange
// values, so through shared memory: every lane stores its values at their coordinates in its
// warp's scratch tile, the block synchronises, every lane loads the A fragment's values.
func.func @chain(%g: !tile.gl<f32, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.zeros : !tile.rt<16x8xf32>
  %a = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x8xf32>
  %b = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<8x8xf32>
  %d = tile.mma %a, %b, %x atom <mma_m16n8k8_tf32> : !tile.rt<16x8xf32>, !tile.rt<8x8xf32>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %e = tile.mma %d, %b, %x atom <mma_m16n8k8_tf32> : !tile.rt<16x8xf32>, !tile.rt<8x8xf32>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %e, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @chain(
// CHECK: %[[D0:.*]], %[[D1:.*]], %[[D2:.*]], %[[D3:.*]] = frag.mma <mma_m16n8k8_tf32>
// CHECK: %[[S:.*]] = frag.shared "chain_d_convert", 512, align 128 : !llvm.ptr<3>
// CHECK-COUNT-4: frag.store %{{.*}}, %{{[0-9]+}} : f32, !llvm.ptr<3>
// CHECK: tile.barrier
// CHECK-COUNT-4: frag.load %{{[0-9]+}} : !llvm.ptr<3> -> f32
// CHECK: tile.barrier
// CHECK: frag.mma <mma_m16n8k8_tf32>
