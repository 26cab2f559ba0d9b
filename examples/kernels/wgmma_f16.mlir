// One block's 128x128 = (128x64 f16) @ (64x128 f16) with sm_90a's warpgroup MMA.
//
//   tile-opt examples/kernels/wgmma_f16.mlir -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90a}'
//
// Thread 0 brings A and B into shared memory with bulk tensor copies (the
// 128-byte swizzled layouts a tensor map writes: A K-major, B as two 64-column
// boxes, N-major), every thread waits for the barrier, then each of the two
// warpgroups (warps 0-3 and 4-7) multiplies its 64-row band of A by all of B:
// warp w holds rows 16w .. 16w+15 of C in its 16x128 accumulator.

func.func @wgmma_f16(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [256, 1, 1], smem = 32768>} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %bars = tile.mbar_init : !tile.mbar<1>
  %sa = tile.alloc : !tile.st<128x64xf16, Sw<3,3,3> o 0 o (128,64):(64,1)>
  %sb = tile.alloc : !tile.st<64x128xf16, Sw<3,3,3> o 0 o (64,(64,2)):(64,(1,4096))>
  tile.mbar_expect %bars[%c0], 32768 : !tile.mbar<1>
  tile.bulk_copy %a[%c0, %c0] -> %sa, %bars[%c0] : !tile.gl<f16, [?, ?]> -> !tile.st<128x64xf16, Sw<3,3,3> o 0 o (128,64):(64,1)>, !tile.mbar<1>
  tile.bulk_copy %b[%c0, %c0] -> %sb, %bars[%c0] : !tile.gl<f16, [?, ?]> -> !tile.st<64x128xf16, Sw<3,3,3> o 0 o (64,(64,2)):(64,(1,4096))>, !tile.mbar<1>
  tile.mbar_wait %bars[%c0], %c0 : !tile.mbar<1>
  %w = tile.warp_id
  %g = arith.divui %w, %c4 : index
  %row = arith.muli %g, %c64 : index
  %zero = tile.zeros : !tile.rt<16x128xf32>
  %acc = tile.wgmma %sa[%row], %sb[%c0], %zero : !tile.st<128x64xf16, Sw<3,3,3> o 0 o (128,64):(64,1)>, !tile.st<64x128xf16, Sw<3,3,3> o 0 o (64,(64,2)):(64,(1,4096))>, !tile.rt<16x128xf32> -> !tile.rt<16x128xf32>
  %r = arith.muli %w, %c16 : index
  tile.store %acc, %c[%r, %c0] : !tile.rt<16x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
