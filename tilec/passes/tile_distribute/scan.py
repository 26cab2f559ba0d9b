"""Scans of ``tile-distribute``: ``tile.scan`` of a register tile along a dimension, or of a vector.

Derived from the fragment, as the reductions are (``reduce.py``), for any fragment tile-layout gives:
the coordinate scanned, ``c``, of a value is ``lane_part(thread) + value_part(v)``, and each bit of it
comes from one place: the value's own index (a register of the same thread), a lane bit (another lane
of the warp), or a thread bit past the lane's (another warp of a block tile). Over ``n = 2**k``
elements the scan is then ``k`` steps, one per bit ``d`` of ``c``, lowest first. Before the step for
``d`` every element holds ``total``, the combination of its aligned run of ``d`` elements, and
``prefix``, that of the run's elements up to itself. The element ``c ^ d`` holds the neighbouring
run's total: both totals combine into the run of ``2d``, and an element whose bit ``d`` is set (the
run below it is the earlier one) combines that total into its prefix. A reverse scan takes the run
above instead.

The neighbour's total is another register (a value bit: nothing to move), a ``shfl.sync.bfly`` over
lane bit ``s`` (mask ``1 << s``), or, for a thread bit past the lane's, an exchange through shared
memory: every thread writes its totals, the block synchronises, each reads its neighbour's, and the
block synchronises again before the buffer is written next. 16-bit floats are combined in f32 and
rounded once at the end; integers in their own width, signed.
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float32Type, IntegerType, i32
from xdsl.ir import SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterVectorType, element_bits
from tilec.passes.fragments import Fragment, VectorFragment, tile_fragment
from tilec.passes.tile_distribute.memory import RegallocError
from tilec.passes.tile_distribute.reduce import LANE_BITS


def _geometry(frag: Fragment | VectorFragment, dim: int):
    """``(along, other, fields_along, fields_other)``: each value's static coordinate along the scanned
    dimension and across it, and the thread's bit fields along and across it."""
    if isinstance(frag, VectorFragment):
        return list(frag.positions), [0] * frag.num_values, frag.lane_fields, ()
    along = [c[dim] for c in frag.value_coords]
    other = [c[1 - dim] for c in frag.value_coords]
    return along, other, frag.lane_fields[dim], frag.lane_fields[1 - dim]


def scan_steps(frag: Fragment | VectorFragment, dim: int, extent: int) -> list[tuple[int, str, object]]:
    """For each bit ``d`` of the scanned coordinate (lowest first): ``(d, "value", partners)`` with the
    value holding each value's neighbour, or ``(d, "lane", s)`` / ``(d, "thread", s)`` with the thread
    bit ``s`` that moves ``d``. Raises :class:`RegallocError` when a bit comes from no single place."""
    along, other, fields, across = _geometry(frag, dim)
    thread_bit: dict[int, int] = {}
    for f in fields:
        if f.scale & (f.scale - 1):
            raise RegallocError(f"fragment {frag.layout}: thread bits {f.shift}.. move the scanned coordinate by "
                                f"{f.scale}, not a power of two")
        for k in range(f.width):
            thread_bit[f.scale << k] = f.shift + k
    moving_across = {f.shift + k for f in across for k in range(f.width)}
    if moving_across & set(thread_bit.values()):
        raise RegallocError(f"fragment {frag.layout}: a thread bit moves along both dimensions, so its scan "
                            "partner holds another row")
    value_bits = 0
    for c in along:
        value_bits |= c
    lane_bits = sum(thread_bit)
    if value_bits & lane_bits or (value_bits | lane_bits) != extent - 1:
        raise RegallocError(f"fragment {frag.layout}: the scanned coordinate is not a sum of distinct bits of the "
                            f"value and the thread (value bits {value_bits:#x}, thread bits {lane_bits:#x})")
    where = {(o, a): v for v, (o, a) in enumerate(zip(other, along))}
    steps = []
    for b in range(extent.bit_length() - 1):
        d = 1 << b
        if d in thread_bit:
            s = thread_bit[d]
            steps.append((d, "lane" if s < LANE_BITS else "thread", s))
        else:
            steps.append((d, "value", [where[(o, a ^ d)] for o, a in zip(other, along)]))
    return steps


def _scan_fragment(op: t.ScanOp) -> Fragment | VectorFragment:
    ty = op.input.type
    if isinstance(ty, RegisterVectorType):
        return VectorFragment(ty.fragment, ty.orientation.data)
    return tile_fragment(ty.dims, ty.fragment.layout)


