"""xDSL `llvm` dialect → llvmlite IR, filling the gaps of xDSL's converter.

xDSL's `xdsl.backend.llvm.convert_module` handles CPU-style modules. A GPU
kernel trips over it in the places below; this module is the one place where
tilec works around them. It drives the translation itself (module, globals,
functions, blocks, phis) and translates an op by its own function when it
has one, otherwise by xDSL's `convert_op`. xDSL's converter is never patched.

Gaps filled (xDSL 0.74, llvmlite 0.50 / LLVM 22):

1. GEP on a pointer in address space ≠ 0: xDSL bitcasts the pointer to a
   typed `elem*` in address space 0 (an invalid cross-address-space bitcast)
   and returns a typed pointer that later stores reject. Here GEP works on
   the opaque pointer in its own address space.
2. Globals (`llvm.mlir.global`): xDSL drops `alignment` and gives globals a
   typed pointer type (so a store straight to `addressof` fails). Here the
   alignment is kept, the address is an opaque pointer, and a non-external
   global without a value gets `undef` (as MLIR does), which is what
   `.shared` memory needs.
3. `bf16`: neither xDSL's type converter nor llvmlite knows `bfloat`. Here
   `BFloatType` is an llvmlite type printing `bfloat`, and every type this
   module converts (scalars, vectors, arrays, structs, function types) goes
   through `translate_type`, so `vector<2xbf16>` works in any op translated
   here: load, alloca, casts, constants, zero/undef, call_intrinsic,
   inline_asm, fma, phis and function signatures.
4. Ops missing from xDSL's dialect, defined in `tilec.dialects.llvm_ext`:
   extractelement, addrspacecast, fptosi, fptoui, uitofp, atomicrmw (with
   syncscope and alignment, which llvmlite's own atomicrmw cannot print).
5. Kernels: xDSL's calling-convention attribute cannot say `ptx_kernel`,
   and xDSL ignores function linkage. Here, as in MLIR, an `llvm.func` with
   the discardable attribute `nvvm.kernel` gets the `ptx_kernel` calling
   convention (PTX `.entry`); `nvvm.maxntid`, `nvvm.minctasm`, `nvvm.maxnreg`,
   `nvvm.cluster_dim` become LLVM's string function attributes (PTX `.maxntid`,
   `.minnctapersm`, `.maxnreg`, `.reqnctapercluster`), which llvmlite cannot express either; the
   `passthrough` property is honoured; linkage is kept.
6. `llvm.call_intrinsic` / `llvm.inline_asm`: translated with the types
   above; a second declaration of one intrinsic name with another signature
   is an error that names both, instead of a silently wrong call.
7. Elementwise intrinsics (`llvm.intr.maxnum`, `minnum`, `fabs`, `exp2`,
   `sqrt`, ... and `fma`): xDSL declares most of them without the type
   suffix (`llvm.maxnum`), so one module using maxnum on f32 and on
   vector<2xf16> calls both through one wrongly typed declaration, and its
   fma mangling asserts on bf16. Here each gets its mangled name
   (`llvm.maxnum.f32`, `llvm.maxnum.v2f16`, `llvm.fma.v2bf16`). Fast-math
   flags on them are dropped, as xDSL does (fma refuses them).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import llvmlite.ir as ir
from llvmlite.ir import instructions
import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.backend.llvm.convert_op import CastInstrWithFlags
from xdsl.backend.llvm.convert_op import convert_op as xdsl_convert_op
from xdsl.backend.llvm.convert_type import convert_type as xdsl_convert_type
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float8E4M3FNType,
    Float8E5M2Type,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue, TypeAttribute
from xdsl.utils.exceptions import LLVMTranslationException

from tilec.ir.float8 import f8_bits, saturated_f8
from tilec.dialects import llvm_ext
from tilec.dialects.llvm_ext import (
    CLUSTER_DIM_ATTR,
    GRID_CONSTANT_ATTR,
    KERNEL_ATTR,
    MAXNREG_ATTR,
    MAXNTID_ATTR,
    MINCTASM_ATTR,
)

NVPTX_TRIPLE = "nvptx64-nvidia-cuda"

ValueMap = dict[SSAValue, ir.Value]
BlockMap = dict[Block, ir.Block]


# ---------------------------------------------------------------- types


def _bf16_bits(value: float) -> int:
    """The bfloat16 bit pattern of `value`, rounded to nearest even."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        return 0x7FC0  # a quiet NaN
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF


class BFloatType(ir.Type):
    """LLVM's `bfloat`, which llvmlite 0.50 lacks."""

    null = "0xR0000"
    intrinsic_name = "bf16"

    def _to_string(self) -> str:
        return "bfloat"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BFloatType)

    def __hash__(self) -> int:
        return hash(BFloatType)

    def format_constant(self, value: float) -> str:
        return f"0xR{_bf16_bits(float(value)):04X}"


def translate_type(type_attr: Attribute) -> ir.Type:
    """The llvmlite type of an xDSL type, bf16 included at any depth.

    Made once per type (a kernel asks for a handful of types thousands of
    times); llvmlite types are values that nothing here modifies.
    """
    found = _TYPES.get(type_attr)
    if found is None:
        found = _TYPES[type_attr] = _translate_type(type_attr)
    return found


_TYPES: dict[Attribute, ir.Type] = {}


def unsupported(message: str, op: Operation | None = None) -> NotImplementedError:
    """What the translator cannot write, naming the op (``.op``) so that the error can be located."""
    error = NotImplementedError(message)
    error.op = op  # type: ignore[attr-defined]
    return error


