// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_80}' | filecheck %s --check-prefix=PTX

// One warp: softmax of each row of a 16 x 64 window (ragged rows and columns).
func.func @softmax(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %rmax: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] other(0xFFF0000000000000 : f64) : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %m = tile.row_max %t : !tile.rt<16x64xf32> -> !tile.rv<16xf32, row>
  %mb = tile.broadcast %m : !tile.rv<16xf32, row> -> !tile.rt<16x64xf32>
  %d = tile.sub %t, %mb : !tile.rt<16x64xf32>
  %e = tile.exp %d : !tile.rt<16x64xf32>
  %s = tile.row_sum %e : !tile.rt<16x64xf32> -> !tile.rv<16xf32, row>
  %sb = tile.broadcast %s : !tile.rv<16xf32, row> -> !tile.rt<16x64xf32>
  %p = tile.div %e, %sb : !tile.rt<16x64xf32>
  tile.store %p, %o[%c0, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %m, %rmax[%c0] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}

// The row max of a 16x64 tile in m16n8k16's C fragment: lane 4g+q holds rows g and g+8, so its
// vector holds those two rows (((4,8),2):((0,1),8): stride 0 over the two lane bits that move
// along the row).
// LAYOUT: %m = tile.row_max %t : !tile.rt<16x64xf32, [[C:.*]]> -> !tile.rv<16xf32, row, ((4,8),2):((0,1),8)>
// LAYOUT: %mb = tile.broadcast %m : !tile.rv<16xf32, row, ((4,8),2):((0,1),8)> -> !tile.rt<16x64xf32, [[C]]>

// Outside the 13 x 50 view a value reads as -inf (other), selected against its bounds.
// CHECK: %[[NEGINF:[0-9]+]] = arith.constant 0xff800000 : f32
// CHECK: %[[ONE:[0-9]+]] = arith.constant 1 : i32
// CHECK: %[[TWO:[0-9]+]] = arith.constant 2 : i32
// CHECK: %[[THREE:[0-9]+]] = arith.constant 3 : i32
// CHECK: %[[ZERO:[0-9]+]] = arith.constant 0 : i32
// CHECK: arith.select %{{[0-9]+}}, %{{[0-9]+}}, %[[NEGINF]] : f32

// Each lane's 16 values of a row fold in registers, then a butterfly over lane bits 0 and 1
// (the bits that move along the row) leaves every lane of the row with its maximum.
// CHECK: %[[P0:[0-9]+]] = frag.shfl "bfly" %[[A0:[0-9]+]], %[[ONE]] : f32
// CHECK-NEXT: %[[A1:[0-9]+]] = arith.maximumf %[[A0]], %[[P0]] : f32
// CHECK: %[[P1:[0-9]+]] = frag.shfl "bfly" %[[A1]], %[[TWO]] : f32
// CHECK-NEXT: %[[MAX:[0-9]+]] = arith.maximumf %[[A1]], %[[P1]] : f32
// CHECK: arith.subf %{{[0-9]+}}, %[[MAX]] : f32
// The sum, likewise, after exp.
// CHECK: math.exp
// CHECK: frag.shfl "bfly" %{{[0-9]+}}, %[[ONE]] : f32
// CHECK: arith.addf
// CHECK: frag.shfl "bfly" %{{[0-9]+}}, %[[TWO]] : f32
// The row maxima go out once per row: from the lane whose column bits are zero.
// CHECK: %[[LEAD:[0-9]+]] = arith.andi %{{[0-9]+}}, %[[THREE]] : i32
// CHECK-NEXT: %[[IS:[0-9]+]] = arith.cmpi eq, %[[LEAD]], %[[ZERO]] : i32
// CHECK: frag.store %[[MAX]], %{{[0-9]+}} if %{{[0-9]+}} : f32, !llvm.ptr<1>

// The PTX has exp as ex2.approx of x log2(e), and the shuffles.
// PTX: mul.rn.f32 {{.*}}0f3FB8AA3B
// PTX: ex2.approx.ftz.f32
// PTX: shfl.sync.bfly.b32
