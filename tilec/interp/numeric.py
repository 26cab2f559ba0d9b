"""``arith`` and ``math`` on numpy: the same implementations run on scalars and on whole arrays.

xDSL's own ``ArithFunctions`` compute floats as Python floats (f64) and lack
``truncf``/``extf``/``divf``; these subclasses keep its integer and index ops
and replace the float ops with numpy ones that round every result to the op's
result type (``to_element``). The same table evaluates a ``tile.matmul``
epilogue once on whole ``M x N`` arrays (vectorised) and scalar code in a
kernel body one value at a time.

Float semantics: add/sub/mul/div are IEEE operations in the element type
(correctly rounded); transcendental ``math`` ops are computed in float64 and
rounded once (deterministic, unlike numpy's float32 SIMD kernels); ``maximumf``/``minimumf`` propagate NaN (``np.maximum``),
``maxnumf``/``minnumf`` ignore it (``np.fmax``); division by zero gives
inf/NaN silently (an integer one all bits set: :func:`trunc_div`); ``fptosi`` truncates toward zero.
"""

from __future__ import annotations

import math as pymath
from typing import Any

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import BFloat16Type, Float64Type, FloatAttr, IndexType, IntegerType
from xdsl.interpreter import InterpreterFunctions, Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.ir import Attribute, Operation

from tilec.interp.dtypes import exp2_ftz, exp_ftz, is_float_type, numpy_dtype, saturated, to_element
from tilec.ir.float8 import FLOAT8_FORMATS, f8_bits, f8_values, saturated_f8


def _result(op: Operation, value: Any) -> tuple[Any]:
    """``value`` rounded to ``op``'s (float) result type."""
    t = op.results[0].type
    if is_float_type(t):
        return (to_element(value, t),)
    return (value,)


def _to_int(value: Any) -> Any:
    return int(value) if np.ndim(value) == 0 else np.asarray(value).astype(np.int64)


def _int_width(t: Attribute) -> int:
    """The bits of an integer (or index: 64) type, or of a tile of them."""
    t = getattr(t, "element_type", t)
    return t.width.data if isinstance(t, IntegerType) else 64


def _is_intlike(t: Attribute) -> bool:
    return isinstance(t, IntegerType | IndexType)


_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
"""arith.cmpi's predicates in the order of their numbers."""

_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal}


def _held_f8(values: Any) -> Any:
    """FP8 values as the interpreter holds them (float32), exactly."""
    values = np.asarray(values, dtype=np.float32)
    return values if values.ndim else np.float32(values)


