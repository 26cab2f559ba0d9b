"""``arith``, ``math`` and ``vector`` on lane values (see :mod:`tilec.interp.lane_values`).

Each op works elementwise on the ``(32, ...)`` arrays of a warp. Integer
semantics are LLVM's on two's-complement ``iN``: results wrap to N bits,
``*ui`` ops read their operands as unsigned; a shift by ``≥ N`` bits (poison in
LLVM) gives 0 (``shli``, ``shrui``) or the sign (``shrsi``); an integer
division by zero gives all bits set (a remainder: the dividend). Float ops are IEEE operations
in the result's element type (``bf16`` via float32 and one rounding);
transcendental ``math`` ops are computed in float64 and rounded once;
``fptosi``/``fptoui`` truncate and saturate (NaN → 0) like PTX ``cvt.rzi``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import arith, math, vector
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseIntOrFPElementsAttr, FloatAttr, Float64Type, IntegerAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from tilec.interp.dtypes import exp2_ftz, exp_ftz, saturated
from tilec.ir.float8 import FLOAT8_FORMATS, saturated_f8
from tilec.interp.errors import OpError
from tilec.interp.lane_memory import Ptr
from tilec.interp.lane_values import (
    LANE_IDS,
    LANES,
    bitcast,
    element_type,
    int_width,
    round_to,
    signed,
    splat,
    unsigned,
    vector_shape,
    wrap,
)


def _width(op: Operation) -> int:
    w = int_width(element_type(op.operands[0].type))
    if w is None:
        raise OpError(f"expected integer operands, got {op.operands[0].type}")
    return w


def _out_width(op: Operation) -> int:
    w = int_width(element_type(op.results[0].type))
    if w is None:
        raise OpError(f"expected an integer result, got {op.results[0].type}")
    return w


def _expand(cond: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A per-lane condition broadcast over a vector value's trailing axes."""
    cond = np.asarray(cond)
    return cond.reshape(cond.shape + (1,) * (np.ndim(like) - cond.ndim))


def select(cond: np.ndarray, lhs: Any, rhs: Any) -> Any:
    """``cond ? lhs : rhs`` per lane, for numbers, vectors and pointers."""
    if isinstance(lhs, Ptr):
        return lhs.select(np.asarray(cond), rhs)
    return np.where(_expand(cond, lhs), lhs, rhs)


def _binary(fn, domain: str):
    """An integer op computed on the ``signed``/``unsigned``/``raw`` operand values, wrapped to the result width."""

    def run(self, interpreter, op, args):
        w = _width(op)
        a, b = args
        if domain == "s":
            a, b = signed(a, w), signed(b, w)
        elif domain == "u":
            a, b = unsigned(a, w), unsigned(b, w)
        return (wrap(fn(a, b), w),)

    return run


def _division(fn, domain: str, remainder: bool = False):
    """Like :func:`_binary`. A zero divisor (PTX leaves the result unspecified; a Triton kernel meets
    one in the padded lanes of a window it then does not store) gives all bits set, and a remainder
    the dividend, as the tile interpreter's :func:`tilec.interp.numeric.trunc_div` does."""

    def run(self, interpreter, op, args):
        w = _width(op)
        a, b = args
        zero = np.asarray(b) == 0
        if domain == "s":
            a, b = signed(a, w), np.where(zero, 1, signed(b, w))
        else:
            a, b = unsigned(a, w), np.where(zero, np.uint64(1), unsigned(b, w))
        out = fn(a, b)
        if np.any(zero):
            out = np.where(zero, a if remainder else (-1 if domain == "s" else np.uint64((1 << w) - 1)), out)
        return (wrap(out, w),)

    return run


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _ceil_div_u(a, b):
    return a // b + (a % b != 0).astype(np.uint64)


def _shift(kind: str):
    def run(self, interpreter, op, args):
        w = _width(op)
        a, b = args
        amount = unsigned(b, w)
        big = amount >= w
        s = np.minimum(amount, 63).astype(np.int64)
        if kind == "shl":
            out = np.where(big, 0, np.left_shift(signed(a, w), s))
        elif kind == "shru":
            out = np.where(big, np.uint64(0), np.right_shift(unsigned(a, w), s.astype(np.uint64)))
        else:
            sa = signed(a, w)
            out = np.where(big, np.where(sa < 0, -1, 0), np.right_shift(sa, s))
        return (wrap(out, w),)

    return run


