// RUN: tile-opt %s -p 'tile-pipeline{stages=4}' | filecheck %s
// RUN: tile-opt %s -p 'tile-pipeline{stages=3}' | filecheck %s --check-prefix=THREE
// RUN: tile-opt %s -p 'tile-pipeline{stages=4 in-flight=false}' | filecheck %s --check-prefix=SYNC

// cp.async stages (no bulk copies: masked, unaligned rows, or bulk=false) with a wgmma chain on a
// carried accumulator: with four stages or more its wgmmas stay in flight across K steps. A K tile
// is issued one step less ahead (k + 2 * 64 here), into the stage two steps behind the read stage
// (the write stage moves on as the read stage does): the wgmmas of the step that read it are
// complete in every warp once the block has met at this step's barrier, since each warp waited for
// them (`tile.wgmma_wait ..., 1`) at the end of its previous step. The wait takes the chain's result
// and passes it on to the next step. The loop and, after it, the last step's wait run under
// `scf.if (lb < ub)`: no way around the loop reaches that wait (else ptxas serialises the wgmmas).
// With three stages a single tile would be ahead: the wgmmas stay synchronous, as without in-flight.

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 24576>} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %w = tile.warp_id
  %g = arith.divui %w, %c4 : index
  %band = arith.muli %g, %c64 : index
  %row = arith.muli %w, %c16 : index
  %sa = tile.alloc : !tile.st<128x64xf16, (128,64):(64,1)>
  %sb = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %zero = tile.zeros : !tile.rt<16x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_i = %zero) -> (!tile.rt<16x64xf32>) {
    tile.copy %a[%c0, %k] -> %sa : !tile.gl<f16, [?, ?]> -> !tile.st<128x64xf16, (128,64):(64,1)>
    tile.copy %b[%k, %c0] -> %sb : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.barrier
    %d = tile.wgmma %sa[%band], %sb[%c0], %acc_i : !tile.st<128x64xf16, (128,64):(64,1)>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<16x64xf32>
  }
  tile.store %acc, %c[%row, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @gemm
// CHECK:         scf.if %more0
// CHECK:         scf.if %more1
// CHECK-NOT:     scf.if %more2
// CHECK:         %ran = arith.cmpi slt, %c0, %K : index
// CHECK-NEXT:    %acc, %{{.*}}, %{{.*}} = scf.if %ran -> (!tile.rt<16x64xf32>, index, index) {
// CHECK-NEXT:      %acc_1, %rs_end_1, %ws_end_1 = scf.for %[[K:.*]] = {{.*}} iter_args(%acc_i = %zero, %rs = %c0, %ws = %c2)
// CHECK-NEXT:      tile.async_wait 1
// CHECK-NEXT:      tile.barrier
// CHECK:           %k_next = arith.addi %[[K]], %c128 : index
// CHECK:           tile.async_copy %a[%c0, %k_next] -> %sa_w
// CHECK:           %[[D:.*]] = tile.wgmma %sa_r[%band], %sb_r[%{{.*}}], %acc_i async
// CHECK-NEXT:      %[[W:.*]] = tile.wgmma_wait %[[D]], 1 : !tile.rt<16x64xf32>
// CHECK:           %ws_next = arith.select
// CHECK-NEXT:      scf.yield %[[W]], %rs_next, %ws_next
// CHECK-NEXT:    }
// CHECK-NEXT:    %acc_2 = tile.wgmma_wait %acc_1, 0 : !tile.rt<16x64xf32>
// CHECK-NEXT:    scf.yield %acc_2, %rs_end_1, %ws_end_1
// CHECK-NEXT:  } else {
// CHECK-NEXT:    scf.yield %zero, %c0, %c2
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.async_wait 0
// CHECK-NEXT:  tile.barrier
// CHECK-NEXT:  tile.store %acc, %c

// THREE-LABEL: func.func @gemm
// THREE:         iter_args(%acc_i = %zero, %rs = %c0, %ws = %c2)
// THREE:         tile.wgmma %sa_r[%band], %sb_r[%{{.*}}], %acc_i :
// THREE-NOT:     tile.wgmma_wait

// SYNC-LABEL: func.func @gemm
// SYNC:         iter_args(%acc_i = %zero, %rs = %c0, %ws = %c3)
// SYNC:         tile.wgmma %sa_r[%band], %sb_r[%{{.*}}], %acc_i :
// SYNC-NOT:     tile.wgmma_wait
