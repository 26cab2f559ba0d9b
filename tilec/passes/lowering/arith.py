"""``arith``, ``math``, ``vector`` and ``cf`` → ``llvm``.

Integer and float arithmetic, comparisons, ``select`` and casts become their
llvm counterparts one for one (fast-math and overflow flags are dropped: they
only permit optimisations; float add, sub and mul get ``contract``, see
:data:`_CONTRACTABLE`); the few arith ops without one (``min``/``max`` on
integers, ``ceildivui``) become short sequences. ``index`` has already been
retyped to ``i64`` (see :mod:`~tilec.passes.lowering.types`), so
``index_cast`` is a sign extension, a truncation or nothing.

``math.fma/absf/sqrt`` become the LLVM intrinsics; ``math.exp2/exp/log/log2/rsqrt/tanh``
PTX's approximate f32 instructions (``ex2.ftz``/``lg2`` with a scale, ``rsqrt``, ``tanh``; 16-bit
values through f32); ``vector.extract`` /
``vector.insert`` at static positions of 1-D vectors become
``llvm.extractelement`` / ``llvm.insertelement``, ``vector.broadcast`` of a
scalar a chain of inserts, ``vector.bitcast`` a bitcast. ``cf.br`` and
``cf.cond_br`` become ``llvm.br`` / ``llvm.cond_br`` (``scf`` reaches here
already lowered to ``cf`` by xDSL's ``convert-scf-to-cf`` patterns).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.builder import Builder
from xdsl.dialects import arith, cf, llvm, math, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
)
from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from tilec.dialects import llvm_ext
from tilec.ir import fast
from tilec.passes.lowering import nvvm as N
from tilec.passes.lowering.fp8 import is_fp8_cast, lower_fp8_cast
from tilec.passes.lowering.llvm_build import const_i32, constant

Lowering = Callable[[Operation, Builder], list[SSAValue]]
"""Builds the replacement of ``op`` before it; returns the values replacing its results."""


def _width(t: Attribute) -> int:
    """Bit width of an integer or float type, or of a vector's elements."""
    if isinstance(t, VectorType):
        t = t.element_type
    if isinstance(t, IntegerType):
        return t.width.data
    assert isinstance(t, AnyFloat)
    return t.bitwidth


# ---------------------------------------------------------------- arith


_INT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRSIOp: llvm.AShrOp,
    arith.ShRUIOp: llvm.LShrOp,
}

_FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
    arith.MaxnumfOp: llvm.VectorFMaxOp,
    arith.MinnumfOp: llvm.VectorFMinOp,
}

_CASTS: dict[type[Operation], type[Operation]] = {
    arith.ExtSIOp: llvm.SExtOp,
    arith.ExtUIOp: llvm.ZExtOp,
    arith.TruncIOp: llvm.TruncOp,
    arith.ExtFOp: llvm.FPExtOp,
    arith.TruncFOp: llvm.FPTruncOp,
    arith.SIToFPOp: llvm.SIToFPOp,
    arith.UIToFPOp: llvm_ext.UIToFPOp,
    arith.FPToSIOp: llvm_ext.FPToSIOp,
    arith.FPToUIOp: llvm_ext.FPToUIOp,
    arith.BitcastOp: llvm.BitcastOp,
}

_MIN_MAX_INT: dict[type[Operation], str] = {
    arith.MinSIOp: "slt",
    arith.MaxSIOp: "sgt",
    arith.MinUIOp: "ult",
    arith.MaxUIOp: "ugt",
}

_NAN_PROPAGATING: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
}


def _constant(op: arith.ConstantOp, b: Builder) -> list[SSAValue]:
    t = op.result.type  # already retyped
    value = op.value
    match value:
        case IntegerAttr():
            attr: Attribute = fast.int_attr(value.value.data, t)
        case FloatAttr():
            attr = value
        case DenseIntOrFPElementsAttr():
            assert isinstance(t, VectorType)
            attr = (
                value
                if value.get_type() == t
                else DenseIntOrFPElementsAttr.from_list(t, list(value.get_values()))
            )
        case _:
            raise ValueError(f"arith.constant: cannot lower the value {value}")
    return [b.insert(fast.constant_op(attr, t)).result]


