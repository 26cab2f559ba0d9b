// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// A masked async copy (tile-stage's form of Triton's tl.load(..., mask=cols < lim, other=0)).
// tile-layout gives the mask the copy's partition of the tile (each thread the bits of the eight
// elements it copies: 16 rows of two 16-byte runs over 32 threads), so its broadcast and the map
// before it are computed in that fragment. tile-distribute issues each run as one cp.async whose
// source size is the run's leading set bits (zero-filling the rest, as outside the view), under a
// test that every run's bits are a prefix (LLVM proves it for an iota compared with a bound); else
// every run goes element by element through registers (predicated loads, one shared store).
func.func @copy(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %lim: i32, %i: index) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  %iota = tile.iota %c0 dim 0 : !tile.rv<16xi32, col>
  %in = tile.map %iota : !tile.rv<16xi32, col> -> !tile.rv<16xi1, col> {
  ^bb0(%j: i32):
    %lt = arith.cmpi slt, %j, %lim : i32
    tile.yield %lt : i1
  }
  %m = tile.broadcast %in : !tile.rv<16xi1, col> -> !tile.rt<16x16xi1>
  tile.async_copy %a[%i, %i] -> %s mask %m : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>, !tile.rt<16x16xi1>
  tile.async_commit
  tile.async_wait 0
  func.return
}
// LAYOUT: %m = tile.broadcast %in : !tile.rv<16xi1, col, ((2,16),8):((8,0),1)> -> !tile.rt<16x16xi1, ((2,16),8):((128,1),16)>
// LAYOUT: tile.async_copy %a[%i, %i] -> %s mask %m

// CHECK-LABEL: func.func @copy
// CHECK: %lt = arith.cmpi slt, %{{.*}}, %lim : i32
// CHECK-COUNT-7: arith.cmpi slt, %{{.*}}, %lim : i32
// CHECK: scf.if %{{.*}} {
// CHECK: scf.if %[[PREFIX:[0-9]+]] {
// CHECK: %[[BYTES:[0-9]+]] = arith.shli %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[SIZE:[0-9]+]] = arith.select %{{.*}}, %[[BYTES]], %{{.*}} : i32
// CHECK-NEXT: frag.cp_async "cg" %{{.*}}, %{{.*}}, 16, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: } else {
// CHECK: %{{.*}} = arith.andi %{{.*}}, %lt : i1
// CHECK-NEXT: frag.load %{{.*}} if %{{.*}} : !llvm.ptr<1> -> f16
// CHECK-COUNT-7: frag.load
// CHECK: frag.store %{{.*}}, %{{.*}} : vector<8xf16>, !llvm.ptr<3>

// The same copy marked `prefix` (tile-stage proved every row of its mask true, then false): each run
// is issued with its count of set bits as the source size, with no test and no element path.
func.func @prefix_copy(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %lim: i32, %i: index) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  %iota = tile.iota %c0 dim 0 : !tile.rv<16xi32, col>
  %in = tile.map %iota : !tile.rv<16xi32, col> -> !tile.rv<16xi1, col> {
  ^bb0(%j: i32):
    %lt = arith.cmpi slt, %j, %lim : i32
    tile.yield %lt : i1
  }
  %m = tile.broadcast %in : !tile.rv<16xi1, col> -> !tile.rt<16x16xi1>
  tile.async_copy %a[%i, %i] -> %s mask %m prefix : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>, !tile.rt<16x16xi1>
  tile.async_commit
  tile.async_wait 0
  func.return
}
// CHECK-LABEL: func.func @prefix_copy
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: frag.load
// CHECK: %[[N:[0-9]+]] = arith.shli %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[SIZE:[0-9]+]] = arith.select %{{.*}}, %[[N]], %{{.*}} : i32
// CHECK-NEXT: frag.cp_async "cg" %{{.*}}, %{{.*}}, 16, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: } else {
