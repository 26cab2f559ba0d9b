// A whole-problem GEMM: C (f16) = A (f16, M x K) @ B (f16, K x N), accumulated in f32.
//
//   tile-opt examples/gemm.mlir -p tile-to-ptx -t 'ptx{arch=sm_90}'
//
// Shapes are dynamic: the same kernel runs any M, N, K (ragged edges read
// zeros and drop writes). The epilogue block receives each accumulator
// element in f32 and yields the element stored to C.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}
