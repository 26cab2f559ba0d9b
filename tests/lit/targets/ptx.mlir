// The sample kernels through tile-to-llvm to LLVM IR and PTX.
// RUN: tile-opt %S/../../../examples/kernels/mma_f16.mlir -p tile-to-llvm -t llvm | filecheck %s --check-prefix=LLVM
// RUN: tile-opt %S/../../../examples/kernels/mma_f16.mlir -p tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=F16
// RUN: tile-opt %S/../../../examples/kernels/mma_bf16.mlir -p tile-to-llvm -t ptx | filecheck %s --check-prefix=BF16
// RUN: tile-opt %S/../../../examples/kernels/mma_tf32.mlir -p tile-to-llvm -t 'ptx{arch=sm_86}' | filecheck %s --check-prefix=TF32
// RUN: not tile-opt %S/../../../examples/kernels/mma_f16.mlir -p tile-to-llvm -t 'ptx{arch=sm_70}' 2>&1 | filecheck %s --check-prefix=ARCH
// RUN: not tile-opt %S/../../../examples/kernels/mma_f16.mlir -t ptx 2>&1 | filecheck %s --check-prefix=UNLOWERED
// RUN: not tile-opt %S/../../../examples/kernels/mma_f16.mlir -p tile-to-llvm -t 'ptx{arch=sm_80 arch=sm_90}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not tile-opt %S/../../../examples/kernels/mma_f16.mlir -p tile-to-llvm -t 'ptx{arch=}' 2>&1 | filecheck %s --check-prefix=BADSPEC

// LLVM:      target triple = "nvptx64-nvidia-cuda"
// LLVM:      @"sa" = internal addrspace(3) global [512 x i8] undef, align 128
// LLVM:      define ptx_kernel void @"mma_f16"(ptr addrspace(1) {{.*}}, ptr addrspace(1) {{.*}}, ptr addrspace(1) {{.*}}) "nvvm.maxntid"="32,1,1"
// LLVM:      call i32 @"llvm.nvvm.read.ptx.sreg.laneid"()
// LLVM:      call void @"llvm.nvvm.cp.async.cg.shared.global.16"(ptr addrspace(3)
// LLVM:      call void @"llvm.nvvm.barrier.cta.sync.aligned.all"(i32 0)
// LLVM:      call {i32, i32, i32, i32} @"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16.p3"(ptr addrspace(3)
// LLVM:      call {float, float, float, float} @"llvm.nvvm.mma.m16n8k16.row.col.f32.f32"(<2 x half>
// LLVM:      store <2 x float> {{.*}}, ptr addrspace(1) {{.*}}, align 8

// F16:      .target sm_90
// F16:      .visible .entry mma_f16(
// F16:      .maxntid 32, 1, 1
// F16:      .shared .align 128 .b8 sa[512];
// F16:      .shared .align 128 .b8 sb[256];
// F16:      cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// F16:      cp.async.cg.shared.global [{{.*}}], [{{.*}}], 16;
// F16:      cp.async.commit_group;
// F16:      cp.async.wait_group 0;
// F16:      bar.sync 0;
// F16:      ldmatrix.sync.aligned.m8n8.x4.shared.b16
// F16:      ldmatrix.sync.aligned.m8n8.x2.shared.b16
// F16:      mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// F16:      st.global.v2.b32
// F16:      st.global.v2.b32

// BF16:     .target sm_80
// BF16:     .visible .entry mma_bf16(
// BF16:     .maxntid 32, 1, 1
// BF16:     ldmatrix.sync.aligned.m8n8.x4.shared.b16
// BF16:     ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16
// BF16:     mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// TF32:     .target sm_86
// TF32:     .visible .entry mma_tf32(
// TF32:     ld.shared.b32
// TF32:     cvt.rna.tf32.f32
// TF32:     mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32

// ARCH:      target:1:5: error: invalid options for target 'ptx': unsupported GPU architecture 'sm_70': expected one of sm_80, sm_86, sm_89, sm_90, sm_90a
// ARCH-NOT:  Traceback

// UNLOWERED: error: target 'ptx' needs a module of llvm-dialect ops, but it contains 'func.func'; lower it first, e.g. with -p tile-to-llvm
// UNLOWERED-NOT: Traceback

// An option given twice is an error (xDSL would keep the last), and a malformed -t points into its text.
// TWICE:     target:1:16: error: target 'ptx' is given option 'arch' twice
// BADSPEC:   target:1:10: error: invalid target 'ptx{arch=}': Unknown argument value
