// RUN: tile-opt %s -p 'tile-pipeline{stages=3 bulk=true producer=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-pipeline{stages=3 bulk=true producer=true in-flight=false}' | filecheck %s --check-prefix=SYNC

// With a producer, a consumer loop whose wgmmas accumulate one carried value keeps them in flight
// across K steps (CUTLASS's sm90 consumer): the wgmma becomes async, `tile.wgmma_wait %acc_i, 1`
// after it completes the previous K step's (this step's may run on), and only then is the
// previous step's stage released (from the second step on). After the loop, a wait for the last
// step and its stage's release. in-flight=false keeps the synchronous wgmma and releases each
// stage in its own step. The stages are the only shared memory the consumers touch, so no block
// barrier comes before or after the loop (tile-pipeline/producer.mlir @fenced).

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 24576>} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %w = tile.warp_id
  %g = arith.divui %w, %c4 : index
  %band = arith.muli %g, %c64 : index
  %row = arith.muli %w, %c16 : index
  %sa = tile.alloc : !tile.st<128x64xf16, (128,64):(64,1)>
  %sb = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %zero = tile.zeros : !tile.rt<16x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_i = %zero) -> (!tile.rt<16x64xf32>) {
    tile.copy %a[%c0, %k] -> %sa thr <(32,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<128x64xf16, (128,64):(64,1)>
    tile.copy %b[%k, %c0] -> %sb thr <(32,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.barrier
    %d = tile.wgmma %sa[%band], %sb[%c0], %acc_i : !tile.st<128x64xf16, (128,64):(64,1)>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<16x64xf32>
  }
  tile.store %acc, %c[%row, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @gemm
// CHECK:         }{tile.role = "producer"}
// CHECK-NOT:     tile.barrier
// CHECK:         %acc, %{{.*}}, %{{.*}} = scf.for %[[K:.*]] = {{.*}} iter_args(%acc_i = %zero, %ph = %c0, %rs = %c0)
// CHECK:           %[[D:.*]] = tile.wgmma %sa_r[%band], %sb_r[%{{.*}}], %acc_i async
// CHECK-NEXT:      %{{.*}} = tile.wgmma_wait %acc_i, 1 : !tile.rt<16x64xf32>
// CHECK-NEXT:      %[[LATER:.*]] = arith.cmpi ne, %[[K]], %{{.*}} : index
// CHECK-NEXT:      scf.if %[[LATER]] {
// CHECK:             %rs_prev = arith.select %{{.*}}, %c2, %{{.*}} : index
// CHECK-NEXT:        tile.mbar_arrive %empty[%rs_prev] : !tile.mbar<3, warps>
// CHECK:           scf.yield %[[D]], %{{.*}}, %rs_next
// CHECK-NEXT:    }
// CHECK-NEXT:    %acc_1 = tile.wgmma_wait %acc, 0 : !tile.rt<16x64xf32>
// CHECK:         scf.if
// CHECK:           tile.mbar_arrive %empty[%rs_prev_1]
// CHECK-NEXT:    }
// CHECK-NEXT:    tile.store %acc_1, %c

// SYNC-LABEL: func.func @gemm
// SYNC:         tile.wgmma %sa_r[%band], %sb_r[%{{.*}}], %acc_i :
// SYNC-NEXT:    tile.mbar_arrive %empty[%rs]
// SYNC-NOT:     tile.wgmma_wait
