// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r5_dense_index_overflow.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r5_dense_index_overflow.mlir:7:9: error: a value does not fit its element type (argument out of range)
// CHECK-NOT: internal error

func.func @f() {
  %cv = arith.constant dense<[9223372036854775808, 2]> : vector<2xindex>
  func.return
}
