// RUN: tile-opt %s -p tile-stage | filecheck %s

// A K loop that reads its mma operands straight from global memory (Triton's tl.dot of two
// tl.loads) becomes the loop tile-pipeline pipelines: a shared tile per operand before the loop,
// the body starting with the copies and a barrier, the operands read from shared memory where
// they were loaded, and a barrier before the yield. The launch's smem grows by the two tiles
// (64x32 and 32x64 f16: 8192 bytes).
func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = tile.block_id x
  %by = tile.block_id y
  %i = arith.muli %bx, %c64 : index
  %j = arith.muli %by, %c64 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%i, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %tb = tile.load %b[%k, %j] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%i, %j] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: smem = 8192
// CHECK: %[[SA:.*]] = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
// CHECK-NEXT: %[[SB:.*]] = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
// CHECK-NEXT: %acc = scf.for %k = %c0 to %kk step %c32
// CHECK-NEXT: tile.copy %a[%i, %k] -> %[[SA]]
// CHECK-NEXT: tile.copy %b[%k, %j] -> %[[SB]]
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<64x32xf16>
// CHECK-NEXT: %tb = tile.load %[[SB]] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x64xf16>
// CHECK-NEXT: %d = tile.mma %ta, %tb, %x
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: scf.yield %d

// A loop that stores to global memory (its loads could read what it stored) is not staged ahead:
// its operands are staged where they are read, each iteration waiting for the last one's readers,
// then copying both tiles, then waiting for the copies.
func.func @stores(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %ta = tile.load %a[%c0, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    tile.store %d, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  func.return
}
// CHECK-LABEL: func.func @stores
// CHECK-SAME: smem = 8192
// CHECK: scf.for %k
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.copy %a[%c0, %k] -> %[[SA:.*]] :
// CHECK-NEXT: tile.copy %b[%k, %c0] -> %[[SB:.*]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK-NEXT: %tb = tile.load %[[SB]]
// CHECK-NEXT: %d = tile.mma %ta, %tb, %x
// CHECK-NEXT: tile.store %d
// CHECK-NEXT: scf.yield

// Left as written: a load whose rows come from the warp id (each warp's own: tile-layout does not
// split its mma, the block shares no tile), one that also feeds an add, and one reading -inf
// outside the view (a copy fills zeros).
func.func @left(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %w = tile.warp_id
  %z = tile.zeros : !tile.rt<16x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<16x64xf32>) {
    %ta = tile.load %a[%w, %k] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x32xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %tb2 = tile.add %tb, %tb : !tile.rt<32x64xf16>
    %tc = tile.load %b[%k, %c0] other(0xfff0000000000000 : f64) : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb2, %x : !tile.rt<16x32xf16>, !tile.rt<32x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    %e = tile.mma %ta, %tc, %d : !tile.rt<16x32xf16>, !tile.rt<32x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
    scf.yield %e : !tile.rt<16x64xf32>
  }
  tile.store %acc, %c[%w, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @left
// CHECK-SAME: smem = 0
// CHECK-NOT: tile.alloc
// CHECK-NOT: tile.copy
// CHECK: func.return

// A loop that already opens with its own copies and barrier (the hand-written form) takes the
// staged copy among them, under the one barrier.
func.func @mixed(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 4096>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %sa = tile.alloc : !tile.st<64x32xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    tile.copy %a[%c0, %k] -> %sa : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16>
    tile.barrier
    %ta = tile.load %sa : !tile.st<64x32xf16> -> !tile.rt<64x32xf16>
    %tb = tile.load %b[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tb, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: smem = 8192
// CHECK: %acc = scf.for
// CHECK-NEXT: tile.copy %a[%c0, %k] -> %sa
// CHECK-NEXT: tile.copy %b[%k, %c0] -> %tb_shared
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %sa
// CHECK-NEXT: %tb = tile.load %tb_shared
// CHECK-NEXT: %d = tile.mma
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: scf.yield

// Two loops one after the other (Triton's unmasked and masked key loops) share the staged tiles:
// the launch grows by one tile (64x32 f16: 4096 bytes). A transposed operand (tl.dot(a, tl.trans(w)))
// is read untransposed with the mma's flag flipped, so its load is staged too.
func.func @two_loops(%a: !tile.gl<f16, [?, ?]>, %w: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %kk: index, %k2: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc = scf.for %k = %c0 to %kk step %c32 iter_args(%x = %z) -> (!tile.rt<64x64xf32>) {
    %tw = tile.load %w[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %tt = tile.transpose %tw : !tile.rt<64x32xf16> -> !tile.rt<32x64xf16>
    %d = tile.mma %ta, %tt, %x : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  %acc2 = scf.for %k = %kk to %k2 step %c32 iter_args(%x = %acc) -> (!tile.rt<64x64xf32>) {
    %tw = tile.load %w[%k, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %d = tile.mma %ta, %tw, %x transpose_b : !tile.rt<64x32xf16>, !tile.rt<64x32xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    scf.yield %d : !tile.rt<64x64xf32>
  }
  tile.store %acc2, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @two_loops
// CHECK-SAME: smem = 4096
// CHECK: %[[SW:.*]] = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
// CHECK-NOT: tile.alloc
// CHECK: scf.for
// CHECK-NEXT: tile.copy %w[%k, %c0] -> %[[SW]]
// CHECK-NOT: tile.transpose
// CHECK: %d = tile.mma %ta, %tw, %x transpose_b
// CHECK: scf.for
// CHECK-NEXT: tile.copy %w[%k{{.*}}, %c0] -> %[[SW]]
// CHECK: %d{{.*}} = tile.mma %ta, %tw{{.*}}, %x{{.*}} transpose_b

// Triton's tutorial loop: %k counts K tiles and the offsets are %k * 32, computed in the body. That
// index math moves to the body's start ahead of the copies (tile-pipeline computes it for later
// iterations too); the offset read from a carried value (%off) is not the loop's to compute ahead,
// so that load is staged where it is, after the loop's barrier. `acc + dot(x, y)` with a dot of
// zeros accumulates into acc itself.
func.func @tiles(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %n: index)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %z = tile.zeros : !tile.rt<64x64xf32>
  %acc, %last = scf.for %k = %c0 to %n step %c1 iter_args(%x = %z, %off = %c0) -> (!tile.rt<64x64xf32>, index) {
    %tb = tile.load %b[%off, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x64xf16>
    %kk = arith.muli %k, %c32 : index
    %ta = tile.load %a[%c0, %kk] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x32xf16>
    %zero = tile.zeros : !tile.rt<64x64xf32>
    %p = tile.mma %ta, %tb, %zero : !tile.rt<64x32xf16>, !tile.rt<32x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
    %sum = tile.add %x, %p : !tile.rt<64x64xf32>
    %next = arith.addi %off, %c32 : index
    scf.yield %sum, %next : !tile.rt<64x64xf32>, index
  }
  tile.store %acc, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @tiles
// CHECK-SAME: smem = 8192
// CHECK: scf.for %k = %c0 to %n step %c1 iter_args(%x = %z, %off = %c0)
// CHECK-NEXT: %kk = arith.muli %k, %c32 : index
// CHECK-NEXT: tile.copy %a[%c0, %kk] -> %[[SA:.*]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: tile.copy %b[%off, %c0] -> %[[SB:.*]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %tb = tile.load %[[SB]]
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK-NEXT: %sum = tile.mma %ta, %tb, %x
// CHECK-NEXT: %next = arith.addi %off, %c32
// CHECK-NEXT: tile.barrier

// A dot outside any loop: both operands copied, one barrier, then read in shared memory (tile-pipeline
// then reads each K step's fragments as the mma goes, not the whole of A and B at once).
func.func @single(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<64x128xf16>
  %tb = tile.load %b[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<128x64xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %d = tile.mma %ta, %tb, %z : !tile.rt<64x128xf16>, !tile.rt<128x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @single
// CHECK-SAME: smem = 32768
// CHECK: tile.copy %a[%c0, %c0] -> %[[SA:.*]] :
// CHECK-NEXT: tile.copy %b[%c0, %c0] -> %[[SB:.*]] :
// CHECK-NEXT: tile.barrier
// CHECK-NEXT: %ta = tile.load %[[SA]]
// CHECK-NEXT: %tb = tile.load %[[SB]]
// CHECK-NEXT: %z = tile.zeros
// CHECK-NEXT: %d = tile.mma %ta, %tb, %z
