"""The gaps `llvm_translate` fills in xDSL's LLVM converter, one test each."""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    Builtin,
    IntegerAttr,
    StringAttr,
    VectorType,
    bf16,
    f16,
    f32,
    i8,
    i32,
)
from xdsl.parser import Parser

from tilec.codegen.llvm_translate import translate_module, translate_type
from tilec.codegen.ptx import llvm_ir
from tilec.dialects import llvm_ext
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N

G = L.GLOBAL_PTR


def test_gep_and_store_in_shared_address_space(new_kernel, emit_and_assemble):
    """xDSL bitcasts to an addrspace-0 typed pointer here; we keep ptr addrspace(3)."""
    module, func, b = new_kernel([G])
    smem = K.shared_address(b, K.shared_buffer(module, "smem", 256))
    tid = N.thread_id(b)
    slot = L.offset(b, smem, tid, i32)
    b.insert(llvm.StoreOp(tid, slot, alignment=4))
    b.insert(llvm.StoreOp(L.const_i32(b, 8), smem, alignment=4))  # straight to the global
    N.barrier(b)
    N.vector_store(b, N.vector_load(b, slot, i32), func.body.block.args[0])
    K.ret(b)
    text = llvm_ir(module)
    assert 'getelementptr i32, ptr addrspace(3) @"smem"' in text
    assert "bitcast" not in text
    emit_and_assemble(module, "st.shared.b32", "ld.shared.b32")


def test_shared_global_keeps_alignment_and_gets_undef(new_kernel, emit_and_assemble):
    module, _, b = new_kernel([])
    K.shared_buffer(module, "tile", 1024, align=128)
    K.dynamic_shared_buffer(module, "dyn")
    smem = K.shared_address(b, "tile")
    dyn = K.shared_address(b, "dyn")
    N.vector_store(b, N.vector_load(b, dyn, VectorType(i32, [4])), smem)
    N.barrier(b)
    N.vector_store(b, N.vector_load(b, smem, i32), dyn)
    K.ret(b)
    text = llvm_ir(module)
    assert '@"tile" = internal addrspace(3) global [1024 x i8] undef, align 128' in text
    assert '@"dyn" = external addrspace(3) global [0 x i8], align 16' in text
    emit_and_assemble(
        module, ".shared .align 128 .b8 tile[1024];", ".extern .shared .align 16 .b8 dyn[];"
    )


def test_bf16_types_constants_and_casts(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G, f32])
    out, x = func.body.block.args
    y = b.insert(llvm.FPTruncOp(x, bf16)).result
    one = L.constant(b, 1.0, bf16)
    pair = L.zero(b, VectorType(bf16, [2]))
    pair = b.insert(llvm.InsertElementOp(pair, y, L.const_i32(b, 0))).res
    pair = b.insert(llvm.InsertElementOp(pair, one, L.const_i32(b, 1))).res
    N.vector_store(b, pair, out)
    back = b.insert(llvm.FPExtOp(L.extract_element(b, pair, 0), f32)).result
    N.vector_store(b, back, L.offset(b, out, 1, f32))
    K.ret(b)
    assert translate_type(VectorType(bf16, [2])).__str__() == "<2 x bfloat>"
    text = llvm_ir(module)
    assert 'fptrunc float %".2" to bfloat' in text
    assert "bfloat 0xR3F80" in text
    emit_and_assemble(module, "cvt.rn.bf16.f32")


def test_bf16_constant_rounds_to_nearest_even():
    from tilec.codegen.llvm_translate import BFloatType

    assert BFloatType().format_constant(1.0) == "0xR3F80"
    assert BFloatType().format_constant(-2.0) == "0xRC000"
    assert BFloatType().format_constant(1.0 + 2**-8) == "0xR3F80"  # tie → even
    assert BFloatType().format_constant(1.0 + 3 * 2**-8) == "0xR3F82"  # tie → even (up)
    assert BFloatType().format_constant(float("nan")) == "0xR7FC0"


def test_f16_vector_constant(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G])
    v = L.zero(b, VectorType(f16, [8]))
    N.vector_store(b, v, func.body.block.args[0])
    K.ret(b)
    emit_and_assemble(module, "st.global.v4.b32")


@pytest.mark.parametrize(
    ("cast", "source", "target", "instruction"),
    [
        (llvm_ext.FPToSIOp, f32, i32, "cvt.rzi.s32.f32"),
        (llvm_ext.FPToUIOp, f32, i32, "cvt.rzi.u32.f32"),
        (llvm_ext.UIToFPOp, i32, f32, "cvt.rn.f32.u32"),
        (llvm.SIToFPOp, i32, f32, "cvt.rn.f32.s32"),
    ],
)
def test_float_int_conversions(new_kernel, emit_and_assemble, cast, source, target, instruction):
    module, func, b = new_kernel([G, source])
    out, x = func.body.block.args
    N.vector_store(b, b.insert(cast(x, target)).result, out)
    K.ret(b)
    emit_and_assemble(module, instruction)


