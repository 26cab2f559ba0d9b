"""Types at the llvm level: ``index`` is ``i64``; everything else is kept.

The pass retypes every value of the module up front (op results and block
arguments), so the op patterns that follow see final types on their operands
and build llvm ops whose result types are right by construction.
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    Signedness,
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    VectorType,
    i64,
)
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter

from tilec.ir.walk import walk_ops

INDEX_BITS = 64
"""``index`` lowers to ``i64``: addresses on NVPTX64 are 64-bit."""


def convert_type(t: Attribute) -> Attribute:
    """The llvm-level type of ``t``: ``index`` → ``i64`` (also inside vectors)."""
    if isinstance(t, IndexType):
        return i64
    if isinstance(t, VectorType) and isinstance(t.element_type, IndexType):
        return VectorType(i64, t.get_shape())
    return t


def is_llvm_type(t: Attribute) -> bool:
    """True for the types the llvm level (and our translation) handles."""
    match t:
        case IntegerType():
            return t.signedness.data == Signedness.SIGNLESS  # LLVM's integers carry no sign (ui32 does not lower)
        case IndexType():
            return True
        case Float16Type() | BFloat16Type() | Float32Type() | Float64Type():
            return True
        case Float8E4M3FNType() | Float8E5M2Type():  # memory only: i8 in LLVM IR (llvm_translate)
            return True
        case VectorType():
            return t.get_num_dims() == 1 and not t.get_num_scalable_dims() and is_llvm_type(t.element_type)
        case llvm.LLVMPointerType() | llvm.LLVMVoidType():
            return True
        case llvm.LLVMStructType():
            return all(is_llvm_type(e) for e in t.types)
        case llvm.LLVMArrayType():
            return is_llvm_type(t.type)
        case llvm.LLVMFunctionType():
            return True
        case _:
            return False


def retype_module(module: ModuleOp) -> None:
    """Give every op result and block argument of ``module`` its llvm-level type."""
    for op in walk_ops(module):
        for result in list(op.results):
            new = convert_type(result.type)
            if new is not result.type:  # convert_type returns an unchanged type itself
                Rewriter.replace_value_with_new_type(result, new)
        for region in op.regions:
            for block in region.blocks:
                for arg in list(block.args):
                    new = convert_type(arg.type)
                    if new is not arg.type:
                        Rewriter.replace_value_with_new_type(arg, new)
