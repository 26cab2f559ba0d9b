"""The tile dialect's structure ops and every ``frag`` op → NVVM builders.

Each op becomes the ops one builder of :mod:`tilec.passes.lowering.nvvm` makes (an
NVVM intrinsic, or inline asm where LLVM has none), so the mapping from a
fragment-level op to its PTX instruction lives in one place:

=========================  =================================================
``tile.thread_id x``       ``%tid.x`` (i32), zero-extended to i64 (``index``)
``tile.block_id x``        ``%ctaid.x``, likewise
``tile.lane_id``           ``%laneid``, likewise
``tile.warp_id``           ``tid.x >> 5`` (1-D blocks), else the linear id >> 5, read from
                           lane 0 by ``shfl.sync.idx`` once, at the kernel's entry (uniform)
``tile.barrier``           ``bar.sync 0`` (``bar.sync 0, N`` with ``threads N``)
``tile.setmaxnreg``        ``setmaxnreg.{inc,dec}.sync.aligned.u32``
``frag.ldmatrix``          ``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans]``
``frag.mma``               ``mma.sync`` m16n8k16 f16/bf16, m16n8k8 tf32;
                           ``fma_f32`` is ``llvm.intr.fma``
``frag.cp_async``          ``cp.async.{ca,cg}.shared.global`` (``.s`` form with
                           ``src_bytes``, inline asm with ``ignore_src``),
                           ``commit_group``, ``wait_group``
``frag.mbar_*``            ``mbarrier.init``/``fence.mbarrier_init``,
                           ``mbarrier.arrive.expect_tx``, a ``try_wait.parity`` loop
``frag.tma_load``          ``cp.async.bulk.tensor.Nd...mbarrier::complete_tx::bytes``
``frag.named_barrier_*``   ``bar.sync id, n`` / ``bar.arrive id, n``
``frag.load/store``        ``ld/st`` of 1-16 bytes, under a branch when predicated
``frag.shared``            ``llvm.mlir.addressof`` of an ``addrspace(3)`` global
``frag.shfl``              ``shfl.sync.{idx,bfly}``
``frag.pack``              ``cvt.rn.{f16x2,bf16x2}.f32`` (as an i32)
``frag.tf32``              ``cvt.rna.tf32.f32``
``frag.ex2``               ``ex2.approx.f32``
``frag.fmax/fmin``         ``llvm.intr.maxnum/minnum`` (``max/min.f32``)
=========================  =================================================

The globals of ``frag.shared`` are made by the pass (one per symbol name);
the pattern here only takes their address.
"""

from __future__ import annotations

import weakref

from xdsl.builder import Builder
from xdsl.dialects import llvm
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tilec.ir import fast
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import nvvm as N
from tilec.passes.lowering.llvm_build import bitcast, const_i32, zero
from tilec.dialects import frag
from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as tile
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.passes.lowering.arith import Lowering, TableLowering
from tilec.layout import MMA_M16N8K32_F8

_AXES = ("x", "y", "z")



def _as_index(b: Builder, value: SSAValue) -> SSAValue:
    """An i32 id as the i64 that ``index`` lowered to (ids are never negative)."""
    return b.insert(fast.cast_op(llvm.ZExtOp, value, i64)).res


