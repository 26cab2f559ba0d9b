"""``tile-distribute`` for ``tile.wgmma``: shared-memory descriptors and the warpgroup MMA (sm_90a).

``%d = tile.wgmma %sa[%row], %sb[%col], %acc`` becomes, per K step ``k`` of
32 bytes (16 f16/bf16, 32 FP8 elements): one ``frag.wgmma`` m64nNk on
descriptors of A's ``64 x k`` window at ``(%row, k s)`` and B's ``k x N``
window at ``(k s, %col)``, between a
``frag.wgmma_fence`` and ``frag.wgmma_commit``, then ``frag.wgmma_wait 0``,
which hands back the accumulators (the op is complete when it returns). An
``async`` op stops at the commit: its result is the wgmma's registers, still
pending, until ``tile.wgmma_wait N`` (``frag.wgmma_wait N`` on them).

- **A from registers** (``tile.wgmma %a, %sb[%col], %acc``): per K step, the
  warp's four packed pairs of its m16n8k16 A fragment go to a
  ``frag.wgmma_rs`` instead of A's descriptor.
- **B stored N x K** (``transpose_b``): its bands are rows, described like an
  A's (K-major when K is contiguous).
- **FP8** (``f8E4M3FN``/``f8E5M2`` → ``e4m3``/``e5m2``): the wgmma has no
  transpose, so only K-major descriptors are tried for both operands.
- **The accumulator** is this warp's ``16 x N`` register tile in the m16n8 C
  fragment (:data:`tilec.layout.atoms.MMA_M16N8K16_F16`'s C, repeated along
  N): the register order of a wgmma's ``d`` for the warp's 16 rows.
- **Descriptors are proven.** For every band a warpgroup may use (``%row`` a
  multiple of 64, ``%col`` of N, as tile.wgmma promises) and every K step,
  :func:`tilec.layout.gmma.describe` checks the descriptor against the tile's
  layout element by element; the bands must sit at equally spaced byte
  offsets (then ``%row``, ``%col`` only scale a stride) and share one
  descriptor. The tile must start at a multiple of its swizzle's period
  (bulk-copy stages do). Otherwise a :class:`RegallocError` says which window
  and element do not fit.
- **The block's product** (``groups``): the warp's warpgroup runs one wgmma
  per 64-row band it holds (its ``M/GM`` rows of the block's accumulator) on
  its ``N/GN`` columns of B, all in one group; a register A gives each band
  its own packed pairs.
- **Descriptor arithmetic**: one ``frag.wgmma_desc`` per operand and band
  (the start address / 16 in the low 14 bits); each K step adds its byte
  offset / 16 (``arith.addi`` on i64).
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType, i32, i64
from xdsl.ir import SSAValue

from tilec.dialects import frag_fast
from tilec.dialects.frag import WGMMA_KMAJOR_ONLY
from tilec.dialects.tile import ops as t
from tilec.passes.alignment import root_alloc
from tilec.dialects.tile.types import SharedType, element_bits
from tilec.ir import fast
from tilec.layout.gmma import Described, GmmaLayoutError, describe
from tilec.passes.tile_distribute.memory import RegallocError
from tilec.passes.tile_layout import wgmma_a_fragment, wgmma_fragment
from tilec.passes.tile_distribute.values import Regs

_I8 = IntegerType(8)
_PTX_TYPE = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
"""The wgmma's operand type (PTX name) by the tile's element type."""


@lru_cache(maxsize=64)
def _bands(layout, dims: tuple[int, int], elem_bytes: int, role: str, band: int, step: int, k_major_only: bool = False):
    """(major, stride between bands in bytes, [Described per K step]) for an operand, proven for every band.

    ``role`` "A": bands of ``band`` rows, K along columns; "B": bands of ``band`` columns, K along rows.
    ``k_major_only``: the wgmma has no transpose (FP8), so only a K-major descriptor will do.
    """
    rows, cols = dims
    k = cols if role == "A" else rows
    count = (rows if role == "A" else cols) // band
    errors = []
    majors = ("K", "MN") if role == "A" else ("MN", "K")
    for major in (m for m in majors if m == "K" or not k_major_only):
        try:
            per_band = []
            for i in range(count):
                if role == "A":
                    windows = [(i * band, s, band, step) for s in range(0, k, step)]
                else:
                    windows = [(s, i * band, step, band) for s in range(0, k, step)]
                per_band.append([describe(layout, w, elem_bytes, major, mn_first=role == "A") for w in windows])
        except GmmaLayoutError as e:
            errors.append(str(e))
            continue
        first = per_band[0]
        stride = per_band[1][0].offset - first[0].offset if count > 1 else 0
        for i, steps in enumerate(per_band):
            for s, d in enumerate(steps):
                if d.desc != first[s].desc or d.offset != first[s].offset + i * stride:
                    raise GmmaLayoutError(
                        f"band {i} of {role} ({layout}) is not band 0 moved by {stride} bytes: K step {s} "
                        f"is at byte {d.offset} with {d.desc}, expected {first[s].offset + i * stride} with {first[s].desc}"
                    )
        return major, stride, first
    raise GmmaLayoutError("; ".join(dict.fromkeys(errors)))


class WgmmaLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: lowers ``tile.wgmma``."""

    def wgmma(self, op: t.WgmmaOp) -> None:
        em = self.em
        b, c = self.get(op.b), self.get(op.c)
        m, width = op.c.type.dims
        gm, gn = op.block_groups or (1, 1)
        n = width // gn  # one wgmma's N
        elem = op.a.type.element_type
        eb = element_bits(elem) // 8
        dtype = "s8" if elem == IntegerType(8) else _PTX_TYPE[elem.name]
        step = op.k_step()
        kmajor = dtype in WGMMA_KMAJOR_ONLY
        # B stored N x K is banded like an A (bands of N rows, K along the columns)
        role_b = "A" if op.transpose_b is not None else "B"
        try:
            major_b, stride_b, steps_b = _bands(op.b.type.layout, tuple(op.b.type.dims), eb, role_b, n, step, kmajor)
            if not op.registers_a:
                major_a, stride_a, steps_a = _bands(op.a.type.layout, tuple(op.a.type.dims), eb, "A",
                                                    t.WGMMA_ROWS, step, kmajor)
        except GmmaLayoutError as e:
            raise RegallocError(f"no wgmma descriptor describes the operands: {e}") from None
        shared = [(b, "b")] if op.registers_a else [(self.get(op.a), "a"), (b, "b")]
        for x, what in shared:
            period = _period(x.type.layout, eb)
            if x.align < period:
                raise RegallocError(f"shared tile {what} is only known to be {x.align}-byte aligned; its swizzle "
                                    f"needs {period} (wgmma descriptors swizzle absolute addresses)")
        fc = self.checked_fragment(op.c, wgmma_fragment(op), op)
        bands = fc.tiles[0]  # the warp's 64-row bands: one, but in the block form
        if op.block_groups is None:
            base_b = self._band_pointer(b.ptr, self.get(op.col), n, stride_b)
            if op.registers_a:
                a_bands = self._register_a(op)
            else:
                base_a = self._band_pointer(self.get(op.a).ptr, self.get(op.row), t.WGMMA_ROWS, stride_a)
                a_bands = [self._step_descriptors(base_a, steps_a)]
        else:  # the block form: this warp's warpgroup takes its bands of A and its columns of B
            group = em.udiv(self.warp(), 4, i32)
            column = em.add(em.udiv(em.cast(self.get(op.col), i32), n, i32), em.udiv(group, gm, i32), i32)
            base_b = em.gep(b.ptr, em.mul(column, stride_b, i32), _I8, i32)
            if op.registers_a:
                a_bands = self._register_a(op)
            else:
                first = em.add(em.udiv(em.cast(self.get(op.row), i32), t.WGMMA_ROWS, i32),
                               em.mul(em.urem(group, gm, i32), bands, i32), i32)
                a_bands = [self._step_descriptors(em.gep(self.get(op.a).ptr, em.mul(em.add(first, i, i32), stride_a,
                                                                                    i32), _I8, i32), steps_a)
                           for i in range(bands)]
        desc_b = self._step_descriptors(base_b, steps_b)
        em.insert(frag_fast.frag_wgmma_fence())
        acc = list(c.values)
        results: list[tuple[list[int], list[SSAValue]]] = []
        for band, a_steps in enumerate(a_bands):
            indices = [i for j in range(n // 8) for i in fc.atom_value_range(band, j)]
            regs = [c.values[i] for i in indices]
            for a_step, db in zip(a_steps, desc_b):
                if op.registers_a:
                    mma = frag_fast.frag_wgmma_rs(a_step, db, regs, n=n, dtype=dtype, trans_b=major_b == "MN")
                else:
                    mma = frag_fast.frag_wgmma(a_step, db, regs, n=n, dtype=dtype, trans_a=major_a == "MN",
                                               trans_b=major_b == "MN")
                regs = list(em.insert(mma).results)
            results.append((indices, regs))
        em.insert(frag_fast.frag_wgmma_commit())
        indices = [i for done, _ in results for i in done]
        regs = [r for _, done in results for r in done]
        if op.is_async is None:
            regs = list(em.insert(frag_fast.frag_wgmma_wait(regs, 0)).results)
        for i, r in zip(indices, regs):
            r.name_hint = "acc"
            acc[i] = r
        self.vmap[op.result] = Regs(self.fragment(op.result), c.element_type, acc)

    def wgmma_wait(self, op: t.WgmmaWaitOp) -> None:
        """``frag.wgmma_wait pending`` on the tile's registers: they pass through it, so nothing reads
        them before the wait."""
        x = self.get(op.value)
        regs = list(self.em.insert(frag_fast.frag_wgmma_wait(list(x.values), op.pending.value.data)).results)
        for r in regs:
            r.name_hint = "acc"
        self.vmap[op.result] = Regs(self.fragment(op.result), x.element_type, regs)

    def _register_a(self, op: t.WgmmaOp) -> list[list[list[SSAValue]]]:
        """The warp's A registers per band and K step of 16: the m16n8k16 A fragment's four packed pairs."""
        fa = self.checked_fragment(op.a, wgmma_a_fragment(op), op)
        a = self.in_form(self.get(op.a), fa.with_packing(2))
        bands = []
        for band in range(fa.tiles[0]):
            steps = []
            for ki in range(fa.tiles[1]):
                rng = fa.atom_value_range(band, ki)
                steps.append(a.values[rng.start // a.packing : rng.stop // a.packing])
            bands.append(steps)
        return bands

    def _band_pointer(self, ptr: SSAValue, start: SSAValue, band: int, stride: int) -> SSAValue:
        """``ptr`` advanced to the band at element ``start`` (a multiple of ``band``): ``start / band * stride`` bytes."""
        em = self.em
        if stride == 0:
            return ptr
        index = em.udiv(em.cast(start, i32), band, i32)
        return em.gep(ptr, em.mul(index, stride, i32), _I8, i32)

    def _step_descriptors(self, base: SSAValue, steps: list[Described]) -> list[SSAValue]:
        em = self.em
        desc = em.insert(frag_fast.frag_wgmma_desc(base, steps[0].desc.high_bits())).results[0]
        out = []
        for d in steps:
            delta = d.offset // 16
            if delta == 0:
                out.append(desc)
            else:
                out.append(em.insert(fast.arith_binary_op(arith.AddiOp, desc, em.const(delta, i64))).results[0])
        return out


def wgmma_alignment(fn) -> dict:
    """The ``tile.alloc`` of each shared wgmma operand → its swizzle's period in bytes: a descriptor
    swizzles absolute addresses, so the tile (and each pipeline stage of it) starts at a period."""
    out = {}
    for op in fn.walk():
        if isinstance(op, t.WgmmaOp):
            for x in (op.b,) if op.registers_a else (op.a, op.b):
                alloc = root_alloc(x)
                if alloc is not None:
                    period = _period(x.type.layout, element_bits(x.type.element_type) // 8)
                    out[alloc] = max(out.get(alloc, 0), period)
    return out


def wgmma_reads_generic_writes(fn, tiles) -> bool:
    """Whether a shared tile a wgmma reads (``tiles``: their allocs) is written through the generic
    proxy (``tile.copy``, ``cp.async``, ``tile.store``), which the async proxy sees only after a
    ``fence.proxy.async``; bulk tensor copies write through the async proxy themselves."""
    for op in fn.walk():
        dest = None
        if isinstance(op, (t.CopyOp, t.AsyncCopyOp)):
            dest = op.dest
        elif isinstance(op, t.StoreOp) and isinstance(op.dest.type, SharedType):
            dest = op.dest
        if dest is not None and root_alloc(dest) in tiles:
            return True
    return False


def _period(layout, elem_bytes: int) -> int:
    sw = getattr(layout, "inner", None)
    return sw.size() * elem_bytes if sw is not None else 16


__all__ = ["WgmmaLowering", "wgmma_alignment", "wgmma_reads_generic_writes"]
