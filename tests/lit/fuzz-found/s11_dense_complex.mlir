// RUN: not tile-opt %s  2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_dense_complex.mlir:6:6: error: malformed attribute, type or value (xDSL could not read it)
// CHECK-NOT: internal error

%c = arith.constant dense<[1, 2]> : vector<2xcomplex<f32>>
