// RUN: not tile-opt %s -p tile-to-llvm -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_scf_if_empty_then.mlir:7:8: error: 'scf.if' has 1 result(s): its then region must end with an 'scf.yield' of them
// CHECK-NOT: internal error

func.func @f(%b: i1, %x: f32) -> f32 {
  %y = scf.if %b -> (f32) {
  }
  func.return %y : f32
}
