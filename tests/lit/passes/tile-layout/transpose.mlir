// RUN: tile-opt %s -p tile-layout | filecheck %s

// tile.transpose moves no data: tile-layout gives its result the input's fragment with each
// element's coordinates swapped, or, when the result's fragment is decided first (an mma
// operand), the input the transpose of that. Only a result that two uses pull apart is converted.

// %b is K's tile N x K, transposed into the mma's K x N B operand: the load itself takes the
// transposed B fragment, and nothing is converted.
func.func @operand(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %tb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<8x16xf16>
  %bt = tile.transpose %tb : !tile.rt<8x16xf16> -> !tile.rt<16x8xf16>
  %z = tile.zeros : !tile.rt<16x8xf32>
  %d = tile.mma %ta, %bt, %z : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %dt = tile.transpose %d : !tile.rt<16x8xf32> -> !tile.rt<8x16xf32>
  tile.store %dt, %c[%c0, %c0] : !tile.rt<8x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @operand
// CHECK: %tb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<8x16xf16, [[BT:[^>]*]]>
// CHECK-NEXT: %bt = tile.transpose %tb : !tile.rt<8x16xf16, [[BT]]> -> !tile.rt<16x8xf16, [[B:[^>]*]]>
// CHECK: tile.mma %ta, %bt, %z : {{.*}}, !tile.rt<16x8xf16, [[B]]>, !tile.rt<16x8xf32, [[C:[^>]*]]> ->
// CHECK: %dt = tile.transpose %d : !tile.rt<16x8xf32, [[C]]> -> !tile.rt<8x16xf32, ((4,8),((2,2),(1,1))):((2,8),((1,64),(1,8)))>
// CHECK-NOT: convert_layout
// CHECK: func.return

// %x feeds one mma as A and, transposed, another as A: the transpose's input is converted to
// the transpose of the second A fragment, right before the transpose.
func.func @both(%a: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %x = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %y = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x8xf16>
  %z = tile.zeros : !tile.rt<16x8xf32>
  %d = tile.mma %x, %y, %z : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %xt = tile.transpose %x : !tile.rt<16x16xf16> -> !tile.rt<16x16xf16>
  %e = tile.mma %xt, %y, %d : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %e, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @both
// CHECK: %x = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16, [[A:[^>]*]]>
// CHECK: %x_1 = tile.convert_layout %x : !tile.rt<16x16xf16, [[A]]> -> !tile.rt<16x16xf16, [[AT:[^>]*]]>
// CHECK-NEXT: %xt = tile.transpose %x_1 : !tile.rt<16x16xf16, [[AT]]> -> !tile.rt<16x16xf16, [[A]]>

// Four warps, a tile that is the same in every warp: spread over the block with each row's
// columns in consecutive threads (coalesced). Its transpose gets a fragment of its own, coalesced
// for the store, and the input is converted (through shared memory) before the transpose.
func.func @block(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %b = tile.block_id x
  %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x64xf32>
  %u = tile.transpose %t : !tile.rt<32x64xf32> -> !tile.rt<64x32xf32>
  tile.store %u, %o[%c0, %b] : !tile.rt<64x32xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @block
// CHECK: %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x64xf32, ((16,8),(4,4)):((128,1),(32,8))>
// CHECK-NEXT: %t_1 = tile.convert_layout %t : {{.*}} -> !tile.rt<32x64xf32, [[T:[^>]*]]>
// CHECK-NEXT: %u = tile.transpose %t_1 : !tile.rt<32x64xf32, [[T]]> -> !tile.rt<64x32xf32, ((8,16),(4,4)):((256,1),(64,16))>
