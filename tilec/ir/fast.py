"""Direct constructors of the xDSL ops that tilec's lowering passes make.

The `llvm` ops of tile-to-llvm; the `arith`/`math`/`vector`/`scf`/`func` ops
and the `llvm` casts and `llvm.getelementptr` of tile-distribute. tilec's own
ops are made the same way (through :func:`create`) next to their definitions,
above this package: `tilec.dialects.frag_fast` (the `frag` ops and the few
`tile` ops of tile-distribute) and `tilec.dialects.llvm_ext.extract_element_op`.

**One way to build ops.** In the lowering passes (`tilec.passes.tile_distribute`,
`tilec.passes.tile_to_llvm` and `tilec.passes.lowering`) every op is made by a
function here or of those two modules, and inserted through the pass's one
inserter: tile-distribute's `Emitter`, tile-to-llvm's `Builder` (made once by
the pass and threaded through every lowering). A reader meets one style, and
no op of a kernel body pays for irdl's generic `__init__`; an op kind a pass
starts to make gets its function here first, with its test. Two exceptions:
a function's frame (`func.func`, `llvm.func`, `llvm.mlir.global`), made once
per function by xDSL's constructors, whose `__init__`s do real work (function
types, linkage, symbols) that a copy here would only have to keep in step,
and placed in the module by the pass; and ops carried over as they are,
which are cloned. The tile-level passes (tile-tiling, tile-pipeline,
tile-swizzle, tile-layout) make few ops and keep xDSL's constructors.

An xDSL op's `__init__` goes through irdl's generic builder
(`irdl_op_init`: it normalises every operand, result, region and
successor list against the op definition and computes segment sizes):
about 20 µs per op, three to four times the cost of the op itself, and a
GEMM kernel's lowering makes some 3,500 ops. Each function here makes the
very op that the named `__init__` call makes (same operands, result types,
properties in the same order, successors) through `Operation.create`,
which skips that step; `tests/ir/test_fast.py` checks each one
against the `__init__` it stands for. Neither way checks operand types
(except `arith.cmpi`'s `__init__`, which insists on equal ones): the
verifier does, on the whole module after the pipeline.

The small attributes these ops carry (predicates, alignments, constants,
segment sizes) are immutable values, so each distinct one is made once
(`IntegerAttr` construction alone costs about 10 µs).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TypeVar

from xdsl.dialects import arith, func, llvm, scf, vector
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

_NO_OVERFLOW = {"overflowFlags": IntegerAttr(0, 32)}
_NO_FASTMATH = {"fastmathFlags": llvm.FastMathAttr(None)}
_NO_OVERFLOW_CAST = {"overflowFlags": llvm.OverflowAttr(None)}
_NO_BUNDLES = DenseArrayBase.from_list(i32, ())
_NONE: dict[str, Attribute] = {}
_UNIT = UnitAttr()
OpT = TypeVar("OpT", bound=Operation)

_BINARY_PROPERTIES: tuple[tuple[type[Operation], dict[str, Attribute]], ...] = (
    (llvm.ArithmeticBinOpOverflow, _NO_OVERFLOW),
    (llvm.ArithmeticBinOpExact, _NONE),
    (llvm.ArithmeticBinOpDisjoint, _NONE),
    (llvm.ArithmeticBinOperation, _NONE),
    (llvm.AbstractFloatArithOp, _NO_FASTMATH),
)
"""Properties of `op_type(lhs, rhs)` by op family: the default flags (none set)."""

_CAST_PROPERTIES: tuple[tuple[type[Operation], dict[str, Attribute]], ...] = (
    (llvm.IntegerConversionOpOverflow, _NO_OVERFLOW_CAST),
    (llvm.IntegerConversionOpNNeg, _NONE),
    (llvm.IntegerConversionOp, _NONE),
    (llvm.GenericCastOp, _NONE),
)
"""Properties of `op_type(value, type)` by op family."""


def create(op_type: type[OpT], operands: Sequence[SSAValue] = (), result_types: Sequence[Attribute] = (),
           properties: dict[str, Attribute] = _NONE, successors: Sequence[Block] = (),
           regions: Sequence[Region] = ()) -> OpT:
    """`op_type.create(...)` at xDSL's unknown location, given here: `Operation.__init__` would look
    it up with an import statement per op (a quarter of the cost of `create`)."""
    return op_type.create(operands=operands, result_types=result_types, properties=properties,
                          successors=successors, regions=regions, location=UNKNOWN_LOC)


@functools.cache
def int_attr(value: int, type_attr: IntegerType) -> IntegerAttr:
    """`IntegerAttr(value, type_attr, truncate_bits=True)`, made once per distinct value."""
    return IntegerAttr(value, type_attr, truncate_bits=True)


@functools.cache
def segments(sizes: tuple[int, ...]) -> DenseArrayBase:
    """`operandSegmentSizes` (or result sizes) `sizes`, made once."""
    return DenseArrayBase.from_list(i32, sizes)


@functools.cache
def _position(index: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [index])


@functools.cache
def _string(text: str) -> StringAttr:
    return StringAttr(text)


@functools.cache
def _symbol(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name)


def _family(op_type: type[Operation], table: tuple[tuple[type[Operation], dict[str, Attribute]], ...]):
    for base, properties in table:
        if issubclass(op_type, base):
            return properties
    return None


@functools.cache
def _binary_properties(op_type: type[Operation]) -> dict[str, Attribute] | None:
    return _family(op_type, _BINARY_PROPERTIES)


@functools.cache
def _cast_properties(op_type: type[Operation]) -> dict[str, Attribute] | None:
    return _family(op_type, _CAST_PROPERTIES)


def binary_op(op_type: type[Operation], lhs: SSAValue, rhs: SSAValue) -> Operation:
    """`op_type(lhs, rhs)` for an integer or float binary op (`llvm.add`, `llvm.fadd`, ...)."""
    properties = _binary_properties(op_type)
    if properties is None:
        return op_type(lhs, rhs)
    return create(op_type, operands=(lhs, rhs), result_types=(lhs.type,), properties=properties)


def cast_op(op_type: type[Operation], value: SSAValue, target: Attribute) -> Operation:
    """`op_type(value, target)` for a cast (`llvm.sext`, `llvm.trunc`, `llvm.bitcast`, ...)."""
    properties = _cast_properties(op_type)
    if properties is None:
        return op_type(value, target)
    return create(op_type, operands=(value,), result_types=(target,), properties=properties)


def constant_op(value: Attribute, type_attr: Attribute) -> llvm.ConstantOp:
    """`llvm.ConstantOp(value, type_attr)`."""
    return create(llvm.ConstantOp, result_types=(type_attr,), properties={"value": value})


def icmp_op(predicate: str, lhs: SSAValue, rhs: SSAValue) -> llvm.ICmpOp:
    """`llvm.ICmpOp(lhs, rhs, IntegerAttr(<predicate>, i64))`."""
    flag = int_attr(llvm.ICmpPredicateFlag(predicate).to_int(), i64)
    t = lhs.type
    result = VectorType(i1, t.shape) if isinstance(t, VectorType) else i1
    return create(llvm.ICmpOp, operands=(lhs, rhs), result_types=(result,), properties={"predicate": flag})


def select_op(cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> llvm.SelectOp:
    """`llvm.SelectOp(cond, lhs, rhs)`."""
    return create(llvm.SelectOp, operands=(cond, lhs, rhs), result_types=(lhs.type,))


def br_op(dest: Block, args: Sequence[SSAValue] = ()) -> llvm.BrOp:
    """`llvm.BrOp(dest, *args)`."""
    return create(llvm.BrOp, operands=tuple(args), successors=(dest,))


def cond_br_op(
    cond: SSAValue,
    then_block: Block,
    then_args: Sequence[SSAValue],
    else_block: Block,
    else_args: Sequence[SSAValue],
) -> llvm.CondBrOp:
    """`llvm.CondBrOp(cond, then_block, then_args, else_block, else_args)`."""
    sizes = segments((1, len(then_args), len(else_args)))
    return create(
        llvm.CondBrOp,
        operands=(cond, *then_args, *else_args),
        properties={"operandSegmentSizes": sizes},
        successors=(then_block, else_block),
    )


def load_op(ptr: SSAValue, result_type: Attribute, alignment: int | None = None) -> llvm.LoadOp:
    """`llvm.LoadOp(ptr, result_type, alignment=alignment)`."""
    properties: dict[str, Attribute] = {"ordering": int_attr(0, i64)}
    if alignment is not None:
        properties["alignment"] = int_attr(alignment, i64)
    return create(llvm.LoadOp, operands=(ptr,), result_types=(result_type,), properties=properties)


def store_op(value: SSAValue, ptr: SSAValue, alignment: int | None = None) -> llvm.StoreOp:
    """`llvm.StoreOp(value, ptr, alignment=alignment)`."""
    properties: dict[str, Attribute] = {"ordering": int_attr(0, i64)}
    if alignment is not None:
        properties["alignment"] = int_attr(alignment, i64)
    return create(llvm.StoreOp, operands=(value, ptr), properties=properties)


def extract_value_op(struct: SSAValue, index: int, result_type: Attribute) -> llvm.ExtractValueOp:
    """`llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [index]), struct, result_type)`."""
    return create(
        llvm.ExtractValueOp, operands=(struct,), result_types=(result_type,), properties={"position": _position(index)}
    )


def insert_element_op(vector: SSAValue, value: SSAValue, index: SSAValue) -> llvm.InsertElementOp:
    """`llvm.InsertElementOp(vector, value, index)`."""
    return create(llvm.InsertElementOp, operands=(vector, value, index), result_types=(vector.type,))


def call_intrinsic_op(name: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]) -> llvm.CallIntrinsicOp:
    """`llvm.CallIntrinsicOp(name, args, result_types)`."""
    return create(
        llvm.CallIntrinsicOp,
        operands=tuple(args),
        result_types=tuple(result_types),
        properties={
            "intrin": _string(name),
            "op_bundle_sizes": _NO_BUNDLES,
            "operandSegmentSizes": segments((len(args), 0)),
        },
    )


def fcmp_op(predicate: str, lhs: SSAValue, rhs: SSAValue) -> llvm.FCmpOp:
    """`llvm.FCmpOp(lhs, rhs, predicate)` for a predicate name (`olt`, `une`, ...): an `i1`, as there."""
    flag = int_attr(llvm.FCmpPredicateFlag(predicate).to_int(), i64)
    return create(llvm.FCmpOp, operands=(lhs, rhs), result_types=(i1,),
                  properties={"predicate": flag, **_NO_FASTMATH})


def float_unary_op(op_type: type[OpT], x: SSAValue) -> OpT:
    """`op_type(x)` for `llvm.fneg` and the one-operand float intrinsics (`llvm.intr.sqrt`,
    `llvm.intr.exp2`, ...; `llvm.intr.fabs`: `op_type(x, x.type)`): a result of `x`'s type."""
    return create(op_type, operands=(x,), result_types=(x.type,), properties=_NO_FASTMATH)


