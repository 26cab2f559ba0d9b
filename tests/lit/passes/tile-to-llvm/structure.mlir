// RUN: tile-opt %s -p tile-to-llvm | filecheck %s

// Kernels and device functions, ids (i32 registers zero-extended to the i64
// that index becomes), warp ids for 1-D and 2-D blocks, the barrier.

func.func private @scale(%x: index, %k: i32) -> index {
  %kk = arith.index_cast %k : i32 to index
  %y = arith.muli %x, %kk : index
  func.return %y : index
}

func.func @ids(%out: !llvm.ptr<1> {tile.dtype = i64, tile.output}, %k: i32) attributes {tile.launch = #tile.launch<grid = [?, 4, 1], block = [128, 1, 1], smem = 0>} {
  %tx = tile.thread_id x
  %ty = tile.thread_id y
  %tz = tile.thread_id z
  %bx = tile.block_id x
  %by = tile.block_id y
  %lane = tile.lane_id
  %warp = tile.warp_id
  tile.barrier
  %s = func.call @scale(%tx, %k) : (index, i32) -> index
  %i = arith.index_cast %s : index to i64
  frag.store %i, %out : i64, !llvm.ptr<1>
  func.return
}

func.func @warps_2d() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 4, 2], smem = 0>} {
  %warp = tile.warp_id
  %again = tile.warp_id
  func.return
}

// CHECK:      llvm.func internal @scale(%x: i64, %k: i32) -> i64 {
// CHECK-NEXT:   %kk = llvm.sext %k : i32 to i64
// CHECK-NEXT:   %y = llvm.mul %x, %kk : i64
// CHECK-NEXT:   llvm.return %y : i64
// CHECK-NEXT: }

// CHECK:      llvm.func @ids(%out: !llvm.ptr<1> {tile.dtype = i64, tile.output}, %[[K:k.*]]: i32) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>, tile.launch = #tile.launch<grid = [?, 4, 1], block = [128, 1, 1], smem = 0>} {
// The warp is computed at the function's entry, wherever tile.warp_id is: a 1-D block's is
// tid.x / 32, read from lane 0 (shfl.sync.idx) so that ptxas knows it is the same in every lane.
// CHECK-NEXT:   %[[T:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:   %[[FIVE:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT:   %[[W:.*]] = llvm.lshr %[[T]], %[[FIVE]] : i32
// CHECK-NEXT:   %[[L0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[ALL:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %[[CL:.*]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-NEXT:   %[[WU:.*]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.i32"(%[[ALL]], %[[W]], %[[L0]], %[[CL]]) : (i32, i32, i32, i32) -> i32
// CHECK-NEXT:   %warp = llvm.zext %[[WU]] : i32 to i64
// CHECK-NEXT:   %[[TX:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:   %tx = llvm.zext %[[TX]] : i32 to i64
// CHECK-NEXT:   %[[TY:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.y"() : () -> i32
// CHECK-NEXT:   %ty = llvm.zext %[[TY]] : i32 to i64
// CHECK-NEXT:   %[[TZ:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.z"() : () -> i32
// CHECK-NEXT:   %tz = llvm.zext %[[TZ]] : i32 to i64
// CHECK-NEXT:   %[[BX:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.x"() : () -> i32
// CHECK-NEXT:   %bx = llvm.zext %[[BX]] : i32 to i64
// CHECK-NEXT:   %[[BY:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ctaid.y"() : () -> i32
// CHECK-NEXT:   %by = llvm.zext %[[BY]] : i32 to i64
// CHECK-NEXT:   %[[LANE:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.laneid"() : () -> i32
// CHECK-NEXT:   %lane = llvm.zext %[[LANE]] : i32 to i64
// CHECK-NEXT:   %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%[[ZERO]]) : (i32) -> ()
// CHECK-NEXT:   %s = llvm.call @scale(%tx, %[[K]]) : (i64, i32) -> i64
// CHECK-NEXT:   llvm.store %s, %out {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }

// A 3-D block: the linear thread id ((tid.z * ntid.y + tid.y) * ntid.x + tid.x) / 32, from lane 0,
// once: the kernel's second tile.warp_id takes the same value (no second shuffle).
// CHECK:      llvm.func @warps_2d() attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 4, 2>
// CHECK-NEXT:   %[[Z:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.z"() : () -> i32
// CHECK-NEXT:   %[[NY:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ntid.y"() : () -> i32
// CHECK-NEXT:   %[[ZY:.*]] = llvm.mul %[[Z]], %[[NY]] : i32
// CHECK-NEXT:   %[[Y:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.y"() : () -> i32
// CHECK-NEXT:   %[[ZYY:.*]] = llvm.add %[[ZY]], %[[Y]] : i32
// CHECK-NEXT:   %[[NX:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.ntid.x"() : () -> i32
// CHECK-NEXT:   %[[ZYX:.*]] = llvm.mul %[[ZYY]], %[[NX]] : i32
// CHECK-NEXT:   %[[X:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
// CHECK-NEXT:   %[[LIN:.*]] = llvm.add %[[ZYX]], %[[X]] : i32
// CHECK-NEXT:   %[[C5:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT:   %[[WW:.*]] = llvm.lshr %[[LIN]], %[[C5]] : i32
// CHECK:        %[[WWU:.*]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.i32"(%{{.*}}, %[[WW]], %{{.*}}, %{{.*}})
// CHECK-NEXT:   %{{.*}} = llvm.zext %[[WWU]] : i32 to i64
// CHECK-NEXT:   %{{.*}} = llvm.zext %[[WWU]] : i32 to i64
// CHECK-NEXT:   llvm.return

// RUN: tile-opt %s -p tile-to-llvm | filecheck %s --check-prefix=DEVICE
// A device function's warp id (it may be called from a branch of some lanes): the linear id / 32
// where the op is, without the shuffle, which needs every lane of the warp.
// DEVICE:      llvm.func internal @warp_of_caller() -> i64
// DEVICE-NOT:    shfl.sync
// DEVICE:        llvm.lshr
// DEVICE-NOT:    shfl.sync
// DEVICE:        llvm.return
func.func private @warp_of_caller() -> index {
  %w = tile.warp_id
  func.return %w : index
}

// RUN: tile-opt %s -p tile-to-llvm | filecheck %s --check-prefix=OWN
// The kernel's warp id is found again by identity, not by name: a value of the program's own
// named like it is not taken for it.
// OWN:      llvm.func @own_name(
// OWN:        %[[S:.*]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.i32"
// OWN-NEXT:   %[[W:.*]] = llvm.zext %[[S]] : i32 to i64
// OWN-NEXT:   %warp_uniform = llvm.mlir.constant(7 : i32) : i32
// OWN-NEXT:   llvm.store %[[W]]
func.func @own_name(%out: !llvm.ptr<1>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %warp_uniform = arith.constant 7 : i32
  %w = tile.warp_id
  %i = arith.index_cast %w : index to i64
  frag.store %i, %out : i64, !llvm.ptr<1>
  func.return
}
