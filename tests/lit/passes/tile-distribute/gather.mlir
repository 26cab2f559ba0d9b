// RUN: tile-opt %s -p tile-layout --split-input-file | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute --split-input-file | filecheck %s

// An embedding's rows (numpy's table[ids]): a gather whose row indices are a loaded vector broadcast
// over the columns, the columns an iota. tile-layout gives the result and both index tiles one
// fragment; tile-distribute computes each of a lane's elements' address, base + row * stride0 +
// col * stride1, inside the table when both indices are below their extents (compared unsigned: a
// negative id reads 0). The columns step by 1 (index_steps) and the rows do not move along them, so
// a lane's run of four f32 is one 16-byte load where its first address is aligned, its first and
// last elements lie inside and the table's rows are contiguous (stride1 = 1); else each element is
// loaded alone, its address and test built in that branch.
func.func @rows(%ids: !tile.gl<i32, [?]>, %table: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %r: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %id = tile.load %ids[%r] : !tile.gl<i32, [?]> -> !tile.rv<8xi32, row>
  %rows = tile.broadcast %id : !tile.rv<8xi32, row> -> !tile.rt<8x16xi32>
  %cols = tile.iota %c0 dim 1 : !tile.rt<8x16xi32>
  %t = tile.gather %table[%rows, %cols] : !tile.gl<f32, [?, ?]>[!tile.rt<8x16xi32>, !tile.rt<8x16xi32>] -> !tile.rt<8x16xf32>
  tile.store %t, %o[%r, %c0] : !tile.rt<8x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// LAYOUT-LABEL: func.func @rows(
// LAYOUT: tile.gather %table[%rows, %cols] : !tile.gl<f32, [?, ?]>[!tile.rt<8x16xi32, [[F:.*]]>, !tile.rt<8x16xi32, [[F]]>] -> !tile.rt<8x16xf32, [[F]]>
// CHECK-LABEL: func.func @rows(
// CHECK:      %[[ROW:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK:      %[[OFF:.*]] = arith.muli %[[ROW]], %table_stride0 : i64
// CHECK:      %[[P0:.*]] = llvm.getelementptr %table[%{{.*}}]
// CHECK-NEXT: %[[IN0:.*]] = arith.cmpi ult, %[[ROW]], %table_dim0 : i64
// CHECK:      %[[ADDR:.*]] = llvm.ptrtoint %[[P0]] : !llvm.ptr<1> to i64
// CHECK:      %[[UNIT:.*]] = arith.cmpi eq, %table_stride1, %{{.*}} : i64
// CHECK:      %[[WHOLE:.*]] = arith.andi %{{.*}}, %[[UNIT]] : i1
// CHECK-NEXT: %[[V:.*]] = scf.if %[[WHOLE]] -> (vector<4xf32>) {
// CHECK-NEXT:   %{{.*}} = frag.load %[[P0]] : !llvm.ptr<1> -> vector<4xf32>
// CHECK:      } else {
// CHECK-COUNT-4: frag.load %{{.*}} if %{{.*}} : !llvm.ptr<1> -> f32

// -----

// Triton's tl.load(x_ptr + offsets, mask=m, other=-1.0), then tl.store(x_ptr + i, ...): a linear
// gather and scatter. An offset counts elements in memory from the view's first one; it is inside
// below the span 1 + sum((extent - 1) * stride) (0 for an empty view). A masked-off or outside
// element is not read and reads -1.
func.func @linear(%x: !tile.gl<f32, [?, ?]>, %n: i32)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %i = tile.iota %c0 dim 0 : !tile.rv<32xi32, col>
  %off = tile.map %i : !tile.rv<32xi32, col> -> !tile.rv<32xi32, col> {
  ^bb0(%a: i32):
    %three = arith.constant 3 : i32
    %b = arith.muli %a, %three : i32
    tile.yield %b : i32
  }
  %m = tile.map %i : !tile.rv<32xi32, col> -> !tile.rv<32xi1, col> {
  ^bb0(%a: i32):
    %p = arith.cmpi slt, %a, %n : i32
    tile.yield %p : i1
  }
  %g = tile.gather %x[%off] linear mask %m other(-1.0) : !tile.gl<f32, [?, ?]>[!tile.rv<32xi32, col>], !tile.rv<32xi1, col> -> !tile.rv<32xf32, col>
  tile.scatter %g, %x[%i] linear : !tile.rv<32xf32, col> -> !tile.gl<f32, [?, ?]>[!tile.rv<32xi32, col>]
  func.return
}
// CHECK-LABEL: func.func @linear(
// CHECK:      %[[REACH0:.*]] = arith.muli %{{.*}}, %x_stride0 : i64
// CHECK:      %[[REACH1:.*]] = arith.muli %{{.*}}, %x_stride1 : i64
// CHECK-NEXT: %[[REACH:.*]] = arith.addi %[[REACH0]], %[[REACH1]] : i64
// CHECK-NEXT: %[[SPAN1:.*]] = arith.addi %[[REACH]], %{{.*}} : i64
// CHECK-NEXT: %[[E0:.*]] = arith.cmpi eq, %x_dim0, %{{.*}} : i64
// CHECK-NEXT: %[[SPAN2:.*]] = arith.select %[[E0]], %{{.*}}, %[[SPAN1]] : i64
// CHECK-NEXT: %[[E1:.*]] = arith.cmpi eq, %x_dim1, %{{.*}} : i64
// CHECK-NEXT: %[[SPAN:.*]] = arith.select %[[E1]], %{{.*}}, %[[SPAN2]] : i64
// CHECK-NEXT: %[[OFF:.*]] = arith.extsi %b : i32 to i64
// CHECK-NEXT: %[[PTR:.*]] = llvm.getelementptr %x[%[[OFF]]]
// CHECK-NEXT: %[[INSIDE:.*]] = arith.cmpi ult, %[[OFF]], %[[SPAN]] : i64
// CHECK-NEXT: %[[P:.*]] = arith.andi %[[INSIDE]], %p : i1
// CHECK-NEXT: %[[G:.*]] = frag.load %[[PTR]] if %[[P]] : !llvm.ptr<1> -> f32
// CHECK-NEXT: %[[V:.*]] = arith.select %[[P]], %[[G]], %{{.*}} : f32
// CHECK:      %[[IN2:.*]] = arith.cmpi ult, %{{.*}}, %[[SPAN]] : i64
// CHECK-NEXT: frag.store %[[V]], %{{.*}} if %[[IN2]] : f32, !llvm.ptr<1>

