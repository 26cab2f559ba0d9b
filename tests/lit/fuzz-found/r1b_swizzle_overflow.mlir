// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r1b_swizzle_overflow.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r1b_swizzle_overflow.mlir:6:45: error: Sw<3,3,1000000000000000000000000000000>: bits + base + |shift| must be
// CHECK-NOT: internal error

func.func @f() attributes {l = #tile.swizzle<3,3,1000000000000000000000000000000>} {
  func.return
}
