// RUN: tile-opt %s -p tile-layout,tile-bulk-store | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-bulk-store,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX
// RUN: not tile-opt %s -p 'tile-to-ptx{bulk_store=true}' 2>&1 | filecheck %s --check-prefix=OPT

// tile-bulk-store (after tile-layout): a warp's own register tile (warp-varying: it
// depends on tile.warp_id) stored to a view with 16-byte aligned rows goes through the
// warp's stage of a shared buffer, in the 128-byte-swizzled boxes a tensor map reads,
// and a bulk tensor store; the warp waits for its previous store to have read the stage
// before it writes it again, and the kernel waits before it returns. The buffer has a
// stage per warp (4 here) and the launch's shared memory grows to what tile-distribute
// will allocate. Left alone: the tile stored to a view without aligned rows (no tensor
// map), a warp-uniform tile (tile-layout may spread it over the block's warps), a view
// the kernel also reads (the bulk store's global writes are ordered with nothing before
// the kernel ends), and a window that differs between lanes (lane 0 issues the copy).

func.func @k(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %d: !tile.gl<f16, [?, ?]>, %e: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %f: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %g: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %warp = tile.warp_id
  %lane = tile.lane_id
  %row = arith.muli %warp, %c16 : index
  %v = tile.load %a[%row, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x128xf16>
  tile.store %v, %c[%row, %c0] : !tile.rt<16x128xf16> -> !tile.gl<f16, [?, ?]>
  tile.store %v, %d[%row, %c0] : !tile.rt<16x128xf16> -> !tile.gl<f16, [?, ?]>
  %u = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x128xf16>
  tile.store %u, %e[%c0, %c0] : !tile.rt<16x128xf16> -> !tile.gl<f16, [?, ?]>
  tile.store %v, %f[%row, %c0] : !tile.rt<16x128xf16> -> !tile.gl<f16, [?, ?]>
  %back = tile.load %f[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x128xf16>
  %lrow = arith.addi %row, %lane : index
  tile.store %v, %g[%lrow, %c0] : !tile.rt<16x128xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}

// CHECK:       tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16384>
// CHECK-NEXT:    %sc = tile.alloc : !tile.st<4x16x128xf16, Sw<3,3,3> o 0 o (4,16,(64,2)):(2048,64,(1,1024))>
// CHECK:         %v = tile.load %a[%row, %c0]
// CHECK-NEXT:    %zero = arith.constant 0 : index
// CHECK-NEXT:    %w = tile.warp_id
// CHECK-NEXT:    %sw = tile.stage %sc[%w] : !tile.st<4x16x128xf16, Sw<3,3,3> o 0 o (4,16,(64,2)):(2048,64,(1,1024))> -> !tile.st<16x128xf16, Sw<3,3,3> o 0 o (16,(64,2)):(64,(1,1024))>
// CHECK-NEXT:    tile.bulk_store_wait
// CHECK-NEXT:    tile.store %v, %sw[%zero, %zero] : !tile.rt<16x128xf16, {{.*}}> -> !tile.st<16x128xf16, Sw<3,3,3> o 0 o (16,(64,2)):(64,(1,1024))>
// CHECK-NEXT:    tile.bulk_store %sw -> %c[%row, %c0]
// CHECK-NEXT:    tile.store %v, %d[%row, %c0] : !tile.rt
// CHECK:         tile.store %u, %e[%c0, %c0] : !tile.rt
// CHECK-NEXT:    tile.store %v, %f[%row, %c0] : !tile.rt
// CHECK:         tile.store %v, %g[%lrow, %c0] : !tile.rt
// CHECK-NEXT:    tile.bulk_store_wait
// CHECK-NEXT:    func.return
// CHECK-NOT:     tile.bulk_store %

// The fragment's pairs go to shared memory as 4-byte stores (32 a lane: 16x128 over 32 lanes, two
// elements each), then two 64-column boxes leave by bulk tensor stores from lane 0.
// PTX-COUNT-32: st.shared.b32
// PTX-NOT:     st.shared
// PTX:         fence.proxy.async.shared::cta;
// PTX-COUNT-2: @lead cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX:         @lead cp.async.bulk.commit_group;
// PTX:         @lead cp.async.bulk.wait_group.read 0;

// tile-to-ptx's bulk_store (and producer) need its bulk copies: asked without them, an error.
// OPT: error: invalid options for pass 'tile-to-ptx': tile-to-ptx: bulk_store=true works on bulk tensor copies (sm_90): give bulk=true too