def _work_bits(element) -> int:
    return 64 if element_bits(element) == 64 else 32


def scan_scratch_bytes(op: t.ScanOp) -> int:
    """Shared memory the scan exchanges totals through (0 when no thread bit past the lane's moves along
    it): room for one work value for each value of each thread (fewer are written where values share
    their run's total)."""
    frag = _scan_fragment(op)
    steps = scan_steps(frag, op.dim.value.data, op.extent)
    if not any(kind == "thread" for _, kind, _ in steps):
        return 0
    return frag.num_values * frag.tv.num_threads * _work_bits(op.input.type.element_type) // 8


class ScanLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.scan``."""

    def scan(self, op: t.ScanOp) -> None:
        em = self.em
        x = self.get(op.input)
        frag = self.fragment(op.result)
        elem = op.result.type.element_type
        work = (i32 if isinstance(elem, IntegerType) else Float32Type()) if element_bits(elem) < 32 else elem
        kind, forward = op.kind.data, op.reverse is None
        if op.combine is not None:
            work = elem  # the user's function takes and gives the element type
        along = _geometry(frag, op.dim.value.data)[0]
        combined: dict[tuple[SSAValue, SSAValue], SSAValue] = {}

        def combine(a: SSAValue, b: SSAValue) -> SSAValue:
            """``a`` then ``b``, made once: values that hold one run's total are one SSA value, so each
            later step moves and combines it once, not once per value."""
            if (a, b) not in combined:
                combined[(a, b)] = self._combine(op.combine or kind, a, b)
            return combined[(a, b)]

        prefix = [self._convert(s, work) for s in self.scalars(x)]
        total = list(prefix)
        for d, where, how in scan_steps(frag, op.dim.value.data, op.extent):
            if where == "value":
                neighbour = [total[w] for w in how]
                mine_first = [(not a & d) == forward for a in along]  # in scan order (from the end: reversed)
                total = [combine(me, other) if first else combine(other, me)
                         for me, other, first in zip(total, neighbour, mine_first)]
                earlier = [not first for first in mine_first]  # the neighbour's run comes first
            else:
                unique = list(dict.fromkeys(total))
                if where == "lane":
                    moved = dict(zip(unique, (self._butterfly(v, 1 << how) for v in unique)))
                else:
                    moved = dict(zip(unique, self._exchange(op, unique, how, work)))
                neighbour = [moved[v] for v in total]
                bit_clear = self.thread_bits_zero(1 << how)
                first = bit_clear if forward else em.lnot(bit_clear)
                if op.combine is None:  # sum, product, max, min commute: a + b and b + a are the same
                    total = [combine(me, other) for me, other in zip(total, neighbour)]
                else:
                    total = [em.select(first, combine(me, other), combine(other, me), work)
                             for me, other in zip(total, neighbour)]
                earlier = [em.lnot(first)] * len(total)
            prefix = [self._with_earlier(combine, e, n, p, work) for e, n, p in zip(earlier, neighbour, prefix)]
        self.set_scalars(op.result, [self._convert(p, elem) for p in prefix])

    def _with_earlier(self, combine, earlier, neighbour: SSAValue, prefix: SSAValue, work) -> SSAValue:
        """``prefix`` with the neighbouring run's total combined in where that run comes first (``earlier``:
        a Python bool for a value bit, a run-time flag for a thread bit)."""
        if earlier is False:
            return prefix
        combined = combine(neighbour, prefix)
        return combined if earlier is True else self.em.select(earlier, combined, prefix, work)

    def _exchange(self, op: t.ScanOp, values: list[SSAValue], bit: int, work) -> list[SSAValue]:
        """The values of the thread whose index differs from this one's in ``bit`` (past the lane's),
        through the scan's shared buffer: written, synchronised, read, synchronised."""
        em = self.em
        threads = self.fragment(op.result).tv.num_threads
        if threads != self.threads:
            raise RegallocError(f"scans a tile of {threads} of the block's {self.threads} threads across warps")
        scratch = self._shared_address(op)
        me = self.thread_index(i32)
        partner = em.xor(me, 1 << bit, i32)
        for v, x in enumerate(values):
            self._store(x, em.gep(scratch, em.add(me, v * threads, i32), work, i32), True)
        em.insert(frag_fast.tile_barrier())
        out = [em.insert(frag_fast.frag_load(em.gep(scratch, em.add(partner, v * threads, i32), work, i32), work))
               .results[0] for v in range(len(values))]
        em.insert(frag_fast.tile_barrier())
        return out


__all__ = ["ScanLowering", "scan_scratch_bytes", "scan_steps"]

