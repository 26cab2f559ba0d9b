"""Analyses of ``tile-regalloc`` on the warp-level tile IR, before anything is rewritten.

- :class:`FragmentAssignment`: every register tile and vector gets its
  fragment. Tiles that must share a layout (a loop's ``iter_args``, block
  arguments, ``scf.yield`` operands and results; an mma's accumulator and
  result; the operands and result of elementwise ops and ``tile.map``) form
  one class; each ``tile.mma`` anchors its operands' classes to the A, B and C
  fragments of its atom (:func:`~tilec.passes.fragments.mma_fragment`).
  A class without an anchor gets the default fragment; two different anchors
  on one class are an error (a layout conversion would be needed). A register
  vector gets the projection of the fragment of the tile it is broadcast to.
- :func:`known_divisor`: a power-of-two-ish divisor of an ``index`` value
  (constants, ``muli``, ``addi``, loop induction variables...), used to prove
  that a shared window starts on an ``ldmatrix``/vector boundary.
- :func:`estimate_registers`: 32-bit registers per thread the fragments need.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import EXTENT_LIMIT, RegisterType, RegisterVectorType, element_bits
from tilec.layout import MMA_ATOMS, MMAAtom
from tilec.passes.fragments import (
    WARP,
    Fragment,
    FragmentError,
    default_fragment,
    fma_fragment,
    mma_fragment,
)

BIG = 1 << 30

THREAD_TILE_ATTR = "tile.thread_tile"
"""Optional attribute of an ``fma_f32`` ``tile.mma``: ``[TM, TN]``, each lane's block of C."""


def _is_reg(v: SSAValue) -> bool:
    return isinstance(v.type, RegisterType | RegisterVectorType)


def value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a {v.type}"


@dataclass(frozen=True)
class VectorFragment:
    """A register vector (``row``/``col``) living in the lanes of a tile fragment ``tile``.

    Value ``i`` is the element at the lane's row (col) offset plus
    ``positions[i]``; ``of_value[v]`` is the value that tile value ``v`` uses.
    """

    tile: Fragment
    orientation: str
    positions: tuple[int, ...]
    of_value: tuple[int, ...]

    @property
    def num_values(self) -> int:
        return len(self.positions)

    @property
    def num_registers(self) -> int:
        return len(self.positions)


def vector_fragment(tile: Fragment, orientation: str) -> VectorFragment:
    axis = 0 if orientation == "row" else 1
    coords = [c[axis] for c in tile.value_coords]
    positions = tuple(sorted(set(coords)))
    _ = tile.lane_fields  # must be additive
    return VectorFragment(tile, orientation, positions, tuple(positions.index(c) for c in coords))


class _UnionFind:
    def __init__(self):
        self.parent: dict[SSAValue, SSAValue] = {}

    def find(self, v: SSAValue) -> SSAValue:
        self.parent.setdefault(v, v)
        while self.parent[v] is not v:
            self.parent[v] = self.parent[self.parent[v]]
            v = self.parent[v]
        return v

    def union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


def default_atom(element_type) -> MMAAtom:
    from xdsl.dialects.builtin import BFloat16Type, Float16Type

    if isinstance(element_type, Float16Type):
        return MMA_ATOMS["mma_m16n8k16_f16"]
    if isinstance(element_type, BFloat16Type):
        return MMA_ATOMS["mma_m16n8k16_bf16"]
    return MMA_ATOMS["mma_m16n8k8_tf32"]


def mma_atom_of(op: t.MmaOp) -> MMAAtom:
    return op.atom.data if op.atom is not None else default_atom(op.a.type.element_type)


