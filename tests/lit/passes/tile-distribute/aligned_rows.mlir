// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s

// tile.aligned_rows = 16 on a !tile.gl argument promises that every row of the
// view is contiguous, starts on a 16-byte boundary and is a whole number of
// 16-byte vectors long (checked by the launcher). The copy of a 16x16 f16
// window then needs no prologue check (no ptrtoint of the base pointer, no
// urem of the stride) and no element path: each run of 8 elements is one
// cp.async that is all inside or all outside the view, so its bounds test
// becomes cp.async's ignore-src predicate (outside: read nothing, write
// zeros), and the inner stride is the constant 1 (no multiply by
// %a_stride1). The origin is provably nonnegative, so each test is one i32
// compare of the thread's coordinate with the extent left after the origin,
// clamped to 2^31 - 1 once per copy. The promise goes onto the pointer
// parameter, for the launcher.
func.func @copy(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]>)
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
// CHECK:      func.func @copy(%a: !llvm.ptr<1> {tile.dtype = f16, tile.gl = "a", tile.aligned_rows = 16 : i64}{{.*}}
// CHECK-NOT:  ptrtoint %a
// CHECK-NOT:  scf.if
// CHECK-NOT:  %a_stride1
// CHECK:      %[[M0:.*]] = arith.maxsi %a_dim0, %{{.*}} : i64
// CHECK-NEXT: %[[M1:.*]] = arith.minui %[[M0]], %{{.*}} : i64
// CHECK-NEXT: %[[M:.*]] = arith.trunci %[[M1]] : i64 to i32
// CHECK-NEXT: %[[K0:.*]] = arith.maxsi %a_dim1, %{{.*}} : i64
// CHECK-NEXT: %[[K1:.*]] = arith.minui %[[K0]], %{{.*}} : i64
// CHECK-NEXT: %[[K:.*]] = arith.trunci %[[K1]] : i64 to i32
// CHECK:      %[[ROW:.*]] = arith.cmpi ult, %tm, %[[M]] : i32
// CHECK-NEXT: %[[COL:.*]] = arith.cmpi ult, %{{.*}}, %[[K]] : i32
// CHECK-NEXT: %[[IN:.*]] = arith.andi %[[ROW]], %[[COL]] : i1
// CHECK:      %[[OUT:.*]] = arith.xori %[[IN]], %{{.*}} : i1
// CHECK-NEXT: frag.cp_async "cg" %{{.*}}, %{{.*}}, 16 ignore_src %[[OUT]] : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: frag.cp_async_commit

// A register tile loaded from and stored to aligned rows. Each lane's values
// are runs of two f16 at even columns; the window's origin (16) is a multiple
// of two and every row is a whole number of 16-byte vectors, so a run is all
// inside the view or all outside: one predicated 4-byte access per run, no
// element path (no scf.if). %z makes no promise: its runs test the vector
// alignment at run time (%z_vec2) and keep an element path.
func.func @rows(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %z: !tile.gl<f16, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %r = tile.load %a[%c0, %c16] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  tile.store %r, %c[%c0, %c16] : !tile.rt<16x16xf16> -> !tile.gl<f16, [?, ?]>
  tile.store %r, %z[%c0, %c0] : !tile.rt<16x16xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @rows
// CHECK-NOT:   scf.if
// CHECK:       %[[ROW:.*]] = arith.cmpi ult, %{{.*}}, %a_dim0 : i64
// CHECK-NEXT:  %[[COL:.*]] = arith.cmpi ult, %{{.*}}, %a_dim1 : i64
// CHECK-NEXT:  %[[IN:.*]] = arith.andi %[[ROW]], %[[COL]] : i1
// CHECK:       %[[P:.*]] = llvm.getelementptr %a[%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK-NEXT:  %{{.*}} = frag.load %[[P]] if %[[IN]] : !llvm.ptr<1> -> vector<2xf16>
// CHECK-NOT:   scf.if
// CHECK:       %[[CROW:.*]] = arith.cmpi ult, %{{.*}}, %c_dim0 : i64
// CHECK:       %[[CCOL:.*]] = arith.cmpi ult, %{{.*}}, %c_dim1 : i64
// CHECK-NEXT:  %[[CIN:.*]] = arith.andi %[[CROW]], %[[CCOL]] : i1
// CHECK-NEXT:  frag.store %{{.*}}, %{{.*}} if %[[CIN]] : vector<2xf16>, !llvm.ptr<1>
// CHECK-NOT:   scf.if
// CHECK:       arith.andi %z_vec2, %{{.*}} : i1
// CHECK:       scf.if
