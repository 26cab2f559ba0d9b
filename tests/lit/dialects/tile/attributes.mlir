// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// Layout attributes are written in CuTe's notation and printed back exactly.

// CHECK:      func.func @layouts() attributes {
// CHECK-SAME: flat = #tile.layout<8:1>
// CHECK-SAME: nested = #tile.layout<(8,(4,2)):(4,(1,32))>
// CHECK-SAME: broadcast = #tile.layout<(4,8):(0,1)>
// CHECK-SAME: one = #tile.layout<(8):(1)>
// CHECK-SAME: swizzled = #tile.layout<Sw<3,3,3> o 0 o (8,64):(64,1)>
// CHECK-SAME: offset = #tile.layout<Sw<2,3,3> o 32 o (8,32):(32,1)>
// CHECK-SAME: sw = #tile.swizzle<3,4,3>
// CHECK-SAME: tv = #tile.tv<((4,8),(2,2)):((32,1),(16,8))>
// CHECK-SAME: mma = #tile.mma_atom<mma_m16n8k16_bf16>
// CHECK-SAME: tf32 = #tile.mma_atom<mma_m16n8k8_tf32>
// CHECK-SAME: fma = #tile.mma_atom<fma_f32>
// CHECK-SAME: ldsm = #tile.copy_atom<ldmatrix_x4_trans>
// CHECK-SAME: cp = #tile.copy_atom<cp_async_16_b16>
// CHECK-SAME: launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 49152>
func.func @layouts() attributes {
  flat = #tile.layout<8:1>,
  nested = #tile.layout<(8,(4,2)):(4,(1,32))>,
  broadcast = #tile.layout<(4,8):(0,1)>,
  one = #tile.layout<(8):(1)>,
  swizzled = #tile.layout<Sw<3,3,3> o 0 o (8,64):(64,1)>,
  offset = #tile.layout<Sw<2,3,3> o 32 o (8, 32) : (32, 1)>,
  sw = #tile.swizzle<3,4,3>,
  tv = #tile.tv<((4,8),(2,2)):((32,1),(16,8))>,
  mma = #tile.mma_atom<mma_m16n8k16_bf16>,
  tf32 = #tile.mma_atom<mma_m16n8k8_tf32>,
  fma = #tile.mma_atom<fma_f32>,
  ldsm = #tile.copy_atom<ldmatrix_x4_trans>,
  cp = #tile.copy_atom<cp_async_16_b16>,
  launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 49152>
} {
  func.return
}
