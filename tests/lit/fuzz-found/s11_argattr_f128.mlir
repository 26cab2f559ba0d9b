// RUN: not tile-opt %s  2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_argattr_f128.mlir:6:1: error: 'func.func': f128 float values in attributes are not supported (f16, bf16, f
// CHECK-NOT: internal error

func.func @f(%a: i32 {x = 3 : f128}) {
  func.return
}
