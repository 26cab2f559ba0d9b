// RUN: tile-opt %s -p tile-layout --split-input-file | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute --split-input-file | filecheck %s

// A masked store (Triton's tl.store(..., mask=m)): tile-layout gives the i1 mask the stored value's
// fragment, so each lane holds the bit of each value it stores. A run of four f32 (16 bytes) is one
// vector store where the view allows it and all four bits are set; else each element is stored
// alone under its bounds and its own bit.
func.func @tile(%x: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}, %r: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%r, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<8x64xf32>
  %m = tile.map %t : !tile.rt<8x64xf32> -> !tile.rt<8x64xi1> {
  ^bb0(%a: f32):
    %z = arith.constant 0.000000e+00 : f32
    %p = arith.cmpf ogt, %a, %z : f32
    tile.yield %p : i1
  }
  tile.store %t, %o[%r, %c0] mask %m : !tile.rt<8x64xf32> -> !tile.gl<f32, [?, ?]>, !tile.rt<8x64xi1>
  func.return
}
// tile-layout puts the i1 mask in the stored value's class: one fragment for both, chosen for the
// f32 value's 16-byte runs (an i1 does not narrow the class's accesses to bytes).
// LAYOUT-LABEL: func.func @tile(
// LAYOUT: tile.store %t, %o[%r, %c0] mask %m : !tile.rt<8x64xf32, [[F:.*]]> -> !tile.gl<f32, [?, ?]>, !tile.rt<8x64xi1, [[F]]>
// CHECK-LABEL: func.func @tile(
// CHECK:      %[[P0:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[P1:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[P2:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[P3:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK:      %[[IN:.*]] = arith.andi %[[ROW:.*]], %{{.*}} : i1
// CHECK-NEXT: %[[A1:.*]] = arith.andi %[[IN]], %[[P0]] : i1
// CHECK-NEXT: %[[A2:.*]] = arith.andi %[[A1]], %[[P1]] : i1
// CHECK-NEXT: %[[A3:.*]] = arith.andi %[[A2]], %[[P2]] : i1
// CHECK-NEXT: %[[ALL:.*]] = arith.andi %[[A3]], %[[P3]] : i1
// CHECK-NEXT: scf.if %[[ALL]] {
// CHECK:        frag.store %{{.*}}, %{{.*}} : vector<4xf32>, !llvm.ptr<1>
// CHECK-NEXT: } else {
// CHECK:        %[[E0:.*]] = arith.andi %{{.*}}, %[[P0]] : i1
// CHECK-NEXT:   frag.store %{{.*}}, %{{.*}} if %[[E0]] : f32, !llvm.ptr<1>
// CHECK:        %[[E3:.*]] = arith.andi %{{.*}}, %[[P3]] : i1
// CHECK:        frag.store %{{.*}}, %{{.*}} if %[[E3]] : f32, !llvm.ptr<1>
// CHECK-NEXT: }
// CHECK:      scf.if
// CHECK-NOT:  frag.store %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : f32

// -----

// An atomic with a mask: the element's predicate (its combining thread, inside the view) and its bit.
func.func @atomic(%x: !tile.gl<f32, [?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : !tile.gl<f32, [?]> -> !tile.rv<32xf32, col>
  %m = tile.map %v : !tile.rv<32xf32, col> -> !tile.rv<32xi1, col> {
  ^bb0(%a: f32):
    %z = arith.constant 0.000000e+00 : f32
    %p = arith.cmpf olt, %a, %z : f32
    tile.yield %p : i1
  }
  tile.atomic "add" %v, %o[%c0] mask %m : !tile.rv<32xf32, col> -> !tile.gl<f32, [?]>, !tile.rv<32xi1, col>
  func.return
}
// LAYOUT-LABEL: func.func @atomic(
// LAYOUT: tile.atomic "add" %v, %o[%c0] mask %m : !tile.rv<32xf32, col, [[V:.*]]> -> !tile.gl<f32, [?]>, !tile.rv<32xi1, col, [[V]]>
// CHECK-LABEL: func.func @atomic(
// CHECK:      %[[BIT:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK:      %[[P:.*]] = arith.andi %{{.*}}, %[[BIT]] : i1
// CHECK:      frag.red "add" %{{.*}}, %{{.*}} if %[[P]] : f32, !llvm.ptr<1>
