// RUN: tile-opt %s -p tile-layout | filecheck %s
// Running it again changes nothing: the fragments in the types are kept.
// RUN: tile-opt %s -p tile-layout,tile-layout | filecheck %s

// tile-layout writes each register tile's fragment (a TV layout over the warp's
// 32 lanes) into its type: an mma's operands get its atom's A, B and C layouts
// tiled over them, a loop's carried accumulator keeps the C fragment through
// the iter_args, the body's argument and the yield, an elementwise op shares
// its operands' fragment, and a column vector broadcast over a tile gets the
// columns its lanes hold (stride 0 over the lane bits that move along rows).

func.func @loop(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %zero = tile.zeros : !tile.rt<32x16xf32>
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %zero) -> (!tile.rt<32x16xf32>) {
    %ra = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x16xf16>
    %rb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
    %y = tile.mma %ra, %rb, %x : !tile.rt<32x16xf16>, !tile.rt<16x16xf16>, !tile.rt<32x16xf32> -> !tile.rt<32x16xf32>
    scf.yield %y : !tile.rt<32x16xf32>
  }
  %v = tile.load %bias[%c0] : !tile.gl<f32, [?]> -> !tile.rv<16xf32, col>
  %bv = tile.broadcast %v : !tile.rv<16xf32, col> -> !tile.rt<32x16xf32>
  %sum = tile.add %acc, %bv : !tile.rt<32x16xf32>
  tile.store %sum, %c[%c0, %c0] : !tile.rt<32x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @loop(
// The accumulator: m16n8k16's C atom tiled 2x2 over 32x16.
// CHECK: %zero = tile.zeros : !tile.rt<32x16xf32, [[C:\(\(4,8\),\(\(2,2\),\(2,2\)\)\):\(\(64,1\),\(\(32,8\),\(16,256\)\)\)]]>
// CHECK: %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%x = %zero) -> (!tile.rt<32x16xf32, [[C]]>) {
// A (M x K) and B (K x N, the atom's N x K B transposed).
// CHECK: %ra = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x16xf16, ((4,8),((2,2,2),(2,1))):((64,1),((32,8,256),(16,512)))>
// CHECK: %rb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16, ((4,8),((2,2),(2,1))):((2,16),((1,8),(128,16)))>
// CHECK: %y = tile.mma %ra, %rb, %x : {{.*}}, !tile.rt<32x16xf32, [[C]]> -> !tile.rt<32x16xf32, [[C]]>
// CHECK: scf.yield %y : !tile.rt<32x16xf32, [[C]]>
// The bias: each lane holds the columns 2 (lane mod 4) + {0, 1, 8, 9} (its lanes' rows do not matter).
// CHECK: %v = tile.load %bias[%c0] : !tile.gl<f32, [?]> -> !tile.rv<16xf32, col, ((4,8),(2,2)):((2,0),(1,8))>
// CHECK: %bv = tile.broadcast %v : !tile.rv<16xf32, col, ((4,8),(2,2)):((2,0),(1,8))> -> !tile.rt<32x16xf32, [[C]]>
// CHECK: %sum = tile.add %acc, %bv : !tile.rt<32x16xf32, [[C]]>
// CHECK: tile.store %sum, %c[%c0, %c0] : !tile.rt<32x16xf32, [[C]]> -> !tile.gl<f32, [?, ?]>
