// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A barrier op on the wrong kind of barrier names the op and the kind it expects.

func.func @arrive_on_full(%i: index) {
  %full = tile.mbar_init : !tile.mbar<2>
  tile.mbar_arrive %full[%i] : !tile.mbar<2>
  func.return
}
// CHECK: 'tile.mbar_arrive' expects per-warp barriers (!tile.mbar<2, warps>), got !tile.mbar<2>

// -----

func.func @expect_on_empty(%i: index) {
  %empty = tile.mbar_init : !tile.mbar<2, warps>
  tile.mbar_expect %empty[%i], 4096 : !tile.mbar<2, warps>
  func.return
}
// CHECK: 'tile.mbar_expect' expects transaction barriers (!tile.mbar<2>), got !tile.mbar<2, warps>

// -----

func.func @copy_on_empty(%a: !tile.gl<f16, [?, ?]>, %i: index) {
  %empty = tile.mbar_init : !tile.mbar<1, warps>
  %s = tile.alloc : !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>
  tile.bulk_copy %a[%i, %i] -> %s, %empty[%i] : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>, !tile.mbar<1, warps>
  func.return
}
// CHECK: 'tile.bulk_copy' expects transaction barriers (!tile.mbar<1>), got !tile.mbar<1, warps>

// -----

func.func @store_unboxed(%c: !tile.gl<f16, [?, ?]>, %i: index) {
  %s = tile.alloc : !tile.st<16x128xf16, (16,128):(1,16)>
  tile.bulk_store %s -> %c[%i, %i] : !tile.st<16x128xf16, (16,128):(1,16)> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK: 'tile.bulk_store' a tensor map cannot read the layout (16,128):(1,16) of !tile.st<16x128xf16, (16,128):(1,16)>

// -----

func.func @store_other_element(%c: !tile.gl<f32, [?, ?]>, %i: index) {
  %s = tile.alloc : !tile.st<16x64xf16, Sw<3,3,3> o 0 o (16,64):(64,1)>
  tile.bulk_store %s -> %c[%i, %i] : !tile.st<16x64xf16, Sw<3,3,3> o 0 o (16,64):(64,1)> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: 'tile.bulk_store' element types differ: f16 vs f32
