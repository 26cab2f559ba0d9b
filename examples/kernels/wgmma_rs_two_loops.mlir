// S = q @ k.T (tile.wgmma with transpose_b: k stored N x K), then S @ k with A from each warp's
// registers (the shape of attention's P @ V), in two K loops over the same shared tile of k (an
// unmasked loop and its last tiles). Traced from a tilec.lang kernel; input of the lit tests
// tests/lit/passes/{tile-swizzle,tile-pipeline,tile-distribute}/wgmma_*.mlir.
builtin.module {
  func.func @qk_pv(%q: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %k: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}, %full: i32) attributes {tile.launch = #tile.launch<grid = [?, ?, ?], block = [128, 1, 1], smem = 16384>} {
    %0 = arith.constant 0 : index
    %1 = arith.constant 64 : index
    %k_dim0 = tile.dim %k, 0 : !tile.gl<f16, [?, ?]>
    %2 = arith.constant 5.000000e-01 : f32
    %3 = arith.constant 16 : index
    %smem = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
    %smem_1 = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
    tile.copy %q[%0, %0] -> %smem thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    %4 = tile.zeros : !tile.rt<16x64xf32>
    %5 = arith.index_cast %full : i32 to index
    %acc = scf.for %n0 = %0 to %5 step %1 iter_args(%acc_1 = %4) -> (!tile.rt<16x64xf32>) {
      tile.copy %k[%n0, %0] -> %smem_1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
      tile.barrier
      %6 = tile.zeros : !tile.rt<16x64xf32>
      %7 = tile.wgmma %smem[%0], %smem_1[%0], %6 transpose_b : !tile.st<64x64xf16, (64,64):(64,1)>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
      %8 = tile.convert %7 : !tile.rt<16x64xf32> -> !tile.rt<16x64xf16>
      %9 = tile.wgmma %8, %smem_1[%0], %acc_1 : !tile.rt<16x64xf16>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
      tile.barrier
      scf.yield %9 : !tile.rt<16x64xf32>
    }
    %10 = arith.index_cast %full : i32 to index
    %acc_2 = scf.for %n0_1 = %10 to %k_dim0 step %1 iter_args(%acc_3 = %acc) -> (!tile.rt<16x64xf32>) {
      tile.copy %k[%n0_1, %0] -> %smem_1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
      tile.barrier
      %11 = tile.zeros : !tile.rt<16x64xf32>
      %12 = tile.wgmma %smem[%0], %smem_1[%0], %11 transpose_b : !tile.st<64x64xf16, (64,64):(64,1)>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
      %13 = tile.convert %12 : !tile.rt<16x64xf32> -> !tile.rt<16x64xf16>
      %14 = tile.fill %2 : f32 -> !tile.rt<16x64xf32>
      %15 = tile.mul %acc_3, %14 : !tile.rt<16x64xf32>
      %16 = tile.wgmma %13, %smem_1[%0], %15 : !tile.rt<16x64xf16>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
      tile.barrier
      scf.yield %16 : !tile.rt<16x64xf32>
    }
    %warp = tile.warp_id
    %17 = arith.muli %warp, %3 : index
    tile.store %acc_2, %o[%17, %0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
    func.return
  }
}
