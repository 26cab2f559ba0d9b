// RUN: not tile-opt %s -p tile-regalloc,tile-to-llvm -t llvm 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 12), minimized: a tile op outside every function lowered
// to a top-level llvm.mlir.constant that LLVM IR has no place for (diagnosed without a location before).
// CHECK: s12_toplevel_op.mlir:6:1: error: 'tile.barrier' op {{.*}}is at the top level of the module: ops run inside a function (func.func)
// CHECK-NOT: internal error
tile.barrier
