// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// A gathering async copy (tile-stage's form of a staged tl.load(a_ptrs, mask=...)): the offsets are
// a row's start plus consecutive columns (a "row" vector times the row stride, broadcast, plus an iota
// of the columns), the mask a test of the columns. tile-layout gives the offsets and the mask the
// copy's partition of the tile (16 rows of two 16-byte runs over 32 threads). tile-distribute takes each
// thread's run's first offset only (the others are it plus 0..7, index_steps' step of 1): one test for the
// whole copy (each run's first address 16-byte aligned, inside the view's span up to its last set bit),
// then a cp.async a run whose source size is its leading set bits; else every element through
// registers (predicated loads, one vector store to shared memory a run).
func.func @gathered(%a: !tile.gl<f16, [?, ?]>, %stride: i32, %lim: i32) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  %rows = tile.iota %c0 dim 0 : !tile.rv<16xi32, row>
  %starts = tile.map %rows : !tile.rv<16xi32, row> -> !tile.rv<16xi32, row> {
  ^bb0(%r: i32):
    %x = arith.muli %r, %stride : i32
    tile.yield %x : i32
  }
  %sb = tile.broadcast %starts : !tile.rv<16xi32, row> -> !tile.rt<16x16xi32>
  %cols = tile.iota %c0 dim 1 : !tile.rt<16x16xi32>
  %offs = tile.map %sb, %cols : !tile.rt<16x16xi32>, !tile.rt<16x16xi32> -> !tile.rt<16x16xi32> {
  ^bb0(%u: i32, %v: i32):
    %o = arith.addi %u, %v : i32
    tile.yield %o : i32
  }
  %ci = tile.iota %c0 dim 0 : !tile.rv<16xi32, col>
  %in = tile.map %ci : !tile.rv<16xi32, col> -> !tile.rv<16xi1, col> {
  ^bb0(%j: i32):
    %lt = arith.cmpi slt, %j, %lim : i32
    tile.yield %lt : i1
  }
  %m = tile.broadcast %in : !tile.rv<16xi1, col> -> !tile.rt<16x16xi1>
  tile.async_copy %a offsets %offs -> %s mask %m prefix : !tile.gl<f16, [?, ?]>[!tile.rt<16x16xi32>] -> !tile.st<16x16xf16>, !tile.rt<16x16xi1>
  tile.async_commit
  tile.async_wait 0
  func.return
}
// LAYOUT: %offs = tile.map %sb, %cols : {{.*}} -> !tile.rt<16x16xi32, ((2,16),8):((128,1),16)>
// LAYOUT: %m = tile.broadcast %in : !tile.rv<16xi1, col, ((2,16),8):((8,0),1)> -> !tile.rt<16x16xi1, ((2,16),8):((128,1),16)>
// LAYOUT: tile.async_copy %a offsets %offs -> %s mask %m prefix

// CHECK-LABEL: func.func @gathered
// CHECK: arith.cmpi ule, %{{.*}}, %{{.*}} : i64
// CHECK: scf.if %{{[0-9]+}} {
// CHECK-NOT: frag.load
// CHECK: frag.cp_async "cg" %{{.*}}, %{{.*}}, 16, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: } else {
// CHECK-COUNT-8: frag.load %{{.*}} if %{{.*}} : !llvm.ptr<1> -> f16
// CHECK: frag.store %{{.*}}, %{{.*}} : vector<8xf16>, !llvm.ptr<3>
// CHECK-NEXT: }
// CHECK-NEXT: frag.cp_async_commit
