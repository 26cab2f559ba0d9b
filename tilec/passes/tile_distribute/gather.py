"""Loads and stores at coordinates held in register tiles (``tile.gather`` / ``tile.scatter``; the
addresses of ``tile.scatter_atomic`` too) for ``tile-distribute``.

tile-layout gives the result (or stored value), the index tiles and the mask one fragment, so a
thread's value ``v`` of each is one element: its address is the view's pointer plus the index
registers of ``v`` times the view's strides (``linear``: plus the one offset register), and it is read
or written by one predicated ``ld.global`` / ``st.global``. The predicate is the element lying inside
the view (each coordinate below its extent, compared unsigned, so a negative index is outside;
``linear``: the offset below the number of elements the view spans) and its mask bit. A gather's
element whose predicate is false reads ``other`` (or its element of the ``fill`` tile). Threads
holding copies of an element each read it, or write the same value to the same place.

Where the offsets step by 1 along the fragment's runs (:mod:`tilec.passes.index_steps`: Triton's
``x_ptr + start + tl.arange(...)``, an embedding's columns), a run of 4, 8 or 16 bytes moves as one
vector when its first address is aligned, its ends lie inside and its mask bits are set (one test a
run), else element by element. Where linear offsets step by 1 along the rows of a 2-D fragment whose
thread holds several runs a row (Triton's ``c_ptr + offs_m[:, None] * stride + offs_n[None, :]``: an
mma's accumulator stored), one test a row decides for all the thread's runs first
(``_all_runs_test``): the tests a run are then the fallback, at the edges.

A gathering copy (``tile.copy`` / ``tile.async_copy`` with ``offsets``: tile-stage's form of a gathered
mma operand, Triton's ``tl.load(a_ptrs, mask=...)`` in a K loop) moves each thread's runs of the
block's copy layout as the window copy does: one ``cp.async`` a run, which zero-fills the run past its
leading set mask bits, when every run of the thread is consecutive in memory (known from the offsets'
steps, else compared), aligned, and inside the view up to its last read element (one test for the copy,
as Triton's masked ``cp.async`` is); otherwise, and for runs under 4 bytes, element by element.
"""

from __future__ import annotations

import functools
from collections import Counter

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import Operation, SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, element_bits
from tilec.ir import fast
from tilec.passes.alignment import CP_ASYNC_MIN_BYTES
from tilec.passes.fragments import WARP, VectorFragment, contiguous_runs
from tilec.passes.index_steps import equal_runs, separable, step_along
from tilec.passes.trends import falls_along_rows
from tilec.passes.tile_distribute.emit import Bool, Int
from tilec.passes.tile_distribute.memory import linear_offset
from tilec.passes.tile_distribute.values import GlobalArg, SharedBuf


