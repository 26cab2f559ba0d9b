"""Each GPU builder in `tilec.passes.lowering.nvvm`: the PTX it yields, and bad input.

Every kernel here is emitted for sm_80 and sm_90 and assembled by ptxas
(see `emit_and_assemble` in conftest.py).
"""

from __future__ import annotations

import re

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerType, VectorType, bf16, f16, f32, i1, i16, i32

from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N

G = L.GLOBAL_PTR
SHARED_PTR = L.SHARED_PTR


def _store_i32(b, value, out, index=0):
    N.vector_store(b, value, L.offset(b, out, index, i32))


@pytest.mark.parametrize(
    ("builder", "register"),
    [
        (N.thread_id, "%tid.x"),
        (N.block_id, "%ctaid.x"),
        (N.block_dim, "%ntid.x"),
        (N.grid_dim, "%nctaid.x"),
    ],
)
def test_special_registers(new_kernel, emit_and_assemble, builder, register):
    module, func, b = new_kernel([G])
    out = func.body.block.args[0]
    for index, dim in enumerate("xyz"):
        _store_i32(b, builder(b, dim), out, index)
    K.ret(b)
    emit_and_assemble(module, register, register[:-1] + "y", register[:-1] + "z")


def test_lane_and_warp_id(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G])
    out = func.body.block.args[0]
    _store_i32(b, N.lane_id(b), out, 0)
    _store_i32(b, N.warp_id(b), out, 1)
    K.ret(b)
    ptx = emit_and_assemble(module, "%laneid", "%tid.x")
    assert "shr.u32" in ptx["sm_80"]


def test_bad_dimension_names_the_register(new_kernel):
    _, _, b = new_kernel([])
    with pytest.raises(ValueError, match=r"%tid: dimension must be x, y or z, got 'w'"):
        N.thread_id(b, "w")


def test_barrier(new_kernel, emit_and_assemble):
    module, _, b = new_kernel([])
    N.barrier(b)
    K.ret(b)
    emit_and_assemble(module, "bar.sync \t0")


def _shared_kernel(new_kernel, size=512):
    module, func, b = new_kernel([G], max_threads=32)
    smem = K.shared_buffer(module, "smem", size)
    lane = N.thread_id(b)
    row_addr = L.offset(b, K.shared_address(b, smem), lane, VectorType(i32, [4]))
    return module, func.body.block.args[0], b, row_addr


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix(new_kernel, emit_and_assemble, count, trans):
    module, out, b, addr = _shared_kernel(new_kernel)
    regs = N.ldmatrix(b, addr, count=count, trans=trans)
    assert len(regs) == count and all(r.type == i32 for r in regs)
    for index, reg in enumerate(regs):
        _store_i32(b, reg, out, index)
    K.ret(b)
    layout = ".trans" if trans else ""
    emit_and_assemble(module, f"ldmatrix.sync.aligned.m8n8.x{count}{layout}.shared.b16")


def test_ldmatrix_rejects_global_pointer_and_bad_count(new_kernel):
    _, func, b = new_kernel([G])
    with pytest.raises(ValueError, match=r"ldmatrix: address must be a !llvm.ptr<3> pointer, got !llvm.ptr<1>"):
        N.ldmatrix(b, func.body.block.args[0])
    with pytest.raises(ValueError, match="ldmatrix: count must be 1, 2 or 4, got 3"):
        N.ldmatrix(b, func.body.block.args[0], count=3)


def _accumulator(b, value=0.0):
    return [L.constant(b, value, f32) for _ in range(4)]


def _store_f32s(b, values, out):
    for index, value in enumerate(values):
        N.vector_store(b, value, L.offset(b, out, index, f32))