def _translate_type(type_attr: Attribute) -> ir.Type:
    match type_attr:
        case BFloat16Type():
            return BFloatType()
        case Float8E4M3FNType() | Float8E5M2Type():
            # LLVM IR has no 8-bit float: FP8 reaches this level only as memory (GEP element
            # types, bytes a bulk copy or wgmma moves), which an i8 describes exactly
            return ir.IntType(8)
        case VectorType():
            if type_attr.get_num_scalable_dims() or type_attr.get_num_dims() != 1:
                raise NotImplementedError(
                    f"only fixed 1-D vectors translate to LLVM IR, got {type_attr}"
                )
            return ir.VectorType(
                translate_type(type_attr.element_type), type_attr.get_shape()[0]
            )
        case llvm.LLVMArrayType():
            return ir.ArrayType(translate_type(type_attr.type), type_attr.size.data)
        case llvm.LLVMStructType():
            return ir.LiteralStructType([translate_type(t) for t in type_attr.types])
        case llvm.LLVMFunctionType():
            return ir.FunctionType(
                translate_type(type_attr.output),
                [translate_type(t) for t in type_attr.inputs],
                var_arg=type_attr.is_variadic,
            )
        case _:
            return xdsl_convert_type(type_attr)


def _constant(type_attr: Attribute, value: Attribute) -> ir.Constant:
    """An llvmlite constant of `type_attr` from an integer/float/dense attribute (an FP8 value as its byte)."""
    element = type_attr.element_type if isinstance(type_attr, VectorType) else type_attr
    if isinstance(element, Float8E4M3FNType | Float8E5M2Type) and isinstance(value, FloatAttr | DenseIntOrFPElementsAttr):
        values = [value.value.data] if isinstance(value, FloatAttr) else list(value.get_values())
        bits = [int(b) for b in f8_bits(saturated_f8(values, element.name), element.name)]  # as cvt.rn.satfinite
        return ir.Constant(translate_type(type_attr), bits[0] if isinstance(value, FloatAttr) else bits)
    match value:
        case IntegerAttr():
            return ir.Constant(translate_type(type_attr), value.value.data)
        case FloatAttr():
            return ir.Constant(translate_type(type_attr), value.value.data)
        case DenseIntOrFPElementsAttr():
            return ir.Constant(translate_type(type_attr), list(value.get_values()))
        case _:
            raise NotImplementedError(f"unsupported constant attribute {value}")


# ---------------------------------------------------------------- functions


class _FunctionAttributes(ir.values.FunctionAttributes):
    """llvmlite's function attributes plus LLVM string attributes `"k"="v"`.

    llvmlite accepts only a fixed list of keyword attributes; kernels need
    string ones such as `"nvvm.maxntid"="128,1,1"`.
    """

    def __init__(self) -> None:
        super().__init__()
        self.strings: dict[str, str | None] = {}

    def __bool__(self) -> bool:
        return bool(len(self)) or bool(self.strings)

    def _to_list(self, ret_type: ir.Type) -> list[str]:
        words = super()._to_list(ret_type)
        for key, value in self.strings.items():
            words.append(f'"{key}"' if value is None else f'"{key}"="{value}"')
        return words


_ARG_FLAGS = {
    "llvm.noalias": "noalias",
    "llvm.nonnull": "nonnull",
    "llvm.noundef": "noundef",
    "llvm.nofree": "nofree",
    "llvm.nocapture": "captures(none)",
}
_ARG_INTS = {
    "llvm.align": "align",
    "llvm.dereferenceable": "dereferenceable",
    "llvm.dereferenceable_or_null": "dereferenceable_or_null",
}


class _ArgumentAttributes(ir.values.ArgumentAttributes):
    """llvmlite's parameter attributes plus `byval(<type>)` on an opaque pointer and LLVM
    string attributes: llvmlite prints `byval` from the pointee type, which opaque pointers
    lack, and has no string attributes (`"nvvm.grid_constant"`)."""

    def __init__(self) -> None:
        super().__init__()
        self.byval: ir.Type | None = None
        self.strings: list[str] = []

    def __bool__(self) -> bool:
        return bool(len(self)) or self.byval is not None or bool(self.strings) or bool(self.align)

    def _to_list(self, typ: ir.Type) -> list[str]:
        words = super()._to_list(typ)
        if self.byval is not None:
            words.insert(0, f"byval({self.byval})")
        words += [f'"{key}"' for key in self.strings]
        return words


def _int_list(attr: Attribute, what: str) -> list[int]:
    match attr:
        case DenseArrayBase():
            return [int(v) for v in attr.iter_values()]
        case ArrayAttr():
            return [_int_list(a, what)[0] for a in attr]
        case IntegerAttr():
            return [attr.value.data]
        case _:
            raise ValueError(f"{what}: expected integers, got {attr}")


def is_kernel(op: llvm.FuncOp) -> bool:
    """True when `op` is marked as a kernel entry point."""
    return KERNEL_ATTR in op.attributes