def fma_shape(op: t.MmaOp) -> tuple[tuple[int, int], tuple[int, int]]:
    """((LM, LN), (TM, TN)) of an ``fma_f32`` mma: the lanes' grid and each lane's block of C."""
    m, n = op.c.type.dims
    attr = op.attributes.get(THREAD_TILE_ATTR)
    if attr is not None:
        tm, tn = (int(x) for x in attr.iter_values()) if hasattr(attr, "iter_values") else (
            int(x.value.data) if isinstance(x, IntegerAttr) else int(x.data) for x in attr.data)
        if m % tm or n % tn or (m // tm) * (n // tn) != WARP:
            raise FragmentError(f"{THREAD_TILE_ATTR} = [{tm}, {tn}] does not split the {m}x{n} accumulator over 32 lanes")
        return (m // tm, n // tn), (tm, tn)
    best = None
    for lm in (1, 2, 4, 8, 16, 32):
        ln = WARP // lm
        if m % lm or n % ln:
            continue
        tm, tn = m // lm, n // ln
        score = (abs(tm - tn), -min(tm, tn))
        if best is None or score < best[0]:
            best = (score, (lm, ln), (tm, tn))
    if best is None:
        raise FragmentError(f"an fma accumulator of {m}x{n} cannot be split over the 32 lanes of a warp")
    return best[1], best[2]


class FragmentAssignment:
    """The fragment of every register tile / vector value of one function."""

    def __init__(self, fn: Operation):
        self.uf = _UnionFind()
        self.anchors: dict[SSAValue, list[tuple[Fragment, Operation]]] = {}
        self.broadcasts: list[t.BroadcastOp] = []
        self.values: list[SSAValue] = []
        for op in fn.walk():
            self._constrain(op)
        self.tile: dict[SSAValue, Fragment] = {}
        self.vector: dict[SSAValue, VectorFragment] = {}
        self._solve()

    def _anchor(self, v: SSAValue, frag: Fragment, op: Operation) -> None:
        self.anchors.setdefault(v, []).append((frag, op))

    def _track(self, op: Operation) -> None:
        for r in op.results:
            if _is_reg(r):
                self.values.append(r)
        for region in op.regions:
            for block in region.blocks:
                for a in block.args:
                    if _is_reg(a):
                        self.values.append(a)

    def _constrain(self, op: Operation) -> None:
        self._track(op)
        uf = self.uf
        match op:
            case scf.ForOp():
                body = op.body.block
                yield_op = body.last_op
                for i, (init, res) in enumerate(zip(op.iter_args, op.results)):
                    if _is_reg(init):
                        uf.union(init, res)
                        uf.union(init, body.args[i + 1])
                        if isinstance(yield_op, scf.YieldOp):
                            uf.union(init, yield_op.operands[i])
            case scf.IfOp():
                for region in op.regions:
                    for block in region.blocks:
                        term = block.last_op
                        if isinstance(term, scf.YieldOp):
                            for res, y in zip(op.results, term.operands):
                                if _is_reg(res):
                                    uf.union(res, y)
            case t.MmaOp():
                uf.union(op.c, op.result)
                atom = mma_atom_of(op)
                if atom.name == "fma_f32":
                    lanes, tt = fma_shape(op)
                    a = fma_fragment("A", op.a.type.dims, lanes, tt, op.transpose_a is not None, value_name(op.a))
                    b = fma_fragment("B", op.b.type.dims, lanes, tt, op.transpose_b is None, value_name(op.b))
                    c = fma_fragment("C", op.c.type.dims, lanes, tt, False, value_name(op.c))
                else:
                    a = mma_fragment(atom, "A", op.a.type.dims, op.transpose_a is not None, value_name(op.a))
                    # the atom's B is N x K; the tile is K x N unless transpose_b
                    b = mma_fragment(atom, "B", op.b.type.dims, op.transpose_b is None, value_name(op.b))
                    c = mma_fragment(atom, "C", op.c.type.dims, False, value_name(op.c))
                self._anchor(op.a, a, op)
                self._anchor(op.b, b, op)
                self._anchor(op.c, c, op)
            case t.WgmmaOp():
                # a warp's part of a wgmma accumulator is the m16n8 C fragment of its 16 rows
                uf.union(op.c, op.result)
                self._anchor(op.c, mma_fragment(MMA_ATOMS["mma_m16n8k16_f16"], "C", op.c.type.dims, False,
                                                value_name(op.c)), op)
            case t.MapOp() | t.ConvertOp() | t.AddOp() | t.SubOp() | t.MulOp() | t.DivOp() | t.MaxOp() \
                    | t.ExpOp() | t.Exp2Op() | t.ReluOp():
                if isinstance(op.results[0].type, RegisterType):
                    for v in op.operands:
                        if isinstance(v.type, RegisterType):
                            uf.union(v, op.results[0])
                elif isinstance(op.results[0].type, RegisterVectorType):
                    for v in op.operands:
                        uf.union(v, op.results[0])
            case t.BroadcastOp():
                self.broadcasts.append(op)
            case _:
                pass

    def _solve(self) -> None:
        chosen: dict[SSAValue, tuple[Fragment, Operation]] = {}
        for v, items in self.anchors.items():
            root = self.uf.find(v)
            for frag, op in items:
                if root in chosen:
                    old, old_op = chosen[root]
                    if (old.layout, old.packing) != (frag.layout, frag.packing):
                        raise FragmentError(
                            f"register tile {value_name(v)} needs two fragments: {old.describe()} "
                            f"(from {old_op.name}) and {frag.describe()} (from {op.name}); converting "
                            "between fragments is not supported"
                        )
                else:
                    chosen[root] = (frag, op)
        for v in self.values:
            if isinstance(v.type, RegisterType):
                root = self.uf.find(v)
                if root not in chosen:
                    chosen[root] = (default_fragment(v.type.dims, value_name(v)), None)
                self.tile[v] = chosen[root][0]
                given = v.type.fragment
                if given is not None and given.layout != self.tile[v].layout:
                    raise FragmentError(
                        f"register tile {value_name(v)} has the fragment {given.layout} in its type, but its "
                        f"uses need {self.tile[v].describe()}"
                    )
        # register vectors: from the tiles they are broadcast to
        vchosen: dict[SSAValue, VectorFragment] = {}
        for op in self.broadcasts:
            frag = vector_fragment(self.tile[op.result], op.input.type.orientation.data)
            root = self.uf.find(op.input)
            old = vchosen.get(root)
            if old is not None and old != frag:
                raise FragmentError(f"register vector {value_name(op.input)} is broadcast to tiles of different fragments")
            vchosen[root] = frag
        for v in self.values:
            if isinstance(v.type, RegisterVectorType):
                root = self.uf.find(v)
                if root not in vchosen:
                    raise FragmentError(f"register vector {value_name(v)} is never broadcast to a tile: "
                                        "its lanes are unknown (reductions are not supported yet)")
                self.vector[v] = vchosen[root]

    def of(self, v: SSAValue) -> Fragment | VectorFragment:
        if v in self.tile:
            return self.tile[v]
        return self.vector[v]


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
        case t.BlockIdOp() | t.ThreadIdOp() | t.WarpIdOp():
            return 0, (1 << 31) - 1
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


def fragment_registers(v: SSAValue, assignment: FragmentAssignment) -> int:
    frag = assignment.of(v)
    if isinstance(frag, VectorFragment):
        return frag.num_registers
    bits = element_bits(v.type.element_type)
    if frag.packing == 2:
        return frag.num_registers
    return frag.num_values * max(1, bits // 32)


def estimate_registers(fn: Operation, assignment: FragmentAssignment) -> RegisterEstimate:
    """Loop-carried tiles + the largest mma's A and B fragments + a flat allowance for addresses."""
    carried = 0
    largest, largest_count = "", 0
    carried_roots = set()
    for op in fn.walk():
        if isinstance(op, scf.ForOp):
            for init in op.iter_args:
                if _is_reg(init):
                    carried_roots.add(assignment.uf.find(init))
                    n = fragment_registers(init, assignment)
                    carried += n
                    if n > largest_count:
                        largest, largest_count = f"loop-carried {init.type} ({value_name(op.body.block.args[1 + list(op.iter_args).index(init)])})", n
    operands = 0
    for op in fn.walk():
        if isinstance(op, t.MmaOp):
            c = fragment_registers(op.c, assignment)
            if mma_atom_of(op).name == "fma_f32":
                # operands are streamed from shared: TM values of A and TN of B per k
                tm, tn = assignment.of(op.c).layout[1].shape
                n = tm + tn
            else:
                n = fragment_registers(op.a, assignment) + fragment_registers(op.b, assignment)
                for v in (op.a, op.b):
                    k = fragment_registers(v, assignment)
                    if k > largest_count:
                        largest, largest_count = f"{v.type} ({value_name(v)}, operand of tile.mma)", k
            operands = max(operands, n + (0 if assignment.uf.find(op.c) in carried_roots else c))
            if c > largest_count:
                largest, largest_count = f"accumulator {op.c.type} ({value_name(op.c)})", c
    return RegisterEstimate(carried + operands + ADDRESS_REGISTERS, carried, operands, largest, largest_count)


__all__ = [
    "ADDRESS_REGISTERS",
    "FragmentAssignment",
    "RegisterEstimate",
    "VectorFragment",
    "estimate_registers",
    "fragment_registers",
    "known_divisor",
    "vector_fragment",
]
