// RUN: tile-opt %s -p tile-tiling | filecheck %s
// RUN: tile-opt %s -p 'tile-tiling{block=64,64,16 tf32=true}' | filecheck %s --check-prefix=TF32

// f32 inputs. Without tf32 the atom is fma_f32 (SIMT): each lane computes an
// 8x8 thread tile, so the 128x128 block takes 256 threads = 4x2 warps of
// 32x64, each an a x b = 4x8 grid of lanes (lane_layout (4,8):(8,1)). The
// register tiles carry no fragment; the tile.mma records the thread tile.
// With tf32=true the atom is mma.sync m16n8k8 tf32 on 2x2 warps.

func.func @sgemm(%a: !tile.gl<f32, [?, ?]>, %b: !tile.gl<f32, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %bias: !tile.gl<f32, [?]>) {
  tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [?]>) : !tile.gl<f32, [?, ?]>, !tile.gl<f32, [?, ?]> -> !tile.gl<f32, [?, ?]> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.constant 0.000000e+00 : f32
    %r = arith.maximumf %s, %z : f32
    tile.yield %r : f32
  }
  func.return
}

// CHECK:      func.func @sgemm(
// CHECK-SAME:   tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 32768>
// CHECK-SAME:   tile.tiling = {block = array<i64: 128, 128, 32>, warps = array<i64: 4, 2>, group = 8 : i64, warp_tile = array<i64: 32, 64>, warp_layout = #tile.layout<(4,2):(2,1)>, atom = #tile.mma_atom<fma_f32>, atoms = array<i64: 8, 8, 32>, thread_tile = array<i64: 8, 8>, lane_layout = #tile.layout<(4,8):(8,1)>}
// CHECK:      %warp = tile.warp_id
// CHECK-NEXT: %wm = arith.divui %warp, %c2 : index
// CHECK-NEXT: %wn = arith.remui %warp, %c2 : index
// CHECK-NEXT: %wrow = arith.muli %wm, %c32 : index
// CHECK-NEXT: %wcol = arith.muli %wn, %c64 : index
// CHECK-NEXT: %sa = tile.alloc : !tile.st<128x32xf32, (128,32):(32,1)>
// CHECK-NEXT: %sb = tile.alloc : !tile.st<32x128xf32, (32,128):(128,1)>
// CHECK-NEXT: %zero = tile.zeros : !tile.rt<32x64xf32>
// CHECK-NEXT: %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<32x64xf32>) {
// 4 x f32 = 16 bytes per thread and copy.
// CHECK-NEXT:   tile.copy %a[%row0, %k] -> %sa thr <(32,8):(8,1)> val <(1,4):(1,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<128x32xf32, (128,32):(32,1)>
// CHECK-NEXT:   tile.copy %b[%k, %col0] -> %sb thr <(8,32):(32,1)> val <(1,4):(1,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<32x128xf32, (32,128):(128,1)>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %ra = tile.load %sa[%wrow, %c0] : !tile.st<128x32xf32, (128,32):(32,1)> -> !tile.rt<32x32xf32>
// CHECK-NEXT:   %rb = tile.load %sb[%c0, %wcol] : !tile.st<32x128xf32, (32,128):(128,1)> -> !tile.rt<32x64xf32>
// CHECK-NEXT:   %d = tile.mma %ra, %rb, %acc_i atom <fma_f32> {tile.thread_tile = array<i64: 8, 8>} : !tile.rt<32x32xf32>, !tile.rt<32x64xf32>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf32>
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   scf.yield %d : !tile.rt<32x64xf32>
// CHECK-NEXT: }
// CHECK:      %out = tile.map %acc, %bias_t : !tile.rt<32x64xf32>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf32> {
// CHECK:      tile.store %out, %c[%row, %col] : !tile.rt<32x64xf32> -> !tile.gl<f32, [?, ?]>

// TF32:      tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 8192>
// TF32-SAME: atom = #tile.mma_atom<mma_m16n8k8_tf32>, atoms = array<i64: 2, 4, 2>}
// TF32:      tile.copy %a[%row0, %k] -> %sa thr <(32,4):(4,1)> val <(1,4):(1,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<64x16xf32, (64,16):(16,1)>
// TF32:      %d = tile.mma %ra, %rb, %acc_i atom <mma_m16n8k8_tf32> : !tile.rt<32x16xf32>, !tile.rt<16x32xf32>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
// TF32-NOT:  tile.thread_tile
