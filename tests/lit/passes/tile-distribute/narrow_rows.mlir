// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// tile.aligned_rows = A below 16 bytes (what tilec.matmul compiles for rows of
// 4, 8 or odd multiples of 2 bytes, as Triton's launcher specialises on
// divisibility): vectors of up to A bytes, no run-time alignment test, no
// other path.

// A = 8 for %a: each thread's run of 8 f16 is two 8-byte cp.async ("ca": cg
// takes 16 bytes only), each all inside or all outside the view, so its bounds
// test is cp.async's ignore-src predicate. A = 2 for %c: every element is its
// own predicated store (no %c_vec2 test, no scf.if around a vector store).
func.func @rows8(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 8 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 2 : i64})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  tile.async_copy %a[%c0, %c0] -> %s thr <(16,2):(2,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %r = tile.load %s : !tile.st<16x16xf16> -> !tile.rt<16x16xf16>
  tile.store %r, %c[%c0, %c0] : !tile.rt<16x16xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @rows8
// CHECK-NOT:   ptrtoint
// CHECK-NOT:   scf.if
// CHECK:       %[[OUT0:.*]] = arith.xori %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:  frag.cp_async "ca" %{{.*}}, %{{.*}}, 8 ignore_src %[[OUT0]] : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK:       %[[OUT1:.*]] = arith.xori %{{.*}}, %{{.*}} : i1
// CHECK-NEXT:  frag.cp_async "ca" %{{.*}}, %{{.*}}, 8 ignore_src %[[OUT1]] : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT:  frag.cp_async_commit
// CHECK-NOT:   scf.if
// CHECK-NOT:   %c_vec
// CHECK-COUNT-8: frag.store %{{.*}}, %{{.*}} if %{{.*}} : f16, !llvm.ptr<1>
// CHECK-NEXT:  func.return

// A = 2 (the element size): no cp.async can read the rows (it moves 4, 8 or 16
// aligned bytes), so the copy goes through registers: eight predicated element
// loads per run, packed into one 16-byte store to shared memory. No vector
// path is compiled (no ptrtoint of %a, no scf.if) and the inner stride is the
// constant 1 (a getelementptr by 1, 2, ... elements, no %a_stride1). The
// store waits until the next wait (or barrier, or the block's end): an async
// copy's destination is read only after one, and in a K loop its loads are
// then in flight during the mmas, as a cp.async would be.
func.func @rows2(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 2 : i64})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  tile.async_copy %a[%c0, %c0] -> %s thr <(16,2):(2,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  func.return
}
// CHECK-LABEL: func.func @rows2
// CHECK:       frag.shared "rows2_s"
// CHECK-NOT:   ptrtoint
// CHECK-NOT:   scf.if
// CHECK-NOT:   %a_stride1
// CHECK:       %[[BASE:.*]] = llvm.getelementptr %a[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK:       frag.load %[[BASE]] if %{{.*}} : !llvm.ptr<1> -> f16
// CHECK:       llvm.getelementptr %[[BASE]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK-COUNT-7: frag.load %{{.*}} if %{{.*}} : !llvm.ptr<1> -> f16
// CHECK-NOT:   frag.store
// CHECK:       frag.cp_async_commit
// CHECK-COUNT-8: vector.insert
// CHECK:       %[[P:.*]] = llvm.getelementptr %s[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// CHECK-NEXT:  frag.store %{{.*}}, %[[P]] : vector<8xf16>, !llvm.ptr<3>
// CHECK-NEXT:  frag.cp_async_wait 0

// f32 rows aligned to 4 bytes (the element size): one 4-byte cp.async per
// element, each its own ignore-src bounds test; no element loads.
func.func @rows4f32(%a: !tile.gl<f32, [?, ?]> {tile.aligned_rows = 4 : i64})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 1024>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf32>
  tile.async_copy %a[%c0, %c0] -> %s thr <(16,2):(2,1)> val <(1,8):(1,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<16x16xf32>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  func.return
}
// CHECK-LABEL: func.func @rows4f32
// CHECK-NOT:   frag.load
// CHECK-COUNT-8: frag.cp_async "ca" %{{.*}}, %{{.*}}, 4 ignore_src %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT:  frag.cp_async_commit
