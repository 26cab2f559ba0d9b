// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r2_f80_print.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r2_f80_print.mlir:6:1: error: 'func.func': f80 float values in attributes are not supported (f16, bf16, f32, f64 are)
// CHECK-NOT: internal error

func.func @f() attributes {x = 16 : f80} {
  func.return
}
