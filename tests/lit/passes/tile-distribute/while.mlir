// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=LAYOUT
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// A while loop on a run-time test (tl.lang's `while tl.max(tl.abs(t)) > 1.0: t = t * 0.5`): the tile
// carried through scf.while, its test a reduction of it. tile-layout gives the initial value, the
// test's argument, what scf.condition passes on, the body's argument, what it yields and the
// result one fragment; tile-distribute carries the thread's registers of it (16 of 32x64 f32 over
// 128 threads) as the loop's values and the count beside them.
func.func @halvings(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>, %count: !tile.gl<i32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.000000e+00 : f32
  %half = arith.constant 5.000000e-01 : f32
  %x_t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x64xf32>
  %t, %n = scf.while (%t_1 = %x_t, %n_1 = %c0) : (!tile.rt<32x64xf32>, index) -> (!tile.rt<32x64xf32>, index) {
    %a = tile.map %t_1 : !tile.rt<32x64xf32> -> !tile.rt<32x64xf32> {
    ^bb0(%e: f32):
      %f = math.absf %e : f32
      tile.yield %f : f32
    }
    %rows = tile.row_max %a : !tile.rt<32x64xf32> -> !tile.rv<32xf32, row>
    %col = tile.broadcast %rows : !tile.rv<32xf32, row> -> !tile.rt<32x1xf32>
    %m = tile.col_max %col : !tile.rt<32x1xf32> -> !tile.rv<1xf32, col>
    %s = tile.extract %m : !tile.rv<1xf32, col> -> f32
    %big = arith.cmpf ogt, %s, %one : f32
    scf.condition(%big) %t_1, %n_1 : !tile.rt<32x64xf32>, index
  } do {
  ^bb0(%t_2: !tile.rt<32x64xf32>, %n_2: index):
    %h = tile.fill %half : f32 -> !tile.rt<32x64xf32>
    %p = tile.mul %t_2, %h : !tile.rt<32x64xf32>
    %m1 = arith.addi %n_2, %c1 : index
    scf.yield %p, %m1 : !tile.rt<32x64xf32>, index
  }
  tile.store %t, %y[%c0, %c0] : !tile.rt<32x64xf32> -> !tile.gl<f32, [?, ?]>
  %i = arith.index_cast %n : index to i32
  %v = tile.fill %i : i32 -> !tile.rv<1xi32, col>
  tile.store %v, %count[%c0] : !tile.rv<1xi32, col> -> !tile.gl<i32, [?]>
  func.return
}
// LAYOUT: %x_t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x64xf32, [[FRAG:.*]]>
// LAYOUT-NEXT: %t, %n = scf.while (%t_1 = %x_t, %n_1 = %c0) : (!tile.rt<32x64xf32, [[FRAG]]>, index) -> (!tile.rt<32x64xf32, [[FRAG]]>, index) {
// LAYOUT: scf.condition(%big) %t_1, %n_1 : !tile.rt<32x64xf32, [[FRAG]]>, index
// LAYOUT: ^bb0(%t_2: !tile.rt<32x64xf32, [[FRAG]]>, %n_2: index):
// LAYOUT: scf.yield %p, %m1 : !tile.rt<32x64xf32, [[FRAG]]>, index
// LAYOUT: tile.store %t, %y[%c0, %c0] : !tile.rt<32x64xf32, [[FRAG]]> -> !tile.gl<f32, [?, ?]>

// CHECK-LABEL: func.func @halvings(
// CHECK: %t, %t_1, %t_2, %t_3, %t_4, %t_5, %t_6, %t_7, %t_8, %t_9, %t_10, %t_11, %t_12, %t_13, %t_14, %t_15, %n = scf.while ({{(%[a-z_0-9]+ = %[a-z_0-9]+, )+}}%n_1 = %c0) : ({{(f32, )+}}index) -> ({{(f32, )+}}index) {
// CHECK: %[[BIG:.*]] = arith.cmpf ogt, %{{.*}}, %one : f32
// CHECK-NEXT: scf.condition(%[[BIG]]) {{(%[a-z_0-9]+, )+}}%n_1 : {{(f32, )+}}index
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0({{(%[a-z_0-9]+: f32, )+}}%n_2: index):
// CHECK-COUNT-16: arith.mulf
// CHECK: scf.yield {{(%[a-z_0-9]+, )+}}%m1 : {{(f32, )+}}index
// CHECK-NOT: tile.
