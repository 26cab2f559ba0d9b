// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true producer=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true producer=true},tile-layout,tile-distribute' | filecheck %s --check-prefix=DIST
// RUN: tile-opt %s -p 'tile-pipeline{stages=2 bulk=true producer=true},tile-layout,tile-distribute,tile-to-llvm' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// tile-pipeline{producer=true}: warp specialisation (CUTLASS's sm90 warp-specialised mainloop,
// FlashAttention-3's producer). The kernel's 256 threads become the consumers, and one more
// warpgroup (threads 256 .. 383, tile.producer_threads = 128) the producer: it runs the K loop
// alone, from clones of the index math it needs (the subview, the trip count), waiting until
// every consumer warp released the write stage (the empty barrier), announcing the bytes and
// issuing the bulk copies; the consumers' loop waits for the read stage's tile (the full
// barrier), reads it and releases it, with no copy and no block barrier. The producer gives its
// registers back (setmaxnreg dec 24) and the consumers take them (inc 240); the block starts at
// 65536 / 384 = 168 registers a thread (.maxnreg). Two K loops would share one stage ring,
// (ws, wph) and (rs, ph) running on from one to the next.
//
// The loop's own block barriers also ordered what came before it and what comes after it. In
// @rows the stages are the only shared memory the kernel touches (ordered by the full and empty
// barriers), so the consumers get no block barrier at all and their warps never wait for each
// other. In @fenced each warp writes rows of a shared tile before the loop that every warp reads
// in it: the consumers keep a barrier before the loop and one after it, counting their 256
// threads only (bar.sync 0, 256).

