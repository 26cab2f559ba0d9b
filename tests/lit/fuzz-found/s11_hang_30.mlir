// RUN: not tile-opt %s  2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_hang_30.mlir:6:1: error: string literal is not closed before the end of its line
// CHECK-NOT: internal error

"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
