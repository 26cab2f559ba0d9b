// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r5b_scalar.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r5b_scalar.mlir:7:8: error: 'arith.constant': integer value 9223372036854775808 is out of range fo
// CHECK-NOT: internal error

func.func @f() {
  %c = arith.constant 9223372036854775808 : index
  func.return
}
