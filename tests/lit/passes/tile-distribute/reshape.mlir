// RUN: tile-opt %s -p tile-layout,tile-distribute --split-input-file | filecheck %s

// tile.reshape and tile.join lower to nothing where the lanes hold the result's elements (tile-layout's
// choice where a layout expresses it): the registers are renumbered. Otherwise the values go through a
// scratch tile in shared memory: each lane stores its elements at their places in the result, the block
// synchronises, each lane loads the result's elements, the block synchronises before the scratch is reused.

// Four packed f16 pairs a lane, joined as the rows of an mma's B operand: no memory, no barrier.
func.func @nibbles(%a: !tile.gl<f16, [?, ?]>, %w: !tile.gl<i8, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x32xf16>
  %bytes = tile.load %w[%c0, %c0] : !tile.gl<i8, [?, ?]> -> !tile.rt<16x8xi8>
  %lo = tile.convert %bytes : !tile.rt<16x8xi8> -> !tile.rt<16x8xf16>
  %hi = tile.convert %bytes : !tile.rt<16x8xi8> -> !tile.rt<16x8xf16>
  %b = tile.join %lo, %hi dim 0 interleaved : !tile.rt<16x8xf16>, !tile.rt<16x8xf16> -> !tile.rt<32x8xf16>
  %z = tile.zeros : !tile.rt<16x8xf32>
  %d = tile.mma %ta, %b, %z : !tile.rt<16x32xf16>, !tile.rt<32x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @nibbles(
// CHECK-NOT: tile.barrier
// CHECK-NOT: frag.shared
// CHECK: frag.mma <mma_m16n8k16_f16>
// CHECK-NOT: tile.barrier
// CHECK: func.return

// -----

// A 16 x 64 tile as a vector of 1024: the vector takes the tile's registers, reread (tile-layout); the
// stores of its runs are the tile's rows.
func.func @flatten(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %v = tile.reshape %t : !tile.rt<16x64xf32> -> !tile.rv<1024xf32, col>
  tile.store %v, %o[%c0] : !tile.rv<1024xf32, col> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @flatten(
// CHECK-NOT: frag.shared
// CHECK-NOT: tile.barrier
// CHECK: func.return

// -----

// A bitonic step's pairs (sort): the rows of a 32 x 32 tile read as even and odd halves, ordered, put back.
// The default fragment gives each thread rows of one parity (r, r + 8, ...): tile-layout converts the
// input first to the fragment with the pair bit in the value (lanes exchange values: shuffles), then the
// split and the join of its parts move no data.
func.func @pairs(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x32xf32>
  %lo, %hi = tile.split %t dim 0 interleaved : !tile.rt<32x32xf32> -> !tile.rt<16x32xf32>, !tile.rt<16x32xf32>
  %a = tile.min %lo, %hi : !tile.rt<16x32xf32>
  %b = tile.max %lo, %hi : !tile.rt<16x32xf32>
  %r = tile.join %a, %b dim 0 interleaved : !tile.rt<16x32xf32>, !tile.rt<16x32xf32> -> !tile.rt<32x32xf32>
  tile.store %r, %o[%c0, %c0] : !tile.rt<32x32xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @pairs(
// CHECK-NOT: frag.shared
// CHECK: frag.shfl
// CHECK-NOT: frag.shared
// CHECK-NOT: tile.barrier
// CHECK: func.return

// -----

// Fragments given apart in the types (an mma accumulator's, a row-major tile's), which no renumbering
// relates: through a scratch of 1024 f32 (4 KB), a barrier after the stores and one after the loads.
func.func @apart(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32, ((4,8),((2,2),(1,8))):((32,1),((16,8),(16,128)))>
  %r = tile.reshape %t : !tile.rt<16x64xf32, ((4,8),((2,2),(1,8))):((32,1),((16,8),(16,128)))> -> !tile.rt<32x32xf32, ((4,8),((2,2),(2,4))):((64,1),((32,8),(16,256)))>
  tile.store %r, %o[%c0, %c0] : !tile.rt<32x32xf32, ((4,8),((2,2),(2,4))):((64,1),((32,8),(16,256)))> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @apart(
// CHECK: frag.shared "apart_r_reshape", 4096, align 128 : !llvm.ptr<3>
// CHECK-COUNT-32: frag.store {{.*}} : f32, !llvm.ptr<3>
// CHECK-NEXT: tile.barrier
// CHECK-COUNT-32: frag.load {{.*}} : !llvm.ptr<3> -> f32
// CHECK-NEXT: tile.barrier
