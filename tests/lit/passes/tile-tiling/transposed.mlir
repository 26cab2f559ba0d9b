// RUN: tile-opt %s -p 'tile-tiling{block=64,128,32 warps=1,4 group=4}' | filecheck %s

// C = A^T B^T * scale + res in bf16, A stored K x M, B stored N x K, a rank-1
// (per column) and a rank-2 (per element) epilogue input; block 64x128x32,
// 1x4 warps of 64x32, GROUP_M = 4. Shared tiles keep the global orientation
// (A: BK x BM, B: BN x BK) and the mma says so with transpose_a/transpose_b.

func.func @gemm_tt(%a: !tile.gl<bf16, [?, ?]>, %b: !tile.gl<bf16, [?, ?]>, %c: !tile.gl<bf16, [?, ?]>, %scale: !tile.gl<f32, [?]>, %res: !tile.gl<bf16, [?, ?]>) {
  tile.matmul %a, %b -> %c epilogue(%scale, %res : !tile.gl<f32, [?]>, !tile.gl<bf16, [?, ?]>) transpose_a transpose_b : !tile.gl<bf16, [?, ?]>, !tile.gl<bf16, [?, ?]> -> !tile.gl<bf16, [?, ?]> {
  ^bb0(%acc: f32, %s: f32, %r: bf16):
    %x = arith.extf %r : bf16 to f32
    %p = arith.mulf %acc, %s : f32
    %y = arith.addf %p, %x : f32
    %o = arith.truncf %y : f32 to bf16
    tile.yield %o : bf16
  }
  func.return
}

// CHECK:      func.func @gemm_tt(
// CHECK-SAME:   tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 12288>
// CHECK-SAME:   tile.tiling = {block = array<i64: 64, 128, 32>, warps = array<i64: 1, 4>, group = 4 : i64, warp_tile = array<i64: 64, 32>, warp_layout = #tile.layout<(1,4):(4,1)>, atom = #tile.mma_atom<mma_m16n8k16_bf16>, atoms = array<i64: 4, 4, 2>}
// CHECK:      %M = tile.dim %a, 1 : !tile.gl<bf16, [?, ?]>
// CHECK-NEXT: %K = tile.dim %a, 0 : !tile.gl<bf16, [?, ?]>
// CHECK-NEXT: %N = tile.dim %b, 0 : !tile.gl<bf16, [?, ?]>
// CHECK:      %width = arith.muli %tiles_n, %c4 : index
// CHECK:      %group_m = arith.minui %left_m, %c4 : index
// CHECK:      %row0 = arith.muli %pid_m, %c64 : index
// CHECK-NEXT: %col0 = arith.muli %pid_n, %c128 : index
// One warp row: warp_row = 1:0 (no code), warp_col = 4:32.
// CHECK-NEXT: %warp = tile.warp_id
// CHECK-NEXT: %wcol = arith.muli %warp, %c32 : index
// CHECK-NEXT: %sa = tile.alloc : !tile.st<32x64xbf16, (32,64):(64,1)>
// CHECK-NEXT: %sb = tile.alloc : !tile.st<128x32xbf16, (128,32):(32,1)>
// CHECK-NEXT: %zero = tile.zeros : !tile.rt<64x32xf32>
// CHECK-NEXT: %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<64x32xf32>) {
// CHECK-NEXT:   tile.copy %a[%k, %row0] -> %sa thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<bf16, [?, ?]> -> !tile.st<32x64xbf16, (32,64):(64,1)>
// CHECK-NEXT:   tile.copy %b[%col0, %k] -> %sb thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<bf16, [?, ?]> -> !tile.st<128x32xbf16, (128,32):(32,1)>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %ra = tile.load %sa[%c0, %c0] : !tile.st<32x64xbf16, (32,64):(64,1)> -> !tile.rt<32x64xbf16>
// CHECK-NEXT:   %rb = tile.load %sb[%wcol, %c0] : !tile.st<128x32xbf16, (128,32):(32,1)> -> !tile.rt<32x32xbf16>
// CHECK-NEXT:   %d = tile.mma %ra, %rb, %acc_i transpose_a transpose_b atom <mma_m16n8k16_bf16> : !tile.rt<32x64xbf16>, !tile.rt<32x32xbf16>, !tile.rt<64x32xf32> -> !tile.rt<64x32xf32>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   scf.yield %d : !tile.rt<64x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %col = arith.addi %col0, %wcol : index
// CHECK-NEXT: %scale_v = tile.load %scale[%col] : !tile.gl<f32, [?]> -> !tile.rv<32xf32, col>
// CHECK-NEXT: %scale_t = tile.broadcast %scale_v : !tile.rv<32xf32, col> -> !tile.rt<64x32xf32>
// CHECK-NEXT: %res_t = tile.load %res[%row0, %col] : !tile.gl<bf16, [?, ?]> -> !tile.rt<64x32xbf16>
// CHECK-NEXT: %out = tile.map %acc, %scale_t, %res_t : !tile.rt<64x32xf32>, !tile.rt<64x32xf32>, !tile.rt<64x32xbf16> -> !tile.rt<64x32xbf16> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %s: f32, %r: bf16):
// CHECK:        tile.yield %o : bf16
// CHECK-NEXT: }
// CHECK-NEXT: tile.store %out, %c[%row0, %col] : !tile.rt<64x32xbf16> -> !tile.gl<bf16, [?, ?]>
