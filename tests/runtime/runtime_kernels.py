"""Hand-written PTX kernels used as *test inputs* for the runtime's loader.

They are not compiler output: a bounds-checked axpy, an int64 fill (8-byte
scalar packing), a dynamic-shared-memory probe and a broken kernel for the
JIT error log.  Named uniquely so ``import runtime_kernels`` is unambiguous.
"""

from __future__ import annotations

from pathlib import Path

from tilec.runtime import Param

REPO_ROOT = Path(__file__).resolve().parents[2]

AXPY_PTX = r"""
.version 7.0
.target sm_80
.address_size 64

// out[i] = alpha * x[i] + y[i]  for i < n
.visible .entry axpy(
    .param .u64 axpy_param_x,
    .param .u64 axpy_param_y,
    .param .u64 axpy_param_out,
    .param .f32 axpy_param_alpha,
    .param .u32 axpy_param_n
)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<6>;
    .reg .f32   %f<5>;
    .reg .b64   %rd<11>;

    ld.param.u64    %rd1, [axpy_param_x];
    ld.param.u64    %rd2, [axpy_param_y];
    ld.param.u64    %rd3, [axpy_param_out];
    ld.param.f32    %f1, [axpy_param_alpha];
    ld.param.u32    %r1, [axpy_param_n];
    mov.u32         %r2, %ctaid.x;
    mov.u32         %r3, %ntid.x;
    mov.u32         %r4, %tid.x;
    mad.lo.s32      %r5, %r2, %r3, %r4;
    setp.ge.s32     %p1, %r5, %r1;
    @%p1 bra        $L_done;
    cvta.to.global.u64  %rd4, %rd1;
    cvta.to.global.u64  %rd5, %rd2;
    cvta.to.global.u64  %rd6, %rd3;
    mul.wide.s32    %rd7, %r5, 4;
    add.s64         %rd8, %rd4, %rd7;
    add.s64         %rd9, %rd5, %rd7;
    add.s64         %rd10, %rd6, %rd7;
    ld.global.f32   %f2, [%rd8];
    ld.global.f32   %f3, [%rd9];
    fma.rn.f32      %f4, %f1, %f2, %f3;
    st.global.f32   [%rd10], %f4;
$L_done:
    ret;
}
"""

AXPY_SIGNATURE = (
    Param.pointer("x", "float32", ndim=1),
    Param.pointer("y", "float32", ndim=1),
    Param.pointer("out", "float32", is_output=True, ndim=1),
    Param.scalar("alpha", "float32"),
    Param.scalar("n", "int32"),
)

FILL_I64_PTX = r"""
.version 7.0
.target sm_80
.address_size 64

// out[i] = value + i  for i < n   (value is a 64-bit scalar parameter)
.visible .entry fill_i64(
    .param .u64 fill_param_out,
    .param .u64 fill_param_value,
    .param .u32 fill_param_n
)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<6>;
    .reg .b64   %rd<8>;

    ld.param.u64    %rd1, [fill_param_out];
    ld.param.u64    %rd2, [fill_param_value];
    ld.param.u32    %r1, [fill_param_n];
    mov.u32         %r2, %ctaid.x;
    mov.u32         %r3, %ntid.x;
    mov.u32         %r4, %tid.x;
    mad.lo.s32      %r5, %r2, %r3, %r4;
    setp.ge.s32     %p1, %r5, %r1;
    @%p1 bra        $L_done;
    cvta.to.global.u64  %rd3, %rd1;
    mul.wide.s32    %rd4, %r5, 8;
    add.s64         %rd5, %rd3, %rd4;
    cvt.s64.s32     %rd6, %r5;
    add.s64         %rd7, %rd2, %rd6;
    st.global.u64   [%rd5], %rd7;
$L_done:
    ret;
}
"""

FILL_I64_SIGNATURE = (
    Param.pointer("out", "int64", is_output=True),
    Param.scalar("value", "int64"),
    Param.scalar("n", "int32"),
)

SMEM_PROBE_PTX = r"""
.version 7.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dyn_smem[];

// Thread t stores t at word (nwords - 1 - t) of dynamic shared memory, i.e.
// at the very top of the allocation; after a barrier it reads the word that
// thread (ntid - 1 - t) stored and writes that value + 1 to out[t].
// Expected: out[t] = ntid - t.
.visible .entry smem_probe(
    .param .u64 smem_param_out,
    .param .u32 smem_param_nwords
)
{
    .reg .b32   %r<12>;
    .reg .f32   %f<3>;
    .reg .b64   %rd<5>;

    ld.param.u64    %rd1, [smem_param_out];
    ld.param.u32    %r1, [smem_param_nwords];
    mov.u32         %r2, %tid.x;
    mov.u32         %r3, %ntid.x;
    mov.u32         %r4, dyn_smem;
    sub.s32         %r5, %r1, 1;
    sub.s32         %r5, %r5, %r2;
    shl.b32         %r6, %r5, 2;
    add.s32         %r7, %r4, %r6;
    cvt.rn.f32.u32  %f1, %r2;
    st.shared.f32   [%r7], %f1;
    bar.sync        0;
    sub.s32         %r8, %r1, %r3;
    add.s32         %r8, %r8, %r2;
    shl.b32         %r9, %r8, 2;
    add.s32         %r10, %r4, %r9;
    ld.shared.f32   %f1, [%r10];
    add.f32         %f2, %f1, 0f3F800000;
    cvta.to.global.u64  %rd2, %rd1;
    mul.wide.u32    %rd3, %r2, 4;
    add.s64         %rd4, %rd2, %rd3;
    st.global.f32   [%rd4], %f2;
    ret;
}
"""

SMEM_PROBE_SIGNATURE = (
    Param.pointer("out", "float32", is_output=True),
    Param.scalar("nwords", "uint32"),
)

# Uses a register that is never declared: both ptxas and the driver JIT reject it.
BROKEN_PTX = r"""
.version 7.0
.target sm_80
.address_size 64

.visible .entry broken(
    .param .u64 broken_param_p
)
{
    ld.param.u64    %rd_undeclared, [broken_param_p];
    ret;
}
"""
