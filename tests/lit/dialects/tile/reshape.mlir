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

// tile.take picks elements along an axis by an index of the result's shape (numpy's take_along_axis).
func.func @takes(%x: !tile.rt<16x64xf16>, %i: !tile.rt<16x8xi32>, %v: !tile.rv<16xf32, col>,
                 %j: !tile.rv<256xi64, row>) -> (!tile.rt<16x8xf16>, !tile.rv<256xf32, row>) {
  %r = tile.take %x[%i] axis 1 : !tile.rt<16x64xf16>[!tile.rt<16x8xi32>] -> !tile.rt<16x8xf16>
  %w = tile.take %v[%j] axis 0 : !tile.rv<16xf32, col>[!tile.rv<256xi64, row>] -> !tile.rv<256xf32, row>
  func.return %r, %w : !tile.rt<16x8xf16>, !tile.rv<256xf32, row>
}
// CHECK-LABEL: func.func @takes
// CHECK-NEXT: %r = tile.take %x[%i] axis 1 : !tile.rt<16x64xf16>[!tile.rt<16x8xi32>] -> !tile.rt<16x8xf16>
// CHECK-NEXT: %w = tile.take %v[%j] axis 0 : !tile.rv<16xf32, col>[!tile.rv<256xi64, row>] -> !tile.rv<256xf32, row>