def _icmp(b: Builder, predicate: str, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return b.insert(fast.icmp_op(predicate, lhs, rhs)).res


def _cmpi(op: arith.CmpiOp, b: Builder) -> list[SSAValue]:
    name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    return [_icmp(b, name, op.lhs, op.rhs)]


def _cmpf(op: arith.CmpfOp, b: Builder) -> list[SSAValue]:
    name = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    if name in ("false", "true"):
        t = op.result.type
        if isinstance(t, VectorType):
            count = t.get_shape()[0]
            dense = DenseIntOrFPElementsAttr.from_list(t, [name == "true"] * count)
            return [b.insert(fast.constant_op(dense, t)).result]
        return [constant(b, int(name == "true"), i1)]
    return [b.insert(fast.fcmp_op(name, op.lhs, op.rhs)).res]


def _select(op: arith.SelectOp, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.select_op(op.cond, op.lhs, op.rhs)).res]


def _index_cast(op: arith.IndexCastOp, b: Builder) -> list[SSAValue]:
    source, target = op.input.type, op.result.type
    src_bits, dst_bits = _width(source), _width(target)
    if src_bits == dst_bits:
        return [op.input]
    cast = llvm.SExtOp if dst_bits > src_bits else llvm.TruncOp
    return [b.insert(fast.cast_op(cast, op.input, target)).results[0]]


def _cast(op: Operation, b: Builder) -> list[SSAValue]:
    if is_fp8_cast(op):  # PTX's cvt: LLVM has no 8-bit float
        return lower_fp8_cast(op, b)
    source, target = op.operands[0], op.results[0].type
    if source.type == target and not isinstance(op, arith.BitcastOp):
        return [source]
    return [b.insert(fast.cast_op(_CASTS[type(op)], source, target)).results[0]]


def _int_binary(op: Operation, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.binary_op(_INT_BINARY[type(op)], op.operands[0], op.operands[1])).results[0]]


_CONTRACTABLE = (arith.AddfOp, arith.SubfOp, arith.MulfOp)
"""Float ops lowered with LLVM's ``contract`` flag: a multiply feeding an add may become one ``fma``
(rounded once), as Triton (``enable_fp_fusion``) and CUDA C++ (``-fmad=true``) do by default.
Without it NVPTX writes ``mul.rn``/``add.rn``, which ptxas may not fuse: attention's
``exp2(s * scale - m)`` took a multiply and a subtract per score instead of one FFMA."""

_CONTRACT = llvm.FastMathAttr([llvm.FastMathFlag.ALLOW_CONTRACT])


def _float_binary(op: Operation, b: Builder) -> list[SSAValue]:
    new = fast.binary_op(_FLOAT_BINARY[type(op)], op.operands[0], op.operands[1])
    if isinstance(op, _CONTRACTABLE):
        new.properties["fastmathFlags"] = _CONTRACT
    return [b.insert(new).results[0]]


def _negf(op: arith.NegfOp, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.float_unary_op(llvm.FNegOp, op.operand)).res]


def _min_max_int(op: Operation, b: Builder) -> list[SSAValue]:
    lhs, rhs = op.operands
    keep_lhs = _icmp(b, _MIN_MAX_INT[type(op)], lhs, rhs)
    return [b.insert(fast.select_op(keep_lhs, lhs, rhs)).res]


def intrinsic_suffix(t: Attribute) -> str:
    """LLVM's overload suffix of a type: ``f32``, ``bf16``, ``v2f16``, ``i64``."""
    if isinstance(t, VectorType):
        return f"v{t.get_shape()[0]}{intrinsic_suffix(t.element_type)}"
    if isinstance(t, IntegerType):
        return f"i{t.width.data}"
    if isinstance(t, BFloat16Type):
        return "bf16"
    return f"f{_width(t)}"


def _nan_propagating(op: Operation, b: Builder) -> list[SSAValue]:
    lhs, rhs = op.operands
    name = f"{_NAN_PROPAGATING[type(op)]}.{intrinsic_suffix(lhs.type)}"
    call = b.insert(fast.call_intrinsic_op(name, [lhs, rhs], [lhs.type]))
    assert call.ress is not None
    return [call.ress]