@functools.lru_cache(maxsize=1024)
def _run_groups(fr, dim: int, run: int) -> tuple[int, ...] | None:
    """:meth:`GatherLowering._equal_places` for a fragment: each value's first value of the same other
    coordinates and the same run of ``run`` along ``dim``, in every thread (else the value alone)."""
    def key(t: int, v: int) -> tuple:
        c = fr.tv.coord(t, v)
        return (*c[:dim], c[dim] // run, *c[dim + 1:])

    values, threads = fr.num_values, fr.tv.num_threads
    first: dict[tuple, int] = {}
    reps = [first.setdefault(key(0, v), v) for v in range(values)]
    for v in range(values):
        if reps[v] != v and any(key(t, v) != key(t, reps[v]) for t in range(threads)):
            reps[v] = v
    return tuple(reps) if any(r != v for v, r in enumerate(reps)) else None


class GatherLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: gathers and scatters (and the
    places of ``tile.scatter_atomic``, which :mod:`atomics` combines at)."""

    def span(self, g: GlobalArg) -> Int:
        """How many elements from ``g``'s first one its elements reach in memory (0 for an empty view):
        the bound of a ``linear`` offset."""
        em = self.em
        reach = em.sum([em.mul(em.sub(g.extent(d), 1, i64), self.stride(g, d), i64) for d in range(g.rank)], i64)
        span = em.add(reach, 1, i64)
        for d in range(g.rank):
            span = em.select(em.cmp("eq", g.extent(d), 0, i64), 0, span, i64)
        return span

    def _element_places(self, g: GlobalArg, op) -> list:
        """For each fragment value, a function that gives (address, inside the view) of its element,
        built where it is called (a run's fallback builds its elements' inside its branch)."""
        em = self.em
        indices = [self.scalars(self.get(i)) for i in op.indices]
        bound = self.span(g) if op.linear is not None else None

        def place(coords) -> tuple[SSAValue, Bool]:
            coords = [em.cast(c, i64) for c in coords]  # sign-extended: a negative index stays negative
            if bound is not None:
                return em.gep(g.ptr, coords[0], g.element_type, i64), em.cmp("ult", coords[0], bound, i64)
            return self.global_ptr(g, coords), em.all([self.in_bounds(g, d, c) for d, c in enumerate(coords)])

        return [lambda coords=coords: place(coords) for coords in zip(*indices)]

    def _contiguous_dim(self, op: t.GatherOp | t.ScatterOp, g: GlobalArg) -> int | None:
        """The dimension of the data along which consecutive elements are consecutive in memory (the
        offsets, or the last coordinate with the others still, step by 1: :mod:`index_steps`), or None."""
        data = op.result if isinstance(op, t.GatherOp) else op.value
        for d in ((1, 0) if isinstance(data.type, RegisterType) else (0,)):
            steps = [step_along(i, d) for i in op.indices]
            if steps[-1] == 1 and all(x == 0 for x in steps[:-1]):
                return d
        return None

    def _vector_runs(self, op: t.GatherOp | t.ScatterOp, g: GlobalArg, fr, elem) -> list[list[int]]:
        """The fragment's values in runs that are consecutive elements in memory where their run test
        passes (one value a run elsewhere): 4, 8 or 16 bytes, as the window loads group them."""
        d = self._contiguous_dim(op, g)
        if d is None:
            return [[v] for v in range(fr.num_values)]
        if isinstance(fr, VectorFragment):
            size = element_bits(elem) // 8
            where = {p: v for v, p in enumerate(fr.positions)}
            lane_div = min((f.scale & -f.scale for f in fr.lane_fields), default=1 << 30)
            runs, done = [], set()
            for v, p in enumerate(fr.positions):
                if v in done:
                    continue
                w = next((w for w in (16 // size, 8 // size, 4 // size) if w >= 2 and p % w == 0 and lane_div % w == 0
                          and all(p + j in where and where[p + j] not in done for j in range(w))), 1)
                run = [where[p + j] for j in range(w)]
                done.update(run)
                runs.append(run)
            return runs
        return [self._run_values(fr, v0, dd, w) if w > 1 else [v0]
                for v0, dd, w in self._runs(fr, list(range(fr.num_values)), elem, lambda dd, w: dd == d)]

    def _run_test(self, op: t.GatherOp | t.ScatterOp, g: GlobalArg, run: list[int], places, bits) -> tuple:
        """(first address, whether the run moves as one vector): its first address aligned to the vector,
        its first and last elements inside the view (consecutive: those between are then too), every
        mask bit set and, for coordinates, the view's last dimension of stride 1."""
        em = self.em
        ptr, first = places[run[0]]()
        _, last = places[run[-1]]()
        addr = em.insert(fast.cast_op(llvm.PtrToIntOp, ptr, i64)).results[0]
        tests = [em.cmp("eq", em.and_(addr, len(run) * g.element_bytes - 1, i64), 0, i64), first, last]
        if bits is not None:
            tests += [bits[v] for v in run]
        if op.linear is None:
            tests.append(em.cmp("eq", self.stride(g, g.rank - 1), 1, i64))
        return ptr, em.all(tests)

    def _all_runs_test(self, op: t.GatherOp | t.ScatterOp, g: GlobalArg, fr, runs: list[list[int]], places,
                       bits) -> Bool | None:
        """Whether every run of the thread moves as one vector, tested row by row, or None where that is not
        known to be cheaper than a test a run. Where linear offsets step by 1 along the rows of a 2-D
        fragment (Triton's ``c_ptr + offs_m[:, None] * stride + offs_n[None, :]``), a row's elements are its
        first's offset plus their column distance: the row is inside the view when its first and last
        elements are, and its runs are aligned when its first run is (the others start whole vectors
        further). A mask whose rows fall (:func:`tilec.passes.trends.falls_along_rows`: Triton's
        ``(offs_m < M) & (offs_n < N)``) is set on a row's elements when it is on its last."""
        if op.linear is None or isinstance(fr, VectorFragment) or self._contiguous_dim(op, g) != 1 \
                or any(len(run) < 2 for run in runs):
            return None
        em = self.em
        rows: dict[int, list[list[int]]] = {}
        for run in runs:
            rows.setdefault(fr.value_coords[run[0]][0], []).append(run)
        if len(rows) == len(runs):
            return None  # a run a row: the test a run is as cheap
        prefix = op.mask is not None and falls_along_rows(op.mask)
        tests: list[Bool] = []
        for row in rows.values():
            row = sorted(row, key=lambda run: fr.value_coords[run[0]][1])
            w = len(row[0])
            start = fr.value_coords[row[0][0]][1]
            if any(len(run) != w or (fr.value_coords[run[0]][1] - start) % w for run in row):
                return None
            ptr, first = places[row[0][0]]()
            _, last = places[row[-1][-1]]()
            addr = em.insert(fast.cast_op(llvm.PtrToIntOp, ptr, i64)).results[0]
            tests += [em.cmp("eq", em.and_(addr, w * g.element_bytes - 1, i64), 0, i64), first, last]
            if bits is not None:
                tests += [bits[row[-1][-1]]] if prefix else [bits[v] for run in row for v in run]
        return em.all(tests)

    def gather(self, op: t.GatherOp) -> None:
        em = self.em
        g: GlobalArg = self.get(op.source)
        elem = op.result.type.element_type
        fr = self.fragment(op.result)
        bits = self.scalars(self.get(op.mask)) if op.mask is not None else None
        fills = self.scalars(self.get(op.fill_tile)) if op.fill_tile is not None else None  # each element's own
        number = em.const(op.fill, elem) if op.fill != 0 else None
        places = self._element_places(g, op)

        reps = self._equal_places(op, fr)
        group_size = Counter(reps or ())
        shared: dict[int, tuple[SSAValue | None, Bool]] = {}

        def once(r: int) -> tuple[SSAValue | None, Bool]:
            """The element of a group of values with one place (``_equal_places``), loaded once: where any of
            their mask bits is set and the place is inside."""
            if r not in shared:
                ptr, inside = places[r]()
                members = [u for u, rep in enumerate(reps) if rep == r]
                pred = inside if bits is None else em.land(inside, functools.reduce(em.lor, [bits[u] for u in members]))
                x = None if pred is False else \
                    em.insert(frag_fast.frag_load(ptr, elem, None if pred is True else em.boolean(pred))).results[0]
                shared[r] = (x, inside)
            return shared[r]

        def one(v: int) -> SSAValue:
            fill = fills[v] if fills is not None else number
            if reps is not None and group_size[reps[v]] > 1:
                x, inside = once(reps[v])
                pred = inside if bits is None else em.land(inside, bits[v])
                if pred is False or x is None:
                    return fill if fill is not None else em.const(0, elem)
                return x if pred is True else em.select(pred, x, fill if fill is not None else em.const(0, elem), elem)
            ptr, inside = places[v]()
            pred = inside if bits is None else em.land(inside, bits[v])
            if pred is False:
                return fill if fill is not None else em.const(0, elem)
            x = em.insert(frag_fast.frag_load(ptr, elem, None if pred is True else em.boolean(pred))).results[0]
            return x if fill is None or pred is True else em.select(pred, x, fill, elem)

        runs = self._vector_runs(op, g, fr, elem)

        def unpacked(vectors: list[SSAValue]) -> list[SSAValue]:
            values: list[SSAValue | None] = [None] * len(places)
            for run, vec in zip(runs, vectors):
                for j, v in enumerate(run):
                    values[v] = vec if len(run) == 1 else em.insert(fast.vector_extract_op(vec, j, elem)).results[0]
            return values

        def run_by_run() -> list[SSAValue]:
            vectors = []
            for run in runs:
                if len(run) == 1:
                    vectors.append(one(run[0]))
                    continue
                vt = fast.vector_type(elem, len(run))
                ptr, whole = self._run_test(op, g, run, places, bits)
                vectors += self.if_then(
                    whole,
                    lambda ptr=ptr, vt=vt: [em.insert(frag_fast.frag_load(ptr, vt)).results[0]],
                    lambda run=run, vt=vt: [self.pack_vector([one(v) for v in run], vt)],
                    [vt])
            return vectors

        def all_vectors() -> list[SSAValue]:
            return [em.insert(frag_fast.frag_load(places[run[0]]()[0], fast.vector_type(elem, len(run)))).results[0]
                    for run in runs]

        every = self._all_runs_test(op, g, fr, runs, places, bits)
        if every is None:
            self.set_scalars(op.result, unpacked(run_by_run()))
        else:
            types = [fast.vector_type(elem, len(run)) for run in runs]
            self.set_scalars(op.result, unpacked(self.if_then(every, all_vectors, run_by_run, types)))

    def _equal_places(self, op: t.GatherOp, fr) -> tuple[int, ...] | None:
        """For each value of the gather's fragment, the first value of the thread whose element has the same
        place in every thread: the index tiles are equal on aligned runs along the last dimension
        (:func:`~tilec.passes.index_steps.equal_runs`: a group's scale, ``offs // GROUP``) and the two lie in
        one run; None where no two values share a place."""
        dim = 0 if isinstance(fr, VectorFragment) else 1
        run = min(equal_runs(i, dim) for i in op.indices)
        if run <= 1:
            return None
        return _run_groups(fr, dim, run)

    def _storing_holder(self, op: t.ScatterOp, fr) -> Bool:
        """Whether this thread writes its copies of the elements: one holder of each element does, as an
        atomic combines (:func:`~tilec.passes.tile_distribute.atomics.holder_bits`: the lanes without the
        fragment's broadcast bits, warp 0 of a value every warp holds alike). Every holder writing the same
        value would be the same store, but not where the kernel read the place before (Triton's ``x =
        tl.load(p + cols); tl.store(p + cols, x + 1)``): a warp reading after another's write would add
        again. Under a branch the lanes of a warp take differently every holder writes, as before."""
        bits = self.holders(op, fr)
        if bits & (WARP - 1) and self.lane_divergent_parent(op) is not None:
            bits &= ~(WARP - 1)  # the holding lane may not be there: every lane writes its copy
        return self.is_holder(bits)

    def scatter(self, op: t.ScatterOp) -> None:
        holder = self._storing_holder(op, self.fragment(op.value))
        self.if_then(holder, lambda: self._scatter(op) or [])

    def _scatter(self, op: t.ScatterOp) -> None:
        em = self.em
        g: GlobalArg = self.get(op.dest)
        elem = op.value.type.element_type
        fr = self.fragment(op.value)
        scalars = self.scalars(self.get(op.value))
        bits = self.scalars(self.get(op.mask)) if op.mask is not None else None
        places = self._element_places(g, op)

        def each(run: list[int]) -> list:
            for v in run:
                ptr, inside = places[v]()
                pred = inside if bits is None else em.land(inside, bits[v])
                if pred is not False:
                    em.insert(frag_fast.frag_store(scalars[v], ptr, None if pred is True else pred))
            return []

        runs = self._vector_runs(op, g, fr, elem)

        def run_by_run() -> list:
            for run in runs:
                if len(run) == 1:
                    each(run)
                    continue
                vt = fast.vector_type(elem, len(run))
                ptr, whole = self._run_test(op, g, run, places, bits)

                def vector(run=run, vt=vt, ptr=ptr) -> list:
                    em.insert(frag_fast.frag_store(self.pack_vector([scalars[v] for v in run], vt), ptr))
                    return []

                self.if_then(whole, vector, lambda run=run: each(run))
            return []

        def all_vectors() -> list:
            for run in runs:
                ptr, _ = places[run[0]]()
                vt = fast.vector_type(elem, len(run))
                em.insert(frag_fast.frag_store(self.pack_vector([scalars[v] for v in run], vt), ptr))
            return []

        every = self._all_runs_test(op, g, fr, runs, places, bits)
        if every is None:
            run_by_run()
        else:
            self.if_then(every, all_vectors, run_by_run)

    def _shifted(self, op: t.CopyOp | t.AsyncCopyOp):
        """``(T, x)`` where a gathering copy's offsets are the tile ``T`` plus the scalar ``x`` (a ``tile.map``
        adding a value from outside it: Triton's ``a_ptrs`` after ``a_ptrs += BLOCK_K * stride``, as
        tilec.lang counts it), ``T`` by the element as :meth:`_copy_held` gives it and ``x`` as an i64;
        else None."""
        m = op.offsets.owner
        if not isinstance(m, t.MapOp) or len(m.inputs) != 1 or not isinstance(m.inputs[0].type, RegisterType):
            return None
        body = m.body.block
        ops = list(body.ops)
        if len(ops) != 2 or not isinstance(ops[0], arith.AddiOp) or ops[1].operands[0] is not ops[0].result:
            return None
        arg, add = body.args[0], ops[0]
        x = add.rhs if add.lhs is arg else add.lhs if add.rhs is arg else None
        if x is None or x is arg or x.owner is body or (isinstance(x.owner, Operation) and x.owner.parent_block() is body):
            return None
        tile = m.inputs[0]
        if self.fragment(tile).layout != self.fragment(op.offsets).layout or self.lookup(x) is None:
            return None
        return self._copy_held(op, tile), self.em.cast(self.lookup(x), i64)

    def lower_gathered_copy(self, op: t.CopyOp | t.AsyncCopyOp, src: GlobalArg, dst: SharedBuf, thr, val,
                            is_async: bool, offsets, mask=None, prefix_rows: bool = False) -> None:
        """A block's copy into the shared tile ``dst`` of the elements of ``src`` at ``offsets(r, c)`` (the
        thread's offset register of the element (``r``, ``c``) from its first copied one; ``mask`` its bit).
        See the module docstring."""
        em = self.em
        dims = dst.type.dims
        elem, size, thr, val, (tm_n, tn_n, vm_n, vn_n, reps_m, reps_n), (tm, tn, active) = \
            self.copy_partition(dst, thr, val)
        step = step_along(op.offsets, 1)
        sep = separable(op.offsets)
        ce = 1 << (min(vn_n, 16 // size).bit_length() - 1) if step in (1, None) else 1
        while ce > 1 and vn_n % ce:
            ce //= 2
        if ce * size < CP_ASYNC_MIN_BYTES:
            ce = 1
        shared_vec = ce > 1 and contiguous_runs(dst.type.layout, dims, 1, ce) and dst.align % (ce * size) == 0
        vtype = fast.vector_type(elem, ce) if ce > 1 else elem
        t_row, t_col = em.mul(tm, vm_n, i32), em.mul(tn, vn_n, i32)
        runs = [(rm * tm_n * vm_n + vm, rn * tn_n * vn_n + ch * ce)
                for rm in range(reps_m) for vm in range(vm_n) for rn in range(reps_n) for ch in range(vn_n // ce)]
        native = op.offsets.type.element_type
        # An i32 offset is below 2**31: a run's first plus j at or past it is a wrapped (negative) offset in the
        # IR, outside the view, so such elements read nothing (the offsets are added in i64 here)
        span = self.span(src)
        bound = em.umin(span, 1 << 31, i64) if element_bits(native) == 32 else span

        def wide(x: Int) -> Int:
            return em.cast(x, i64)  # sign-extended: a negative offset stays outside

        # A run's offsets from its first (i64): + j where they step by 1; where each row steps as the thread's
        # first row does (``separable``), + that row's differences; else each its own (every offset register
        # then stays live). Built where asked: the emitter reuses them within a block.
        def differences(c: int, of) -> list[Int] | None:
            if step == 1:
                return list(range(ce))
            if not sep or ce == 1:
                return None
            first = wide(of(0, c))
            return [0] + [em.sub(wide(of(0, c + j)), first, i64) for j in range(1, ce)]

        def run_offsets(r: int, c: int) -> list[Int]:
            """The run's offsets (its first plus its differences: see ``bound``)."""
            d = differences(c, offsets)
            if d is None:
                return [wide(offsets(r, c + j)) for j in range(ce)]
            o0 = wide(offsets(r, c))
            return [em.add(o0, dj, i64) for dj in d]

        def consecutive(r: int, c: int, of) -> list[Bool]:
            """Tests that the run's offsets ``of`` are its first plus 0, 1, ..."""
            if step == 1:
                return []
            d = differences(c, of)
            if d is None:
                first = wide(of(r, c))
                return [em.cmp("eq", wide(of(r, c + j)), em.add(first, j, i64), i64) for j in range(1, ce)]
            return [em.cmp("eq", dj, j, i64) for j, dj in enumerate(d) if j]

        def bits(r: int, c: int) -> list[Bool]:
            return [mask(r, c + j) for j in range(ce)] if mask is not None else []

        def shared_at(r: int, c: int, bases: list[tuple[int, SSAValue]] | None = None) -> SSAValue:
            """A run's shared address; with ``bases`` (the addresses already built in this block), one of those
            plus a constant where the layout and swizzle allow (the window copy's ``_translated``)."""
            ptr = self._translated(dst, bases, r, c) if bases is not None else None
            if ptr is None:
                ptr = self.shared_ptr(dst, em.add(t_row, r, i32), em.add(t_col, c, i32))
                if bases is not None and (delta := linear_offset(dst, r, c)) is not None:
                    bases.append((delta, ptr))
            return ptr

        def elements(r: int, c: int) -> list[SSAValue]:
            out = []
            for o, bit in zip(run_offsets(r, c), bits(r, c) or [True] * ce):
                p = em.land(em.cmp("ult", o, bound, i64), bit)
                ptr = em.gep(src.ptr, o, src.element_type, i64)
                out.append(em.insert(frag_fast.frag_load(ptr, elem, None if p is True else em.boolean(p))).results[0])
            return out

        def to_shared(values: list[SSAValue] | SSAValue, r: int, c: int) -> None:
            self.store_run(values, lambda j: shared_at(r, c + j), elem, vtype, ce, shared_vec)

        def run_test(r: int, c: int, whole: bool) -> tuple[SSAValue, Bool, Int | None]:
            """(first address, whether the run moves as one vector, its leading set bits or None): consecutive
            offsets, an aligned first address, inside the view up to the last element it reads (``whole``: all
            of them, every bit set; else its leading set bits, the rest zero-filled by ``cp.async``)."""
            o0 = wide(offsets(r, c))
            ptr = em.gep(src.ptr, o0, src.element_type, i64)
            addr = em.insert(fast.cast_op(llvm.PtrToIntOp, ptr, i64)).results[0]
            tests = [em.cmp("eq", em.and_(addr, ce * size - 1, i64), 0, i64), *consecutive(r, c, offsets)]
            b = bits(r, c)
            lead, reads = None, ce
            if whole or not b:
                tests += [*b, em.cmp("ult", o0, bound, i64), em.cmp("ule", em.add(o0, ce, i64), bound, i64)]
            else:
                lead = self.leading_bits(b)
                reads = em.cast(lead, i64)
                inside = em.land(em.cmp("ult", o0, bound, i64), em.cmp("ule", em.add(o0, reads, i64), bound, i64))
                tests += [True if prefix_rows else self.bits_prefix(b), em.lor(em.cmp("eq", reads, 0, i64), inside)]
            return ptr, em.all(tests), lead

        def sync_runs() -> list:
            for r, c in runs:
                if ce == 1:
                    to_shared(elements(r, c), r, c)
                    continue
                ptr, whole, _ = run_test(r, c, True)
                (v,) = self.if_then(whole, lambda ptr=ptr: [em.insert(frag_fast.frag_load(ptr, vtype)).results[0]],
                                    lambda r=r, c=c: [self.pack_vector(elements(r, c), vtype)], [vtype])
                to_shared(v, r, c)
            return []

        def async_runs() -> list:
            nbytes = ce * size

            def issue(placed: list[tuple[int, int, SSAValue, Int | None]]) -> list:
                """One cp.async a run (``r``, ``c``, its first address, its leading set bits or None)."""
                bases: list[tuple[int, SSAValue]] = []
                for r, c, ptr, lead in placed:
                    src_bytes = None if lead is None else em.value(em.mul(lead, size, i32), i32)
                    em.insert(frag_fast.frag_cp_async(shared_at(r, c, bases), ptr, nbytes, src_bytes))
                return []

            def by_element() -> list:  # through registers, stored now: the stage's readers wait at its barrier
                for r, c in runs:
                    to_shared(elements(r, c), r, c)
                return []

            def exact() -> list:
                tested = [(r, c, *run_test(r, c, False)) for r, c in runs]
                return self.if_then(em.all([ok for *_, ok, _ in tested]),
                                    lambda: issue([(r, c, ptr, lead) for r, c, ptr, _, lead in tested]), by_element)

            shifted = self._shifted(op)
            if shifted is None:
                return exact()

            def every_run() -> list:
                return issue([(r, c, em.gep(src.ptr, wide(offsets(r, c)), src.element_type, i64),
                               self.leading_bits(bits(r, c)) if mask is not None else None) for r, c in runs])

            return self.if_then(whole_copy_inside(*shifted), every_run, exact)

        def whole_copy_inside(held, x: Int) -> Bool:
            """For offsets ``T + x`` (a tile ``held`` by the element plus a scalar: a tile of pointers a loop
            advances), whether every run may go as one ``cp.async``: ``T``'s run starts plus ``x`` inside the
            view and below ``bound`` (from their least and greatest), each start's address aligned, ``T``
            consecutive along each run and ``x`` a whole number of vectors (all but ``x``'s are loop-invariant
            where ``T`` is, so LLVM takes them out of a loop), and each run's mask bits a prefix. Else the
            run-by-run test decides (the edges: a masked-off run past the view)."""
            starts = [wide(held(r, c)) for r, c in runs]
            lo, hi = starts[0], starts[0]
            for v in starts[1:]:
                lo, hi = em.smin(lo, v, i64), em.smax(hi, v, i64)
            first, last = em.add(lo, x, i64), em.add(em.add(hi, x, i64), ce, i64)
            tests = [em.cmp("sle", 0, first, i64), em.cmp("sle", last, bound, i64)]  # (then T + x does not wrap)
            for (r, c), v in zip(runs, starts):
                ptr = em.gep(src.ptr, v, src.element_type, i64)
                addr = em.insert(fast.cast_op(llvm.PtrToIntOp, ptr, i64)).results[0]
                tests.append(em.cmp("eq", em.and_(addr, ce * size - 1, i64), 0, i64))
                tests += consecutive(r, c, held)
                if mask is not None and not prefix_rows:  # cp.async zero-fills past the leading set bits
                    tests.append(self.bits_prefix(bits(r, c)))
            tests.append(em.cmp("eq", em.and_(em.mul(x, size, i64), ce * size - 1, i64), 0, i64))
            return em.all(tests)

        body = async_runs if is_async and ce * size >= CP_ASYNC_MIN_BYTES and (ce == 1 or shared_vec) else sync_runs
        self.if_then(active, body)
