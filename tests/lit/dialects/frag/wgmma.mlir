// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s
// RUN: tile-opt %s -p tile-to-llvm | filecheck %s --check-prefix=LLVM
// RUN: tile-opt %s -p tile-to-llvm -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// sm_90a's warpgroup MMA at fragment level (what tile-distribute emits for
// tile.wgmma). A descriptor is the operand's shared address / 16 in its low 14
// bits OR the strides and swizzle mode (here SBO 1024 bytes, 128-byte swizzle:
// (64 << 32) | (1 << 62)); frag.wgmma m64n8 takes this lane's 4 accumulators
// (B MN-major: trans_b), and frag.wgmma_wait passes them through, so that no
// reader of the results can move above the wait.

func.func @k(%s: !llvm.ptr<3>, %x: f32) -> f32 {
  %d = frag.wgmma_desc %s, 4611686293305294848 : !llvm.ptr<3>
  frag.wgmma_fence
  %r:4 = frag.wgmma "bf16" n 8 %d, %d trans_b(%x, %x, %x, %x) : f32, f32, f32, f32
  frag.wgmma_commit
  %w:4 = frag.wgmma_wait 0(%r#0, %r#1, %r#2, %r#3) : f32, f32, f32, f32
  func.return %w#3 : f32
}

// CHECK-LABEL: func.func @k
// CHECK:         %d = frag.wgmma_desc %s, 4611686293305294848 : !llvm.ptr<3>
// CHECK-NEXT:    frag.wgmma_fence
// CHECK-NEXT:    %r, %r_1, %r_2, %r_3 = frag.wgmma "bf16" n 8 %d, %d trans_b(%x, %x, %x, %x) : f32, f32, f32, f32
// CHECK-NEXT:    frag.wgmma_commit
// CHECK-NEXT:    %w, %w_1, %w_2, %w_3 = frag.wgmma_wait 0(%r, %r_1, %r_2, %r_3) : f32, f32, f32, f32

// LLVM:          %[[A:.*]] = llvm.ptrtoint %s : !llvm.ptr<3> to i64
// LLVM:          llvm.lshr %[[A]]
// LLVM:          llvm.and
// LLVM:          %d = llvm.or
// LLVM-NEXT:     llvm.call_intrinsic "llvm.nvvm.wgmma.fence.sync.aligned"
// LLVM:          llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $4, $5, p, 1, 1, 0, 1;{{.*}}", "=f,=f,=f,=f,l,l,r,0,1,2,3,~{memory}"
// LLVM:          llvm.call_intrinsic "llvm.nvvm.wgmma.commit_group.sync.aligned"
// LLVM-NEXT:     llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 0;", "=f,=f,=f,=f,0,1,2,3,~{memory}"

// PTX:           .target sm_90a
// PTX:           wgmma.fence.sync.aligned;
// PTX:           wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16
// PTX:           wgmma.commit_group.sync.aligned;
// PTX:           wgmma.wait_group.sync.aligned 0;

// frag.wgmma_rs: A from registers, this lane's four f16/bf16 pairs of its
// warp's 16 rows (the m16n8k16 A fragment); B through its descriptor. The A
// registers are "r" inputs of the inline asm, the accumulators tied as above.

func.func @rs(%s: !llvm.ptr<3>, %a0: i32, %a1: i32, %a2: i32, %a3: i32, %x: f32) -> f32 {
  %d = frag.wgmma_desc %s, 4611686293305294848 : !llvm.ptr<3>
  frag.wgmma_fence
  %r:4 = frag.wgmma_rs "bf16" n 8 (%a0, %a1, %a2, %a3), %d trans_b(%x, %x, %x, %x) : f32, f32, f32, f32
  %q:4 = frag.wgmma_rs "f16" n 8 (%a3, %a2, %a1, %a0), %d(%r#0, %r#1, %r#2, %r#3) : f32, f32, f32, f32
  frag.wgmma_commit
  %w:4 = frag.wgmma_wait 0(%q#0, %q#1, %q#2, %q#3) : f32, f32, f32, f32
  func.return %w#3 : f32
}

// CHECK-LABEL: func.func @rs
// CHECK:         frag.wgmma_fence
// CHECK-NEXT:    %r, %r_1, %r_2, %r_3 = frag.wgmma_rs "bf16" n 8 (%a0, %a1, %a2, %a3), %d trans_b(%x, %x, %x, %x) : f32, f32, f32, f32
// CHECK-NEXT:    %q, %q_1, %q_2, %q_3 = frag.wgmma_rs "f16" n 8 (%a3, %a2, %a1, %a0), %d(%r, %r_1, %r_2, %r_3) : f32, f32, f32, f32
// CHECK-NEXT:    frag.wgmma_commit

// LLVM-LABEL:    llvm.func @rs
// LLVM:          llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1, 1;{{.*}}", "=f,=f,=f,=f,r,r,r,r,l,r,0,1,2,3,~{memory}" %a0, %a1, %a2, %a3, %{{d[_0-9]*}},
// LLVM:          llvm.inline_asm has_side_effects {{.*}}wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$4, $5, $6, $7}, $8, p, 1, 1, 0;{{.*}}", "=f,=f,=f,=f,r,r,r,r,l,r,0,1,2,3,~{memory}" %a3, %a2, %a1, %a0, %{{d[_0-9]*}},

// PTX-LABEL:     rs(
// PTX:           wgmma.fence.sync.aligned;
// PTX:           wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}, %{{[a-z]+}}{{[0-9]+}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX:           wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{.*}}, p, 1, 1, 0;
// PTX:           wgmma.commit_group.sync.aligned;