def _cmpf(pred: int, x, y) -> np.ndarray:
    ordered = ~(np.isnan(x) | np.isnan(y))
    table = {
        0: lambda: np.zeros_like(ordered),
        1: lambda: (x == y) & ordered,
        2: lambda: (x > y) & ordered,
        3: lambda: (x >= y) & ordered,
        4: lambda: (x < y) & ordered,
        5: lambda: (x <= y) & ordered,
        6: lambda: (x != y) & ordered,
        7: lambda: ordered,
        8: lambda: (x == y) | ~ordered,
        9: lambda: (x > y) | ~ordered,
        10: lambda: (x >= y) | ~ordered,
        11: lambda: (x < y) | ~ordered,
        12: lambda: (x <= y) | ~ordered,
        13: lambda: (x != y) | ~ordered,
        14: lambda: ~ordered,
        15: lambda: np.ones_like(ordered),
    }
    if pred not in table:
        raise OpError(f"arith.cmpf predicate {pred} is not implemented")
    return np.asarray(table[pred]())


def _float_binary(fn):
    def run(self, interpreter, op, args):
        return (round_to(fn(args[0], args[1]), op.results[0].type),)

    return run


def _fp_to_int(is_signed: bool):
    def run(self, interpreter, op, args):
        w = _out_width(op)
        x = saturated(args[0], w, is_signed, 64 if op.input.type == Float64Type() else 32)
        return (wrap(x.astype(np.int64 if is_signed else np.uint64), w),)

    return run


