"""Loads and stores at coordinates held in register tiles (``tile.gather`` / ``tile.scatter``) for
``tile-distribute``.

tile-layout gives the result (or stored value), the index tiles and the mask one fragment, so a
thread's value ``v`` of each is one element: its address is the view's pointer plus the index
registers of ``v`` times the view's strides (``linear``: plus the one offset register), and it is read
or written by one predicated ``ld.global`` / ``st.global``. The predicate is the element lying inside
the view (each coordinate below its extent, compared unsigned, so a negative index is outside;
``linear``: the offset below the number of elements the view spans) and its mask bit. A gather's
element whose predicate is false reads ``other``. Threads holding copies of an element each read it,
or write the same value to the same place.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.passes.tile_distribute.emit import Bool, Int
from tilec.passes.tile_distribute.values import GlobalArg


class GatherLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: gathers and scatters."""

    def span(self, g: GlobalArg) -> Int:
        """How many elements from ``g``'s first one its elements reach in memory (0 for an empty view):
        the bound of a ``linear`` offset."""
        em = self.em
        reach = em.sum([em.mul(em.sub(g.extent(d), 1, i64), self.stride(g, d), i64) for d in range(g.rank)], i64)
        span = em.add(reach, 1, i64)
        for d in range(g.rank):
            span = em.select(em.cmp("eq", g.extent(d), 0, i64), 0, span, i64)
        return span

    def _element_places(self, g: GlobalArg, op: t.GatherOp | t.ScatterOp) -> list[tuple[SSAValue, Bool]]:
        """(address, inside the view) of each fragment value's element."""
        em = self.em
        indices = [self.scalars(self.get(i)) for i in op.indices]
        bound = self.span(g) if op.linear is not None else None
        places = []
        for coords in zip(*indices):
            coords = [em.cast(c, i64) for c in coords]  # sign-extended: a negative index stays negative
            if bound is not None:
                places.append((em.gep(g.ptr, coords[0], g.element_type, i64), em.cmp("ult", coords[0], bound, i64)))
            else:
                inside = em.all([self.in_bounds(g, d, c) for d, c in enumerate(coords)])
                places.append((self.global_ptr(g, coords), inside))
        return places

    def gather(self, op: t.GatherOp) -> None:
        em = self.em
        g: GlobalArg = self.get(op.source)
        elem = op.result.type.element_type
        bits = self.scalars(self.get(op.mask)) if op.mask is not None else None
        fill = em.const(op.fill, elem) if op.fill != 0 else None
        values = []
        for v, (ptr, inside) in enumerate(self._element_places(g, op)):
            pred = inside if bits is None else em.land(inside, bits[v])
            if pred is False:
                values.append(fill if fill is not None else em.const(0, elem))
                continue
            x = em.insert(frag_fast.frag_load(ptr, elem, None if pred is True else em.boolean(pred))).results[0]
            values.append(x if fill is None or pred is True else em.select(pred, x, fill, elem))
        self.set_scalars(op.result, values)

    def scatter(self, op: t.ScatterOp) -> None:
        em = self.em
        g: GlobalArg = self.get(op.dest)
        scalars = self.scalars(self.get(op.value))
        bits = self.scalars(self.get(op.mask)) if op.mask is not None else None
        for v, (ptr, inside) in enumerate(self._element_places(g, op)):
            pred = inside if bits is None else em.land(inside, bits[v])
            if pred is not False:
                em.insert(frag_fast.frag_store(scalars[v], ptr, None if pred is True else pred))
