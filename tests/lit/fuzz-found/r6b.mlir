// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r6b.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r6b.mlir:7:8: error: Integer value 4611686018427387904 is out of range for type i32 which s
// CHECK-NOT: internal error

func.func @f() {
  %c = arith.constant 4611686018427387904 : i32
  func.return
}
