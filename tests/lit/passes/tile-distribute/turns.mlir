// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX

// Two warpgroups (256 threads) take turns. Group g = warp / 4 (the warp id, the
// same in every lane as ptxas sees it, keeps the branches uniform); its turn is
// named barrier 1 + g, counting the 256 threads of two groups:
// tile.turn_begin waits there (bar.sync 1+g, 256), tile.turn_end hands the turn
// to the next group (bar.arrive 1+(g+1)%2, 256: a select). At the start group 1
// hands group 0 the first turn (bar.arrive 1, 256 under warp / 4 == 1), and
// before the return group 0 takes the last hand-over (bar.sync 1, 256), so no
// named barrier keeps arrivals when the block exits.

func.func @pingpong(%o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [256, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %w = tile.warp_id
  %row = arith.muli %w, %c0 : index
  %z = tile.zeros : !tile.rt<16x8xf32>
  tile.turn_begin 2
  tile.store %z, %o[%row, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  tile.turn_end 2
  func.return
}

// CHECK-LABEL: func.func @pingpong
// CHECK:         %[[G:.*]] = arith.shrui %warp, %{{.*}} : i32
// CHECK:         %[[LAST:.*]] = arith.cmpi eq, %[[G]], %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[LAST]] {
// CHECK-NEXT:      frag.named_barrier_arrive %{{.*}}, 256
// CHECK:         %[[MINE:.*]] = arith.addi %[[G]], %{{.*}} : i32
// CHECK-NEXT:    frag.named_barrier_sync %[[MINE]], 256
// CHECK:         %[[NEXT:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    frag.named_barrier_arrive %[[NEXT]], 256
// CHECK:         %[[FIRST:.*]] = arith.cmpi eq, %[[G]], %{{.*}} : i32
// CHECK-NEXT:    scf.if %[[FIRST]] {
// CHECK-NEXT:      frag.named_barrier_sync %{{.*}}, 256
// CHECK:         func.return

// PTX:         bar.arrive 1, 256;
// PTX:         bar.sync %r{{[0-9]+}}, 256;
// PTX:         bar.arrive %r{{[0-9]+}}, 256;
// PTX:         bar.sync 1, 256;
