// RUN: not tile-opt %s -p 'tile-to-ptx{group=1000000000000000000000000000000}' -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 13): a group option past i64 (diagnosed without a location).
// CHECK: pass-pipeline:1:1: error: invalid options for pass 'tile-to-ptx': tile-tiling: group=1000000000000000000000000000000: at most 2147483647 block rows per group
// CHECK-NOT: internal error
func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}
