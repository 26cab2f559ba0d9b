// RUN: not tile-opt %s -p tile-to-llvm -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_scf_if_empty_then.mlir: error: LLVM rejects the IR made from this module: PHINode should have one entry fo
// CHECK-NOT: internal error

func.func @f(%b: i1, %x: f32) -> f32 {
  %y = scf.if %b -> (f32) {
  }
  func.return %y : f32
}
