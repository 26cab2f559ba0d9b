// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// tile.subview: the head's matrix starts at h * stride0 of the 3-D view, with its trailing extents and
// strides; a head past the view's extent gets extents 0, so every access of it is out of bounds (the
// load reads 0, as a window past a view's end does). The kernel's argument is still the whole view.

// CHECK:      func.func @head_rows(%q: !llvm.ptr<1> {{.*}}, %q_dim0: i64 {{.*}}, %q_dim1: i64 {{.*}}, %q_dim2: i64
// CHECK:        %[[H:.*]] = arith.index_cast %h : index to i64
// CHECK-NEXT:   %[[INSIDE:.*]] = arith.cmpi ult, %[[H]], %q_dim0 : i64
// CHECK-NEXT:   %[[ROWS:.*]] = arith.select %[[INSIDE]], %q_dim1, %{{.*}} : i64
// CHECK-NEXT:   %[[COLS:.*]] = arith.select %[[INSIDE]], %q_dim2, %{{.*}} : i64
// CHECK-NEXT:   %[[OFF:.*]] = arith.muli %[[H]], %q_stride0 : i64
// CHECK-NEXT:   %[[BASE:.*]] = llvm.getelementptr %q[%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK:        arith.cmpi ult, %{{.*}}, %[[ROWS]] : i64
// CHECK:        llvm.getelementptr %[[BASE]][%{{.*}}]
// CHECK:        arith.cmpi ult, %{{.*}}, %[[COLS]] : i64
// CHECK:        frag.load
func.func @head_rows(%q: !tile.gl<f32, [?, ?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %h = tile.block_id x
  %qh = tile.subview %q[%h] : !tile.gl<f32, [?, ?, ?]> -> !tile.gl<f32, [?, ?]>
  %t = tile.load %qh[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<1x32xf32>
  tile.store %t, %o[%h, %c0] : !tile.rt<1x32xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
