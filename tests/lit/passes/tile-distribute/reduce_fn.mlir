// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_80}' | filecheck %s --check-prefix=PTX

// tl.reduce with a function: tile.reduce's region is inlined wherever the built-in reductions
// combine two values (registers, then the butterfly over the lanes: two lane bits, two rows a lane).
func.func @with_a_function(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x8xf32>
  %r = tile.reduce %t : !tile.rt<16x8xf32> -> !tile.rv<16xf32, row> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maximumf %a, %b : f32
    %s = arith.mulf %m, %m : f32
    tile.yield %s : f32
  }
  tile.store %r, %o[%c0] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @with_a_function(
// CHECK: arith.maximumf
// CHECK-NEXT: arith.mulf
// CHECK: frag.shfl "bfly"
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: arith.mulf
// CHECK: frag.store
// PTX: shfl.sync.bfly.b32
