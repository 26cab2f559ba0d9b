// RUN: tile-opt %s -p tile-layout --split-input-file | filecheck %s

// An mma result used as the next mma's A operand. For tf32 (m16n8k8) the C
// fragment and the A fragment are different functions: lane 4g+q holds C's
// (g, 2q..2q+1) but A's (g, q) and (g, q+4). The value keeps its C fragment
// (it is an accumulator) and tile-layout converts it before the second mma.

func.func @chain(%g: !tile.gl<f32, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.zeros : !tile.rt<16x8xf32>
  %a = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x8xf32>
  %b = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<8x8xf32>
  %d = tile.mma %a, %b, %x atom <mma_m16n8k8_tf32> : !tile.rt<16x8xf32>, !tile.rt<8x8xf32>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %e = tile.mma %d, %b, %x atom <mma_m16n8k8_tf32> : !tile.rt<16x8xf32>, !tile.rt<8x8xf32>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %e, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @chain(
// CHECK: %a = tile.load {{.*}} -> !tile.rt<16x8xf32, [[A:\(\(4,8\),\(\(2,2\),\(1,1\)\)\):\(\(16,1\),\(\(8,64\),\(16,128\)\)\)]]>
// CHECK: %d = tile.mma %a, %b, %x atom <mma_m16n8k8_tf32> : {{.*}} -> !tile.rt<16x8xf32, [[C:\(\(4,8\),\(\(2,2\),\(1,1\)\)\):\(\(32,1\),\(\(16,8\),\(16,128\)\)\)]]>
// CHECK-NEXT: %d_1 = tile.convert_layout %d : !tile.rt<16x8xf32, [[C]]> -> !tile.rt<16x8xf32, [[A]]>
// CHECK-NEXT: %e = tile.mma %d_1, %b, %x atom <mma_m16n8k8_tf32> : !tile.rt<16x8xf32, [[A]]>,

// -----

// A tile loaded once and used as the A operand of one mma and the B operand of
// another: it keeps the first fragment, the second use gets a conversion.

func.func @both(%g: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.zeros : !tile.rt<16x16xf32>
  %t = tile.load %g[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %d = tile.mma %t, %t, %x : !tile.rt<16x16xf16>, !tile.rt<16x16xf16>, !tile.rt<16x16xf32> -> !tile.rt<16x16xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<16x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @both(
// CHECK: %t = tile.load {{.*}} -> !tile.rt<16x16xf16, [[TA:[^>]*]]>
// CHECK-NEXT: %t_1 = tile.convert_layout %t : !tile.rt<16x16xf16, [[TA]]> -> !tile.rt<16x16xf16, [[TB:[^>]*]]>
// CHECK-NEXT: %d = tile.mma %t, %t_1, %x : !tile.rt<16x16xf16, [[TA]]>, !tile.rt<16x16xf16, [[TB]]>,