@register_impls
@dataclass
class LaneArithFunctions(InterpreterFunctions):
    """``arith`` on lane values. ``state`` (a :class:`~tilec.interp.lanes.LaneState`) gives the active lanes."""

    state: Any = field(default=None)

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues):
        value, t = op.value, op.result.type
        if isinstance(value, IntegerAttr | FloatAttr):
            return (splat(value.value.data, t),)
        if isinstance(value, DenseIntOrFPElementsAttr):
            values = np.array([getattr(v, "data", v) for v in value.get_values()])
            shape = vector_shape(t)
            values = np.broadcast_to(values, shape) if values.size == 1 else values.reshape(shape)
            return (splat(values, t),)
        raise OpError(f"constants like {value} are not supported")

    # integers ------------------------------------------------------------------------

    run_addi = impl(arith.AddiOp)(_binary(np.add, "s"))
    run_subi = impl(arith.SubiOp)(_binary(np.subtract, "s"))
    run_muli = impl(arith.MuliOp)(_binary(np.multiply, "s"))
    run_andi = impl(arith.AndIOp)(_binary(np.bitwise_and, "raw"))
    run_ori = impl(arith.OrIOp)(_binary(np.bitwise_or, "raw"))
    run_xori = impl(arith.XOrIOp)(_binary(np.bitwise_xor, "raw"))
    run_minsi = impl(arith.MinSIOp)(_binary(np.minimum, "s"))
    run_maxsi = impl(arith.MaxSIOp)(_binary(np.maximum, "s"))
    run_minui = impl(arith.MinUIOp)(_binary(np.minimum, "u"))
    run_maxui = impl(arith.MaxUIOp)(_binary(np.maximum, "u"))
    run_divsi = impl(arith.DivSIOp)(_division(_trunc_div, "s"))
    run_remsi = impl(arith.RemSIOp)(_division(lambda a, b: a - b * _trunc_div(a, b), "s", remainder=True))
    run_floordivsi = impl(arith.FloorDivSIOp)(_division(np.floor_divide, "s"))
    run_ceildivsi = impl(arith.CeilDivSIOp)(_division(lambda a, b: -np.floor_divide(-a, b), "s"))
    run_divui = impl(arith.DivUIOp)(_division(np.floor_divide, "u"))
    run_remui = impl(arith.RemUIOp)(_division(np.remainder, "u", remainder=True))
    run_ceildivui = impl(arith.CeilDivUIOp)(_division(_ceil_div_u, "u"))
    run_shli = impl(arith.ShLIOp)(_shift("shl"))
    run_shrui = impl(arith.ShRUIOp)(_shift("shru"))
    run_shrsi = impl(arith.ShRSIOp)(_shift("shrs"))

    @impl(arith.CmpiOp)
    def run_cmpi(self, interpreter, op: arith.CmpiOp, args):
        w = _width(op)
        a, b = args
        p = op.predicate.value.data
        if p in (0, 1):
            r = (signed(a, w) == signed(b, w)) if p == 0 else (signed(a, w) != signed(b, w))
        elif p in (2, 3, 4, 5):
            x, y = signed(a, w), signed(b, w)
            r = {2: x < y, 3: x <= y, 4: x > y, 5: x >= y}[p]
        else:
            x, y = unsigned(a, w), unsigned(b, w)
            r = {6: x < y, 7: x <= y, 8: x > y, 9: x >= y}[p]
        return (np.asarray(r, dtype=bool),)

    @impl(arith.SelectOp)
    def run_select(self, interpreter, op, args):
        return (select(*args),)

    def _int_cast(self, op, args, domain: str):
        w_in, w_out = _width(op), _out_width(op)
        x = args[0]
        return (wrap(signed(x, w_in) if domain == "s" else unsigned(x, w_in), w_out),)

    @impl(arith.IndexCastOp)
    def run_index_cast(self, interpreter, op, args):
        return self._int_cast(op, args, "s")

    @impl(arith.ExtSIOp)
    def run_extsi(self, interpreter, op, args):
        return self._int_cast(op, args, "s")

    @impl(arith.ExtUIOp)
    def run_extui(self, interpreter, op, args):
        return self._int_cast(op, args, "u")

    @impl(arith.TruncIOp)
    def run_trunci(self, interpreter, op, args):
        return self._int_cast(op, args, "s")

    @impl(arith.SIToFPOp)
    def run_sitofp(self, interpreter, op, args):
        return (round_to(signed(args[0], _width(op)).astype(np.float64), op.results[0].type),)

    @impl(arith.UIToFPOp)
    def run_uitofp(self, interpreter, op, args):
        return (round_to(unsigned(args[0], _width(op)).astype(np.float64), op.results[0].type),)

    run_fptosi = impl(arith.FPToSIOp)(_fp_to_int(True))
    run_fptoui = impl(arith.FPToUIOp)(_fp_to_int(False))

    @impl(arith.BitcastOp)
    def run_bitcast(self, interpreter, op, args):
        return (bitcast(args[0], op.operands[0].type, op.results[0].type),)

    # floats --------------------------------------------------------------------------

    run_addf = impl(arith.AddfOp)(_float_binary(np.add))
    run_subf = impl(arith.SubfOp)(_float_binary(np.subtract))
    run_mulf = impl(arith.MulfOp)(_float_binary(np.multiply))
    run_divf = impl(arith.DivfOp)(_float_binary(np.divide))
    run_maximumf = impl(arith.MaximumfOp)(_float_binary(np.maximum))
    run_minimumf = impl(arith.MinimumfOp)(_float_binary(np.minimum))
    run_maxnumf = impl(arith.MaxnumfOp)(_float_binary(np.fmax))
    run_minnumf = impl(arith.MinnumfOp)(_float_binary(np.fmin))

    @impl(arith.NegfOp)
    def run_negf(self, interpreter, op, args):
        return (np.negative(args[0]),)

    @impl(arith.ExtFOp)
    def run_extf(self, interpreter, op, args):
        return (round_to(args[0], op.results[0].type),)

    @impl(arith.TruncFOp)
    def run_truncf(self, interpreter, op, args):
        e = element_type(op.results[0].type)
        if e.name in FLOAT8_FORMATS:  # PTX converts into FP8 saturating only (cvt.rn.satfinite)
            return (round_to(saturated_f8(args[0], e.name), op.results[0].type),)
        return (round_to(args[0], op.results[0].type),)

    @impl(arith.CmpfOp)
    def run_cmpf(self, interpreter, op: arith.CmpfOp, args):
        return (_cmpf(op.predicate.value.data, np.asarray(args[0]), np.asarray(args[1])),)


def _math_unary(fn):
    def run(self, interpreter, op, args):
        return (round_to(fn(np.asarray(args[0], dtype=np.float64)), op.results[0].type),)

    return run


def _math_binary(fn):
    def run(self, interpreter, op, args):
        a, b = (np.asarray(x, dtype=np.float64) for x in args)
        return (round_to(fn(a, b), op.results[0].type),)

    return run


_erf = np.vectorize(__import__("math").erf, otypes=[np.float64])


