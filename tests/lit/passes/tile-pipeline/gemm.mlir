// RUN: tile-opt %s -p 'tile-pipeline{stages=3}' | filecheck %s --check-prefix=S3
// RUN: tile-opt %s -p 'tile-pipeline{stages=2 reg-double-buffer=false}' | filecheck %s --check-prefix=S2
// RUN: tile-opt %s -p 'tile-pipeline{stages=1 reg-double-buffer=false}' | filecheck %s --check-prefix=S1
// RUN: tile-opt %s -p 'tile-pipeline{stages=3},tile-pipeline{stages=3}' | filecheck %s --check-prefix=S3
// RUN: tile-opt %s -p 'tile-pipeline{stages=3 carry-fragments=false}' | filecheck %s --check-prefix=NC

// Input: the warp-level GEMM of examples/levels/gemm_warp_level.mlir (the
// contract between tile-tiling and the later passes). Its K loop copies A and
// B tiles to shared memory, waits at a barrier, loads the warp's windows,
// runs the mma and waits at a second barrier before the next copy.
//
// Output: each shared tile gets N stages (one !tile.st<Nx..> buffer, a stage
// picked by tile.stage); a prologue issues K tiles 0 .. N-2 as cp.async
// (tile.async_copy, one commit group per K tile, skipped past K but still
// committed); every iteration waits for its stage (tile.async_wait N-2),
// synchronises once, issues K tile i+N-1 into the stage the previous
// iteration read (unguarded: past K it reads zeros), commits, and computes on its stage; the loop carries the
// read and write stage. With register double-buffering (default) the warp's
// 32-wide K tile is two m16n8k16 K steps and the second step's loads come first
// in the body (ahead of the copies); the first step's fragments of the next K tile are loaded
// before the last mma of this one (the wait and barrier move there) and are
// carried across the back-edge as iter_args, the first tile's loaded before
// the loop. stages=1 leaves the loop synchronous; running the pass twice
// changes nothing more.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>)
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

// stages=3: three stages of each tile (smem 3 x 8192), K tiles 0 and 1 in flight before the loop.
// S3:  %sa = tile.alloc : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)>
// S3-NEXT:  %sb = tile.alloc : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)>
// S3-NEXT:  %zero = tile.zeros : !tile.rt<32x32xf32>
// S3-NEXT:  %c3 = arith.constant 3 : index
// S3-NEXT:  %more0 = arith.cmpi slt, %c0, %K : index
// S3-NEXT:  scf.if %more0 {
// S3-NEXT:  %sa_w0 = tile.stage %sa[%c0] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  tile.async_copy %a[%row0, %c0] -> %sa_w0 thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  %sb_w0 = tile.stage %sb[%c0] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  tile.async_copy %b[%c0, %col0] -> %sb_w0 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  }
// S3-NEXT:  tile.async_commit
// S3-NEXT:  %more1 = arith.cmpi slt, %c32, %K : index
// S3-NEXT:  scf.if %more1 {
// S3-NEXT:  %sa_w1 = tile.stage %sa[%c1] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  tile.async_copy %a[%row0, %c32] -> %sa_w1 thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  %sb_w1 = tile.stage %sb[%c1] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  tile.async_copy %b[%c32, %col0] -> %sb_w1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  }
// S3-NEXT:  tile.async_commit
// S3-NEXT:  tile.async_wait 1
// S3-NEXT:  tile.barrier
// S3-NEXT:  %sa_first = tile.stage %sa[%c0] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  %ra0_first = tile.load %sa_first[%wrow, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x16xf16>
// S3-NEXT:  %sb_first = tile.stage %sb[%c0] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  %rb0_first = tile.load %sb_first[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<16x32xf16>
// S3-NEXT:  %acc, %rs_end, %ws_end, %ra0_end, %rb0_end = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero, %rs = %c0, %ws = %c2, %ra0_c = %ra0_first, %rb0_c = %rb0_first) -> (!tile.rt<32x32xf32>, index, index, !tile.rt<32x16xf16>, !tile.rt<16x32xf16>) {
// S3-NEXT:  %sa_r = tile.stage %sa[%rs] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  %sb_r = tile.stage %sb[%rs] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  %c16 = arith.constant 16 : index
// S3-NEXT:  %ra1 = tile.load %sa_r[%wrow, %c16] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x16xf16>
// S3-NEXT:  %rb1 = tile.load %sb_r[%c16, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<16x32xf16>
// S3-NEXT:  %k_next = arith.addi %k, %c64 : index
// S3-NEXT:  %sa_w = tile.stage %sa[%ws] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  tile.async_copy %a[%row0, %k_next] -> %sa_w thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  %sb_w = tile.stage %sb[%ws] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  tile.async_copy %b[%k_next, %col0] -> %sb_w thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  tile.async_commit
// S3-NEXT:  %d0 = tile.mma %ra0_c, %rb0_c, %acc_i atom <mma_m16n8k16_f16> : !tile.rt<32x16xf16>, !tile.rt<16x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
// S3-NEXT:  %rs_inc = arith.addi %rs, %c1 : index
// S3-NEXT:  %wrap = arith.cmpi eq, %rs_inc, %c3 : index
// S3-NEXT:  %rs_next = arith.select %wrap, %c0, %rs_inc : index
// S3-NEXT:  tile.async_wait 1
// S3-NEXT:  tile.barrier
// S3-NEXT:  %sa_next = tile.stage %sa[%rs_next] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// S3-NEXT:  %ra0_next = tile.load %sa_next[%wrow, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x16xf16>
// S3-NEXT:  %sb_next = tile.stage %sb[%rs_next] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// S3-NEXT:  %rb0_next = tile.load %sb_next[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<16x32xf16>
// S3-NEXT:  %d = tile.mma %ra1, %rb1, %d0 atom <mma_m16n8k16_f16> : !tile.rt<32x16xf16>, !tile.rt<16x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
// S3-NEXT:  scf.yield %d, %rs_next, %rs, %ra0_next, %rb0_next : !tile.rt<32x32xf32>, index, index, !tile.rt<32x16xf16>, !tile.rt<16x32xf16>
// S3-NEXT:  }
// S3-NEXT:  tile.async_wait 0
// S3-NEXT:  tile.barrier
// S3-NOT: tile.copy
// S3-NOT: tile.barrier
// S3: func.return

