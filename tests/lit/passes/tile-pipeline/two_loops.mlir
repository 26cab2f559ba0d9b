// RUN: tile-opt %S/../../../../examples/kernels/wgmma_rs_two_loops.mlir -p 'tile-swizzle,tile-pipeline{stages=2}' | filecheck %s

// Two K loops copy into the same shared tile of k (an unmasked loop and its
// masked last tiles, as attention has): the tile becomes one buffer of stages
// that both loops use in turn, each with its own prologue; the first loop's
// drain (wait for every group, barrier) frees it before the second's prologue.

// CHECK:      %smem_1 = tile.alloc : !tile.st<2x64x64xf16, Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)>
// CHECK-NOT:  tile.alloc
// CHECK:      tile.async_copy %k[%{{.*}}] -> %smem_w0 
// CHECK:      scf.for %n0 = {{.*}} iter_args(%acc_1 = %{{.*}}, %rs = %{{.*}}, %ws = %{{.*}})
// CHECK-NEXT:   tile.async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK:        tile.stage %smem_1[%ws]
// CHECK:      tile.async_wait 0
// CHECK-NEXT: tile.barrier
// CHECK:      tile.stage %smem_1[%{{.*}}]
// CHECK-NEXT: tile.async_copy %k[%{{.*}}] -> %smem_w0_1
// CHECK:      scf.for %n0_1 = {{.*}} iter_args(%acc_3 = %acc, %rs_1 = %{{.*}}, %ws_1 = %{{.*}})
// CHECK-NEXT:   tile.async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK:        tile.stage %smem_1[%ws_1]
