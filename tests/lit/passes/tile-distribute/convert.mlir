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
// values within the warp, so by shuffles: each A value comes from a lane that is a bit-linear
// function of the lane (shfl.sync.idx), no shared memory and no barrier.
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
// CHECK-NOT: frag.shared
// CHECK-NOT: tile.barrier
// CHECK: frag.shfl "idx"
// CHECK: frag.mma <mma_m16n8k8_tf32>

// -----

// A tile of the block (two warps) whose new fragment needs values another warp holds: through
// shared memory, one scratch tile for the block (not one per warp): every thread stores its
// values at their coordinates, the block synchronises, every thread loads its new values.
func.func @across_warps(%g: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<2x64xf32, (64,2):(2,1)>
  %y = tile.convert_layout %x : !tile.rt<2x64xf32, (64,2):(2,1)> -> !tile.rt<2x64xf32, ((32,2),2):((4,1),2)>
  tile.store %y, %o[%c0, %c0] : !tile.rt<2x64xf32, ((32,2),2):((4,1),2)> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @across_warps(
// CHECK: %[[S:.*]] = frag.shared "across_warps_y_convert", 512, align 128 : !llvm.ptr<3>
// CHECK-COUNT-2: frag.store %{{.*}}, %{{[0-9]+}} : f32, !llvm.ptr<3>
// CHECK: tile.barrier
// CHECK-COUNT-2: frag.load %{{[0-9]+}} : !llvm.ptr<3> -> f32
// CHECK: tile.barrier

// -----

// Two warps, each holding a whole 16x32 tile (lane t: row t % 16, half t / 16 of the columns), to
// one column a lane: no shuffle plan (a transpose within the warp), so shared memory, a scratch
// tile per warp (2 x 2 KB) at warp * 512 floats. The warp index is the kernel's uniform one
// (tile.warp_id, read from lane 0 when lowered), not tid >> 5.
func.func @per_warp(%g: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x32xf32, ((16,2),16):((1,256),16)>
  %y = tile.convert_layout %x : !tile.rt<16x32xf32, ((16,2),16):((1,256),16)> -> !tile.rt<16x32xf32, (32,16):(16,1)>
  tile.store %y, %o[%c0, %c0] : !tile.rt<16x32xf32, (32,16):(16,1)> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @per_warp(
// CHECK: %[[W:.*]] = tile.warp_id
// CHECK-NEXT: %warp = arith.index_cast %[[W]] : index to i32
// CHECK: %[[S:.*]] = frag.shared "per_warp_y_convert", 4096, align 128 : !llvm.ptr<3>
// CHECK-NEXT: %[[OFF:.*]] = arith.shli %warp, %{{.*}} : i32
// CHECK-NEXT: %{{.*}} = llvm.getelementptr %[[S]][%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
// CHECK: tile.barrier
