// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=FRAG
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm | filecheck %s --check-prefix=LLVM

// One warp, one m16n8k32 mma of 8-bit integers: D (16x8, i32) = A (16x32, i8, from shared) . B
// (32x8, i8, K x N). tile-layout gives the operands the s8 atom's fragments (four bytes a lane
// along K); tile-distribute holds them four to an i32 register: A, contiguous along K in shared
// memory, by one ldmatrix.x4 (a lane's four bytes are its half of a row of 16-bit units); B, K x N
// in global memory (N contiguous), byte by byte, packed as the bytes of a vector<4xi8> bitcast
// (the first the lowest); the sums in four i32. tile-to-llvm calls LLVM's s8 mma intrinsic.
func.func @mma_s8(%a: !tile.gl<i8, [?, ?]>, %b: !tile.gl<i8, [?, ?]>, %d: !tile.gl<i32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc : !tile.st<16x32xi8, (16,32):(32,1)>
  tile.copy %a[%c0, %c0] -> %sa thr <(16,2):(2,1)> val <(1,16):(1,1)> : !tile.gl<i8, [?, ?]> -> !tile.st<16x32xi8, (16,32):(32,1)>
  tile.barrier
  %zero = tile.zeros : !tile.rt<16x8xi32>
  %ra = tile.load %sa : !tile.st<16x32xi8, (16,32):(32,1)> -> !tile.rt<16x32xi8>
  %rb = tile.load %b[%c0, %c0] : !tile.gl<i8, [?, ?]> -> !tile.rt<32x8xi8>
  %acc = tile.mma %ra, %rb, %zero : !tile.rt<16x32xi8>, !tile.rt<32x8xi8>, !tile.rt<16x8xi32> -> !tile.rt<16x8xi32>
  tile.store %acc, %d[%c0, %c0] : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>
  func.return
}
// FRAG: %ra = tile.load %sa : {{.*}} -> !tile.rt<16x32xi8, ((4,8),((4,2,2),(1,1))):((64,1),((16,8,256),(16,512)))>
// FRAG: %acc = tile.mma %ra, %rb, %zero : {{.*}} -> !tile.rt<16x8xi32, ((4,8),((2,2),(1,1))):((32,1),((16,8),(16,128)))>

// CHECK-LABEL: func.func @mma_s8(
// CHECK: %[[A0:.*]], %[[A1:.*]], %[[A2:.*]], %[[A3:.*]] = frag.ldmatrix %{{.*}} x 4 : !llvm.ptr<3> -> i32, i32, i32, i32
// CHECK-COUNT-2: vector.bitcast %{{.*}} : vector<4xi8> to vector<1xi32>
// CHECK: frag.mma <mma_m16n8k32_s8>(%[[A0]], %[[A1]], %[[A2]], %[[A3]]) (%{{.*}}, %{{.*}}) (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32) (i32, i32) -> i32, i32, i32, i32

// LLVM: llvm.call_intrinsic "llvm.nvvm.mma.m16n8k32.row.col.s8"({{.*}}) : (i32, i32, i32, i32, i32, i32, i32, i32, i32, i32) -> !llvm.struct<(i32, i32, i32, i32)>
