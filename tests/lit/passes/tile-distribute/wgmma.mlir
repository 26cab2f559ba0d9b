// RUN: tile-opt %S/../../../../examples/kernels/wgmma_f16.mlir -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %S/../../../../examples/kernels/wgmma_f16.mlir -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX
// RUN: not tile-opt %s -p tile-layout,tile-distribute 2>&1 | filecheck %s --check-prefix=ERR
// RUN: tile-opt %S/../../../../examples/kernels/wgmma_f16.mlir -p tile-layout,tile-distribute | filecheck %s --check-prefix=NOFENCE

// Bulk copies write the operands through the async proxy, as wgmma reads them: no proxy fence.
// NOFENCE-NOT: frag.fence_proxy_async

// tile.wgmma at fragment level (input: examples/kernels/wgmma_f16.mlir). A's
// band of warpgroup %row / 64 starts %row / 64 * 8192 bytes into %sa; its
// descriptor (K-major, SBO 1024, 128-byte swizzle: 0x4000004000000000) gets
// 32 bytes (2 units of 16) more per K step of 16; B's (N-major, LBO 8192,
// SBO 1024: 0x4000004002000000) 2048 bytes (128 units) more. Four m64n128k16
// wgmmas (B N-major: trans_b) between a fence and a commit, then a wait that
// hands the 64 accumulators back.

// CHECK:       %[[R:.*]] = arith.index_cast %row : index to i32
// CHECK-NEXT:  %[[Q:.*]] = arith.shrui %[[R]], %{{.*}} : i32
// CHECK-NEXT:  %[[O:.*]] = arith.shli %[[Q]], %{{.*}} : i32
// CHECK-NEXT:  %[[P:.*]] = llvm.getelementptr %sa[%[[O]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT:  %[[DA:.*]] = frag.wgmma_desc %[[P]], 4611686293305294848 : !llvm.ptr<3>
// CHECK-NEXT:  %[[DA1:.*]] = arith.addi %[[DA]], %{{.*}} : i64
// CHECK:       %[[DB:.*]] = frag.wgmma_desc %sb, 4611686293338849280 : !llvm.ptr<3>
// CHECK:       frag.wgmma_fence
// CHECK-NEXT:  frag.wgmma "f16" n 128 %[[DA]], %[[DB]] trans_b(
// CHECK-NEXT:  frag.wgmma "f16" n 128 %[[DA1]], %{{.*}} trans_b(
// CHECK-NEXT:  frag.wgmma
// CHECK-NEXT:  frag.wgmma
// CHECK-NEXT:  frag.wgmma_commit
// CHECK-NEXT:  %acc, {{.*}}, %acc_63 = frag.wgmma_wait 0(

// PTX:         .target sm_90a
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 1;
// PTX:         wgmma.commit_group.sync.aligned;
// PTX:         wgmma.wait_group.sync.aligned 0;

// A plain row-major A tile is no layout a wgmma descriptor describes.
func.func @unswizzled() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16384>} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %sb = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %z = tile.zeros : !tile.rt<16x64xf32>
  %d = tile.wgmma %sa[%c0], %sb[%c0], %z : !tile.st<64x64xf16, (64,64):(64,1)>, !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// ERR: error: tile-distribute: 'tile.wgmma' at {{.*}}wgmma.mlir:43:8: no wgmma descriptor describes the operands: layout (64,64):(64,1) has no 32/64/128-byte swizzle
// ERR-SAME:    of the tensor-map kind a wgmma descriptor needs{{$}}