func.func @rows(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %b = tile.block_id x
  %kh = tile.subview %k[%b, %c0] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %n = tile.dim %kh, 0 : !tile.gl<f16, [?, ?]>
  %w = tile.warp_id
  %row = arith.muli %w, %c0 : index
  %sk = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
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
  tile.store %acc, %o[%row, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @rows
// CHECK-SAME:  attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [384, 1, 1], smem = {{[0-9]+}}>, tile.producer_threads = 128 : i64}
// CHECK:         %sk = tile.alloc : !tile.st<2x64x64xf16, Sw<3,3,3> o 0 o (2,64,64):(4096,64,1)>
// CHECK-NEXT:    %full = tile.mbar_init : !tile.mbar<2>
// CHECK-NEXT:    %empty = tile.mbar_init : !tile.mbar<2, warps>
// CHECK-NEXT:    %[[W:.*]] = tile.warp_id
// CHECK-NEXT:    %[[PRODUCER:.*]] = arith.cmpi uge, %[[W]], %c8 : index
// CHECK-NEXT:    %[[CONSUMER:.*]] = arith.cmpi ult, %[[W]], %c8 : index
// CHECK-NEXT:    scf.if %[[PRODUCER]] {
// CHECK-NEXT:      tile.setmaxnreg "dec" 24
// CHECK:           %[[KH:.*]] = tile.subview %k
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%wph = %c1, %ws = %c0) -> (index, index) {
// CHECK-NEXT:        tile.mbar_wait %empty[%ws], %wph issuer : !tile.mbar<2, warps>
// CHECK-NEXT:        tile.mbar_expect %full[%ws], 8192 : !tile.mbar<2>
// CHECK-NEXT:        %sk_w = tile.stage %sk[%ws]
// CHECK-NEXT:        tile.bulk_copy %[[KH]][%{{.*}}, %{{.*}}] -> %sk_w, %full[%ws]
// CHECK:         }{tile.role = "producer"}
// CHECK-NEXT:    scf.if %[[CONSUMER]] {
// CHECK-NEXT:      tile.setmaxnreg "inc" 240
// CHECK-NOT:       tile.barrier
// CHECK:           %{{.*}} = scf.for %n0 = {{.*}} iter_args(%acc_i = %zero, %ph = %c0, %rs = %c0)
// CHECK-NEXT:        tile.mbar_wait %full[%rs], %ph : !tile.mbar<2>
// CHECK-NEXT:        %sk_r = tile.stage %sk[%rs]
// CHECK-NOT:         tile.barrier
// CHECK-NOT:         tile.bulk_copy
// CHECK:             tile.load %sk_r
// CHECK-NEXT:        tile.mbar_arrive %empty[%rs] : !tile.mbar<2, warps>
// CHECK-NOT:       tile.barrier
// CHECK:           tile.store
// CHECK:         }{tile.role = "consumers"}

func.func @fenced(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 16384>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %b = tile.block_id x
  %kh = tile.subview %k[%b, %c0] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %n = tile.dim %kh, 0 : !tile.gl<f16, [?, ?]>
  %w = tile.warp_id
  %row = arith.muli %w, %c16 : index
  %sk = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %sq = tile.alloc : !tile.st<128x64xf16, (128,64):(64,1)>
  %q = tile.load %kh[%row, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x64xf16>
  tile.store %q, %sq[%row, %c0] : !tile.rt<16x64xf16> -> !tile.st<128x64xf16, (128,64):(64,1)>
  %zero = tile.zeros : !tile.rt<16x64xf32>
  %acc = scf.for %n0 = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (!tile.rt<16x64xf32>) {
    tile.copy %kh[%n0, %c0] -> %sk thr <(32,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.barrier
    %r = tile.load %sk[%c0, %c0] : !tile.st<64x64xf16, (64,64):(64,1)> -> !tile.rt<16x64xf16>
    %s = tile.load %sq[%c0, %c0] : !tile.st<128x64xf16, (128,64):(64,1)> -> !tile.rt<16x64xf16>
    %p = tile.mul %r, %s : !tile.rt<16x64xf16>
    %f = tile.convert %p : !tile.rt<16x64xf16> -> !tile.rt<16x64xf32>
    %d = tile.add %acc_i, %f : !tile.rt<16x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<16x64xf32>
  }
  tile.store %acc, %o[%row, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @fenced
// CHECK:         scf.if
// CHECK:         }{tile.role = "producer"}
// CHECK-NEXT:    scf.if
// CHECK:           tile.store %q, %sq
// CHECK:           tile.barrier threads 256
// CHECK-NEXT:      %{{.*}} = scf.for %n0 = {{.*}} iter_args(%acc_i = %zero, %ph = %c0, %rs = %c0)
// CHECK-NOT:         tile.barrier
// CHECK:             tile.mbar_arrive %empty[%rs] : !tile.mbar<2, warps>
// CHECK:           tile.barrier threads 256
// CHECK-NEXT:      tile.store %{{.*}}, %o
// CHECK:         }{tile.role = "consumers"}

// A shared tile of its own that the loop writes and reads (each warp stores rows that every warp
// loads, ordered inside the loop by the barrier between them): a later tile's loop or the code after
// this one may meet another warp's accesses to it, so the consumer barriers stay.

func.func @scratch_in_loop(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}, %o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 24576>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %b = tile.block_id x
  %kh = tile.subview %k[%b, %c0] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %n = tile.dim %kh, 0 : !tile.gl<f16, [?, ?]>
  %w = tile.warp_id
  %row = arith.muli %w, %c16 : index
  %sk = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  %sq = tile.alloc : !tile.st<128x64xf16, (128,64):(64,1)>
  %zero = tile.zeros : !tile.rt<16x64xf32>
  %acc = scf.for %n0 = %c0 to %n step %c64 iter_args(%acc_i = %zero) -> (!tile.rt<16x64xf32>) {
    tile.copy %kh[%n0, %c0] -> %sk thr <(32,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
    tile.barrier
    %r = tile.load %sk[%c0, %c0] : !tile.st<64x64xf16, (64,64):(64,1)> -> !tile.rt<16x64xf16>
    tile.store %r, %sq[%row, %c0] : !tile.rt<16x64xf16> -> !tile.st<128x64xf16, (128,64):(64,1)>
    tile.barrier
    %s = tile.load %sq[%c0, %c0] : !tile.st<128x64xf16, (128,64):(64,1)> -> !tile.rt<16x64xf16>
    %f = tile.convert %s : !tile.rt<16x64xf16> -> !tile.rt<16x64xf32>
    %d = tile.add %acc_i, %f : !tile.rt<16x64xf32>
    tile.barrier
    scf.yield %d : !tile.rt<16x64xf32>
  }
  tile.store %acc, %o[%row, %c0] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}

// CHECK-LABEL: func.func @scratch_in_loop
// CHECK:         }{tile.role = "producer"}
// CHECK:           tile.barrier threads 256
// CHECK-NEXT:      %{{.*}} = scf.for %n0 = {{.*}} iter_args(%acc_i = %zero, %ph = %c0, %rs = %c0)
// CHECK:             tile.store %r, %sq
// CHECK-NEXT:        tile.barrier threads 256
// CHECK:           tile.barrier threads 256
// CHECK-NEXT:      tile.store %{{.*}}, %o
// CHECK:         }{tile.role = "consumers"}

// DIST-LABEL: func.func @rows
// DIST:         frag.mbar_init %{{.*}}, 8 : !llvm.ptr<3>
// DIST:         scf.if
// DIST:           tile.setmaxnreg "dec" 24
// DIST:           %[[LEAD:.*]] = arith.cmpi eq, %warp, %{{.*}} : i32
// DIST:           scf.if %[[LEAD]] {
// DIST-NEXT:        frag.mbar_wait
// DIST:         scf.if
// DIST:           tile.setmaxnreg "inc" 240
// DIST-NOT:       tile.barrier
// DIST:         func.return
// DIST-LABEL: func.func @fenced
// DIST:           tile.setmaxnreg "inc" 240
// DIST:           tile.barrier threads 256

// PTX-LABEL: .entry rows
// PTX:         .maxntid 384, 1, 1
// PTX-NEXT:    .maxnreg 168
// PTX:         setmaxnreg.dec.sync.aligned.u32 24;
// PTX:         setmaxnreg.inc.sync.aligned.u32 240;
// PTX-NOT:     bar.sync 0, 256;
// PTX-LABEL: .entry fenced
// PTX:         setmaxnreg.inc.sync.aligned.u32 240;
// PTX:         bar.sync 0, 256;