def _function_attributes(op: llvm.FuncOp) -> _FunctionAttributes:
    attrs = _FunctionAttributes()
    name = op.sym_name.data
    if op.no_inline is not None:
        attrs.add("noinline")
    if op.passthrough is not None:
        for entry in op.passthrough:
            if isinstance(entry, StringAttr):
                key, value = entry.data, None
            elif (
                isinstance(entry, ArrayAttr)
                and len(entry) == 2
                and all(isinstance(e, StringAttr) for e in entry)
            ):
                key, value = (e.data for e in entry)  # pyright: ignore
            else:
                raise ValueError(f"@{name}: unsupported passthrough entry {entry}")
            if value is None and key in ir.values.FunctionAttributes._known:
                attrs.add(key)
            else:
                attrs.strings[key] = value
    if MAXNTID_ATTR in op.attributes:
        dims = _int_list(op.attributes[MAXNTID_ATTR], f"@{name} {MAXNTID_ATTR}")
        if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
            raise ValueError(
                f"@{name}: {MAXNTID_ATTR} must be 1 to 3 positive sizes, got {dims}"
            )
        attrs.strings[MAXNTID_ATTR] = ",".join(str(d) for d in dims)
    if CLUSTER_DIM_ATTR in op.attributes:
        dims = _int_list(op.attributes[CLUSTER_DIM_ATTR], f"@{name} {CLUSTER_DIM_ATTR}")
        if len(dims) != 3 or any(d <= 0 for d in dims):
            raise ValueError(f"@{name}: {CLUSTER_DIM_ATTR} must be 3 positive sizes, got {dims}")
        attrs.strings[CLUSTER_DIM_ATTR] = ",".join(str(d) for d in dims)
    for key in (MINCTASM_ATTR, MAXNREG_ATTR):
        if key in op.attributes:
            (count,) = _int_list(op.attributes[key], f"@{name} {key}")
            attrs.strings[key] = str(count)
    return attrs


def _declare_function(op: llvm.FuncOp, module: ir.Module) -> ir.Function:
    function_type = translate_type(op.function_type)
    assert isinstance(function_type, ir.FunctionType)
    fn = ir.Function(module, function_type, name=op.sym_name.data)
    linkage = op.linkage.linkage.data
    if is_kernel(op):
        if linkage != "external":
            raise ValueError(
                f"kernel @{op.sym_name.data} must have external linkage, got {linkage}"
            )
        fn.calling_convention = "ptx_kernel"
    else:
        cconv = op.CConv.cconv_name
        fn.calling_convention = "" if cconv == "ccc" else cconv
        if op.body.blocks and linkage != "external":
            fn.linkage = linkage
    fn.attributes = _function_attributes(op)
    if op.arg_attrs is not None:
        for arg, arg_attrs in zip(fn.args, op.arg_attrs, strict=True):
            arg.attributes = _ArgumentAttributes()
            for key, value in arg_attrs.data.items():
                if key == "llvm.byval" and isinstance(value, TypeAttribute):
                    arg.attributes.byval = translate_type(value)
                elif key == GRID_CONSTANT_ATTR:
                    arg.attributes.strings.append(GRID_CONSTANT_ATTR)
                elif key in _ARG_FLAGS:
                    arg.add_attribute(_ARG_FLAGS[key])
                elif key in _ARG_INTS and isinstance(value, IntegerAttr):
                    setattr(arg.attributes, _ARG_INTS[key], value.value.data)
    return fn


def _define_function(op: llvm.FuncOp, fn: ir.Function) -> None:
    values: ValueMap = {}
    blocks: BlockMap = {}
    for index, block in enumerate(op.body.blocks):
        blocks[block] = fn.append_basic_block(name=block.name_hint or "")
        if index == 0:
            values.update(zip(block.args, fn.args, strict=True))
    for block in list(op.body.blocks)[1:]:
        builder = ir.IRBuilder(blocks[block])
        for arg in block.args:
            values[arg] = builder.phi(translate_type(arg.type))
    for block in op.body.blocks:
        builder = ir.IRBuilder(blocks[block])
        if blocks[block].instructions:
            builder.position_after(blocks[block].instructions[-1])
        for inner in block.ops:
            translate_op(inner, builder, values, blocks)


# ---------------------------------------------------------------- globals


def _define_global(op: llvm.GlobalOp, module: ir.Module) -> None:
    addrspace = op.addr_space.value.data
    gvar = ir.GlobalVariable(
        module, translate_type(op.global_type), op.sym_name.data, addrspace
    )
    # Opaque, like every other pointer here, so loads/stores/GEPs on the
    # address of a global need no element-type bookkeeping.
    gvar.type = ir.PointerType(addrspace=addrspace)
    linkage = op.linkage.linkage.data
    gvar.linkage = "" if linkage == "external" and op.value is None else linkage
    gvar.global_constant = op.constant is not None
    if op.alignment is not None:
        gvar.align = op.alignment.value.data
    if isinstance(op.value, StringAttr):
        raw = op.value.data.encode()
        array = ir.ArrayType(ir.IntType(8), len(raw))
        gvar.initializer = ir.Constant(array, bytearray(raw))
    elif op.value is not None:
        gvar.initializer = _constant(op.global_type, op.value)
    # else: llvmlite writes `undef` for non-external linkage, a declaration
    # for external linkage (e.g. extern dynamic shared memory).


# ---------------------------------------------------------------- ops


def _gep(op: llvm.GEPOp, b: ir.IRBuilder, values: ValueMap) -> None:
    ssa = iter(op.ssa_indices)
    indices = [
        values[next(ssa)] if index == llvm.GEP_USE_SSA_VAL else ir.IntType(32)(index)
        for index in op.rawConstantIndices.iter_values()
    ]
    ptr = values[op.ptr]
    result = b.gep(
        ptr,
        indices,
        inbounds=op.inbounds is not None,
        source_etype=translate_type(op.elem_type),
    )
    result.type = ir.PointerType(addrspace=ptr.type.addrspace)
    values[op.result] = result


def _load(op: llvm.LoadOp, b: ir.IRBuilder, values: ValueMap) -> None:
    load = b.load(values[op.ptr], typ=translate_type(op.dereferenced_value.type))
    if op.alignment is not None:
        load.align = op.alignment.value.data
    values[op.dereferenced_value] = load


def _alloca(op: llvm.AllocaOp, b: ir.IRBuilder, values: ValueMap) -> None:
    alloca = b.alloca(translate_type(op.elem_type), size=values[op.size])
    if op.alignment is not None:
        alloca.align = op.alignment.value.data
    values[op.res] = alloca


