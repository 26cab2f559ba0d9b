// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r3_rt_huge_mode.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r3_rt_huge_mode.mlir:6:26: error: tile.rt: fragment ((4,8),(1099511627776,2,2)):((32,1),(16,8,128)) give
// CHECK-NOT: internal error

func.func @f(%a: !tile.rt<16x16xf16, ((4,8),(1099511627776,2,2)):((32,1),(16,8,128))>) {
  func.return
}