// -----

// A histogram (Triton's tl.atomic_add(hist + bins, 1, mask=m)): tile.scatter_atomic at linear
// offsets; each element is one red.global.add at its address, under its place's test and mask bit
// (the vector is spread over the block: each element has one holder, which combines it).
func.func @histogram(%x: !tile.gl<i32, [?]>, %h: !tile.gl<i32, [?]>, %n: i32)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %bins = tile.load %x[%c0] : !tile.gl<i32, [?]> -> !tile.rv<32xi32, col>
  %i = tile.iota %c0 dim 0 : !tile.rv<32xi32, col>
  %m = tile.map %i : !tile.rv<32xi32, col> -> !tile.rv<32xi1, col> {
  ^bb0(%a: i32):
    %p = arith.cmpi slt, %a, %n : i32
    tile.yield %p : i1
  }
  %one = arith.constant 1 : i32
  %ones = tile.fill %one : i32 -> !tile.rv<32xi32, col>
  tile.scatter_atomic "add" %ones, %h[%bins] linear mask %m : !tile.rv<32xi32, col> -> !tile.gl<i32, [?]>[!tile.rv<32xi32, col>], !tile.rv<32xi1, col>
  func.return
}
// CHECK-LABEL: func.func @histogram(
// CHECK:      %[[OFF:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK-NEXT: %[[PTR:.*]] = llvm.getelementptr %h[%[[OFF]]]
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[OFF]], %{{.*}} : i64
// CHECK:      %[[P:.*]] = arith.andi %[[IN]], %p : i1
// CHECK-NEXT: frag.red "add" %{{.*}}, %[[PTR]] if %[[P]] : i32, !llvm.ptr<1>

