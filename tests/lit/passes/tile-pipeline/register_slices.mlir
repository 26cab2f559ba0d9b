// RUN: tile-opt %s -p 'tile-pipeline{stages=1}' | filecheck %s
// RUN: tile-opt %s -p 'tile-pipeline{stages=1},tile-layout,tile-distribute' | filecheck %s --check-prefix=FRAG

// Flash attention's two mmas, one warp: S = q @ K^T with q held in registers (loaded once, read by
// two loops in the kernel) and K's tile in shared memory, then O = P @ V with P computed in
// registers. tile-pipeline splits each mma into its atom-K steps: the shared operand is loaded a
// step ahead (ldmatrix), the register operand is taken as tile.slice windows of the tile that
// holds it. tile-layout gives the sliced tiles the mma operand's fragment over their whole extent
// (P keeps the accumulator fragment of S, whose lanes hold A's values: no conversion), and
// tile-distribute picks the window's registers: no instruction for a slice.

func.func @attention(%q: !tile.gl<f16, [?, ?]>, %k: !tile.gl<f16, [?, ?]>, %v: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %qt = tile.load %q[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x64xf16>
  %sk = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  %sv = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  tile.copy %k[%c0, %c0] -> %sk : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
  tile.copy %v[%c0, %c0] -> %sv : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
  tile.barrier
  %z = tile.zeros : !tile.rt<16x32xf32>
  %rk = tile.load %sk[%c0, %c0] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x64xf16>
  %s = tile.mma %qt, %rk, %z transpose_b : !tile.rt<16x64xf16>, !tile.rt<32x64xf16>, !tile.rt<16x32xf32> -> !tile.rt<16x32xf32>
  %p = tile.convert %s : !tile.rt<16x32xf32> -> !tile.rt<16x32xf16>
  %zo = tile.zeros : !tile.rt<16x64xf32>
  %rv = tile.load %sv[%c0, %c0] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x64xf16>
  %out = tile.mma %p, %rv, %zo : !tile.rt<16x32xf16>, !tile.rt<32x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  %rk2 = tile.load %sk[%c0, %c0] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x64xf16>
  %again = tile.mma %qt, %rk2, %z transpose_b : !tile.rt<16x64xf16>, !tile.rt<32x64xf16>, !tile.rt<16x32xf32> -> !tile.rt<16x32xf32>
  tile.store %again, %o[%c0, %c0] : !tile.rt<16x32xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %out, %o[%c0, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK:      %qt0 = tile.slice %qt[0, 0] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>
// CHECK-NEXT: %rk0 = tile.load %sk[%c0, %c0] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x16xf16>
// CHECK-NEXT: %qt1 = tile.slice %qt[0, 16] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>
// CHECK:      %s0 = tile.mma %qt0, %rk0, %z transpose_b
// CHECK:      %qt3 = tile.slice %qt[0, 48]
// CHECK:      %s = tile.mma %qt3, %rk3, %s2 transpose_b
// CHECK-NEXT: %p = tile.convert %s : !tile.rt<16x32xf32> -> !tile.rt<16x32xf16>
// CHECK:      %p0 = tile.slice %p[0, 0] : !tile.rt<16x32xf16> -> !tile.rt<16x16xf16>
// CHECK-NEXT: %rv0 = tile.load %sv[%c0, %c0] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<16x64xf16>
// CHECK-NEXT: %p1 = tile.slice %p[0, 16] : !tile.rt<16x32xf16> -> !tile.rt<16x16xf16>
// CHECK:      %out = tile.mma %p1, %rv1, %out0
// The second mma on q slices the same registers again.
// CHECK:      %qt0_1 = tile.slice %qt[0, 0] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>
// CHECK:      %again = tile.mma %qt3_1, %rk23, %again2 transpose_b

// FRAG-LABEL: func.func @attention
// FRAG-NOT:   tile.slice
// FRAG-NOT:   tile.convert_layout
// FRAG:       frag.mma
// FRAG-NOT:   tile.slice
// FRAG-NOT:   tile.convert_layout
// FRAG:       func.return
