// RUN: tile-opt %s -p tile-layout | filecheck %s
// RUN: tile-opt %s -p 'tile-layout{block_tiles=false}' | filecheck %s --check-prefix=WARP

// An mma every warp of the block runs on the same tiles (a Triton-style tl.dot: nothing depends
// on tile.warp_id) is split over the warps, CuTe's tiled MMA: tile-layout marks it with the warp
// grid (tile.warps = WM, WN, copies) and each warp holds its part of C, the rows of A and the
// columns of B that part needs. Four warps, 64x64: a 2x2 grid of 32x32 parts (warp bit 5 moves
// 32 rows, bit 6 32 columns; A's rows do not move with bit 6, B's columns not with bit 5).
func.func @block_dot(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %i = tile.block_id x
  %ta = tile.load %a[%i, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
  %tb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %d = tile.mma %ta, %tb, %z : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  tile.store %d, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @block_dot
// CHECK: %ta = tile.load {{.*}} -> !tile.rt<64x32xf16, (((4,8),(2,2,1)),{{.*}}):(((128,1),(32,0,0)),{{.*}})>
// CHECK: %tb = tile.load {{.*}} -> !tile.rt<32x64xf16, (((4,8),(2,2,1)),{{.*}}):(((2,32),(0,1024,0)),{{.*}})>
// CHECK: %d = tile.mma %ta, %tb, %z {tile.warps = array<i64: 2, 2, 1>} : {{.*}} -> !tile.rt<64x64xf32, (((4,8),(2,2,1)),{{.*}}):(((128,1),(32,2048,0)),{{.*}})>
// WARP-LABEL: func.func @block_dot
// WARP-NOT: tile.warps

// The same mma on rows chosen by the warp id is each warp's own: not split.
func.func @warp_dot(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %w = tile.warp_id
  %r = arith.muli %w, %c16 : index
  %ta = tile.load %a[%r, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x32xf16>
  %tb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
  %z = tile.zeros : !tile.rt<16x64xf32>
  %d = tile.mma %ta, %tb, %z : !tile.rt<16x32xf16>, !tile.rt<32x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  tile.store %d, %c[%r, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @warp_dot
// CHECK-NOT: tile.warps
// CHECK: %d = tile.mma %ta, %tb, %z : {{.*}} -> !tile.rt<16x64xf32, ((4,8),{{.*}}
// CHECK: func.return

// Two mmas starting from one zeros, one split and one each warp's own: each gets a zeros of its own
// (an accumulator is never converted), so the first can still be split.
func.func @shared_zeros(%a: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %w = tile.warp_id
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x16xf16>
  %tb = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %tw = tile.load %a[%w, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x16xf16>
  %z = tile.zeros : !tile.rt<32x16xf32>
  %d = tile.mma %ta, %tb, %z : !tile.rt<32x16xf16>, !tile.rt<16x16xf16>, !tile.rt<32x16xf32> -> !tile.rt<32x16xf32>
  %e = tile.mma %tw, %tb, %z : !tile.rt<32x16xf16>, !tile.rt<16x16xf16>, !tile.rt<32x16xf32> -> !tile.rt<32x16xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<32x16xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %e, %c[%w, %c0] : !tile.rt<32x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @shared_zeros
// CHECK: %z = tile.zeros
// CHECK: %z_1 = tile.zeros
// CHECK: %d = tile.mma %ta, %tb, %z_1 {tile.warps = array<i64: 2, 1, 1>}
// CHECK: %e = tile.mma %tw, %tb_1, %z :

// An mma whose result is converted into a tile with a fragment written in its type (a warp's C
// fragment; a conversion of element type keeps the fragment) keeps that warp fragment: not split.
func.func @written(%a: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x16xf16>
  %tb = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %z = tile.zeros : !tile.rt<32x16xf32>
  %d = tile.mma %ta, %tb, %z : !tile.rt<32x16xf16>, !tile.rt<16x16xf16>, !tile.rt<32x16xf32> -> !tile.rt<32x16xf32>
  %h = tile.convert %d : !tile.rt<32x16xf32> -> !tile.rt<32x16xf16, ((4,8),((2,2),(2,2))):((64,1),((32,8),(16,256)))>
  tile.store %h, %c[%c0, %c0] : !tile.rt<32x16xf16, ((4,8),((2,2),(2,2))):((64,1),((32,8),(16,256)))> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @written
// CHECK-NOT: tile.warps
// CHECK: func.return

// A chain of dots (attention's P = f(Q K^T), then P V): both split over the warps along M only, as
// Triton lays out a chain, so that each warp holds whole rows of S (its row reductions stay in the
// warp) and its rows of P are its A of the second mma register for register: no conversion between.
func.func @chain(%q: !tile.gl<f16, [?, ?]>, %k: !tile.gl<f16, [?, ?]>, %v: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %tq = tile.load %q[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
  %tk = tile.load %k[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
  %tv = tile.load %v[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %s = tile.mma %tq, %tk, %z transpose_b : !tile.rt<64x64xf16>, !tile.rt<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  %e = tile.exp %s : !tile.rt<64x64xf32>
  %p = tile.convert %e : !tile.rt<64x64xf32> -> !tile.rt<64x64xf16>
  %z2 = tile.zeros : !tile.rt<64x64xf32>
  %d = tile.mma %p, %tv, %z2 : !tile.rt<64x64xf16>, !tile.rt<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  tile.store %d, %o[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @chain
// CHECK: %s = tile.mma {{.*}} {tile.warps = array<i64: 4, 1, 1>}
// CHECK-NOT: tile.convert_layout
// CHECK: %d = tile.mma {{.*}} {tile.warps = array<i64: 4, 1, 1>}
