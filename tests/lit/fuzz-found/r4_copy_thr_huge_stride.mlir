// RUN: not tile-opt %s 2>&1 | filecheck %s
// A reproducer the issue-18 fuzzing campaign found (r4_copy_thr_huge_stride.mlir): a located diagnostic, not an internal error.
// CHECK: fuzz-found/r4_copy_thr_huge_stride.mlir:9:3: error: 'tile.async_copy' thread layout (16,2):(1000000000000,1) numbers threa
// CHECK-NOT: internal error

func.func @copy(%a: !tile.gl<f16, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  tile.async_copy %a[%c0, %c0] -> %s thr <(16,2):(1000000000000,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>
  tile.async_commit
  tile.async_wait 0
  func.return
}