def _ceildivui(op: arith.CeilDivUIOp, b: Builder) -> list[SSAValue]:
    """``a == 0 ? 0 : (a - 1) / b + 1`` (no overflow, unlike ``(a + b - 1) / b``)."""
    a, d = op.lhs, op.rhs
    t = a.type
    if isinstance(t, VectorType):
        raise ValueError("arith.ceildivui: vectors are not supported")
    zero, one = constant(b, 0, t), constant(b, 1, t)
    is_zero = _icmp(b, "eq", a, zero)
    quotient = b.insert(fast.binary_op(llvm.UDivOp, b.insert(fast.binary_op(llvm.SubOp, a, one)).res, d)).res
    rounded = b.insert(fast.binary_op(llvm.AddOp, quotient, one)).res
    return [b.insert(fast.select_op(is_zero, zero, rounded)).res]


# ---------------------------------------------------------------- math


def _fma(op: math.FmaOp, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.fma_op(op.a, op.b, op.c)).res]


def _absf(op: math.AbsFOp, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.float_unary_op(llvm.FAbsOp, op.operand)).results[0]]  # math.absf keeps its operand's type


def _sqrt(op: math.SqrtOp, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.float_unary_op(llvm.FSqrtOp, op.operand)).results[0]]


def _exp2(op: math.Exp2Op, b: Builder) -> list[SSAValue]:
    """``ex2.approx.ftz.f32`` (16-bit values through f32), CUDA's fast-math ``exp2f``: without ``.ftz``
    ptxas guards every ``MUFU.EX2`` against denormals with a compare and two multiplies, which in
    attention's loop were a quarter of its instructions. Results below 2^-126 become 0."""
    if op.operand.type not in (f32, f16, bf16):
        return [b.insert(fast.float_unary_op(llvm.FExp2Op, op.operand)).results[0]]
    return [_in_f32(b, op.operand, lambda x: N.ex2_approx(b, x, ftz=True))]


LOG2_E = 1.4426950408889634
LN_2 = 0.6931471805599453


def _in_f32(b: Builder, x: SSAValue, compute) -> SSAValue:
    """``compute`` on ``x`` in f32 (16-bit values extended first, the result rounded back once)."""
    if x.type == f32:
        return compute(x)
    if x.type not in (f16, bf16):
        raise ValueError(f"no f32 approximation of a {x.type} value (f16, bf16 and f32 have one)")
    y = compute(b.insert(fast.cast_op(llvm.FPExtOp, x, f32)).results[0])
    return b.insert(fast.cast_op(llvm.FPTruncOp, y, x.type)).results[0]


def _scaled(b: Builder, x: SSAValue, scale: float) -> SSAValue:
    c = b.insert(fast.constant_op(FloatAttr(scale, f32), f32)).results[0]
    return b.insert(fast.binary_op(llvm.FMulOp, x, c)).results[0]


def _exp(op: math.ExpOp, b: Builder) -> list[SSAValue]:
    """``exp(x) = 2^(x log2 e)``: one multiply and ``ex2.approx.ftz.f32`` (as FlashAttention does; see
    :func:`_exp2` for the flush)."""
    return [_in_f32(b, op.operand, lambda x: N.ex2_approx(b, _scaled(b, x, LOG2_E), ftz=True))]


def _log(op: math.LogOp, b: Builder) -> list[SSAValue]:
    """``log(x) = log2(x) ln 2``: ``lg2.approx.f32`` and one multiply."""
    return [_in_f32(b, op.operand, lambda x: _scaled(b, N.approx_f32(b, "lg2", x), LN_2))]


def _log2(op: math.Log2Op, b: Builder) -> list[SSAValue]:
    return [_in_f32(b, op.operand, lambda x: N.approx_f32(b, "lg2", x))]


def _rsqrt(op: math.RsqrtOp, b: Builder) -> list[SSAValue]:
    return [_in_f32(b, op.operand, lambda x: N.approx_f32(b, "rsqrt", x))]


def _tanh(op: math.TanhOp, b: Builder) -> list[SSAValue]:
    return [_in_f32(b, op.operand, lambda x: N.approx_f32(b, "tanh", x))]


def _sin(op: math.SinOp, b: Builder) -> list[SSAValue]:
    """``sin.approx.f32`` (CUDA's fast-math ``__sinf``: about 2^-21 absolute error on [-pi, pi], worse far out)."""
    return [_in_f32(b, op.operand, lambda x: N.approx_f32(b, "sin", x))]


