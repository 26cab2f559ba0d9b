"""Conversions to and from the 8-bit floats (``f8E4M3FN``, ``f8E5M2``) as PTX's ``cvt`` (sm_90 on).

LLVM IR has no 8-bit float: an FP8 value is its byte (an ``i8``, :mod:`tilec.codegen.llvm_translate`),
and PTX converts pairs (``.e4m3x2`` / ``.e5m2x2`` in a 16-bit register). One value goes in the low
half of the pair, the high half a zero, and comes out of the low half:

- ``arith.extf`` f8 → f16: ``cvt.rn.f16x2.e4m3x2`` (exact), E5M2 a shift (on sm_80 too); → f32 or
  wider through that f16 (exact);
- ``arith.truncf`` f32 → f8: ``cvt.rn.satfinite.e4m3x2.f32``; f16 → f8: ``...e4m3x2.f16x2``. PTX has
  these conversions only with ``.satfinite``: past the largest finite value a conversion gives that
  value (448 for E4M3, 57344 for E5M2), infinities too, and NaN stays NaN; Triton's
  ``.to(tl.float8e4nv)`` is the same instruction. The interpreters round the same way
  (:func:`tilec.ir.float8.saturated_f8`, then to nearest).

Other sources and targets (bf16, f64, f8 → f8) reach these through f32 in :mod:`tilec.lang`.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import Float8E4M3FNType, Float8E5M2Type, Float16Type, Float32Type, f16, f32, i8, i16, i32
from xdsl.ir import Attribute, Operation, SSAValue

from tilec.ir import fast
from tilec.passes.lowering import nvvm as N
from tilec.passes.lowering.llvm_build import constant

FP8 = (Float8E4M3FNType, Float8E5M2Type)


def is_fp8_cast(op: Operation) -> bool:
    """Whether ``op`` (an ``arith.extf`` / ``arith.truncf``) converts from or to an 8-bit float."""
    return isinstance(op, (arith.ExtFOp, arith.TruncFOp)) and \
        any(isinstance(t, FP8) for t in (op.operands[0].type, op.results[0].type))


def _pair(t: Attribute) -> str:
    return "e4m3x2" if isinstance(t, Float8E4M3FNType) else "e5m2x2"


def _cvt(b: Builder, asm: str, constraints: str, operands: list[SSAValue], result: Attribute) -> SSAValue:
    out = N.inline_asm(b, asm, constraints, operands, result, side_effects=False)
    assert out is not None
    return out


def _as(b: Builder, x: SSAValue, t: Attribute) -> SSAValue:
    """An FP8 value as its byte, or a byte as an FP8 value: the same ``i8`` in LLVM IR (a bitcast the
    translation writes as nothing), for ops that take one type or the other."""
    return b.insert(fast.cast_op(llvm.BitcastOp, x, t)).results[0]


def widen(b: Builder, x: SSAValue, target: Attribute) -> SSAValue:
    """An FP8 value as ``target`` (f16, f32 or f64): exact. An E5M2 value is the high byte of the f16 of
    the same value (the same exponent, two of f16's ten mantissa bits): a shift, on any arch."""
    byte = b.insert(fast.cast_op(llvm.ZExtOp, _as(b, x, i8), i16)).results[0]
    if isinstance(x.type, Float8E5M2Type):
        low = b.insert(fast.binary_op(llvm.ShlOp, byte, constant(b, 8, i16))).results[0]
    else:
        pair = _cvt(b, f"cvt.rn.f16x2.{_pair(x.type)} $0, $1;", "=r,h", [byte], i32)
        low = b.insert(fast.cast_op(llvm.TruncOp, pair, i16)).results[0]
    half = b.insert(fast.cast_op(llvm.BitcastOp, low, f16)).results[0]
    if isinstance(target, Float16Type):
        return half
    return b.insert(fast.cast_op(llvm.FPExtOp, half, target)).results[0]


def narrow(b: Builder, x: SSAValue, target: Attribute) -> SSAValue:
    """An f16 or f32 value rounded to the FP8 type ``target`` (to nearest even, saturating)."""
    if isinstance(x.type, Float16Type):
        bits = b.insert(fast.cast_op(llvm.BitcastOp, x, i16)).results[0]
        word = b.insert(fast.cast_op(llvm.ZExtOp, bits, i32)).results[0]
        pair = _cvt(b, f"cvt.rn.satfinite.{_pair(target)}.f16x2 $0, $1;", "=h,r", [word], i16)
    else:
        if not isinstance(x.type, Float32Type):
            raise ValueError(f"arith.truncf to {target}: converts from f16 or f32, got {x.type}")
        zero = constant(b, 0.0, f32)
        pair = _cvt(b, f"cvt.rn.satfinite.{_pair(target)}.f32 $0, $1, $2;", "=h,f,f", [zero, x], i16)
    return _as(b, b.insert(fast.cast_op(llvm.TruncOp, pair, i8)).results[0], target)


def lower_fp8_cast(op: Operation, b: Builder) -> list[SSAValue]:
    """``arith.extf`` / ``arith.truncf`` from or to an 8-bit float, as :func:`widen` / :func:`narrow`."""
    source, target = op.operands[0], op.results[0].type
    if isinstance(source.type, FP8) and isinstance(target, FP8):
        raise ValueError(f"{op.name}: {source.type} to {target} converts through f32")
    if isinstance(source.type, FP8):
        return [widen(b, source, target)]
    return [narrow(b, source, target)]
