// RUN: not tile-opt %s -p tile-to-llvm -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_use_before_def.mlir:8:8: error: 'llvm.mul' result %u is used before it is defined (LLVM IR needs definitio
// CHECK-NOT: internal error

func.func @f() -> i32 {
  %s = arith.addi %u, %u : i32
  %u = arith.muli %s, %s : i32
  func.return %u : i32
}
