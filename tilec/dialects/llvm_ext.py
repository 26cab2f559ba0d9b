"""The `llvm` dialect as tilec extends it: ops xDSL 0.74 lacks, and the kernel attributes.

xDSL's `llvm` dialect has no extractelement, addrspacecast, fptosi, fptoui,
uitofp or atomicrmw. Kernels need them: extractelement to take a 16-byte
vector load apart, addrspacecast between generic and shared/global pointers,
float/int conversions for index math, and atomicrmw for split-K reductions.
They are defined here with MLIR's names and pretty syntax, so that printed
IR reads like MLIR's, and `tilec.codegen.llvm_translate` turns them into LLVM
IR. They live with the dialects (not in `codegen`) because the passes that
make them and the translator that reads them both need them.

They are not part of xDSL's `LLVM` dialect object: `extended_llvm_dialect()`
is that dialect with them, which tilec's dialect registry
(`tilec.dialects.get_all_dialects`) puts under the name `llvm`, so every
tilec context loads them (lazily, with the rest of `llvm`).

The `nvvm.*` discardable attributes that make an `llvm.func` a kernel (as in
MLIR) are named here too, for the same two readers: the passes set them,
the translator turns them into PTX directives.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import (
    IntegerAttr,
    SignlessIntegerConstraint,
    StringAttr,
    VectorType,
    i64,
)
from xdsl.dialects.llvm import LLVM, GenericCastOp, LLVMPointerType
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoMemoryEffect
from xdsl.utils.exceptions import VerifyException

from tilec.ir.fast import create
from tilec.ir.verify_lowered import locally_verified

KERNEL_ATTR = "nvvm.kernel"
"""Unit attribute on `llvm.func` marking a kernel (PTX `.entry`), as in MLIR."""

MAXNTID_ATTR = "nvvm.maxntid"
"""`array<i32: x[, y[, z]]>` on a kernel: the most threads per block (PTX `.maxntid`)."""

MINCTASM_ATTR = "nvvm.minctasm"
"""`i32` on a kernel: the fewest blocks per SM to aim for (PTX `.minnctapersm`)."""

MAXNREG_ATTR = "nvvm.maxnreg"
"""`i32` on a kernel: the most registers per thread (PTX `.maxnreg`)."""

CLUSTER_DIM_ATTR = "nvvm.cluster_dim"
"""`array<i32: x, y, z>` on a kernel: its thread-block cluster (PTX `.explicitcluster` and
`.reqnctapercluster`, sm_90), as MLIR's NVVM names it."""

GRID_CONSTANT_ATTR = "nvvm.grid_constant"
"""Unit attribute on a kernel's `llvm.byval` parameter: read in place, never written (as in MLIR's NVVM)."""


@locally_verified
@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """`%e = llvm.extractelement %vec[%i : i32] : vector<4xf32>`."""

    name = "llvm.extractelement"

    vector = operand_def(VectorType)
    position = operand_def(SignlessIntegerConstraint)
    res = result_def()

    traits = traits_def(NoMemoryEffect())

    def __init__(self, vector: SSAValue | Operation, position: SSAValue | Operation):
        vector_type = SSAValue.get(vector).type
        if not isinstance(vector_type, VectorType):
            raise ValueError(
                f"llvm.extractelement: expected a vector operand, got {vector_type}"
            )
        super().__init__(
            operands=[vector, position], result_types=[vector_type.element_type]
        )

    def verify_(self) -> None:
        vector_type = self.vector.type
        assert isinstance(vector_type, VectorType)
        if vector_type.get_num_dims() != 1:
            raise VerifyException("llvm.extractelement: expected a 1-D vector")
        if self.res.type != vector_type.element_type:
            raise VerifyException(
                f"llvm.extractelement: result type {self.res.type} is not the "
                f"element type {vector_type.element_type} of {vector_type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.vector)
        printer.print_string("[")
        printer.print_ssa_value(self.position)
        printer.print_string(" : ")
        printer.print_attribute(self.position.type)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.vector.type)

    @classmethod
    def parse(cls, parser: Parser) -> ExtractElementOp:
        vector = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        position = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        position_type = parser.parse_type()
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        vector_type = parser.parse_type()
        op = cls(
            parser.resolve_operand(vector, vector_type),
            parser.resolve_operand(position, position_type),
        )
        op.attributes |= attrs
        return op


@locally_verified
@irdl_op_definition
class AddrSpaceCastOp(GenericCastOp):
    """Pointer cast between address spaces (generic ↔ shared/global)."""

    name = "llvm.addrspacecast"

    def verify_(self) -> None:
        if not isinstance(self.arg.type, LLVMPointerType) or not isinstance(
            self.result.type, LLVMPointerType
        ):
            raise VerifyException(
                "llvm.addrspacecast: expected pointer operand and result, got "
                f"{self.arg.type} to {self.result.type}"
            )


@locally_verified
@irdl_op_definition
class FPToSIOp(GenericCastOp):
    """Float to signed integer, rounding toward zero."""

    name = "llvm.fptosi"


@locally_verified
@irdl_op_definition
class FPToUIOp(GenericCastOp):
    """Float to unsigned integer, rounding toward zero."""

    name = "llvm.fptoui"


@locally_verified
@irdl_op_definition
class UIToFPOp(GenericCastOp):
    """Unsigned integer to float."""

    name = "llvm.uitofp"


ATOMIC_BIN_OPS: tuple[str, ...] = (
    "xchg", "add", "sub", "and", "nand", "or", "xor", "max", "min", "umax",
    "umin", "fadd", "fsub", "fmax", "fmin", "uinc_wrap", "udec_wrap",
)  # fmt: skip
"""LLVM's atomicrmw operations, by their LLVM IR keywords."""