@pytest.mark.parametrize(
    ("dtype", "instruction"),
    [
        ("f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
        ("bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
    ],
)
def test_mma_m16n8k16(new_kernel, emit_and_assemble, dtype, instruction):
    module, out, b, addr = _shared_kernel(new_kernel)
    a = N.ldmatrix(b, addr, count=4)
    bm = N.ldmatrix(b, addr, count=2, trans=True)
    d = N.mma_m16n8k16(b, a, bm, _accumulator(b), dtype=dtype)
    _store_f32s(b, d, out)
    K.ret(b)
    emit_and_assemble(module, instruction)


def test_mma_m16n8k16_takes_packed_vectors(new_kernel, emit_and_assemble):
    """f16 registers may come as vector<2xf16>, bf16 ones as vector<2xbf16>."""
    module, func, b = new_kernel([G, f32])
    out, x = func.body.block.args
    h = N.pack_f16x2(b, x, x)
    d = N.mma_m16n8k16(b, [h] * 4, [h] * 2, _accumulator(b))
    hb = N.pack_bf16x2(b, d[0], d[1])
    d = N.mma_m16n8k16(b, [hb] * 4, [hb] * 2, d, dtype="bf16")
    _store_f32s(b, d, out)
    K.ret(b)
    emit_and_assemble(module, "f32.f16.f16.f32", "f32.bf16.bf16.f32")


def test_mma_m16n8k8_tf32(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G, f32])
    out, x = func.body.block.args
    t = N.round_tf32(b, x)
    d = N.mma_m16n8k8_tf32(b, [t] * 4, [x] * 2, _accumulator(b))
    _store_f32s(b, d, out)
    K.ret(b)
    emit_and_assemble(
        module, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "cvt.rna.tf32.f32"
    )


def test_mma_checks_fragment_sizes_and_types(new_kernel):
    _, func, b = new_kernel([G, f32])
    x = func.body.block.args[1]
    acc = _accumulator(b)
    with pytest.raises(ValueError, match=r"mma.sync.m16n8k16.f16: A needs 4 values, got 3"):
        N.mma_m16n8k16(b, [x] * 3, [x] * 2, acc)
    with pytest.raises(
        ValueError, match=r"mma.sync.m16n8k16.f16: A must be vector<2xf16> or i32, got f32"
    ):
        N.mma_m16n8k16(b, [x] * 4, [x] * 2, acc)
    i = L.const_i32(b, 0)
    with pytest.raises(ValueError, match=r"mma.sync.m16n8k16.bf16: C must be f32, got i32"):
        N.mma_m16n8k16(b, [i] * 4, [i] * 2, [i] * 4, dtype="bf16")
    with pytest.raises(ValueError, match="dtype must be f16 or bf16, got 'f8'"):
        N.mma_m16n8k16(b, [i] * 4, [i] * 2, acc, dtype="f8")


@pytest.mark.parametrize(
    ("cache", "size", "zero_fill", "instruction"),
    [
        ("cg", 16, False, "cp.async.cg.shared.global [%rd{}], [%rd{}], 16;"),
        ("cg", 16, True, "cp.async.cg.shared.global [%rd{}], [%rd{}], 16, %r{};"),
        ("ca", 4, False, "cp.async.ca.shared.global [%rd{}], [%rd{}], 4;"),
        ("ca", 8, True, "cp.async.ca.shared.global [%rd{}], [%rd{}], 8, %r{};"),
        ("ca", 16, False, "cp.async.ca.shared.global [%rd{}], [%rd{}], 16;"),
    ],
)
def test_cp_async(new_kernel, emit_and_assemble, cache, size, zero_fill, instruction):
    module, func, b = new_kernel([G])
    smem = K.shared_buffer(module, "smem", 32 * size)
    lane = N.thread_id(b)
    dst = L.offset(b, K.shared_address(b, smem), lane, VectorType(i32, [size // 4]))
    src = L.offset(b, func.body.block.args[0], lane, VectorType(i32, [size // 4]))
    src_size = lane if zero_fill else None  # any i32 ≤ size in real code
    N.cp_async(b, dst, src, size=size, cache=cache, src_size=src_size)
    N.cp_async_commit_group(b)
    N.cp_async_wait_group(b, 1)
    N.cp_async_wait_all(b)
    K.ret(b)
    ptx = emit_and_assemble(
        module, "cp.async.commit_group;", "cp.async.wait_group \t1;", "cp.async.wait_all;"
    )
    prefix = instruction.split(" [")[0] + " ["
    line = next(l.strip() for l in ptx["sm_80"].splitlines() if prefix in l)
    assert line.endswith(f", {size};") != zero_fill, line


def test_cp_async_l2_prefetch_is_inline_asm(new_kernel, emit_and_assemble):
    module, func, b = new_kernel([G])
    smem = K.shared_buffer(module, "smem", 512)
    lane = N.thread_id(b)
    dst = L.offset(b, K.shared_address(b, smem), lane, VectorType(i32, [4]))
    src = L.offset(b, func.body.block.args[0], lane, VectorType(i32, [4]))
    N.cp_async(b, dst, src, l2_prefetch=128, src_size=L.const_i32(b, 16))
    N.cp_async_commit_group(b)
    K.ret(b)
    emit_and_assemble(module, "cp.async.cg.shared.global.L2::128B [%rd")


def test_cp_async_rejects_bad_arguments(new_kernel):
    module, func, b = new_kernel([G])
    smem = K.shared_address(b, K.shared_buffer(module, "smem", 64))
    g = func.body.block.args[0]
    with pytest.raises(ValueError, match="cp.async.cg: size must be 16 bytes, got 8"):
        N.cp_async(b, smem, g, size=8, cache="cg")
    with pytest.raises(ValueError, match="cp.async.ca: size must be 4, 8 or 16 bytes, got 2"):
        N.cp_async(b, smem, g, size=2, cache="ca")
    with pytest.raises(ValueError, match=r"cp.async.cg: destination must be a !llvm.ptr<3>"):
        N.cp_async(b, g, g)
    with pytest.raises(ValueError, match=r"cp.async.cg: source must be a !llvm.ptr<1>"):
        N.cp_async(b, smem, smem)
    with pytest.raises(ValueError, match="cp.async.wait_group: pending must be an int 0..7"):
        N.cp_async_wait_group(b, 9)


@pytest.mark.parametrize("mode", ["idx", "bfly", "up", "down"])
@pytest.mark.parametrize("value_type", [i32, f32])
def test_shfl_sync(new_kernel, emit_and_assemble, mode, value_type):
    module, func, b = new_kernel([G, value_type])
    out, x = func.body.block.args
    y = N.shfl_sync(b, x, 1 if mode != "idx" else N.thread_id(b), mode=mode)
    assert y.type == value_type
    N.vector_store(b, y, out)
    K.ret(b)
    emit_and_assemble(module, f"shfl.sync.{mode}.b32")


def test_shfl_sync_rejects_f16(new_kernel):
    _, _, b = new_kernel([])
    h = L.constant(b, 1.0, f16)
    with pytest.raises(ValueError, match="shfl.sync.bfly: value must be i32 or f32, got f16"):
        N.shfl_sync(b, h, 1, mode="bfly")


@pytest.mark.parametrize(("ftz", "instruction"), [(False, "ex2.approx.f32"), (True, "ex2.approx.ftz.f32")])
def test_ex2_approx(new_kernel, emit_and_assemble, ftz, instruction):
    module, func, b = new_kernel([G, f32])
    out, x = func.body.block.args
    N.vector_store(b, N.ex2_approx(b, x, ftz=ftz), out)
    K.ret(b)
    emit_and_assemble(module, instruction)


@pytest.mark.parametrize(
    ("pack", "instruction", "element"),
    [(N.pack_f16x2, "cvt.rn.f16x2.f32", f16), (N.pack_bf16x2, "cvt.rn.bf16x2.f32", bf16)],
)
def test_pack_puts_lo_in_element_0(new_kernel, emit_and_assemble, pack, instruction, element):
    module, func, b = new_kernel([G, f32, f32])
    out, lo, hi = func.body.block.args
    packed = pack(b, lo, hi)
    assert packed.type == VectorType(element, [2])
    N.vector_store(b, packed, out)
    K.ret(b)
    ptx = emit_and_assemble(module, instruction)["sm_80"]
    # PTX puts its first source in the upper half: hi (param 2) before lo (param 1).
    line = next(l for l in ptx.splitlines() if instruction in l)
    regs = {p: r for r, p in _param_registers(ptx).items()}
    assert line.split()[-2:] == [f"{regs['k_param_2']},", f"{regs['k_param_1']};"], line


def _param_registers(ptx: str) -> dict[str, str]:
    """{register: parameter} for `ld.param.b32 %r1, [k_param_1];` lines."""
    found = {}
    for line in ptx.splitlines():
        if "ld.param" in line:
            _, reg, param = line.replace(",", " ").replace("[", " ").replace("]", " ").split()[:3]
            found[reg] = param
    return found


def test_pack_rejects_non_f32(new_kernel):
    _, _, b = new_kernel([])
    h = L.constant(b, 1.0, f16)
    with pytest.raises(ValueError, match="cvt.rn.f16x2.f32: lo must be f32, got f16"):
        N.pack_f16x2(b, h, h)


@pytest.mark.parametrize(("fn", "instruction"), [(N.fmax, "max.f32"), (N.fmin, "min.f32")])
def test_fmax_fmin(new_kernel, emit_and_assemble, fn, instruction):
    module, func, b = new_kernel([G, f32, f32])
    out, x, y = func.body.block.args
    N.vector_store(b, fn(b, x, y), out)
    K.ret(b)
    emit_and_assemble(module, instruction)


def test_fmax_rejects_mixed_types(new_kernel):
    _, func, b = new_kernel([G, f32])
    x = func.body.block.args[1]
    with pytest.raises(ValueError, match="max: y must be f32, got i32"):
        N.fmax(b, x, L.const_i32(b, 1))


@pytest.mark.parametrize(
    ("value_type", "load", "store"),
    [
        (i32, "ld.global.b32", "st.global.b32"),
        (VectorType(f32, [2]), "ld.global", "st.global.b64"),  # LLVM may load the pair as one b64
        (VectorType(i32, [4]), "ld.global.v4.b32", "st.global.v4.b32"),
        (VectorType(f16, [8]), "ld.global.v4.b32", "st.global.v4.b32"),
        (VectorType(bf16, [8]), "ld.global.v4.b32", "st.global.v4.b32"),
    ],
)
def test_predicated_vector_load_store(new_kernel, emit_and_assemble, value_type, load, store):
    module, func, b = new_kernel([G, G, i32])
    src, dst, n = func.body.block.args
    tid = N.thread_id(b)
    in_bounds = L.icmp(b, "ult", tid, n)
    value = N.vector_load(b, L.offset(b, src, tid, value_type), value_type, pred=in_bounds)
    assert value.type == value_type
    N.vector_store(b, value, L.offset(b, dst, tid, value_type), pred=in_bounds)
    K.ret(b)
    ptx = emit_and_assemble(module, load, store)["sm_90"]
    # the store is one predicated instruction (the load goes under a branch)
    assert re.search(rf"@%p\d+ {re.escape(store)} ", ptx)


@pytest.mark.parametrize(
    ("value_type", "space", "shape"),
    [(f16, SHARED_PTR, "b16"), (bf16, G, "b16"), (i16, G, "b16"), (VectorType(f16, [2]), SHARED_PTR, "b32"),
     (VectorType(f16, [4]), G, "b64"), (VectorType(bf16, [8]), SHARED_PTR, "v4.b32")],
)
def test_predicated_store_any_size(new_kernel, emit_and_assemble, value_type, space, shape):
    """2-byte elements too (the element paths of copies), to global and shared memory: one
    predicated PTX store, no branch."""
    module, func, b = new_kernel([space, space, i32])
    src, dst, n = func.body.block.args
    in_bounds = L.icmp(b, "ult", N.thread_id(b), n)
    value = b.insert(llvm.LoadOp(src, value_type)).dereferenced_value
    N.predicated_store(b, value, dst, in_bounds)
    K.ret(b)
    state = "shared" if space == SHARED_PTR else "global"
    ptx = emit_and_assemble(module, f"st.{state}.{shape}")["sm_90"]
    assert re.search(rf"@%p\d+ st.{state}.{shape} ", ptx) and "bra" not in ptx


def test_predicated_load_keeps_following_ops(new_kernel, emit_and_assemble):
    """Ops already after the insertion point end up after the load."""
    module, func, b = new_kernel([G, i32])
    out, n = func.body.block.args
    K.ret(b)
    from xdsl.rewriter import InsertPoint

    b.insertion_point = InsertPoint.before(func.body.block.last_op)
    tid = N.thread_id(b)
    pred = L.icmp(b, "ult", tid, n)
    value = N.vector_load(b, out, i32, pred=pred, other=L.const_i32(b, -1))
    N.vector_store(b, value, L.offset(b, out, 1, i32))
    assert len(func.body.blocks) == 3
    assert isinstance(func.body.blocks[-1].last_op, llvm.ReturnOp)
    emit_and_assemble(module, "ld.global.b32", "st.global.b32")


def test_vector_access_rejects_bad_sizes_and_predicates(new_kernel):
    _, func, b = new_kernel([G])
    g = func.body.block.args[0]
    with pytest.raises(ValueError, match=r"ld.vector: type must be 4, 8 or 16 bytes, got i16 \(2 bytes\)"):
        N.vector_load(b, g, i16)
    with pytest.raises(ValueError, match=r"ld.vector: type must be 4, 8 or 16 bytes, got vector<16xf32> \(64 bytes\)"):
        N.vector_load(b, g, VectorType(f32, [16]))
    with pytest.raises(ValueError, match="ld.vector: predicate must be i1, got i32"):
        N.vector_load(b, g, i32, pred=L.const_i32(b, 1))
    with pytest.raises(ValueError, match=r"st.predicated: type must be 2, 4, 8 or 16 bytes, got i8 \(1 bytes\)"):
        N.predicated_store(b, L.constant(b, 1, IntegerType(8)), g, L.constant(b, 1, i1))
    with pytest.raises(ValueError, match=r"st.predicated: address must be a !llvm.ptr<1> or !llvm.ptr<3> pointer"):
        N.predicated_store(b, L.const_i32(b, 1), L.const_i32(b, 0), L.constant(b, 1, i1))
    with pytest.raises(ValueError, match=r"st.vector: address must be a !llvm.ptr<1> or !llvm.ptr<3> pointer"):
        N.vector_store(b, L.const_i32(b, 1), L.constant(b, 0, i1))


def test_inline_asm_checks_constraints(new_kernel):
    _, _, b = new_kernel([])
    x = L.const_i32(b, 1)
    with pytest.raises(ValueError, match="declare 1 outputs and 1 inputs, expected 0 and 1"):
        N.inline_asm(b, "mov.b32 $0, $1;", "=r,r", [x])
    y = N.inline_asm(b, "mov.b32 $0, $1;", "=r,r", [x], i32, side_effects=False)
    assert y is not None and y.type == i32
