"""tilec.ir.fast (and the constructors of tilec's own ops built on it, in tilec.dialects.frag_fast and
tilec.dialects.llvm_ext): each makes exactly the op its `__init__` makes."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith, func, llvm, math, scf, vector
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    VectorType,
    bf16,
    f16,
    f32,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

from tilec.dialects import frag_fast, llvm_ext
from tilec.ir import fast as F

V4I32 = VectorType(i32, [4])
V2F16 = VectorType(f16, [2])
V4F32 = VectorType(f32, [4])
GLOBAL_PTR = llvm.LLVMPointerType(IntAttr(1))
SHARED_PTR = llvm.LLVMPointerType(IntAttr(3))

BLOCK = Block(arg_types=[i1, i8, i16, i32, i64, f16, bf16, f32, V4I32, V2F16, V4F32, GLOBAL_PTR, SHARED_PTR,
                         IndexType()])
ARG = {str(a.type): a for a in BLOCK.args}


def value(t) -> object:
    return ARG[str(t)]


def assert_same(fast: Operation, slow: Operation) -> None:
    assert type(fast) is type(slow)
    assert list(fast.operands) == list(slow.operands)
    assert [r.type for r in fast.results] == [r.type for r in slow.results]
    assert list(fast.properties.items()) == list(slow.properties.items())
    assert fast.attributes == slow.attributes
    assert list(fast.successors) == list(slow.successors)
    assert fast.location == slow.location
    assert not fast.regions and not slow.regions
    assert str(fast) == str(slow)


def _subclasses(*bases):
    found = {c for base in bases for c in base.__subclasses__() if getattr(c, "name", "").startswith("llvm.")}
    return sorted(found, key=lambda c: c.name)


INT_BINARY = _subclasses(
    llvm.ArithmeticBinOpOverflow, llvm.ArithmeticBinOpExact, llvm.ArithmeticBinOpDisjoint, llvm.ArithmeticBinOperation
)
FLOAT_BINARY = _subclasses(llvm.AbstractFloatArithOp)


def test_the_families_are_found():
    names = {c.name for c in INT_BINARY + FLOAT_BINARY}
    assert {"llvm.add", "llvm.and", "llvm.or", "llvm.udiv", "llvm.lshr", "llvm.fadd", "llvm.fmul"} <= names


@pytest.mark.parametrize("op_type", INT_BINARY, ids=lambda c: c.name)
@pytest.mark.parametrize("t", [i32, i64, V4I32], ids=str)
def test_int_binary(op_type, t):
    assert_same(F.binary_op(op_type, value(t), value(t)), op_type(value(t), value(t)))


@pytest.mark.parametrize("op_type", FLOAT_BINARY + [llvm.VectorFMaxOp, llvm.VectorFMinOp], ids=lambda c: c.name)
@pytest.mark.parametrize("t", [f32, V2F16], ids=str)
def test_float_binary(op_type, t):
    assert_same(F.binary_op(op_type, value(t), value(t)), op_type(value(t), value(t)))


CASTS = [
    (llvm.SExtOp, i32, i64),
    (llvm.ZExtOp, i32, i64),
    (llvm.TruncOp, i64, i32),
    (llvm.FPExtOp, f16, f32),
    (llvm.FPTruncOp, f32, bf16),
    (llvm.BitcastOp, V2F16, i32),
    (llvm.SIToFPOp, i32, f32),
    (llvm.PtrToIntOp, GLOBAL_PTR, i64),
    (llvm_ext.UIToFPOp, i32, f32),
    (llvm_ext.FPToSIOp, f32, i32),
    (llvm_ext.FPToUIOp, f32, i32),
    (llvm_ext.AddrSpaceCastOp, SHARED_PTR, llvm.LLVMPointerType()),
]


@pytest.mark.parametrize("op_type, source, target", CASTS, ids=lambda x: getattr(x, "name", str(x)))
def test_casts(op_type, source, target):
    assert_same(F.cast_op(op_type, value(source), target), op_type(value(source), target))


@pytest.mark.parametrize(
    "attr, t",
    [
        (IntegerAttr(5, i32), i32),
        (IntegerAttr(-1, i64), i64),
        (FloatAttr(1.5, f32), f32),
        (DenseIntOrFPElementsAttr.from_list(V2F16, [0.0, 0.0]), V2F16),
    ],
    ids=str,
)
def test_constant(attr, t):
    assert_same(F.constant_op(attr, t), llvm.ConstantOp(attr, t))


def test_int_attr_is_made_once_and_truncates():
    assert F.int_attr(7, i32) is F.int_attr(7, i32)
    assert F.int_attr(0xFFFFFFFF, i32) == IntegerAttr(0xFFFFFFFF, i32, truncate_bits=True)


@pytest.mark.parametrize("predicate", [f.value for f in llvm.ICmpPredicateFlag])
@pytest.mark.parametrize("t", [i32, V4I32], ids=str)
def test_icmp(predicate, t):
    flag = IntegerAttr(llvm.ICmpPredicateFlag(predicate).to_int(), i64)
    assert_same(F.icmp_op(predicate, value(t), value(t)), llvm.ICmpOp(value(t), value(t), flag))


def test_select():
    assert_same(F.select_op(value(i1), value(f32), value(f32)), llvm.SelectOp(value(i1), value(f32), value(f32)))


@pytest.mark.parametrize("args", [(), (i32,), (i32, f32)], ids=str)
def test_br(args):
    dest = Block()
    values = [value(t) for t in args]
    assert_same(F.br_op(dest, values), llvm.BrOp(dest, *values))


@pytest.mark.parametrize(
    "then_args, else_args", [((), ()), ((), (i32,)), ((f32, i32), ()), ((i64,), (i32, f32))], ids=str
)
def test_cond_br(then_args, else_args):
    then_block, else_block = Block(), Block()
    then_values, else_values = [value(t) for t in then_args], [value(t) for t in else_args]
    assert_same(
        F.cond_br_op(value(i1), then_block, then_values, else_block, else_values),
        llvm.CondBrOp(value(i1), then_block, then_values, else_block, else_values),
    )


@pytest.mark.parametrize("alignment", [None, 2, 16])
def test_load_store(alignment):
    ptr = value(GLOBAL_PTR)
    assert_same(F.load_op(ptr, V4I32, alignment), llvm.LoadOp(ptr, V4I32, alignment=alignment))
    assert_same(F.store_op(value(f16), ptr, alignment), llvm.StoreOp(value(f16), ptr, alignment=alignment))


def test_extract_value():
    struct_type = llvm.LLVMStructType.from_type_list([f32] * 4)
    struct = Block(arg_types=[struct_type]).args[0]
    for i in range(4):
        slow = llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [i]), struct, f32)
        assert_same(F.extract_value_op(struct, i, f32), slow)


def test_insert_and_extract_element():
    vec, index = value(V4F32), value(i32)
    assert_same(F.insert_element_op(vec, value(f32), index), llvm.InsertElementOp(vec, value(f32), index))
    assert_same(llvm_ext.extract_element_op(vec, index), llvm_ext.ExtractElementOp(vec, index))
    with pytest.raises(ValueError, match="expected a vector operand"):
        llvm_ext.extract_element_op(value(f32), index)


@pytest.mark.parametrize(
    "args, results", [((), ()), ((), (i32,)), ((SHARED_PTR,), (V4I32,)), ((i32, f32, i32), ())], ids=str
)
def test_call_intrinsic(args, results):
    values = [value(t) for t in args]
    name = "llvm.nvvm.some.intrinsic"
    assert_same(F.call_intrinsic_op(name, values, results), llvm.CallIntrinsicOp(name, values, list(results)))


@pytest.mark.parametrize("predicate", [f.value for f in llvm.FCmpPredicateFlag])
def test_fcmp(predicate):
    assert_same(F.fcmp_op(predicate, value(f32), value(f32)), llvm.FCmpOp(value(f32), value(f32), predicate))


FLOAT_UNARY = [llvm.FNegOp, llvm.FAbsOp, llvm.FSqrtOp, llvm.FExp2Op, llvm.FCeilOp, llvm.FFloorOp]


@pytest.mark.parametrize("op_type", FLOAT_UNARY, ids=lambda c: c.name)
@pytest.mark.parametrize("t", [f32, V2F16], ids=str)
def test_float_unary(op_type, t):
    x = value(t)
    slow = op_type(x, x.type) if op_type is llvm.FAbsOp else op_type(x)
    assert_same(F.float_unary_op(op_type, x), slow)


@pytest.mark.parametrize("t", [f32, V2F16], ids=str)
def test_fma(t):
    x = value(t)
    assert_same(F.fma_op(x, x, x), llvm.FMAOp(x, x, x))


@pytest.mark.parametrize("t", [i32, V2F16, SHARED_PTR], ids=str)
def test_undef_and_zero(t):
    assert_same(F.undef_op(t), llvm.UndefOp(t))
    assert_same(F.zero_op(t), llvm.ZeroOp.build(result_types=[t]))


def test_addressof():
    assert_same(F.addressof_op("k_smem", SHARED_PTR), llvm.AddressOfOp("k_smem", SHARED_PTR))


@pytest.mark.parametrize("t", [None, i32, f32], ids=str)
def test_return(t):
    v = None if t is None else value(t)
    assert_same(F.return_op(v), llvm.ReturnOp(v))


@pytest.mark.parametrize("args, result", [((), None), ((i32,), None), ((i32, f32), f32), ((GLOBAL_PTR,), i64)],
                         ids=str)
def test_call(args, result):
    values = [value(t) for t in args]
    assert_same(F.call_op("device_fn", values, result), llvm.CallOp("device_fn", *values, return_type=result))


@pytest.mark.parametrize("args, results, side_effects", [((), (), True), ((i32, i1), (), True), ((f32,), (f32,), False),
                                                         ((i64, i64), (llvm.LLVMStructType.from_type_list([f32] * 2),),
                                                          True)], ids=str)
def test_inline_asm(args, results, side_effects):
    values = [value(t) for t in args]
    constraints = ",".join(["=f"] * len(results) + ["r"] * len(values))
    slow = llvm.InlineAsmOp("mov.b32 $0, $1;", constraints, values, list(results) or None,
                            has_side_effects=side_effects)
    assert_same(F.inline_asm_op("mov.b32 $0, $1;", constraints, values, results, has_side_effects=side_effects), slow)


# ---------------------------------------------------------------- arith, math, vector, scf, func (tile-distribute)

ARITH_INT_BINARY = sorted(
    {c for base in (arith.SignlessIntegerBinaryOperation, arith.SignlessIntegerBinaryOperationWithOverflow)
     for c in base.__subclasses__() if getattr(c, "name", "").startswith("arith.")},
    key=lambda c: c.name,
)


def test_the_arith_families_are_found():
    names = {c.name for c in ARITH_INT_BINARY}
    assert {"arith.addi", "arith.subi", "arith.muli", "arith.andi", "arith.xori", "arith.shli", "arith.shrui",
            "arith.divui", "arith.remui", "arith.minui", "arith.maxsi"} <= names


@pytest.mark.parametrize("op_type", ARITH_INT_BINARY, ids=lambda c: c.name)
@pytest.mark.parametrize("t", [i1, i32, i64, IndexType(), V4I32], ids=str)
def test_arith_int_binary(op_type, t):
    a = value(t)
    assert_same(F.arith_binary_op(op_type, a, a), op_type(a, a))


ARITH_FLOAT_BINARY = sorted(
    (c for c in arith.FloatingPointLikeBinaryOperation.__subclasses__() if getattr(c, "name", "").startswith("arith.")),
    key=lambda c: c.name,
)


def test_the_arith_float_family_is_found():
    names = {c.name for c in ARITH_FLOAT_BINARY}
    assert {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.maxnumf"} <= names


@pytest.mark.parametrize("op_type", ARITH_FLOAT_BINARY, ids=lambda c: c.name)
@pytest.mark.parametrize("t", [f16, f32, V2F16], ids=str)
def test_arith_float_binary(op_type, t):
    a = value(t)
    assert_same(F.arith_binary_op(op_type, a, a), op_type(a, a))


def test_arith_binary_falls_back_to_init():
    a = value(f32)  # an op outside arith's two families
    assert_same(F.arith_binary_op(math.CopySignOp, a, a), math.CopySignOp(a, a))


MATH_UNARY = sorted(math.FloatingPointLikeUnaryMathOperation.__subclasses__(), key=lambda c: c.name)


@pytest.mark.parametrize("op_type", MATH_UNARY, ids=lambda c: c.name)
@pytest.mark.parametrize("t", [f32, V2F16], ids=str)
def test_math_unary(op_type, t):
    assert_same(F.math_unary_op(op_type, value(t)), op_type(value(t)))


@pytest.mark.parametrize("predicate", ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"])
@pytest.mark.parametrize("t", [i32, i64, IndexType()], ids=str)
def test_cmpi(predicate, t):
    assert_same(F.cmpi_op(predicate, value(t), value(t)), arith.CmpiOp(value(t), value(t), predicate))


@pytest.mark.parametrize(
    "op_type, source, target",
    [(arith.IndexCastOp, IndexType(), i32), (arith.IndexCastOp, i64, IndexType()), (arith.ExtSIOp, i32, i64),
     (arith.TruncIOp, i64, i32), (arith.ExtFOp, f16, f32), (arith.ExtFOp, bf16, f32), (arith.TruncFOp, f32, f16),
     (arith.TruncFOp, f32, bf16)],
    ids=str,
)
def test_arith_casts(op_type, source, target):
    assert_same(F.arith_cast_op(op_type, value(source), target), op_type(value(source), target))


@pytest.mark.parametrize(
    "attr", [IntegerAttr(5, i32), IntegerAttr(-1, i64), IntegerAttr(7, IndexType()), IntegerAttr(1, i1),
             FloatAttr(1.5, f32), FloatAttr(0.0, f16)],
    ids=str,
)
def test_arith_constant(attr):
    assert_same(F.arith_constant_op(attr), arith.ConstantOp(attr))


@pytest.mark.parametrize("t, zeros", [(VectorType(i32, [1]), [0]), (V2F16, [0.0, 0.0]), (V4F32, [0.0] * 4)], ids=str)
def test_arith_dense_constant(t, zeros):
    attr = DenseIntOrFPElementsAttr.from_list(t, zeros)
    assert_same(F.arith_constant_op(attr), arith.ConstantOp(attr))


def test_index_attr_is_made_once_and_checks_its_range():
    assert F.index_attr(7, IndexType()) is F.index_attr(7, IndexType())
    assert F.index_attr(-3, i32) == IntegerAttr(-3, i32)
    with pytest.raises(VerifyException):
        F.index_attr(1 << 40, i32)


def test_arith_select():
    assert_same(F.arith_select_op(value(i1), value(i32), value(i32)),
                arith.SelectOp(value(i1), value(i32), value(i32)))


@pytest.mark.parametrize("elem, index_type", [(f16, i32), (i8, i64), (f32, i64)], ids=str)
@pytest.mark.parametrize("ptr_type", [GLOBAL_PTR, SHARED_PTR], ids=str)
def test_gep(elem, index_type, ptr_type):
    ptr, index = value(ptr_type), value(index_type)
    slow = llvm.GEPOp.from_mixed_indices(ptr, [index], elem, result_type=ptr.type)
    assert_same(F.gep_op(ptr, index, elem, ptr.type), slow)


@pytest.mark.parametrize("index", [0, 8, -3])
def test_gep_constant_index(index):
    ptr = value(SHARED_PTR)
    slow = llvm.GEPOp.from_mixed_indices(ptr, [index], f16, result_type=ptr.type)
    assert_same(F.gep_op(ptr, index, f16, ptr.type), slow)


@pytest.mark.parametrize("position", [0, 3])
def test_vector_insert_extract(position):
    vec = value(V4I32)
    assert_same(F.vector_insert_op(value(i32), vec, position), vector.InsertOp(value(i32), vec, [position]))
    assert_same(F.vector_extract_op(vec, position, i32), vector.ExtractOp(vec, [position], i32))


@pytest.mark.parametrize("source, target", [(VectorType(i32, [1]), V2F16), (V2F16, VectorType(i32, [1])),
                                            (V4F32, V4I32)], ids=str)
def test_vector_bitcast(source, target):
    src = Block(arg_types=[source]).args[0]
    assert_same(F.vector_bitcast_op(src, target), vector.BitcastOp(src, target))


@pytest.mark.parametrize("types", [(), (i32,), (i32, f32)], ids=str)
def test_func_return(types):
    values = [value(t) for t in types]
    assert_same(F.func_return_op(values), func.ReturnOp(*values))


@pytest.mark.parametrize("types", [(), (i32,), (i32, f32)], ids=str)
def test_scf_yield(types):
    values = [value(t) for t in types]
    assert_same(F.scf_yield_op(values), scf.YieldOp(*values))


def _same_with_regions(fast: Operation, slow: Operation, regions: int = 2) -> None:
    assert type(fast) is type(slow)
    assert list(fast.operands) == list(slow.operands)
    assert [r.type for r in fast.results] == [r.type for r in slow.results]
    assert list(fast.properties.items()) == list(slow.properties.items()) and fast.attributes == slow.attributes
    assert len(fast.regions) == len(slow.regions) == regions and fast.location == slow.location
    assert str(fast) == str(slow)


@pytest.mark.parametrize("types, two", [((), False), ((), True), ((i32,), True), ((V4I32, f32), True)], ids=str)
def test_scf_if(types, two):
    def region(op_values=()):
        return Region(Block([scf.YieldOp(*op_values)]))

    values = [value(t) for t in types]
    fast = F.scf_if_op(value(i1), list(types), region(values), region(values) if two else None)
    slow = scf.IfOp(value(i1), list(types), region(values), region(values) if two else None)
    _same_with_regions(fast, slow)


@pytest.mark.parametrize("types", [(), (i32,), (V4F32, f32)], ids=str)
def test_scf_for(types):
    def body():
        block = Block(arg_types=[IndexType(), *types])
        block.add_op(scf.YieldOp(*block.args[1:]))
        return block

    bounds = [value(IndexType())] * 3
    inits = [value(t) for t in types]
    fast, slow = F.scf_for_op(*bounds, inits, body()), scf.ForOp(*bounds, inits, body())
    _same_with_regions(fast, slow, regions=1)


# ---------------------------------------------------------------- frag (tile-distribute): tilec.dialects.frag_fast

from tilec.dialects import frag  # noqa: E402
from tilec.dialects.tile import ops as tile  # noqa: E402
from tilec.layout import FMA_F32, MMA_M16N8K8_TF32, MMA_M16N8K16_F16  # noqa: E402


@pytest.mark.parametrize("atom, counts", [(MMA_M16N8K16_F16, (4, 2, 4)), (MMA_M16N8K8_TF32, (4, 2, 4)),
                                          (FMA_F32, (1, 1, 1))], ids=lambda x: getattr(x, "name", str(x)))
def test_frag_mma(atom, counts):
    reg = f32 if atom is FMA_F32 else i32
    a, b, c = ([value(reg)] * counts[0], [value(reg)] * counts[1], [value(f32)] * counts[2])
    assert_same(frag_fast.frag_mma(atom, a, b, c), frag.MmaOp(atom, a, b, c))


@pytest.mark.parametrize("nbytes, extra, cache", [(16, {}, None), (8, {}, None), (16, {"src_bytes": i32}, None),
                                                  (16, {"ignore_src": i1}, "ca"), (4, {}, "cg")], ids=str)
def test_frag_cp_async(nbytes, extra, cache):
    dst, src = value(SHARED_PTR), value(GLOBAL_PTR)
    kw = {k: value(t) for k, t in extra.items()}
    assert_same(frag_fast.frag_cp_async(dst, src, nbytes, cache=cache, **kw),
                frag.CpAsyncOp(dst, src, nbytes, cache=cache, **kw))


@pytest.mark.parametrize("num, trans", [(1, False), (2, True), (4, False), (4, True)])
def test_frag_ldmatrix(num, trans):
    address = value(SHARED_PTR)
    assert_same(frag_fast.frag_ldmatrix(address, num, trans), frag.LdMatrixOp(address, num, trans))


@pytest.mark.parametrize("pred", [False, True])
@pytest.mark.parametrize("t", [f16, V4I32], ids=str)
def test_frag_load_store(pred, t):
    p = value(i1) if pred else None
    assert_same(frag_fast.frag_load(value(GLOBAL_PTR), t, p), frag.LoadOp(value(GLOBAL_PTR), t, p))
    assert_same(frag_fast.frag_store(value(t), value(GLOBAL_PTR), p),
                frag.StoreOp(value(t), value(GLOBAL_PTR), p))


@pytest.mark.parametrize("pred", [False, True])
@pytest.mark.parametrize("kind, t", [("add", f32), ("add", i32), ("max", i32)], ids=str)
def test_frag_red(pred, kind, t):
    p = value(i1) if pred else None
    assert_same(frag_fast.frag_red(kind, value(t), value(GLOBAL_PTR), p), frag.RedOp(kind, value(t), value(GLOBAL_PTR), p))


@pytest.mark.parametrize("kind", ["f16x2", "bf16x2"])
def test_frag_pack(kind):
    assert_same(frag_fast.frag_pack(kind, value(f32), value(f32)), frag.PackOp(kind, value(f32), value(f32)))


@pytest.mark.parametrize("kind", ["idx", "bfly"])
@pytest.mark.parametrize("t", [f32, i32], ids=str)
def test_frag_shfl(kind, t):
    x, lane = value(t), value(i32)
    assert_same(frag_fast.frag_shfl(kind, x, lane), frag.ShflOp(kind, x, lane))


@pytest.mark.parametrize("pending", [0, 3])
def test_frag_cp_async_groups(pending):
    assert_same(frag_fast.frag_cp_async_commit(), frag.CpAsyncCommitOp())
    assert_same(frag_fast.frag_cp_async_wait(pending), frag.CpAsyncWaitOp(pending))


@pytest.mark.parametrize("name, nbytes, align", [("k_a", 4096, 128), ("k_smem", 0, 16), ("k_bar", 16, 8)], ids=str)
def test_frag_shared(name, nbytes, align):
    assert_same(frag_fast.frag_shared(name, nbytes, align), frag.SharedOp(name, nbytes, align))


def test_frag_tf32():
    assert_same(frag_fast.frag_tf32(value(f32)), frag.ToTF32Op(value(f32)))


@pytest.mark.parametrize("count", [1, 4])
def test_frag_mbarriers(count):
    bar = value(SHARED_PTR)
    assert_same(frag_fast.frag_mbar_init(bar, count), frag.MbarInitOp(bar, count))
    assert_same(frag_fast.frag_mbar_init_fence(), frag.MbarInitFenceOp())
    assert_same(frag_fast.frag_mbar_expect_tx(bar, 8192 * count), frag.MbarExpectTxOp(bar, 8192 * count))
    assert_same(frag_fast.frag_mbar_wait(bar, value(i32)), frag.MbarWaitOp(bar, value(i32)))
    assert_same(frag_fast.frag_mbar_arrive_warp(bar), frag.MbarArriveWarpOp(bar))


@pytest.mark.parametrize("rank", [1, 2, 5])
def test_frag_tma_load(rank):
    dst, tmap, bar = value(SHARED_PTR), Block(arg_types=[llvm.LLVMPointerType()]).args[0], value(SHARED_PTR)
    coords = [value(i32)] * rank
    assert_same(frag_fast.frag_tma_load(dst, tmap, bar, coords), frag.TmaLoadOp(dst, tmap, bar, coords))


@pytest.mark.parametrize("n, dtype, trans_a, trans_b", [(8, "f16", False, False), (64, "bf16", True, False),
                                                        (128, "f16", False, True), (16, "f16", True, True)], ids=str)
def test_frag_wgmma(n, dtype, trans_a, trans_b):
    da, db, c = value(i64), value(i64), [value(f32)] * (n // 2)
    assert_same(frag_fast.frag_wgmma_desc(value(SHARED_PTR), 1 << 62), frag.WgmmaDescOp(value(SHARED_PTR), 1 << 62))
    assert_same(frag_fast.frag_wgmma_fence(), frag.WgmmaFenceOp())
    assert_same(frag_fast.frag_wgmma(da, db, c, n=n, dtype=dtype, trans_a=trans_a, trans_b=trans_b),
                frag.WgmmaOp(da, db, c, n=n, dtype=dtype, trans_a=trans_a, trans_b=trans_b))
    assert_same(frag_fast.frag_wgmma_commit(), frag.WgmmaCommitOp())
    assert_same(frag_fast.frag_wgmma_wait(c, 1), frag.WgmmaWaitOp(c, 1))
    assert_same(frag_fast.frag_wgmma_wait([], 0), frag.WgmmaWaitOp([], 0))


@pytest.mark.parametrize("n, dtype, trans_b", [(8, "f16", False), (64, "bf16", True), (256, "bf16", False)], ids=str)
def test_frag_wgmma_rs(n, dtype, trans_b):
    a, db, c = [value(i32)] * 4, value(i64), [value(f32)] * (n // 2)
    assert_same(frag_fast.frag_wgmma_rs(a, db, c, n=n, dtype=dtype, trans_b=trans_b),
                frag.WgmmaRsOp(a, db, c, n=n, dtype=dtype, trans_b=trans_b))


@pytest.mark.parametrize("axis", ["x", "y", "z"])
def test_tile_ids_and_barrier(axis):
    assert_same(frag_fast.tile_thread_id(axis), tile.ThreadIdOp(axis))
    assert_same(frag_fast.tile_lane_id(), tile.LaneIdOp())
    assert_same(frag_fast.tile_barrier(), tile.BarrierOp())


def test_vector_type_is_made_once():
    assert F.vector_type(f16, 8) is F.vector_type(f16, 8)
    assert F.vector_type(f16, 8) == VectorType(f16, [8])
