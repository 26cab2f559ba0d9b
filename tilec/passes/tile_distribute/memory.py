"""Memory ops of ``tile-distribute``: copies, loads and stores at the lane level.

Bounds. A global window reads zero past the view's edges and drops writes
there. Every access is predicated on ``row < extent0`` and ``col < extent1``
(unsigned, so a negative coordinate is out of bounds too).

Vectors. A thread's run of ``v`` elements along a row of a global view can
be one 4/8/16-byte access only if the view is row-contiguous (``stride1 ==
1``), every row starts on a ``v``-element boundary (``stride0 % v == 0``) and
the base pointer is aligned; none of this is known before launch (a 17x65
f16 matrix has 65-element rows), so each kernel computes one predicate per
view and vector width in its prologue (``vec_ok``) and takes the vector path
only where it holds and the whole vector is inside the view. Elsewhere (a
run that straddles the right edge, or a view that is not vector-aligned)
the run is moved one element at a time, each element predicated: exactly the
zero-fill semantics, for any shape and strides.

- ``tile.copy`` global → shared: per thread (CuTe's thr/val layouts), per
  run: ``scf.if (vec_ok & in bounds) { 16-byte frag.load } else { element
  loads }``, then one vector store to shared (or element stores where the
  shared layout is not contiguous for the run).
- ``tile.async_copy``: with ``vec_ok``, one ``cp.async`` per run whose
  ``src_bytes`` is the part of the run inside the view (16, 0 past the edge,
  or 2..14 for the run that straddles it: cp.async zero-fills the rest);
  otherwise the synchronous element path above (which is one legal schedule
  of an async copy: the data is there before the wait).
- A view with ``tile.aligned_rows = A`` (checked by the launcher) needs no
  ``vec_ok``: runs are at most ``A`` bytes wide (cp.async of 4 or 8 bytes
  for ``A`` = 4, 8) and all inside or all outside the view; below 4 bytes
  (f16 rows of an odd length) the copy is element by element, and as part
  of an async copy its stores to shared memory wait for the next wait,
  barrier or block end (the destination is read only after a wait), so its
  loads are in flight meanwhile, as a cp.async's would be.
- ``tile.load`` shared → register operand: ``ldmatrix`` (x4, x2, x1;
  ``.trans`` when the tile's memory rows run across the fragment's register
  pairs) when every 8-element row is contiguous and 16-byte aligned in the
  shared layout and the window origin provably keeps it so; else element
  loads. Addresses go through the shared layout, swizzle included.
- ``tile.store`` register tile → global: pairs of adjacent columns as one
  32/64-bit store when ``vec_ok`` (2 elements) holds and both are inside,
  else one predicated store per element.
- ``tile.load`` rank-1 global → column vector: one predicated load per
  column the lane's fragment holds.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import Float32Type, IntegerType, VectorType, i32, i64
from xdsl.ir import Attribute, Block, BlockArgument, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tilec.dialects import frag_fast
from tilec.ir import fast
from tilec.dialects.tile.types import FLOAT8_TYPES, element_bits
from tilec.layout import Layout, right_inverse
from tilec.layout.int_tuple import flatten, is_tuple
from tilec.passes.alignment import CP_ASYNC_MIN_BYTES
from tilec.passes.tile_distribute.analysis import known_divisor, known_range
from tilec.passes.tile_distribute.emit import Bool, Int
from tilec.passes.fragments import (
    WARP,
    BitField,
    Fragment,
    FragmentError,
    VectorFragment,
    checked_ldmatrix_plan,
    contiguous_runs,
    default_copy_layouts,
    linear_fields,
    shared_swizzle,
)
from tilec.dialects.tile.attributes import DYNAMIC
from tilec.passes.tile_distribute.values import GlobalArg, Regs, SharedBuf


class RegallocError(ValueError):
    """The pass cannot lower an op; the message names it."""


def _bytes(t: Attribute) -> int:
    return element_bits(t) // 8


class MemoryLowering:
    """Mixin of the lowering driver (:class:`tilec.passes.tile_distribute.kernel.KernelLowering`)."""

    # ------------------------------------------------------------ lanes and threads

    def lane_value(self, fields, t: Attribute = i32) -> Int:
        """``sum(field(lane))`` as a ``t`` value, computed once in the prologue. Fields past the lane's
        5 bits are the warp bits of a block tile's fragment: they read the thread's index in the block."""
        em = self.em
        top = max((f.shift + f.width for f in fields), default=0)

        def make():
            lane, bits = (self.lane(t), 5) if top <= 5 else (self.thread_index(t), (self.threads - 1).bit_length())
            terms = []
            for f in fields:
                x = em.shr(lane, f.shift, t)
                if f.shift + f.width < bits:
                    x = em.and_(x, (1 << f.width) - 1, t)
                terms.append(em.mul(x, f.scale, t))
            return em.sum(terms, t)

        return em.hoisted(("lane-fields", fields, t), make)

    def lane_coords(self, fr: Fragment, t: Attribute = i32) -> tuple[Int, Int]:
        fm, fn = fr.lane_fields
        return self.lane_value(fm, t), self.lane_value(fn, t)

    def value_coord(self, fr: Fragment, v: int, t: Attribute = i32) -> tuple[Int, Int]:
        lm, ln = self.lane_coords(fr, t)
        vm, vn = fr.value_coords[v]
        return self.em.add(lm, vm, t), self.em.add(ln, vn, t)

    # ------------------------------------------------------------ shared memory

    def shared_ptr(self, buf: SharedBuf, row: Int, col: Int) -> SSAValue:
        """Address of element (row, col) of a shared tile: through its layout and swizzle (i32 math)."""
        em = self.em
        layout, off, sw = shared_swizzle(buf.type.layout)
        if len(buf.type.dims) != 2:
            raise RegallocError(f"shared tiles must be 2-D, got {buf.type}")
        o = em.sum([off, em.layout_apply(layout[0], row, i32), em.layout_apply(layout[1], col, i32)], i32)
        o = em.swizzle(sw, o, i32)
        return em.gep(buf.ptr, o, buf.element_type, i32)

    def shared_index_ptr(self, buf: SharedBuf, index: Int) -> SSAValue:
        """Address of element ``index`` of a rank-1 shared tile (through its layout and swizzle)."""
        em = self.em
        layout, off, sw = shared_swizzle(buf.type.layout)
        o = em.swizzle(sw, em.add(off, em.layout_apply(layout, index, i32), i32), i32)
        return em.gep(buf.ptr, o, buf.element_type, i32)

    def shared_origin(self, indices_old, indices_new) -> tuple[list[Int], list[int]]:
        """A shared window's origin (i32) and a known divisor of each coordinate."""
        if not indices_old:
            return [0, 0], [1 << 30, 1 << 30]
        return [self.em.cast(v, i32) for v in indices_new], [known_divisor(v) for v in indices_old]

    # ------------------------------------------------------------ global memory

    @staticmethod
    def stride(g: GlobalArg, dim: int) -> Int:
        """Stride ``dim`` of ``g``: 1 for the rows that ``tile.aligned_rows`` promises contiguous."""
        return 1 if g.aligned_rows and dim == g.rank - 1 else g.strides[dim]

    def global_ptr(self, g: GlobalArg, coords: list[Int]) -> SSAValue:
        em = self.em
        off = em.sum([em.mul(c, self.stride(g, d), i64) for d, c in enumerate(coords)], i64)
        return em.gep(g.ptr, off, g.element_type, i64)

    def subview(self, g: GlobalArg, indices: list[SSAValue]) -> GlobalArg:
        """``tile.subview``: the trailing dimensions of ``g`` at the leading coordinates ``indices``; its
        extents are 0 when a coordinate is outside its extent (every access then out of bounds)."""
        em = self.em
        coords = [em.cast(i, i64) for i in indices]
        n = len(coords)
        inside = self.in_bounds(g, 0, coords[0])
        for d in range(1, n):
            inside = em.land(inside, self.in_bounds(g, d, coords[d]))
        dims = [em.select(inside, g.extent(d), 0, i64) for d in range(n, g.rank)]
        # rows keep the parent's alignment: tile.aligned_rows promises every outer stride aligned too
        return GlobalArg(f"{g.name}_sub", self.global_ptr(g, coords), g.element_type, (DYNAMIC,) * (g.rank - n), dims,
                         list(g.strides[n:]), g.written, g.aligned_rows)

    def next_ptr(self, g: GlobalArg, ptr: SSAValue, dim: int, j: int) -> SSAValue:
        """``ptr`` moved by ``j`` elements along dimension ``dim`` (its stride)."""
        return self.em.gep(ptr, self.em.mul(self.stride(g, dim), j, i64), g.element_type, i64)

    def in_bounds(self, g: GlobalArg, i: int, c: Int) -> Bool:
        return self.em.cmp("ult", c, g.extent(i), i64)

    def window_bounds(self, g: GlobalArg, dim: int, origin_old: SSAValue | None, origin: Int, offset: Int):
        """``s -> origin + offset + s < extent`` along ``dim`` as one i32 compare per static ``s``, or None.

        For the runs of one copy when the origin is provably nonnegative
        (:func:`known_range`): ``hi = extent - origin``, clamped to ``[0,
        2^31 - 1]`` once per copy, against this thread's small ``offset + s``.
        The i64 test costs a 64-bit add and two compares per run where the
        origin moves with the K loop.
        """
        if origin_old is None or (r := known_range(origin_old)) is None or r[0] < 0:
            return None
        em = self.em
        hi = em.sub(g.extent(dim), em.cast(origin, i64), i64)
        hi = em.cast(em.umin(em.smax(hi, 0, i64), (1 << 31) - 1, i64), i32)
        return lambda s: em.cmp("ult", em.add(offset, s, i32), hi, i32)

    def vec_ok(self, g: GlobalArg, n: int) -> Bool:
        """Runs of ``n`` elements of each row are aligned ``n * size`` -byte vectors (once per kernel)."""
        if g.aligned_rows:  # the launcher checked A-byte rows; wider vectors are not tried (as Triton's
            return g.aligned_rows % (n * g.element_bytes) == 0  # launcher specialises on divisibility)
        if n == 1:
            return True
        em = self.em

        def make():
            nbytes = n * g.element_bytes
            s = g.strides
            unit = em.cmp("eq", s[-1], 1, i64)
            rows = True if g.rank == 1 else em.cmp("eq", em.urem(s[0], n, i64), 0, i64)
            addr = em.insert(fast.cast_op(llvm.PtrToIntOp, g.ptr, i64)).results[0]
            aligned = em.cmp("eq", em.and_(addr, nbytes - 1, i64), 0, i64)
            ok = em.all([unit, rows, aligned])
            if isinstance(ok, SSAValue):
                ok.name_hint = f"{g.name}_vec{n}"
            return ok

        if isinstance(g.ptr, BlockArgument) and g.ptr.block is em.entry:
            return em.hoisted(("vec-ok", id(g), n), make)
        return make()  # a view of a subview (a batch's matrix): its address is known only where it is made

    def _origin_aligned(self, old: SSAValue, new: Int, n: int) -> Bool:
        if n == 1 or known_divisor(old) % n == 0:
            return True
        em = self.em
        return em.cmp("eq", em.urem(em.cast(new, i64), n, i64), 0, i64)

    # ------------------------------------------------------------ structured control flow

    def if_then(self, cond: Bool, then, otherwise=None, result_types=()):
        """``scf.if``: ``then()``/``otherwise()`` build each branch and return the values it yields."""
        em = self.em
        if isinstance(cond, bool):
            fn = then if cond else otherwise
            return fn() if fn is not None else []
        two = otherwise is not None or bool(result_types)
        blocks = [Block(), Block()] if two else [Block()]
        for block, fn in zip(blocks, (then, otherwise)):
            with em.at(InsertPoint.at_end(block)):
                vals = fn() if fn is not None else []
                em.insert(fast.scf_yield_op(vals))
        op = em.insert(fast.scf_if_op(em.boolean(cond), list(result_types), Region(blocks[0]),
                                      Region(blocks[1]) if two else None))
        return list(op.results)

    # ------------------------------------------------------------ tile.copy / tile.async_copy

    def thread_coords(self, thr: Layout, threads: int) -> tuple[Int, Int, Bool]:
        """(tm, tn, active) of this thread in a copy's thread layout ``(TM, TN) -> tid``."""
        em = self.em
        tm_n, tn_n = thr[0].size(), thr[1].size()
        size = tm_n * tn_n
        table = {}
        for a in range(tm_n):
            for b in range(tn_n):
                table.setdefault(thr((a, b)), (a, b))
        if sorted(table) != list(range(size)):
            raise RegallocError(f"thread layout {thr} is not a bijection onto threads 0..{size - 1}")
        if size > threads:
            raise RegallocError(f"thread layout {thr} uses {size} threads, the block has {threads}")

        def make():
            tid = self.tid()
            fm = linear_fields([table[x][0] for x in range(size)])
            fn = linear_fields([table[x][1] for x in range(size)])
            if fm is not None and fn is not None and fm[0] == fn[0] == 0:
                def fields(fs):
                    terms = [em.mul(em.and_(em.shr(tid, f.shift, i32), (1 << f.width) - 1, i32), f.scale, i32)
                             for f in fs]
                    return em.sum(terms, i32)
                tm, tn = fields(fm[1]), fields(fn[1])
            else:
                inv = right_inverse(thr)
                if any(thr(_crd(inv(x), tm_n)) != x for x in range(size)):
                    raise RegallocError(f"thread layout {thr} has no inverse over its threads")
                idx = em.layout_apply(inv, tid, i32)
                tm, tn = em.urem(idx, tm_n, i32), em.udiv(idx, tm_n, i32)
            active = True if size == threads else em.cmp("ult", tid, size, i32)
            for v, hint in ((tm, "tm"), (tn, "tn"), (active, "copying")):
                if isinstance(v, SSAValue):
                    v.name_hint = hint
            return tm, tn, active

        return em.hoisted(("thread-coords", thr, threads), make)

    def copy_partition(self, dst: SharedBuf, thr: Layout | None, val: Layout | None) -> tuple:
        """How a block's copy into the shared tile ``dst`` splits over the threads: ``(element moved, its
        bytes, thr, val (the tile's default copy where not given), (TM, TN, VM, VN, reps along M, reps
        along N), (this thread's tm, tn, whether it copies))``. 8-bit floats move as bytes (no 8-bit float
        registers)."""
        dims = dst.type.dims
        elem = IntegerType(8) if isinstance(dst.element_type, FLOAT8_TYPES) else dst.element_type
        if thr is None:
            thr, val = self.default_copy_layouts(dims, elem)
        tm_n, tn_n = thr[0].size(), thr[1].size()
        vm_n, vn_n = val[0].size(), val[1].size()
        sizes = (tm_n, tn_n, vm_n, vn_n, dims[0] // (tm_n * vm_n), dims[1] // (tn_n * vn_n))
        return elem, _bytes(elem), thr, val, sizes, self.thread_coords(thr, self.threads)

    def default_copy_layouts(self, dims: tuple[int, int], element_type: Attribute) -> tuple[Layout, Layout]:
        found = default_copy_layouts(dims, _bytes(element_type), self.threads)
        if found is None:
            raise RegallocError(f"no default copy layout for a {dims[0]}x{dims[1]} tile and {self.threads} threads")
        return found

    def lower_copy_to_shared(self, op, src: GlobalArg, src_old, src_new, dst: SharedBuf, dst_old, dst_new,
                             thr: Layout | None, val: Layout | None, is_async: bool,
                             mask: Callable[[int, int], Bool] | None = None, prefix_rows: bool = False) -> None:
        """A block's copy of a global window into a shared tile. ``mask(r, c)``: the bit of the element at
        (``r``, ``c``) from the thread's first one (a masked copy: elements where it is false read as zero,
        as outside the view); unless every run's bits are a prefix (``prefix_rows``: the mask's rows fall, which
        tile-stage proved; else tested per copy), a copy's runs go element by element."""
        em = self.em
        if src.rank != 2:
            raise RegallocError(f"'{op.name}': copies from rank-{src.rank} views are not supported")
        dims = dst.type.dims
        elem, size, thr, val, (tm_n, tn_n, vm_n, vn_n, reps_m, reps_n), (tm, tn, active) = \
            self.copy_partition(dst, thr, val)
        # runs of `ce` contiguous elements along a row: a power of two (a vector width) that divides the
        # thread's `vn_n` values. An odd count (3, 5: MoYe's 4x9 example) gives element runs: with
        # 3 values a thread's first column is 3t, which no wider vector is aligned to for every t.
        ce = 1 << (min(vn_n, 16 // size).bit_length() - 1)
        if CP_ASYNC_MIN_BYTES <= src.aligned_rows < ce * size:  # runs as wide as the promise: 4- or 8-byte cp.async
            ce = src.aligned_rows // size
        while ce > 1 and vn_n % ce:
            ce //= 2
        if ce * size < CP_ASYNC_MIN_BYTES:
            ce = 1
        d_origin, d_div = self.shared_origin(dst_old, dst_new)
        shared_vec = (
            ce > 1 and contiguous_runs(dst.type.layout, dims, 1, ce) and d_div[1] % ce == 0
            and dst.align % (ce * size) == 0
        )
        o_row = em.cast(src_new[0], i64)
        o_col = em.cast(src_new[1], i64)
        vector_ok: Bool = False
        if ce * size >= CP_ASYNC_MIN_BYTES:  # runs of 4, 8 or 16 bytes: one cp.async or vector access each
            vector_ok = em.land(self.vec_ok(src, ce), self._origin_aligned(src_old[1], src_new[1], ce))
        runs = []
        for rm in range(reps_m):
            for vm in range(vm_n):
                for rn in range(reps_n):
                    for ch in range(vn_n // ce):
                        runs.append((rm * tm_n * vm_n + vm, rn * tn_n * vn_n + ch * ce))
        t_row = em.mul(tm, vm_n, i32)
        t_col = em.mul(tn, vn_n, i32)
        t_row64, t_col64 = em.cast(t_row, i64), em.cast(t_col, i64)
        N = src.extent(1)
        vtype = fast.vector_type(elem, ce) if ce > 1 else elem

        def place(r_static, c_static):
            g_row = em.sum([o_row, t_row64, r_static], i64)
            g_col = em.sum([o_col, t_col64, c_static], i64)
            s_row = em.sum([d_origin[0], t_row, r_static], i32)
            s_col = em.sum([d_origin[1], t_col, c_static], i32)
            return g_row, g_col, s_row, s_col

        def run_bits(r_static, c_static) -> list[Bool]:
            return [mask(r_static, c_static + j) for j in range(ce)] if mask is not None else []

        def elementwise(g_row, g_col, r_static, c_static) -> list[SSAValue]:
            in_row = self.in_bounds(src, 0, g_row)
            base = self.global_ptr(src, [g_row, g_col])
            bits = run_bits(r_static, c_static)
            out = []
            for j in range(ce):
                p = em.land(in_row, self.in_bounds(src, 1, em.add(g_col, j, i64)))
                if bits:
                    p = em.land(p, bits[j])
                ptr = self.next_ptr(src, base, 1, j)
                out.append(em.insert(frag_fast.frag_load(ptr, elem, None if p is True else em.boolean(p))).results[0])
            return out

        # An element copy that is part of an async copy (rows too narrow for cp.async) lands in shared
        # memory at the next wait, barrier or block end, not in place: its loads are then in flight
        # during what comes between (the K loop's mmas), as cp.async's would be. The async copy's
        # contract allows it: its destination is read only after a wait.
        defer = is_async and vector_ok is False and active is True

        def to_shared(values: list[SSAValue] | SSAValue, s_row, s_col) -> None:
            if defer:
                self.deferred.append(lambda: store(values, s_row, s_col))
            else:
                store(values, s_row, s_col)

        def store(values: list[SSAValue] | SSAValue, s_row, s_col) -> None:
            self.store_run(values, lambda j: self.shared_ptr(dst, s_row, em.add(s_col, j, i32)), elem, vtype, ce,
                           shared_vec)

        def sync_runs(use_fast: bool):
            for r_static, c_static in runs:
                g_row, g_col, s_row, s_col = place(r_static, c_static)
                if use_fast and ce > 1:
                    inside = em.all([vector_ok, self.in_bounds(src, 0, g_row),
                                     self.in_bounds(src, 1, em.add(g_col, ce - 1, i64)),
                                     *run_bits(r_static, c_static)])
                    (v,) = self.if_then(
                        inside,
                        lambda: [em.insert(frag_fast.frag_load(self.global_ptr(src, [g_row, g_col]),
                                                               vtype)).results[0]],
                        lambda: [self.pack_vector(elementwise(g_row, g_col, r_static, c_static), vtype)],
                        [vtype],
                    )
                    to_shared(v, s_row, s_col)
                else:
                    to_shared(elementwise(g_row, g_col, r_static, c_static), s_row, s_col)
            return []

        whole = src.aligned_rows and src.aligned_rows % (ce * size) == 0

        def async_runs():
            nbytes = ce * size
            bases: list[tuple[int, SSAValue]] = []
            tests = [None, None]
            if whole and src_old:
                tests = [self.window_bounds(src, d, src_old[d], src_new[d], (t_row, t_col)[d]) for d in (0, 1)]

            def inside_at(g_row, g_col, r_static, c_static) -> Bool:
                row = tests[0](r_static) if tests[0] else self.in_bounds(src, 0, g_row)
                col = tests[1](c_static) if tests[1] else self.in_bounds(src, 1, g_col)
                return em.land(row, col)

            def issue(g_row, g_col, r_static, c_static, dptr, bits) -> None:
                """One run's cp.async; a masked run reads its leading set bits' elements (zero-filling the
                rest: exact where its bits are a prefix, which the caller checked)."""
                lead = self.leading_bits(bits) if bits else None
                if whole:
                    # rows are whole aligned vectors: a run is all inside or all outside, and
                    # outside cp.async reads nothing and writes zeros (its ignore-src predicate)
                    inside = inside_at(g_row, g_col, r_static, c_static)
                    ptr = self.global_ptr(src, [g_row, g_col])
                    if lead is not None:
                        nsrc = em.select(inside, em.mul(lead, size, i32), 0, i32)
                        em.insert(frag_fast.frag_cp_async(dptr, ptr, nbytes, em.value(nsrc, i32)))
                    elif inside is True:
                        em.insert(frag_fast.frag_cp_async(dptr, ptr, nbytes))
                    else:
                        ignore = em.boolean(em.lnot(inside))
                        em.insert(frag_fast.frag_cp_async(dptr, ptr, nbytes, ignore_src=ignore))
                    return
                left = em.smax(em.sub(N, g_col, i64), 0, i64)
                avail = em.umin(left, ce, i64)
                if lead is not None:
                    avail = em.umin(avail, em.cast(lead, i64), i64)
                avail = em.select(self.in_bounds(src, 0, g_row), avail, 0, i64)
                nsrc = em.cast(em.mul(avail, size, i64), i32)
                ptr = self.global_ptr(src, [g_row, g_col])
                some = em.cmp("ne", nsrc, 0, i32)
                if not isinstance(some, bool):
                    ptr = em.insert(fast.arith_select_op(some, ptr, src.ptr)).results[0]
                em.insert(frag_fast.frag_cp_async(dptr, ptr, nbytes, em.value(nsrc, i32)))

            def by_element(g_row, g_col, r_static, c_static, dptr, bits) -> None:
                """A run through registers, stored now: the stage is free at issue, and its readers
                wait at the stage's barrier."""
                values = elementwise(g_row, g_col, r_static, c_static)
                if shared_vec:
                    em.insert(frag_fast.frag_store(self.pack_vector(values, vtype), dptr))
                else:
                    s_row, s_col = place(r_static, c_static)[2:]
                    for j, x in enumerate(values):
                        em.insert(frag_fast.frag_store(x, self.shared_ptr(dst, s_row, em.add(s_col, j, i32))))

            placed = []
            for r_static, c_static in runs:
                g_row, g_col, s_row, s_col = place(r_static, c_static)
                dptr = self._translated(dst, bases, r_static, c_static)
                if dptr is None:
                    dptr = self.shared_ptr(dst, s_row, s_col)
                    if (delta := linear_offset(dst, r_static, c_static)) is not None:
                        bases.append((delta, dptr))
                if mask is None:
                    issue(g_row, g_col, r_static, c_static, dptr, [])
                else:
                    placed.append((g_row, g_col, r_static, c_static, dptr, run_bits(r_static, c_static)))
            if placed:
                # one test for the whole copy, outside its runs: each run's bits a prefix (what
                # cp.async's source size zero-fills exactly; LLVM proves it for an iota's bound), else
                # every run element by element
                exact = True if prefix_rows else em.all([self.bits_prefix(run[-1]) for run in placed])
                self.if_then(exact, lambda: [issue(*run) for run in placed] and [],
                             lambda: [by_element(*run) for run in placed] and [])
            return []

        def body():
            if is_async and ce * size >= CP_ASYNC_MIN_BYTES and (ce == 1 or shared_vec):
                self.if_then(vector_ok, async_runs, lambda: sync_runs(False))
            else:
                sync_runs(True)
            return []

        self.if_then(active, body)

    def store_run(self, values: list[SSAValue] | SSAValue, at: Callable[[int], SSAValue], elem: Attribute,
                  vtype: Attribute, n: int, whole: bool) -> None:
        """A copied run of ``n`` values (one vector of ``vtype``, or its elements) into shared memory: one
        vector store at ``at(0)`` where ``whole`` (the run is one aligned vector there), else element ``j`` at
        ``at(j)``."""
        em = self.em
        if isinstance(values, SSAValue):
            if whole:
                em.insert(frag_fast.frag_store(values, at(0)))
                return
            values = [em.insert(fast.vector_extract_op(values, j, elem)).results[0] for j in range(n)]
        if whole:
            em.insert(frag_fast.frag_store(self.pack_vector(values, vtype), at(0)))
        else:
            for j, x in enumerate(values):
                em.insert(frag_fast.frag_store(x, at(j)))

    def bits_prefix(self, bits: list[Bool]) -> Bool:
        """Whether a run's set bits are its first ones (no bit set after one that is not)."""
        em = self.em
        return em.all([em.lnot(em.land(later, em.lnot(earlier))) for earlier, later in zip(bits, bits[1:])])

    def leading_bits(self, bits: list[Bool]) -> Int:
        """How many of a run's bits are set before the first that is not (i32), for bits that are a
        prefix (what the caller checked): how many are set. A factor every bit ANDs in (a test of
        the row) selects the count of the rest, which the runs of one thread's rows share."""
        em = self.em
        common, bits = _common_factors(bits)
        count: Int = 0
        for b in bits:
            count = em.add(count, em.select(b, 1, 0, i32), i32)
        return em.select(em.all(common), count, 0, i32) if common else count

    def flush_deferred(self) -> None:
        """Emit the deferred shared stores of element-path async copies, in their order."""
        pending, self.deferred = self.deferred, []
        for store in pending:
            store()

    def pack_vector(self, values: list[SSAValue], vtype: Attribute) -> SSAValue:
        em = self.em
        if not isinstance(vtype, VectorType):
            (x,) = values
            return x
        out = em.zero_vector(vtype)
        for j, x in enumerate(values):
            out = em.insert(fast.vector_insert_op(x, out, j)).results[0]
        return out

    # ------------------------------------------------------------ shared -> registers

    def load_shared_fragment(self, src: SharedBuf, idx_old, idx_new, fr: Fragment, elem: Attribute) -> Regs:
        em = self.em
        origin, div = self.shared_origin(idx_old, idx_new)
        dims = src.type.dims
        if (fr.packing, element_bits(elem)) in ((2, 16), (4, 8)):
            row = 4 * fr.packing  # elements in an ldmatrix row of 16 bytes
            for contig in (1, 0):
                if div[contig] % row or src.align % 16 or not contiguous_runs(src.type.layout, dims, contig, row):
                    continue
                plan = checked_ldmatrix_plan(fr, contig)
                if plan is None:
                    continue
                regs: list[SSAValue | None] = [None] * fr.num_registers
                # the plan is warp 0's: a fragment spread over the block's warps (an mma split over them)
                # puts each warp's part at the offset its warp bits give, added to every lane's row
                warp_m, warp_n = (warp_bits(fields) for fields in fr.lane_fields) if fr.warps > 1 else ((), ())
                for ld in plan:
                    lanes = [ld.lane_row(lane) for lane in range(WARP)]
                    fx = linear_fields([x for x, _ in lanes])
                    fy = linear_fields([y for _, y in lanes])
                    if fx is None or fy is None:
                        raise FragmentError("ldmatrix lane rows are not bit-linear (a bug in tilec)")
                    fx, fy = (fx[0], fx[1] + warp_m), (fy[0], fy[1] + warp_n)
                    ptr = self._ldmatrix_address(src, origin, fx, fy)
                    got = em.insert(frag_fast.frag_ldmatrix(ptr, ld.num, ld.trans)).results
                    for r, v in zip(ld.registers, got):
                        regs[r] = v
                return Regs(fr, elem, regs)  # type: ignore[arg-type]
        # element by element (vectors where runs are contiguous)
        scalars = self.load_shared_values(src, origin, div, fr, list(range(fr.num_values)), elem)
        return Regs(fr, elem, self.pack_registers(fr, elem, scalars))

    def _ldmatrix_address(self, src: SharedBuf, origin: list[Int], fx, fy) -> SSAValue:
        """The address a lane gives one ``ldmatrix``: row ``fx`` and column ``fy`` (static part,
        lane fields) of the window at ``origin``.

        The loads of one block that read the tile at the same dynamic origin with the same lane
        fields share their addresses (:meth:`_translated`): tile-pipeline's K steps are separate
        loads, and without this each step's address was a loop invariant of its own (the V tile
        of a 32-row attention warp: 32 registers instead of 8)."""
        em = self.em
        dynamic = tuple(0 if isinstance(o, int) else o for o in origin)
        row, col = (o + f[0] if isinstance(o, int) else f[0] for o, f in zip(origin, (fx, fy)))
        bases = em.block_list(("ldmatrix-bases", src.ptr, src.type, dynamic, fx[1], fy[1]))
        ptr = self._translated(src, bases, row, col)
        if ptr is None:
            ptr = self.shared_ptr(src, em.sum([dynamic[0], row, self.lane_value(fx[1])], i32),
                                  em.sum([dynamic[1], col, self.lane_value(fy[1])], i32))
            if (delta := linear_offset(src, row, col)) is not None:
                bases.append((delta, ptr))
        return ptr

    def _translated(self, src: SharedBuf, bases: list[tuple[int, SSAValue]], row: int, col: int) -> SSAValue | None:
        """The address of a lane's element at static offset (row, col), as an earlier address plus a constant.

        ``Sw(o + d) = Sw(o) + d`` when ``d`` is a multiple of the swizzle's
        period (the XOR reads and writes only bits below it), so the
        ``ldmatrix`` of another 16-row block reuses the first one's address
        with an immediate offset instead of a register of its own.
        """
        delta = linear_offset(src, row, col)
        if delta is None:
            return None
        _, _, sw = shared_swizzle(src.type.layout)
        period = sw.size() if sw is not None else 1
        for base_delta, base in bases:
            if (delta - base_delta) % period == 0:
                return self.em.gep(base, delta - base_delta, src.element_type, i32)
        return None

    def load_shared_values(self, src: SharedBuf, origin: list[Int], div: list[int], fr: Fragment,
                           values: list[int], elem: Attribute) -> list[SSAValue]:
        """The lane's ``values`` of ``fr`` from a shared window, as vector loads where they form
        aligned runs along a contiguous dimension of the shared layout, else one load each."""
        em = self.em
        dims = src.type.dims
        out: dict[int, SSAValue] = {}
        for run in self._runs(fr, values, elem, lambda d, w: div[d] % w == 0 and src.align % (w * _bytes(elem)) == 0
                              and contiguous_runs(src.type.layout, dims, d, w)):
            v0, d, w = run
            m, n = self.value_coord(fr, v0)
            ptr = self.shared_ptr(src, em.add(origin[0], m, i32), em.add(origin[1], n, i32))
            if w == 1:
                out[v0] = em.insert(frag_fast.frag_load(ptr, elem)).results[0]
                continue
            vec = em.insert(frag_fast.frag_load(ptr, fast.vector_type(elem, w))).results[0]
            for j, v in enumerate(self._run_values(fr, v0, d, w)):
                out[v] = em.insert(fast.vector_extract_op(vec, j, elem)).results[0]
        return [out[v] for v in values]

    @staticmethod
    def _lane_divisor(fr: Fragment, d: int) -> int:
        div = 1 << 30
        for f in fr.lane_fields[d]:
            div = min(div, f.scale & -f.scale)
        return div

    @staticmethod
    def _run_values(fr: Fragment, v0: int, d: int, w: int) -> list[int]:
        where = {c: v for v, c in enumerate(fr.value_coords)}
        m, n = fr.value_coords[v0]
        return [where[(m + j, n) if d == 0 else (m, n + j)] for j in range(w)]

    def _runs(self, fr: Fragment, values: list[int], elem: Attribute, allowed) -> list[tuple[int, int, int]]:
        """Split ``values`` into runs (first value, dimension, width) of consecutive elements.

        A run of width w > 1 lies along dimension d, starts at a static offset
        and lane offset divisible by w, moves 4, 8 or 16 bytes and ``allowed(d,
        w)`` holds; everything else is a run of width 1.
        """
        size = _bytes(elem)
        where = {fr.value_coords[v]: v for v in values}
        done: set[int] = set()
        runs = []
        for v in values:
            if v in done:
                continue
            found = None
            for w in (16 // size, 8 // size, 4 // size):
                if w < 2 or found:
                    continue
                for d in (1, 0):
                    start = fr.value_coords[v]
                    if start[d] % w or self._lane_divisor(fr, d) % w:
                        continue
                    coords = [(start[0] + j, start[1]) if d == 0 else (start[0], start[1] + j) for j in range(w)]
                    if all(c in where and where[c] not in done for c in coords) and allowed(d, w):
                        found = (v, d, w)
                        break
            run = found or (v, 1, 1)
            runs.append(run)
            done.update(self._run_values(fr, v, run[1], run[2]) if run[2] > 1 else [v])
        return runs

    def pack_registers(self, fr: Fragment, elem: Attribute, scalars: list[SSAValue]) -> list[SSAValue]:
        """Scalars → the fragment's registers (16-bit pairs packed into i32 with ``frag.pack``; four 8-bit
        integers as the bytes of an i32, the first the lowest)."""
        if fr.packing == 1:
            return scalars
        em = self.em
        if fr.packing == 4:
            out = []
            for r in range(fr.num_registers):
                vec = em.zero_vector(fast.vector_type(elem, 4))
                for j, v in enumerate(fr.register_values(r)):
                    vec = em.insert(fast.vector_insert_op(scalars[v], vec, j)).results[0]
                word = em.insert(fast.vector_bitcast_op(vec, fast.vector_type(i32, 1))).results[0]
                out.append(em.insert(fast.vector_extract_op(word, 0, i32)).results[0])
            return out
        kind = "bf16x2" if "bf16" in str(elem) else "f16x2"
        out = []
        for r in range(fr.num_registers):
            lo, hi = (self._f32_source(scalars[v]) for v in fr.register_values(r))
            out.append(em.insert(frag_fast.frag_pack(kind, lo, hi)).results[0])
        return out

    def _f32_source(self, x: SSAValue) -> SSAValue:
        """An f32 that rounds to the 16-bit ``x``: the operand of the ``truncf`` that made it (``frag.pack``
        rounds as ``truncf`` does: one ``cvt.rn.f16x2.f32`` converts and packs), else ``x`` extended."""
        if isinstance(x, OpResult) and isinstance(x.op, arith.TruncFOp) and x.op.input.type == Float32Type():
            return x.op.input
        return self.em.insert(fast.arith_cast_op(arith.ExtFOp, x, Float32Type())).results[0]

    # ------------------------------------------------------------ registers <-> global

    def load_global_fragment(self, src: GlobalArg, idx_old, idx_new, fr: Fragment, elem: Attribute) -> Regs:
        em = self.em
        o = [em.cast(i, i64) for i in idx_new]
        out: dict[int, SSAValue] = {}
        for v0, _, w in self._global_runs(fr, list(range(fr.num_values)), elem, src, idx_old, idx_new):
            m, n = self.value_coord(fr, v0, i64)
            r, c = em.add(o[0], m, i64), em.add(o[1], n, i64)
            vals = self._run_values(fr, v0, 1, w) if w > 1 else [v0]

            def elementwise(r=r, c=c, w=w):
                got = []
                row_in = self.in_bounds(src, 0, r)
                base = self.global_ptr(src, [r, c])
                for j in range(w):
                    p = em.land(row_in, self.in_bounds(src, 1, em.add(c, j, i64)))
                    got.append(em.insert(frag_fast.frag_load(self.next_ptr(src, base, 1, j), elem,
                                                     None if p is True else em.boolean(p))).results[0])
                return got

            if w == 1:
                (out[v0],) = elementwise()
                continue
            vt = fast.vector_type(elem, w)
            run_fast = self._run_fast(src, idx_old, idx_new, w)
            if run_fast is True:  # a whole run: one vector load, zeros outside (as elementwise)
                inside = em.land(self.in_bounds(src, 0, r), self.in_bounds(src, 1, c))
                vec = em.insert(frag_fast.frag_load(self.global_ptr(src, [r, c]), vt,
                                                    None if inside is True else em.boolean(inside))).results[0]
                for j, v in enumerate(vals):
                    out[v] = em.insert(fast.vector_extract_op(vec, j, elem)).results[0]
                continue
            vector_ok = em.all([run_fast, self.in_bounds(src, 0, r), self.in_bounds(src, 1, em.add(c, w - 1, i64))])
            (vec,) = self.if_then(
                vector_ok,
                lambda r=r, c=c, vt=vt: [em.insert(frag_fast.frag_load(self.global_ptr(src, [r, c]), vt)).results[0]],
                lambda w=w, vt=vt, ew=elementwise: [self.pack_vector(ew(), vt)],
                [vt],
            )
            for j, v in enumerate(vals):
                out[v] = em.insert(fast.vector_extract_op(vec, j, elem)).results[0]
        scalars = [out[v] for v in range(fr.num_values)]
        return Regs(fr, elem, self.pack_registers(fr, elem, scalars))

    def _run_fast(self, g: GlobalArg, idx_old, idx_new, w: int) -> Bool:
        """Whether a run of ``w`` columns (:meth:`_runs`: at a multiple of ``w`` in the window) may
        move as one vector. Statically True when the rows are whole aligned vectors of ``w``
        (``tile.aligned_rows``) and the window's origin is a multiple of ``w``: then the run is
        all inside the view's columns or all outside, and one bounds test decides it."""
        return self.em.land(self.vec_ok(g, w), self._origin_aligned(idx_old[1], idx_new[1], w))

    def _global_runs(self, fr: Fragment, values: list[int], elem: Attribute, g: GlobalArg, idx_old, idx_new):
        """Runs along the columns of a global window (row-contiguous views; checked at run time)."""
        return self._runs(fr, values, elem, lambda d, w: d == 1)

    def load_global_vector(self, src: GlobalArg, idx_old, idx_new, vf: VectorFragment, elem: Attribute) -> Regs:
        """A vector from a rank-1 view: the elements this lane's fragment holds. Consecutive positions
        at a multiple of ``w`` (from lanes whose offsets are too) load as one ``w``-element vector
        (16, 8 or 4 bytes) where the view allows it: statically with ``tile.aligned_rows`` and an
        aligned origin (then one bounds test decides the run), else tested once per kernel and run."""
        em = self.em
        base = self.lane_value(vf.lane_fields, i64)
        o = em.cast(idx_new[0], i64)
        size = _bytes(elem)
        lane_div = min((f.scale & -f.scale for f in vf.lane_fields), default=1 << 30)
        where = {p: v for v, p in enumerate(vf.positions)}
        values: list[SSAValue | None] = [None] * vf.num_values

        def one(c):
            pred = self.in_bounds(src, 0, c)
            ptr = self.global_ptr(src, [c])
            return em.insert(frag_fast.frag_load(ptr, elem, em.boolean(pred) if pred is not True else None)).results[0]

        for v, p in enumerate(vf.positions):
            if values[v] is not None:
                continue
            c = em.sum([o, base, p], i64)
            w = next((w for w in (16 // size, 8 // size, 4 // size) if w >= 2 and p % w == 0 and lane_div % w == 0
                      and all(p + j in where for j in range(w))), 1)
            if w == 1:
                values[v] = one(c)
                continue
            run = [where[p + j] for j in range(w)]
            vt = fast.vector_type(elem, w)
            whole = em.land(self.vec_ok(src, w), self._origin_aligned(idx_old[0], idx_new[0], w))
            if whole is True:  # the run is all inside the view or all outside: one predicated vector load
                inside = self.in_bounds(src, 0, c)
                vec = em.insert(frag_fast.frag_load(self.global_ptr(src, [c]), vt,
                                                    None if inside is True else em.boolean(inside))).results[0]
            else:
                ok = em.all([whole, self.in_bounds(src, 0, em.add(c, w - 1, i64))])
                (vec,) = self.if_then(
                    ok,
                    lambda c=c, vt=vt: [em.insert(frag_fast.frag_load(self.global_ptr(src, [c]), vt)).results[0]],
                    lambda c=c, vt=vt, w=w: [self.pack_vector([one(em.add(c, j, i64)) for j in range(w)], vt)],
                    [vt],
                )
            for j, u in enumerate(run):
                values[u] = em.insert(fast.vector_extract_op(vec, j, elem)).results[0]
        return Regs(vf, elem, values)

    def store_global_fragment(self, value: Regs, dst: GlobalArg, idx_old, idx_new,
                              mask: list[SSAValue] | None = None) -> None:
        """The lane's values into a global window: runs along the columns as vectors where the view
        allows, else one store each. With ``mask`` (an i1 per value, the fragment's order) an element is
        written only where its bit is set: a run is one vector store where all its bits are, else one
        predicated store each."""
        em = self.em
        fr = value.frag
        assert isinstance(fr, Fragment)
        elem = value.element_type
        scalars = self.scalars(value)
        o = [em.cast(i, i64) for i in idx_new]
        for v0, _, w in self._global_runs(fr, list(range(fr.num_values)), elem, dst, idx_old, idx_new):
            m, n = self.value_coord(fr, v0, i64)
            r, c = em.add(o[0], m, i64), em.add(o[1], n, i64)
            run = self._run_values(fr, v0, 1, w) if w > 1 else [v0]
            vals = [scalars[v] for v in run]
            bits = [True] * len(run) if mask is None else [mask[v] for v in run]
            row_in = self.in_bounds(dst, 0, r)
            ptr = self.global_ptr(dst, [r, c])

            def elementwise(r=r, c=c, vals=vals, bits=bits, row_in=row_in, base=ptr):
                for j, x in enumerate(vals):
                    p = em.all([row_in, self.in_bounds(dst, 1, em.add(c, j, i64)), bits[j]])
                    self._store(x, self.next_ptr(dst, base, 1, j), p)
                return []

            if w == 1:
                elementwise()
                continue
            run_fast = self._run_fast(dst, idx_old, idx_new, w)
            if run_fast is True and mask is None:  # a whole run: one vector store, or none
                vec = self.pack_vector(vals, fast.vector_type(elem, w))
                self._store(vec, ptr, em.land(row_in, self.in_bounds(dst, 1, c)))
                continue
            vector_ok = em.all([run_fast, row_in, self.in_bounds(dst, 1, em.add(c, w - 1, i64)), *bits])

            def vector_store(vals=vals, w=w, ptr=ptr):
                em.insert(frag_fast.frag_store(self.pack_vector(vals, fast.vector_type(elem, w)), ptr))
                return []

            self.if_then(vector_ok, vector_store, elementwise)

    def _store(self, x: SSAValue, ptr: SSAValue, p: Bool) -> None:
        if p is False:
            return
        self.em.insert(frag_fast.frag_store(x, ptr, None if p is True else p))

    def store_shared_fragment(self, value: Regs, dst: SharedBuf, idx_old, idx_new) -> None:
        """The lane's values into a shared window: vector stores where they form aligned runs along
        a contiguous dimension of the shared layout (as :meth:`load_shared_values` reads), else one
        store each."""
        em = self.em
        fr = value.frag
        assert isinstance(fr, Fragment)
        origin, div = self.shared_origin(idx_old, idx_new)
        elem = value.element_type
        scalars = self.scalars(value)
        dims = dst.type.dims
        for v0, d, w in self._runs(fr, list(range(fr.num_values)), elem,
                                   lambda d, w: div[d] % w == 0 and dst.align % (w * _bytes(elem)) == 0
                                   and contiguous_runs(dst.type.layout, dims, d, w)):
            m, n = self.value_coord(fr, v0)
            ptr = self.shared_ptr(dst, em.add(origin[0], m, i32), em.add(origin[1], n, i32))
            if w == 1:
                em.insert(frag_fast.frag_store(scalars[v0], ptr))
            else:
                vals = [scalars[v] for v in self._run_values(fr, v0, d, w)]
                em.insert(frag_fast.frag_store(self.pack_vector(vals, fast.vector_type(elem, w)), ptr))

    def scalars(self, value: Regs) -> list[SSAValue]:
        """One value of the element type per fragment value (16-bit pairs, 8-bit quadruples unpacked)."""
        if value.packing == 1:
            return value.values
        if "scalars" not in value.cache:
            em = self.em
            out = []
            pair = fast.vector_type(value.element_type, value.packing)
            for r in value.values:
                vec = em.insert(fast.vector_bitcast_op(_as_vec1(em, r), pair)).results[0]
                out += [em.insert(fast.vector_extract_op(vec, j, value.element_type)).results[0]
                        for j in range(value.packing)]
            value.cache["scalars"] = out
        return value.cache["scalars"]


def _common_factors(bits: list) -> tuple[list, list]:
    """``(common, rest)``: the operands every bit of ``bits`` ANDs in (``and(r, c_j)`` for each ``j``: ``r``),
    and each bit without them (``c_j``); ``([], bits)`` when there are none."""
    common = []
    while len(bits) > 1 and all(isinstance(b, SSAValue) and isinstance(b.owner, arith.AndIOp) for b in bits):
        shared = [x for x in bits[0].owner.operands if all(x in b.owner.operands for b in bits[1:])]
        if not shared or any(b.owner.lhs is b.owner.rhs for b in bits):
            break
        common.append(shared[0])
        bits = [b.owner.rhs if b.owner.lhs is shared[0] else b.owner.lhs for b in bits]
    return common, bits


def warp_bits(fields: tuple[BitField, ...]) -> tuple[BitField, ...]:
    """The part of a thread coordinate's bit fields that the warp bits (thread bits 5 and up) give:
    a field across the lane and warp bits (lanes 4..31 and warp 1 one run of columns) is split there."""
    out = []
    for f in fields:
        if f.shift >= 5:
            out.append(f)
        elif f.shift + f.width > 5:
            out.append(BitField(5, f.shift + f.width - 5, f.scale << (5 - f.shift)))
    return tuple(out)


def linear_offset(buf: SharedBuf, row: int, col: int) -> int | None:
    """``L(row, col) - L(0, 0)`` before the swizzle when both modes of the shared layout are single
    leaves (then ``L`` is linear in each coordinate), else None."""
    layout, _, _ = shared_swizzle(buf.type.layout)
    modes = [layout[0], layout[1]]
    if any(is_tuple(m.shape) and len(flatten(m.shape)) != 1 for m in modes):
        return None
    strides = [flatten(m.stride)[0] if is_tuple(m.stride) else m.stride for m in modes]
    return row * strides[0] + col * strides[1]


def _as_vec1(em, r: SSAValue) -> SSAValue:
    z = em.zero_vector(VectorType(IntegerType(32), [1]))
    return em.insert(fast.vector_insert_op(r, z, 0)).results[0]


def _crd(i: int, m: int) -> tuple[int, int]:
    return i % m, i // m


__all__ = ["MemoryLowering", "RegallocError"]
