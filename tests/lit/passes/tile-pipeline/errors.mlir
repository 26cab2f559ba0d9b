// RUN: not tile-opt %s -p 'tile-pipeline{stages=4}' --split-input-file 2>&1 | filecheck %s
// RUN: not tile-opt %s -p 'tile-pipeline{stages=0}' 2>&1 | filecheck %s --check-prefix=STAGES
// RUN: not tile-opt %s -p 'tile-pipeline{stages=10}' 2>&1 | filecheck %s --check-prefix=STAGES

// What tile-pipeline cannot do is an error that names the op and the numbers.

// STAGES: pass-pipeline:1:1: error: invalid options for pass 'tile-pipeline': stages must be 1 .. 9 (tile.async_wait N-2 must fit cp.async.wait_group's 0 .. 7), got {{0|10}}

// Four stages of a 64 KB tile do not fit in shared memory.
func.func @big(%a: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 65536>} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %K = tile.dim %a, 0 : !tile.gl<f32, [?, ?]>
  %s = tile.alloc : !tile.st<128x128xf32>
  %zero = tile.zeros : !tile.rt<128x128xf32>
  %r = scf.for %k = %c0 to %K step %c128 iter_args(%acc = %zero) -> (!tile.rt<128x128xf32>) {
    tile.copy %a[%k, %c0] -> %s : !tile.gl<f32, [?, ?]> -> !tile.st<128x128xf32>
    tile.barrier
    %v = tile.load %s : !tile.st<128x128xf32> -> !tile.rt<128x128xf32>
    %n = tile.add %acc, %v : !tile.rt<128x128xf32>
    tile.barrier
    scf.yield %n : !tile.rt<128x128xf32>
  }
  tile.store %r, %o[%c0, %c0] : !tile.rt<128x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: errors.mlir:10:1: error: 'func.func' op tile-pipeline: 4 stages need 262144 bytes of shared memory (65536 + 196608 for the extra stages), more than the device limit of 232448; use fewer stages

// -----

// The shared tile is read after the loop: its stages would be a different tile.
func.func @escapes(%a: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %K = tile.dim %a, 0 : !tile.gl<f32, [?, ?]>
  %s = tile.alloc : !tile.st<16x16xf32>
  scf.for %k = %c0 to %K step %c16 {
    tile.copy %a[%k, %c0] -> %s : !tile.gl<f32, [?, ?]> -> !tile.st<16x16xf32>
    tile.barrier
  }
  %v = tile.load %s : !tile.st<16x16xf32> -> !tile.rt<16x16xf32>
  tile.store %v, %o[%c0, %c0] : !tile.rt<16x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: errors.mlir:41:8: error: 'tile.load' op tile-pipeline cannot pipeline this K loop: shared tile %s is used outside the K loop (or before its first barrier) by 'tile.load'; it cannot be given stages

// -----

// The copy's origin is loop-carried: the copy of a later K tile cannot be computed ahead.
func.func @carried(%a: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %K = tile.dim %a, 0 : !tile.gl<f32, [?, ?]>
  %s = tile.alloc : !tile.st<16x16xf32>
  %e = scf.for %k = %c0 to %K step %c16 iter_args(%row = %c0) -> (index) {
    tile.copy %a[%row, %c0] -> %s : !tile.gl<f32, [?, ?]> -> !tile.st<16x16xf32>
    tile.barrier
    %next = arith.addi %row, %c16 : index
    scf.yield %next : index
  }
  func.return
}
// CHECK: errors.mlir:56:5: error: 'tile.copy' op tile-pipeline cannot pipeline this K loop: copy operand %row is loop-carried; the copy of a later K tile cannot be computed ahead