def enclosing_kernel(op: Operation) -> Operation | None:
    """The kernel around ``op``: the function with a ``tile.launch``, if it is one."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent.attributes.get(LAUNCH_ATTR), LaunchAttr):
            return parent
        parent = parent.parent_op()
    return None


def enclosing_launch(op: Operation) -> LaunchAttr | None:
    """The ``tile.launch`` of the function around ``op``, if it is a kernel."""
    kernel = enclosing_kernel(op)
    return None if kernel is None else kernel.attributes[LAUNCH_ATTR]


# ---------------------------------------------------------------- structure


def _thread_id(op: tile.ThreadIdOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.thread_id(b, _AXES[op.axis.data]))]


def _block_id(op: tile.BlockIdOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.block_id(b, _AXES[op.axis.data]))]


def _grid_dim(op: tile.GridDimOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.grid_dim(b, _AXES[op.axis.data]))]


def _cluster_id(op: tile.ClusterIdOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.cluster_id(b, _AXES[op.axis.data]))]


def _cluster_count(op: tile.ClusterCountOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.cluster_count(b, _AXES[op.axis.data]))]


def _block_rank(op: tile.BlockRankOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.block_rank(b))]


def _cluster_barrier(op: tile.ClusterBarrierOp, b: Builder) -> list[SSAValue]:
    N.cluster_barrier(b)
    return []


def _lane_id(op: tile.LaneIdOp, b: Builder) -> list[SSAValue]:
    return [_as_index(b, N.lane_id(b))]


_KERNEL_WARP: weakref.WeakKeyDictionary[Operation, SSAValue] = weakref.WeakKeyDictionary()
"""Each kernel's warp index, made at its entry by its first ``tile.warp_id``: the others reuse it
(by identity; a value of the program's own that has the same name is not it)."""


def _warp_id(op: tile.WarpIdOp, b: Builder) -> list[SSAValue]:
    """In a kernel, once at its start (every lane of every warp there, as the shuffle of
    :func:`nvvm.warp_id` needs), whatever branch ``op`` is under; the kernel's other
    ``tile.warp_id`` ops take the same value. A device function may be called from a branch of some
    lanes: there ``tid / 32`` where ``op`` is, without the shuffle."""
    kernel = enclosing_kernel(op)
    launch = None if kernel is None else kernel.attributes[LAUNCH_ATTR]
    if launch is not None:
        entry = kernel.regions[0].blocks.first
        made = _KERNEL_WARP.get(kernel)
        if made is not None and isinstance(made.owner, Operation) and made.owner.parent_block() is entry:
            b.insertion_point = InsertPoint.after(made.owner)
            return [_as_index(b, made)]
        b.insertion_point = InsertPoint.at_start(entry)
    if launch is not None and launch.block_dims[1:] == (1, 1):
        warp = N.warp_id(b)
    else:
        # (tid.z * ntid.y + tid.y) * ntid.x + tid.x, then / 32.
        linear = N.thread_id(b, "z")
        for dim in ("y", "x"):
            scaled = b.insert(fast.binary_op(llvm.MulOp, linear, N.block_dim(b, dim))).res
            linear = b.insert(fast.binary_op(llvm.AddOp, scaled, N.thread_id(b, dim))).res
        warp = N.warp_id(b, linear, broadcast=launch is not None)
    if launch is not None:
        _KERNEL_WARP[kernel] = warp
    return [_as_index(b, warp)]


def _barrier(op: tile.BarrierOp, b: Builder) -> list[SSAValue]:
    N.barrier(b, None if op.threads is None else op.threads.value.data)
    return []


def _setmaxnreg(op: tile.SetMaxNRegOp, b: Builder) -> list[SSAValue]:
    N.setmaxnreg(b, op.action.data, op.regs.value.data)
    return []


# ---------------------------------------------------------------- frag


def _ldmatrix(op: frag.LdMatrixOp, b: Builder) -> list[SSAValue]:
    return N.ldmatrix(b, op.address, count=op.num.value.data, trans=op.trans is not None)


def _mma(op: frag.MmaOp, b: Builder) -> list[SSAValue]:
    name = op.atom.data.name
    a, bb, c = list(op.a), list(op.b), list(op.c)
    match name:
        case "mma_m16n8k16_f16":
            return N.mma_m16n8k16(b, a, bb, c, dtype="f16")
        case "mma_m16n8k16_bf16":
            return N.mma_m16n8k16(b, a, bb, c, dtype="bf16")
        case "mma_m16n8k8_tf32":
            return N.mma_m16n8k8_tf32(b, a, bb, c)
        case "mma_m16n8k32_s8":
            return N.mma_m16n8k32_s8(b, a, bb, c)
        case _ if name.startswith("mma_m16n8k32_e"):
            atom = op.atom.data
            return N.mma_m16n8k32_f8(b, a, bb, c, atom.a_type, atom.b_type)
        case "fma_f32":
            return [b.insert(fast.fma_op(a[0], bb[0], c[0])).res]
        case _:
            raise ValueError(f"frag.mma: no lowering for the atom {name}")


def _cp_async(op: frag.CpAsyncOp, b: Builder) -> list[SSAValue]:
    N.cp_async(
        b, op.dst, op.src, size=op.bytes.value.data, cache=op.cache.data, src_size=op.src_bytes,
        ignore_src=op.ignore_src,
    )
    return []


def _cp_async_commit(op: frag.CpAsyncCommitOp, b: Builder) -> list[SSAValue]:
    N.cp_async_commit_group(b)
    return []


def _cp_async_wait(op: frag.CpAsyncWaitOp, b: Builder) -> list[SSAValue]:
    N.cp_async_wait_group(b, op.pending.value.data)
    return []


def _mbar_init(op: frag.MbarInitOp, b: Builder) -> list[SSAValue]:
    N.mbarrier_init(b, op.bar, op.count.value.data)
    return []


def _mbar_init_fence(op: frag.MbarInitFenceOp, b: Builder) -> list[SSAValue]:
    N.mbarrier_init_fence(b)
    return []


def _fence_proxy_async(op: frag.FenceProxyAsyncOp, b: Builder) -> list[SSAValue]:
    N.fence_proxy_async(b)
    return []


def _mbar_expect_tx(op: frag.MbarExpectTxOp, b: Builder) -> list[SSAValue]:
    N.mbarrier_arrive_expect_tx(b, op.bar, op.bytes.value.data)
    return []


def _tma_load(op: frag.TmaLoadOp, b: Builder) -> list[SSAValue]:
    N.tma_load(b, op.dst, op.tensor_map, op.bar, list(op.coords),
               None if op.multicast is None else op.multicast.value.data)
    return []


def _tensormap_prefetch(op: frag.TensorMapPrefetchOp, b: Builder) -> list[SSAValue]:
    N.tensormap_prefetch(b, op.tensor_map)
    return []


def _tma_store_warp(op: frag.TmaStoreWarpOp, b: Builder) -> list[SSAValue]:
    N.tma_store_warp(b, op.src, op.tensor_map, list(op.coords))
    return []


def _bulk_commit_warp(op: frag.BulkCommitWarpOp, b: Builder) -> list[SSAValue]:
    N.bulk_commit_warp(b)
    return []


def _bulk_wait_warp(op: frag.BulkWaitWarpOp, b: Builder) -> list[SSAValue]:
    N.bulk_wait_warp(b, op.pending.value.data)
    return []


def _warp_sync(op: frag.WarpSyncOp, b: Builder) -> list[SSAValue]:
    N.warp_sync(b)
    return []


def _mbar_wait(op: frag.MbarWaitOp, b: Builder) -> list[SSAValue]:
    N.mbarrier_wait(b, op.bar, op.parity)
    return []


def _mbar_arrive_warp(op: frag.MbarArriveWarpOp, b: Builder) -> list[SSAValue]:
    N.mbarrier_arrive_warp(b, op.bar, None if op.cluster is None else op.cluster.value.data)
    return []


def _named_barrier(op: frag.NamedBarrierSyncOp | frag.NamedBarrierArriveOp, b: Builder) -> list[SSAValue]:
    N.named_barrier(b, op.id, op.count.value.data, wait=isinstance(op, frag.NamedBarrierSyncOp))
    return []


def _load(op: frag.LoadOp, b: Builder) -> list[SSAValue]:
    t = op.result.type
    size = frag.access_bytes(t)
    assert size is not None
    load = fast.load_op(op.address, t, alignment=size)
    if op.pred is None:
        return [b.insert(load).dereferenced_value]
    then, join = N.if_then(b, op.pred, [zero(b, t)])
    b.insert(load, then)
    b.insert(fast.br_op(join, [load.dereferenced_value]), then)
    return [join.args[0]]


def _store(op: frag.StoreOp, b: Builder) -> list[SSAValue]:
    size = frag.access_bytes(op.value.type)
    assert size is not None
    if op.pred is not None and size > 1:
        N.predicated_store(b, op.value, op.address, op.pred)
        return []
    if size in (4, 8, 16):
        N.vector_store(b, op.value, op.address)
        return []
    store = fast.store_op(op.value, op.address, alignment=size)
    if op.pred is None:
        b.insert(store)
        return []
    then, join = N.if_then(b, op.pred, [])
    b.insert(store, then)
    b.insert(fast.br_op(join), then)
    return []


def _red(op: frag.RedOp, b: Builder) -> list[SSAValue]:
    N.red_global(b, op.kind.data, op.value, op.address, op.pred)
    return []


def _atom(op: frag.AtomOp, b: Builder) -> list[SSAValue]:
    return [N.atom_global(b, op.kind.data, op.value, op.address, op.cmp, op.pred)]


def _shared(op: frag.SharedOp, b: Builder) -> list[SSAValue]:
    return [K.shared_address(b, op.sym_name.data)]


def _shfl(op: frag.ShflOp, b: Builder) -> list[SSAValue]:
    return [N.shfl_sync(b, op.value, op.lane, mode=op.kind.data)]


def _pack(op: frag.PackOp, b: Builder) -> list[SSAValue]:
    pack = N.pack_f16x2 if op.kind.data == "f16x2" else N.pack_bf16x2
    return [bitcast(b, pack(b, op.lo, op.hi), i32)]


def _tf32(op: frag.ToTF32Op, b: Builder) -> list[SSAValue]:
    return [N.round_tf32(b, op.input)]


def _ex2(op: frag.Ex2Op, b: Builder) -> list[SSAValue]:
    return [N.ex2_approx(b, op.input)]


def _fmax(op: frag.FMaxOp, b: Builder) -> list[SSAValue]:
    return [N.fmax(b, op.lhs, op.rhs)]


def _fmin(op: frag.FMinOp, b: Builder) -> list[SSAValue]:
    return [N.fmin(b, op.lhs, op.rhs)]


def _wgmma_desc(op: frag.WgmmaDescOp, b: Builder) -> list[SSAValue]:
    return [N.wgmma_desc(b, op.base, op.high.value.data)]


def _wgmma_fence(op: frag.WgmmaFenceOp, b: Builder) -> list[SSAValue]:
    N.wgmma_fence(b)
    return []


def _wgmma(op: frag.WgmmaOp, b: Builder) -> list[SSAValue]:
    return N.wgmma(b, op.desc_a, op.desc_b, list(op.c), n=op.n.value.data, dtype=op.dtype.data,
                   trans_a=op.trans_a is not None, trans_b=op.trans_b is not None)


def _wgmma_rs(op: frag.WgmmaRsOp, b: Builder) -> list[SSAValue]:
    return N.wgmma_rs(b, list(op.a), op.desc_b, list(op.c), n=op.n.value.data, dtype=op.dtype.data,
                      trans_b=op.trans_b is not None)


def _wgmma_commit(op: frag.WgmmaCommitOp, b: Builder) -> list[SSAValue]:
    N.wgmma_commit(b)
    return []


def _wgmma_wait(op: frag.WgmmaWaitOp, b: Builder) -> list[SSAValue]:
    return N.wgmma_wait(b, list(op.c), op.pending.value.data)


LOWERINGS: dict[type[Operation], Lowering] = {
    tile.ThreadIdOp: _thread_id,
    tile.BlockIdOp: _block_id,
    tile.GridDimOp: _grid_dim,
    tile.ClusterIdOp: _cluster_id,
    tile.ClusterCountOp: _cluster_count,
    tile.BlockRankOp: _block_rank,
    tile.ClusterBarrierOp: _cluster_barrier,
    tile.LaneIdOp: _lane_id,
    tile.WarpIdOp: _warp_id,
    tile.BarrierOp: _barrier,
    tile.SetMaxNRegOp: _setmaxnreg,
    frag.LdMatrixOp: _ldmatrix,
    frag.MmaOp: _mma,
    frag.CpAsyncOp: _cp_async,
    frag.CpAsyncCommitOp: _cp_async_commit,
    frag.CpAsyncWaitOp: _cp_async_wait,
    frag.MbarInitOp: _mbar_init,
    frag.MbarInitFenceOp: _mbar_init_fence,
    frag.FenceProxyAsyncOp: _fence_proxy_async,
    frag.MbarExpectTxOp: _mbar_expect_tx,
    frag.TmaLoadOp: _tma_load,
    frag.TensorMapPrefetchOp: _tensormap_prefetch,
    frag.TmaStoreWarpOp: _tma_store_warp,
    frag.BulkCommitWarpOp: _bulk_commit_warp,
    frag.BulkWaitWarpOp: _bulk_wait_warp,
    frag.WarpSyncOp: _warp_sync,
    frag.MbarWaitOp: _mbar_wait,
    frag.MbarArriveWarpOp: _mbar_arrive_warp,
    frag.NamedBarrierSyncOp: _named_barrier,
    frag.NamedBarrierArriveOp: _named_barrier,
    frag.LoadOp: _load,
    frag.StoreOp: _store,
    frag.RedOp: _red,
    frag.AtomOp: _atom,
    frag.SharedOp: _shared,
    frag.ShflOp: _shfl,
    frag.PackOp: _pack,
    frag.ToTF32Op: _tf32,
    frag.Ex2Op: _ex2,
    frag.FMaxOp: _fmax,
    frag.FMinOp: _fmin,
    frag.WgmmaDescOp: _wgmma_desc,
    frag.WgmmaFenceOp: _wgmma_fence,
    frag.WgmmaOp: _wgmma,
    frag.WgmmaRsOp: _wgmma_rs,
    frag.WgmmaCommitOp: _wgmma_commit,
    frag.WgmmaWaitOp: _wgmma_wait,
}
"""Lowering of each tile structure op and each frag op."""

SUPPORTED_MMA_ATOMS = ("mma_m16n8k16_f16", "mma_m16n8k16_bf16", "mma_m16n8k8_tf32", "mma_m16n8k32_s8",
                       *(atom.name for atom in MMA_M16N8K32_F8), "fma_f32")


class GPUToLLVM(TableLowering):
    """Tile structure ops and frag ops → llvm ops through the NVVM builders."""

    def __init__(self) -> None:
        super().__init__(LOWERINGS)


__all__ = ["LAUNCH_ATTR", "LOWERINGS", "SUPPORTED_MMA_ATOMS", "GPUToLLVM", "enclosing_kernel", "enclosing_launch"]
