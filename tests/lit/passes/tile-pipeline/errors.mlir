// RUN: not tile-opt %s -p 'tile-pipeline{stages=4}' --split-input-file 2>&1 | filecheck %s
// RUN: not tile-opt %s -p 'tile-pipeline{stages=0}' 2>&1 | filecheck %s --check-prefix=STAGES
// RUN: not tile-opt %s -p 'tile-pipeline{stages=10}' 2>&1 | filecheck %s --check-prefix=STAGES

// What tile-pipeline cannot do is an error that names the op and the numbers.

// STAGES: pass-pipeline:1:1: error: invalid options for pass 'tile-pipeline': stages must be 1 .. 9 (tile.async_wait N-2 must fit cp.async.wait_group's 0 .. 7; bulk copies take up to 16), got {{0|10}}

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

// -----

// An async wgmma left running into the next iteration (pending 1) reads a stage that the next K
// tile's copies overwrite: refused at the wgmma (traced from tests/lang/test_wgmma_forms.py).
func.func @k_loop_async(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [?, ?, ?], block = [128, 1, 1], smem = 8192>} {
  %a_dim1 = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %0 = arith.constant 0 : index
  %1 = arith.constant 32 : index
  %2 = arith.constant 16 : index
  %smem = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
  %smem_1 = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  %3 = tile.zeros : !tile.rt<16x64xf32>
  %acc = scf.for %k = %0 to %a_dim1 step %1 iter_args(%acc_1 = %3) -> (!tile.rt<16x64xf32>) {
    tile.copy %a[%0, %k] -> %smem thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
    tile.copy %b[%k, %0] -> %smem_1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
    tile.barrier
    %4 = tile.wgmma %smem[%0], %smem_1[%0], %acc_1 async : !tile.st<64x32xf16, (64,32):(32,1)>, !tile.st<32x64xf16, (32,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    %5 = tile.wgmma_wait %4, 1 : !tile.rt<16x64xf32>
    tile.barrier
    scf.yield %5 : !tile.rt<16x64xf32>
  }
  %warp = tile.warp_id
  %6 = arith.muli %warp, %2 : index
  %7 = tile.wgmma_wait %acc, 0 : !tile.rt<16x64xf32>
  tile.store %7, %c[%6, %0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK: errors.mlir:81:10: error: 'tile.wgmma' op tile-pipeline cannot pipeline this K loop: an async tile.wgmma reads a shared tile that the next K tile's copies overwrite; wait for it with tile.wgmma_wait ..., 0 (tl.wgmma_wait(x, 0)) in the same iteration

// (kept last: the diagnostics above name their line numbers) Bulk copies take up to 16 stages.
// RUN: not tile-opt %s -p 'tile-pipeline{stages=17 bulk=true}' 2>&1 | filecheck %s --check-prefix=BULKSTAGES
// BULKSTAGES: pass-pipeline:1:1: error: invalid options for pass 'tile-pipeline': stages must be 1 .. 16 (bulk copies: a transaction barrier a stage), got 17
