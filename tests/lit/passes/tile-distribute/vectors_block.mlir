// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// A vector add of 1024 f32 on four warps: the vectors belong to no tile and are the same in every
// warp, so they spread over the block (tile-layout): 4 consecutive elements a thread, the 128
// threads along the vector, twice. Each run of 4 loads and stores as one 16-byte vector where the
// view's address is aligned for it (tested once) and the run is inside it, else element by element.
func.func @vadd(%a: !tile.gl<f32, [?]>, %c: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %n = arith.constant 1024 : index
  %b = tile.block_id x
  %i = arith.muli %b, %n : index
  %x = tile.load %a[%i] : !tile.gl<f32, [?]> -> !tile.rv<1024xf32, col>
  %y = tile.add %x, %x : !tile.rv<1024xf32, col>
  tile.store %y, %c[%i] : !tile.rv<1024xf32, col> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @vadd(
// CHECK: scf.if %{{[0-9]+}} -> (vector<4xf32>) {
// CHECK: frag.load %{{[0-9]+}} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: } else {
// CHECK-COUNT-4: frag.load %{{[0-9]+}} if %{{[0-9]+}} : !llvm.ptr<1> -> f32
// CHECK: scf.if %{{[0-9]+}} {
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NEXT: } else {
// CHECK-COUNT-4: frag.store %{{[0-9]+}}, %{{[0-9]+}} if %{{[0-9]+}} : f32, !llvm.ptr<1>
