// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s
// RUN: tile-opt %s -p tile-regalloc | filecheck %s --check-prefix=PTR
// RUN: tile-opt %s -p tile-regalloc,tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX

// tile.bulk_store: a warp's shared tile (here its stage of a per-warp buffer)
// to a global window by bulk tensor stores; tile.bulk_store_wait before the warp
// writes the tile again (`pending N`: all but the warp's last N stores have read theirs, a ring
// of N + 1 buffers). The generic form parses back to the same ops. At
// fragment level the store is a proxy fence and warp sync in every lane, then
// lane 0's box stores (one per 64-column box) and commit; the view gets a
// tensor-map parameter as a bulk copy's does.

func.func @k(%c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %i: index) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 16384>} {
  %buf = tile.alloc : !tile.st<2x16x128xf16, Sw<3,3,3> o 0 o (2,16,(64,2)):(2048,64,(1,1024))>
  %w = tile.warp_id
  %s = tile.stage %buf[%w] : !tile.st<2x16x128xf16, Sw<3,3,3> o 0 o (2,16,(64,2)):(2048,64,(1,1024))> -> !tile.st<16x128xf16, Sw<3,3,3> o 0 o (16,(64,2)):(64,(1,1024))>
  tile.bulk_store_wait
  tile.bulk_store %s -> %c[%i, %i] : !tile.st<16x128xf16, Sw<3,3,3> o 0 o (16,(64,2)):(64,(1,1024))> -> !tile.gl<f16, [?, ?]>
  tile.bulk_store_wait pending 1
  tile.bulk_store_wait
  func.return
}

// CHECK-LABEL: func.func @k
// CHECK:         %s = tile.stage %buf[%w]
// CHECK-NEXT:    tile.bulk_store_wait
// CHECK-NEXT:    tile.bulk_store %s -> %c[%i, %i] : !tile.st<16x128xf16, Sw<3,3,3> o 0 o (16,(64,2)):(64,(1,1024))> -> !tile.gl<f16, [?, ?]>
// CHECK-NEXT:    tile.bulk_store_wait pending 1
// CHECK-NEXT:    tile.bulk_store_wait

// PTR:         %c_map0: !llvm.ptr {tile.gl = "c", tile.tensor_map = 0 : i64, tile.box = array<i64: 16, 64>, tile.swizzle = 128 : i64}
// PTR:         frag.bulk_wait_warp 0
// PTR:         frag.fence_proxy_async
// PTR-NEXT:    frag.warp_sync
// PTR:         frag.tma_store_warp %{{.*}}, %c_map0[%{{.*}}, %{{.*}}] : !llvm.ptr<3>, !llvm.ptr
// PTR:         frag.tma_store_warp %{{.*}}, %c_map0[%{{.*}}, %{{.*}}] : !llvm.ptr<3>, !llvm.ptr
// PTR-NEXT:    frag.bulk_commit_warp
// PTR-NEXT:    frag.bulk_wait_warp 1
// PTR-NEXT:    frag.bulk_wait_warp 0

// PTX:         .param .align 64 .b8 k_param_{{[0-9]+}}[128]
// PTX:         cp.async.bulk.wait_group.read 0;
// PTX:         fence.proxy.async.shared::cta;
// PTX:         bar.warp.sync -1;
// PTX:         setp.eq.u32 lead, lane, 0;
// PTX-NEXT:    @lead cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
// PTX:         @lead cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX:         @lead cp.async.bulk.commit_group;
