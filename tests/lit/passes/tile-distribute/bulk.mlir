// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm | filecheck %s --check-prefix=LLVM
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX

// Bulk tensor copies at fragment level. The view %a, read by tile.bulk_copy,
// gets a tensor-map parameter after its strides (box 32x64, 128-byte swizzle:
// the layout of %s); thread 0 prefetches the map, initialises the barriers (one block
// barrier after both), announces the bytes and
// issues one box; every thread waits. The destination is 1024-byte aligned
// (the swizzle's period). In LLVM the map is passed by value and read in place
// (byval, align 64, nvvm.grid_constant): PTX `.param .align 64 .b8 [128]`.
// A per-warp (empty) barrier is initialised for one arrival per warp (2 here);
// tile.mbar_arrive is one arrival per warp (bar.warp.sync, then lane 0), and a
// wait with `issuer` runs in thread 0 only. The test tid == 0 is built once in
// the block and shared by every thread-0 region (the emitter numbers values).

func.func @k(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 4096>} {
  %c0 = arith.constant 0 : index
  %bars = tile.mbar_init : !tile.mbar<1>
  %empty = tile.mbar_init : !tile.mbar<1, warps>
  %s = tile.alloc : !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>
  tile.mbar_expect %bars[%c0], 4096 : !tile.mbar<1>
  tile.bulk_copy %a[%c0, %c0] -> %s, %bars[%c0] : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>, !tile.mbar<1>
  tile.mbar_wait %bars[%c0], %c0 : !tile.mbar<1>
  tile.mbar_arrive %empty[%c0] : !tile.mbar<1, warps>
  tile.mbar_wait %empty[%c0], %c0 issuer : !tile.mbar<1, warps>
  func.return
}

// CHECK-LABEL: func.func @k
// CHECK-SAME:  %a_map0: !llvm.ptr {tile.gl = "a", tile.tensor_map = 0 : i64, tile.box = array<i64: 32, 64>, tile.swizzle = 128 : i64}
// The issuing thread: its warp (a branch on tile.warp_id, uniform for ptxas), then its lane. At
// the kernel's entry it prefetches the tensor map into the descriptor cache.
// CHECK:       %[[T:.*]] = arith.cmpi eq, %warp, %{{.*}} : i32
// CHECK-NEXT:  scf.if %[[T]] {
// CHECK-NEXT:    %[[L:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[L]] {
// CHECK-NEXT:      frag.tensormap_prefetch %a_map0 : !llvm.ptr
// CHECK:         scf.if
// CHECK-NEXT:      arith.cmpi
// CHECK-NEXT:      scf.if
// CHECK-NEXT:      frag.mbar_init %{{.*}}, 1 : !llvm.ptr<3>
// CHECK-NEXT:      frag.mbar_init_fence
// Adjacent barrier inits share one block barrier, after the last.
// CHECK-NOT:   tile.barrier
// CHECK:       %empty = frag.shared "k_empty", 8
// CHECK:       scf.if
// CHECK:           frag.mbar_init %empty, 2 : !llvm.ptr<3>
// CHECK:       tile.barrier
// CHECK-NEXT:  frag.shared "k_s", 4096, align 1024
// CHECK:       scf.if
// CHECK:           frag.mbar_expect_tx %{{.*}}, 4096 : !llvm.ptr<3>
// CHECK:       scf.if
// CHECK:         frag.tma_load %s, %a_map0[%{{.*}}, %{{.*}}], %{{.*}} : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
// CHECK:       frag.mbar_wait %bars, %{{.*}} : !llvm.ptr<3>
// CHECK-NEXT:  frag.mbar_arrive_warp %empty : !llvm.ptr<3>
// The issuer's wait on the stage's release: its whole warp waits (a uniform branch).
// CHECK-NEXT:  scf.if %[[T]] {
// CHECK-NEXT:    frag.mbar_wait %empty, %{{.*}} : !llvm.ptr<3>

// LLVM:        llvm.func @k
// LLVM-SAME:   llvm.byval = !llvm.array<128 x i8>
// LLVM-SAME:   nvvm.grid_constant

// PTX:         .param .align 64 .b8 k_param_5[128]
// PTX:         cvta.param.u64
// PTX:         prefetch.tensormap [%rd{{[0-9]+}}];
// PTX:         mbarrier.init.shared.b64
// PTX:         fence.mbarrier_init.release.cluster;
// PTX:         mbarrier.arrive.expect_tx.shared::cta.b64 _,
// PTX:         cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:         mbarrier.try_wait.parity.shared::cta.b64
// PTX:         bar.warp.sync -1;
// PTX-NEXT:    mov.u32 lane, %laneid;
// PTX-NEXT:    setp.eq.u32 lead, lane, 0;
// PTX-NEXT:    @lead mbarrier.arrive.shared::cta.b64 _, [%r{{[0-9]+}}];