@register_impls
class LaneMathFunctions(InterpreterFunctions):
    """``math`` on lane values: float64, then one rounding to the result type."""

    run_exp = impl(math.ExpOp)(_math_unary(exp_ftz))  # the GPU's ex2.approx.ftz: no subnormal results
    run_exp2 = impl(math.Exp2Op)(_math_unary(exp2_ftz))
    run_expm1 = impl(math.ExpM1Op)(_math_unary(np.expm1))
    run_log = impl(math.LogOp)(_math_unary(np.log))
    run_log2 = impl(math.Log2Op)(_math_unary(np.log2))
    run_log10 = impl(math.Log10Op)(_math_unary(np.log10))
    run_log1p = impl(math.Log1pOp)(_math_unary(np.log1p))
    run_sqrt = impl(math.SqrtOp)(_math_unary(np.sqrt))
    run_rsqrt = impl(math.RsqrtOp)(_math_unary(lambda x: 1.0 / np.sqrt(x)))
    run_tanh = impl(math.TanhOp)(_math_unary(np.tanh))
    run_sin = impl(math.SinOp)(_math_unary(np.sin))
    run_cos = impl(math.CosOp)(_math_unary(np.cos))
    run_absf = impl(math.AbsFOp)(_math_unary(np.abs))
    run_floor = impl(math.FloorOp)(_math_unary(np.floor))
    run_ceil = impl(math.CeilOp)(_math_unary(np.ceil))
    run_trunc = impl(math.TruncOp)(_math_unary(np.trunc))
    run_roundeven = impl(math.RoundEvenOp)(_math_unary(np.rint))
    run_erf = impl(math.ErfOp)(_math_unary(_erf))
    run_powf = impl(math.PowFOp)(_math_binary(np.power))
    run_copysign = impl(math.CopySignOp)(_math_binary(np.copysign))

    @impl(math.FmaOp)
    def run_fma(self, interpreter, op, args):
        a, b, c = (np.asarray(x, dtype=np.float64) for x in args)
        return (round_to(a * b + c, op.results[0].type),)


def _positions(op, args, first_dynamic: int) -> tuple:
    """An index of the ``(32, ...)`` array: every lane at its own (static or per-lane dynamic) position."""
    dynamic = iter(args[first_dynamic:])
    pos: list = [LANE_IDS]
    for p in op.static_position.iter_values():
        pos.append(np.asarray(next(dynamic), dtype=np.int64) if p == DYNAMIC_INDEX else int(p))
    shape = vector_shape(op.operands[0].type if isinstance(op, vector.ExtractOp) else op.dest.type)
    for axis, p in enumerate(pos[1:]):
        if np.any((np.asarray(p) < 0) | (np.asarray(p) >= shape[axis])):
            raise OpError(f"position {p} is outside the vector's extent {shape[axis]}")
    return tuple(pos)


@register_impls
class LaneVectorFunctions(InterpreterFunctions):
    """1-D (and n-D) ``vector`` ops per lane: insert, extract, broadcast, bitcast, fma."""

    @impl(vector.InsertOp)
    def run_insert(self, interpreter, op: vector.InsertOp, args):
        out = np.array(args[1], copy=True)
        out[_positions(op, args, 2)] = args[0]
        return (out,)

    @impl(vector.ExtractOp)
    def run_extract(self, interpreter, op: vector.ExtractOp, args):
        return (np.array(np.asarray(args[0])[_positions(op, args, 1)]),)

    @impl(vector.BroadcastOp)
    def run_broadcast(self, interpreter, op: vector.BroadcastOp, args):
        x = np.asarray(args[0])
        shape = vector_shape(op.vector.type)
        inner = x.shape[1:]
        x = x.reshape((LANES,) + (1,) * (len(shape) - len(inner)) + inner)
        return (np.array(np.broadcast_to(x, (LANES, *shape))),)

    @impl(vector.BitcastOp)
    def run_bitcast(self, interpreter, op, args):
        return (bitcast(args[0], op.source.type, op.result.type),)

    @impl(vector.FMAOp)
    def run_fma(self, interpreter, op, args):
        a, b, c = (np.asarray(x, dtype=np.float64) for x in args)
        return (round_to(a * b + c, op.results[0].type),)


__all__ = ["LaneArithFunctions", "LaneMathFunctions", "LaneVectorFunctions", "select"]
