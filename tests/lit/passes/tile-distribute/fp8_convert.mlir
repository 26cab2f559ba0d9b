// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t "ptx{arch=sm_90a}" | filecheck %s --check-prefix=PTX

// tile.convert from and to FP8: PTX converts FP8 from and to f16 and f32 only (lowering/fp8.py), so
// tile-distribute goes through f32 for the rest (exact on the way in): FP8 to bf16, to the other FP8
// type, to f64 and back, to i32.
func.func @conv(%a: !tile.gl<f8E4M3FN, [?, ?]>, %o1: !tile.gl<bf16, [?, ?]>, %o2: !tile.gl<i32, [?, ?]>, %o3: !tile.gl<f8E5M2, [?, ?]>, %o4: !tile.gl<f64, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.load %a[%c0, %c0] : !tile.gl<f8E4M3FN, [?, ?]> -> !tile.rt<8x16xf8E4M3FN>
  %b = tile.convert %x : !tile.rt<8x16xf8E4M3FN> -> !tile.rt<8x16xbf16>
  tile.store %b, %o1[%c0, %c0] : !tile.rt<8x16xbf16> -> !tile.gl<bf16, [?, ?]>
  %i = tile.convert %x : !tile.rt<8x16xf8E4M3FN> -> !tile.rt<8x16xi32>
  tile.store %i, %o2[%c0, %c0] : !tile.rt<8x16xi32> -> !tile.gl<i32, [?, ?]>
  %e = tile.convert %x : !tile.rt<8x16xf8E4M3FN> -> !tile.rt<8x16xf8E5M2>
  tile.store %e, %o3[%c0, %c0] : !tile.rt<8x16xf8E5M2> -> !tile.gl<f8E5M2, [?, ?]>
  %d = tile.convert %x : !tile.rt<8x16xf8E4M3FN> -> !tile.rt<8x16xf64>
  %back = tile.convert %d : !tile.rt<8x16xf64> -> !tile.rt<8x16xf8E5M2>
  tile.store %d, %o4[%c0, %c0] : !tile.rt<8x16xf64> -> !tile.gl<f64, [?, ?]>
  tile.store %back, %o3[%c0, %c0] : !tile.rt<8x16xf8E5M2> -> !tile.gl<f8E5M2, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @conv(
// CHECK-NOT:  f8E4M3FN to bf16
// CHECK:      arith.extf %{{.*}} : f8E4M3FN to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT:  f8E4M3FN to i32
// CHECK:      arith.fptosi %{{.*}} : f32 to i32
// CHECK-NOT:  f8E4M3FN to f8E5M2
// CHECK:      arith.truncf %{{.*}} : f32 to f8E5M2
// CHECK-NOT:  f8E4M3FN to f64
// CHECK:      arith.extf %{{.*}} : f32 to f64
// CHECK:      arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to f8E5M2

// PTX: cvt.rn.f16x2.e4m3x2
// PTX: cvt.rn.satfinite.e5m2x2.f32
