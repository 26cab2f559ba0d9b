// RUN: tile-opt %s -p 'tile-to-ptx{block=64,64,32 warps=2,2 stages=2}' | filecheck %s --check-prefix=LLVM
// RUN: tile-opt %s -p 'tile-to-ptx{block=64,64,32 warps=2,2 stages=2}' -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX

// The whole pipeline on a whole-problem f16 GEMM with a bias + ReLU epilogue:
// tiling, swizzle, a 2-stage cp.async pipeline, register allocation, LLVM.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>) {
  tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [?]>) : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32, %bv: f32):
    %s = arith.addf %acc, %bv : f32
    %z = arith.constant 0.0 : f32
    %r = arith.maximumf %s, %z : f32
    %h = arith.truncf %r : f32 to f16
    tile.yield %h : f16
  }
  func.return
}

// LLVM:     llvm.func @gemm(%{{.*}}: !llvm.ptr<1> {{.*}}tile.dtype = f16
// LLVM-SAME: nvvm.kernel
// LLVM:     llvm.call_intrinsic "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3"
// LLVM:     llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"

// PTX:      .visible .entry gemm(
// PTX:      .maxntid 128, 1, 1
// PTX-DAG:  cp.async.cg.shared.global
// PTX-DAG:  cp.async.wait_group 0
// PTX-DAG:  ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG:  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG:  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX-DAG:  max.NaN.f32
