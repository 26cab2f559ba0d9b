"""Direct constructors of the `frag` ops, and of the few `tile` ops, that tile-distribute makes.

Each makes, through `tilec.ir.fast.create`, the very op that the named
`__init__` of `tilec.dialects.frag` (or `tilec.dialects.tile`) makes (same
arguments, operands, result types and properties in the same order);
`tests/ir/test_fast.py` checks each one against it. Why that is faster, what
neither way checks, and the rule that the lowering passes build every op
with these constructors and those of `tilec.ir.fast`: see `tilec.ir.fast`.
They sit here, with the dialects, because `tilec.ir` is below them and does
not import them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type, IndexType, IntAttr, StringAttr, UnitAttr, i32, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, SSAValue

from tilec.dialects import frag
from tilec.dialects.tile import ops as tile
from tilec.ir.fast import create, index_attr, segments
from tilec.layout import MMAAtom

_F32 = Float32Type()
_INDEX = IndexType()
_SHARED_PTR = LLVMPointerType(IntAttr(frag.SHARED_SPACE))


@functools.cache
def _mma_atom(atom: MMAAtom) -> frag.MMAAtomAttr:
    return frag.MMAAtomAttr(atom)


@functools.cache
def _string(text: str) -> StringAttr:
    return StringAttr(text)


def frag_mma(atom: MMAAtom, a: Sequence[SSAValue], b: Sequence[SSAValue], c: Sequence[SSAValue]) -> frag.MmaOp:
    """`frag.MmaOp(atom, a, b, c)`."""
    return create(
        frag.MmaOp,
        operands=(*a, *b, *c),
        result_types=(frag.accumulator_type(atom),) * len(c),
        properties={"atom": _mma_atom(atom), "operandSegmentSizes": segments((len(a), len(b), len(c)))},
    )


def frag_cp_async(dst: SSAValue, src: SSAValue, nbytes: int = 16, src_bytes: SSAValue | None = None,
                  cache: str | None = None, ignore_src: SSAValue | None = None) -> frag.CpAsyncOp:
    """`frag.CpAsyncOp(dst, src, nbytes, src_bytes, cache, ignore_src)`."""
    optional = [v for v in (src_bytes, ignore_src) if v is not None]
    sizes = (1, 1, int(src_bytes is not None), int(ignore_src is not None))
    return create(
        frag.CpAsyncOp,
        operands=(dst, src, *optional),
        properties={"bytes": index_attr(nbytes, i64), "cache": _string(cache or ("cg" if nbytes == 16 else "ca")),
                    "operandSegmentSizes": segments(sizes)},
    )


def frag_ldmatrix(address: SSAValue, num: int = 4, trans: bool = False) -> frag.LdMatrixOp:
    """`frag.LdMatrixOp(address, num, trans)`."""
    properties: dict[str, Attribute] = {"num": index_attr(num, i64)}
    if trans:
        properties["trans"] = UnitAttr()
    return create(frag.LdMatrixOp, operands=(address,), result_types=(i32,) * num, properties=properties)


def frag_load(address: SSAValue, result_type: Attribute, pred: SSAValue | None = None) -> frag.LoadOp:
    """`frag.LoadOp(address, result_type, pred)`."""
    return create(frag.LoadOp, operands=(address,) if pred is None else (address, pred), result_types=(result_type,))


def frag_store(value: SSAValue, address: SSAValue, pred: SSAValue | None = None) -> frag.StoreOp:
    """`frag.StoreOp(value, address, pred)`."""
    return create(frag.StoreOp, operands=(value, address) if pred is None else (value, address, pred))


def frag_red(kind: str, value: SSAValue, address: SSAValue, pred: SSAValue | None = None) -> frag.RedOp:
    """`frag.RedOp(kind, value, address, pred)`."""
    return create(frag.RedOp, operands=(value, address) if pred is None else (value, address, pred),
                  properties={"kind": _string(kind)})


def frag_atom(kind: str, value: SSAValue, address: SSAValue, cmp: SSAValue | None = None,
              pred: SSAValue | None = None) -> frag.AtomOp:
    """`frag.AtomOp(kind, value, address, cmp, pred)`."""
    extra = [x for x in (cmp, pred) if x is not None]
    return create(frag.AtomOp, operands=(value, address, *extra), result_types=(value.type,),
                  properties={"kind": _string(kind),
                              "operandSegmentSizes": segments((1, 1, int(cmp is not None), int(pred is not None)))})


def frag_pack(kind: str, lo: SSAValue, hi: SSAValue) -> frag.PackOp:
    """`frag.PackOp(kind, lo, hi)`."""
    return create(frag.PackOp, operands=(lo, hi), result_types=(i32,), properties={"kind": _string(kind)})


def frag_shfl(kind: str, x: SSAValue, lane: SSAValue) -> frag.ShflOp:
    """`frag.ShflOp(kind, x, lane)`: ``idx`` or ``bfly``."""
    return create(frag.ShflOp, operands=(x, lane), result_types=(x.type,), properties={"kind": _string(kind)})


def frag_cp_async_commit() -> frag.CpAsyncCommitOp:
    """`frag.CpAsyncCommitOp()`."""
    return create(frag.CpAsyncCommitOp)


def frag_cp_async_wait(pending: int = 0) -> frag.CpAsyncWaitOp:
    """`frag.CpAsyncWaitOp(pending)`."""
    return create(frag.CpAsyncWaitOp, properties={"pending": index_attr(pending, i64)})


def frag_shared(name: str, nbytes: int, align: int = 16) -> frag.SharedOp:
    """`frag.SharedOp(name, nbytes, align)`."""
    return create(
        frag.SharedOp,
        result_types=(_SHARED_PTR,),
        properties={"sym_name": StringAttr(name), "bytes": index_attr(nbytes, i64), "align": index_attr(align, i64)},
    )


def frag_tf32(value: SSAValue) -> frag.ToTF32Op:
    """`frag.ToTF32Op(value)`."""
    return create(frag.ToTF32Op, operands=(value,), result_types=(i32,))


# ------------------------------------------------------------ bulk tensor copies (sm_90)


def frag_mbar_init(bar: SSAValue, count: int = 1) -> frag.MbarInitOp:
    """`frag.MbarInitOp(bar, count)`."""
    return create(frag.MbarInitOp, operands=(bar,), properties={"count": index_attr(count, i64)})


def frag_mbar_init_fence() -> frag.MbarInitFenceOp:
    """`frag.MbarInitFenceOp()`."""
    return create(frag.MbarInitFenceOp)


def frag_fence_proxy_async() -> frag.FenceProxyAsyncOp:
    """`frag.FenceProxyAsyncOp()`."""
    return create(frag.FenceProxyAsyncOp)


def frag_mbar_expect_tx(bar: SSAValue, nbytes: int) -> frag.MbarExpectTxOp:
    """`frag.MbarExpectTxOp(bar, nbytes)`."""
    return create(frag.MbarExpectTxOp, operands=(bar,), properties={"bytes": index_attr(nbytes, i64)})


def frag_tma_load(dst: SSAValue, tensor_map: SSAValue, bar: SSAValue, coords: Sequence[SSAValue],
                  multicast: int | None = None) -> frag.TmaLoadOp:
    """`frag.TmaLoadOp(dst, tensor_map, bar, coords, multicast)`."""
    properties = {} if multicast is None else {"multicast": index_attr(multicast, i64)}
    return create(frag.TmaLoadOp, operands=(dst, tensor_map, bar, *coords), properties=properties)


def frag_tensormap_prefetch(tensor_map: SSAValue) -> frag.TensorMapPrefetchOp:
    """`frag.TensorMapPrefetchOp(tensor_map)`."""
    return create(frag.TensorMapPrefetchOp, operands=(tensor_map,))


def frag_tma_store_warp(src: SSAValue, tensor_map: SSAValue, coords: Sequence[SSAValue]) -> frag.TmaStoreWarpOp:
    """`frag.TmaStoreWarpOp(src, tensor_map, coords)`."""
    return create(frag.TmaStoreWarpOp, operands=(src, tensor_map, *coords))


def frag_bulk_commit_warp() -> frag.BulkCommitWarpOp:
    """`frag.BulkCommitWarpOp()`."""
    return create(frag.BulkCommitWarpOp)


def frag_bulk_wait_warp(pending: int = 0) -> frag.BulkWaitWarpOp:
    """`frag.BulkWaitWarpOp(pending)`."""
    return create(frag.BulkWaitWarpOp, properties={"pending": index_attr(pending, i64)})


def frag_warp_sync() -> frag.WarpSyncOp:
    """`frag.WarpSyncOp()`."""
    return create(frag.WarpSyncOp)


def frag_mbar_wait(bar: SSAValue, parity: SSAValue) -> frag.MbarWaitOp:
    """`frag.MbarWaitOp(bar, parity)`."""
    return create(frag.MbarWaitOp, operands=(bar, parity))


def frag_mbar_arrive_warp(bar: SSAValue, cluster: int | None = None) -> frag.MbarArriveWarpOp:
    """`frag.MbarArriveWarpOp(bar, cluster)`."""
    properties = {} if cluster is None else {"cluster": index_attr(cluster, i64)}
    return create(frag.MbarArriveWarpOp, operands=(bar,), properties=properties)


def frag_named_barrier(barrier: SSAValue, count: int, *, wait: bool) -> frag.NamedBarrierSyncOp | frag.NamedBarrierArriveOp:
    """`frag.NamedBarrierSyncOp(barrier, count)` (``wait``) or `frag.NamedBarrierArriveOp(barrier, count)`."""
    cls = frag.NamedBarrierSyncOp if wait else frag.NamedBarrierArriveOp
    return create(cls, operands=(barrier,), properties={"count": index_attr(count, i64)})


# ------------------------------------------------------------ warpgroup MMA (sm_90a)


def frag_wgmma_desc(base: SSAValue, high: int) -> frag.WgmmaDescOp:
    """`frag.WgmmaDescOp(base, high)`."""
    return create(frag.WgmmaDescOp, operands=(base,), result_types=(i64,), properties={"high": index_attr(high, i64)})


def frag_wgmma_fence() -> frag.WgmmaFenceOp:
    """`frag.WgmmaFenceOp()`."""
    return create(frag.WgmmaFenceOp)


def frag_wgmma(desc_a: SSAValue, desc_b: SSAValue, c: Sequence[SSAValue], *, n: int, dtype: str,
               trans_a: bool = False, trans_b: bool = False) -> frag.WgmmaOp:
    """`frag.WgmmaOp(desc_a, desc_b, c, n=n, dtype=dtype, trans_a=trans_a, trans_b=trans_b)`."""
    properties: dict[str, Attribute] = {"n": index_attr(n, i64), "dtype": _string(dtype)}
    if trans_a:
        properties["trans_a"] = UnitAttr()
    if trans_b:
        properties["trans_b"] = UnitAttr()
    return create(frag.WgmmaOp, operands=(desc_a, desc_b, *c), result_types=tuple(v.type for v in c),
                  properties=properties)


def frag_wgmma_rs(a: Sequence[SSAValue], desc_b: SSAValue, c: Sequence[SSAValue], *, n: int, dtype: str,
                  trans_b: bool = False) -> frag.WgmmaRsOp:
    """`frag.WgmmaRsOp(a, desc_b, c, n=n, dtype=dtype, trans_b=trans_b)`."""
    properties: dict[str, Attribute] = {"n": index_attr(n, i64), "dtype": _string(dtype)}
    if trans_b:
        properties["trans_b"] = UnitAttr()
    properties["operandSegmentSizes"] = segments((len(a), 1, len(c)))
    return create(frag.WgmmaRsOp, operands=(*a, desc_b, *c), result_types=(_F32,) * len(c), properties=properties)


def frag_wgmma_commit() -> frag.WgmmaCommitOp:
    """`frag.WgmmaCommitOp()`."""
    return create(frag.WgmmaCommitOp)


def frag_wgmma_wait(c: Sequence[SSAValue], pending: int) -> frag.WgmmaWaitOp:
    """`frag.WgmmaWaitOp(c, pending)`."""
    return create(frag.WgmmaWaitOp, operands=tuple(c), result_types=tuple(v.type for v in c),
                  properties={"pending": index_attr(pending, i64)})


# ------------------------------------------------------------ the tile ops tile-distribute keeps

_AXES = ("x", "y", "z")


@functools.cache
def _axis(index: int) -> IntAttr:
    return IntAttr(index)


def tile_thread_id(axis: str = "x") -> tile.ThreadIdOp:
    """`tile.ThreadIdOp(axis)`."""
    return create(tile.ThreadIdOp, result_types=(_INDEX,), properties={"axis": _axis(_AXES.index(axis))})


def tile_warp_id() -> tile.WarpIdOp:
    """`tile.WarpIdOp()`."""
    return create(tile.WarpIdOp, result_types=(_INDEX,))


def tile_lane_id() -> tile.LaneIdOp:
    """`tile.LaneIdOp()`."""
    return create(tile.LaneIdOp, result_types=(_INDEX,))


def tile_barrier() -> tile.BarrierOp:
    """`tile.BarrierOp()`."""
    return create(tile.BarrierOp)


__all__ = [
    "frag_cp_async",
    "frag_cp_async_commit",
    "frag_cp_async_wait",
    "frag_ldmatrix",
    "frag_load",
    "frag_mbar_arrive_warp",
    "frag_mbar_expect_tx",
    "frag_mbar_init",
    "frag_fence_proxy_async",
    "frag_tma_store_warp",
    "frag_bulk_commit_warp",
    "frag_bulk_wait_warp",
    "frag_warp_sync",
    "frag_mbar_init_fence",
    "frag_mbar_wait",
    "frag_mma",
    "frag_pack",
    "frag_shared",
    "frag_store",
    "frag_tf32",
    "frag_named_barrier",
    "frag_tma_load",
    "frag_tensormap_prefetch",
    "frag_wgmma",
    "frag_wgmma_commit",
    "frag_wgmma_desc",
    "frag_wgmma_fence",
    "frag_wgmma_rs",
    "frag_wgmma_wait",
    "tile_barrier",
    "tile_lane_id",
    "tile_warp_id",
    "tile_thread_id",
]
