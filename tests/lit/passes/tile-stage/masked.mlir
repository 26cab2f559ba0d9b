// RUN: tile-opt %s -p tile-stage | filecheck %s

// Triton's masked operand (tl.where(k < K, tl.load(...), 0) into tl.dot, the tutorial's K residue),
// the comparison fused into the select's map: the map is split, its test of the other operands a
// mask map of its own (only the ops the test needs), which the staged copy takes; the select goes
// and the mma reads the staged tile.
func.func @masked(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
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
    %ma = tile.map %cols, %ta : !tile.rt<64x32xi32>, !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
    ^bb0(%col: i32, %v: f16):
      %lim = arith.index_cast %kk : index to i32
      %in = arith.cmpi slt, %col, %lim : i32
      %zero = arith.constant 0.000000e+00 : f16
      %s = arith.select %in, %v, %zero : f16
      tile.yield %s : f16
    }
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ma, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @masked
// CHECK-SAME: smem = 8192
// CHECK: %acc = scf.for %k = %c0 to %kk step %c32
// CHECK-NEXT: %cols = tile.iota %k dim 1
// CHECK-NEXT: %mask = tile.map %cols : !tile.rt<64x32xi32> -> !tile.rt<64x32xi1> {
// CHECK-NEXT: ^bb0(%[[COL:.*]]: i32):
// CHECK-NEXT: %lim = arith.index_cast %kk : index to i32
// CHECK-NEXT: %in = arith.cmpi slt, %[[COL]], %lim : i32
// CHECK-NEXT: tile.yield %in : i1
// CHECK-NEXT: }
// CHECK-NEXT: tile.copy %a[%i, %k] -> %[[SA:[a-z_]+]] mask %mask prefix :
// CHECK-NEXT: tile.copy %b[%k, %c0] -> %[[SB:[a-z_]+]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK-NEXT: %tb = tile.load %[[SB]]
// CHECK-NEXT: %d = tile.mma %ta, %tb, %x
// CHECK-NOT: tile.load %a

// The same operands with their masks as i1 tiles and bare selects (what tilec.lang writes for
// tl.load(..., mask=k < K, other=0.0)): each staged copy takes its load's mask (masked-off elements
// read 0 as outside the view), the mask's computation moves to the body's start with the copies'
// indices (the map reading the loop's scalar %lim with it), and the selects go: the mma reads the
// staged tiles as an unmasked dot does. Every row of both masks is true, then false (an iota of the
// columns below a bound, a test of the row): `prefix` (tilec/passes/trends.py), so tile-distribute
// issues each copied run with no test and no element path.
func.func @masked_copies(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: i32, %n: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %i = arith.muli %bx, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %k0 = arith.muli %k, %c32 : index
    %iota = tile.iota %c0 dim 0 : !tile.rv<32xi32, col>
    %k32 = arith.index_cast %k0 : index to i32
    %lim = arith.subi %kk, %k32 : i32
    %in = tile.map %iota : !tile.rv<32xi32, col> -> !tile.rv<32xi1, col> {
    ^bb0(%j: i32):
      %lt = arith.cmpi slt, %j, %lim : i32
      tile.yield %lt : i1
    }
    %ta = tile.load %a[%i, %k0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %ma = tile.broadcast %in : !tile.rv<32xi1, col> -> !tile.rt<64x32xi1>
    %sa = tile.map %ma, %ta : !tile.rt<64x32xi1>, !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
    ^bb0(%m: i1, %v: f16):
      %zero = arith.constant 0.000000e+00 : f16
      %s = arith.select %m, %v, %zero : f16
      tile.yield %s : f16
    }
    %rows = tile.iota %c0 dim 0 : !tile.rv<32xi32, row>
    %rin = tile.map %rows : !tile.rv<32xi32, row> -> !tile.rv<32xi1, row> {
    ^bb0(%j: i32):
      %lt = arith.cmpi slt, %j, %lim : i32
      tile.yield %lt : i1
    }
    %tb = tile.load %b[%k0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %mb = tile.broadcast %rin : !tile.rv<32xi1, row> -> !tile.rt<32x64xi1>
    %sb = tile.map %mb, %tb : !tile.rt<32x64xi1>, !tile.rt<32x64xf16> -> !tile.rt<32x64xf16> {
    ^bb0(%m: i1, %v: f16):
      %zero = arith.constant 0.000000e+00 : f16
      %s = arith.select %m, %v, %zero : f16
      tile.yield %s : f16
    }
    %d = tile.mma %sa, %sb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @masked_copies
// CHECK: %acc = scf.for %k = %c0 to %n step %c1
// CHECK-NEXT: %k0 = arith.muli %k, %c32
// CHECK-NEXT: %iota = tile.iota
// CHECK-NEXT: %k32 = arith.index_cast %k0
// CHECK-NEXT: %lim = arith.subi %kk, %k32
// CHECK-NEXT: %in = tile.map %iota
// CHECK: %ma = tile.broadcast %in
// CHECK: %mb = tile.broadcast %rin
// CHECK-NEXT: tile.copy %a[%i, %k0] -> %[[SA:[a-z_]+]] mask %ma prefix :
// CHECK-NEXT: tile.copy %b[%k0, %c0] -> %[[SB:[a-z_]+]] mask %mb prefix :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK-NEXT: %tb = tile.load %[[SB]]
// CHECK-NEXT: %d = tile.mma %ta, %tb, %x
// CHECK-NOT: arith.select
// CHECK: func.return

// A select of another value than 0 (Triton's other=1.0) cannot be a copy's mask (a copy fills 0):
// the load is staged like a bare one, and the select stays, computed from the tile read in shared
// memory (the same tile: the copy reads 0 outside the view as the load did).
func.func @other(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %cols = tile.iota %k dim 1 : !tile.rt<64x32xi32>
    %ma = tile.map %cols, %ta : !tile.rt<64x32xi32>, !tile.rt<64x32xf16> -> !tile.rt<64x32xf16> {
    ^bb0(%col: i32, %v: f16):
      %lim = arith.index_cast %kk : index to i32
      %in = arith.cmpi slt, %col, %lim : i32
      %one = arith.constant 1.000000e+00 : f16
      %s = arith.select %in, %v, %one : f16
      tile.yield %s : f16
    }
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ma, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @other
// CHECK: %acc = scf.for %k = %c0 to %kk step %c32
// CHECK-NEXT: tile.copy %a[%c0, %k] -> %[[SA:[a-z_]+]] :
// CHECK-NEXT: tile.copy %b[%k, %c0] -> %[[SB:[a-z_]+]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK: %ma = tile.map %cols, %ta
// CHECK: arith.select %in, %v, %one
// CHECK: %d = tile.mma %ma, %tb, %x