def fma_op(a: SSAValue, b: SSAValue, c: SSAValue) -> llvm.FMAOp:
    """`llvm.FMAOp(a, b, c)`."""
    return create(llvm.FMAOp, operands=(a, b, c), result_types=(a.type,), properties=_NO_FASTMATH)


def undef_op(type_attr: Attribute) -> llvm.UndefOp:
    """`llvm.UndefOp(type_attr)`."""
    return create(llvm.UndefOp, result_types=(type_attr,))


def zero_op(type_attr: Attribute) -> llvm.ZeroOp:
    """`llvm.ZeroOp.build(result_types=[type_attr])` (the op has no `__init__` of its own)."""
    return create(llvm.ZeroOp, result_types=(type_attr,))


def addressof_op(name: str, result_type: Attribute) -> llvm.AddressOfOp:
    """`llvm.AddressOfOp(name, result_type)`."""
    return create(llvm.AddressOfOp, result_types=(result_type,), properties={"global_name": _symbol(name)})


def return_op(value: SSAValue | None = None) -> llvm.ReturnOp:
    """`llvm.ReturnOp(value)`."""
    return create(llvm.ReturnOp, operands=() if value is None else (value,))


_CALL_DEFAULTS = {
    "fastmathFlags": llvm.FastMathAttr(None),
    "CConv": llvm.CallingConventionAttr("ccc"),
    "op_bundle_sizes": _NO_BUNDLES,
}
_NO_TAIL_CALL = llvm.TailCallKindAttr(llvm.TailCallKind.NONE)


