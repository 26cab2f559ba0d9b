// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// The ops tiling produces: run-time extents, shared windows, column vectors
// loaded from rank-1 views, and elementwise maps (a tiled epilogue).

func.func @k(%a: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>, %i: index) {
  %m = tile.dim %a, 0 : !tile.gl<f16, [?, ?]>
  %s = tile.alloc : !tile.st<64x32xf16>
  %r = tile.load %s[%i, %i] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x32xf16>
  %v = tile.load %bias[%i] : !tile.gl<f32, [?]> -> !tile.rv<32xf32, col>
  %vb = tile.broadcast %v : !tile.rv<32xf32, col> -> !tile.rt<32x32xf32>
  %o = tile.map %r, %vb : !tile.rt<32x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf16> {
  ^bb0(%x: f16, %y: f32):
    %xe = arith.extf %x : f16 to f32
    %z = arith.addf %xe, %y : f32
    %h = arith.truncf %z : f32 to f16
    tile.yield %h : f16
  }
  tile.store %o, %s[%i, %i] : !tile.rt<32x32xf16> -> !tile.st<64x32xf16, (64,32):(32,1)>
  func.return
}

// CHECK:      func.func @k(%a: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>, %i: index) {
// CHECK-NEXT:   %m = tile.dim %a, 0 : !tile.gl<f16, [?, ?]>
// CHECK-NEXT:   %s = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
// CHECK-NEXT:   %r = tile.load %s[%i, %i] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x32xf16>
// CHECK-NEXT:   %v = tile.load %bias[%i] : !tile.gl<f32, [?]> -> !tile.rv<32xf32, col>
// CHECK-NEXT:   %vb = tile.broadcast %v : !tile.rv<32xf32, col> -> !tile.rt<32x32xf32>
// CHECK-NEXT:   %o = tile.map %r, %vb : !tile.rt<32x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf16> {
// CHECK-NEXT:   ^bb0(%x: f16, %y: f32):
// CHECK-NEXT:     %xe = arith.extf %x : f16 to f32
// CHECK-NEXT:     %z = arith.addf %xe, %y : f32
// CHECK-NEXT:     %h = arith.truncf %z : f32 to f16
// CHECK-NEXT:     tile.yield %h : f16
// CHECK-NEXT:   }
// CHECK-NEXT:   tile.store %o, %s[%i, %i] : !tile.rt<32x32xf16> -> !tile.st<64x32xf16, (64,32):(32,1)>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
