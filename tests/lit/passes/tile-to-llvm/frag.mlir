// RUN: tile-opt %s -p tile-to-llvm | filecheck %s

// Every frag op lowers to its NVVM intrinsic (or plain llvm op); frag.shared
// becomes an addrspace(3) global (one per name, bytes = 0: the extern dynamic one).

func.func @k(%a: !llvm.ptr<1>, %d: !llvm.ptr<1>, %n: i32, %x: f32, %p: i1) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 4096>} {
  %sa = frag.shared "sa", 512, align 128 : !llvm.ptr<3>
  %sa2 = frag.shared "sa", 1024, align 16 : !llvm.ptr<3>
  %dyn = frag.shared "dyn", 0, align 16 : !llvm.ptr<3>
  frag.cp_async "cg" %sa, %a, 16 : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async "cg" %sa, %a, 16, %n : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async "ca" %dyn, %a, 8 : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async "cg" %sa, %a, 16 ignore_src %p : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async_commit
  frag.cp_async_wait 1
  %r0, %r1, %r2, %r3 = frag.ldmatrix %sa x 4 : !llvm.ptr<3> -> i32, i32, i32, i32
  %t0, %t1 = frag.ldmatrix %sa x 2 trans : !llvm.ptr<3> -> i32, i32
  %o = frag.ldmatrix %sa x 1 : !llvm.ptr<3> -> i32
  %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k16_f16> (%r0, %r1, %r2, %r3) (%t0, %t1) (%x, %x, %x, %x) : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32
  %e0, %e1, %e2, %e3 = frag.mma <mma_m16n8k16_bf16> (%r0, %r1, %r2, %r3) (%t0, %t1) (%x, %x, %x, %x) : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32
  %q = frag.tf32 %d2
  %g0, %g1, %g2, %g3 = frag.mma <mma_m16n8k8_tf32> (%q, %q, %q, %q) (%q, %q) (%x, %x, %x, %x) : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32
  %f = frag.mma <fma_f32> (%x) (%x) (%x) : (f32) (f32) -> f32
  %v = frag.load %a : !llvm.ptr<1> -> vector<4xf32>
  %w = frag.load %sa if %p : !llvm.ptr<3> -> vector<8xf16>
  %h = frag.load %a if %p : !llvm.ptr<1> -> f16
  frag.store %v, %d if %p : vector<4xf32>, !llvm.ptr<1>
  frag.store %h, %sa : f16, !llvm.ptr<3>
  %s = frag.shfl "bfly" %d0, %n : f32
  %si = frag.shfl "idx" %n, %n : i32
  %ph = frag.pack "f16x2" %d0, %d1
  %pb = frag.pack "bf16x2" %d0, %d1
  %ex = frag.ex2 %d3
  %mx = frag.fmax %ex, %s
  %mn = frag.fmin %ex, %s
  func.return
}

