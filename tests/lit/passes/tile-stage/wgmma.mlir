// RUN: tile-opt %s -p 'tile-stage{wgmma=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-stage{wgmma=true},tile-swizzle,tile-pipeline{stages=2},tile-layout,tile-distribute' | filecheck %s --check-prefix=FRAG
// RUN: tile-opt %s -p 'tile-stage{wgmma=true},tile-swizzle,tile-pipeline{stages=2},tile-layout,tile-distribute,tile-to-llvm' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// With wgmma (sm_90a), a block's mma of two whole staged tiles reads them in shared memory: the
// block form of tile.wgmma, whose warpgroups share the product. The shared loads go.
// One warpgroup (128 threads) takes both 64-row bands of the 128x128 accumulator.
func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %bx = tile.block_id x
  %by = tile.block_id y
  %i = arith.muli %bx, %c128 : index
  %j = arith.muli %by, %c128 : index
  %z = tile.zeros : !tile.rt<128x128xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<128x128xf32>) {
    %ta = tile.load %a[%i, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<128x32xf16>
    %tb = tile.load %b[%k, %j] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x128xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<128x32xf16>, !tile.rt<32x128xf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
    scf.yield %d : !tile.rt<128x128xf32>
  }
  tile.store %acc, %c[%i, %j] : !tile.rt<128x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @gemm
// CHECK: %acc = scf.for %k = %c0 to %kk step %c32
// CHECK-NEXT: tile.copy %a[%i, %k] -> %[[SA:.*]] :
// CHECK-NEXT: tile.copy %b[%k, %j] -> %[[SB:.*]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT: %d = tile.wgmma %[[SA]][%[[Z]]], %[[SB]][%[[Z]]], %x groups array<i64: 1, 1>
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: scf.yield %d

// Lowered, the warpgroup's two bands are two wgmmas per K step of 16 (64x128 each, four in all), in
// one group: one fence, one commit, one wait for all 128 accumulators of the thread.
// FRAG-LABEL: func.func @gemm
// FRAG: frag.wgmma_fence
// FRAG-NEXT: frag.wgmma "f16" n 128
// FRAG-NEXT: frag.wgmma "f16" n 128
// FRAG-NEXT: frag.wgmma "f16" n 128
// FRAG-NEXT: frag.wgmma "f16" n 128
// FRAG-NEXT: frag.wgmma_commit
// FRAG-NEXT: %acc{{.*}}, %acc{{[_0-9]*}} = frag.wgmma_wait 0(

// PTX: .target sm_90a
// PTX-LABEL: .entry gemm
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX-NOT: mma.sync
// PTX-LABEL: .entry groups

// Two warpgroups (256 threads) split a 128x256 accumulator along M (a 64-row band each), and a
// 64x256 one along N (128 columns each); B given N x K (transpose_b) is read as stored.
func.func @groups(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [256, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %z = tile.zeros : !tile.rt<128x256xf32>
  %z2 = tile.zeros : !tile.rt<64x256xf32>
  %acc:2 = scf.for %k = %c0 to %kk step %c64 iter_args(%x = %z, %y = %z2) -> (!tile.rt<128x256xf32>, !tile.rt<64x256xf32>) {
    %ta = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<128x64xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x256xf16>
    %ta2 = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
    %tb2 = tile.load %b[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<256x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<128x64xf16>, !tile.rt<64x256xf16>, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
    %e = tile.mma %ta2, %tb2, %y transpose_b : !tile.rt<64x64xf16>, !tile.rt<256x64xf16>, !tile.rt<64x256xf32> -> !tile.rt<64x256xf32>
    scf.yield %d, %e : !tile.rt<128x256xf32>, !tile.rt<64x256xf32>
  }
  tile.store %acc#0, %c[%c0, %c0] : !tile.rt<128x256xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %acc#1, %c[%c0, %c0] : !tile.rt<64x256xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @groups
// CHECK: %d = tile.wgmma {{.*}} groups array<i64: 2, 1>
// CHECK: %e = tile.wgmma {{.*}} transpose_b groups array<i64: 1, 2>

// Left as mma.sync: A given K x M (transpose_a: no wgmma reads a transposed A of a whole tile
// here), and both mmas of an accumulator when one of them cannot be a wgmma (its B is computed, not
// a staged tile): the accumulator has one fragment.
func.func @kept(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %z2 = tile.zeros : !tile.rt<64x64xf32>
  %acc:2 = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z, %y = %z2) -> (!tile.rt<64x64xf32>, !tile.rt<64x64xf32>) {
    %ta = tile.load %a[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %ta2 = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %d = tile.mma %ta, %tb, %x transpose_a : !tile.rt<32x64xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %e = tile.mma %ta2, %tb, %y : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %tb2 = tile.add %tb, %tb : !tile.rt<32x64xf16>
    %f = tile.mma %ta2, %tb2, %e : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d, %f : !tile.rt<64x64xf32>, !tile.rt<64x64xf32>
  }
  tile.store %acc#0, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %acc#1, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tile.wgmma
// CHECK: func.return

// A chain of dots (P = exp2(Q K^T), then P V): each warp must hold whole rows of P, its A of the
// second dot. Two warpgroups and one 64-row band: a split along N would give each warpgroup half of
// each row, so the chain stays mma.sync as a whole (tile-layout then splits its warps along M).
func.func @dot_chain(%q: !tile.gl<f16, [?, ?]>, %k: !tile.gl<f16, [?, ?]>, %v: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [256, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = tile.dim %k, 0 : !tile.gl<f16, [?, ?]>
  %qt = tile.load %q[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %j = %c0 to %n step %c64 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %kt = tile.load %k[%j, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
    %ktt = tile.transpose %kt : !tile.rt<64x64xf16> -> !tile.rt<64x64xf16>
    %s0 = tile.zeros : !tile.rt<64x64xf32>
    %s = tile.mma %qt, %ktt, %s0 : !tile.rt<64x64xf16>, !tile.rt<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %e = tile.exp2 %s : !tile.rt<64x64xf32>
    %p = tile.convert %e : !tile.rt<64x64xf32> -> !tile.rt<64x64xf16>
    %vt = tile.load %v[%j, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x64xf16>
    %pv = tile.mma %p, %vt, %x : !tile.rt<64x64xf16>, !tile.rt<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %pv : !tile.rt<64x64xf32>
  }
  tile.store %acc, %o[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @dot_chain
// CHECK-NOT: tile.wgmma
// CHECK: %s = tile.mma %qt, %kt, %s0 transpose_b
// CHECK: %pv = tile.mma %p, %vt, %x
// CHECK-NOT: tile.wgmma
// CHECK: func.return

// Chained mmas on one accumulator, each of staged tiles: both become wgmmas of the same groups.
func.func @chained(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %e = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %f = tile.mma %ta, %tb, %e : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %f : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @chained
// CHECK: %e = tile.wgmma {{.*}} groups array<i64: 1, 1>
// CHECK: %f = tile.wgmma {{.*}} groups array<i64: 1, 1>
