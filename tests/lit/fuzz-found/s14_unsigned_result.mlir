// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 14), minimized: an unsigned integer result, which LLVM's
// function types refuse (diagnosed without a location before).
// CHECK: s14_unsigned_result.mlir:6:1: error: 'func.func' op {{.*}}@f takes or returns ui32, which has no llvm-level form
// CHECK-NOT: internal error
func.func private @f() -> ui32