_CASTS: dict[type[Operation], str] = {
    llvm.TruncOp: "trunc",
    llvm.ZExtOp: "zext",
    llvm.SExtOp: "sext",
    llvm.PtrToIntOp: "ptrtoint",
    llvm.IntToPtrOp: "inttoptr",
    llvm.BitcastOp: "bitcast",
    llvm.FPExtOp: "fpext",
    llvm.FPTruncOp: "fptrunc",
    llvm.SIToFPOp: "sitofp",
    llvm_ext.FPToSIOp: "fptosi",
    llvm_ext.FPToUIOp: "fptoui",
    llvm_ext.UIToFPOp: "uitofp",
    llvm_ext.AddrSpaceCastOp: "addrspacecast",
}


def _cast_flags(op: Operation) -> list[str]:
    match op:
        case llvm.IntegerConversionOpOverflow() if op.overflowFlags:
            return [f.value for f in op.overflowFlags.data]
        case llvm.IntegerConversionOpNNeg() if op.non_neg:
            return ["nneg"]
        case _:
            return []


def _cast(op: Operation, b: ir.IRBuilder, values: ValueMap) -> None:
    flags = _cast_flags(op)
    cast = CastInstrWithFlags(
        b.block,
        _CASTS[type(op)],
        values[op.operands[0]],
        translate_type(op.results[0].type),
        flags=flags,
    )
    b._insert(cast)  # pyright: ignore[reportPrivateUsage]
    values[op.results[0]] = cast


def _llvm_constant(op: llvm.ConstantOp, b: ir.IRBuilder, values: ValueMap) -> None:
    values[op.result] = _constant(op.result.type, op.value)


def _zero(op: llvm.ZeroOp, b: ir.IRBuilder, values: ValueMap) -> None:
    values[op.res] = ir.Constant(translate_type(op.res.type), None)


def _undef(op: llvm.UndefOp, b: ir.IRBuilder, values: ValueMap) -> None:
    values[op.res] = ir.Constant(translate_type(op.res.type), ir.Undefined)


def _declared(module: ir.Module, name: str, fn_type: ir.FunctionType) -> ir.Function:
    """The function `name` of type `fn_type`, declared on first use."""
    existing = module.globals.get(name)
    if existing is None:
        return ir.Function(module, fn_type, name=name)
    if not isinstance(existing, ir.Function) or existing.function_type != fn_type:
        old = getattr(existing, "function_type", existing.type)
        raise ValueError(
            f"intrinsic {name} used as {fn_type} but already declared as {old}"
        )
    return existing


def _call_intrinsic(op: llvm.CallIntrinsicOp, b: ir.IRBuilder, values: ValueMap) -> None:
    if op.op_bundle_operands:
        raise unsupported("llvm.call_intrinsic: operand bundles", op)
    args = [values[a] for a in op.args]
    result_type = translate_type(op.ress.type) if op.ress is not None else ir.VoidType()
    fn_type = ir.FunctionType(result_type, [a.type for a in args])
    call = b.call(_declared(b.module, op.intrin.data, fn_type), args)
    if op.ress is not None:
        values[op.ress] = call


def _inline_asm(op: llvm.InlineAsmOp, b: ir.IRBuilder, values: ValueMap) -> None:
    args = [values[a] for a in op.operands_]
    result_type = translate_type(op.res.type) if op.res is not None else ir.VoidType()
    asm = ir.InlineAsm(
        ir.FunctionType(result_type, [a.type for a in args]),
        op.asm_string.data,
        op.constraints.data,
        side_effect=op.has_side_effects is not None,
    )
    call = b.call(asm, args)
    if op.res is not None:
        values[op.res] = call


def _suffix(ty: ir.Type) -> str:
    """LLVM's overload suffix for a type: `f32`, `v2f16`, `bf16`, `v2bf16`."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{ty.element.intrinsic_name}"
    return ty.intrinsic_name


def _overloaded(b: ir.IRBuilder, base: str, ty: ir.Type, arity: int) -> ir.Function:
    """`base.<suffix>` of type (ty, ...) -> ty, e.g. `llvm.maxnum.v2f16`."""
    fn_type = ir.FunctionType(ty, [ty] * arity)
    return _declared(b.module, f"{base}.{_suffix(ty)}", fn_type)


def _fma(op: llvm.FMAOp, b: ir.IRBuilder, values: ValueMap) -> None:
    if any(op.fastmathFlags.data):
        raise unsupported("llvm.intr.fma: fast-math flags", op)
    fn = _overloaded(b, "llvm.fma", translate_type(op.res.type), 3)
    values[op.res] = b.call(fn, [values[op.a], values[op.b], values[op.c]])


_ELEMENTWISE_INTRINSICS: dict[type[Operation], str] = {
    llvm.FAbsOp: "llvm.fabs",
    llvm.FCeilOp: "llvm.ceil",
    llvm.FFloorOp: "llvm.floor",
    llvm.FSqrtOp: "llvm.sqrt",
    llvm.FExpOp: "llvm.exp",
    llvm.FExp2Op: "llvm.exp2",
    llvm.FLogOp: "llvm.log",
    llvm.FLog2Op: "llvm.log2",
    llvm.FSinOp: "llvm.sin",
    llvm.FCosOp: "llvm.cos",
    llvm.VectorFMaxOp: "llvm.maxnum",
    llvm.VectorFMinOp: "llvm.minnum",
    llvm.FPowOp: "llvm.pow",
    llvm.FCopySignOp: "llvm.copysign",
}


def _elementwise_intrinsic(op: Operation, b: ir.IRBuilder, values: ValueMap) -> None:
    args = [values[a] for a in op.operands]
    fn = _overloaded(b, _ELEMENTWISE_INTRINSICS[type(op)], args[0].type, len(args))
    values[op.results[0]] = b.call(fn, args)


def _extract_element(
    op: llvm_ext.ExtractElementOp, b: ir.IRBuilder, values: ValueMap
) -> None:
    values[op.res] = b.extract_element(values[op.vector], values[op.position])


class _AtomicRMWInstr(instructions.AtomicRMW):
    """llvmlite's atomicrmw, plus the syncscope and alignment it cannot print."""

    def __init__(self, parent: ir.Block, op: str, ptr: ir.Value, val: ir.Value,
                 ordering: str, syncscope: str | None, align: int | None):
        super().__init__(parent, op, ptr, val, ordering, name="")
        self.syncscope = syncscope
        self.align = align

    def descr(self, buf: list[str]) -> None:
        ptr, val = self.operands
        scope = f' syncscope("{self.syncscope}")' if self.syncscope else ""
        align = f", align {self.align}" if self.align else ""
        buf.append(
            f"atomicrmw {self.operation} {ptr.type} {ptr.get_reference()}, "
            f"{val.type} {val.get_reference()}{scope} {self.ordering}{align}"
            f"{self._stringify_metadata(leading_comma=True)}\n"
        )


