// RUN: tile-opt %s -p tile-layout,tile-distribute --split-input-file | filecheck %s

// tile.atomic combines each element once, however many threads hold a copy of it. A column
// vector of 64 spread over a block of 128 threads: threads 64-127 hold the copies of threads
// 0-63 (thread bit 6 moves no element), so only the threads with that bit 0 combine, each its
// element inside the view, by red.global (frag.red).
func.func @block_vector(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %b = tile.block_id x
  %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x64xf32>
  %s = tile.col_sum %t : !tile.rt<32x64xf32> -> !tile.rv<64xf32, col>
  tile.atomic "add" %s, %o[%c0] : !tile.rv<64xf32, col> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @block_vector(
// CHECK: %[[COPY_BITS:.*]] = arith.constant 112 : i32
// CHECK: frag.shared
// CHECK: %[[COPIES:.*]] = arith.andi %tid, %[[COPY_BITS]] : i32
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[COPIES]]
// CHECK: %[[P:.*]] = arith.andi %[[LEADER]], %{{.*}} : i1
// CHECK: frag.red "add" %{{.*}}, %{{.*}} if %[[P]] : f32, !llvm.ptr<1>
// CHECK-COUNT-3: frag.red "add"
// CHECK-NOT: frag.store

// -----

// A block of four warps. The first mma is the same in every warp, so tile-layout splits it over
// the warps (tile.warps: its 8-column halves in warps 0 and 1, warps 2 and 3 copies of them): its
// row sums are combined once, by the threads whose copy bits (lanes 0-1, warp bit 6) are 0:
// mask 67. The rows of the second are chosen by the warp id: each warp's own mma and sums, which
// every warp combines (only lane bits 0-1 hold copies: mask 3).
func.func @warps(%x: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %a = tile.load %x[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %z = tile.zeros : !tile.rt<16x16xf32>
  %d = tile.mma %a, %a, %z : !tile.rt<16x16xf16>, !tile.rt<16x16xf16>, !tile.rt<16x16xf32> -> !tile.rt<16x16xf32>
  %r = tile.row_sum %d : !tile.rt<16x16xf32> -> !tile.rv<16xf32, row>
  tile.atomic "add" %r, %o[%c0] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  %w = tile.warp_id
  %row = arith.muli %w, %c16 : index
  %e = tile.load %x[%row, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  %f = tile.mma %e, %a, %z : !tile.rt<16x16xf16>, !tile.rt<16x16xf16>, !tile.rt<16x16xf32> -> !tile.rt<16x16xf32>
  %q = tile.row_sum %f : !tile.rt<16x16xf32> -> !tile.rv<16xf32, row>
  tile.atomic "add" %q, %o[%c16] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @warps(
// CHECK-DAG: %[[LANE_COPIES:.*]] = arith.constant 3 : i32
// CHECK-DAG: %[[BLOCK_COPIES:.*]] = arith.constant 67 : i32
// CHECK: arith.andi %tid, %[[BLOCK_COPIES]] : i32
// CHECK: frag.red "add"
// CHECK: arith.andi %tid, %[[LANE_COPIES]] : i32
// CHECK: frag.red "add"

// -----

// With a result, tile.atomic is atom.global (frag.atom), and every holder gets the old value its
// combining thread read. A one-element vector of the block (a ticket): thread 0 adds, every thread
// holds a copy, so the old value crosses warps through shared memory: written by the combining
// thread, a barrier, read from its slot (this thread's index with the copy bits cleared: one slot,
// 4 bytes, for the one combining thread), a barrier.
func.func @ticket(%c: !tile.gl<i32, [?]>, %out: !tile.gl<i32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %v = tile.fill %one : i32 -> !tile.rv<1xi32, row>
  %t = tile.atomic "add" %v, %c[%c0] : !tile.rv<1xi32, row> -> !tile.gl<i32, [?]> returns !tile.rv<1xi32, row>
  %b = tile.block_id x
  tile.store %t, %out[%b] : !tile.rv<1xi32, row> -> !tile.gl<i32, [?]>
  func.return
}
// CHECK-LABEL: func.func @ticket(
// CHECK-SAME: smem = 4>
// CHECK: %[[COPY_BITS:.*]] = arith.constant 127 : i32
// CHECK: %[[COPIES:.*]] = arith.andi %tid, %[[COPY_BITS]] : i32
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[COPIES]]
// CHECK: %[[P:.*]] = arith.andi %[[LEADER]], %{{.*}} : i1
// CHECK: %[[OLD:.*]] = frag.atom "add" %one, %c if %[[P]] : i32, !llvm.ptr<1>
// CHECK: frag.shared "ticket_t_old", 4 
// CHECK: frag.store %[[OLD]], %{{.*}} if %[[LEADER]] : i32, !llvm.ptr<3>
// CHECK-NEXT: tile.barrier
// CHECK: %[[GOT:.*]] = frag.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NEXT: tile.barrier
// CHECK: frag.store %[[GOT]], %{{.*}} : i32, !llvm.ptr<1>
// CHECK-NOT: frag.red

// -----

// The row sums of each warp's own rows (its place chosen by the warp id): copies only in the lanes
// that differ in bits 0-1 (mask 3), so each old value comes from the combining lane by a shuffle
// (lane & ~3 = lane & 28), no shared memory.
func.func @lanes(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?]>, %p: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %w = tile.warp_id
  %row = arith.muli %w, %c16 : index
  %t = tile.load %x[%row, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x32xf32>
  %s = tile.row_sum %t : !tile.rt<16x32xf32> -> !tile.rv<16xf32, row>
  %old = tile.atomic "xchg" %s, %o[%row] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]> returns !tile.rv<16xf32, row>
  tile.store %old, %p[%row] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @lanes(
// CHECK-SAME: smem = 0
// CHECK-DAG: %[[SOURCE_BITS:.*]] = arith.constant 28 : i32
// CHECK: %[[A:.*]] = frag.atom "exch" %{{.*}}, %{{.*}} if %{{.*}} : f32, !llvm.ptr<1>
// CHECK: %[[B:.*]] = frag.atom "exch" %{{.*}}, %{{.*}} if %{{.*}} : f32, !llvm.ptr<1>
// CHECK: %[[SOURCE:.*]] = arith.andi %{{.*}}, %[[SOURCE_BITS]] : i32
// CHECK-NEXT: frag.shfl "idx" %[[A]], %[[SOURCE]] : f32
// CHECK-NEXT: frag.shfl "idx" %[[B]], %[[SOURCE]] : f32
// CHECK-NOT: tile.barrier

// -----

// 'ordered' (tl.atomic_add(..., sem="release")): atom.acq_rel even though nothing reads the old value,
// so this block's earlier stores are visible to whoever reads the counter after it; unordered and
// unused, the same add is a relaxed red.
func.func @ordered(%c: !tile.gl<i32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %v = tile.fill %one : i32 -> !tile.rv<1xi32, row>
  tile.atomic "add" ordered %v, %c[%c0] : !tile.rv<1xi32, row> -> !tile.gl<i32, [?]>
  tile.atomic "add" %v, %c[%c0] : !tile.rv<1xi32, row> -> !tile.gl<i32, [?]>
  func.return
}
// CHECK-LABEL: func.func @ordered(
// CHECK: frag.atom "add" %one, %c if %{{.*}} : i32, !llvm.ptr<1>
// CHECK: frag.red "add" %one, %c if %{{.*}} : i32, !llvm.ptr<1>

// -----

// "umax" / "umin" compare the integers' bits as unsigned numbers (tilec.lang's atomic_max of a
// tl.uint32 array): red.global.max.u32 where no old value is read.
func.func @unsigned_max(%x: !tile.gl<i32, [?]>, %o: !tile.gl<i32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : !tile.gl<i32, [?]> -> !tile.rv<32xi32, col>
  tile.atomic "umax" %v, %o[%c0] : !tile.rv<32xi32, col> -> !tile.gl<i32, [?]>
  func.return
}
// CHECK-LABEL: func.func @unsigned_max(
// CHECK: frag.red "umax" %{{.*}}, %{{.*}} : i32, !llvm.ptr<1>
