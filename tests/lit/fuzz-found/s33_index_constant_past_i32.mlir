// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// A reproducer session 33's fuzzing campaign found (seed 3303): an index constant past 2^32 used where the
// lowering wants an i32 (an mbarrier's phase) reached xDSL's integer range check without a location; the
// constant now wraps as a cast would, and what remains is the module's real diagnostic, located.
func.func @heads(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 8192>} {
  %c0 = arith.constant 4294967296 : index
  %bars = tile.mbar_init : !tile.mbar<1>
  tile.mbar_wait %bars[%c0], %c0 : !tile.mbar<1>
  func.return
}
// CHECK: fuzz-found/s33_index_constant_past_i32.mlir:5:1: error: 'llvm.inline_asm' op the module uses 'fence.proxy.async', which needs sm_90 or newer
// CHECK-NOT: out of range
