// RUN: tile-opt %s -p tile-stage | filecheck %s

// A batched GEMM that takes each batch's matrices in the K loop's body (Triton's tl.load(a[z], ...)
// inside the loop): the subviews and extents of values from outside the loop move before it, so the
// staged copies read views the loop does not change (the copies then go ahead of the body).
func.func @bmm(%a: !tile.gl<f16, [?, ?, ?]>, %b: !tile.gl<f16, [?, ?, ?]>, %c: !tile.gl<f32, [?, ?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %z = tile.block_id x
  %kk = tile.dim %a, 2 : !tile.gl<f16, [?, ?, ?]>
  %init = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %init) -> (!tile.rt<64x64xf32>) {
    %az = tile.subview %a[%z] : !tile.gl<f16, [?, ?, ?]> -> !tile.gl<f16, [?, ?]>
    %ta = tile.load %az[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %bz = tile.subview %b[%z] : !tile.gl<f16, [?, ?, ?]> -> !tile.gl<f16, [?, ?]>
    %tb = tile.load %bz[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  %cz = tile.subview %c[%z] : !tile.gl<f32, [?, ?, ?]> -> !tile.gl<f32, [?, ?]>
  tile.store %acc, %cz[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @bmm
// CHECK:      %az = tile.subview %a[%z]
// CHECK-NEXT: %bz = tile.subview %b[%z]
// CHECK:      %acc = scf.for %k = %c0 to %kk step %c32
// CHECK:      tile.copy %az[%c0, %k]
// CHECK:      tile.copy %bz[%k, %c0]
// CHECK:      tile.mma