def _atomic_rmw(op: llvm_ext.AtomicRMWOp, b: ir.IRBuilder, values: ValueMap) -> None:
    instr = _AtomicRMWInstr(
        b.block,
        op.bin_op.data,
        values[op.ptr],
        values[op.val],
        op.ordering.data,
        op.syncscope.data if op.syncscope is not None else None,
        op.alignment.value.data if op.alignment is not None else None,
    )
    b._insert(instr)  # pyright: ignore[reportPrivateUsage]
    values[op.res] = instr


# The ops below are translated as xDSL's `convert_op` does (same llvmlite calls, same flags,
# same phi incoming order), without its dispatch through a chain of `match` cases.

_BINARY: dict[type[Operation], str] = {
    llvm.AddOp: "add", llvm.SubOp: "sub", llvm.MulOp: "mul", llvm.UDivOp: "udiv", llvm.SDivOp: "sdiv",
    llvm.URemOp: "urem", llvm.SRemOp: "srem", llvm.ShlOp: "shl", llvm.LShrOp: "lshr", llvm.AShrOp: "ashr",
    llvm.AndOp: "and_", llvm.OrOp: "or_", llvm.XOrOp: "xor",
    llvm.FAddOp: "fadd", llvm.FSubOp: "fsub", llvm.FMulOp: "fmul", llvm.FDivOp: "fdiv", llvm.FRemOp: "frem",
}
"""`llvm` binary op → the `ir.IRBuilder` method that makes its instruction."""


def _binary_flags(op: Operation) -> list[str]:
    match op:
        case llvm.ArithmeticBinOpOverflow() if op.overflowFlags:
            return [f.value for f in llvm.OverflowAttr.from_int(op.overflowFlags.value.data).data]
        case llvm.AbstractFloatArithOp() if op.fastmathFlags:
            return [f.value for f in op.fastmathFlags.data]
        case llvm.ArithmeticBinOpExact() if op.is_exact:
            return ["exact"]
        case llvm.ArithmeticBinOpDisjoint() if op.is_disjoint:
            return ["disjoint"]
        case _:
            return []


def _binary(op: Operation, b: ir.IRBuilder, values: ValueMap) -> None:
    flags = _binary_flags(op)
    make = getattr(b, _BINARY[type(op)])
    lhs, rhs = op.operands
    result = make(values[lhs], values[rhs], flags=flags) if flags else make(values[lhs], values[rhs])
    values[op.results[0]] = result


_ICMP: dict[int, tuple[str, bool]] = {
    llvm.ICmpPredicateFlag(name).to_int(): (cmp, signed)
    for name, cmp, signed in (("eq", "==", True), ("ne", "!=", True), ("slt", "<", True), ("sle", "<=", True),
                              ("ult", "<", False), ("ule", "<=", False), ("sgt", ">", True), ("sge", ">=", True),
                              ("ugt", ">", False), ("uge", ">=", False))
}
"""`llvm.icmp` predicate → (llvmlite comparison, signed)."""


def _icmp(op: llvm.ICmpOp, b: ir.IRBuilder, values: ValueMap) -> None:
    cmp, signed = _ICMP[op.predicate.value.data]
    compare = b.icmp_signed if signed else b.icmp_unsigned
    values[op.res] = compare(cmp, values[op.lhs], values[op.rhs])


def _extract_value(op: llvm.ExtractValueOp, b: ir.IRBuilder, values: ValueMap) -> None:
    values[op.res] = b.extract_value(values[op.container], list(op.position.iter_values()))


def _insert_element(op: llvm.InsertElementOp, b: ir.IRBuilder, values: ValueMap) -> None:
    values[op.res] = b.insert_element(values[op.vector], values[op.value], values[op.index])


def _store(op: llvm.StoreOp, b: ir.IRBuilder, values: ValueMap) -> None:
    store = b.store(values[op.value], values[op.ptr])
    if op.alignment:
        store.align = op.alignment.value.data


def _select(op: llvm.SelectOp, b: ir.IRBuilder, values: ValueMap) -> None:
    values[op.res] = b.select(values[op.cond], values[op.lhs], values[op.rhs])


def _add_incoming(dest: Block, args: Sequence[SSAValue], source: ir.Block, values: ValueMap) -> None:
    for arg, value in zip(dest.args, args):
        phi = values[arg]
        assert isinstance(phi, instructions.PhiInstr)
        phi.add_incoming(values[value], source)


def _br(op: llvm.BrOp, b: ir.IRBuilder, values: ValueMap, blocks: BlockMap) -> None:
    _add_incoming(op.successor, op.arguments, blocks[op.parent], values)
    b.branch(blocks[op.successor])


