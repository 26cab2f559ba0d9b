"""The warpgroup MMA builders (`tilec.passes.lowering.nvvm.wgmma*`), and `frag.wgmma_rs` through
tile-to-llvm: PTX that ptxas takes for sm_90a."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
import pytest
from xdsl.dialects.builtin import f32, i32
from xdsl.parser import Parser

from tilec.codegen.ptx import compile_module
from tilec.codegen.ptxas import assemble
from tilec.dialects.context import make_context
from tilec.layout.gmma import GmmaDescriptor
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N
from tilec.passes.registry import build_pipeline



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
    with pytest.raises(ValueError, match="dtype must be f16, bf16, e4m3, e5m2 or s8"):
        N.wgmma(b, d, d, [x] * 4, n=8, dtype="tf32")
    with pytest.raises(ValueError, match="descriptor"):
        N.wgmma(b, x, d, [x] * 4, n=8, dtype="f16")
    with pytest.raises(ValueError, match="wgmma descriptor"):
        N.wgmma_desc(b, x, 0)


def _rs_instruction(n: int, dtype: str, trans_b: bool) -> re.Pattern[str]:
    """The register-A wgmma in PTX: n/2 accumulators, four 32-bit A registers, B's 64-bit descriptor."""
    acc = ", ".join([r"%r\d+"] * (n // 2))
    return re.compile(rf"wgmma\.mma_async\.sync\.aligned\.m64n{n}k16\.f32\.{dtype}\.{dtype}\s+"
                      rf"\{{{acc}\}}, \{{%r\d+, %r\d+, %r\d+, %r\d+\}}, %rd\d+, p, 1, 1, {int(trans_b)};")


@pytest.mark.parametrize("n,dtype,trans_b", [(8, "f16", False), (64, "bf16", True), (256, "bf16", False)])
def test_wgmma_rs_assembles_for_sm_90a(n, dtype, trans_b, ptxas_path, new_kernel):
    module, func, b = new_kernel([L.SHARED_PTR, L.GLOBAL_PTR, i32, i32, i32, i32], max_threads=128)
    s, out, *a = func.body.block.args
    db = N.wgmma_desc(b, s, GmmaDescriptor("MN" if trans_b else "K", 128, 8192, 1024).high_bits())
    acc = [L.zero(b, f32) for _ in range(n // 2)]
    N.wgmma_fence(b)
    acc = N.wgmma_rs(b, a, db, acc, n=n, dtype=dtype, trans_b=trans_b)
    N.wgmma_commit(b)
    acc = N.wgmma_wait(b, acc, 0)
    for i, v in enumerate(acc):
        N.vector_store(b, v, L.offset(b, out, L.const_i32(b, i), f32))
    K.ret(b)
    module.verify()
    text = compile_module(module, "sm_90a").ptx
    assert _rs_instruction(n, dtype, trans_b).search(text), text
    assert text.index("wgmma.fence") < text.index("wgmma.mma_async") < text.index("wgmma.wait_group")
    assert assemble(text, "sm_90a", ptxas=ptxas_path)[:4] == b"\x7fELF"


def test_wgmma_rs_checks_its_operands(new_kernel):
    module, func, b = new_kernel([L.SHARED_PTR, f32, i32])
    s, x, r = func.body.block.args
    d = N.wgmma_desc(b, s, 0)
    with pytest.raises(ValueError, match=r"wgmma.m64n8k16.f16 \(register A\): A needs 4 values, got 2"):
        N.wgmma_rs(b, [r, r], d, [x] * 4, n=8, dtype="f16")
    with pytest.raises(ValueError, match=r"\(register A\): A .*i32"):
        N.wgmma_rs(b, [r, r, r, x], d, [x] * 4, n=8, dtype="f16")
    with pytest.raises(ValueError, match=r"C needs 4 values, got 3"):
        N.wgmma_rs(b, [r] * 4, d, [x] * 3, n=8, dtype="bf16")
    with pytest.raises(ValueError, match="B descriptor"):
        N.wgmma_rs(b, [r] * 4, x, [x] * 4, n=8, dtype="bf16")


def _rs_kernel(n: int) -> str:
    """A fragment-level warpgroup kernel: four A registers loaded from global memory, B's descriptor,
    fence, one ``frag.wgmma_rs`` (bf16, B MN-major), commit, wait, the accumulators stored."""
    half = n // 2
    loads = "\n".join(f"""  %c{i} = arith.constant {i} : i32
  %pa{i} = llvm.getelementptr %a[%c{i}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %a{i} = frag.load %pa{i} : !llvm.ptr<1> -> i32""" for i in range(4))
    zeros = ", ".join(["%zero"] * half)
    types = ", ".join(["f32"] * half)
    stores = "\n".join(f"""  %k{i} = arith.constant {i} : i32
  %po{i} = llvm.getelementptr %out[%k{i}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  frag.store %w#{i}, %po{i} : f32, !llvm.ptr<1>""" for i in range(half))
    high = GmmaDescriptor("MN", 128, 8192, 1024).high_bits()
    return f"""
func.func @rs(%a: !llvm.ptr<1> {{tile.dtype = i32}}, %out: !llvm.ptr<1> {{tile.dtype = f32, tile.output}}) \
attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16384>}} {{
  %s = frag.shared "b", 16384, align 1024 : !llvm.ptr<3>
{loads}
  %zero = arith.constant 0.0 : f32
  %db = frag.wgmma_desc %s, {high - (1 << 64) if high >> 63 else high} : !llvm.ptr<3>
  frag.wgmma_fence
  %y:{half} = frag.wgmma_rs "bf16" n {n} (%a0, %a1, %a2, %a3), %db trans_b({zeros}) : {types}
  frag.wgmma_commit
  %w:{half} = frag.wgmma_wait 0({", ".join(f"%y#{i}" for i in range(half))}) : {types}
{stores}
  func.return
}}"""


def test_frag_wgmma_rs_reaches_ptx(ptxas_path):
    """tile-to-llvm lowers frag.wgmma_rs (tilec.passes.lowering.gpu) to the register-A instruction."""
    ctx = make_context()
    module = Parser(ctx, _rs_kernel(64)).parse_module()
    module.verify()
    build_pipeline("tile-to-llvm").apply(ctx, module)
    text = compile_module(module, "sm_90a").ptx
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16" in text
    assert _rs_instruction(64, "bf16", True).search(text), text
    assert assemble(text, "sm_90a", ptxas=ptxas_path)[:4] == b"\x7fELF"
