"""A whole one-warp tensor-core kernel built from the codegen builders.

D (16x8, f32) = A (16x16, f16, row-major) · B (16x8, f16, row-major):
cp.async copies A and B to shared memory, ldmatrix.x4 reads the A fragment,
ldmatrix.x2.trans the B fragment (B is row-major, mma wants it "col"),
one mma.sync m16n8k16 multiplies, and each lane stores its four results.
Without a GPU the test checks the PTX and assembles it for sm_80 and sm_90;
with one (`gpu` mark) it also runs it against numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, VectorType, f16, f32
from xdsl.ir import SSAValue

from tilec.codegen.ptx import ptx
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N

KERNEL = "mma_16x8x16"


def _and(b: Builder, x: SSAValue, mask: int) -> SSAValue:
    return b.insert(llvm.AndOp(x, L.const_i32(b, mask))).res


def _shr(b: Builder, x: SSAValue, bits: int) -> SSAValue:
    return b.insert(llvm.LShrOp(x, L.const_i32(b, bits))).res


def _pair(b: Builder, lo: SSAValue, hi: SSAValue) -> SSAValue:
    vector = L.zero(b, VectorType(f32, [2]))
    vector = b.insert(llvm.InsertElementOp(vector, lo, L.const_i32(b, 0))).res
    return b.insert(llvm.InsertElementOp(vector, hi, L.const_i32(b, 1))).res


def build_mma_kernel() -> ModuleOp:
    """The one-warp kernel `mma_16x8x16(A, B, D)`; launch with 32 threads."""
    module = ModuleOp([])
    smem_a = K.shared_buffer(module, "smem_a", 16 * 16 * 2)
    smem_b = K.shared_buffer(module, "smem_b", 16 * 8 * 2)
    func, b = K.kernel(module, KERNEL, [L.GLOBAL_PTR] * 3, max_threads=32)
    a_global, b_global, d_global = func.body.block.args
    lane = N.thread_id(b)
    a_shared = K.shared_address(b, smem_a)
    b_shared = K.shared_address(b, smem_b)

    # Global → shared: A is 32 chunks of 16 bytes, B 32 chunks of 8 bytes.
    chunk16, chunk8 = VectorType(f16, [8]), VectorType(f16, [4])
    N.cp_async(b, L.offset(b, a_shared, lane, chunk16), L.offset(b, a_global, lane, chunk16))
    N.cp_async(
        b, L.offset(b, b_shared, lane, chunk8), L.offset(b, b_global, lane, chunk8),
        size=8, cache="ca",
    )
    N.cp_async_commit_group(b)
    N.cp_async_wait_group(b, 0)
    N.barrier(b)

    # ldmatrix: lane l points at row l % 16; for A also at column block l / 16.
    row = _and(b, lane, 15)
    a_row = L.offset(b, a_shared, row, VectorType(f16, [16]))
    a_frag = N.ldmatrix(b, L.offset(b, a_row, _shr(b, lane, 4), chunk16), count=4)
    b_frag = N.ldmatrix(b, L.offset(b, b_shared, row, chunk16), count=2, trans=True)

    zero = [L.constant(b, 0.0, f32) for _ in range(4)]
    d = N.mma_m16n8k16(b, a_frag, b_frag, zero)

    # Lane l = 4g + q holds D[g][2q..2q+1] and D[g+8][2q..2q+1].
    d_row = L.offset(b, d_global, _shr(b, lane, 2), VectorType(f32, [8]))
    top = L.offset(b, d_row, _and(b, lane, 3), VectorType(f32, [2]))
    bottom = L.offset(b, top, 8, VectorType(f32, [8]))
    N.vector_store(b, _pair(b, d[0], d[1]), top)
    N.vector_store(b, _pair(b, d[2], d[3]), bottom)
    K.ret(b)
    return module


def test_mma_kernel_emits_and_assembles(emit_and_assemble):
    texts = emit_and_assemble(
        build_mma_kernel(),
        f".visible .entry {KERNEL}(",
        ".maxntid 32",
        ".shared .align 16 .b8 smem_a[512];",
        ".shared .align 16 .b8 smem_b[256];",
        "cp.async.cg.shared.global",
        "cp.async.ca.shared.global",
        "cp.async.commit_group;",
        "cp.async.wait_group \t0;",
        "bar.sync \t0;",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "st.global.v2.b32",
    )
    for text in texts.values():
        assert text.count("st.global.v2.b32") == 2
        assert ".local" not in text  # nothing spilled to local memory


# ------------------------------------------------------------ on a GPU


def _driver():
    """cuda.bindings.driver with a current primary context, or skip."""
    try:
        from cuda.bindings import driver
    except ImportError:
        pytest.skip("cuda-python is not installed")
    try:
        (status,) = driver.cuInit(0)
    except Exception as error:  # no libcuda.so: no driver on this machine
        pytest.skip(f"no CUDA driver: {error}")
    if status != driver.CUresult.CUDA_SUCCESS:
        pytest.skip(f"no usable GPU: cuInit returned {status.name}")
    return driver


def _check(driver, result):
    status, *values = result if isinstance(result, tuple) else (result,)
    if status != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA call failed: {status.name}")
    return values[0] if len(values) == 1 else values


@pytest.mark.gpu
def test_mma_kernel_matches_numpy_on_gpu():
    driver = _driver()
    device = _check(driver, driver.cuDeviceGet(0))
    context = _check(driver, driver.cuDevicePrimaryCtxRetain(device))
    _check(driver, driver.cuCtxSetCurrent(context))
    rng = np.random.default_rng()
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 8)).astype(np.float16)
    d = np.full((16, 8), np.nan, dtype=np.float32)
    buffers = []
    try:
        module = _check(driver, driver.cuModuleLoadData(ptx(build_mma_kernel(), "sm_80").encode() + b"\0"))
        function = _check(driver, driver.cuModuleGetFunction(module, KERNEL.encode()))
        for host in (a, b, d):
            buffers.append(_check(driver, driver.cuMemAlloc(host.nbytes)))
            _check(driver, driver.cuMemcpyHtoD(buffers[-1], host.ctypes.data, host.nbytes))
        args = [np.array([int(p)], dtype=np.uint64) for p in buffers]
        params = np.array([arg.ctypes.data for arg in args], dtype=np.uint64)
        _check(driver, driver.cuLaunchKernel(function, 1, 1, 1, 32, 1, 1, 0, 0, params.ctypes.data, 0))
        _check(driver, driver.cuCtxSynchronize())
        _check(driver, driver.cuMemcpyDtoH(d.ctypes.data, buffers[2], d.nbytes))
        _check(driver, driver.cuModuleUnload(module))
    finally:
        for pointer in buffers:
            driver.cuMemFree(pointer)
        driver.cuDevicePrimaryCtxRelease(device)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(d, expected, rtol=1e-3, atol=1e-3)




def test_mma_kernel_survives_print_and_parse():
    """The kernel's IR text parses back (with our llvm extensions) to the same LLVM IR."""
    from xdsl.context import Context
    from xdsl.dialects.builtin import Builtin
    from xdsl.parser import Parser

    from tilec.codegen.ptx import llvm_ir
    from tilec.dialects.llvm_ext import load_llvm_extensions

    module = build_mma_kernel()
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(llvm.LLVM)
    load_llvm_extensions(ctx)
    parsed = Parser(ctx, str(module)).parse_module()
    parsed.verify()
    assert llvm_ir(parsed) == llvm_ir(module)
