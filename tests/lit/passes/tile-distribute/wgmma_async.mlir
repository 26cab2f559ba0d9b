// RUN: tile-opt %s -p tile-swizzle,tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-swizzle,tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// Two async tile.wgmma (the second with A from registers) and their waits,
// oldest first: each async op stops at its commit (no frag.wgmma_wait), and
// tile.wgmma_wait N is frag.wgmma_wait N on the tile's registers. Traced from
// tests/lang/test_lang.py's two_products (WAIT_FIRST).

// CHECK:      frag.wgmma_fence
// CHECK:      frag.wgmma_commit
// CHECK-NOT:  frag.wgmma_wait
// CHECK:      frag.wgmma_fence
// CHECK:      frag.wgmma_rs
// CHECK:      frag.wgmma_commit
// CHECK-NEXT: %{{.*}} = frag.wgmma_wait 1(
// CHECK:      %{{.*}} = frag.wgmma_wait 0(

// PTX: wgmma.commit_group.sync.aligned;
// PTX-NOT: wgmma.wait_group
// PTX: wgmma.commit_group.sync.aligned;
// PTX: wgmma.wait_group.sync.aligned 1;
// PTX: wgmma.wait_group.sync.aligned 0;

builtin.module {
  func.func @two_products(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}, %d: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [?, ?, ?], block = [128, 1, 1], smem = 16384>} {
    %0 = arith.constant 0 : index
    %1 = arith.constant 16 : index
    %smem = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
    %smem_1 = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
    tile.copy %a[%0, %0] -> %smem thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.copy %b[%0, %0] -> %smem_1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.barrier
    %warp = tile.warp_id
    %2 = arith.muli %warp, %1 : index
    %3 = tile.zeros : !tile.rt<16x64xf32>
    %4 = tile.wgmma %smem[%0], %smem_1[%0], %3 transpose_b async : !tile.st<64x64xf16, (64,64):(64,1)>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    %a_t = tile.load %a[%2, %0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x64xf16>
    %5 = tile.zeros : !tile.rt<16x64xf32>
    %6 = tile.wgmma %a_t, %smem_1[%0], %5 async : !tile.rt<16x64xf16>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    %7 = tile.wgmma_wait %4, 1 : !tile.rt<16x64xf32>
    tile.store %7, %c[%2, %0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
    %8 = tile.wgmma_wait %6, 0 : !tile.rt<16x64xf32>
    tile.store %8, %d[%2, %0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
    func.return
  }
}