ATOMIC_ORDERINGS: tuple[str, ...] = (
    "monotonic", "acquire", "release", "acq_rel", "seq_cst",
)  # fmt: skip
"""Orderings an atomicrmw may have (LLVM forbids `unordered` for it)."""


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """`%old = llvm.atomicrmw fadd %ptr, %v syncscope("block") monotonic : !llvm.ptr<1>, f32`.

    Returns the value the memory held before the update. Note: LLVM 22's
    NVPTX backend prints every atomicrmw as a relaxed, gpu-scope `atom`
    whatever its ordering and syncscope; order with explicit fences.
    """

    name = "llvm.atomicrmw"

    ptr = operand_def(LLVMPointerType)
    val = operand_def()
    res = result_def()

    bin_op = prop_def(StringAttr)
    ordering = prop_def(StringAttr)
    syncscope = opt_prop_def(StringAttr)
    alignment = opt_prop_def(IntegerAttr)

    def __init__(
        self,
        bin_op: str,
        ptr: SSAValue | Operation,
        val: SSAValue | Operation,
        ordering: str = "monotonic",
        syncscope: str | None = None,
        alignment: int | None = None,
    ):
        props: dict[str, Attribute | None] = {
            "bin_op": StringAttr(bin_op),
            "ordering": StringAttr(ordering),
            "syncscope": StringAttr(syncscope) if syncscope is not None else None,
            "alignment": IntegerAttr(alignment, i64) if alignment is not None else None,
        }
        super().__init__(
            operands=[ptr, val],
            result_types=[SSAValue.get(val).type],
            properties=props,
        )

    def verify_(self) -> None:
        if self.bin_op.data not in ATOMIC_BIN_OPS:
            raise VerifyException(
                f"llvm.atomicrmw: unknown operation {self.bin_op.data!r}, "
                f"expected one of {', '.join(ATOMIC_BIN_OPS)}"
            )
        if self.ordering.data not in ATOMIC_ORDERINGS:
            raise VerifyException(
                f"llvm.atomicrmw: unknown ordering {self.ordering.data!r}, "
                f"expected one of {', '.join(ATOMIC_ORDERINGS)}"
            )
        if self.res.type != self.val.type:
            raise VerifyException(
                "llvm.atomicrmw: result type must equal the value type"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.bin_op.data} ")
        printer.print_ssa_value(self.ptr)
        printer.print_string(", ")
        printer.print_ssa_value(self.val)
        if self.syncscope is not None:
            printer.print_string(" syncscope(")
            printer.print_string_literal(self.syncscope.data)
            printer.print_string(")")
        printer.print_string(f" {self.ordering.data}")
        attrs = dict(self.attributes)
        if self.alignment is not None:
            attrs["alignment"] = self.alignment
        printer.print_op_attributes(attrs)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(", ")
        printer.print_attribute(self.val.type)

    @classmethod
    def parse(cls, parser: Parser) -> AtomicRMWOp:
        bin_op = parser.parse_identifier()
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        val = parser.parse_unresolved_operand()
        syncscope = None
        if parser.parse_optional_keyword("syncscope") is not None:
            parser.parse_punctuation("(")
            syncscope = parser.parse_str_literal()
            parser.parse_punctuation(")")
        ordering = parser.parse_identifier()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ptr_type = parser.parse_type()
        parser.parse_punctuation(",")
        val_type = parser.parse_type()
        alignment = attrs.pop("alignment", None)
        op = cls(
            bin_op,
            parser.resolve_operand(ptr, ptr_type),
            parser.resolve_operand(val, val_type),
            ordering=ordering,
            syncscope=syncscope,
            alignment=alignment.value.data
            if isinstance(alignment, IntegerAttr)
            else None,
        )
        op.attributes |= attrs
        return op


def extract_element_op(vector: SSAValue, index: SSAValue) -> ExtractElementOp:
    """`ExtractElementOp(vector, index)` made directly, as the constructors of `tilec.ir.fast`
    make theirs (which also insists on a vector)."""
    t = vector.type
    if not isinstance(t, VectorType):
        return ExtractElementOp(vector, index)  # its error message
    return create(ExtractElementOp, operands=(vector, index), result_types=(t.element_type,))


LLVM_EXTENSION_OPS: Sequence[type[IRDLOperation]] = (
    ExtractElementOp,
    AddrSpaceCastOp,
    FPToSIOp,
    FPToUIOp,
    UIToFPOp,
    AtomicRMWOp,
)
"""Every op this module adds to the `llvm` namespace."""


@cache
def extended_llvm_dialect() -> Dialect:
    """xDSL's `llvm` dialect with the ops above: the `llvm` every tilec context loads."""
    return Dialect("llvm", [*LLVM.operations, *LLVM_EXTENSION_OPS], [*LLVM.attributes])


def load_llvm_extensions(ctx: Context) -> None:
    """Make `ctx` able to parse the ops above (idempotent): for a context not made by tilec."""
    loaded = {op.name for op in ctx.loaded_ops}
    for op in LLVM_EXTENSION_OPS:
        if op.name not in loaded:
            ctx.load_op(op)


__all__ = [
    "ATOMIC_BIN_OPS",
    "ATOMIC_ORDERINGS",
    "CLUSTER_DIM_ATTR",
    "AddrSpaceCastOp",
    "AtomicRMWOp",
    "ExtractElementOp",
    "FPToSIOp",
    "FPToUIOp",
    "GRID_CONSTANT_ATTR",
    "KERNEL_ATTR",
    "LLVM_EXTENSION_OPS",
    "MAXNREG_ATTR",
    "MAXNTID_ATTR",
    "MINCTASM_ATTR",
    "UIToFPOp",
    "extended_llvm_dialect",
    "extract_element_op",
    "load_llvm_extensions",
]
