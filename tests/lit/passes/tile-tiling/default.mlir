// RUN: tile-opt %s -p tile-tiling | filecheck %s

// The default config (block 128x128x32, 4x2 warps of 32x64, grouped order with
// GROUP_M = 8, mma.sync m16n8k16 for f16) on C = relu(A @ B + bias) in f16:
// the whole-problem matmul becomes the warp-level program of
// examples/levels/gemm_warp_level.mlir.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>) {
  tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [?]>) : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %s, %z : f32
    %h = arith.truncf %r : f32 to f16
    tile.yield %h : f16
  }
  func.return
}

// CHECK:      func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>)
// CHECK-SAME:   tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 16384>
// CHECK-SAME:   tile.tiling = {block = array<i64: 128, 128, 32>, warps = array<i64: 4, 2>, group = 8 : i64, warp_tile = array<i64: 32, 64>, warp_layout = #tile.layout<(4,2):(2,1)>, atom = #tile.mma_atom<mma_m16n8k16_f16>, atoms = array<i64: 2, 8, 2>}
// CHECK-NEXT: %c0 = arith.constant 0 : index
// CHECK-NEXT: %c2 = arith.constant 2 : index
// CHECK-NEXT: %c8 = arith.constant 8 : index
// CHECK-NEXT: %c32 = arith.constant 32 : index
// CHECK-NEXT: %c64 = arith.constant 64 : index
// CHECK-NEXT: %c127 = arith.constant 127 : index
// CHECK-NEXT: %c128 = arith.constant 128 : index
// CHECK-NEXT: %M = tile.dim %a, 0 : !tile.gl<f16, [?, ?]>
// CHECK-NEXT: %K = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
// CHECK-NEXT: %N = tile.dim %b, 1 : !tile.gl<f16, [?, ?]>
// CHECK-NEXT: %bid = tile.block_id x
// CHECK-NEXT: %m_pad = arith.addi %M, %c127 : index
// CHECK-NEXT: %tiles_m = arith.divui %m_pad, %c128 : index
// CHECK-NEXT: %n_pad = arith.addi %N, %c127 : index
// CHECK-NEXT: %tiles_n = arith.divui %n_pad, %c128 : index
// CHECK-NEXT: %width = arith.muli %tiles_n, %c8 : index
// CHECK-NEXT: %group = arith.divui %bid, %width : index
// CHECK-NEXT: %first_m = arith.muli %group, %c8 : index
// CHECK-NEXT: %left_m = arith.subi %tiles_m, %first_m : index
// CHECK-NEXT: %group_m = arith.minui %left_m, %c8 : index
// CHECK-NEXT: %in_group = arith.remui %bid, %width : index
// CHECK-NEXT: %pid_m_off = arith.remui %in_group, %group_m : index
// CHECK-NEXT: %pid_m = arith.addi %first_m, %pid_m_off : index
// CHECK-NEXT: %pid_n = arith.divui %in_group, %group_m : index
// CHECK-NEXT: %row0 = arith.muli %pid_m, %c128 : index
// CHECK-NEXT: %col0 = arith.muli %pid_n, %c128 : index
// CHECK-NEXT: %warp = tile.warp_id
// CHECK-NEXT: %wm = arith.divui %warp, %c2 : index
// CHECK-NEXT: %wn = arith.remui %warp, %c2 : index
// CHECK-NEXT: %wrow = arith.muli %wm, %c32 : index
// CHECK-NEXT: %wcol = arith.muli %wn, %c64 : index
// CHECK-NEXT: %sa = tile.alloc : !tile.st<128x32xf16, (128,32):(32,1)>
// CHECK-NEXT: %sb = tile.alloc : !tile.st<32x128xf16, (32,128):(128,1)>
// CHECK-NEXT: %zero = tile.zeros : !tile.rt<32x64xf32>
// CHECK-NEXT: %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<32x64xf32>) {
// CHECK-NEXT:   tile.copy %a[%row0, %k] -> %sa thr <(64,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<128x32xf16, (128,32):(32,1)>
// CHECK-NEXT:   tile.copy %b[%k, %col0] -> %sb thr <(16,16):(16,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x128xf16, (32,128):(128,1)>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %ra = tile.load %sa[%wrow, %c0] : !tile.st<128x32xf16, (128,32):(32,1)> -> !tile.rt<32x32xf16>
// CHECK-NEXT:   %rb = tile.load %sb[%c0, %wcol] : !tile.st<32x128xf16, (32,128):(128,1)> -> !tile.rt<32x64xf16>
// CHECK-NEXT:   %d = tile.mma %ra, %rb, %acc_i atom <mma_m16n8k16_f16> : !tile.rt<32x32xf16>, !tile.rt<32x64xf16>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf32>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   scf.yield %d : !tile.rt<32x64xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %row = arith.addi %row0, %wrow : index
// CHECK-NEXT: %col = arith.addi %col0, %wcol : index
// CHECK-NEXT: %bias_v = tile.load %bias[%col] : !tile.gl<f32, [?]> -> !tile.rv<64xf32, col>
// CHECK-NEXT: %bias_t = tile.broadcast %bias_v : !tile.rv<64xf32, col> -> !tile.rt<32x64xf32>
// CHECK-NEXT: %out = tile.map %acc, %bias_t : !tile.rt<32x64xf32>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf16> {
// CHECK-NEXT:   ^bb0(%x: f32, %y: f32):
// CHECK-NEXT:   %s = arith.addf %x, %y : f32
// CHECK-NEXT:   %z = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %r = arith.maximumf %s, %z : f32
// CHECK-NEXT:   %h = arith.truncf %r : f32 to f16
// CHECK-NEXT:   tile.yield %h : f16
// CHECK-NEXT: }
// CHECK-NEXT: tile.store %out, %c[%row, %col] : !tile.rt<32x64xf16> -> !tile.gl<f16, [?, ?]>
// CHECK-NEXT: func.return
// CHECK-NOT:  tile.matmul
