"""``tile-bulk-store``: a warp's register tile reaches global memory through shared memory and a
bulk tensor store (TMA), not one ``st.global`` per fragment value.

A register tile's fragment scatters each lane's values over the tile (a wgmma accumulator gives
a lane two elements of a row, then the next eight columns over), so storing it element pair by
element pair writes half sectors: twice the L2 write transactions of whole lines, and an
epilogue that keeps the warp's load/store unit busy while the next tile's math waits (H200,
session 16: the persistent 8192x8192x1024 GEMM ran at 522 TFLOP/s with its stores and 736
without them). Here each warp writes its tile into a shared buffer of its own in the layout a
tensor map reads (row-major boxes of 128-byte rows under the 128-byte swizzle, so the
fragment's writes are bank-conflict free), and its first lane hands the buffer to the TMA
unit, which writes whole lines and clips the ragged edges; the warp goes on at once::

    tile.store %out, %c[%row, %col]      // %out: !tile.rt<16x256xf16>, warp-varying

becomes::

    %sc = tile.alloc : !tile.st<Wx16x256xf16, Sw<3,3,3> o 0 o (W,16,(64,4)):(4096,64,(1,1024))>  // kernel entry
    ...
    %w = tile.warp_id
    %sw = tile.stage %sc[%w]
    tile.bulk_store_wait                 // this warp's last bulk store has read %sw
    tile.store %out, %sw[%c0, %c0]
    tile.bulk_store %sw -> %c[%row, %col]

When the whole-tile buffers do not fit beside the kernel's other shared memory (four stages of the
128x256x64 GEMM tile, an f32 C), each warp stores its tile in column chunks of one box of 128-byte
rows through a ring of :data:`CHUNK_SLOTS` chunk buffers, each chunk a ``tile.slice`` of the
register tile (:func:`tilec.passes.fragments.column_window`: the fragment's columns must split into
whole windows of a lane's values). Chunk ``j`` takes slot ``j % 2`` and waits until all but the
warp's last store have read (``pending 1``: the slot's last store was two ago); with an odd number
of chunks, chunk 0 follows the previous store's last chunk in the same slot and waits for all::

    %ring = arith.muli %w, %c2
    %sw = tile.stage %sc[%ring]          // slot 0; chunk 1 takes %ring + 1, chunk 2 slot 0 again
    tile.bulk_store_wait pending 1       // the slot's last store (two stores ago) has read it
    %part = tile.slice %out[0, 0] : !tile.rt<16x256xf16, ...> -> !tile.rt<16x64xf16, ...>
    tile.store %part, %sw[%c0, %c0]
    tile.bulk_store %sw -> %c[%row, %col]

and every ``func.return`` of the kernel is preceded by a ``tile.bulk_store_wait`` (a block must
not exit while the TMA unit still reads its shared memory). ``W`` is the warps that run the
store: the block's, or its consumers' in a warp-specialised kernel (``tile-pipeline{producer}``
puts them first). Stores of the same shape and element type share one buffer (a ring of chunks
serves those whose fragments split into its chunks; the others keep their direct stores).

A store is taken when its value is a 2-D register tile that each warp holds for itself
(warp-varying, :mod:`tilec.passes.uniformity`: a warp-uniform tile may be one tile spread over
the block), it runs in every lane of its warp at one window (no branch on a lane-varying value,
no lane-varying index: lane 0 issues the copy), its view is 2-D (an argument or a subview of
one) whose rows are 16-byte aligned (``tile.aligned_rows``, what a tensor map needs), nothing
else in the kernel reads or writes that argument (the bulk store's global writes are ordered
with nothing but the kernel's end), a tensor map's box covers the tile
(:func:`tilec.layout.bulk.choose_box`) and the buffers fit: the kernel's shared memory as
tile-distribute will plan it (:func:`~tilec.passes.tile_distribute.kernel.plan_shared_memory`,
layout conversions' and reductions' scratch included) stays within the device's limit, and
``tile.launch``'s ``smem`` grows to it (whole tiles, else chunks). Other stores stay as they are.
Run after ``tile-layout`` (whose conversions take shared memory too) and before ``tile-distribute``;
sm_90 (bulk tensor copies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from tilec.dialects.abi import LAUNCH_ATTR, producer_threads
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import MAX_SHARED_BYTES, LaunchAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, SharedType, element_bits
from tilec.layout.bulk import box_layout, choose_box
from tilec.passes.alignment import aligned_rows_of, leading_coordinates
from tilec.passes.fragments import column_window, tile_fragment
from tilec.passes.tile_distribute.kernel import plan_shared_memory
from tilec.passes.tile_pipeline import staged_layout
from tilec.passes.uniformity import lane_varying, warp_varying

MIN_ALIGNED_ROWS = 16
"""Bytes a view's rows must be aligned to for a tensor map (``tile.aligned_rows``)."""


