// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// tile.take (numpy's take_along_axis, Triton's tl.gather): the index and the result share a fragment,
// the source keeps its own. The places an index names are known at run time only, so the source goes
// through a scratch tile in shared memory: each lane stores its elements, the block synchronises, each
// lane loads the element each of its indices names (an index outside [0, 64) loads element 0 of its row
// and reads 0: one unsigned compare and two selects), the block synchronises before the scratch is reused.
func.func @pick(%x: !tile.gl<f32, [?, ?]>, %i: !tile.gl<i32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %src = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %idx = tile.load %i[%c0, %c0] : !tile.gl<i32, [?, ?]> -> !tile.rt<16x8xi32>
  %r = tile.take %src[%idx] axis 1 : !tile.rt<16x64xf32>[!tile.rt<16x8xi32>] -> !tile.rt<16x8xf32>
  tile.store %r, %o[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @pick(
// CHECK: frag.shared "pick_r_take", 4096
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK: arith.select
// CHECK: frag.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: tile.barrier
// CHECK: frag.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK: tile.barrier
// CHECK: arith.select
// CHECK-NOT: tile.take
// CHECK: func.return

// A table of 16 that every warp holds whole (tile-layout spreads a take's small table over each warp's
// lanes): each pick is one shuffle from the lane that holds it; no shared memory, no barrier.
func.func @lookup(%t: !tile.gl<f32, [?]>, %c: !tile.gl<i32, [?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %table = tile.load %t[%c0] : !tile.gl<f32, [?]> -> !tile.rv<16xf32, col>
  %codes = tile.load %c[%c0] : !tile.gl<i32, [?]> -> !tile.rv<1024xi32, col>
  %w = tile.take %table[%codes] axis 0 : !tile.rv<16xf32, col>[!tile.rv<1024xi32, col>] -> !tile.rv<1024xf32, col>
  tile.store %w, %o[%c0] : !tile.rv<1024xf32, col> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @lookup(
// CHECK-NOT: frag.shared
// CHECK-NOT: tile.barrier
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i32
// CHECK: frag.shfl "idx"
// CHECK-NOT: tile.barrier
// CHECK: func.return