// -----

// Triton's tl.store(c_ptr + offs_m[:, None] * ld + offs_n[None, :], acc, mask=offs_n[None, :] < n): an
// mma's accumulator scattered at offsets that step by 1 along its rows. Each lane holds two rows of two
// runs (2 x f32) each, so one test a row (its first run aligned, its first and last elements inside,
// the mask's bit at its last element: the mask's rows fall) decides for every run; the run-by-run stores
// are the fallback.
func.func @acc_rows(%a: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %ld: i32, %n: i32)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %x = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %y = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %z = tile.zeros : !tile.rt<16x16xf32>
  %acc = tile.mma %x, %y, %z : !tile.rt<16x16xf16>, !tile.rt<16x16xf16>, !tile.rt<16x16xf32> -> !tile.rt<16x16xf32>
  %rows = tile.iota %c0 dim 0 : !tile.rt<16x16xi32>
  %cols = tile.iota %c0 dim 1 : !tile.rt<16x16xi32>
  %off = tile.map %rows, %cols : !tile.rt<16x16xi32>, !tile.rt<16x16xi32> -> !tile.rt<16x16xi32> {
  ^bb0(%r: i32, %k: i32):
    %s = arith.muli %r, %ld : i32
    %o = arith.addi %s, %k : i32
    tile.yield %o : i32
  }
  %m = tile.map %cols : !tile.rt<16x16xi32> -> !tile.rt<16x16xi1> {
  ^bb0(%k: i32):
    %p = arith.cmpi slt, %k, %n : i32
    tile.yield %p : i1
  }
  tile.scatter %acc, %c[%off] linear mask %m : !tile.rt<16x16xf32> -> !tile.gl<f32, [?, ?]>[!tile.rt<16x16xi32>], !tile.rt<16x16xi1>
  func.return
}
// CHECK-LABEL: func.func @acc_rows(
// CHECK:      frag.mma
// CHECK:      %[[ROWS:.*]] = arith.andi %{{.*}}, %p_7 : i1
// CHECK-NEXT: scf.if %[[ROWS]] {
// CHECK-COUNT-4: frag.store %{{.*}}, %{{.*}} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NEXT: } else {
// CHECK-COUNT-4: scf.if %{{.*}} {

// -----

// Triton's x = tl.load(p + i); tl.store(p + i, x + 1) with 16 elements in a block of 128 threads: lanes 0-15
// of every warp hold them, so the store is one holder's each (thread bits 4-6 clear: bits 112), as an atomic
// combines; every holder writing would let a warp that reads after another's write add again.
func.func @bump(%p: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %i = tile.iota %c0 dim 0 : !tile.rv<16xi32, col>
  %x = tile.gather %p[%i] linear : !tile.gl<f32, [?]>[!tile.rv<16xi32, col>] -> !tile.rv<16xf32, col>
  %y = tile.map %x : !tile.rv<16xf32, col> -> !tile.rv<16xf32, col> {
  ^bb0(%a: f32):
    %one = arith.constant 1.000000e+00 : f32
    %b = arith.addf %a, %one : f32
    tile.yield %b : f32
  }
  tile.scatter %y, %p[%i] linear : !tile.rv<16xf32, col> -> !tile.gl<f32, [?]>[!tile.rv<16xi32, col>]
  func.return
}
// CHECK-LABEL: func.func @bump(
// CHECK:      %[[BITS:.*]] = arith.constant 112 : i32
// CHECK:      %[[MINE:.*]] = arith.andi %tid, %[[BITS]] : i32
// CHECK-NEXT: %[[HOLDS:.*]] = arith.cmpi eq, %[[MINE]], %{{.*}} : i32
// CHECK-NEXT: scf.if %[[HOLDS]] {
// CHECK:        frag.store %b, %{{.*}} if %{{.*}} : f32, !llvm.ptr<1>
