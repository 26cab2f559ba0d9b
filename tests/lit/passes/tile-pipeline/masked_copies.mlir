// RUN: tile-opt %s -p 'tile-pipeline{stages=3 bulk=true reg-double-buffer=false}' | filecheck %s

// A K loop whose copies take masks (tile-stage's form of Triton's tl.load(..., mask=k < K, other=0)):
// each async copy of a later K tile takes the mask computed for that tile, the mask's map (reading
// the body's %lim) cloned with the rest of the copy's index math into the prologue and the issue.
// Bulk tensor copies zero-fill outside the view only, so even with bulk=true the copies stay cp.async.
func.func @masked(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]>, %kk: i32, %n: index)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 4096>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %i = arith.muli %bx, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %sa = tile.alloc : !tile.st<64x32xf16>
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %k0 = arith.muli %k, %c32 : index
    %iota = tile.iota %c0 dim 0 : !tile.rv<32xi32, col>
    %k32 = arith.index_cast %k0 : index to i32
    %lim = arith.subi %kk, %k32 : i32
    %in = tile.map %iota : !tile.rv<32xi32, col> -> !tile.rv<32xi1, col> {
    ^bb0(%j: i32):
      %lt = arith.cmpi slt, %j, %lim : i32
      tile.yield %lt : i1
    }
    %ma = tile.broadcast %in : !tile.rv<32xi1, col> -> !tile.rt<64x32xi1>
    tile.copy %a[%i, %k0] -> %sa mask %ma prefix : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16>, !tile.rt<64x32xi1>
    tile.barrier
    %ta = tile.load %sa : !tile.st<64x32xf16> -> !tile.rt<64x32xf16>
    %tb = tile.transpose %ta : !tile.rt<64x32xf16> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @masked
// CHECK: scf.if %more0 {
// CHECK: %[[LIM0:[a-z_0-9]+]] = arith.subi %kk,
// CHECK-NEXT: %[[IN0:[a-z_0-9]+]] = tile.map %{{.*}} -> !tile.rv<32xi1, col> {
// CHECK: arith.cmpi slt, %{{.*}}, %[[LIM0]] : i32
// CHECK: %[[M0:[a-z_0-9]+]] = tile.broadcast %[[IN0]]
// CHECK: tile.async_copy %a[%i, %{{.*}}] -> %{{.*}} mask %[[M0]] prefix :
// CHECK: scf.if %more1 {
// CHECK: tile.async_copy %a[%i, %{{.*}}] -> %{{.*}} mask %{{.*}} :
// CHECK: scf.for
// CHECK: tile.async_wait 1
// CHECK: %[[LIM:[a-z_0-9]+]] = arith.subi %kk,
// CHECK-NEXT: %[[IN:[a-z_0-9]+]] = tile.map
// CHECK: arith.cmpi slt, %{{.*}}, %[[LIM]] : i32
// CHECK: %[[M:[a-z_0-9]+]] = tile.broadcast %[[IN]]
// CHECK: tile.async_copy %a[%i, %{{.*}}] -> %{{.*}} mask %[[M]] prefix :
// CHECK-NOT: tile.copy
// CHECK-NOT: tile.bulk_copy