def call_op(callee: str, args: Sequence[SSAValue], return_type: Attribute | None = None) -> llvm.CallOp:
    """`llvm.CallOp(callee, *args, return_type=return_type)`."""
    return create(
        llvm.CallOp,
        operands=tuple(args),
        result_types=() if return_type is None else (return_type,),
        properties={"callee": _symbol(callee), **_CALL_DEFAULTS, "operandSegmentSizes": segments((len(args), 0)),
                    "TailCallKind": _NO_TAIL_CALL},
    )


def inline_asm_op(asm: str, constraints: str, operands: Sequence[SSAValue], result_types: Sequence[Attribute] = (),
                  has_side_effects: bool = False) -> llvm.InlineAsmOp:
    """`llvm.InlineAsmOp(asm, constraints, operands, result_types, has_side_effects=has_side_effects)`."""
    properties: dict[str, Attribute] = {"asm_string": _string(asm), "constraints": _string(constraints)}
    if has_side_effects:
        properties["has_side_effects"] = _UNIT
    properties["tail_call_kind"] = _NO_TAIL_CALL
    return create(llvm.InlineAsmOp, operands=tuple(operands), result_types=tuple(result_types), properties=properties)


# ---------------------------------------------------------------- arith, math, vector, scf, func (tile-distribute)

