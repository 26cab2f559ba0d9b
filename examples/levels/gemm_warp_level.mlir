// The warp-level GEMM: what tile-tiling makes of a whole-problem tile.matmul,
// and what tile-swizzle, tile-pipeline, tile-layout and tile-distribute then work on.
//
// Config: block tile 64x64x32 (BM, BN, BK), 2x2 warps (128 threads), warp
// tile 32x32, mma.sync m16n8k16 f16 -> f32, grouped block order (GROUP_M = 8).
// C = relu(A @ B + bias) in f16. A is M x K, B is K x N, both row-major.
//
// Every warp runs this body (tile.warp_id picks its 32x32 part of the block
// tile); the block cooperates on the shared tiles through tile.copy's
// thread/value layouts and tile.barrier. Global windows are addressed by the
// element coordinates of their origin; reads past the edges give zero and
// writes there are dropped, so any M, N, K works.

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
