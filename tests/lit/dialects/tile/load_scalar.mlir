// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// tile.load_scalar: one element of a global view, the same for every thread (a per-tensor scale
// read in the kernel); its result is a plain scalar that tile.map bodies use.

func.func @scale(%s: !tile.gl<f32, [1]>, %m: !tile.gl<bf16, [?, ?]>, %i: index) -> (f32, bf16) {
  %c0 = arith.constant 0 : index
  %0 = tile.load_scalar %s[%c0] : !tile.gl<f32, [1]> -> f32
  %1 = tile.load_scalar %m[%i, %c0] : !tile.gl<bf16, [?, ?]> -> bf16
  func.return %0, %1 : f32, bf16
}
// CHECK:      %0 = tile.load_scalar %s[%c0] : !tile.gl<f32, [1]> -> f32
// CHECK-NEXT: %1 = tile.load_scalar %m[%i, %c0] : !tile.gl<bf16, [?, ?]> -> bf16

// -----

func.func @indices(%m: !tile.gl<f32, [?, ?]>, %i: index) {
  %0 = tile.load_scalar %m[%i] : !tile.gl<f32, [?, ?]> -> f32
  func.return
}
// CHECK: 'tile.load_scalar' takes one index per dimension of !tile.gl<f32, [?, ?]>: 2, got 1

// -----

func.func @type(%s: !tile.gl<f32, [1]>, %i: index) {
  %0 = tile.load_scalar %s[%i] : !tile.gl<f32, [1]> -> f16
  func.return
}
// CHECK: 'tile.load_scalar' result must be the view's element type f32, got f16

