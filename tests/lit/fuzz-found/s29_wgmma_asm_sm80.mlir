// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 2930), minimized: the instruction an arch lacks is named at the line of the op it was lowered from.
// CHECK: s29_wgmma_asm_sm80.mlir:{{[0-9]+}}:10: error: 'llvm.inline_asm' op the module uses 'wgmma', which needs sm_90a; the target is sm_80
// CHECK-NOT: internal error
func.func @wgmma_dtype(%d: i64, %x: f32) {
  %r:4 = frag.wgmma "f16" n 8 %d, %d (%x, %x, %x, %x) : f32, f32, f32, f32
  func.return
}
