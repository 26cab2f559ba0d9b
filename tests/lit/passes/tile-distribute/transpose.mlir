// RUN: tile-opt %s -p tile-layout,tile-distribute --split-input-file | filecheck %s

// tile.transpose lowers to nothing: its result's fragment is its input's with the coordinates
// swapped (tile-layout), so the lanes keep their registers. Here K's 8x16 tile, transposed into
// the mma's 16x8 B operand, is loaded straight into the B registers (two packed pairs a lane)
// and the mma's result, transposed, is stored from its own four registers.
func.func @operand(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
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
// CHECK-LABEL: func.func @operand(
// CHECK-NOT: frag.shfl
// CHECK-NOT: frag.shared
// CHECK: %[[D0:[^,]*]], %[[D1:[^,]*]], %[[D2:[^,]*]], %[[D3:[^ ]*]] = frag.mma <mma_m16n8k16_f16>
// CHECK-NOT: frag.shfl
// CHECK-NOT: frag.shared
// CHECK-DAG: frag.store %[[D0]]
// CHECK-DAG: frag.store %[[D1]]
// CHECK-DAG: frag.store %[[D2]]
// CHECK-DAG: frag.store %[[D3]]
// CHECK: func.return
