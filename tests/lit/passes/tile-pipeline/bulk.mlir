// RUN: tile-opt %s -p 'tile-pipeline{stages=3 bulk=true reg-double-buffer=false}' | filecheck %s
// RUN: tile-opt %s -p 'tile-pipeline{stages=3 bulk=true}' | filecheck %s --check-prefix=CARRY
// RUN: tile-opt %s -p 'tile-pipeline{stages=3 bulk=true release=false reg-double-buffer=false}' | filecheck %s --check-prefix=SYNC

// tile-pipeline{bulk=true} (sm_90): the K loop's copies from views whose rows
// are promised 16-byte aligned become bulk tensor copies (tile.bulk_copy, one
// thread per block issues them) completing on one transaction barrier per
// stage (%full). Each shared tile takes the layout a tensor map writes: A's
// 64x32 f16 tile has 64-byte rows, so the 64-byte swizzle Sw<2,3,3>; B's 32x64
// tile 128-byte rows, Sw<3,3,3>. The prologue announces the bytes of K tiles 0
// and 1 (tile.mbar_expect, 8192 = 2 * 4096) and issues their copies, skipped
// past K; each iteration waits for the phase of its read stage (the parity %ph
// flips when the stage wraps around) and issues K tile i+2, guarded: every
// phase a copy completes is waited for. No drain is left.
//
// Nobody may overwrite a stage that a warp still reads. By default (CUTLASS's
// sm90 producer/consumer pipeline) each warp releases the read stage on its
// per-warp "empty" barrier (tile.mbar_arrive) right after its last read of it,
// and the issuing thread alone waits for the stage's release before refilling
// it (tile.mbar_wait ... issuer), with the parity of the previous iteration's
// read (%wph; 1 at first, which a fresh barrier passes): the loop has no block
// barrier. With release=false every iteration synchronises the block once instead.
// With carried fragments the wait for the next tile moves before the last mma
// and runs only if there is a next tile (a phase nobody arrives at never completes).

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c32 = arith.constant 32 : index
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %M = tile.dim %a, 0 : !tile.gl<f16, [?, ?]>
  %K = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %N = tile.dim %b, 1 : !tile.gl<f16, [?, ?]>

  // Grouped ordering: GROUP_M consecutive block rows share a band of B in L2.
  %bid = tile.block_id x
  %m_pad = arith.addi %M, %c63 : index
  %tiles_m = arith.divui %m_pad, %c64 : index
  %n_pad = arith.addi %N, %c63 : index
  %tiles_n = arith.divui %n_pad, %c64 : index
  %width = arith.muli %tiles_n, %c8 : index
  %group = arith.divui %bid, %width : index
  %first_m = arith.muli %group, %c8 : index
  %left_m = arith.subi %tiles_m, %first_m : index
  %group_m = arith.minui %left_m, %c8 : index
  %in_group = arith.remui %bid, %width : index
  %pid_m_off = arith.remui %in_group, %group_m : index
  %pid_m = arith.addi %first_m, %pid_m_off : index
  %pid_n = arith.divui %in_group, %group_m : index
  %row0 = arith.muli %pid_m, %c64 : index
  %col0 = arith.muli %pid_n, %c64 : index

  // This warp's 32x32 part of the 64x64 block tile (warps laid out 2x2, row-major).
  %warp = tile.warp_id
  %wm = arith.divui %warp, %c2 : index
  %wn = arith.remui %warp, %c2 : index
  %wrow = arith.muli %wm, %c32 : index
  %wcol = arith.muli %wn, %c32 : index

  %sa = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
  %sb = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  %zero = tile.zeros : !tile.rt<32x32xf32>
  %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<32x32xf32>) {
    // 128 threads, 8 f16 (16 bytes) each: A's 64x32 tile in 2 passes of 32x32, B's 32x64 in 2 of 16x64.
    tile.copy %a[%row0, %k] -> %sa thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
    tile.copy %b[%k, %col0] -> %sb thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
    tile.barrier
    %ra = tile.load %sa[%wrow, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x32xf16>
    %rb = tile.load %sb[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x32xf16>
    %d = tile.mma %ra, %rb, %acc_i atom <mma_m16n8k16_f16> : !tile.rt<32x32xf16>, !tile.rt<32x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
    tile.barrier
    scf.yield %d : !tile.rt<32x32xf32>
  }

  // The epilogue of tile.matmul, applied to this warp's accumulator.
  %row = arith.addi %row0, %wrow : index
  %col = arith.addi %col0, %wcol : index
  %bv = tile.load %bias[%col] : !tile.gl<f32, [?]> -> !tile.rv<32xf32, col>
  %bb = tile.broadcast %bv : !tile.rv<32xf32, col> -> !tile.rt<32x32xf32>
  %out = tile.map %acc, %bb : !tile.rt<32x32xf32>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf16> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %s, %z : f32
    %h = arith.truncf %r : f32 to f16
    tile.yield %h : f16
  }
  tile.store %out, %c[%row, %col] : !tile.rt<32x32xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @gemm
// CHECK:       %sa = tile.alloc : !tile.st<3x64x32xf16, Sw<2,3,3> o 0 o (3,64,32):(2048,32,1)>
// CHECK-NEXT:  %sb = tile.alloc : !tile.st<3x32x64xf16, Sw<3,3,3> o 0 o (3,32,64):(2048,64,1)>
// CHECK-NEXT:  %full = tile.mbar_init : !tile.mbar<3>
// CHECK-NEXT:  %empty = tile.mbar_init : !tile.mbar<3, warps>
// CHECK:       scf.if %more0 {
// CHECK-NEXT:    tile.mbar_expect %full[%c0], 8192 : !tile.mbar<3>
// CHECK:         tile.bulk_copy %a[%row0, %c0] -> %sa_w0, %full[%c0]
// CHECK:         tile.bulk_copy %b[%c0, %col0] -> %sb_w0, %full[%c0]
// CHECK:       scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero, %wph = %c1, %ph = %c0, %rs = %c0, %ws = %c2)
// CHECK-NEXT:    tile.mbar_wait %full[%rs], %ph : !tile.mbar<3>
// CHECK-NOT:     tile.barrier
// CHECK:         scf.if %more {
// CHECK-NEXT:      tile.mbar_wait %empty[%ws], %wph issuer : !tile.mbar<3, warps>
// CHECK-NEXT:      tile.mbar_expect %full[%ws], 8192
// CHECK:         %ra = tile.load %sa_r
// CHECK-NEXT:    %rb = tile.load %sb_r
// CHECK-NEXT:    tile.mbar_arrive %empty[%rs] : !tile.mbar<3, warps>
// CHECK-NEXT:    %d = tile.mma %ra, %rb, %acc_i
// CHECK:         %ph_flip = arith.subi %c1, %ph : index
// CHECK-NEXT:    %ph_next = arith.select %wrap, %ph_flip, %ph : index
// CHECK-NEXT:    scf.yield %d, %ph, %ph_next, %rs_next, %rs
// CHECK-NEXT:  }
// CHECK-NEXT:  tile.barrier
// CHECK-NOT:   tile.async
// CHECK:       tile.store

// CARRY:       tile.mbar_wait %full[%c0], %c0
// CARRY-NOT:   tile.barrier
// CARRY:       scf.for
// CARRY:         %ra1 = tile.load %sa_r
// CARRY-NEXT:    %rb1 = tile.load %sb_r
// CARRY-NEXT:    tile.mbar_arrive %empty[%rs]
// CARRY:         tile.mbar_wait %empty[%ws], %wph issuer
// CARRY:         %k_after = arith.addi %k, %c32 : index
// CARRY-NEXT:    %[[E:.*]] = arith.cmpi slt, %k_after, %K : index
// CARRY-NEXT:    scf.if %[[E]] {
// CARRY-NEXT:      tile.mbar_wait %full[%rs_next], %ph_next : !tile.mbar<3>
// CARRY-NEXT:    }
// CARRY-NEXT:    %sa_next = tile.stage %sa[%rs_next]
// CARRY-NOT:     tile.barrier
// CARRY:         scf.yield
// CARRY-NEXT:  }
// CARRY-NEXT:  tile.barrier

// SYNC:        %full = tile.mbar_init : !tile.mbar<3>
// SYNC-NOT:    tile.mbar_init
// SYNC:        scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero, %ph = %c0, %rs = %c0, %ws = %c2)
// SYNC-NEXT:     tile.mbar_wait %full[%rs], %ph : !tile.mbar<3>
// SYNC-NEXT:     tile.barrier
// SYNC:          scf.if %more {
// SYNC-NEXT:       tile.mbar_expect %full[%ws], 8192
// SYNC-NOT:      tile.mbar_arrive
// SYNC:          scf.yield %{{.*}}, %ph_next, %rs_next, %rs
// SYNC-NEXT:   }
// SYNC-NEXT:   tile.barrier

// Bulk copies complete on transaction barriers, not cp.async's wait groups, so such a loop takes up
// to 16 stages (cp.async: 9). Twelve: the prologue fills stages 0 .. 10, the loop writes stage 11 first.
// RUN: tile-opt %s -p 'tile-pipeline{stages=12 bulk=true reg-double-buffer=false}' | filecheck %s --check-prefix=DEEP
// DEEP:       %sa = tile.alloc : !tile.st<12x64x32xf16, Sw<2,3,3> o 0 o (12,64,32):(2048,32,1)>
// DEEP-NEXT:  %sb = tile.alloc : !tile.st<12x32x64xf16, Sw<3,3,3> o 0 o (12,32,64):(2048,64,1)>
// DEEP-NEXT:  %full = tile.mbar_init : !tile.mbar<12>
// DEEP:       tile.mbar_expect %full[%c10], 8192 : !tile.mbar<12>
// DEEP-NOT:   tile.mbar_expect %full[%c11]
// DEEP:       scf.for %k = %c0 to %K step %c32 iter_args({{.*}}%ws = %c11)
// DEEP-NEXT:    tile.mbar_wait %full[%rs], %ph : !tile.mbar<12>