def _cos(op: math.CosOp, b: Builder) -> list[SSAValue]:
    return [_in_f32(b, op.operand, lambda x: N.approx_f32(b, "cos", x))]


_ROUNDING = {math.FloorOp: "floor", math.CeilOp: "ceil", math.TruncOp: "trunc", math.RoundEvenOp: "roundeven"}
"""Rounding to an integral float: LLVM's intrinsics, one ``cvt.rmi/rpi/rzi/rni`` each in PTX (exact)."""


def _rounding(op: Operation, b: Builder) -> list[SSAValue]:
    x = op.operands[0]
    if x.type == f64:  # exact in f64 too (cvt.rmi.f64.f64 ...)
        return [N.call_intrinsic(b, f"llvm.{_ROUNDING[type(op)]}.f64", [x], f64)]
    name = f"llvm.{_ROUNDING[type(op)]}.f32"
    return [_in_f32(b, x, lambda v: N.call_intrinsic(b, name, [v], f32))]


ERF_P = 0.3275911
ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
"""Abramowitz and Stegun 7.1.26: ``erf(x) = 1 - t (a1 + t (a2 + ... + t a5)) e^(-x^2)``, ``t = 1 / (1 + p x)``
for x >= 0, odd in x; 1.5e-7 from erf in exact arithmetic, 5.4e-7 at most measured in f32 with
``ex2.approx`` on the H200 over [-6, 6] (PTX has no erf instruction; CUDA's erff is a longer polynomial
of the same kind, about 2e-7)."""


def _erf(op: math.ErfOp, b: Builder) -> list[SSAValue]:
    def compute(x: SSAValue) -> SSAValue:
        def const(v: float) -> SSAValue:
            return b.insert(fast.constant_op(FloatAttr(v, f32), f32)).results[0]

        ax = b.insert(fast.float_unary_op(llvm.FAbsOp, x)).results[0]
        one = const(1.0)
        t = b.insert(fast.binary_op(llvm.FDivOp, one, b.insert(fast.fma_op(const(ERF_P), ax, one)).res)).results[0]
        poly = const(ERF_A[-1])
        for a in reversed(ERF_A[:-1]):
            poly = b.insert(fast.fma_op(poly, t, const(a))).res
        poly = b.insert(fast.binary_op(llvm.FMulOp, poly, t)).results[0]
        square = b.insert(fast.binary_op(llvm.FMulOp, ax, ax)).results[0]
        decay = N.ex2_approx(b, _scaled(b, square, -LOG2_E), ftz=True)  # e^(-x^2)
        tail = b.insert(fast.binary_op(llvm.FMulOp, poly, decay)).results[0]
        y = b.insert(fast.binary_op(llvm.FSubOp, one, tail)).results[0]
        neg = b.insert(fast.fcmp_op("olt", x, const(0.0))).res
        return b.insert(fast.select_op(neg, b.insert(fast.float_unary_op(llvm.FNegOp, y)).res, y)).res

    return [_in_f32(b, op.operand, compute)]


# ---------------------------------------------------------------- vector


def _static_position(op: vector.ExtractOp | vector.InsertOp) -> int:
    positions = list(op.static_position.iter_values())
    if op.dynamic_position or len(positions) != 1:
        raise ValueError(f"{op.name}: only one static position into a 1-D vector is supported")
    return positions[0]


def _extract(op: vector.ExtractOp, b: Builder) -> list[SSAValue]:
    index = const_i32(b, _static_position(op))
    return [b.insert(llvm_ext.extract_element_op(op.vector, index)).res]


def _insert(op: vector.InsertOp, b: Builder) -> list[SSAValue]:
    index = const_i32(b, _static_position(op))
    return [b.insert(fast.insert_element_op(op.dest, op.source, index)).res]


def _broadcast(op: vector.BroadcastOp, b: Builder) -> list[SSAValue]:
    t = op.vector.type
    assert isinstance(t, VectorType)
    if op.source.type == t:
        return [op.source]
    if isinstance(op.source.type, VectorType):
        raise ValueError("vector.broadcast: only a scalar can be broadcast at the llvm level")
    value = b.insert(fast.undef_op(t)).res
    for i in range(t.get_shape()[0]):
        value = b.insert(fast.insert_element_op(value, op.source, const_i32(b, i))).res
    return [value]


