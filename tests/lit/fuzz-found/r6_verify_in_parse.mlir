// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r6_verify_in_parse.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r6_verify_in_parse.mlir:7:8: error: Unexpected attribute f32
// CHECK-NOT: internal error

func.func @f(%a: f32) {
  %x = arith.minui %a, %a : f32
  func.return
}
