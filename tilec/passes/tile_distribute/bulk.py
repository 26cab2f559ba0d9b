"""``tile-distribute`` for bulk tensor copies: tensor-map parameters, barriers, one issuing thread.

- **ABI.** A ``!tile.gl`` argument that ``tile.bulk_copy`` reads (itself or a
  ``tile.subview`` of it) gets one more kernel parameter per box shape, after
  its strides::

      %a_map<j>: !llvm.ptr {tile.gl = "a", tile.tensor_map = j, tile.box = array<i64: R, I>, tile.swizzle = W}

  a CUDA tensor map (128 bytes, by value: ``.param .align 64 .b8 [128]``)
  of the view for boxes of ``R x I`` elements and a ``W``-byte swizzle, which
  the launcher encodes from the view (:mod:`tilec.runtime.tensor_map`), of
  the argument's rank: a copy from a subview addresses its box with the
  coordinates the subviews fixed in the leading dimensions. The
  view must promise ``tile.aligned_rows >= 16`` (what a tensor map needs of
  addresses and strides; checked at launch).
- **Prefetch.** At the kernel's entry the block's first thread prefetches every tensor map
  (``frag.tensormap_prefetch``), loads' and stores' (a hint to the SM's descriptor cache, whichever
  thread later issues the copies).
- **Barriers.** ``tile.mbar_init`` → ``N * 8`` bytes of shared memory; thread 0
  inits each barrier for one arrival (a per-warp ``!tile.mbar<N, warps>``: one
  per warp of the block, or of its consumers in a warp-specialised kernel) and
  fences, then ``tile.barrier`` (one after a run of adjacent ``tile.mbar_init``).
- **One thread issues** (the block's first, or a warp-specialised kernel's first producer
  thread, :mod:`.roles`). ``tile.mbar_expect`` → ``frag.mbar_expect_tx`` and
  ``tile.bulk_copy`` → one ``frag.tma_load`` per box (boxes side by side in
  shared memory, :mod:`tilec.layout.bulk`), each under ``scf.if warp == W`` and ``scf.if lane == L``
  (the leader's; the warp's branch uniform for ptxas).
- **Everyone waits.** ``tile.mbar_wait`` → ``frag.mbar_wait`` in every thread
  (with ``issuer``: in the issuing thread's warp only).
- **Bulk stores, per warp.** ``tile.bulk_store`` → ``frag.fence_proxy_async`` and
  ``frag.warp_sync`` in every lane (the warp's ``st.shared`` reach the async proxy), then one
  ``frag.tma_store_warp`` per box and ``frag.bulk_commit_warp`` (lane 0 issues); a store's view
  gets a tensor-map parameter as a bulk copy's does. ``tile.bulk_store_wait [pending N]`` →
  ``frag.bulk_wait_warp N`` (lane 0 waits for the reads of all but its last N stores, then the
  warp syncs).
- **Warps release.** ``tile.mbar_arrive`` → ``frag.mbar_arrive_warp`` (one
  arrival per warp, after ``bar.warp.sync``).
- **Alignment.** A tensor map's swizzle works on address bits, so a
  destination must start at a multiple of its swizzle's period (1024 bytes
  for 128-byte rows): static buffers are declared with that alignment, and
  the dynamic buffer's base is rounded up to it at run time (the launch
  reserves the extra bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, IndexType, IntegerAttr, StringAttr, i32, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Operation, SSAValue

from tilec.dialects import frag_fast
from tilec.ir import fast
from tilec.dialects.abi import BOX_ATTR, GL_ATTR, LAUNCH_ATTR, SWIZZLE_ATTR, TENSOR_MAP_ATTR, producer_threads
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.layout.bulk import MBARRIER_BYTES as MBAR_BYTES, BulkBox
from tilec.passes.alignment import leading_coordinates, root_alloc

MIN_ALIGNED_ROWS = 16


@dataclass(frozen=True)
class Mbars:
    """The barriers of one ``tile.mbar_init``: their shared address (8 bytes each)."""

    ptr: SSAValue
    count: int


def cluster_size(fn) -> int:
    """Blocks a thread-block cluster of the kernel ``fn`` (1: no clusters)."""
    launch = fn.attributes.get(LAUNCH_ATTR)
    return launch.cluster_size if isinstance(launch, LaunchAttr) else 1


def boxes_by_view(fn) -> dict[SSAValue, list[BulkBox]]:
    """Each kernel argument that bulk copies read or bulk stores write (itself or a subview of it)
    → its distinct boxes, in order of first use (a multicast copy's: the rows one block issues)."""
    out: dict[SSAValue, list[BulkBox]] = {}
    cluster = cluster_size(fn)
    for op in fn.walk():
        if isinstance(op, t.BulkCopyOp | t.BulkStoreOp):
            box = op.issued_box(cluster) if isinstance(op, t.BulkCopyOp) else op.box()
            view = op.source if isinstance(op, t.BulkCopyOp) else op.dest
            boxes = out.setdefault(leading_coordinates(view)[0], [])
            if box not in boxes:
                boxes.append(box)
    return out


def tensor_map_params(name: str, boxes: list[BulkBox]) -> list[tuple[Attribute, DictionaryAttr, str]]:
    """(type, attributes, name) of each tensor-map parameter of the view ``name``."""
    return [
        (
            LLVMPointerType(),
            DictionaryAttr({
                GL_ATTR: StringAttr(name),
                TENSOR_MAP_ATTR: IntegerAttr(j, i64),
                BOX_ATTR: DenseArrayBase.from_list(i64, [box.rows, box.inner]),
                SWIZZLE_ATTR: IntegerAttr(box.swizzle, i64),
            }),
            f"{name}_map{j}",
        )
        for j, box in enumerate(boxes)
    ]


def bulk_alignment(fn) -> dict[Operation, int]:
    """The ``tile.alloc`` of each bulk copy's destination → the alignment its boxes need (bytes)."""
    out: dict[Operation, int] = {}
    for op in fn.walk():
        if isinstance(op, t.BulkCopyOp | t.BulkStoreOp):
            alloc = root_alloc(op.dest if isinstance(op, t.BulkCopyOp) else op.source)
            if alloc is not None:
                out[alloc] = max(out.get(alloc, 0), op.box().alignment())
    return out


class BulkLowering:
    """The bulk-copy and barrier ops, for :class:`tilec.passes.tile_distribute.kernel.KernelLowering` (``self.em``, ``self.get``, ``self.tid``, ``self.threads``)."""

    tensor_maps: dict[tuple[SSAValue, BulkBox], SSAValue]

    def _leader(self, build, warp_only: bool = False) -> None:
        """``build()`` in the issuing thread of the region (:mod:`.roles`), or with ``warp_only`` in
        every lane of its warp: ``scf.if warp == W`` around ``scf.if lane == L``. The warp's branch is
        uniform for ptxas (:meth:`warp`); so is a barrier wait the whole warp runs. A loop that
        issues copies from one thread's branch, its wait inside, had its stage addresses and wgmma
        descriptors moved out of ptxas's uniform registers (a 64x128 wgmma tile's K step: 111
        instructions with the warp's branch, 202 with ``tid == 0``)."""

        def in_lane() -> list:
            build()
            return []

        def in_warp() -> list:
            if warp_only:
                return in_lane()
            self.if_then(self.em.cmp("eq", self.lane(), self.leader_tid % 32, i32), in_lane)
            return []

        self.if_then(self.em.cmp("eq", self.warp(), self.leader_tid // 32, i32), in_warp)

    def _barrier_at(self, bars: Mbars, index: SSAValue) -> SSAValue:
        """The address of barrier ``index`` (``i64``-sized elements: 8 bytes each)."""
        return self.em.gep(bars.ptr, self.em.cast(index, i32), i64, i32)

    def prefetch_tensor_maps(self) -> None:
        """At the kernel's entry (before any role), the block's first thread prefetches each
        tensor-map parameter into the descriptor cache: the first bulk copy of a block (its pipeline's
        prologue, exposed in a kernel of one tile a block) then does not wait for the map's fetch."""
        maps = list(dict.fromkeys(self.tensor_maps.values()))
        if maps:
            self._leader(lambda: [self.em.insert(frag_fast.frag_tensormap_prefetch(m)) for m in maps])

    def mbar_init(self, op: t.MbarInitOp, ptr: SSAValue) -> None:
        count = op.result.type.count.data
        arrivals = (self.threads - producer_threads(self.fn)) // 32 if op.result.type.per_warp else 1  # consumer warps
        if op.result.type.cluster_wide:  # ... of every block of the cluster
            arrivals *= cluster_size(self.fn)
        bars = Mbars(ptr, count)
        em = self.em

        def init():
            for i in range(count):
                em.insert(frag_fast.frag_mbar_init(em.gep(ptr, i, i64, i32), arrivals))
            em.insert(frag_fast.frag_mbar_init_fence())

        self._leader(init)
        if not isinstance(op.next_op, t.MbarInitOp):  # barriers made one after another: one block barrier
            em.insert(frag_fast.tile_barrier())
        self.vmap[op.result] = bars

    def mbar_expect(self, op: t.MbarExpectOp) -> None:
        bar = self._barrier_at(self.get(op.barriers), self.get(op.index))
        self._leader(lambda: self.em.insert(frag_fast.frag_mbar_expect_tx(bar, op.bytes.value.data)))

    def bulk_copy(self, op: t.BulkCopyOp) -> None:
        """One ``frag.tma_load`` per box; a multicast copy issues this block's rows of each box
        (its rank's share) to every block of the cluster."""
        em = self.em
        box = op.box()
        cluster = cluster_size(self.fn)
        part = op.issued_box(cluster)
        root, lead = leading_coordinates(op.source)
        tmap = self.tensor_maps[(root, part)]
        dst = self.get(op.dest)
        bar = self._barrier_at(self.get(op.barriers), self.get(op.barrier))
        row0, col0 = (em.cast(self.get(i), i32) for i in op.indices)
        outer = [em.value(em.cast(self.get(i), i32), i32) for i in reversed(lead)]  # innermost first
        cols = op.dest.type.dims[1]
        mask = None if part == box else (1 << cluster) - 1
        skip = None  # the rows of each box before this block's share, and their elements
        if mask is not None:
            rank = em.insert(fast.create(t.BlockRankOp, result_types=[IndexType()])).result
            skip = em.mul(em.cast(rank, i32), part.rows, i32)
            row0 = em.value(em.add(row0, skip, i32), i32)

        def issue():
            for j in range(cols // box.inner):
                at = em.gep(dst.ptr, j * box.rows * box.inner, dst.type.element_type, i32)
                if skip is not None:
                    at = em.gep(at, em.mul(skip, box.inner, i32), dst.type.element_type, i32)
                coords = [em.value(em.add(col0, j * box.inner, i32), i32), em.value(row0, i32), *outer]
                em.insert(frag_fast.frag_tma_load(at, tmap, bar, coords, mask))

        self._leader(issue)

    def bulk_store(self, op: t.BulkStoreOp) -> None:
        """The warp's shared writes handed to the async proxy, then its lane 0 stores each box and
        commits them as one group (:class:`~tilec.dialects.tile.ops.BulkStoreOp`)."""
        em = self.em
        box = op.box()
        root, lead = leading_coordinates(op.dest)
        tmap = self.tensor_maps[(root, box)]
        src = self.get(op.source)
        row0, col0 = (em.cast(self.get(i), i32) for i in op.indices)
        outer = [em.value(em.cast(self.get(i), i32), i32) for i in reversed(lead)]  # innermost first
        em.insert(frag_fast.frag_fence_proxy_async())
        em.insert(frag_fast.frag_warp_sync())
        for j in range(op.source.type.dims[1] // box.inner):
            at = em.gep(src.ptr, j * box.rows * box.inner, src.type.element_type, i32)
            coords = [em.value(em.add(col0, j * box.inner, i32), i32), em.value(row0, i32), *outer]
            em.insert(frag_fast.frag_tma_store_warp(at, tmap, coords))
        em.insert(frag_fast.frag_bulk_commit_warp())

    def bulk_store_wait(self, op: t.BulkStoreWaitOp) -> None:
        self.em.insert(frag_fast.frag_bulk_wait_warp(op.pending_count))

    def mbar_wait(self, op: t.MbarWaitOp) -> None:
        em = self.em
        bar = self._barrier_at(self.get(op.barriers), self.get(op.index))
        parity = em.value(em.cast(self.get(op.parity), i32), i32)
        if op.issuer is not None:  # the issuing thread's warp: a uniform branch (see _leader)
            self._leader(lambda: em.insert(frag_fast.frag_mbar_wait(bar, parity)), warp_only=True)
        else:
            em.insert(frag_fast.frag_mbar_wait(bar, parity))

    def mbar_arrive(self, op: t.MbarArriveOp) -> None:
        cluster = cluster_size(self.fn) if op.barriers.type.cluster_wide else None
        bar = self._barrier_at(self.get(op.barriers), self.get(op.index))
        self.em.insert(frag_fast.frag_mbar_arrive_warp(bar, cluster))
