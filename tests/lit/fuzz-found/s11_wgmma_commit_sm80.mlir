// RUN: not tile-opt %s -p tile-to-llvm -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_wgmma_commit_sm80.mlir:7:3: error: 'llvm.call_intrinsic' op the module uses 'llvm.nvvm.wgmma', which needs sm_90a; the target is sm_80
// CHECK-NOT: internal error

func.func @k() {
  frag.wgmma_commit
  func.return
}