@register_impls
class NumpyArithFunctions(ArithFunctions):
    """``arith`` with float ops on numpy scalars and arrays; integer ops are xDSL's."""

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues):
        if isinstance(op.value, FloatAttr):
            return (to_element(op.value.value.data, op.result.type),)
        # the inherited entry is the registered wrapper: it returns an OpImplResult
        return super().run_constant(interpreter, op, args).values

    @impl(arith.AddiOp)
    def run_addi(self, interpreter: Interpreter, op: arith.AddiOp, args: PythonValues):
        return _wrapped_int(op, lambda a, b: a + b, args, super().run_addi, interpreter)

    @impl(arith.SubiOp)
    def run_subi(self, interpreter: Interpreter, op: arith.SubiOp, args: PythonValues):
        return _wrapped_int(op, lambda a, b: a - b, args, super().run_subi, interpreter)

    @impl(arith.MuliOp)
    def run_muli(self, interpreter: Interpreter, op: arith.MuliOp, args: PythonValues):
        return _wrapped_int(op, lambda a, b: a * b, args, super().run_muli, interpreter)

    @impl(arith.AndIOp)
    def run_andi(self, interpreter: Interpreter, op: arith.AndIOp, args: PythonValues):
        return _bitwise(op, np.bitwise_and, args, super().run_andi, interpreter)

    @impl(arith.OrIOp)
    def run_ori(self, interpreter: Interpreter, op: arith.OrIOp, args: PythonValues):
        return _bitwise(op, np.bitwise_or, args, super().run_ori, interpreter)

    @impl(arith.XOrIOp)
    def run_xori(self, interpreter: Interpreter, op: arith.XOrIOp, args: PythonValues):
        return _bitwise(op, np.bitwise_xor, args, super().run_xori, interpreter)

    @impl(arith.ShLIOp)
    def run_shli(self, interpreter: Interpreter, op: arith.ShLIOp, args: PythonValues):
        return _shift(op, "shl", args)

    @impl(arith.ShRSIOp)
    def run_shrsi(self, interpreter: Interpreter, op: arith.ShRSIOp, args: PythonValues):
        return _shift(op, "shrs", args)

    @impl(arith.ShRUIOp)
    def run_shrui(self, interpreter: Interpreter, op: arith.ShRUIOp, args: PythonValues):
        return _shift(op, "shru", args)

    @impl(arith.ExtUIOp)
    def run_extui(self, interpreter: Interpreter, op: arith.ExtUIOp, args: PythonValues):
        """Zero-extension: the bits as an unsigned number (a mask's true is 1)."""
        width = op.input.type.width.data
        value = _to_int(args[0])
        return ((value % (1 << width)) if np.ndim(value) == 0 else np.mod(value, 1 << width),)

    @impl(arith.ExtSIOp)
    def run_extsi(self, interpreter: Interpreter, op: arith.ExtSIOp, args: PythonValues):
        """Sign-extension: the bits as a signed number of the input's width."""
        width = op.input.type.width.data
        value = _to_int(args[0])
        half = 1 << (width - 1)
        return ((value + half) % (1 << width) - half,)

    @impl(arith.TruncIOp)
    def run_trunci(self, interpreter: Interpreter, op: arith.TruncIOp, args: PythonValues):
        """The low bits, as a signed number of the result's width (i1: the lowest bit)."""
        width = op.result.type.width.data
        value = _to_int(args[0])
        if width == 1:
            return (value & 1,)
        half = 1 << (width - 1)
        return ((value + half) % (1 << width) - half,)

    @impl(arith.DivSIOp)
    def run_divsi(self, interpreter: Interpreter, op: arith.DivSIOp, args: PythonValues):
        """C's division (toward zero), on numpy arrays too (xDSL's takes Python ints only)."""
        out = trunc_div(*(_to_int(a) for a in args))
        return (int(out) if np.ndim(out) == 0 else out,)

    @impl(arith.RemSIOp)
    def run_remsi(self, interpreter: Interpreter, op: arith.RemSIOp, args: PythonValues):
        """The remainder of :meth:`run_divsi` (the dividend's sign)."""
        a, b = (_to_int(x) for x in args)
        out = a - b * trunc_div(a, b)
        return (int(out) if np.ndim(out) == 0 else out,)

    @impl(arith.AddfOp)
    def run_addf(self, interpreter, op, args):
        return _result(op, np.add(args[0], args[1]))

    @impl(arith.SubfOp)
    def run_subf(self, interpreter, op, args):
        return _result(op, np.subtract(args[0], args[1]))

    @impl(arith.MulfOp)
    def run_mulf(self, interpreter, op, args):
        return _result(op, np.multiply(args[0], args[1]))

    @impl(arith.DivfOp)
    def run_divf(self, interpreter, op, args):
        return _result(op, np.divide(args[0], args[1]))

    @impl(arith.NegfOp)
    def run_negf(self, interpreter, op, args):
        return _result(op, np.negative(args[0]))

    @impl(arith.MaximumfOp)
    def run_maximumf(self, interpreter, op, args):
        return _result(op, np.maximum(args[0], args[1]))

    @impl(arith.MinimumfOp)
    def run_minimumf(self, interpreter, op, args):
        return _result(op, np.minimum(args[0], args[1]))

    @impl(arith.MaxnumfOp)
    def run_maxnumf(self, interpreter, op, args):
        return _result(op, np.fmax(args[0], args[1]))

    @impl(arith.MinnumfOp)
    def run_minnumf(self, interpreter, op, args):
        return _result(op, np.fmin(args[0], args[1]))

    @impl(arith.TruncFOp)
    def run_truncf(self, interpreter, op, args):
        t = op.results[0].type
        if t.name in FLOAT8_FORMATS:  # PTX converts into FP8 saturating only (cvt.rn.satfinite)
            return _result(op, saturated_f8(args[0], t.name).astype(np.float32))
        return _result(op, args[0])

    @impl(arith.ExtFOp)
    def run_extf(self, interpreter, op, args):
        return _result(op, args[0])

    @impl(arith.SIToFPOp)
    def run_sitofp(self, interpreter, op, args):
        return _result(op, np.asarray(args[0], dtype=np.float64))

    @impl(arith.UIToFPOp)
    def run_uitofp(self, interpreter, op, args):
        """The bits read unsigned (a mask's true is 1), then rounded once to the float type."""
        value = _as_unsigned(_to_int(args[0]), _int_width(op.operands[0].type))
        return _result(op, np.asarray(value, dtype=np.float64) if np.ndim(value) else np.float64(float(value)))

    @impl(arith.BitcastOp)
    def run_bitcast(self, interpreter, op, args):
        """The same bits read as the result's type (a float as its storage type; an integer signed)."""
        src, dst = op.operands[0].type, op.results[0].type
        # a byte's FP8 value is held as it is (no conversion: an infinity stays one, as the bits say)
        if src.name in FLOAT8_FORMATS and dst.name in FLOAT8_FORMATS:  # a byte read as the other FP8 type
            return (_held_f8(f8_values(f8_bits(args[0], src.name), dst.name)),)
        if src.name in FLOAT8_FORMATS:  # an FP8 value's byte, as a signed int8
            return (_to_int(f8_bits(args[0], src.name).astype(np.int8)),)
        if dst.name in FLOAT8_FORMATS:  # a byte's FP8 value
            return (_held_f8(f8_values(np.asarray(args[0]).astype(np.uint8), dst.name)),)
        value = np.asarray(args[0]).astype(numpy_dtype(src))
        if isinstance(src, BFloat16Type):  # held as f32 whose low 16 bits are zero
            value = (value.view(np.uint32) >> 16).astype(np.uint16)
        if isinstance(dst, BFloat16Type):
            bits = (value.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        else:
            bits = value.view(np.uint16 if isinstance(src, BFloat16Type) else value.dtype).view(numpy_dtype(dst))
        if is_float_type(dst):  # kept in the storage type: widening would quiet a signalling NaN
            return (bits.astype(numpy_dtype(dst)) if np.ndim(bits) else numpy_dtype(dst).type(bits),)
        return (_to_int(bits),)

    @impl(arith.FPToSIOp)
    def run_fptosi(self, interpreter, op, args):
        return (_to_int(saturated(args[0], _int_width(op.result.type), True,
                                  64 if op.input.type == Float64Type() else 32)),)

    @impl(arith.FPToUIOp)
    def run_fptoui(self, interpreter, op, args):
        """Saturated into the unsigned range (as PTX's ``cvt.rzi.u``), the bits held signed."""
        width = _int_width(op.result.type)
        return (_as_signed(_to_int(saturated(args[0], width, False)), width),)

    @impl(arith.CmpfOp)
    def run_cmpf(self, interpreter, op: arith.CmpfOp, args):
        x, y = args
        ordered = ~(np.isnan(x) | np.isnan(y))
        unordered = ~ordered
        match op.predicate.value.data:
            case 0:
                r = np.zeros_like(ordered)
            case 1:
                r = np.equal(x, y)
            case 2:
                r = np.greater(x, y)
            case 3:
                r = np.greater_equal(x, y)
            case 4:
                r = np.less(x, y)
            case 5:
                r = np.less_equal(x, y)
            case 6:
                r = np.not_equal(x, y) & ordered
            case 7:
                r = ordered
            case 8:
                r = np.equal(x, y) | unordered
            case 9:
                r = np.greater(x, y) | unordered
            case 10:
                r = np.greater_equal(x, y) | unordered
            case 11:
                r = np.less(x, y) | unordered
            case 12:
                r = np.less_equal(x, y) | unordered
            case 13:
                r = np.not_equal(x, y)
            case 14:
                r = unordered
            case 15:
                r = np.ones_like(ordered)
            case p:
                raise ValueError(f"arith.cmpf predicate {p} is not implemented")
        return (bool(r) if np.ndim(r) == 0 else r,)

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter, op: arith.CmpiOp, args):
        """Comparisons of whole arrays (a tile's coordinates in a mask); scalars as xDSL compares them."""
        lhs, rhs = args
        name = _CMPI[op.predicate.value.data]
        if np.ndim(lhs) == 0 and np.ndim(rhs) == 0 and name[0] != "u":
            return super().run_cmpi(interpreter, op, args).values  # the impl decorator wraps the result
        a, b = _to_int(lhs), _to_int(rhs)
        if name[0] == "u":
            bits = _int_width(op.lhs.type)
            a, b = _as_unsigned(a, bits), _as_unsigned(b, bits)
        elif _int_width(op.lhs.type) == 1:  # a signed i1 reads true as -1, as the GPU's setp.s* does
            a, b = -np.asarray(a), -np.asarray(b)
        out = _COMPARE[name[-2:] if name not in ("eq", "ne") else name](a, b)
        return (bool(out) if np.ndim(out) == 0 else out,)

    @impl(arith.SelectOp)
    def run_select(self, interpreter, op: arith.SelectOp, args):
        cond, lhs, rhs = args
        if np.ndim(cond) == 0:
            return (lhs if cond else rhs,)
        return _result(op, np.where(cond, lhs, rhs))


