// RUN: tile-opt %s | tile-opt | filecheck %s

// tile.reshape reads a tile's (vector's) elements in row-major order in another shape; tile.join puts
// two tiles of one type side by side along a dimension, or taking turns (interleaved); tile.split takes
// them apart. All print as they parse.

func.func @shapes(%x: !tile.rt<16x64xf16>, %v: !tile.rv<256xi32, col>) -> (!tile.rt<32x32xf16>, !tile.rt<16x16xi32>) {
  %r = tile.reshape %x : !tile.rt<16x64xf16> -> !tile.rt<32x32xf16>
  %f = tile.reshape %r : !tile.rt<32x32xf16> -> !tile.rv<1024xf16, col>
  %t = tile.reshape %v : !tile.rv<256xi32, col> -> !tile.rt<16x16xi32>
  func.return %r, %t : !tile.rt<32x32xf16>, !tile.rt<16x16xi32>
}
// CHECK-LABEL: func.func @shapes
// CHECK-NEXT: %r = tile.reshape %x : !tile.rt<16x64xf16> -> !tile.rt<32x32xf16>
// CHECK-NEXT: %f = tile.reshape %r : !tile.rt<32x32xf16> -> !tile.rv<1024xf16, col>
// CHECK-NEXT: %t = tile.reshape %v : !tile.rv<256xi32, col> -> !tile.rt<16x16xi32>

func.func @joins(%a: !tile.rt<16x32xf16>, %b: !tile.rt<16x32xf16>) -> (!tile.rt<16x64xf16>, !tile.rt<32x32xf16>) {
  %i = tile.join %a, %b dim 1 interleaved : !tile.rt<16x32xf16>, !tile.rt<16x32xf16> -> !tile.rt<16x64xf16>
  %c = tile.join %a, %b dim 0 : !tile.rt<16x32xf16>, !tile.rt<16x32xf16> -> !tile.rt<32x32xf16>
  func.return %i, %c : !tile.rt<16x64xf16>, !tile.rt<32x32xf16>
}
// CHECK-LABEL: func.func @joins
// CHECK-NEXT: %i = tile.join %a, %b dim 1 interleaved : !tile.rt<16x32xf16>, !tile.rt<16x32xf16> -> !tile.rt<16x64xf16>
// CHECK-NEXT: %c = tile.join %a, %b dim 0 : !tile.rt<16x32xf16>, !tile.rt<16x32xf16> -> !tile.rt<32x32xf16>

func.func @splits(%x: !tile.rt<32x8xf32>) -> (!tile.rt<16x8xf32>, !tile.rt<32x4xf32>) {
  %a, %b = tile.split %x dim 0 interleaved : !tile.rt<32x8xf32> -> !tile.rt<16x8xf32>, !tile.rt<16x8xf32>
  %c, %d = tile.split %x dim 1 : !tile.rt<32x8xf32> -> !tile.rt<32x4xf32>, !tile.rt<32x4xf32>
  func.return %a, %d : !tile.rt<16x8xf32>, !tile.rt<32x4xf32>
}
// CHECK-LABEL: func.func @splits
// CHECK-NEXT: %a, %b = tile.split %x dim 0 interleaved : !tile.rt<32x8xf32> -> !tile.rt<16x8xf32>, !tile.rt<16x8xf32>
// CHECK-NEXT: %c, %d = tile.split %x dim 1 : !tile.rt<32x8xf32> -> !tile.rt<32x4xf32>, !tile.rt<32x4xf32>
