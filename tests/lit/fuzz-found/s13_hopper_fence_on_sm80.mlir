// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 13), minimized: sm_90 barriers compiled for sm_80. The
// instruction comes from a lowered op; the diagnostic is located at the kernel it was lowered from.
// CHECK: s13_hopper_fence_on_sm80.mlir:6:1: error: 'llvm.inline_asm' op the module uses 'fence.proxy.async', which needs sm_90 or newer
// CHECK-NOT: internal error
func.func @k(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i7}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 4096>} {
  %c0 = arith.constant 0 : index
  %bars = tile.mbar_init : !tile.mbar<1, warps>
  func.return
}
