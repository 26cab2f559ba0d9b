// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true},tile-swizzle,tile-pipeline{stages=3 bulk=true}' | filecheck %s --check-prefix=PIPE
// RUN: not tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true warps=2,4}' 2>&1 | filecheck %s --check-prefix=WARPS

// tile-tiling{wgmma=true}: 8 warps (BM/16 x 1), warp w holds rows 16w .. of the
// 128x256 block tile in a 16x256 accumulator; the K loop multiplies with
// tile.wgmma on the shared tiles: the warpgroup (warp / 4) takes A's 64-row
// band at 64 * (warp / 4). With bulk copies the stages get the layouts the
// tensor maps write (A K-major, B as four 64-column boxes), which wgmma
// descriptors describe. The wgmmas stay in flight across K steps (tile-pipeline's in_flight):
// each step's wait for one group completes the previous step's, whose stage is released only then
// and refilled after that (the issuing thread would otherwise wait for its own warp's release);
// after the loop a wait for the last step and its release.

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to f16
    tile.yield %0 : f16
  }
  func.return
}

// CHECK:       tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 49152>
// CHECK-SAME:  wgmma
// CHECK:       %warp = tile.warp_id
// CHECK-NEXT:  %wrow = arith.muli %warp, %c16 : index
// CHECK-NEXT:  %wg = arith.divui %warp, %c4 : index
// CHECK-NEXT:  %wg_row = arith.muli %wg, %c64 : index
// CHECK:       %zero = tile.zeros : !tile.rt<16x256xf32>
// CHECK:       scf.for
// CHECK:         tile.barrier
// CHECK-NEXT:    %d = tile.wgmma %sa[%wg_row], %sb[%c0], %acc_i : !tile.st<128x64xf16, (128,64):(64,1)>, !tile.st<64x256xf16, (64,256):(256,1)>, !tile.rt<16x256xf32> -> !tile.rt<16x256xf32>
// CHECK-NEXT:    tile.barrier
// CHECK:       tile.store %out, %c[%row, %col0] : !tile.rt<16x256xf16> -> !tile.gl<f16, [?, ?]>

// PIPE:        %sa = tile.alloc : !tile.st<3x128x64xf16, Sw<3,3,3> o 0 o (3,128,64):(8192,64,1)>
// PIPE-NEXT:   %sb = tile.alloc : !tile.st<3x64x256xf16, Sw<3,3,3> o 0 o (3,64,(64,4)):(16384,64,(1,4096))>
// PIPE:        scf.for %k
// PIPE-NEXT:     tile.mbar_wait %full[%rs], %ph
// PIPE:          %d = tile.wgmma %sa_r[%wg_row], %sb_r[%c0], %acc_i async
// PIPE-NEXT:     %{{.*}} = tile.wgmma_wait %acc_i, 1
// PIPE-NEXT:     %[[NF:.*]] = arith.cmpi ne, %k, %c0 : index
// PIPE-NEXT:     scf.if %[[NF]] {
// PIPE:            %rs_prev = arith.select
// PIPE-NEXT:       tile.mbar_arrive %empty[%rs_prev]
// PIPE-NEXT:     }
// PIPE-NEXT:     %k_next = arith.addi %k, %c128 : index
// PIPE:            tile.mbar_wait %empty[%ws], %wph issuer
// PIPE:            tile.bulk_copy %a[%row0, %k_next] -> %sa_w, %full[%ws]
// PIPE:          scf.yield %d,
// PIPE:        %acc_1 = tile.wgmma_wait %acc, 0
// PIPE:          tile.mbar_arrive %empty[%rs_prev_1]

// WARPS: with wgmma=true each warp holds 16 rows of the block tile: warps=8,1
