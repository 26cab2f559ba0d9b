// RUN: tile-opt %s -p tile-layout | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s --check-prefix=DIST

// Attention's P: S = Q K^T accumulates in m16n8k16's C fragment; P, S in f16,
// is the A operand of O += P V. Over a 16x16 tile the C fragment (two 16x8
// atoms side by side) and the A fragment are the same function: lane 4g+q
// holds (g, 2q..2q+1), (g+8, 2q..2q+1), (g, 2q+8..2q+9), (g+8, 2q+8..2q+9) in
// both, in the same order. So no conversion is inserted: P keeps the C
// spelling, and tile-distribute packs its f16 pairs into the A registers.

func.func @pv(%q: !tile.gl<f16, [?, ?]>, %k: !tile.gl<f16, [?, ?]>, %v: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %z = tile.zeros : !tile.rt<16x16xf32>
  %z8 = tile.zeros : !tile.rt<16x8xf32>
  %rq = tile.load %q[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %rk = tile.load %k[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %rv = tile.load %v[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x8xf16>
  %s = tile.mma %rq, %rk, %z transpose_b : !tile.rt<16x16xf16>, !tile.rt<16x16xf16>, !tile.rt<16x16xf32> -> !tile.rt<16x16xf32>
  %p = tile.convert %s : !tile.rt<16x16xf32> -> !tile.rt<16x16xf16>
  %acc = tile.mma %p, %rv, %z8 : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %acc, %o[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK: %s = tile.mma {{.*}} -> !tile.rt<16x16xf32, [[C:\(\(4,8\),\(\(2,2\),\(1,2\)\)\):\(\(32,1\),\(\(16,8\),\(16,128\)\)\)]]>
// CHECK-NEXT: %p = tile.convert %s : !tile.rt<16x16xf32, [[C]]> -> !tile.rt<16x16xf16, [[C]]>
// CHECK-NOT: tile.convert_layout
// CHECK: %acc = tile.mma %p, %rv, %z8 : !tile.rt<16x16xf16, [[C]]>,

// S's 8 f32 values become P's 4 registers of f16 pairs, which are the mma's A
// registers: one cvt.rn.f16x2.f32 (frag.pack) per pair converts and packs.
// DIST: %acc_4, %acc_5, %acc_6, %acc_7 = frag.mma <mma_m16n8k16_f16>
// DIST: %[[P0:[0-9]+]] = frag.pack "f16x2" %acc, %acc_1
// DIST: %[[P1:[0-9]+]] = frag.pack "f16x2" %acc_2, %acc_3
// DIST: %[[P2:[0-9]+]] = frag.pack "f16x2" %acc_4, %acc_5
// DIST: %[[P3:[0-9]+]] = frag.pack "f16x2" %acc_6, %acc_7
// DIST: frag.mma <mma_m16n8k16_f16>(%[[P0]], %[[P1]], %[[P2]], %[[P3]])
