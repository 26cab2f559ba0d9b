"""Analyses of ``tile-distribute`` on the fragment-typed tile IR, before anything is rewritten.

- :func:`known_divisor`: a power-of-two-ish divisor of an ``index`` value
  (constants, ``muli``, ``addi``, loop induction variables...), used to prove
  that a shared window starts on an ``ldmatrix``/vector boundary.
- :func:`estimate_registers`: 32-bit registers per thread the fragments need
  (read from the types and the register forms).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import EXTENT_LIMIT, element_bits
from tilec.passes.fragments import VectorFragment
from tilec.passes.tile_layout import is_register, mma_atom_of, value_name

BIG = 1 << 30


# ---------------------------------------------------------------- divisibility


def known_divisor(v: SSAValue, depth: int = 0) -> int:
    """A number that provably divides the (index) value ``v`` (1 if nothing is known)."""
    if depth > 32:
        return 1
    d = depth + 1
    if isinstance(v, OpResult):
        op = v.op
        match op:
            case arith.ConstantOp():
                value = op.value
                if isinstance(value, IntegerAttr):
                    c = abs(value.value.data)
                    return c if c else BIG
                return 1
            case arith.MuliOp():
                return min(BIG, known_divisor(op.lhs, d) * known_divisor(op.rhs, d))
            case arith.AddiOp() | arith.SubiOp():
                return gcd(known_divisor(op.lhs, d), known_divisor(op.rhs, d))
            case arith.ShLIOp():
                rhs = op.rhs
                if isinstance(rhs, OpResult) and isinstance(rhs.op, arith.ConstantOp):
                    return min(BIG, known_divisor(op.lhs, d) << rhs.op.value.value.data)
                return known_divisor(op.lhs, d)
            case arith.RemUIOp() | arith.RemSIOp():
                return gcd(known_divisor(op.lhs, d), known_divisor(op.rhs, d))
            case arith.SelectOp():
                return gcd(known_divisor(op.lhs, d), known_divisor(op.rhs, d))
            case arith.MinUIOp() | arith.MaxUIOp() | arith.MinSIOp() | arith.MaxSIOp():
                return gcd(known_divisor(op.lhs, d), known_divisor(op.rhs, d))
            case arith.IndexCastOp():
                return known_divisor(op.input, d)
            case _:
                return 1
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        if isinstance(parent, scf.ForOp) and v.index == 0:
            return gcd(known_divisor(parent.lb, d), known_divisor(parent.step, d))
    return 1


# ---------------------------------------------------------------- ranges

_I64 = (-(1 << 63), (1 << 63) - 1)


def known_range(v: SSAValue, depth: int = 0) -> tuple[int, int] | None:
    """Bounds ``(lo, hi)`` that provably hold for the (index) value ``v``, or None.

    Interval arithmetic over the ops that make window origins (block and
    warp ids, extents, loop counters, ``+ - *``, unsigned ``/ % min``); any
    step that could wrap around 64 bits gives None.
    """
    if depth > 32:
        return None
    d = depth + 1
    if isinstance(v, BlockArgument):
        parent = v.block.parent_op()
        if isinstance(parent, scf.ForOp) and v.index == 0:
            lb, ub = known_range(parent.lb, d), known_range(parent.ub, d)
            if lb is not None and ub is not None and lb[0] <= ub[1] - 1:
                return lb[0], ub[1] - 1  # lb <= iv < ub (scf.for steps are positive)
        return None
    if not isinstance(v, OpResult):
        return None
    op = v.op
    match op:
        case arith.ConstantOp():
            value = op.value
            return (value.value.data,) * 2 if isinstance(value, IntegerAttr) else None
        case t.DimOp():
            return 0, EXTENT_LIMIT - 1
        case t.BlockIdOp() | t.ThreadIdOp() | t.WarpIdOp() | t.ClusterIdOp():
            return 0, (1 << 31) - 1
        case t.BlockRankOp():
            return 0, 15
        case t.GridDimOp() | t.ClusterCountOp():
            return 1, (1 << 31) - 1
        case arith.IndexCastOp():
            return known_range(op.input, d)
        case arith.AddiOp() | arith.SubiOp() | arith.MuliOp():
            a, b = known_range(op.lhs, d), known_range(op.rhs, d)
            if a is None or b is None:
                return None
            if isinstance(op, arith.AddiOp):
                r = a[0] + b[0], a[1] + b[1]
            elif isinstance(op, arith.SubiOp):
                r = a[0] - b[1], a[1] - b[0]
            else:
                corners = [x * y for x in a for y in b]
                r = min(corners), max(corners)
            return r if _I64[0] <= r[0] and r[1] <= _I64[1] else None
        case arith.SelectOp():
            a, b = known_range(op.lhs, d), known_range(op.rhs, d)
            return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    # unsigned ops: bounded by a nonnegative operand
    a = known_range(op.operands[0], d) if op.operands else None
    b = known_range(op.operands[1], d) if len(op.operands) > 1 else None
    a_ok, b_ok = a is not None and a[0] >= 0, b is not None and b[0] >= 0
    match op:
        case arith.DivUIOp() if a_ok:
            return (a[0] // b[1], a[1] // b[0]) if b_ok and b[0] >= 1 else (0, a[1])
        case arith.RemUIOp() if a_ok:
            return (0, min(a[1], b[1] - 1)) if b_ok and b[0] >= 1 else (0, a[1])
        case arith.MinUIOp() if a_ok or b_ok:
            if a_ok and b_ok:
                return min(a[0], b[0]), min(a[1], b[1])
            return 0, (a if a_ok else b)[1]
        case arith.MaxUIOp() if a_ok and b_ok:
            return max(a[0], b[0]), max(a[1], b[1])
    return None


# ---------------------------------------------------------------- registers


ADDRESS_REGISTERS = 40
"""A flat allowance for addresses, indices, bounds and loop counters per thread."""


@dataclass(frozen=True)
class RegisterEstimate:
    total: int
    carried: int
    operands: int
    largest: str
    largest_count: int
    largest_op: Operation | None = None
    """The op that makes the largest tile (its line is the diagnostic's)."""


def fragment_registers(v: SSAValue, fragment) -> int:
    """32-bit registers per lane of register value ``v`` (``fragment(v)`` gives its fragment and form)."""
    frag = fragment(v)
    if isinstance(frag, VectorFragment):
        return frag.num_registers
    bits = element_bits(v.type.element_type)
    if frag.packing > 1:
        return frag.num_registers
    return frag.num_values * max(1, bits // 32)


def estimate_registers(fn: Operation, fragment, forms) -> RegisterEstimate:
    """Loop-carried tiles (of the deepest nest of loops; loops one after another reuse them) + the largest
    mma's A and B fragments + a flat allowance for addresses.

    ``fragment(v)``: the fragment (with its register form) of a register value; ``forms.root(v)``:
    the representative of the values that share its registers across a loop.
    """
    largest, largest_count, largest_op = "", 0, None
    carried_roots = set()
    own: dict[Operation, int] = {}  # each loop's carried registers; sequential loops reuse them
    for op in fn.walk():
        if isinstance(op, scf.ForOp):
            own[op] = 0
            for init in op.iter_args:
                if is_register(init):
                    carried_roots.add(forms.root(init))
                    n = fragment_registers(init, fragment)
                    own[op] += n
                    if n > largest_count:
                        name = value_name(op.body.block.args[1 + list(op.iter_args).index(init)])
                        largest, largest_count = f"loop-carried {init.type} ({name})", n
                        largest_op = init.owner if isinstance(init.owner, Operation) else op
    carried = 0
    for loop, n in own.items():  # a loop's own, and those of the loops around it, are live together
        outer = loop.parent_op()
        while outer is not None:
            n += own.get(outer, 0)
            outer = outer.parent_op()
        carried = max(carried, n)
    operands = 0
    for op in fn.walk():
        if isinstance(op, t.MmaOp):
            c = fragment_registers(op.c, fragment)
            if mma_atom_of(op).name == "fma_f32":
                # operands are streamed from shared: TM values of A and TN of B per k
                tm, tn = fragment(op.c).layout[1].shape
                n = tm + tn
            else:
                n = fragment_registers(op.a, fragment) + fragment_registers(op.b, fragment)
                for v in (op.a, op.b):
                    k = fragment_registers(v, fragment)
                    if k > largest_count:
                        largest, largest_count, largest_op = f"{v.type} ({value_name(v)}, operand of tile.mma)", k, op
            operands = max(operands, n + (0 if forms.root(op.c) in carried_roots else c))
            if c > largest_count:
                largest, largest_count, largest_op = f"accumulator {op.c.type} ({value_name(op.c)})", c, op
    return RegisterEstimate(carried + operands + ADDRESS_REGISTERS, carried, operands, largest, largest_count,
                            largest_op)


__all__ = [
    "ADDRESS_REGISTERS",
    "RegisterEstimate",
    "estimate_registers",
    "fragment_registers",
    "known_divisor",
    "known_range",
]
