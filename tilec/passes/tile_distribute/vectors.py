"""Register vectors in memory, and the value of a load outside its view.

- ``tile.store`` of a register vector to a rank-1 view or shared tile: each element is held by
  every lane of its row group (the lanes that differ in bits outside the vector fragment's lane
  fields hold copies); only the lane whose copy bits are zero stores it, under the view's bound,
  runs of consecutive elements as one vector store where the view is aligned for it.
  A load from a rank-1 shared tile reads each thread's elements (copies read one address).
- ``tile.iota``: a value's coordinate is the lane part plus the value part of its fragment.
- ``tile.load ... other(x)``: elements outside the view read as ``x`` (``-inf`` for a maximum
  over ragged rows). The load itself zero-fills what it does not read; each value is then
  selected against its own bound test, which costs two compares a value and only where
  ``other`` is given.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i32, i64

from tilec.dialects import frag_fast
from tilec.dialects.tile.types import element_bits
from tilec.ir import fast
from tilec.passes.fragments import WARP, Fragment, VectorFragment
from tilec.passes.tile_distribute.values import GlobalArg, Regs, SharedBuf


def copy_bits(frag: VectorFragment | Fragment) -> int:
    """The lane (thread, for a block's value) bits that do not move a vector's or a tile's elements:
    threads differing there hold copies."""
    fields = frag.lane_fields if isinstance(frag, VectorFragment) else [f for axis in frag.lane_fields for f in axis]
    used = 0
    for f in fields:
        used |= ((1 << f.width) - 1) << f.shift
    return (frag.tv.num_threads - 1) & ~used


class VectorLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`."""

    def store_global_vector(self, value: Regs, dst: GlobalArg, idx_old, idx_new,
                            mask: list[SSAValue] | None = None) -> None:
        """A register vector into a rank-1 view, each element from its leader thread. Consecutive
        positions at a multiple of ``w`` (from threads whose offsets are too) store as one ``w``-element
        vector (16, 8 or 4 bytes) where the view allows it, as :meth:`load_global_vector` loads them.
        With ``mask`` (an i1 per value) only the elements whose bit is set: a run is one vector where all
        its bits are."""
        em = self.em
        vec: VectorFragment = value.frag
        elem = value.element_type
        base = em.add(em.cast(idx_new[0], i64), self.lane_value(vec.lane_fields, i64), i64)
        bits = copy_bits(vec)
        leader = True if bits == 0 else self.thread_bits_zero(bits)
        scalars = self.scalars(value)
        size = element_bits(elem) // 8
        lane_div = min((f.scale & -f.scale for f in vec.lane_fields), default=1 << 30)
        where = {p: v for v, p in enumerate(vec.positions)}
        done: set[int] = set()

        bit = (lambda u: True) if mask is None else (lambda u: mask[u])

        def one(c, x, u):
            self._store(x, self.global_ptr(dst, [c]), em.all([leader, self.in_bounds(dst, 0, c), bit(u)]))
            return []

        for v, p in enumerate(vec.positions):
            if v in done:
                continue
            c = em.add(base, p, i64)
            w = next((w for w in (16 // size, 8 // size, 4 // size) if w >= 2 and p % w == 0 and lane_div % w == 0
                      and all(p + j in where for j in range(w))), 1) if size else 1
            if w == 1:
                one(c, scalars[v], v)
                done.add(v)
                continue
            run = [where[p + j] for j in range(w)]
            done.update(run)
            packed = self.pack_vector([scalars[u] for u in run], fast.vector_type(elem, w))
            whole = em.land(self.vec_ok(dst, w), self._origin_aligned(idx_old[0], idx_new[0], w))
            if whole is True and mask is None:  # all inside the view or all outside: one predicated vector store
                self._store(packed, self.global_ptr(dst, [c]), em.land(leader, self.in_bounds(dst, 0, c)))
                continue
            ok = em.all([whole, self.in_bounds(dst, 0, em.add(c, w - 1, i64)), *(bit(u) for u in run)])

            def vector_store(c=c, packed=packed):
                self._store(packed, self.global_ptr(dst, [c]), leader)
                return []

            def elementwise(c=c, run=run):
                for j, u in enumerate(run):
                    one(em.add(c, j, i64), scalars[u], u)
                return []

            self.if_then(ok, vector_store, elementwise)

    def store_shared_vector(self, value: Regs, dst: SharedBuf, idx_new) -> None:
        """A register vector into a rank-1 shared tile: each element once, from its leader thread."""
        em = self.em
        vec: VectorFragment = value.frag
        base = em.add(em.cast(idx_new[0], i32), self.lane_value(vec.lane_fields, i32), i32)
        bits = copy_bits(vec)
        leader = True if bits == 0 else self.thread_bits_zero(bits)
        for pos, x in zip(vec.positions, self.scalars(value)):
            self._store(x, self.shared_index_ptr(dst, em.add(base, pos, i32)), leader)

    def load_shared_vector(self, src: SharedBuf, idx_new, vf: VectorFragment, elem) -> Regs:
        """A register vector from a rank-1 shared tile: each thread reads the elements it holds (the
        threads holding copies read one address: a broadcast, no bank conflict)."""
        em = self.em
        base = em.add(em.cast(idx_new[0], i32), self.lane_value(vf.lane_fields, i32), i32)
        values = [em.insert(frag_fast.frag_load(self.shared_index_ptr(src, em.add(base, pos, i32)), elem)).results[0]
                  for pos in vf.positions]
        return Regs(vf, elem, values)

    def thread_bits_zero(self, bits: int):
        """Whether the bits ``bits`` of this thread's index (of its lane, when they are lane bits) are 0."""
        index = self.lane(i32) if bits < WARP else self.thread_index(i32)
        return self.em.cmp("eq", self.em.and_(index, bits, i32), 0, i32)

    def fill_outside(self, regs: Regs, src: GlobalArg, idx_new, other: float) -> Regs:
        """``regs`` (loaded from ``src`` at ``idx_new``) with ``other`` where an element is outside the view."""
        em = self.em
        elem = regs.element_type
        fill = em.const(other, elem)
        origin = [em.cast(i, i64) for i in idx_new]
        values = []
        for v, x in enumerate(self.scalars(regs)):
            inside = True
            for d, c in enumerate(self._element_coords(regs.frag, v)):
                inside = em.land(inside, self.in_bounds(src, d, em.add(origin[d], c, i64)))
            values.append(x if inside is True else em.select(inside, x, fill, elem))
        return Regs(regs.frag.with_packing(1), elem, values)

    def iota(self, op) -> None:
        """``tile.iota``: each value's coordinate along ``dim`` in its tile (or vector), plus the offset."""
        em = self.em
        offset = em.cast(self.get(op.offset), i32)
        fr = self.fragment(op.result)
        dim = op.dim.value.data
        if isinstance(fr, VectorFragment):
            lane, parts = self.lane_value(fr.lane_fields, i32), fr.positions
        else:
            lane, parts = self.lane_value(fr.lane_fields[dim], i32), [c[dim] for c in fr.value_coords]
        start = em.add(offset, lane, i32)
        self.set_scalars(op.result, [em.add(start, p, i32) for p in parts])

    def _element_coords(self, fr: Fragment | VectorFragment, v: int) -> tuple:
        """The (i64) coordinates within the window of this lane's value ``v``."""
        if isinstance(fr, VectorFragment):
            return (self.em.add(self.lane_value(fr.lane_fields, i64), fr.positions[v], i64),)
        return self.value_coord(fr, v, i64)



__all__ = ["VectorLowering", "copy_bits"]
