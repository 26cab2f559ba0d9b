// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 13), minimized: a declaration taking a global view
// (LLVM rejected the lowered function's argument, without a location).
// CHECK: s13_declaration_gl_arg.mlir:6:1: error: 'func.func' op {{.*}}declaration @odd takes !tile.gl<f16, [?, ?]>; only a kernel with a body passes tile values
// CHECK-NOT: internal error
func.func @odd(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 3 : i64})
