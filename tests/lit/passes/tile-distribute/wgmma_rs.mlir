// RUN: tile-opt %S/../../../../examples/kernels/wgmma_rs_two_loops.mlir -p 'tile-swizzle,tile-pipeline{stages=2},tile-layout,tile-distribute' | filecheck %s
// RUN: tile-opt %S/../../../../examples/kernels/wgmma_rs_two_loops.mlir -p 'tile-swizzle,tile-pipeline{stages=2},tile-layout,tile-distribute,tile-to-llvm' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// S = q @ k.T: k's tile stored N x K is a K-major B (no trans_b), banded like
// an A. Then S @ k with A from registers: S's accumulator (the m16n8 C
// fragment) is, converted to f16 pairs, the m16n8k16 A fragment of each K
// step, so no shuffle or shared memory moves it; each step's four pairs go to
// a frag.wgmma_rs with the descriptor of k's tile as an MN-major B (trans_b).

// The tiles are written by cp.async (the generic proxy) and read by wgmma
// descriptors (the async proxy): each barrier that hands them over has a
// fence.proxy.async before it.
// CHECK:      frag.fence_proxy_async
// CHECK-NEXT: tile.barrier
// CHECK:      frag.wgmma_fence
// CHECK-NEXT: frag.wgmma "f16" n 64 %{{.*}}, %{{.*}}(
// CHECK-COUNT-3: frag.wgmma "f16" n 64
// CHECK:      frag.wgmma_commit
// CHECK-NEXT: frag.wgmma_wait 0(
// CHECK-NOT:  frag.shfl
// CHECK:      frag.wgmma_fence
// CHECK-NEXT: frag.wgmma_rs "f16" n 64 (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}), %{{.*}} trans_b(
// CHECK-COUNT-3: frag.wgmma_rs "f16" n 64
// CHECK:      frag.wgmma_commit
// CHECK-NEXT: frag.wgmma_wait 0(

// PTX:         .target sm_90a
// PTX:         fence.proxy.async.shared::cta;
// PTX-NEXT:    // end inline asm
// PTX-NEXT:    bar.sync 0;
// PTX-COUNT-4: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
// PTX:         wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
