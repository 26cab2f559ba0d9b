// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true persistent=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true persistent=true},tile-swizzle,tile-pipeline{stages=3 bulk=true producer=true}' | filecheck %s --check-prefix=WS

// tile-tiling{persistent=true}: the launch's blocks loop over C's tiles, block i
// of n (tile.grid_dim) taking tiles i, i + n, ... in the grouped order of a
// one-tile-a-block kernel. What does not depend on the tile (the sizes, the
// warp's place in the block tile, the shared tiles) stays before the loop;
// the tile's origin, its accumulator, K loop and epilogue are in it. With a
// producer warpgroup both roles run the tile loop: the producer goes on to the
// next tile's K tiles while the consumers store this one.

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to f16
    tile.yield %0 : f16
  }
  func.return
}

// CHECK:       tile.tiling = {{.*}}wgmma, persistent}
// CHECK:       %bid = tile.block_id x
// CHECK:       %tiles_n = arith.divui %n_pad, %c256 : index
// CHECK-NEXT:  %width = arith.muli %tiles_n, %c8 : index
// CHECK-NEXT:  %warp = tile.warp_id
// CHECK:       %sa = tile.alloc
// CHECK-NEXT:  %sb = tile.alloc
// CHECK-NEXT:  %tiles = arith.muli %tiles_m, %tiles_n : index
// CHECK-NEXT:  %blocks = tile.grid_dim x
// CHECK-NEXT:  scf.for %tile = %bid to %tiles step %blocks {
// CHECK-NEXT:    %group = arith.divui %tile, %width : index
// CHECK:         %in_group = arith.remui %tile, %width : index
// CHECK:         %row0 = arith.muli %pid_m, %c128 : index
// CHECK-NEXT:    %col0 = arith.muli %pid_n, %c256 : index
// CHECK-NEXT:    %zero = tile.zeros : !tile.rt<16x256xf32>
// CHECK-NEXT:    %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_i = %zero)
// CHECK:           %d = tile.wgmma %sa[%wg_row], %sb[%c0], %acc_i
// CHECK:         }
// CHECK:         tile.store %out, %c[%row, %col0]
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return

// WS:          scf.if
// WS:            tile.setmaxnreg "dec" 40
// WS:            scf.for %tile = %bid to %tiles step %blocks iter_args
// WS:              scf.for %k = %c0_1 to %K step %c64 iter_args
// WS-NEXT:           tile.mbar_wait %empty[%ws], %wph issuer
// WS:                tile.bulk_copy %a[%row0, %k]
// WS:                tile.bulk_copy %b[%k, %col0]
// WS:          }{tile.role = "producer"}
// WS-NEXT:     scf.if
// WS-NEXT:       tile.setmaxnreg "inc" 232
// WS:            scf.for %tile_1 = %bid_1 to %tiles_1 step %blocks_1 iter_args
// WS:              tile.wgmma %sa_r[%wg_row], %sb_r[%c0_2], %acc_i async
// WS:              tile.store %out, %c[%row, %col0_1]
// WS:          }{tile.role = "consumers"}
