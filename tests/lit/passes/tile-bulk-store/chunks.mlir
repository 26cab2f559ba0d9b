// RUN: tile-opt %s -p tile-layout,tile-bulk-store | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-bulk-store,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX

// tile-bulk-store when whole-tile buffers do not fit: %taken holds 208 KB, so four warps' 16x256
// f16 buffers (32 KB) would pass the device's 227 KB. Each warp then stores its tile as four
// 64-column chunks (one 128-byte box each) through a ring of two 2 KB slots: slot 0, 1, 0, 1
// (stage warp * 2 + slot), each chunk a tile.slice of the register tile whose fragment is a part
// of the tile's (the accumulator-like layout steps eight columns a value mode: 8 of its 32 steps),
// and before each write the warp waits until at most one of its stores still reads (`pending 1`:
// the slot's last store, two ago, is done). The kernel still waits for all before it returns.

func.func @k(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %taken = tile.alloc : !tile.st<104x1024xf16>
  %warp = tile.warp_id
  %row = arith.muli %warp, %c16 : index
  %v = tile.load %a[%row, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x256xf16, ((4,8),((2,2),(1,32))):((32,1),((16,8),(16,128)))>
  tile.store %v, %c[%row, %c0] : !tile.rt<16x256xf16, ((4,8),((2,2),(1,32))):((32,1),((16,8),(16,128)))> -> !tile.gl<f16, [?, ?]>
  func.return
}

// CHECK:       %sc = tile.alloc : !tile.st<8x16x64xf16, Sw<3,3,3> o 0 o (8,16,64):(1024,64,1)>
// CHECK:       %ring = arith.muli %w, %{{.*}} : index
// CHECK-NEXT:  %sw = tile.stage %sc[%ring]
// CHECK-NEXT:  tile.bulk_store_wait pending 1
// CHECK-NEXT:  %part = tile.slice %v[0, 0] : !tile.rt<16x256xf16, {{.*}}> -> !tile.rt<16x64xf16, ((4,8),(2,2,1,8)):((32,1),(16,8,16,128))>
// CHECK-NEXT:  tile.store %part, %sw[%zero, %zero]
// CHECK-NEXT:  tile.bulk_store %sw -> %c[%row, %c0]
// CHECK:       %[[S1:.*]] = arith.addi %ring, %{{.*}} : index
// CHECK-NEXT:  %sw_1 = tile.stage %sc[%[[S1]]]
// CHECK-NEXT:  tile.bulk_store_wait pending 1
// CHECK-NEXT:  %part_1 = tile.slice %v[0, 64]
// CHECK:       tile.bulk_store %sw_1 -> %c[%row, %col_part]
// CHECK:       %sw_2 = tile.stage %sc[%ring]
// CHECK:       %part_2 = tile.slice %v[0, 128]
// CHECK:       %part_3 = tile.slice %v[0, 192]
// CHECK:       tile.bulk_store %sw_3
// CHECK-NEXT:  tile.bulk_store_wait
// CHECK-NEXT:  func.return

// A chunk: 16 4-byte shared stores a lane (16x64 over 32 lanes, two elements each), one box from
// lane 0; the wait keeps one group reading.
// PTX:         @lead cp.async.bulk.wait_group.read 1;
// PTX-COUNT-16: st.shared.b32
// PTX:         fence.proxy.async.shared::cta;
// PTX:         @lead cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group
// PTX:         @lead cp.async.bulk.commit_group;
// PTX:         @lead cp.async.bulk.wait_group.read 1;
// PTX:         @lead cp.async.bulk.wait_group.read 0;
