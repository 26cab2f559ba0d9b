"""Small builders for plain `llvm` ops that GPU code needs all the time.

Pointer types per address space, constants, pointer offsets that keep the
address space, casts, and the type checks with op-naming error messages that
`nvvm` builds on. Each function inserts ops through an xDSL `Builder` and
returns the SSA value it made.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntAttr,
    IntegerType,
    VectorType,
    i8,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue

from tilec.dialects import llvm_ext
from tilec.ir import fast

GENERIC = 0
GLOBAL = 1
SHARED = 3
"""NVPTX address spaces: generic, global (`.global`), shared (`.shared`)."""

PTR = llvm.LLVMPointerType()
GLOBAL_PTR = llvm.LLVMPointerType(IntAttr(GLOBAL))
SHARED_PTR = llvm.LLVMPointerType(IntAttr(SHARED))

Value = SSAValue | Operation


def address_space(type_attr: Attribute) -> int | None:
    """The address space of a pointer type, None if it is not a pointer."""
    if not isinstance(type_attr, llvm.LLVMPointerType):
        return None
    space = type_attr.addr_space
    return space.data if isinstance(space, IntAttr) else GENERIC


def value_of(op_name: str, value: Value) -> SSAValue:
    """The SSA value of `value` (an op's single result is accepted)."""
    if isinstance(value, Operation):
        if len(value.results) != 1:
            raise ValueError(
                f"{op_name}: expected a value, got op {value.name} with "
                f"{len(value.results)} results"
            )
        return value.results[0]
    if not isinstance(value, SSAValue):
        raise ValueError(f"{op_name}: expected an SSA value, got {value!r}")
    return value


def expect_type(op_name: str, what: str, value: Value, *allowed: Attribute) -> SSAValue:
    """`value` if its type is one of `allowed`, else ValueError naming op and operand."""
    ssa = value_of(op_name, value)
    if ssa.type not in allowed:
        names = " or ".join(str(t) for t in allowed)
        raise ValueError(f"{op_name}: {what} must be {names}, got {ssa.type}")
    return ssa


def expect_pointer(op_name: str, what: str, value: Value, *spaces: int) -> SSAValue:
    """`value` if it is a pointer in one of `spaces`, else ValueError."""
    ssa = value_of(op_name, value)
    if address_space(ssa.type) not in spaces:
        names = " or ".join(str(llvm.LLVMPointerType(IntAttr(s))) for s in spaces)
        raise ValueError(f"{op_name}: {what} must be a {names} pointer, got {ssa.type}")
    return ssa


def expect_count(op_name: str, what: str, values: Sequence[Value], count: int) -> None:
    """ValueError unless exactly `count` values were given."""
    if len(values) != count:
        raise ValueError(f"{op_name}: {what} needs {count} values, got {len(values)}")


def constant(builder: Builder, value: int | float, type_attr: Attribute) -> SSAValue:
    """An `llvm.mlir.constant` of an integer or float type."""
    if isinstance(type_attr, IntegerType):
        attr: Attribute = fast.int_attr(int(value), type_attr)
    elif isinstance(type_attr, AnyFloat):
        attr = FloatAttr(float(value), type_attr)
    else:
        raise ValueError(f"llvm.mlir.constant: unsupported type {type_attr}")
    return builder.insert(fast.constant_op(attr, type_attr)).result


def zero(builder: Builder, type_attr: Attribute) -> SSAValue:
    """The zero of an integer, float or 1-D vector type (or null for others)."""
    if isinstance(type_attr, IntegerType | AnyFloat):
        return constant(builder, 0, type_attr)
    if isinstance(type_attr, VectorType):
        count = type_attr.get_shape()[0]
        dense = DenseIntOrFPElementsAttr.from_list(type_attr, [0] * count)
        return builder.insert(fast.constant_op(dense, type_attr)).result
    return builder.insert(fast.zero_op(type_attr)).res


def const_i32(builder: Builder, value: int) -> SSAValue:
    """An i32 constant (two's complement for values ≥ 2**31, e.g. lane masks)."""
    return constant(builder, value, i32)


def offset(
    builder: Builder, ptr: Value, index: Value | int, elem_type: Attribute = i8
) -> SSAValue:
    """`ptr + index * sizeof(elem_type)`, in the address space of `ptr`."""
    ptr = value_of("llvm.getelementptr", ptr)
    if address_space(ptr.type) is None:
        raise ValueError(f"llvm.getelementptr: base must be a pointer, got {ptr.type}")
    if not isinstance(index, int):
        index = value_of("llvm.getelementptr", index)
    return builder.insert(fast.gep_op(ptr, index, elem_type, ptr.type)).result


def bitcast(builder: Builder, value: Value, type_attr: Attribute) -> SSAValue:
    """Reinterpret the bits of `value` as `type_attr` (same size)."""
    return builder.insert(fast.cast_op(llvm.BitcastOp, SSAValue.get(value), type_attr)).result


def addrspace_cast(builder: Builder, ptr: Value, space: int) -> SSAValue:
    """`ptr` as a pointer in address space `space`."""
    target = llvm.LLVMPointerType(IntAttr(space)) if space else PTR
    ptr = value_of("llvm.addrspacecast", ptr)
    return builder.insert(fast.cast_op(llvm_ext.AddrSpaceCastOp, ptr, target)).result


def extract_element(builder: Builder, vector: Value, index: int) -> SSAValue:
    """Element `index` of a 1-D vector."""
    vector = value_of("llvm.extractelement", vector)
    if not isinstance(vector.type, VectorType):
        raise ValueError(f"llvm.extractelement: expected a vector, got {vector.type}")
    position = const_i32(builder, index)
    return builder.insert(llvm_ext.extract_element_op(vector, position)).res


def extract_values(builder: Builder, struct: Value, count: int) -> list[SSAValue]:
    """The first `count` members of a struct value (e.g. an intrinsic's results)."""
    struct = value_of("llvm.extractvalue", struct)
    assert isinstance(struct.type, llvm.LLVMStructType)
    members = struct.type.types.data
    return [builder.insert(fast.extract_value_op(struct, i, members[i])).res for i in range(count)]


def icmp(builder: Builder, predicate: str, lhs: Value, rhs: Value) -> SSAValue:
    """`llvm.icmp` by predicate name: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge."""
    try:
        flag = llvm.ICmpPredicateFlag(predicate)
    except ValueError:
        names = ", ".join(f.value for f in llvm.ICmpPredicateFlag)
        raise ValueError(
            f"llvm.icmp: unknown predicate {predicate!r}, expected one of {names}"
        ) from None
    lhs, rhs = value_of("llvm.icmp", lhs), value_of("llvm.icmp", rhs)
    return builder.insert(fast.icmp_op(flag.value, lhs, rhs)).res
