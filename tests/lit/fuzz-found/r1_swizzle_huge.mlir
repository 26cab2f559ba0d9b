// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r1_swizzle_huge.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r1_swizzle_huge.mlir:6:47: error: Sw<3,99999999999,3>: bits + base + |shift| must be at most 32 (a swizz
// CHECK-NOT: internal error

func.func @f() attributes {l = #tile.layout<Sw<3,99999999999,3> o 0 o (8,8):(8,1)>} {
  func.return
}
