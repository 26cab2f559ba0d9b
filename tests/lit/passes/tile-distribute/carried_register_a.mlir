// RUN: tile-opt %s -p 'tile-swizzle,tile-layout,tile-distribute' | filecheck %s

// A wgmma's A operand from registers carried by a loop to the next step (tests/lang's
// carried_operand: attention's P_{j-1} multiplied in step j). tile-distribute holds it as the wgmma
// reads it, two f16 values a 32-bit register, all the way: the loop carries 16 packed registers
// (i32) beside the accumulator's 32 f32, the new P is packed once from the f32 values it rounds
// (frag.pack, cvt.rn.f16x2.f32), and nothing in the loop unpacks a pair (no arith.extf) to pack it
// again before the wgmma.

func.func @carried_operand(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %d: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [?, ?, ?], block = [128, 1, 1], smem = 16384>} {
  %0 = arith.constant 0 : index
  %1 = arith.constant 16 : index
  %2 = arith.constant 3 : index
  %3 = arith.constant 1 : index
  %smem = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %smem_1 = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  tile.copy %a[%0, %0] -> %smem thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
  tile.copy %b[%0, %0] -> %smem_1 thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
  tile.barrier
  %warp = tile.warp_id
  %4 = arith.muli %warp, %1 : index
  %5 = tile.zeros : !tile.rt<16x64xf16>
  %6 = tile.zeros : !tile.rt<16x64xf32>
  %acc, %p = scf.for %i = %0 to %2 step %3 iter_args(%acc_1 = %6, %p_1 = %5) -> (!tile.rt<16x64xf32>, !tile.rt<16x64xf16>) {
    %7 = tile.wgmma %p_1, %smem_1[%0], %acc_1 : !tile.rt<16x64xf16>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    %8 = tile.zeros : !tile.rt<16x64xf32>
    %9 = tile.wgmma %smem[%0], %smem_1[%0], %8 transpose_b : !tile.st<64x64xf16, (64,64):(64,1)>, !tile.st<64x64xf16, (64,64):(64,1)>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    %10 = arith.addi %i, %3 : index
    %11 = arith.index_cast %10 : index to i32
    %12 = arith.sitofp %11 : i32 to f32
    %13 = tile.fill %12 : f32 -> !tile.rt<16x64xf32>
    %14 = tile.mul %9, %13 : !tile.rt<16x64xf32>
    %15 = tile.convert %14 : !tile.rt<16x64xf32> -> !tile.rt<16x64xf16>
    scf.yield %7, %15 : !tile.rt<16x64xf32>, !tile.rt<16x64xf16>
  }
  tile.store %acc, %d[%4, %0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK:      scf.for %i = {{.*}} -> ({{(f32, )+(i32, )+}}i32) {
// CHECK-NOT:    arith.extf
// CHECK-COUNT-4: frag.wgmma_rs "f16" n 64 (%{{[^)]+}})
// CHECK-NOT:    arith.extf
// CHECK-COUNT-16: frag.pack "f16x2"
// CHECK-NOT:    arith.extf
// CHECK:        scf.yield