@dataclass(frozen=True)
class TileBulkStorePass(ModulePass):
    """Register tiles stored through per-warp shared buffers and bulk tensor stores (see the module docstring)."""

    name: ClassVar[str] = "tile-bulk-store"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and LAUNCH_ATTR in fn.attributes and not fn.is_declaration:
                bulk_stores(fn)


def bulk_stores(kernel: func.FuncOp) -> None:
    """Rewrite the stores of ``kernel`` that qualify (see the module docstring)."""
    stores = _candidates(kernel)
    if not stores:
        return
    launch: LaunchAttr = kernel.attributes[LAUNCH_ATTR]
    bx, by, bz = launch.block_dims
    threads = bx * by * bz
    warps = (threads - producer_threads(kernel)) // 32
    buffers: dict[tuple, _Buffer | None] = {}
    entry = kernel.body.block
    total = launch.smem.data
    for store in stores:
        tile: RegisterType = store.value.type
        key = (tuple(tile.dims), tile.element_type)
        if key not in buffers:
            buffers[key] = _place_buffer(kernel, entry, tile, warps, threads)
            if buffers[key] is not None:
                total = max(total, buffers[key].planned)
        buffer = buffers[key]
        # a ring of chunks serves the stores whose fragment splits into the same chunks
        if buffer is not None and (buffer.chunk is None or _chunk_width(tile) == buffer.chunk):
            _rewrite(store, buffer)
    if not any(buffers.values()):
        return
    for ret in [o for o in kernel.walk() if isinstance(o, func.ReturnOp)]:
        ret.parent_block().insert_op_before(t.BulkStoreWaitOp(), ret)
    kernel.attributes[LAUNCH_ATTR] = launch.replace(smem=total)


@dataclass(frozen=True)
class _Buffer:
    """Each warp's shared buffer for the stores of one register tile type: ``slots`` (``W x slots``
    stages) of ``chunk`` columns each (``None``: the whole tile in one slot), and the kernel's shared
    bytes with it."""

    alloc: SSAValue
    chunk: int | None
    slots: int
    planned: int


CHUNK_SLOTS = 2
"""Slots of a warp's ring of chunk buffers: one chunk is written while the last one is read."""


