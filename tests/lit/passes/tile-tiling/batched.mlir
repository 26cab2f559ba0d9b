// RUN: tile-opt %s -p 'tile-tiling{block=64,64,32}' | filecheck %s
// RUN: tile-opt %s -p 'tile-to-ptx{block=64,64,32 stages=3}' -t ptx | filecheck %s --check-prefix=PTX

// A batched tile.matmul (3-D views): block y multiplies matrix block_id(1) through tile.subview's of
// the trailing dimensions, and the rest is the 2-D tiling. Split-K runs K's slices this way: strided
// views of one A and one B, one f32 partial product each.

func.func @batch(%a: !tile.gl<f16, [?, ?, ?]>, %b: !tile.gl<f16, [?, ?, ?]>, %c: !tile.gl<f32, [?, ?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?, ?]>, !tile.gl<f16, [?, ?, ?]> -> !tile.gl<f32, [?, ?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}

// CHECK:      tile.launch = #tile.launch<grid = [?, ?, 1]
// CHECK:      %batch = tile.block_id y
// CHECK-NEXT: %a_b = tile.subview %a[%batch] : !tile.gl<f16, [?, ?, ?]> -> !tile.gl<f16, [?, ?]>
// CHECK-NEXT: %b_b = tile.subview %b[%batch] : !tile.gl<f16, [?, ?, ?]> -> !tile.gl<f16, [?, ?]>
// CHECK-NEXT: %c_b = tile.subview %c[%batch] : !tile.gl<f32, [?, ?, ?]> -> !tile.gl<f32, [?, ?]>
// CHECK-NEXT: %M = tile.dim %a_b, 0
// CHECK:        tile.copy %a_b[%row0, %k] -> %sa
// CHECK:      tile.store %{{.*}}, %c_b[%row, %col]

// PTX: mov.u32 {{.*}}%ctaid.y
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// -----