def _cond_br(op: llvm.CondBrOp, b: ir.IRBuilder, values: ValueMap, blocks: BlockMap) -> None:
    source = blocks[op.parent]
    _add_incoming(op.then_block, op.then_arguments, source, values)
    _add_incoming(op.else_block, op.else_arguments, source, values)
    b.cbranch(values[op.cond], blocks[op.then_block], blocks[op.else_block])


_BRANCHES: dict[type[Operation], Callable[[Any, ir.IRBuilder, ValueMap, BlockMap], None]] = {
    llvm.BrOp: _br,
    llvm.CondBrOp: _cond_br,
}


_TRANSLATIONS: dict[type[Operation], Callable[[Any, ir.IRBuilder, ValueMap], None]] = {
    **{binary: _binary for binary in _BINARY},
    llvm.ICmpOp: _icmp,
    llvm.ExtractValueOp: _extract_value,
    llvm.InsertElementOp: _insert_element,
    llvm.StoreOp: _store,
    llvm.SelectOp: _select,
    llvm.GEPOp: _gep,
    llvm.LoadOp: _load,
    llvm.AllocaOp: _alloca,
    llvm.ConstantOp: _llvm_constant,
    llvm.ZeroOp: _zero,
    llvm.UndefOp: _undef,
    llvm.CallIntrinsicOp: _call_intrinsic,
    llvm.InlineAsmOp: _inline_asm,
    llvm.FMAOp: _fma,
    llvm_ext.ExtractElementOp: _extract_element,
    llvm_ext.AtomicRMWOp: _atomic_rmw,
    **{cast: _cast for cast in _CASTS},
    **{op: _elementwise_intrinsic for op in _ELEMENTWISE_INTRINSICS},
}


def translate_op(
    op: Operation, builder: ir.IRBuilder, values: ValueMap, blocks: BlockMap
) -> None:
    """Append `op` to `builder`: our translation if we have one, else xDSL's."""
    with _at(op):
        translation = _TRANSLATIONS.get(type(op))
        if translation is not None:
            translation(op, builder, values)
        elif (branch := _BRANCHES.get(type(op))) is not None:
            branch(op, builder, values, blocks)
        else:
            xdsl_convert_op(op, builder, values, blocks)


@contextmanager
def _at(op: Operation) -> Iterator[None]:
    """What cannot be translated inside (a type LLVM lacks: xDSL's ``LLVMTranslationException`` names
    only the type) is said at ``op``: the error carries it as ``.op``, as :func:`unsupported` does."""
    try:
        yield
    except (NotImplementedError, LLVMTranslationException) as e:
        if getattr(e, "op", None) is None:
            e.op = op  # type: ignore[attr-defined]
        raise


# ---------------------------------------------------------------- module


def translate_module(
    module: ModuleOp, *, triple: str = NVPTX_TRIPLE, data_layout: str = ""
) -> ir.Module:
    """The llvmlite module of an xDSL module of `llvm.func`s and `llvm.mlir.global`s.

    The module's `llvm.target_triple` attribute, if any, wins over `triple`.
    """
    result, declared = _module_shell(module, triple, data_layout)
    for op, fn in declared:
        if op.body.blocks:
            _define_function(op, fn)
    return result


def _module_shell(
    module: ModuleOp, triple: str, data_layout: str
) -> tuple[ir.Module, list[tuple[llvm.FuncOp, ir.Function]]]:
    """The llvmlite module with the globals and the functions declared: everything but the bodies."""
    result = ir.Module()
    module_triple = module.attributes.get("llvm.target_triple")
    if isinstance(module_triple, StringAttr):
        triple = module_triple.data
    result.triple = triple
    if data_layout:
        result.data_layout = data_layout
    globals_: list[llvm.GlobalOp] = []
    functions: list[llvm.FuncOp] = []
    for op in module.ops:
        match op:
            case llvm.GlobalOp():
                globals_.append(op)
            case llvm.FuncOp():
                functions.append(op)
            case _:
                raise unsupported(f"cannot translate top-level op {op.name} to LLVM IR: "
                                  "expected llvm.func or llvm.mlir.global", op)
    for global_op in globals_:
        _define_global(global_op, result)
    return result, [(f, _declare_function(f, result)) for f in functions]


# ---------------------------------------------------------------- the text, written directly


def module_text(module: ModuleOp, *, triple: str = NVPTX_TRIPLE, data_layout: str = "") -> str:
    """`str(translate_module(module, ...))`, the function bodies written as text directly.

    Building llvmlite's instruction objects and then printing them costs about
    as much as all of tile-to-llvm's lowering; here each op of a body becomes
    its line of text at once, formatted as llvmlite prints that instruction and
    named as llvmlite names it (the tests compare both texts on every sample
    kernel). The module's globals, the prototypes and the intrinsic
    declarations are still llvmlite's. A body with an op or a block that the
    writer does not know (`_BodyWriter.OPS`) is translated by llvmlite instead.
    """
    shell, declared = _module_shell(module, triple, data_layout)
    bodies: dict[ir.Function, str] = {}
    try:
        for op, fn in declared:
            if op.body.blocks:
                bodies[fn] = _BodyWriter(fn).write(op)
    except _NotDirect:
        return str(translate_module(module, triple=triple, data_layout=data_layout))
    lines = ['; ModuleID = "%s"' % (shell.name,), 'target triple = "%s"' % (shell.triple,),
             'target datalayout = "%s"' % (shell.data_layout,), ""]
    for value in shell.globals.values():
        body = bodies.get(value)  # type: ignore[call-overload]
        lines.append(str(value) if body is None else _prototype(value) + "{\n" + body + "}\n")
    return "\n".join(lines)  # no metadata: translate_module makes none