def _chunk_width(tile: RegisterType) -> int | None:
    """The columns of one chunk of ``tile`` (one box of 128-byte rows) when its fragment splits into
    whole windows of its values at every such chunk (:func:`column_window`); None otherwise. Boxes
    of narrower rows (a 32- or 64-byte swizzle) would write parts of lines, chunk after chunk: those
    tiles keep the whole-tile buffer or their direct stores."""
    rows, cols = tile.dims
    box = choose_box((rows, cols), element_bits(tile.element_type) // 8)
    frag = tile.fragment
    if frag is None or box.swizzle != 128 or box.inner >= cols:
        return None
    whole = tile_fragment((rows, cols), frag.layout)
    if all(column_window(whole, c, box.inner) is not None for c in range(0, cols, box.inner)):
        return box.inner
    return None


def _place_buffer(kernel: func.FuncOp, entry, tile: RegisterType, warps: int, threads: int) -> _Buffer | None:
    """A buffer for stores of ``tile``'s shape and element type that keeps the kernel within the
    device's shared memory: the whole tile a warp, else a ring of :data:`CHUNK_SLOTS` column chunks
    of one box each (:func:`_chunk_width`); None when neither fits (the stores stay as they are)."""
    elem_bytes = element_bits(tile.element_type) // 8
    rows, cols = tile.dims
    choices: list[int | None] = [None]
    chunk = _chunk_width(tile)
    if chunk is not None:
        choices.append(chunk)
    for chunk in choices:
        width = cols if chunk is None else chunk
        slots = 1 if chunk is None else CHUNK_SLOTS
        layout, _ = staged_layout(box_layout(choose_box((rows, width), elem_bytes), width), warps * slots,
                                  elem_bytes)
        alloc = t.AllocOp(SharedType((warps * slots, rows, width), tile.element_type, layout))
        alloc.result.name_hint = "sc"
        entry.insert_op_before(alloc, entry.first_op)
        planned = plan_shared_memory(kernel, threads).total
        if planned <= MAX_SHARED_BYTES:
            return _Buffer(alloc.result, chunk, slots, planned)
        alloc.detach()
        alloc.erase()
    return None


def _candidates(kernel: func.FuncOp) -> list[t.StoreOp]:
    varying = warp_varying(kernel)
    lanes = lane_varying(kernel)
    out = []
    for op in kernel.walk():
        if not isinstance(op, t.StoreOp) or not isinstance(op.value.type, RegisterType) or op.mask is not None:
            continue  # a masked store writes some elements: a bulk copy writes the whole box
        tile, view = op.value.type, op.dest.type
        if len(tile.dims) != 2 or not isinstance(view, GlobalType) or view.rank != 2:
            continue
        root, lead = leading_coordinates(op.dest)
        if op.value not in varying or _in_lane_branch(op, kernel, lanes):
            continue
        if any(i in lanes for i in (*op.indices, *lead)):  # lane 0's window would be every lane's
            continue
        if aligned_rows_of(op.dest) < MIN_ALIGNED_ROWS or _accessed_elsewhere(kernel, root, op):
            continue
        if choose_box(tuple(tile.dims), element_bits(tile.element_type) // 8) is None:
            continue
        out.append(op)
    return out


def _accessed_elsewhere(kernel: func.FuncOp, root: SSAValue, store: t.StoreOp) -> bool:
    """Whether an op of ``kernel`` besides ``store`` reads or writes the argument ``root`` (its
    extents, ``tile.dim``, and views of it, ``tile.subview``, do not count)."""
    for op in kernel.walk():
        if op is store or isinstance(op, t.DimOp | t.SubviewOp):
            continue
        if any(isinstance(v.type, GlobalType) and leading_coordinates(v)[0] is root for v in op.operands):
            return True
    return False


def _in_lane_branch(op: Operation, kernel: func.FuncOp, lanes: set[SSAValue]) -> bool:
    """Whether an op enclosing ``op`` runs in only some lanes of a warp (a lane-varying condition or bound)."""
    parent = op.parent_op()
    while parent is not None and parent is not kernel:
        if isinstance(parent, scf.IfOp) and parent.cond in lanes:
            return True
        if isinstance(parent, scf.ForOp) and any(v in lanes for v in (parent.lb, parent.ub, parent.step)):
            return True
        if isinstance(parent, scf.WhileOp):
            return True
        parent = parent.parent_op()
    return False


def _rewrite(store: t.StoreOp, buffer: _Buffer) -> None:
    block = store.parent_block()
    new: list[Operation] = []

    def add(op: Operation, hint: str | None = None) -> SSAValue | None:
        new.append(op)
        if hint is not None:
            op.results[0].name_hint = hint
        return op.results[0] if op.results else None

    consts: dict[int, SSAValue] = {}

    def const(v: int) -> SSAValue:
        if v not in consts:
            consts[v] = add(arith.ConstantOp(IntegerAttr(v, IndexType())), "zero" if v == 0 else None)
        return consts[v]

    zero = const(0)
    warp = add(t.WarpIdOp(), "w")
    if buffer.chunk is None:
        stage = add(t.StageOp(buffer.alloc, warp), "sw")
        add(t.BulkStoreWaitOp())
        add(t.StoreOp(store.value, stage, [zero, zero]))
        add(t.BulkStoreOp(stage, store.dest, list(store.indices)))
    else:  # column chunks through the warp's ring: wait until the slot's last store has read it
        tile: RegisterType = store.value.type
        rows, cols = tile.dims
        whole = tile_fragment((rows, cols), tile.fragment.layout)
        first = add(arith.MuliOp(warp, const(buffer.slots)), "ring")
        row, col = store.indices
        chunks = cols // buffer.chunk
        for j, c in enumerate(range(0, cols, buffer.chunk)):
            slot = first if j % buffer.slots == 0 else add(arith.AddiOp(first, const(j % buffer.slots)))
            stage = add(t.StageOp(buffer.alloc, slot), "sw")
            # the slot was last read by the store ``slots`` stores ago: this store's, or with an odd
            # count of chunks the previous one's last chunk for chunk 0 (then all must have read)
            add(t.BulkStoreWaitOp(0 if j == 0 and chunks % buffer.slots else buffer.slots - 1))
            window = column_window(whole, c, buffer.chunk)
            part = add(t.SliceOp(store.value, (0, c), RegisterType((rows, buffer.chunk), tile.element_type,
                                                                   window.tv.layout)), "part")
            add(t.StoreOp(part, stage, [zero, zero]))
            at = col if c == 0 else add(arith.AddiOp(col, const(c)), "col_part")
            add(t.BulkStoreOp(stage, store.dest, [row, at]))
    for o in new:
        block.insert_op_before(o, store)
    store.detach()
    store.erase()


__all__ = ["TileBulkStorePass", "bulk_stores"]