_ARITH_NO_OVERFLOW = {"overflowFlags": arith.IntegerOverflowAttr("none")}
_ARITH_NO_FASTMATH = {"fastmath": arith.FastMathFlagsAttr("none")}
_I1 = IntegerType(1)
_GEP_NO_WRAP = {"noWrapFlags": IntegerAttr(0, 32)}


@functools.cache
def _arith_binary_properties(op_type: type[Operation]) -> dict[str, Attribute] | None:
    if issubclass(op_type, arith.SignlessIntegerBinaryOperationWithOverflow):
        return _ARITH_NO_OVERFLOW
    if issubclass(op_type, arith.SignlessIntegerBinaryOperation):
        return _NONE
    if issubclass(op_type, arith.FloatingPointLikeBinaryOperation):
        return _ARITH_NO_FASTMATH
    return None


def arith_binary_op(op_type: type[Operation], lhs: SSAValue, rhs: SSAValue) -> Operation:
    """`op_type(lhs, rhs)` for arith's binary ops on integers (`arith.addi`, `arith.andi`, `arith.maxsi`, ...)
    and on floats (`arith.addf`, `arith.maximumf`, ...)."""
    properties = _arith_binary_properties(op_type)
    if properties is None:
        return op_type(lhs, rhs)
    return create(op_type, operands=(lhs, rhs), result_types=(lhs.type,), properties=properties)


_CMPI_PREDICATES = {
    name: i for i, name in enumerate(("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"))
}


def cmpi_op(predicate: str, lhs: SSAValue, rhs: SSAValue) -> arith.CmpiOp:
    """`arith.CmpiOp(lhs, rhs, predicate)` for a predicate name (`ult`, `eq`, ...)."""
    return create(
        arith.CmpiOp,
        operands=(lhs, rhs),
        result_types=(_I1,),
        properties={"predicate": int_attr(_CMPI_PREDICATES[predicate], i64)},
    )


def arith_cast_op(op_type: type[Operation], value: SSAValue, target: Attribute) -> Operation:
    """`op_type(value, target)` for arith's casts (`arith.index_cast`, `arith.extsi`, `arith.extf`, ...)."""
    return create(op_type, operands=(value,), result_types=(target,))


def arith_constant_op(value: Attribute) -> arith.ConstantOp:
    """`arith.ConstantOp(value)` for an `IntegerAttr` or `FloatAttr`."""
    return create(arith.ConstantOp, result_types=(value.type,), properties={"value": value})


@functools.cache
def index_attr(value: int, type_attr: IntegerType | IndexType) -> IntegerAttr:
    """`IntegerAttr(value, type_attr)` (no truncation: an out-of-range value raises), made once per value."""
    return IntegerAttr(value, type_attr)


def arith_select_op(cond: SSAValue, lhs: SSAValue, rhs: SSAValue) -> arith.SelectOp:
    """`arith.SelectOp(cond, lhs, rhs)`."""
    return create(arith.SelectOp, operands=(cond, lhs, rhs), result_types=(lhs.type,))