// CHECK:      llvm.mlir.global internal @sa() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<1024 x i8>
// CHECK-NEXT: llvm.mlir.global external @dyn() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK:      llvm.func @k(%a: !llvm.ptr<1>, %d: !llvm.ptr<1>, %n: i32, %x: f32, %p: i1) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>, tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 4096>} {
// CHECK-NEXT:   %sa = llvm.mlir.addressof @sa : !llvm.ptr<3>
// CHECK-NEXT:   %sa2 = llvm.mlir.addressof @sa : !llvm.ptr<3>
// CHECK-NEXT:   %dyn = llvm.mlir.addressof @dyn : !llvm.ptr<3>
// CHECK-NEXT:   llvm.call_intrinsic "llvm.nvvm.cp.async.cg.shared.global.16"(%sa, %a) : (!llvm.ptr<3>, !llvm.ptr<1>) -> ()
// CHECK-NEXT:   llvm.call_intrinsic "llvm.nvvm.cp.async.cg.shared.global.16.s"(%sa, %a, %n) : (!llvm.ptr<3>, !llvm.ptr<1>, i32) -> ()
// CHECK-NEXT:   llvm.call_intrinsic "llvm.nvvm.cp.async.ca.shared.global.8"(%dyn, %a) : (!llvm.ptr<3>, !llvm.ptr<1>) -> ()
// CHECK-NEXT:   llvm.inline_asm has_side_effects "cp.async.cg.shared.global [$0], [$1], 16, $2;", "r,l,b" %sa, %a, %p : (!llvm.ptr<3>, !llvm.ptr<1>, i1) -> ()
// CHECK-NEXT:   llvm.call_intrinsic "llvm.nvvm.cp.async.commit.group"() : () -> ()
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   llvm.call_intrinsic "llvm.nvvm.cp.async.wait.group"(%[[ONE]]) : (i32) -> ()
// CHECK-NEXT:   %[[X4:.*]] = llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3"(%sa) : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT:   %r0 = llvm.extractvalue %[[X4]][0] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT:   %r1 = llvm.extractvalue %[[X4]][1] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT:   %r2 = llvm.extractvalue %[[X4]][2] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT:   %r3 = llvm.extractvalue %[[X4]][3] : !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT:   %[[X2:.*]] = llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16.p3"(%sa) : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32)>
// CHECK-NEXT:   %t0 = llvm.extractvalue %[[X2]][0] : !llvm.struct<(i32, i32)>
// CHECK-NEXT:   %t1 = llvm.extractvalue %[[X2]][1] : !llvm.struct<(i32, i32)>
// CHECK-NEXT:   %o = llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3"(%sa) : (!llvm.ptr<3>) -> i32
// f16: i32 registers are bitcast to the vector<2xf16> the intrinsic takes.
// CHECK-NEXT:   %[[A0:.*]] = llvm.bitcast %r0 : i32 to vector<2xf16>
// CHECK:        %[[MMA:.*]] = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"(%[[A0]], {{.*}}, %x, %x, %x, %x) : (vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT:   %d0 = llvm.extractvalue %[[MMA]][0] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK:        %d3 = llvm.extractvalue %[[MMA]][3] : !llvm.struct<(f32, f32, f32, f32)>
// CHECK-NEXT:   %[[BF:.*]] = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%r0, %r1, %r2, %r3, %t0, %t1, %x, %x, %x, %x) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:        %q = llvm.call_intrinsic "llvm.nvvm.f2tf32.rna"(%d2) : (f32) -> i32
// CHECK-NEXT:   %[[TF:.*]] = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"(%q, %q, %q, %q, %q, %q, %x, %x, %x, %x) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK:        %f = llvm.intr.fma(%x, %x, %x) : (f32, f32, f32) -> f32
// CHECK-NEXT:   %v = llvm.load %a {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// A predicated load runs under a branch; the skipped path gives zero.
// CHECK-NEXT:   %[[Z8:.*]] = llvm.mlir.constant(dense<0.000000e+00> : vector<8xf16>) : vector<8xf16>
// CHECK-NEXT:   llvm.cond_br %p, ^[[THEN:.*]], ^[[JOIN:.*]](%[[Z8]] : vector<8xf16>)
// CHECK-NEXT: ^[[THEN]]:
// CHECK-NEXT:   %[[L8:.*]] = llvm.load %sa {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
// CHECK-NEXT:   llvm.br ^[[JOIN]](%[[L8]] : vector<8xf16>)
// CHECK-NEXT: ^[[JOIN]](%w: vector<8xf16>):
// CHECK-NEXT:   %[[Z2:.*]] = llvm.mlir.constant(0.000000e+00 : f16) : f16
// CHECK-NEXT:   llvm.cond_br %p, ^[[THEN2:.*]], ^[[JOIN2:.*]](%[[Z2]] : f16)
// CHECK-NEXT: ^[[THEN2]]:
// CHECK-NEXT:   %[[L2:.*]] = llvm.load %a {alignment = 2 : i64} : !llvm.ptr<1> -> f16
// CHECK-NEXT:   llvm.br ^[[JOIN2]](%[[L2]] : f16)
// CHECK-NEXT: ^[[JOIN2]](%h: f16):
// A predicated store is one predicated PTX store (inline asm), no branch: a 16-byte
// one takes its value as four b32 registers.
// CHECK-NEXT:   %[[W:.*]] = llvm.bitcast %v : vector<4xf32> to vector<4xi32>
// CHECK-COUNT-4: llvm.extractelement %[[W]]
// CHECK-NEXT:   llvm.inline_asm has_side_effects "@$0 st.global.v4.b32 [$1], {$2, $3, $4, $5};", "b,l,r,r,r,r" %p, %d, {{.*}} : (i1, !llvm.ptr<1>, i32, i32, i32, i32) -> ()
// CHECK-NEXT:   llvm.store %h, %sa {alignment = 2 : i64} : f16, !llvm.ptr<3>
// CHECK-NEXT:   %[[MASK:.*]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT:   %[[CLAMP:.*]] = llvm.mlir.constant(31 : i32) : i32
// CHECK-NEXT:   %s = llvm.call_intrinsic "llvm.nvvm.shfl.sync.bfly.f32"(%[[MASK]], %d0, %n, %[[CLAMP]]) : (i32, f32, i32, i32) -> f32
// CHECK:        %si = llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.i32"({{.*}}, %n, %n, {{.*}}) : (i32, i32, i32, i32) -> i32
// cvt.rn.f16x2.f32 takes the high half first.
// CHECK-NEXT:   %[[H2:.*]] = llvm.call_intrinsic "llvm.nvvm.ff2f16x2.rn"(%d1, %d0) : (f32, f32) -> vector<2xf16>
// CHECK-NEXT:   %ph = llvm.bitcast %[[H2]] : vector<2xf16> to i32
// CHECK-NEXT:   %[[B2:.*]] = llvm.call_intrinsic "llvm.nvvm.ff2bf16x2.rn"(%d1, %d0) : (f32, f32) -> vector<2xbf16>
// CHECK-NEXT:   %pb = llvm.bitcast %[[B2]] : vector<2xbf16> to i32
// CHECK-NEXT:   %ex = llvm.call_intrinsic "llvm.nvvm.ex2.approx.f32"(%d3) : (f32) -> f32
// CHECK-NEXT:   %mx = llvm.intr.maxnum(%ex, %s) : (f32, f32) -> f32
// CHECK-NEXT:   %mn = llvm.intr.minnum(%ex, %s) : (f32, f32) -> f32
// CHECK-NEXT:   llvm.return
// CHECK-NEXT: }
