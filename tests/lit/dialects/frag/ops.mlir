// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// Every fragment-level op: per-lane registers and one PTX instruction family each.

func.func @k(%a: !llvm.ptr<1>, %d: !llvm.ptr<1>, %n: i32, %x: f32, %out: i1) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 1024>} {
  %sa = frag.shared "sa", 512, align 128 : !llvm.ptr<3>
  frag.cp_async "cg" %sa, %a, 16, %n : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async "ca" %sa, %a, 8 : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async "cg" %sa, %a, 16 ignore_src %out : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async_commit
  frag.cp_async_wait 0
  tile.barrier
  %r0, %r1, %r2, %r3 = frag.ldmatrix %sa x 4 : !llvm.ptr<3> -> i32, i32, i32, i32
  %t0, %t1 = frag.ldmatrix %sa x 2 trans : !llvm.ptr<3> -> i32, i32
  %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k16_f16> (%r0, %r1, %r2, %r3) (%t0, %t1) (%x, %x, %x, %x) : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32
  %f = frag.mma <fma_f32> (%x) (%x) (%x) : (f32) (f32) -> f32
  %v = frag.load %a : !llvm.ptr<1> -> vector<4xf32>
  %true = arith.constant true
  %w = frag.load %sa if %true : !llvm.ptr<3> -> vector<8xf16>
  frag.store %v, %d if %true : vector<4xf32>, !llvm.ptr<1>
  frag.red "add" %x, %d if %true : f32, !llvm.ptr<1>
  frag.red "max" %n, %d : i32, !llvm.ptr<1>
  %old = frag.atom "cas" %n, %d cmp %n if %true : i32, !llvm.ptr<1>
  %sum = frag.atom "add" %x, %d : f32, !llvm.ptr<1>
  %lane = arith.constant 1 : i32
  %s = frag.shfl "bfly" %d0, %lane : f32
  %p = frag.pack "bf16x2" %d0, %d1
  %q = frag.tf32 %d2
  %e = frag.ex2 %d3
  %m = frag.fmax %e, %s
  %mn = frag.fmin %e, %s
  func.return
}

// CHECK:      func.func @k(%a: !llvm.ptr<1>, %d: !llvm.ptr<1>, %n: i32, %x: f32, %out: i1) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 1024>} {
// CHECK-NEXT:   %sa = frag.shared "sa", 512, align 128 : !llvm.ptr<3>
// CHECK-NEXT:   frag.cp_async "cg" %sa, %a, 16, %n : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT:   frag.cp_async "ca" %sa, %a, 8 : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT:   frag.cp_async "cg" %sa, %a, 16 ignore_src %out : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT:   frag.cp_async_commit
// CHECK-NEXT:   frag.cp_async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %r0, %r1, %r2, %r3 = frag.ldmatrix %sa x 4 : !llvm.ptr<3> -> i32, i32, i32, i32
// CHECK-NEXT:   %t0, %t1 = frag.ldmatrix %sa x 2 trans : !llvm.ptr<3> -> i32, i32
// CHECK-NEXT:   %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k16_f16>(%r0, %r1, %r2, %r3) (%t0, %t1) (%x, %x, %x, %x) : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32
// CHECK-NEXT:   %f = frag.mma <fma_f32>(%x) (%x) (%x) : (f32) (f32) -> f32
// CHECK-NEXT:   %v = frag.load %a : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NEXT:   %true = arith.constant true
// CHECK-NEXT:   %w = frag.load %sa if %true : !llvm.ptr<3> -> vector<8xf16>
// CHECK-NEXT:   frag.store %v, %d if %true : vector<4xf32>, !llvm.ptr<1>
// CHECK-NEXT:   frag.red "add" %x, %d if %true : f32, !llvm.ptr<1>
// CHECK-NEXT:   frag.red "max" %n, %d : i32, !llvm.ptr<1>
// CHECK-NEXT:   %old = frag.atom "cas" %n, %d cmp %n if %true : i32, !llvm.ptr<1>
// CHECK-NEXT:   %sum = frag.atom "add" %x, %d : f32, !llvm.ptr<1>
// CHECK-NEXT:   %lane = arith.constant 1 : i32
// CHECK-NEXT:   %s = frag.shfl "bfly" %d0, %lane : f32
// CHECK-NEXT:   %p = frag.pack "bf16x2" %d0, %d1
// CHECK-NEXT:   %q = frag.tf32 %d2
// CHECK-NEXT:   %e = frag.ex2 %d3
// CHECK-NEXT:   %m = frag.fmax %e, %s
// CHECK-NEXT:   %mn = frag.fmin %e, %s
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