def test_addrspacecast_generic_to_shared(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([L.PTR])
    shared = L.addrspace_cast(b, func.body.block.args[0], L.SHARED)
    b.insert(llvm.StoreOp(L.const_i32(b, 1), shared, alignment=4))
    K.ret(b)
    assert "addrspacecast ptr" in llvm_ir(module)
    emit_and_assemble(module, "cvta.to.shared.u64", "st.shared.b32")


def test_extractelement(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G])
    g = func.body.block.args[0]
    v = N.vector_load(b, g, VectorType(f32, [4]))
    total = L.extract_element(b, v, 0)
    for i in (1, 2, 3):
        total = b.insert(llvm.FAddOp(total, L.extract_element(b, v, i))).res
    N.vector_store(b, total, g)
    K.ret(b)
    emit_and_assemble(module, "ld.global.v4.b32", "add.rn.f32")


@pytest.mark.parametrize("scope", [None, "block"])
def test_atomic_fadd(new_kernel, emit_and_assemble, scope):
    module, func, b = new_kernel([G, f32])
    g, x = func.body.block.args
    b.insert(llvm_ext.AtomicRMWOp("fadd", g, x, "monotonic", syncscope=scope, alignment=4))
    K.ret(b)
    scope_text = f' syncscope("{scope}")' if scope else ""
    assert f"atomicrmw fadd ptr addrspace(1) %\".1\", float %\".2\"{scope_text} monotonic, align 4" in llvm_ir(module)
    emit_and_assemble(module, "atom.global.add.f32")


def test_atomic_add_result_used(new_kernel, emit_and_assemble):
    """LLVM 22's NVPTX backend emits a relaxed atom whatever the ordering (see llvm_ext)."""
    module, func, b = new_kernel([G])
    g = func.body.block.args[0]
    old = b.insert(llvm_ext.AtomicRMWOp("add", g, L.const_i32(b, 1), "acq_rel")).res
    N.vector_store(b, old, L.offset(b, g, 1, i32))
    K.ret(b)
    assert "acq_rel" in llvm_ir(module)
    emit_and_assemble(module, "atom.global.add.u32")


def test_extension_ops_print_and_parse_back(new_kernel):
    module, func, b = new_kernel([G, f32])
    g, x = func.body.block.args
    v = N.vector_load(b, g, VectorType(f32, [4]))
    L.extract_element(b, v, 2)
    b.insert(llvm_ext.FPToSIOp(x, i32))
    L.addrspace_cast(b, g, 0)
    b.insert(llvm_ext.AtomicRMWOp("fmax", g, x, "seq_cst", syncscope="block", alignment=4))
    K.ret(b)
    text = str(module)
    assert 'llvm.atomicrmw fmax %0, %1 syncscope("block") seq_cst {alignment = 4 : i64}' in text
    assert "llvm.extractelement" in text and "[%" in text
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(llvm.LLVM)
    llvm_ext.load_llvm_extensions(ctx)
    llvm_ext.load_llvm_extensions(ctx)  # idempotent
    parsed = Parser(ctx, text).parse_module()
    parsed.verify()
    assert str(parsed) == text
    assert llvm_ir(parsed) == llvm_ir(module)


def test_atomicrmw_verifies_its_keywords(new_kernel):
    _, func, b = new_kernel([G, f32])
    g, x = func.body.block.args
    op = llvm_ext.AtomicRMWOp("fmul", g, x)
    with pytest.raises(Exception, match="llvm.atomicrmw: unknown operation 'fmul'"):
        op.verify()


def test_kernel_attributes_become_ptx_directives(emit_and_assemble):
    from xdsl.dialects.builtin import ModuleOp

    module = ModuleOp([])
    func, b = K.kernel(module, "bounded", [G], max_threads=(64, 2))
    func.attributes["nvvm.minctasm"] = IntegerAttr(2, i32)
    func.attributes["nvvm.maxnreg"] = IntegerAttr(128, i32)
    K.ret(b)
    text = llvm_ir(module)
    assert 'define ptx_kernel void @"bounded"' in text
    assert '"nvvm.maxntid"="64,2"' in text
    emit_and_assemble(
        module, ".visible .entry bounded(", ".maxntid 64, 2\n", ".minnctapersm 2", ".maxnreg 128"
    )


def test_device_function_is_a_func_and_can_be_called(emit_and_assemble):
    """A function without `nvvm.kernel` stays a `.func`; internal linkage is kept."""
    from xdsl.builder import Builder
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Block, Region
    from xdsl.rewriter import InsertPoint

    module = ModuleOp([])
    body = Block(arg_types=[f32])
    inner = Builder(InsertPoint.at_end(body))
    doubled = inner.insert(llvm.FAddOp(body.args[0], body.args[0])).res
    inner.insert(llvm.ReturnOp.build(operands=[doubled]))
    helper = llvm.FuncOp(
        "twice",
        llvm.LLVMFunctionType([f32], f32),
        linkage=llvm.LinkageAttr("internal"),
        body=Region(body),
        other_props={"no_inline": llvm.UnitAttr()},
    )
    module.body.block.add_op(helper)
    func, b = K.kernel(module, "k", [G, f32])
    g, x = func.body.block.args
    y = b.insert(llvm.CallOp("twice", x, return_type=f32)).returned
    N.vector_store(b, y, g)
    K.ret(b)
    text = llvm_ir(module)
    assert 'define internal float @"twice"(float %".1") noinline' in text
    ptx = emit_and_assemble(module, ".func  (.param .b32 func_retval0) twice(", "call.uni")
    assert ".visible .entry k(" in ptx["sm_80"]