// carry-fragments=false: the wait and barrier stay at the top of the body and
// both K steps are loaded inside the iteration (before the carried form existed).
// NC-LABEL: func.func @gemm
// NC-SAME: smem = 24576
// NC:  %sa = tile.alloc : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)>
// NC-NEXT:  %sb = tile.alloc : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)>
// NC-NEXT:  %zero = tile.zeros : !tile.rt<32x32xf32>
// NC-NEXT:  %c3 = arith.constant 3 : index
// NC-NEXT:  %more0 = arith.cmpi slt, %c0, %K : index
// NC-NEXT:  scf.if %more0 {
// NC-NEXT:  %sa_w0 = tile.stage %sa[%c0] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  tile.async_copy %a[%row0, %c0] -> %sa_w0 thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  %sb_w0 = tile.stage %sb[%c0] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  tile.async_copy %b[%c0, %col0] -> %sb_w0 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  }
// NC-NEXT:  tile.async_commit
// NC-NEXT:  %more1 = arith.cmpi slt, %c32, %K : index
// NC-NEXT:  scf.if %more1 {
// NC-NEXT:  %sa_w1 = tile.stage %sa[%c1] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  tile.async_copy %a[%row0, %c32] -> %sa_w1 thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  %sb_w1 = tile.stage %sb[%c1] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  tile.async_copy %b[%c32, %col0] -> %sb_w1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  }
// NC-NEXT:  tile.async_commit
// NC-NEXT:  %acc, %rs_end, %ws_end = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero, %rs = %c0, %ws = %c2) -> (!tile.rt<32x32xf32>, index, index) {
// NC-NEXT:  tile.async_wait 1
// NC-NEXT:  tile.barrier
// NC-NEXT:  %k_next = arith.addi %k, %c64 : index
// NC-NEXT:  %sa_w = tile.stage %sa[%ws] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  tile.async_copy %a[%row0, %k_next] -> %sa_w thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  %sb_w = tile.stage %sb[%ws] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  tile.async_copy %b[%k_next, %col0] -> %sb_w thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  tile.async_commit
// NC-NEXT:  %sa_r = tile.stage %sa[%rs] : !tile.st<3x64x32xf16, (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, (64,32):(32,1)>
// NC-NEXT:  %sb_r = tile.stage %sb[%rs] : !tile.st<3x32x64xf16, (3,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// NC-NEXT:  %c16 = arith.constant 16 : index
// NC-NEXT:  %ra0 = tile.load %sa_r[%wrow, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x16xf16>
// NC-NEXT:  %rb0 = tile.load %sb_r[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<16x32xf16>
// NC-NEXT:  %ra1 = tile.load %sa_r[%wrow, %c16] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x16xf16>
// NC-NEXT:  %rb1 = tile.load %sb_r[%c16, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<16x32xf16>
// NC-NEXT:  %d0 = tile.mma %ra0, %rb0, %acc_i atom <mma_m16n8k16_f16> : !tile.rt<32x16xf16>, !tile.rt<16x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
// NC-NEXT:  %d = tile.mma %ra1, %rb1, %d0 atom <mma_m16n8k16_f16> : !tile.rt<32x16xf16>, !tile.rt<16x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
// NC-NEXT:  %rs_inc = arith.addi %rs, %c1 : index
// NC-NEXT:  %wrap = arith.cmpi eq, %rs_inc, %c3 : index
// NC-NEXT:  %rs_next = arith.select %wrap, %c0, %rs_inc : index
// NC-NEXT:  scf.yield %d, %rs_next, %rs : !tile.rt<32x32xf32>, index, index
// NC-NEXT:  }
// NC-NEXT:  tile.async_wait 0
// NC-NEXT:  tile.barrier
// NC-NOT: tile.copy
// NC-NOT: tile.barrier
// NC: func.return

