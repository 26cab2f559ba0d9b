// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true}' | filecheck %s

// tile-pipeline{bulk=true} on copies from subviews: %kh and %vh are one head of
// the rank-4 views %k and %v (an attention kernel's K/V loop). A tensor map of
// the whole argument reaches any head (the subview's coordinates address it,
// tile-distribute's bulk lowering), so these copies become bulk copies like
// those from 2-D arguments: one full barrier a stage, a per-warp empty barrier,
// no block barrier in the loop. The copies keep reading %kh and %vh.

func.func @kv(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}, %v: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 16384>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %b = tile.block_id y
  %h = tile.block_id z
  %kh = tile.subview %k[%b, %h] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %vh = tile.subview %v[%b, %h] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %n = tile.dim %kh, 0 : !tile.gl<f16, [?, ?]>
  %sk = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %sv = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %zero = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %n0 = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (!tile.rt<64x64xf32>) {
    tile.copy %kh[%n0, %c0] -> %sk thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.copy %vh[%n0, %c0] -> %sv thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.barrier
    %rk = tile.load %sk[%c0, %c0] : !tile.st<64x64xf16, (64,64):(64,1)> -> !tile.rt<64x64xf16>
    %rv = tile.load %sv[%c0, %c0] : !tile.st<64x64xf16, (64,64):(64,1)> -> !tile.rt<64x64xf16>
    %fk = tile.convert %rk : !tile.rt<64x64xf16> -> !tile.rt<64x64xf32>
    %fv = tile.convert %rv : !tile.rt<64x64xf16> -> !tile.rt<64x64xf32>
    %kv = tile.mul %fk, %fv : !tile.rt<64x64xf32>
    %d = tile.add %acc_i, %kv : !tile.rt<64x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %o[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @kv
// CHECK:       %sk = tile.alloc : !tile.st<2x64x64xf16, Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)>
// CHECK:       %full = tile.mbar_init : !tile.mbar<2>
// CHECK-NEXT:  %empty = tile.mbar_init : !tile.mbar<2, warps>
// CHECK:       scf.if
// CHECK:         tile.mbar_expect %full[%{{.*}}], 16384
// CHECK:         tile.bulk_copy %kh[%{{.*}}, %c0] -> %{{.*}}, %full[%{{.*}}] : !tile.gl<f16, [?, ?]>
// CHECK:         tile.bulk_copy %vh[%{{.*}}, %c0] -> %{{.*}}, %full[%{{.*}}] : !tile.gl<f16, [?, ?]>
// CHECK:       scf.for
// CHECK-NOT:     tile.barrier
// CHECK:         tile.mbar_wait %full
// CHECK-NOT:     tile.barrier
// CHECK:         tile.bulk_copy %kh[%k_next, %c0]
// CHECK-NOT:     tile.barrier
// CHECK:         tile.load %sv_r
// CHECK-NEXT:    tile.mbar_arrive %empty[%rs]
// CHECK-NOT:     tile.barrier
// CHECK:         scf.yield
