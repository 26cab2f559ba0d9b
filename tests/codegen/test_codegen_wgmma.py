"""The warpgroup MMA builders (`tilec.passes.lowering.nvvm.wgmma*`): PTX that ptxas takes for sm_90a."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from xdsl.dialects.builtin import f32

from tilec.codegen.ptx import compile_module
from tilec.codegen.ptxas import assemble
from tilec.layout.gmma import GmmaDescriptor
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N



@pytest.mark.parametrize("n,dtype", [(8, "f16"), (128, "bf16"), (256, "f16")])
def test_wgmma_assembles_for_sm_90a(n, dtype, ptxas_path, new_kernel):
    module, func, b = new_kernel([L.SHARED_PTR, L.GLOBAL_PTR], max_threads=128)
    s, out = func.body.block.args
    high_a = GmmaDescriptor("K", 128, 0, 1024).high_bits()
    high_b = GmmaDescriptor("MN", 128, 8192, 1024).high_bits()
    da, db = N.wgmma_desc(b, s, high_a), N.wgmma_desc(b, s, high_b)
    acc = [L.zero(b, f32) for _ in range(n // 2)]
    N.wgmma_fence(b)
    acc = N.wgmma(b, da, db, acc, n=n, dtype=dtype, trans_b=True)
    N.wgmma_commit(b)
    acc = N.wgmma_wait(b, acc, 0)
    for i, v in enumerate(acc):
        N.vector_store(b, v, L.offset(b, out, L.const_i32(b, i), f32))
    K.ret(b)
    module.verify()
    compiled = compile_module(module, "sm_90a")
    parsed = str(llvm.parse_assembly(compiled.llvm_ir))  # LLVM knows the intrinsics by these names
    assert "@llvm.nvvm.wgmma.fence.sync.aligned(" in parsed and "@llvm.nvvm.wgmma.commit_group.sync.aligned(" in parsed
    text = compiled.ptx
    assert f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype}" in text
    assert "wgmma.fence.sync.aligned;" in text and "wgmma.commit_group.sync.aligned;" in text
    assert "wgmma.wait_group.sync.aligned 0;" in text
    # the wait comes before the first store of an accumulator
    assert text.index("wgmma.wait_group") < text.index("st.global")
    assert assemble(text, "sm_90a", ptxas=ptxas_path)[:4] == b"\x7fELF"


def test_wgmma_checks_its_operands(new_kernel):
    module, func, b = new_kernel([L.SHARED_PTR, f32])
    s, x = func.body.block.args
    d = N.wgmma_desc(b, s, 0)
    with pytest.raises(ValueError, match=r"wgmma.m64n8k16.f16: C needs 4 values, got 2"):
        N.wgmma(b, d, d, [x, x], n=8, dtype="f16")
    with pytest.raises(ValueError, match="dtype must be f16 or bf16"):
        N.wgmma(b, d, d, [x] * 4, n=8, dtype="tf32")
    with pytest.raises(ValueError, match="descriptor"):
        N.wgmma(b, x, d, [x] * 4, n=8, dtype="f16")
    with pytest.raises(ValueError, match="wgmma descriptor"):
        N.wgmma_desc(b, x, 0)
