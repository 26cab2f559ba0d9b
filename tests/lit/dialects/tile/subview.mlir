// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// A (B, H, S, D) view and the S x D matrix of one head (CuTe's slice of the leading coordinates):
// the same memory, the trailing extents and strides.

// CHECK:      func.func @head(%q: !tile.gl<f16, [?, ?, ?, ?]>, %b: index, %h: index) {
// CHECK-NEXT:   %qh = tile.subview %q[%b, %h] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
// CHECK-NEXT:   %row = tile.subview %q[%b, %h, %b] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?]>
// CHECK-NEXT:   %n = tile.dim %qh, 0 : !tile.gl<f16, [?, ?]>
func.func @head(%q: !tile.gl<f16, [?, ?, ?, ?]>, %b: index, %h: index) {
  %qh = tile.subview %q[%b, %h] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %row = tile.subview %q[%b, %h, %b] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?]>
  %n = tile.dim %qh, 0 : !tile.gl<f16, [?, ?]>
  func.return
}
