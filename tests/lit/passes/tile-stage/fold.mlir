// RUN: tile-opt %s -p tile-stage | filecheck %s
// RUN: tile-opt %s -p 'tile-stage{wgmma=true}' | filecheck %s --check-prefix=WGMMA

// `acc + dot(x, y)` with the dot's accumulator zeros: the mma accumulates into acc itself (Triton's
// fold), here an accumulator rescaled in the loop (attention's `acc * alpha + P V`). For sm_90a it
// stays unfolded when acc is computed beside the add: the warpgroup MMA of zeros then runs while the
// rescale is computed. An add of a carried accumulator folds on both.
func.func @rescaled(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index, %s: f32)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %fill = tile.fill %s : f32 -> !tile.rt<64x64xf32>
    %scaled = tile.mul %x, %fill : !tile.rt<64x64xf32>
    %zero = tile.zeros : !tile.rt<64x64xf32>
    %p = tile.mma %ta, %tb, %zero : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %sum = tile.add %scaled, %p : !tile.rt<64x64xf32>
    scf.yield %sum : !tile.rt<64x64xf32>
  }
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
  %tb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
  %zero = tile.zeros : !tile.rt<64x64xf32>
  %p = tile.mma %ta, %tb, %zero : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  %last = tile.add %p, %acc : !tile.rt<64x64xf32>
  tile.store %last, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @rescaled
// CHECK: %scaled = tile.mul %x, %fill
// CHECK-NOT: tile.zeros
// CHECK: %sum = tile.mma %ta, %tb, %scaled
// CHECK: scf.yield %sum
// CHECK: %last = tile.mma %ta_1, %tb_1, %acc
// CHECK-NOT: tile.add

// WGMMA-LABEL: func.func @rescaled
// WGMMA: %scaled = tile.mul %x, %fill
// WGMMA: %zero = tile.zeros
// WGMMA: %p = tile.wgmma
// WGMMA: %sum = tile.add %scaled, %p
// WGMMA: %last = tile.wgmma {{.*}}, %acc
// WGMMA-NOT: tile.add
