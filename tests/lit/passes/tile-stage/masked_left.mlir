// RUN: tile-opt %s -p tile-stage | filecheck %s

// Selects of 0 no copy can take as its mask stage like bare loads and stay selects (a review found
// each of these crashing the split of the select's map): a test that is one scalar for the whole
// tile (Triton's mask=k * BK < KSTOP), a test of no tile at all, and a select under a branch of the
// loop body (its mask could not move to the body's start).
func.func @scalar_test(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %i = arith.muli %bx, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%i, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %cols = tile.iota %k dim 1 : !tile.rt<64x32xi32>
    %flag = arith.cmpi slt, %k, %c64 : index
    %ma = tile.map %cols, %ta : !tile.rt<64x32xi32>, !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
    ^bb0(%col: i32, %v: f16):
      %zero = arith.constant 0.000000e+00 : f16
      %s = arith.select %flag, %v, %zero : f16
      tile.yield %s : f16
    }
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ma, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @scalar_test
// CHECK: tile.copy %a[%i, %k] -> %{{[a-z_]+}} :
// CHECK: %ma = tile.map %cols, %ta
// CHECK: arith.select %flag, %v, %zero

func.func @constant_test(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %i = arith.muli %bx, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%i, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %cols = tile.iota %k dim 1 : !tile.rt<64x32xi32>
    %ma = tile.map %ta : !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
    ^bb0(%v: f16):
      %zero = arith.constant 0.000000e+00 : f16
      %t = arith.constant true
      %s = arith.select %t, %v, %zero : f16
      tile.yield %s : f16
    }
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ma, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @constant_test
// CHECK: tile.copy %a[%i, %k] -> %{{[a-z_]+}} :
// CHECK: %ma = tile.map %ta
// CHECK: arith.select %t, %v, %zero

func.func @nested(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index, %p: i1)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %i = arith.muli %bx, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%i, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %cols = tile.iota %k dim 1 : !tile.rt<64x32xi32>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %r = scf.if %p -> (!tile.rt<64x64xf32>) {
      %ma = tile.map %cols, %ta : !tile.rt<64x32xi32>, !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
      ^bb0(%col: i32, %v: f16):
        %lim = arith.index_cast %kk : index to i32
        %in = arith.cmpi slt, %col, %lim : i32
        %zero = arith.constant 0.000000e+00 : f16
        %s = arith.select %in, %v, %zero : f16
        tile.yield %s : f16
      }
      %d = tile.mma %ma, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
      scf.yield %d : !tile.rt<64x64xf32>
    } else {
      scf.yield %x : !tile.rt<64x64xf32>
    }
    scf.yield %r : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @nested
// CHECK: tile.copy %a[%i, %k] -> %{{[a-z_]+}} :
// CHECK: scf.if %p
// CHECK-NEXT: %ma = tile.map %cols, %ta
// CHECK: arith.select %in, %v, %zero
