// RUN: tile-opt %s -p 'tile-tiling{block=128,256,128 wgmma=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-tiling{block=128,256,128 wgmma=true},tile-swizzle,tile-pipeline{stages=3 bulk=true},tile-layout,tile-distribute' | filecheck %s --check-prefix=DIST
// RUN: tile-opt %s -p 'tile-to-ptx{block=128,256,128 stages=3 bulk=true wgmma=true producer=true persistent=true bulk_store=true}' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// An FP8 GEMM as torch._scaled_mm computes it: e4m3 A (M x K) and B stored N x K, per-tensor scales
// (rank-1 inputs of static extent [1]: one number for every element), f32 accumulation, bf16 out.
// tile-tiling reads both operands K-major (tile.wgmma ... transpose_b; FP8 wgmma has no transpose),
// each scale is one tile.load_scalar whose value the epilogue's tile.map body uses directly (no
// vector of copies in registers). A K step of 128 one-byte elements is a 128-byte row: the 128-byte
// swizzle and the same stage bytes as the f16 tile's 64.

func.func @scaled(%a: !tile.gl<f8E4M3FN, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f8E4M3FN, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<bf16, [?, ?]> {tile.aligned_rows = 16 : i64}, %sa: !tile.gl<f32, [1]>, %sb: !tile.gl<f32, [1]>) {
  tile.matmul %a, %b -> %c epilogue(%sa, %sb : !tile.gl<f32, [1]>, !tile.gl<f32, [1]>) transpose_b : !tile.gl<f8E4M3FN, [?, ?]>, !tile.gl<f8E4M3FN, [?, ?]> -> !tile.gl<bf16, [?, ?]> {
  ^bb0(%acc: f32, %x: f32, %y: f32):
    %0 = arith.mulf %acc, %x : f32
    %1 = arith.mulf %0, %y : f32
    %2 = arith.truncf %1 : f32 to bf16
    tile.yield %2 : bf16
  }
  func.return
}

// CHECK:       %sa_1 = tile.alloc : !tile.st<128x128xf8E4M3FN, (128,128):(128,1)>
// CHECK:       %sb_1 = tile.alloc : !tile.st<256x128xf8E4M3FN, (256,128):(128,1)>
// CHECK:         %d = tile.wgmma %sa_1[%wg_row], %sb_1[%c0], %acc_i transpose_b : !tile.st<128x128xf8E4M3FN, (128,128):(128,1)>, !tile.st<256x128xf8E4M3FN, (256,128):(128,1)>, !tile.rt<16x256xf32> -> !tile.rt<16x256xf32>
// CHECK:       %sa_s = tile.load_scalar %sa[%c0] : !tile.gl<f32, [1]> -> f32
// CHECK-NEXT:  %sb_s = tile.load_scalar %sb[%c0] : !tile.gl<f32, [1]> -> f32
// CHECK-NEXT:  %out = tile.map %acc : !tile.rt<16x256xf32> -> !tile.rt<16x256xbf16> {
// CHECK-NEXT:  ^bb0(%acc_1: f32):
// CHECK-NEXT:    %{{.*}} = arith.mulf %acc_1, %sa_s : f32
// CHECK-NEXT:    %{{.*}} = arith.mulf %{{.*}}, %sb_s : f32

// tile-distribute: four K = 32 e4m3 wgmmas a stage on K-major descriptors (no trans_a/trans_b), and each
// scale one unpredicated load (the static [1] view is in bounds) that every element's mulf reads.
// DIST-COUNT-4: frag.wgmma "e4m3" n 256 %{{[0-9]+}}, %{{[0-9]+}}(
// DIST-NOT:    trans_
// DIST:        %sa_s = frag.load %sa : !llvm.ptr<1> -> f32
// DIST-NEXT:   %sb_s = frag.load %sb : !llvm.ptr<1> -> f32
// DIST-NEXT:   arith.mulf %acc{{.*}}, %sa_s : f32

// The producer's TMA loads, the consumers' TMA stores of C (the loop's tail, laid out first), then the
// K loop's four K = 32 wgmmas a stage (no transpose operands: FP8 is K-major only).
// PTX:     .target sm_90a
// PTX:     cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:     cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1;
// PTX-NOT: wgmma.mma_async