def _as_unsigned(value: Any, width: int) -> Any:
    """Integers held as two's-complement signed numbers (as this interpreter holds ``iN``) read unsigned:
    Python ints, or int64 arrays (uint64 ones for 64 bits)."""
    if np.ndim(value) == 0:
        return int(value) % (1 << width)
    a = np.asarray(value).astype(np.int64)
    return a.astype(np.uint64) if width == 64 else a % (1 << width)


def _as_signed(value: Any, width: int) -> Any:
    """The inverse of :func:`_as_unsigned`: an unsigned result wrapped back to the signed numbers held."""
    if np.ndim(value) == 0:
        v = int(value) % (1 << width)
        return v - (1 << width) if width > 1 and v >= 1 << (width - 1) else v
    a = np.asarray(value)
    if width == 64:
        return a.astype(np.uint64).astype(np.int64)
    a = a.astype(np.int64) % (1 << width)
    return np.where(a >= 1 << (width - 1), a - (1 << width), a)


def _unsigned_binary(fn):
    """An unsigned integer op on index/iN values: the operands' bits read unsigned (as numpy arrays: uint64
    for 64 bits, so values past 2^63 stay exact), the result's bits held signed (index values: 64 bits).
    ``fn(a, b, ones)`` gets ``ones``, the all-ones value of the width (a division by zero's result)."""

    def run(self, interpreter, op, args):
        width = _int_width(op.results[0].type)
        scalar = all(np.ndim(a) == 0 for a in args)
        lhs, rhs = (_as_unsigned(np.atleast_1d(np.asarray(_to_int(a), dtype=np.int64)), width) for a in args)
        out = _as_signed(fn(lhs, rhs, (1 << width) - 1), width)
        return (int(out[0]) if scalar else out,)

    return run