def gep_op(ptr: SSAValue, index: SSAValue | int, elem_type: Attribute, result_type: Attribute) -> llvm.GEPOp:
    """`llvm.GEPOp.from_mixed_indices(ptr, [index], elem_type, result_type=result_type)` for one index."""
    if isinstance(index, int):
        operands, raw = (ptr,), _gep_constant_index(index)
    else:
        operands, raw = (ptr, index), _GEP_SSA_INDEX
    return create(
        llvm.GEPOp,
        operands=operands,
        result_types=(result_type,),
        properties={"rawConstantIndices": raw, "elem_type": elem_type, **_GEP_NO_WRAP},
    )


@functools.cache
def _gep_constant_index(index: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, [index])


_GEP_SSA_INDEX = DenseArrayBase.from_list(i32, [llvm.GEP_USE_SSA_VAL])


def vector_insert_op(source: SSAValue, dest: SSAValue, position: int) -> vector.InsertOp:
    """`vector.InsertOp(source, dest, [position])`."""
    return create(
        vector.InsertOp,
        operands=(source, dest),
        result_types=(dest.type,),
        properties={"static_position": _position(position)},
    )


def vector_extract_op(source: SSAValue, position: int, result_type: Attribute) -> vector.ExtractOp:
    """`vector.ExtractOp(source, [position], result_type)`."""
    return create(
        vector.ExtractOp,
        operands=(source,),
        result_types=(result_type,),
        properties={"static_position": _position(position)},
    )


def scf_yield_op(values: Sequence[SSAValue]) -> scf.YieldOp:
    """`scf.YieldOp(*values)`."""
    return create(scf.YieldOp, operands=tuple(values))


def scf_if_op(cond: SSAValue, result_types: Sequence[Attribute], then: Region, otherwise: Region | None) -> scf.IfOp:
    """`scf.IfOp(cond, result_types, then, otherwise)` (no `else` region: an empty one)."""
    return create(
        scf.IfOp,
        operands=(cond,),
        result_types=tuple(result_types),
        regions=(then, Region() if otherwise is None else otherwise),
    )


def scf_for_op(lb: SSAValue, ub: SSAValue, step: SSAValue, iter_args: Sequence[SSAValue], body: Block) -> scf.ForOp:
    """`scf.ForOp(lb, ub, step, iter_args, body)`."""
    return create(
        scf.ForOp,
        operands=(lb, ub, step, *iter_args),
        result_types=tuple(a.type for a in iter_args),
        regions=(Region(body),),
    )


def math_unary_op(op_type: type[OpT], x: SSAValue) -> OpT:
    """`op_type(x)` for math's one-operand float ops (`math.exp`, `math.exp2`, ...)."""
    return create(op_type, operands=(x,), result_types=(x.type,), properties=_ARITH_NO_FASTMATH)


def vector_bitcast_op(source: SSAValue, result_type: Attribute) -> vector.BitcastOp:
    """`vector.BitcastOp(source, result_type)`."""
    return create(vector.BitcastOp, operands=(source,), result_types=(result_type,))


def func_return_op(values: Sequence[SSAValue]) -> func.ReturnOp:
    """`func.ReturnOp(*values)`."""
    return create(func.ReturnOp, operands=tuple(values))


@functools.cache
def vector_type(element_type: Attribute, count: int) -> VectorType:
    """`VectorType(element_type, [count])`, made once."""
    return VectorType(element_type, [count])


__all__ = [
    "addressof_op",
    "arith_binary_op",
    "arith_cast_op",
    "arith_constant_op",
    "arith_select_op",
    "binary_op",
    "br_op",
    "call_intrinsic_op",
    "call_op",
    "cast_op",
    "cmpi_op",
    "cond_br_op",
    "constant_op",
    "create",
    "extract_value_op",
    "fcmp_op",
    "float_unary_op",
    "fma_op",
    "func_return_op",
    "gep_op",
    "icmp_op",
    "index_attr",
    "inline_asm_op",
    "insert_element_op",
    "int_attr",
    "load_op",
    "math_unary_op",
    "return_op",
    "scf_for_op",
    "scf_if_op",
    "scf_yield_op",
    "segments",
    "select_op",
    "store_op",
    "undef_op",
    "vector_bitcast_op",
    "vector_extract_op",
    "vector_insert_op",
    "vector_type",
    "zero_op",
]
