// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true producer=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true}' | filecheck %s --check-prefix=PLAIN
// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true producer=true},tile-layout,tile-distribute,tile-to-llvm' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// A persistent kernel: each block loops over output tiles (%t from its block index, by the
// number of blocks, tile.grid_dim), and the K loop runs once per tile, inside that tile loop.
//
// With a producer (CHECK) both roles run the tile loop. The producer's loop clones what the
// tile loop's body computes for the copies (the subview of tile %t, the trip count) on its own
// induction variable and carries the write side of the stage ring (wph, ws) from one tile to the
// next; the consumers' tile loop carries the read side (ph, rs). So the producer goes on to the
// next tile's K tiles while the consumers store this one's rows: the ring never restarts. The
// only shared memory the consumers touch is the stages, ordered by the full and empty barriers,
// so their tile loop has no block barrier (producer.mlir @fenced has a kernel that keeps them):
// one warp may store a tile's rows while another still runs that tile's last K steps.
//
// Without one (PLAIN) the K loop's full and empty barriers are initialised right before it,
// inside the tile loop: every run of the loop starts its ring afresh (its phases at 0), after the
// previous run's drain. Initialised once before the tile loop, the second run would wait for
// phases the first one had moved past (the lane interpreter reports that as a wait that never
// ends; on the GPU it hangs).

func.func @rows(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]>, %tiles: index)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %b = tile.block_id x
  %nb = tile.grid_dim x
  %w = tile.warp_id
  %row = arith.muli %w, %c0 : index
  %sk = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  scf.for %t = %b to %tiles step %nb {
    %kh = tile.subview %k[%t, %c0] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
    %n = tile.dim %kh, 0 : !tile.gl<f16, [?, ?]>
    %zero = tile.zeros : !tile.rt<16x64xf32>
    %acc = scf.for %n0 = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (!tile.rt<16x64xf32>) {
      tile.copy %kh[%n0, %c0] -> %sk thr <(32,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
      tile.barrier
      %r = tile.load %sk[%row, %c0] : !tile.st<64x64xf16, (64,64):(64,1)> -> !tile.rt<16x64xf16>
      %f = tile.convert %r : !tile.rt<16x64xf16> -> !tile.rt<16x64xf32>
      %d = tile.add %acc_i, %f : !tile.rt<16x64xf32>
      tile.barrier
      scf.yield %d : !tile.rt<16x64xf32>
    }
    %orow = arith.addi %row, %t : index
    tile.store %acc, %o[%orow, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  }
  func.return
}

// CHECK-LABEL: func.func @rows
// CHECK-SAME:  block = [384, 1, 1]
// CHECK:         %full = tile.mbar_init : !tile.mbar<2>
// CHECK-NEXT:    %empty = tile.mbar_init : !tile.mbar<2, warps>
// CHECK:         scf.if
// CHECK-NEXT:      tile.setmaxnreg "dec" 40
// Only the producer warpgroup's first warp runs the loops (it issues the copies and waits for the
// stages); the other three give their registers back and have nothing more to do.
// CHECK-NEXT:      %issuer = arith.cmpi eq, %{{.*}}, %c8 : index
// CHECK-NEXT:      scf.if %issuer {
// CHECK:           %{{.*}}, %{{.*}} = scf.for %tile = %b to %tiles step %{{nb.*}} iter_args(%[[WPH0:.*]] = %c1, %[[WS0:.*]] = %c0) -> (index, index) {
// CHECK-NEXT:        %kh = tile.subview %k[%tile, %{{.*}}]
// CHECK-NEXT:        %n = tile.dim %kh, 0
// CHECK-NEXT:        %[[WPH1:.*]], %[[WS1:.*]] = scf.for %k_1 = %{{.*}} to %n step %{{.*}} iter_args(%wph = %[[WPH0]], %ws = %[[WS0]]) -> (index, index) {
// CHECK-NEXT:          tile.mbar_wait %empty[%ws], %wph issuer
// CHECK-NEXT:          tile.mbar_expect %full[%ws], 8192
// CHECK:               tile.bulk_copy %kh[%k_1, %{{.*}}] -> %sk_w, %full[%ws]
// CHECK:               scf.yield %wph_next, %ws_next : index, index
// CHECK-NEXT:        }
// CHECK-NEXT:        scf.yield %[[WPH1]], %[[WS1]] : index, index
// CHECK-NEXT:      }
// CHECK-NEXT:      }
// CHECK-NEXT:    }{tile.role = "producer"}
// CHECK-NEXT:    scf.if
// CHECK-NEXT:      tile.setmaxnreg "inc" 232
// CHECK:           %{{.*}}, %{{.*}} = scf.for %t = %{{.*}} to %tiles step %{{nb.*}} iter_args(%ph = %c0, %rs = %c0) -> (index, index) {
// CHECK-NOT:         tile.barrier
// CHECK:             %acc, %[[PH1:.*]], %[[RS1:.*]] = scf.for %n0 = {{.*}} iter_args(%acc_i = %zero, %ph_1 = %ph, %rs_1 = %rs)
// CHECK-NEXT:          tile.mbar_wait %full[%rs_1], %ph_1
// CHECK-NOT:           tile.bulk_copy
// CHECK:               tile.mbar_arrive %empty[%rs_1]
// CHECK-NOT:         tile.barrier
// CHECK:             tile.store %acc
// CHECK-NEXT:        scf.yield %[[PH1]], %[[RS1]] : index, index
// CHECK-NEXT:      }
// CHECK-NEXT:    }{tile.role = "consumers"}

// PLAIN-LABEL: func.func @rows
// PLAIN-SAME:  block = [256, 1, 1]
// PLAIN:         scf.for %t = %b to %tiles step %nb {
// PLAIN:           %full = tile.mbar_init : !tile.mbar<2>
// PLAIN-NEXT:      %empty = tile.mbar_init : !tile.mbar<2, warps>
// PLAIN:           scf.if %more0 {
// PLAIN-NEXT:        tile.mbar_expect %full[%c0], 8192
// PLAIN:           scf.for %n0 = {{.*}} iter_args(%acc_i = %zero, %wph = %c1, %ph = %c0, %rs = %c0, %ws = %c1)

// PTX:         .maxntid 384, 1, 1
// PTX:         setmaxnreg.dec.sync.aligned.u32 40
// PTX:         %nctaid.x
// PTX:         cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX:         setmaxnreg.inc.sync.aligned.u32 232