def _by_nonzero(a, b, fn, at_zero):
    """``fn(a, b)`` where ``b`` is not zero, ``at_zero`` where it is (Python ints or numpy arrays)."""
    zero = np.asarray(b) == 0
    if not np.any(zero):
        return fn(a, b)
    out = np.where(zero, at_zero, fn(a, np.where(zero, 1, b)))
    return out if np.ndim(out) else int(out)


def _signed_binary(fn):
    def run(self, interpreter, op, args):
        out = fn(*(_to_int(a) for a in args))
        return (int(out) if np.ndim(out) == 0 else out,)

    return run


@register_impls
class NumpyIntegerFunctions(InterpreterFunctions):
    """The integer ``arith`` ops index math needs that xDSL's interpreter lacks."""

    # a zero divisor gives all bits set (-1), a remainder the dividend: as trunc_div and the lane interpreter
    run_divui = impl(arith.DivUIOp)(_unsigned_binary(lambda a, b, ones: _by_nonzero(a, b, lambda x, y: x // y, ones)))
    run_remui = impl(arith.RemUIOp)(_unsigned_binary(lambda a, b, ones: _by_nonzero(a, b, lambda x, y: x % y, a)))
    run_ceildivui = impl(arith.CeilDivUIOp)(_unsigned_binary(
        lambda a, b, ones: _by_nonzero(a, b, lambda x, y: x // y + (x % y != 0), ones)))
    run_minui = impl(arith.MinUIOp)(_unsigned_binary(lambda a, b, ones: np.minimum(a, b)))
    run_maxui = impl(arith.MaxUIOp)(_unsigned_binary(lambda a, b, ones: np.maximum(a, b)))
    run_minsi = impl(arith.MinSIOp)(_signed_binary(np.minimum))
    run_maxsi = impl(arith.MaxSIOp)(_signed_binary(np.maximum))
    run_ceildivsi = impl(arith.CeilDivSIOp)(_signed_binary(lambda a, b: -(-a // b)))


def _wrapped_int(op, fn, args, scalar_impl, interpreter):
    """An integer op on numpy arrays (tile.map bodies), wrapped to the type's width as two's
    complement; on Python ints, xDSL's own implementation."""
    if all(np.ndim(a) == 0 for a in args):  # as Python ints: xDSL's wrapping overflows numpy's fixed widths
        return scalar_impl(interpreter, op, tuple(_to_int(a) for a in args)).values
    ty = op.result.type
    width = ty.width.data if isinstance(ty, IntegerType) else 64
    out = fn(*(_to_int(a) for a in args))
    if width < 64:
        half = 1 << (width - 1)
        out = (out + half) % (1 << width) - half if width > 1 else out & 1
    return (out,)


def _shift(op, kind: str, args):
    """Shifts as the lane interpreter and the GPU do them: by ``>= width`` bits, 0 (``shl``, ``shru``) or
    the sign (``shrs``); results wrapped to the width (a Python int for scalars, as xDSL holds them)."""
    ty = op.result.type
    w = ty.width.data if isinstance(ty, IntegerType) else 64
    a, b = (np.asarray(_to_int(x), dtype=np.int64) for x in args)
    amount = b & ((1 << w) - 1) if w < 64 else b
    s = np.clip(amount, 0, 63)
    big = (amount >= w) | (amount < 0)
    signed_a = (a + (1 << (w - 1))) % (1 << w) - (1 << (w - 1)) if w < 64 else a
    if kind == "shl":
        out = np.where(big, 0, np.left_shift(signed_a, s))
    elif kind == "shrs":
        out = np.where(big, np.where(signed_a < 0, -1, 0), np.right_shift(signed_a, s))
    else:
        unsigned_a = signed_a % (1 << w) if w < 64 else signed_a.astype(np.uint64)
        out = np.where(big, 0, np.right_shift(unsigned_a, s.astype(unsigned_a.dtype))).astype(np.int64)
    if w < 64:
        half = 1 << (w - 1)
        out = (out + half) % (1 << w) - half
    return (int(out) if all(np.ndim(x) == 0 for x in args) else out,)


def _bitwise(op, fn, args, scalar_impl, interpreter):
    """``&``, ``|``, ``^`` on numpy arrays: masks (i1) as booleans, wider integers as two's complement
    (xDSL's own implementation takes Python ints, and overflows on negative numpy ones)."""
    if all(np.ndim(a) == 0 for a in args):  # as Python ints (masks as 0 / 1)
        return scalar_impl(interpreter, op, tuple(_to_int(a) for a in args)).values
    if isinstance(op.result.type, IntegerType) and op.result.type.width.data == 1:
        return (fn(*(np.asarray(a, dtype=bool) for a in args)),)
    return _wrapped_int(op, fn, args, scalar_impl, interpreter)


def trunc_div(a, b):
    """``a / b`` rounded toward zero. A zero divisor (PTX leaves the result unspecified; a Triton kernel
    meets one in the padded lanes of a window it then does not store) gives -1, all bits set, and so a
    remainder ``a - b * q`` the dividend: what the lane interpreter gives too."""
    zero = np.asarray(b) == 0
    q = np.abs(a) // np.where(zero, 1, np.abs(b))
    q = np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q)
    return np.where(zero, -1, q)


def _unary(fn):
    """A unary math op computed in float64, then rounded once to the result type.

    numpy's float32/float16 transcendental kernels are not correctly rounded and
    differ between CPUs (SIMD paths); float64 then one rounding is deterministic.
    """

    def run(self, interpreter, op, args):
        return _result(op, fn(np.asarray(args[0], dtype=np.float64)))

    return run


_erf = np.frompyfunc(pymath.erf, 1, 1)


@register_impls
class NumpyMathFunctions(MathFunctions):
    """``math`` on numpy scalars and arrays, rounded to the result type."""

    run_exp = impl(math.ExpOp)(_unary(exp_ftz))  # as the GPU's ex2.approx.ftz: no subnormal results
    run_exp2 = impl(math.Exp2Op)(_unary(exp2_ftz))
    run_expm1 = impl(math.ExpM1Op)(_unary(np.expm1))
    run_log = impl(math.LogOp)(_unary(np.log))
    run_log2 = impl(math.Log2Op)(_unary(np.log2))
    run_log10 = impl(math.Log10Op)(_unary(np.log10))
    run_log1p = impl(math.Log1pOp)(_unary(np.log1p))
    run_sqrt = impl(math.SqrtOp)(_unary(np.sqrt))
    run_rsqrt = impl(math.RsqrtOp)(_unary(lambda x: 1.0 / np.sqrt(x)))
    run_tanh = impl(math.TanhOp)(_unary(np.tanh))
    run_sin = impl(math.SinOp)(_unary(np.sin))
    run_cos = impl(math.CosOp)(_unary(np.cos))
    run_absf = impl(math.AbsFOp)(_unary(np.abs))
    run_floor = impl(math.FloorOp)(_unary(np.floor))
    run_ceil = impl(math.CeilOp)(_unary(np.ceil))
    run_trunc = impl(math.TruncOp)(_unary(np.trunc))
    run_roundeven = impl(math.RoundEvenOp)(_unary(np.rint))
    run_erf = impl(math.ErfOp)(_unary(lambda x: np.asarray(_erf(x), dtype=np.float64)))

    @impl(math.PowFOp)
    def run_powf(self, interpreter, op, args):
        return _result(op, np.power(np.asarray(args[0], dtype=np.float64), args[1]))

    @impl(math.FmaOp)
    def run_fma(self, interpreter, op, args):
        a, b, c = (np.asarray(v, dtype=np.float64) for v in args)
        return _result(op, a * b + c)
