// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// A reproducer session 38's fuzzing found: a tile.matmul function whose body has a second (empty) block
// after its return. tile-tiling read the body as one block (xDSL's ValueError); it is now a located error.
func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
  ^bb1:
}
// CHECK: s38_matmul_body_of_two_blocks.mlir:4:1: error: tile-tiling: 'func.func' @gemm at {{.*}}: the body has 2 blocks; a kernel's body is one block
// CHECK-NOT: Traceback
