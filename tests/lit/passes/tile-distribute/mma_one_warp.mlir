// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=FRAG
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// tile-regalloc is an alias of the two passes, kept for one release:
// RUN: tile-opt %s -p tile-regalloc | filecheck %s

// One warp, one m16n8k16 mma: D (16x8, f32) = A (16x16, f16, swizzled in
// shared) . B (16x8, f16, K x N row-major). tile-layout gives each register
// tile the fragment of the atom it feeds (in its type), tile-distribute splits
// it into the lane's registers: A four i32 (ldmatrix.x4), B two (ldmatrix.x2.trans, B is
// K x N), D four f32. Global views become (pointer, extents, strides).

func.func @mma16(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %d: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 768>} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc : !tile.st<16x16xf16, Sw<1,3,3> o 0 o (16,16):(16,1)>
  %sb = tile.alloc : !tile.st<16x8xf16, (16,8):(8,1)>
  tile.copy %a[%c0, %c0] -> %sa thr <(16,2):(2,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16, Sw<1,3,3> o 0 o (16,16):(16,1)>
  tile.copy %b[%c0, %c0] -> %sb thr <(16,1):(1,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<16x8xf16, (16,8):(8,1)>
  tile.barrier
  %zero = tile.zeros : !tile.rt<16x8xf32>
  %ra = tile.load %sa : !tile.st<16x16xf16, Sw<1,3,3> o 0 o (16,16):(16,1)> -> !tile.rt<16x16xf16>
  %rb = tile.load %sb : !tile.st<16x8xf16, (16,8):(8,1)> -> !tile.rt<16x8xf16>
  %acc = tile.mma %ra, %rb, %zero atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %acc, %d[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// The fragments: the mma atoms' TV layouts over the tiles (B's transposed onto K x N).
// FRAG: %zero = tile.zeros : !tile.rt<16x8xf32, ((4,8),((2,2),(1,1))):((32,1),((16,8),(16,128)))>
// FRAG: %ra = tile.load %sa : {{.*}} -> !tile.rt<16x16xf16, ((4,8),((2,2,2),(1,1))):((32,1),((16,8,128),(16,256)))>
// FRAG: %rb = tile.load %sb : {{.*}} -> !tile.rt<16x8xf16, ((4,8),((2,2),(1,1))):((2,16),((1,8),(128,16)))>

// The kernel ABI: each view is a pointer, its extents and its strides (elements).
// CHECK-LABEL: func.func @mma16(
// CHECK-SAME: %a: !llvm.ptr<1> {tile.dtype = f16, tile.gl = "a"}, %a_dim0: i64 {tile.gl = "a", tile.dim = 0 : i64}, %a_dim1: i64 {tile.gl = "a", tile.dim = 1 : i64}, %a_stride0: i64 {tile.gl = "a", tile.stride = 0 : i64}, %a_stride1: i64 {tile.gl = "a", tile.stride = 1 : i64},
// CHECK-SAME: %d: !llvm.ptr<1> {tile.dtype = f32, tile.gl = "d", tile.output}, %d_dim0: i64
// CHECK-SAME: tile.registers = {{[0-9]+}} : i64

// 16-byte vectors need unit column stride, rows of 8 elements and an aligned pointer.
// CHECK: %[[PTR:[0-9]+]] = llvm.ptrtoint %a : !llvm.ptr<1> to i64
// CHECK: %a_vec8 = arith.andi
// CHECK: %sa = frag.shared "mma16_sa", 512, align 128 : !llvm.ptr<3>
// CHECK: %sb = frag.shared "mma16_sb", 256, align 128 : !llvm.ptr<3>

// A's copy: one 16-byte load where the vector is inside the view, else 8
// predicated element loads (zero past the edge); then the swizzled store,
// offset ^ ((offset & 64) >> 3) for Sw<1,3,3>.
// CHECK: scf.if %{{[0-9]+}} -> (vector<8xf16>) {
// CHECK: frag.load %{{[0-9]+}} : !llvm.ptr<1> -> vector<8xf16>
// CHECK: } else {
// CHECK-COUNT-8: frag.load %{{[0-9]+}} if %{{[0-9]+}} : !llvm.ptr<1> -> f16
// CHECK: %[[OFF:[0-9]+]] = arith.addi
// CHECK-NEXT: %[[BITS:[0-9]+]] = arith.andi %[[OFF]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[MOVED:[0-9]+]] = arith.shrui %[[BITS]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[SW:[0-9]+]] = arith.xori %[[OFF]], %[[MOVED]] : i32
// CHECK-NEXT: %[[DST:[0-9]+]] = llvm.getelementptr %sa[%[[SW]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NEXT: frag.store %{{[0-9]+}}, %[[DST]] : vector<8xf16>, !llvm.ptr<3>

// B's copy uses threads 0..15 (thr (16,1)).
// CHECK: scf.if %copying {
// CHECK: tile.barrier

// Registers: A by ldmatrix.x4 through the swizzle, B by ldmatrix.x2.trans, one mma.
// CHECK: arith.xori
// CHECK: %[[A0:[0-9]+]], %[[A1:[0-9]+]], %[[A2:[0-9]+]], %[[A3:[0-9]+]] = frag.ldmatrix %{{[0-9]+}} x 4 : !llvm.ptr<3> -> i32, i32, i32, i32
// CHECK: %[[B0:[0-9]+]], %[[B1:[0-9]+]] = frag.ldmatrix %{{[0-9]+}} x 2 trans : !llvm.ptr<3> -> i32, i32
// CHECK: %acc, %acc_1, %acc_2, %acc_3 = frag.mma <mma_m16n8k16_f16>(%[[A0]], %[[A1]], %[[A2]], %[[A3]]) (%[[B0]], %[[B1]]) ([[Z:%[0-9]+]], [[Z]], [[Z]], [[Z]])

// D: lane (g, q) holds (g, 2q..2q+1) and (g+8, 2q..2q+1): one 8-byte store per
// pair inside the view, else one predicated store per element.
// CHECK: scf.if
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} : vector<2xf32>, !llvm.ptr<1>
// CHECK: } else {
// CHECK: frag.store %acc, %{{[0-9]+}} if %{{[0-9]+}} : f32, !llvm.ptr<1>
// CHECK: frag.store %acc_1, %{{[0-9]+}} if %{{[0-9]+}} : f32, !llvm.ptr<1>
// CHECK: frag.store %{{[0-9]+}}, %{{[0-9]+}} : vector<2xf32>, !llvm.ptr<1>
// CHECK: frag.store %acc_3, %{{[0-9]+}} if
// CHECK: func.return