// stages=2 (double buffering), no register double-buffering: one K tile in
// flight before the loop, tile.async_wait 0 in it, the mma untouched.
// S2-LABEL: func.func @gemm
// S2-SAME:  smem = 16384
// S2:       %sa = tile.alloc : !tile.st<2x64x32xf16, (2,64,32):(2048,32,1)>
// S2-NEXT:  %sb = tile.alloc : !tile.st<2x32x64xf16, (2,32,64):(2048,64,1)>
// S2:       scf.if %more0 {
// S2:         tile.async_copy %a[%row0, %c0] -> %sa_w0
// S2:         tile.async_copy %b[%c0, %col0] -> %sb_w0
// S2:       tile.async_commit
// S2-NEXT:  %acc, %rs_end, %ws_end = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero, %rs = %c0, %ws = %c1)
// S2-NEXT:    tile.async_wait 0
// S2-NEXT:    tile.barrier
// S2-NEXT:    %k_next = arith.addi %k, %c32 : index
// S2-NEXT:    %sa_w = tile.stage %sa[%ws]
// S2-NEXT:    tile.async_copy %a[%row0, %k_next] -> %sa_w
// S2-NEXT:    %sb_w = tile.stage %sb[%ws]
// S2-NEXT:    tile.async_copy %b[%k_next, %col0] -> %sb_w
// S2-NEXT:    tile.async_commit
// S2-NEXT:    %sa_r = tile.stage %sa[%rs]
// S2-NEXT:    %sb_r = tile.stage %sb[%rs]
// S2-NEXT:    %ra = tile.load %sa_r[%wrow, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x32xf16>
// S2-NEXT:    %rb = tile.load %sb_r[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x32xf16>
// S2-NEXT:    %d = tile.mma %ra, %rb, %acc_i
// S2-NEXT:    %rs_inc = arith.addi %rs, %c1 : index
// S2-NEXT:    %wrap = arith.cmpi eq, %rs_inc, %c2 : index
// S2-NEXT:    %rs_next = arith.select %wrap, %c0, %rs_inc : index
// S2-NEXT:    scf.yield %d, %rs_next, %rs : !tile.rt<32x32xf32>, index, index
// S2-NEXT:  }
// S2-NEXT:  tile.async_wait 0
// S2-NEXT:  tile.barrier

// stages=1: the loop stays synchronous.
// S1-LABEL: func.func @gemm
// S1-SAME:  smem = 8192
// S1:       %sa = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
// S1-NOT:   tile.async
// S1:       scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<32x32xf32>) {
// S1-NEXT:    tile.copy %a[%row0, %k] -> %sa
// S1-NEXT:    tile.copy %b[%k, %col0] -> %sb
// S1-NEXT:    tile.barrier
// S1-NOT:   tile.async
