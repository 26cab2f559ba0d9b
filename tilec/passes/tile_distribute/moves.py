"""Moves of ``tile-distribute`` that read a tile's elements in another shape: ``tile.reshape`` (row-major
order kept), ``tile.join`` and ``tile.split`` (two tiles side by side along a dimension, or taking turns),
and ``tile.take`` (elements picked along an axis by an index tile, known at run time only: by shuffles
where every warp holds the source whole, :func:`take_shuffles`, else through shared memory).

tile-layout gives each move's sides fragments that hold the same elements in the same registers where a
layout says so; then the move renumbers registers (:func:`reshape_permutation`, :func:`split_plan`,
:func:`~tilec.passes.fragments.join_plan`) and emits nothing. Otherwise the values go through a scratch
tile in shared memory, as a layout conversion's do (:meth:`ConvertLowering._through_shared`): each source
value stored at its element's row-major place in the whole tile, the block synchronises, each result value
loaded from its element's place, the block synchronises again.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, IntegerType, i32

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, element_bits
from tilec.ir import fast
from tilec.passes.fragments import MAX_TAKE_SHUFFLES, WARP, Fragment, VectorFragment, join_plan, row_major_index


def pass_fragment(ty) -> Fragment | VectorFragment:
    """A register tile's or vector's type's fragment as the pass's fragment."""
    if isinstance(ty, RegisterType):
        return Fragment(ty.dims, ty.fragment)
    return VectorFragment(ty.fragment, ty.orientation.data)


def flat_index(fr: Fragment | VectorFragment, thread: int, value: int) -> int:
    """The row-major index of the element ``thread`` holds as ``value`` (a vector's: its index)."""
    if isinstance(fr, VectorFragment):
        return fr.tv.offset(thread, value)
    return row_major_index(fr.tv.coord(thread, value), fr.dims)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def reshape_permutation(src: Fragment | VectorFragment, dst: Fragment | VectorFragment) -> list[int] | None:
    """``perm`` with each thread's value ``v`` of ``dst`` its value ``perm[v]`` of ``src`` (the same element
    in row-major order: ``tile.reshape`` in registers), or None. A warp's fragment feeds a block's by
    each warp's copy (a tile of the block is the same in every warp)."""
    threads, source_threads = dst.tv.num_threads, src.tv.num_threads
    if threads % source_threads:
        return None
    where = {flat_index(src, 0, u): u for u in range(src.num_values)}
    perm = []
    for v in range(dst.num_values):
        u = where.get(flat_index(dst, 0, v))
        if u is None:
            return None
        perm.append(u)
    for t in range(1, threads):
        if any(flat_index(src, t % source_threads, u) != flat_index(dst, t, v) for v, u in enumerate(perm)):
            return None
    return tuple(perm)


def whole_value(op):
    """The value a move's scratch holds whole: a split's input, a take's source, else the result (a layout
    conversion's too)."""
    if isinstance(op, t.TakeOp):
        return op.source
    return op.input if isinstance(op, t.SplitOp) else op.result


def join_fragments(op: t.JoinOp | t.SplitOp) -> tuple[tuple[Fragment, Fragment], Fragment]:
    """The parts' and the whole tile's fragments of a ``tile.join`` (``tile.split``), from their types."""
    parts = (op.lhs, op.rhs) if isinstance(op, t.JoinOp) else (op.first, op.second)
    whole = op.result if isinstance(op, t.JoinOp) else op.input
    return (pass_fragment(parts[0].type), pass_fragment(parts[1].type)), pass_fragment(whole.type)


@lru_cache(maxsize=4096)  # a pure function of hashable fragments: a sort asks it once a step
def split_plan(parts: tuple[Fragment, Fragment], whole: Fragment, dim: int, interleaved: bool) -> list[list[int]] | None:
    """For each value of each part (the results of ``tile.split`` of a tile held in ``whole``), the value of
    ``whole`` every thread holds its element in, or None (then through shared memory)."""
    if parts[0].tv.num_threads != whole.tv.num_threads:
        return None
    plan = join_plan(parts, whole, dim, interleaved)
    if plan is None:
        return None
    found = [[None] * parts[p].num_values for p in (0, 1)]
    for v, (p, u) in enumerate(plan):
        found[p][u] = v
    return None if any(v is None for part in found for v in part) else tuple(tuple(part) for part in found)


@lru_cache(maxsize=1024)
def take_shuffles(src: Fragment | VectorFragment) -> tuple[tuple[tuple[int, int, int], ...], ...] | None:
    """How a thread finds any element of a source every warp holds whole, in its own warp: ``(lane runs,
    value runs)``, each run ``(bit, to, width)`` moving ``width`` bits of the element's row-major index from
    ``bit`` to ``to`` of the lane (of the value index) that holds it. None unless the fragment is the same
    in every warp, covers the source in each, is additive in the lane and the value with each of their bits
    one bit of the index (or none: lanes that repeat others), and holds at most
    :data:`MAX_TAKE_SHUFFLES` values a thread (one shuffle each, then a select)."""
    values, threads = src.num_values, src.tv.num_threads
    elements = src.length if isinstance(src, VectorFragment) else src.dims[0] * src.dims[1]
    if values > MAX_TAKE_SHUFFLES or values & (values - 1) or threads % WARP or elements & (elements - 1):
        return None
    if any(flat_index(src, w * WARP + lane, u) != flat_index(src, lane, u)
           for w in range(1, threads // WARP) for lane in range(WARP) for u in range(values)):
        return None  # the warps hold different parts
    if flat_index(src, 0, 0) != 0:
        return None
    lane_bits = [flat_index(src, 1 << b, 0) for b in range(5)]
    value_bits = [flat_index(src, 0, 1 << k) for k in range(values.bit_length() - 1)]
    used = [c for c in lane_bits + value_bits if c]
    if any(c & (c - 1) for c in used) or len(set(used)) != len(used) or sum(used) != elements - 1:
        return None  # each index bit from one lane or value bit
    if any(flat_index(src, lane, u) != sum(c for b, c in enumerate(lane_bits) if lane >> b & 1)
           + sum(c for k, c in enumerate(value_bits) if u >> k & 1) for lane in range(WARP) for u in range(values)):
        return None  # not additive

    def runs(contributions: list[int]) -> tuple[tuple[int, int, int], ...]:
        found: list[list[int]] = []
        for to, c in enumerate(contributions):
            if not c:
                continue
            bit = c.bit_length() - 1
            if found and found[-1][0] + found[-1][2] == bit and found[-1][1] + found[-1][2] == to:
                found[-1][2] += 1
            else:
                found.append([bit, to, 1])
        return tuple(tuple(r) for r in found)

    return runs(lane_bits), runs(value_bits)


def moves_as_i32(elem) -> bool:
    """Whether values of ``elem`` move between threads (shared memory, shuffles) as i32: masks and bytes."""
    return isinstance(elem, IntegerType) and elem.width.data < 32


class MoveLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.reshape``,
    ``tile.join`` and ``tile.split`` (with :class:`~tilec.passes.tile_distribute.convert.ConvertLowering`'s
    scratch path)."""

    def reshape(self, op: t.ReshapeOp, scratch) -> None:
        """The input's registers renumbered where every thread holds the elements of the result's
        fragment (tile-layout's choice where a layout expresses it), else through shared memory."""
        x = self.get(op.input)
        dst = self.fragment(op.result)
        scalars = self.scalars(x)
        if scratch is None:
            perm = reshape_permutation(x.frag, dst)
            assert perm is not None, "needs_scratch() said the registers hold the result"
            self.set_scalars(op.result, [scalars[u] for u in perm])
            return
        self._moved(op, [(x.frag, scalars, self._row_major(op.input.type))],
                    [(op.result, dst, self._row_major(op.result.type))], scratch)

    def join(self, op: t.JoinOp, scratch) -> None:
        """Each result value the register of a part's that holds its element (tile-layout's choice where
        a layout expresses it), else through shared memory: each part stored at its elements' places in
        the result, then the result loaded."""
        parts = [self.get(v) for v in (op.lhs, op.rhs)]
        dst = self.fragment(op.result)
        scalars = [self.scalars(x) for x in parts]
        dim, interleaved = op.dim_value, op.interleaved is not None
        if scratch is None:
            plan = join_plan((parts[0].frag, parts[1].frag), dst, dim, interleaved)
            assert plan is not None, "needs_scratch() said the registers hold the result"
            self.set_scalars(op.result, [scalars[p][u] for p, u in plan])
            return
        self._moved(op, [(x.frag, xs, self._placed(op, p)) for p, (x, xs) in enumerate(zip(parts, scalars))],
                    [(op.result, dst, self._row_major(op.result.type))], scratch)

    def split(self, op: t.SplitOp, scratch) -> None:
        """Each part's value the input's register that holds its element (tile-layout's choice where a
        layout expresses it), else through shared memory: the input stored, then each part loaded from its
        elements' places in it."""
        x = self.get(op.input)
        parts = [self.fragment(v) for v in (op.first, op.second)]
        scalars = self.scalars(x)
        if scratch is None:
            plan = split_plan((parts[0], parts[1]), x.frag, op.dim_value, op.interleaved is not None)
            assert plan is not None, "needs_scratch() said the registers hold the parts"
            for value, picks in zip((op.first, op.second), plan):
                self.set_scalars(value, [scalars[v] for v in picks])
            return
        self._moved(op, [(x.frag, scalars, self._row_major(op.input.type))],
                    [(v, fr, self._placed(op, p)) for p, (v, fr) in enumerate(zip((op.first, op.second), parts))],
                    scratch)

    def take(self, op: t.TakeOp, scratch) -> None:
        """Each result value the source element its index names along the axis (the result's own coordinate
        along the others): shuffled from the lane that holds it where every warp holds the source whole
        (``scratch`` None: :func:`take_shuffles`), else through shared memory (the source stored at its
        elements' row-major places, then loaded). An index outside the extent reads the axis's first element,
        then 0."""
        em = self.em
        src, dst = self.get(op.source), self.fragment(op.result)
        axis, shape = op.axis_value, whole_value(op).type
        extent = shape.dims[axis] if isinstance(shape, RegisterType) else shape.length.data
        inside, places, kind = [], [], op.index.type.element_type
        for i in self.scalars(self.get(op.index)):
            ok = em.cmp("ult", i, extent, kind)  # a negative index is past the extent, unsigned
            inside.append(ok)
            places.append(em.cast(em.select(ok, i, 0, kind), i32))

        def picked(fr, v):
            coords = list(self._scratch_coords(fr, v))
            coords[axis] = places[v]
            return coords[0] if len(coords) == 1 else em.add(em.mul(coords[0], shape.dims[1], i32), coords[1], i32)

        zero = em.const(0, IntegerType(32)) if moves_as_i32(shape.element_type) else em.const(0, shape.element_type)
        if scratch is None:
            plan = take_shuffles(src.frag)
            assert plan is not None, "needs_scratch() said a shuffle plan exists"
            out = self._shuffled(src, plan, [picked(dst, v) for v in range(dst.num_values)], shape.element_type)
            self.set_scalars(op.result, [em.select(ok, x, em.const(0, x.type), x.type) for ok, x in zip(inside, out)])
            return
        self._moved(op, [(src.frag, self.scalars(src), self._row_major(shape))], [(op.result, dst, picked)], scratch,
                    lambda values: [em.select(ok, x, zero, x.type) for ok, x in zip(inside, values)])

    def _shuffled(self, src, plan, places: list, elem) -> list:
        """Each of ``places`` (a source element's row-major index) read from the lane of the warp that holds
        it (:func:`take_shuffles`): one shuffle of each source value a thread holds, the value it is in
        selected. 16-bit floats travel as f32, masks and bytes as i32 (exact), 64-bit values as their two
        halves (the kernel's ``_from_lane``, the atomics' exchange)."""
        em = self.em
        lane_runs, value_runs = plan
        f32 = Float32Type()
        halves = element_bits(elem) == 64
        wide = []
        for x in self.scalars(src):
            if halves:
                pass
            elif moves_as_i32(elem):
                x = em.insert(fast.arith_cast_op(arith.ExtUIOp, x, i32)).results[0]
            elif x.type != f32 and x.type != i32:
                x = em.insert(fast.arith_cast_op(arith.ExtFOp, x, f32)).results[0]
            wide.append(x)

        def bits(e, runs):
            return em.sum([em.mul(em.and_(em.shr(e, bit, i32), (1 << width) - 1, i32), 1 << to, i32)
                           for bit, to, width in runs], i32)

        out = []
        for e in places:
            lane = em.value(bits(e, lane_runs), i32)
            got = None
            which = bits(e, value_runs) if len(wide) > 1 else 0
            for u, x in enumerate(wide):
                moved = self._from_lane(x, lane) if halves else em.insert(frag_fast.frag_shfl("idx", x, lane)).results[0]
                got = moved if got is None else em.select(em.cmp("eq", which, u, i32), moved, got, x.type)
            if halves:
                pass
            elif moves_as_i32(elem):
                got = em.insert(fast.arith_cast_op(arith.TruncIOp, got, elem)).results[0]
            elif got.type != elem:
                got = em.insert(fast.arith_cast_op(arith.TruncFOp, got, elem)).results[0]
            out.append(got)
        return out

    def _placed(self, op: t.JoinOp | t.SplitOp, part: int):
        """A part's fragment value's element's row-major index in the whole tile of a join or split."""
        em, dim, interleaved = self.em, op.dim_value, op.interleaved is not None
        whole = whole_value(op).type
        if not isinstance(whole, RegisterType):  # two vectors: one after the other, or taking turns
            half = whole.length.data // 2

            def place(fr, v):
                (i,) = self._scratch_coords(fr, v)
                return em.add(em.mul(i, 2, i32), part, i32) if interleaved else em.add(i, part * half, i32)
            return place
        extent, cols = whole.dims[dim] // 2, whole.dims[1]

        def index(fr, v):
            coords = list(self._scratch_coords(fr, v))
            coords[dim] = em.add(em.mul(coords[dim], 2, i32), part, i32) if interleaved else \
                em.add(coords[dim], part * extent, i32)
            return em.add(em.mul(coords[0], cols, i32), coords[1], i32)
        return index

    def _moved(self, op, sources: list, results: list, scratch, loaded=None) -> None:
        """``results`` (value, fragment, index function) of ``op`` through shared memory from ``sources``
        (fragment, values, index function): an index function gives a fragment value's element's place in
        the whole tile's row-major order. Masks and bytes travel as i32; ``loaded`` maps the values as
        loaded (before they narrow back)."""
        elem = whole_value(op).type.element_type
        narrow = moves_as_i32(elem)
        if narrow:
            sources = [(fr, [self.em.insert(fast.arith_cast_op(arith.ExtUIOp, v, i32)).results[0] for v in xs], index)
                       for fr, xs, index in sources]
        outs = self._through_shared(op, sources, [(fr, index) for _, fr, index in results], scratch,
                                    i32 if narrow else elem)
        for (value, _, _), out in zip(results, outs):
            if loaded is not None:
                out = loaded(out)
            if narrow:
                out = [self.em.insert(fast.arith_cast_op(arith.TruncIOp, v, elem)).results[0] for v in out]
            self.set_scalars(value, out)


__all__ = ["MoveLowering", "flat_index", "join_fragments", "moves_as_i32", "pass_fragment", "reshape_permutation",
           "split_plan", "take_shuffles", "whole_value"]
