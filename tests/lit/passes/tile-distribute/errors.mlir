// RUN: not tile-opt %s -p tile-layout,tile-distribute --split-input-file 2>&1 | filecheck %s

// What tile-distribute cannot do is an error naming the kernel or the op.

// A 128x128 f32 accumulator in one warp is 512 registers per lane.
func.func @big(%a: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc : !tile.st<128x16xf16>
  %sb = tile.alloc : !tile.st<16x128xf16>
  %acc = tile.zeros : !tile.rt<128x128xf32>
  %ra = tile.load %sa : !tile.st<128x16xf16> -> !tile.rt<128x16xf16>
  %rb = tile.load %sb : !tile.st<16x128xf16> -> !tile.rt<16x128xf16>
  %d = tile.mma %ra, %rb, %acc atom <mma_m16n8k16_f16> : !tile.rt<128x16xf16>, !tile.rt<16x128xf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<128x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: error: tile-distribute: 'tile.mma' at {{.*}}errors.mlir:14:8: @big: the fragments need about {{[0-9]+}} registers per thread, more than 255: the largest is accumulator !tile.rt<128x128xf32, {{.*}}> (%acc) with 512

// -----

// tile.aligned_rows must be a power-of-two number of bytes, at least the element size.
func.func @odd(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 3 : i64})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  func.return
}
// CHECK: error: tile-distribute: @odd: argument #0 (!tile.gl<f16, [?, ?]>): tile.aligned_rows must be an integer number of bytes, a power of two and at least the element size 2, got 3 : i64

// -----

// Turns among groups of whole warps: 96 threads (3 warps) do not split into 2 groups.
func.func @turns(%o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [96, 1, 1], smem = 0>} {
  tile.turn_begin 2
  tile.turn_end 2
  func.return
}
// CHECK: error: tile-distribute: 'tile.turn_begin' at {{.*}}errors.mlir:{{[0-9]+}}:3: 96 threads do not split into 2 groups of whole warps

// -----

// One kernel, one set of turns.
func.func @two_sets(%o: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [256, 1, 1], smem = 0>} {
  tile.turn_begin 2
  tile.turn_end 2
  tile.turn_begin 4
  tile.turn_end 4
  func.return
}
// CHECK: error: tile-distribute: 'tile.turn_begin' at {{.*}}errors.mlir:{{[0-9]+}}:3: takes turns among 4 groups, but the kernel's first turn op among 2: a kernel has one set of turns

// -----

// A block barrier that only the warps taking a branch reach would hang the block: the condition
// comes from the warp index, so the other warps skip it.
func.func @some_warps(%c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %w = tile.warp_id
  %first = arith.cmpi eq, %w, %c0 : index
  scf.if %first {
    tile.barrier
  }
  %z = tile.zeros : !tile.rt<16x16xf32>
  tile.store %z, %c[%c0, %c0] : !tile.rt<16x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: errors.mlir:63:5: error: tile-distribute: 'tile.barrier' at {{.*}}errors.mlir:63:5: a block barrier inside an if or while loop whose condition differs between the block's warps ('scf.if' at {{.*}}errors.mlir:62:3)

// -----

// A tile spread over both warps, stored inside a branch only warp 0 takes: warp 1's half would not
// be stored. (Computed inside the branch, the tile would be warp 0's own, and that is fine.)
func.func @some_warps_store(%c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %z = tile.zeros : !tile.rt<32x32xf32>
  %w = tile.warp_id
  %first = arith.cmpi eq, %w, %c0 : index
  scf.if %first {
    tile.store %z, %c[%c0, %c0] : !tile.rt<32x32xf32> -> !tile.gl<f32, [?, ?]>
  }
  func.return
}
// CHECK: errors.mlir:82:5: error: tile-distribute: 'tile.store' at {{.*}}errors.mlir:82:5: %z is a register tile spread over the block's warps, inside a region that only some warps run ('scf.if' at {{.*}}errors.mlir:81:3)

// -----

// Unstructured control flow (found by the fuzzer: an internal error before).
func.func @two_blocks(%out: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  func.return
^bb1:
  func.return
}
// CHECK: error: tile-distribute: 'func.func' @two_blocks at {{.*}}errors.mlir:{{[0-9]+}}:1: the body has 2 blocks; a tile kernel's control flow is structured (scf.if, scf.for), its body one block
