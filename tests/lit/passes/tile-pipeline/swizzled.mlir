// RUN: tile-opt %s -p 'tile-pipeline{stages=3}' | filecheck %s

// A swizzled shared tile keeps its swizzle in every stage:
// Sw<3,3,3> o 0 o (64,64):(64,1) becomes Sw<3,3,3> o 0 o (3,64,64):(4096,64,1).
// The stage stride 4096 is a multiple of the swizzle's period 2^(3+3+3) = 512,
// so Sw(i*4096 + o) = i*4096 + Sw(o): tile.stage's layout is the tile's own.
// A 16x16 f16 tile (256 elements) under the same swizzle gets a stage stride
// of 512 (padded to the period), and the smem grows by the padding too:
// 8192 + 512 + 512 bytes -> 3 * 8192 + (2 * 1024 + 512) + 512 bytes.
// A loop that copies into shared memory after its first barrier is not a K
// loop: it is left alone.

func.func @k(%a: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 9216>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %t = tile.alloc : !tile.st<16x16xf16, Sw<3,3,3> o 0 o (16,16):(16,1)>
  %zero = tile.zeros : !tile.rt<64x16xf32>
  %r = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (!tile.rt<64x16xf32>) {
    tile.copy %a[%c0, %k] -> %s : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
    tile.copy %a[%k, %c0] -> %t : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16, Sw<3,3,3> o 0 o (16,16):(16,1)>
    tile.barrier
    %x = tile.load %s[%c0, %c0] : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<64x16xf16>
    %y = tile.load %t : !tile.st<16x16xf16, Sw<3,3,3> o 0 o (16,16):(16,1)> -> !tile.rt<16x16xf16>
    %d = tile.mma %x, %y, %acc : !tile.rt<64x16xf16>, !tile.rt<16x16xf16>, !tile.rt<64x16xf32> -> !tile.rt<64x16xf32>
    tile.barrier
    scf.yield %d : !tile.rt<64x16xf32>
  }
  %u = tile.alloc : !tile.st<16x16xf16>
  scf.for %k = %c0 to %K step %c64 {
    tile.barrier
    tile.copy %a[%c0, %k] -> %u : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>
  }
  tile.store %r, %o[%c0, %c0] : !tile.rt<64x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @k
// CHECK-SAME:  smem = 27648
// CHECK:       %s = tile.alloc : !tile.st<3x64x64xf16, Sw<3,3,3> o 0 o (3,64,64):(4096,64,1)>
// CHECK-NEXT:  %t = tile.alloc : !tile.st<3x16x16xf16, Sw<3,3,3> o 0 o (3,16,16):(512,16,1)>
// CHECK:       scf.for
// CHECK:         %s_r = tile.stage %s[%rs] : !tile.st<3x64x64xf16, Sw<3,3,3> o 0 o (3,64,64):(4096,64,1)> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK-NEXT:    %t_r = tile.stage %t[%rs] : !tile.st<3x16x16xf16, Sw<3,3,3> o 0 o (3,16,16):(512,16,1)> -> !tile.st<16x16xf16, Sw<3,3,3> o 0 o (16,16):(16,1)>
// CHECK:       scf.for %k_1 = %c0 to %K step %c64 {
// CHECK-NEXT:    tile.barrier
// CHECK-NEXT:    tile.copy %a[%c0, %k_1] -> %u