def test_kernel_must_be_external():
    from xdsl.dialects.builtin import ModuleOp

    module = ModuleOp([])
    func, b = K.kernel(module, "k", [])
    K.ret(b)
    func.linkage = llvm.LinkageAttr("internal")
    with pytest.raises(ValueError, match="kernel @k must have external linkage, got internal"):
        translate_module(module)


def test_passthrough_attributes():
    from xdsl.dialects.builtin import ModuleOp

    module = ModuleOp([])
    func, b = K.kernel(module, "k", [])
    func.passthrough = ArrayAttr(
        [StringAttr("convergent"), ArrayAttr([StringAttr("nvvm.reqntid"), StringAttr("32")])]
    )
    K.ret(b)
    text = llvm_ir(module)
    assert 'convergent "nvvm.reqntid"="32"' in text


def test_conflicting_intrinsic_declarations_name_both(new_kernel):
    module, func, b = new_kernel([G, f32])
    x = func.body.block.args[1]
    N.call_intrinsic(b, "llvm.nvvm.ex2.approx.f32", [x], f32)
    N.call_intrinsic(b, "llvm.nvvm.ex2.approx.f32", [L.const_i32(b, 1)], i32)
    K.ret(b)
    with pytest.raises(ValueError, match=r"intrinsic llvm.nvvm.ex2.approx.f32 used as i32 \(i32\) but already declared as float \(float\)"):
        translate_module(module)


def test_top_level_ops_other_than_func_and_global_are_refused():
    from xdsl.dialects.builtin import ModuleOp

    module = ModuleOp([ModuleOp([])])
    with pytest.raises(NotImplementedError, match="cannot translate top-level op builtin.module"):
        translate_module(module)


def test_fma_on_bf16_vectors(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G])
    g = func.body.block.args[0]
    t = VectorType(bf16, [2])
    v = N.vector_load(b, g, t)
    r = b.insert(llvm.FMAOp(v, v, v)).res
    N.vector_store(b, r, g)
    K.ret(b)
    assert "@\"llvm.fma.v2bf16\"" in llvm_ir(module)
    emit_and_assemble(module, "fma.rn.bf16x2")


def test_i8_array_global_with_value(emit_and_assemble):
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp

    module = ModuleOp([])
    table = llvm.GlobalOp(
        llvm.LLVMArrayType(4, i8),
        "table",
        "internal",
        addr_space=4,
        constant=True,
        value=DenseIntOrFPElementsAttr.from_list(VectorType(i8, [4]), [1, 2, 3, 4]),
        alignment=4,
    )
    module.body.block.add_op(table)
    func, b = K.kernel(module, "k", [G])
    addr = b.insert(llvm.AddressOfOp("table", llvm.LLVMPointerType(L.IntAttr(4)))).result
    value = N.call_intrinsic(b, "llvm.nvvm.read.ptx.sreg.laneid", [], i32)
    slot = L.offset(b, addr, value, i8)
    byte = b.insert(llvm.LoadOp(slot, i8)).dereferenced_value
    wide = b.insert(llvm.ZExtOp(byte, i32)).res
    N.vector_store(b, wide, func.body.block.args[0])
    K.ret(b)
    assert '@"table" = internal addrspace(4) constant [4 x i8] [i8 1, i8 2, i8 3, i8 4], align 4' in llvm_ir(module)
    emit_and_assemble(module, ".const .align 4 .b8 table[4] = {1, 2, 3, 4};")





def test_elementwise_intrinsics_are_mangled_per_type(new_kernel, emit_and_assemble):
    """maxnum on f32, vector<2xf16> and vector<2xbf16> in one module: three declarations."""
    module, func, b = new_kernel([G, f32])
    g, x = func.body.block.args
    N.vector_store(b, N.fmax(b, x, N.vector_load(b, g, f32)), g)
    for out, element in ((4, f16), (5, bf16)):
        pair_type = VectorType(element, [2])
        p, q = (N.vector_load(b, L.offset(b, g, i, pair_type), pair_type) for i in (2, 3))
        N.vector_store(b, N.fmin(b, N.fmax(b, p, q), q), L.offset(b, g, out, pair_type))
    magnitude = b.insert(llvm.FAbsOp(x, f32)).result
    N.vector_store(b, magnitude, L.offset(b, g, 1, f32))
    K.ret(b)
    text = llvm_ir(module)
    for name in ("llvm.maxnum.f32", "llvm.maxnum.v2f16", "llvm.maxnum.v2bf16",
                 "llvm.minnum.v2f16", "llvm.fabs.f32"):
        assert f'@"{name}"(' in text, name
    emit_and_assemble(module, "max.f32", "max.f16x2", "max.bf16x2", "min.bf16x2", "abs.f32")