def _vector_bitcast(op: vector.BitcastOp, b: Builder) -> list[SSAValue]:
    return [b.insert(fast.cast_op(llvm.BitcastOp, op.source, op.result.type)).result]


# ---------------------------------------------------------------- cf


def _br(op: cf.BranchOp, b: Builder) -> list[SSAValue]:
    b.insert(fast.br_op(op.successor, op.arguments))
    return []


def _cond_br(op: cf.ConditionalBranchOp, b: Builder) -> list[SSAValue]:
    b.insert(fast.cond_br_op(op.cond, op.then_block, op.then_arguments, op.else_block, op.else_arguments))
    return []


LOWERINGS: dict[type[Operation], Lowering] = {
    arith.ConstantOp: _constant,
    arith.CmpiOp: _cmpi,
    arith.CmpfOp: _cmpf,
    arith.SelectOp: _select,
    arith.IndexCastOp: _index_cast,
    arith.NegfOp: _negf,
    arith.CeilDivUIOp: _ceildivui,
    **{t: _int_binary for t in _INT_BINARY},
    **{t: _float_binary for t in _FLOAT_BINARY},
    **{t: _cast for t in _CASTS},
    **{t: _min_max_int for t in _MIN_MAX_INT},
    **{t: _nan_propagating for t in _NAN_PROPAGATING},
    math.FmaOp: _fma,
    math.AbsFOp: _absf,
    math.SqrtOp: _sqrt,
    math.Exp2Op: _exp2,
    math.ExpOp: _exp,
    math.LogOp: _log,
    math.Log2Op: _log2,
    math.RsqrtOp: _rsqrt,
    math.TanhOp: _tanh,
    math.ErfOp: _erf,
    math.SinOp: _sin,
    math.CosOp: _cos,
    **{t: _rounding for t in _ROUNDING},
    vector.ExtractOp: _extract,
    vector.InsertOp: _insert,
    vector.BroadcastOp: _broadcast,
    vector.BitcastOp: _vector_bitcast,
    cf.BranchOp: _br,
    cf.ConditionalBranchOp: _cond_br,
}
"""Lowering of each supported ``arith``/``math``/``vector``/``cf`` op class."""


def lower_op(op: Operation, lowering: Lowering, builder: Builder) -> None:
    """Replace ``op`` by what ``lowering`` builds before it with ``builder`` (whose
    insertion point is set here); each new value without a name takes the name of
    the result it replaces (``replace_all_uses_with`` does that)."""
    builder.insertion_point = InsertPoint.before(op)
    before = op.prev_op
    new_values = lowering(op, builder)
    made = op.prev_op  # the ops the lowering made just before ``op`` take its line (later diagnostics name it)
    while made is not None and made is not before:
        if isinstance(made.location, UnknownLoc):
            made.location = op.location
        made = made.prev_op
    for old, new in zip(op.results, new_values, strict=True):
        old.replace_all_uses_with(new)
    # Its results have no uses left: detached and dropped, ``op`` is gone (xDSL's ``erase``
    # would also check that and give each result an ``ErasedSSAValue`` that nothing uses).
    op.detach()  # from the block it is in now: a lowering may have split the block
    op.drop_all_references()


class TableLowering(RewritePattern):
    """Rewrite every op whose class has an entry in ``table`` (:func:`lower_op` as a pattern)."""

    def __init__(self, table: dict[type[Operation], Lowering]):
        self.table = table

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        lower = self.table.get(type(op))
        if lower is None:
            return
        # The rewriter is a builder too; it sees the rewrite as its own (replace) for its listeners.
        rewriter.insertion_point = InsertPoint.before(op)
        new_values = lower(op, rewriter)
        for old, new in zip(op.results, new_values, strict=True):
            if new.name_hint is None:
                new.name_hint = old.name_hint
        rewriter.replace(op, [], new_values)


class ArithToLLVM(TableLowering):
    """``arith``, ``math``, ``vector`` and ``cf`` ops → ``llvm`` ops."""

    def __init__(self) -> None:
        super().__init__(LOWERINGS)


__all__ = ["LOWERINGS", "ArithToLLVM", "Lowering", "TableLowering", "intrinsic_suffix", "lower_op"]
