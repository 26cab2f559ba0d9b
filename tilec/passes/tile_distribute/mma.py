"""``tile.mma`` in ``tile-distribute``: one ``frag.mma`` per atom, or the SIMT fused multiply-adds.

An mma's operands must hold the fragments its atom needs (the A, B and C layouts tiled over the
tiles, :func:`tilec.passes.tile_layout.mma_fragments`; another spelling of the same function
will do). Atom tile ``(m, n)`` of C accumulates ``A(m, k) B(n, k)`` over the ``k`` tiles; 16-bit
operands go in as packed pairs. The SIMT (``fma_f32``) form streams each k's ``TM`` values of A and
``TN`` of B from shared memory where the operands were only loaded for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import Float32Type
from xdsl.ir import Attribute, SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.layout import FMA_F32, MMAAtom
from tilec.passes.fragments import Fragment
from tilec.passes.tile_distribute.values import Regs, SharedBuf
from tilec.passes.tile_layout import mma_atom_of, mma_fragments


class MmaLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.mma``."""

    def _mma(self, op: t.MmaOp) -> None:
        em = self.em
        a, b, c = self.get(op.a), self.get(op.b), self.get(op.c)
        atom = mma_atom_of(op)
        fa, fb, fc = (self.checked_fragment(v, want, op) for v, want in zip((op.a, op.b, op.c), mma_fragments(op)))
        acc = list(c.values)
        if atom.name == "fma_f32":
            self._fma(op, a, b, acc, fc)
            return
        if atom.a_type != "tf32":  # 16-bit operands go in as packed pairs, 8-bit ones four to a register
            per = 4 if atom.a_type in ("s8", "e4m3", "e5m2") else 2
            a, b = self.in_form(a, fa.with_packing(per)), self.in_form(b, fb.with_packing(per))
        mi_n, ki_n = fa.tiles
        ni_n, ki_n2 = fb.tiles
        assert ki_n == ki_n2 and fc.tiles == (mi_n, ni_n)
        for ki in range(ki_n):
            for mi in range(mi_n):
                a_regs = self._operand_regs(a, fa, mi, ki, atom)
                for ni in range(ni_n):
                    b_regs = self._operand_regs(b, fb, ni, ki, atom)
                    rng = fc.atom_value_range(mi, ni)
                    mma = em.insert(frag_fast.frag_mma(atom, a_regs, b_regs, acc[rng.start : rng.stop]))
                    for i, r in zip(rng, mma.results):
                        r.name_hint = "acc"
                        acc[i] = r
        self.vmap[op.result] = Regs(self.fragment(op.result), c.element_type, acc)  # f32, or i32 sums of i8

    def _operand_regs(self, x: Regs, fr: Fragment, tp: int, tq: int, atom: MMAAtom) -> list[SSAValue]:
        """The registers of atom tile ``(tp, tq)`` of operand ``x``, whose fragment is the atom's ``fr``."""
        rng = fr.atom_value_range(tp, tq)
        regs = x.values[rng.start // x.packing : rng.stop // x.packing]
        if atom.a_type == "tf32":
            out = []
            for r in regs:
                key = ("tf32", r)
                if key not in x.cache:
                    x.cache[key] = self.em.insert(frag_fast.frag_tf32(r)).results[0]
                out.append(x.cache[key])
            return out
        return list(regs)

    def _fma(self, op: t.MmaOp, a, b, acc: list[SSAValue], fc: Fragment) -> None:
        """SIMT: per k, the lane's TM values of A and TN of B (loaded from shared right here when
        the operands are streamed), then TM x TN fused multiply-adds."""
        em = self.em
        tm, tn = fc.layout[1].shape
        k = a.frag.num_values // tm
        for kk in range(k):
            xs = self._operand_values(a, [i + tm * kk for i in range(tm)])
            ys = self._operand_values(b, [j + tn * kk for j in range(tn)])
            for i in range(tm):
                for j in range(tn):
                    r = em.insert(frag_fast.frag_mma(FMA_F32, [xs[i]], [ys[j]], [acc[i + tm * j]])).results[0]
                    r.name_hint = "acc"
                    acc[i + tm * j] = r
        self.vmap[op.result] = Regs(self.fragment(op.result), Float32Type(), acc)

    def _operand_values(self, x, values: list[int]) -> list[SSAValue]:
        if isinstance(x, LazyShared):
            vals = self.load_shared_values(x.buf, x.origin, x.div, x.frag, values, x.element_type)
            if x.element_type != Float32Type():
                vals = [self._convert(v, Float32Type()) for v in vals]
            return vals
        scalars = self.scalars(x)
        return [scalars[v] if scalars[v].type == Float32Type() else self._convert(scalars[v], Float32Type())
                for v in values]


@dataclass(eq=False)
class LazyShared:
    """An FMA operand tile left in shared memory: ``tile.mma`` loads each k's values when it needs them."""

    buf: SharedBuf
    origin: list
    div: list[int]
    frag: Fragment
    element_type: Attribute


def streamed_fma_operand(op: t.LoadOp) -> bool:
    """A shared → register load used only as the A or B operand of ``fma_f32`` mmas."""
    uses = list(op.result.uses)
    if not uses:
        return False
    for use in uses:
        user = use.operation
        if not isinstance(user, t.MmaOp) or mma_atom_of(user).name != "fma_f32" or use.index > 1:
            return False
    return True
