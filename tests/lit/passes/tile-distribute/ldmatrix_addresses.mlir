// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// Two loads of one shared tile whose windows lie a whole number of swizzle periods apart (rows 0
// and 16 of a 32-column Sw<2,3,3> tile: 512 elements, two periods of 256) share their ldmatrix
// addresses: the second window's address is the first's plus a constant, not a swizzle of its own.
// tile-pipeline splits an mma into its K steps, one load each, so without this a loop held one
// address register per step (tile_distribute/memory.py, `_ldmatrix_address`).

func.func @two_row_tiles(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %d: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 3072>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %sa = tile.alloc : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
  %sb = tile.alloc : !tile.st<32x8xf16, (32,8):(8,1)>
  tile.copy %a[%c0, %c0] -> %sa thr <(8,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
  tile.copy %b[%c0, %c0] -> %sb thr <(32,1):(1,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x8xf16, (32,8):(8,1)>
  tile.barrier
  %zero = tile.zeros : !tile.rt<16x8xf32>
  %rb = tile.load %sb : !tile.st<32x8xf16, (32,8):(8,1)> -> !tile.rt<32x8xf16>
  %ra0 = tile.load %sa[%c0, %c0] : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)> -> !tile.rt<16x32xf16>
  %d0 = tile.mma %ra0, %rb, %zero atom <mma_m16n8k16_f16> : !tile.rt<16x32xf16>, !tile.rt<32x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %ra1 = tile.load %sa[%c16, %c0] : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)> -> !tile.rt<16x32xf16>
  %d1 = tile.mma %ra1, %rb, %zero atom <mma_m16n8k16_f16> : !tile.rt<16x32xf16>, !tile.rt<32x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %d0, %d[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %d1, %d[%c16, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @two_row_tiles(
// CHECK: %[[PERIODS:[0-9]+]] = arith.constant 512 : i32
// CHECK: tile.barrier
// The first window: two swizzled addresses (its K steps 0 and 16 are not a period apart).
// CHECK: %[[XOR0:[0-9]+]] = arith.xori
// CHECK-NEXT: %[[A0:[0-9]+]] = llvm.getelementptr %sa[%[[XOR0]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NEXT: frag.ldmatrix %[[A0]] x 4 : !llvm.ptr<3>
// CHECK: %[[XOR1:[0-9]+]] = arith.xori
// CHECK-NEXT: %[[A1:[0-9]+]] = llvm.getelementptr %sa[%[[XOR1]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NEXT: frag.ldmatrix %[[A1]] x 4 : !llvm.ptr<3>
// The second window, 16 rows down: the same two addresses plus 512, no swizzle.
// CHECK: frag.mma
// CHECK-NEXT: frag.mma
// CHECK-NEXT: %[[B0:[0-9]+]] = llvm.getelementptr %[[A0]][%[[PERIODS]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NEXT: frag.ldmatrix %[[B0]] x 4 : !llvm.ptr<3>
// CHECK-NEXT: %[[B1:[0-9]+]] = llvm.getelementptr %[[A1]][%[[PERIODS]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NEXT: frag.ldmatrix %[[B1]] x 4 : !llvm.ptr<3>