class _NotDirect(Exception):
    """An op or block that :class:`_BodyWriter` leaves to llvmlite."""


def _prototype(fn: ir.Function) -> str:
    """llvmlite's `Function.descr_prototype` of a defined function (no metadata, no section)."""
    if fn.ftype.var_arg or fn.section or fn.metadata:
        raise _NotDirect
    attrs = " " + " ".join(fn.attributes._to_list(fn.ftype.return_type)) if fn.attributes else ""
    prefix = " ".join(str(x) for x in ["define", fn.linkage, fn.calling_convention, fn.return_value] if x)
    args = ", ".join(str(a) for a in fn.args)
    return f"{prefix} {fn.get_reference()}({args}){attrs}\n"


_TYPE_TEXT: dict[Attribute, str] = {}


def _type_text(type_attr: Attribute) -> str:
    found = _TYPE_TEXT.get(type_attr)
    if found is None:
        found = _TYPE_TEXT[type_attr] = str(translate_type(type_attr))
    return found


class _BodyWriter:
    """The text of one function body, as `_define_function` and llvmlite would print it.

    llvmlite names every unnamed value of a function `.N` in creation order:
    the arguments, the return value, then (as `_define_function` creates them)
    every block, the phis of the block arguments, and one instruction per op
    (constants and addresses of globals are operands, not instructions).
    """

    def __init__(self, fn: ir.Function):
        self.fn = fn
        self.count = len(fn.args) + 1  # llvmlite's names so far: the arguments and the return value
        self.refs: dict[SSAValue, str] = {}
        self.phis: dict[Block, list[tuple[str, str, list[str]]]] = {}  # block -> (name, type, incomings)
        self.labels: dict[Block, str] = {}
        self.types: dict[int, str] = {}  # by identity: hashing a type attribute costs more than the line

    def _type(self, type_attr: Attribute) -> str:
        found = self.types.get(id(type_attr))
        if found is None:
            found = self.types[id(type_attr)] = _type_text(type_attr)  # the attribute outlives the writer
        return found

    def _name(self) -> str:
        self.count += 1
        return f".{self.count}"

    def _typed(self, value: SSAValue) -> str:
        return f"{self._type(value.type)} {self.refs[value]}"

    def write(self, op: llvm.FuncOp) -> str:
        blocks = list(op.body.blocks)
        if any(block.name_hint for block in blocks):
            raise _NotDirect
        for block in blocks:
            self.labels[block] = self._name()
        self.refs.update((arg, a.get_reference()) for arg, a in zip(blocks[0].args, self.fn.args, strict=True))
        for block in blocks[1:]:
            phis = self.phis[block] = []
            for arg in block.args:
                name = self._name()
                self.refs[arg] = f'%"{name}"'
                phis.append((name, self._type(arg.type), []))
        bodies = [self._block(block) for block in blocks]  # the phis' incomings are known after all blocks
        out: list[str] = []
        for block, lines in zip(blocks, bodies):
            out.append(f"{self.labels[block]}:\n")
            for name, ty, incoming in self.phis.get(block, ()):
                out.append(f'  %"{name}" = phi  {ty} {", ".join(incoming)}\n')
            out += [f"  {line}\n" for line in lines]
        return "".join(out)

    def _block(self, block: Block) -> list[str]:
        lines: list[str] = []
        for op in block.ops:
            write = self.OPS.get(type(op))
            if write is None:
                raise _NotDirect
            with _at(op):
                line = write(self, op)
            if line is None:
                continue  # an operand, not an instruction
            name = self._name()
            if op.results and not isinstance(op.results[0].type, llvm.LLVMVoidType):
                self.refs[op.results[0]] = f'%"{name}"'
                line = f'%"{name}" = {line}'
            lines.append(line)
        return lines

    # one function per op kind: the instruction's text after `%".N" = `, or None for an operand

    def _binary(self, op: Operation) -> str:
        lhs, rhs = op.operands
        opname = _BINARY[type(op)].rstrip("_")
        flags = _binary_flags(op)
        if flags:
            opname = " ".join([opname, *flags])
        return f"{opname} {self._type(lhs.type)} {self.refs[lhs]}, {self.refs[rhs]}"

    def _icmp(self, op: llvm.ICmpOp) -> str:
        name = llvm.ICmpPredicateFlag.from_int(op.predicate.value.data).value
        return f"icmp {name} {self._type(op.lhs.type)} {self.refs[op.lhs]}, {self.refs[op.rhs]}"

    def _cast(self, op: Operation) -> str:
        opname = " ".join([_CASTS[type(op)], *_cast_flags(op)])
        return f"{opname} {self._typed(op.operands[0])} to {self._type(op.results[0].type)}"

    def _select(self, op: llvm.SelectOp) -> str:
        return f"select  {self._typed(op.cond)}, {self._typed(op.lhs)}, {self._typed(op.rhs)}"

    def _constant(self, op: llvm.ConstantOp) -> None:
        self.refs[op.result] = _constant(op.result.type, op.value).get_reference()

    def _zero(self, op: llvm.ZeroOp) -> None:
        self.refs[op.res] = ir.Constant(translate_type(op.res.type), None).get_reference()

    def _undef(self, op: llvm.UndefOp) -> None:
        self.refs[op.res] = ir.Constant(translate_type(op.res.type), ir.Undefined).get_reference()

    def _address_of(self, op: llvm.AddressOfOp) -> None:
        self.refs[op.result] = self.fn.module.get_global(op.global_name.root_reference.data).get_reference()

    def _gep(self, op: llvm.GEPOp) -> str:
        ssa = iter(op.ssa_indices)
        indices = [self._typed(next(ssa)) if index == llvm.GEP_USE_SSA_VAL else f"i32 {index}"
                   for index in op.rawConstantIndices.iter_values()]
        opname = "getelementptr inbounds" if op.inbounds is not None else "getelementptr"
        return f"{opname} {self._type(op.elem_type)}, {self._typed(op.ptr)}, {', '.join(indices)}"

    def _load(self, op: llvm.LoadOp) -> str:
        align = f", align {op.alignment.value.data}" if op.alignment is not None else ""
        return f"load {self._type(op.dereferenced_value.type)}, {self._typed(op.ptr)}{align}"

    def _store(self, op: llvm.StoreOp) -> str:
        align = f", align {op.alignment.value.data}" if op.alignment else ""
        return f"store {self._typed(op.value)}, {self._typed(op.ptr)}{align}"

    def _extract_value(self, op: llvm.ExtractValueOp) -> str:
        indices = ", ".join(str(i) for i in op.position.iter_values())
        return f"extractvalue {self._typed(op.container)}, {indices}"

    def _insert_element(self, op: llvm.InsertElementOp) -> str:
        return f"insertelement {self._typed(op.vector)}, {self._typed(op.value)}, {self._typed(op.index)}"

    def _extract_element(self, op: llvm_ext.ExtractElementOp) -> str:
        return f"extractelement {self._typed(op.vector)}, {self._typed(op.position)}"

    def _call(self, callee: ir.Function, args: Sequence[SSAValue]) -> str:
        ret = callee.function_type.return_type
        return f"call {ret} {callee.get_reference()}({', '.join(self._typed(a) for a in args)})"

    def _call_intrinsic(self, op: llvm.CallIntrinsicOp) -> str:
        if op.op_bundle_operands:
            raise _NotDirect
        result_type = translate_type(op.ress.type) if op.ress is not None else ir.VoidType()
        fn_type = ir.FunctionType(result_type, [translate_type(a.type) for a in op.args])
        return self._call(_declared(self.fn.module, op.intrin.data, fn_type), op.args)

    def _fma(self, op: llvm.FMAOp) -> str:
        if any(op.fastmathFlags.data):
            raise _NotDirect
        ty = translate_type(op.res.type)
        return self._call(_declared(self.fn.module, f"llvm.fma.{_suffix(ty)}", ir.FunctionType(ty, [ty] * 3)),
                          [op.a, op.b, op.c])

    def _elementwise_intrinsic(self, op: Operation) -> str:
        ty = translate_type(op.operands[0].type)
        name = f"{_ELEMENTWISE_INTRINSICS[type(op)]}.{_suffix(ty)}"
        return self._call(_declared(self.fn.module, name, ir.FunctionType(ty, [ty] * len(op.operands))), op.operands)

    def _inline_asm(self, op: llvm.InlineAsmOp) -> str:
        result_type = translate_type(op.res.type) if op.res is not None else ir.VoidType()
        fn_type = ir.FunctionType(result_type, [translate_type(a.type) for a in op.operands_])
        asm = ir.InlineAsm(fn_type, op.asm_string.data, op.constraints.data,
                           side_effect=op.has_side_effects is not None)
        return f"call {result_type} {asm.get_reference()}({', '.join(self._typed(a) for a in op.operands_)})"

    def _incoming(self, dest: Block, args: Sequence[SSAValue], source: Block) -> None:
        for (_, _, incoming), value in zip(self.phis.get(dest, ()), args):
            incoming.append(f'[{self.refs[value]}, %"{self.labels[source]}"]')

    def _br(self, op: llvm.BrOp) -> str:
        self._incoming(op.successor, op.arguments, op.parent)
        return f'br label %"{self.labels[op.successor]}"'

    def _cond_br(self, op: llvm.CondBrOp) -> str:
        self._incoming(op.then_block, op.then_arguments, op.parent)
        self._incoming(op.else_block, op.else_arguments, op.parent)
        return (f'br {self._typed(op.cond)}, label %"{self.labels[op.then_block]}", '
                f'label %"{self.labels[op.else_block]}"')

    def _return(self, op: llvm.ReturnOp) -> str:
        return f"ret {self._typed(op.arg)}" if op.arg is not None else "ret void"

    OPS: dict[type[Operation], Callable[[Any, Any], str | None]] = {
        **dict.fromkeys(_BINARY, _binary),
        llvm.ICmpOp: _icmp,
        **dict.fromkeys(_CASTS, _cast),
        llvm.SelectOp: _select,
        llvm.ConstantOp: _constant,
        llvm.ZeroOp: _zero,
        llvm.UndefOp: _undef,
        llvm.AddressOfOp: _address_of,
        llvm.GEPOp: _gep,
        llvm.LoadOp: _load,
        llvm.StoreOp: _store,
        llvm.ExtractValueOp: _extract_value,
        llvm.InsertElementOp: _insert_element,
        llvm_ext.ExtractElementOp: _extract_element,
        llvm.CallIntrinsicOp: _call_intrinsic,
        llvm.FMAOp: _fma,
        **dict.fromkeys(_ELEMENTWISE_INTRINSICS, _elementwise_intrinsic),
        llvm.InlineAsmOp: _inline_asm,
        llvm.BrOp: _br,
        llvm.CondBrOp: _cond_br,
        llvm.ReturnOp: _return,
    }
    """The ops written directly: those tile-to-llvm makes (others: llvmlite)."""


__all__ = [
    "BFloatType",
    "KERNEL_ATTR",
    "MAXNREG_ATTR",
    "MAXNTID_ATTR",
    "MINCTASM_ATTR",
    "NVPTX_TRIPLE",
    "is_kernel",
    "module_text",
    "translate_module",
    "translate_op",
    "translate_type",
]
