// RUN: tile-opt %s -p tile-layout | filecheck %s --check-prefix=FRAG
// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm | filecheck %s --check-prefix=LLVM

// One warp, one m16n8k32 mma of 8-bit floats (A e4m3, B e5m2): the int8 atom's fragments (four bytes a
// lane along K), held four to an i32 register (A by one ldmatrix.x4, B byte by byte as a vector<4x..>
// bitcast), f32 sums. tile-to-llvm writes the mma as inline PTX (no LLVM intrinsic), the f32 result
// rounded into FP8 with cvt.rn.satfinite (the high half of the pair a zero), and an FP8 value widened:
// E4M3 by cvt.rn.f16x2.e4m3x2, E5M2 by a shift (its bits are the f16's high byte).
func.func @mma_fp8(%a: !tile.gl<f8E4M3FN, [?, ?]>, %b: !tile.gl<f8E5M2, [?, ?]>, %d: !tile.gl<f8E4M3FN, [?, ?]>,
                   %w: !tile.gl<f16, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc : !tile.st<16x32xf8E4M3FN, (16,32):(32,1)>
  tile.copy %a[%c0, %c0] -> %sa thr <(16,2):(2,1)> val <(1,16):(1,1)> : !tile.gl<f8E4M3FN, [?, ?]> -> !tile.st<16x32xf8E4M3FN, (16,32):(32,1)>
  tile.barrier
  %zero = tile.zeros : !tile.rt<16x8xf32>
  %ra = tile.load %sa : !tile.st<16x32xf8E4M3FN, (16,32):(32,1)> -> !tile.rt<16x32xf8E4M3FN>
  %rb = tile.load %b[%c0, %c0] : !tile.gl<f8E5M2, [?, ?]> -> !tile.rt<32x8xf8E5M2>
  %acc = tile.mma %ra, %rb, %zero : !tile.rt<16x32xf8E4M3FN>, !tile.rt<32x8xf8E5M2>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %q = tile.convert %acc : !tile.rt<16x8xf32> -> !tile.rt<16x8xf8E4M3FN>
  tile.store %q, %d[%c0, %c0] : !tile.rt<16x8xf8E4M3FN> -> !tile.gl<f8E4M3FN, [?, ?]>
  %wide = tile.convert %rb : !tile.rt<32x8xf8E5M2> -> !tile.rt<32x8xf16>
  tile.store %wide, %w[%c0, %c0] : !tile.rt<32x8xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
// FRAG: %ra = tile.load %sa : {{.*}} -> !tile.rt<16x32xf8E4M3FN, ((4,8),((4,2,2),(1,1))):((64,1),((16,8,256),(16,512)))>
// FRAG: %acc = tile.mma %ra, %rb, %zero : {{.*}} -> !tile.rt<16x8xf32, ((4,8),((2,2),(1,1))):((32,1),((16,8),(16,128)))>

// CHECK-LABEL: func.func @mma_fp8(
// CHECK: %[[A0:.*]], %[[A1:.*]], %[[A2:.*]], %[[A3:.*]] = frag.ldmatrix %{{.*}} x 4 : !llvm.ptr<3> -> i32, i32, i32, i32
// CHECK-COUNT-2: vector.bitcast %{{.*}} : vector<4xf8E5M2> to vector<1xi32>
// CHECK: frag.mma <mma_m16n8k32_e4m3_e5m2>(%[[A0]], %[[A1]], %[[A2]], %[[A3]]) (%{{.*}}, %{{.*}}) (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK: arith.extf %{{.*}} : f8E5M2 to f16

// LLVM: "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
// LLVM: "cvt.rn.satfinite.e4m3x2.f32 $0, $1, $2;"
// LLVM-NOT: e5m2x2
// LLVM: llvm.shl %{{.*}}, %{{.*}} : i16
