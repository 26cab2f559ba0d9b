"""The fragment dialect: per-thread registers and the GPU's own operations on them.

This is the level after register allocation. A register tile has become the
registers each lane holds (``i32`` pairs of 16-bit values, ``f32``), shared
and global memory are ``!llvm.ptr<3>`` / ``!llvm.ptr<1>`` addresses (address
arithmetic is ``llvm.getelementptr``), and each op here is one PTX
instruction family: ``ldmatrix``, ``mma.sync``, ``cp.async`` and its groups,
sm_90's bulk tensor copy and its transaction barriers (``mbarrier``),
predicated vector loads and stores, ``shfl.sync``, packing conversions and
fast math. Kernel structure (ids, ``tile.barrier``) stays in the tile dialect;
loops and integer math are ``scf`` and ``arith``. ``tile-to-llvm`` lowers each
op to one NVVM intrinsic or inline-asm instruction.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    VectorType,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    EqAttrConstraint,
    VarConstraint,
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from tilec.dialects.tile.attributes import MMAAtomAttr
from tilec.layout import MMAAtom

GLOBAL_SPACE = 1
SHARED_SPACE = 3


def _fail(op: IRDLOperation, message: str) -> None:
    raise VerifyException(f"'{op.name}' {message}")


def _int(value: int) -> IntegerAttr:
    return IntegerAttr(value, 64)


def _space(t: Attribute) -> int | None:
    if not isinstance(t, LLVMPointerType):
        return None
    space = t.addr_space
    return space.data if isinstance(space, IntAttr) else 0  # no address space: generic (0)


def _expect_pointer(op: IRDLOperation, what: str, value: SSAValue, *spaces: int) -> None:
    if _space(value.type) not in spaces:
        names = " or ".join(f"!llvm.ptr<{s}>" for s in spaces)
        _fail(op, f"{what} must be a {names} address, got {value.type}")


def access_bytes(t: Attribute) -> int | None:
    """Bytes moved by one load/store of type ``t`` (scalars and vectors of them)."""
    if isinstance(t, VectorType):
        inner = access_bytes(t.element_type)
        return None if inner is None else inner * t.element_count()
    if isinstance(t, IntegerType):
        return t.width.data // 8 if t.width.data in (8, 16, 32, 64) else None
    if isinstance(t, Float8E4M3FNType | Float8E5M2Type):
        return 1
    if isinstance(t, Float16Type | BFloat16Type):
        return 2
    if isinstance(t, Float32Type):
        return 4
    if isinstance(t, Float64Type):
        return 8
    return None


def mma_register_counts(atom: MMAAtom) -> tuple[int, int, int]:
    """Registers per thread for A, B and C of ``atom`` (16-bit values pair up in one register, 8-bit ones
    four to a register)."""
    per = {"f16": 2, "bf16": 2, "tf32": 1, "f32": 1, "s8": 4, "e4m3": 4, "e5m2": 4, "s32": 1}
    return (
        atom.a.num_values // per[atom.a_type],
        atom.b.num_values // per[atom.b_type],
        atom.c.num_values,
    )


def accumulator_type(atom: MMAAtom) -> Attribute:
    """The register type of ``atom``'s C and D: i32 for integer sums (s32), else f32."""
    return i32 if atom.c_type == "s32" else f32


@irdl_op_definition
class LdMatrixOp(IRDLOperation):
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``: one i32 per matrix per lane."""

    name = "frag.ldmatrix"

    address = operand_def(LLVMPointerType)
    num = prop_def(IntegerAttr[I64])
    trans = opt_prop_def(UnitAttr)
    results_ = var_result_def(i32)

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$address `x` $num (`trans` $trans^)? attr-dict `:` type($address) `->` type($results_)"

    def __init__(self, address: SSAValue, num: int = 4, trans: bool = False):
        props: dict[str, Attribute] = {"num": _int(num)}
        if trans:
            props["trans"] = UnitAttr()
        super().__init__(operands=[address], properties=props, result_types=[[i32] * num])

    def verify_(self) -> None:
        n = self.num.value.data
        if n not in (1, 2, 4):
            _fail(self, f"loads x1, x2 or x4 matrices, not x{n}")
        if len(self.results_) != n:
            _fail(self, f"x{n} gives {n} registers per lane, but has {len(self.results_)} results")
        _expect_pointer(self, "address", self.address, SHARED_SPACE)


@irdl_op_definition
class MmaOp(IRDLOperation):
    """One ``mma.sync`` (or, for ``fma_f32``, one FFMA): ``d = a·b + c`` on a lane's registers (f32
    accumulators; i32 for the 8-bit integer atom)."""

    name = "frag.mma"

    ACC: ClassVar = VarConstraint("ACC", EqAttrConstraint(f32) | EqAttrConstraint(i32))
    a = var_operand_def()
    b = var_operand_def()
    c = var_operand_def(ACC)
    atom = prop_def(MMAAtomAttr)
    d = var_result_def(ACC)

    traits = traits_def(Pure())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$atom `(` $a `)` `(` $b `)` `(` $c `)` attr-dict `:` `(` type($a) `)` `(` type($b) `)` `->` type($d)"
    )

    def __init__(self, atom: MMAAtom, a, b, c):
        super().__init__(
            operands=[a, b, c], properties={"atom": MMAAtomAttr(atom)},
            result_types=[[accumulator_type(atom)] * len(c)]
        )

    def verify_(self) -> None:
        atom = self.atom.data
        na, nb, nc = mma_register_counts(atom)
        for what, values, n in (("A", self.a, na), ("B", self.b, nb), ("C", self.c, nc)):
            if len(values) != n:
                _fail(self, f"{atom.name} takes {n} {what} registers per lane, got {len(values)}")
        if len(self.d) != nc:
            _fail(self, f"{atom.name} gives {nc} result registers per lane, got {len(self.d)}")
        reg = f32 if atom.name == "fma_f32" else i32
        for what, values in (("A", self.a), ("B", self.b)):
            for v in values:
                if v.type != reg:
                    _fail(self, f"{atom.name} {what} registers are {reg}, got {v.type}")
        acc = accumulator_type(atom)
        for what, values in (("C", self.c), ("result", self.d)):
            for v in values:
                if v.type != acc:
                    _fail(self, f"{atom.name} {what} registers are {acc}, got {v.type}")


@irdl_op_definition
class CpAsyncOp(IRDLOperation):
    """``cp.async.{ca,cg}.shared.global [dst], [src], bytes[, src_bytes | ignore_src]``.

    With ``src_bytes`` only that many bytes are read and the rest of the
    destination is zero-filled: how ragged tiles read zeros past the edge.
    With ``ignore_src`` (an ``i1``) nothing is read where it is true and the
    whole destination is zero-filled: the all-or-nothing copy of a vector
    that is wholly inside or wholly outside, which ptxas turns into the
    copy's own predicate (a ``src_bytes`` of ``select(p, 16, 0)`` costs a
    select and a compare per copy once LLVM has merged the selects).
    """

    name = "frag.cp_async"

    dst = operand_def(LLVMPointerType)
    src = operand_def(LLVMPointerType)
    src_bytes = opt_operand_def(i32)
    ignore_src = opt_operand_def(IntegerType(1))
    bytes = prop_def(IntegerAttr[I64])
    cache = prop_def(StringAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = (
        "$cache $dst `,` $src `,` $bytes (`,` $src_bytes^)? (`ignore_src` $ignore_src^)? attr-dict "
        "`:` type($dst) `,` type($src)"
    )

    def __init__(self, dst: SSAValue, src: SSAValue, nbytes: int = 16, src_bytes: SSAValue | None = None,
                 cache: str | None = None, ignore_src: SSAValue | None = None):
        cache = cache or ("cg" if nbytes == 16 else "ca")
        super().__init__(
            operands=[dst, src, [] if src_bytes is None else [src_bytes], [] if ignore_src is None else [ignore_src]],
            properties={"bytes": _int(nbytes), "cache": StringAttr(cache)},
        )

    def verify_(self) -> None:
        n, cache = self.bytes.value.data, self.cache.data
        if n not in (4, 8, 16):
            _fail(self, f"copies 4, 8 or 16 bytes, not {n}")
        if cache not in ("ca", "cg"):
            _fail(self, f"cache mode must be ca or cg, got {cache}")
        if cache == "cg" and n != 16:
            _fail(self, f"cp.async.cg copies exactly 16 bytes, not {n}")
        if self.src_bytes is not None and self.ignore_src is not None:
            _fail(self, "takes src_bytes or ignore_src, not both")
        _expect_pointer(self, "destination", self.dst, SHARED_SPACE)
        _expect_pointer(self, "source", self.src, GLOBAL_SPACE)


@irdl_op_definition
class CpAsyncCommitOp(IRDLOperation):
    """``cp.async.commit_group``."""

    name = "frag.cp_async_commit"

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


class _GroupWaitOp(IRDLOperation):
    """A wait until at most ``pending`` (0 .. 7) of the issuing thread's async groups are in flight."""

    pending = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int = 0):
        super().__init__(properties={"pending": _int(pending)})

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            _fail(self, f"pending must be between 0 and 7, got {self.pending.value.data}")


@irdl_op_definition
class CpAsyncWaitOp(_GroupWaitOp):
    """``cp.async.wait_group pending``."""

    name = "frag.cp_async_wait"


# ------------------------------------------------------------ bulk tensor copies (sm_90)

GENERIC_SPACE = 0


@irdl_op_definition
class MbarInitOp(IRDLOperation):
    """``mbarrier.init.shared.b64 [bar], count``: a transaction barrier expecting ``count`` arrivals per phase."""

    name = "frag.mbar_init"

    bar = operand_def(LLVMPointerType)
    count = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$bar `,` $count attr-dict `:` type($bar)"

    def __init__(self, bar: SSAValue, count: int = 1):
        super().__init__(operands=[bar], properties={"count": _int(count)})

    def verify_(self) -> None:
        if not 0 < self.count.value.data < 1 << 20:
            _fail(self, f"arrival count must be 1 .. 2^20-1, got {self.count.value.data}")
        _expect_pointer(self, "barrier", self.bar, SHARED_SPACE)


@irdl_op_definition
class MbarInitFenceOp(IRDLOperation):
    """``fence.mbarrier_init`` and ``fence.proxy.async.shared::cta``: initialised barriers are
    visible to the bulk copies (the async proxy) that complete on them."""

    name = "frag.mbar_init_fence"

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class FenceProxyAsyncOp(IRDLOperation):
    """``fence.proxy.async.shared::cta``: this thread's writes to shared memory through the generic
    proxy (``st.shared``, ``cp.async``) become visible to the async proxy, which wgmma's descriptors
    read through; issued before the barrier that hands the writes to the warpgroups."""

    name = "frag.fence_proxy_async"

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class MbarExpectTxOp(IRDLOperation):
    """``mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes``: arrive, announcing the phase's bytes."""

    name = "frag.mbar_expect_tx"

    bar = operand_def(LLVMPointerType)
    bytes = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "$bar `,` $bytes attr-dict `:` type($bar)"

    def __init__(self, bar: SSAValue, nbytes: int):
        super().__init__(operands=[bar], properties={"bytes": _int(nbytes)})

    def verify_(self) -> None:
        if not 0 < self.bytes.value.data < 1 << 20:
            _fail(self, f"transaction bytes must be 1 .. 2^20-1, got {self.bytes.value.data}")
        _expect_pointer(self, "barrier", self.bar, SHARED_SPACE)


@irdl_op_definition
class TmaLoadOp(IRDLOperation):
    """``cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes
    [dst], [tensor_map, {coords}], [bar]``: one box of the tensor map's tensor at ``coords``
    (i32, innermost dimension first) into shared memory, completing on ``bar``.

    ``multicast = M`` (``.multicast::cluster``, ``M`` a 16-bit mask of block ranks): the box lands at
    ``dst``'s offset in the shared memory of every block of the thread-block cluster whose rank is
    in ``M``, completing on the barrier at ``bar``'s offset in each of them."""

    name = "frag.tma_load"

    dst = operand_def(LLVMPointerType)
    tensor_map = operand_def(LLVMPointerType)
    bar = operand_def(LLVMPointerType)
    coords = var_operand_def(i32)
    multicast = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$dst `,` $tensor_map `[` $coords `]` `,` $bar (`multicast` $multicast^)? attr-dict "
        "`:` type($dst) `,` type($tensor_map) `,` type($bar)"
    )

    def __init__(self, dst: SSAValue, tensor_map: SSAValue, bar: SSAValue, coords, multicast: int | None = None):
        super().__init__(operands=[dst, tensor_map, bar, coords],
                         properties={} if multicast is None else {"multicast": _int(multicast)})

    def verify_(self) -> None:
        if not 1 <= len(self.coords) <= 5:
            _fail(self, f"takes 1 .. 5 coordinates, got {len(self.coords)}")
        if self.multicast is not None and not 0 < self.multicast.value.data < 1 << 16:
            _fail(self, f"multicast is a mask of the cluster's block ranks, 1 .. 2^16-1, got {self.multicast.value.data}")
        _expect_pointer(self, "destination", self.dst, SHARED_SPACE)
        _expect_pointer(self, "barrier", self.bar, SHARED_SPACE)
        _expect_pointer(self, "tensor map", self.tensor_map, GENERIC_SPACE)


@irdl_op_definition
class TensorMapPrefetchOp(IRDLOperation):
    """``prefetch.tensormap [tensor_map]``: bring a tensor map (a kernel parameter) into the
    descriptor cache, so that the first bulk copy through it does not wait for the fetch. A hint:
    no effect on what any copy reads or writes. Declares no memory effect so that nothing
    removes it as unused."""

    name = "frag.tensormap_prefetch"

    tensor_map = operand_def(LLVMPointerType)

    assembly_format = "$tensor_map attr-dict `:` type($tensor_map)"

    def __init__(self, tensor_map: SSAValue):
        super().__init__(operands=[tensor_map])

    def verify_(self) -> None:
        _expect_pointer(self, "tensor map", self.tensor_map, GENERIC_SPACE)


@irdl_op_definition
class TmaStoreWarpOp(IRDLOperation):
    """``cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [tensor_map, {coords}], [src]``
    by the executing warp's lane 0: the box at ``src`` (shared memory, in the tensor map's layout)
    to the tensor at ``coords`` (i32, innermost dimension first), the parts past its edges not
    written. Joins lane 0's open bulk group (:class:`BulkCommitWarpOp`). Warp-collective."""

    name = "frag.tma_store_warp"

    src = operand_def(LLVMPointerType)
    tensor_map = operand_def(LLVMPointerType)
    coords = var_operand_def(i32)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$src `,` $tensor_map `[` $coords `]` attr-dict `:` type($src) `,` type($tensor_map)"

    def __init__(self, src: SSAValue, tensor_map: SSAValue, coords):
        super().__init__(operands=[src, tensor_map, coords])

    def verify_(self) -> None:
        if not 1 <= len(self.coords) <= 5:
            _fail(self, f"takes 1 .. 5 coordinates, got {len(self.coords)}")
        _expect_pointer(self, "source", self.src, SHARED_SPACE)
        _expect_pointer(self, "tensor map", self.tensor_map, GENERIC_SPACE)


@irdl_op_definition
class BulkCommitWarpOp(IRDLOperation):
    """``cp.async.bulk.commit_group`` by the executing warp's lane 0: its bulk stores so far form a
    group that :class:`BulkWaitWarpOp` waits for. Warp-collective."""

    name = "frag.bulk_commit_warp"

    traits = traits_def(MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class BulkWaitWarpOp(_GroupWaitOp):
    """``cp.async.bulk.wait_group.read pending`` by the executing warp's lane 0, then
    ``bar.warp.sync``: at most ``pending`` of the warp's bulk groups still read shared memory, and
    the whole warp may write what the others read. Warp-collective."""

    name = "frag.bulk_wait_warp"


@irdl_op_definition
class WarpSyncOp(IRDLOperation):
    """``bar.warp.sync -1``: the warp's lanes meet, their earlier memory accesses ordered before
    what any of them does next (a lane's shared writes, then lane 0's bulk store of them)."""

    name = "frag.warp_sync"

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class MbarWaitOp(IRDLOperation):
    """``mbarrier.try_wait.parity`` until it succeeds: the phase of parity ``parity`` (i32) has completed."""

    name = "frag.mbar_wait"

    bar = operand_def(LLVMPointerType)
    parity = operand_def(i32)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$bar `,` $parity attr-dict `:` type($bar)"

    def __init__(self, bar: SSAValue, parity: SSAValue):
        super().__init__(operands=[bar, parity])

    def verify_(self) -> None:
        _expect_pointer(self, "barrier", self.bar, SHARED_SPACE)


@irdl_op_definition
class MbarArriveWarpOp(IRDLOperation):
    """The warp arrives once on ``bar``: ``bar.warp.sync`` (its lanes' earlier memory accesses are
    ordered before lane 0's), then ``mbarrier.arrive`` (release) by lane 0. Warp-collective.

    ``cluster = C``: the warp arrives once on the barrier at ``bar``'s offset in each block of ranks
    0 .. C-1 of the thread-block cluster instead (lane ``r`` signals rank ``r``: ``mapa``, then
    ``mbarrier.arrive.shared::cluster``)."""

    name = "frag.mbar_arrive_warp"

    bar = operand_def(LLVMPointerType)
    cluster = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$bar (`cluster` $cluster^)? attr-dict `:` type($bar)"

    def __init__(self, bar: SSAValue, cluster: int | None = None):
        super().__init__(operands=[bar], properties={} if cluster is None else {"cluster": _int(cluster)})

    def verify_(self) -> None:
        _expect_pointer(self, "barrier", self.bar, SHARED_SPACE)
        if self.cluster is not None and not 2 <= self.cluster.value.data <= 16:
            _fail(self, f"cluster is the number of blocks to arrive at, 2 .. 16, got {self.cluster.value.data}")


class _NamedBarrierOp(IRDLOperation):
    id = operand_def(i32)
    count = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$id `,` $count attr-dict"

    def __init__(self, barrier: SSAValue, count: int):
        super().__init__(operands=[barrier], properties={"count": IntegerAttr(count, 64)})

    def verify_(self) -> None:
        n = self.count.value.data
        if not (32 <= n <= 1024 and n % 32 == 0):
            _fail(self, f"count must be a multiple of 32 threads in 32 .. 1024, got {n}")


@irdl_op_definition
class NamedBarrierSyncOp(_NamedBarrierOp):
    """``bar.sync id, count``: the warp arrives on named barrier ``id`` (i32, 0 .. 15, warp-uniform) and
    waits until ``count`` threads have arrived (with ``bar.sync`` or ``bar.arrive``). Warp-collective."""

    name = "frag.named_barrier_sync"


@irdl_op_definition
class NamedBarrierArriveOp(_NamedBarrierOp):
    """``bar.arrive id, count``: the warp arrives on named barrier ``id`` without waiting."""

    name = "frag.named_barrier_arrive"


def _check_access(op: IRDLOperation, t: Attribute) -> None:
    n = access_bytes(t)
    if n is None:
        _fail(op, f"moves integers, f16, bf16, f32 or f64 (or vectors of them) per lane, not {t}")
    if n not in (1, 2, 4, 8, 16):
        _fail(op, f"moves 1, 2, 4, 8 or 16 bytes per lane; {t} is {n} bytes")


@irdl_op_definition
class LoadOp(IRDLOperation):
    """A (vector) load from global or shared memory; with a false predicate it gives zero."""

    name = "frag.load"

    address = operand_def(LLVMPointerType)
    pred = opt_operand_def(IntegerType(1))
    result = result_def()

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$address (`if` $pred^)? attr-dict `:` type($address) `->` type($result)"

    def __init__(self, address: SSAValue, result_type: Attribute, pred: SSAValue | None = None):
        super().__init__(operands=[address, [] if pred is None else [pred]], result_types=[result_type])

    def verify_(self) -> None:
        _check_access(self, self.result.type)
        _expect_pointer(self, "address", self.address, GLOBAL_SPACE, SHARED_SPACE)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """A (vector) store to global or shared memory, skipped where the predicate is false."""

    name = "frag.store"

    value = operand_def()
    address = operand_def(LLVMPointerType)
    pred = opt_operand_def(IntegerType(1))

    traits = traits_def(MemoryWriteEffect())

    assembly_format = "$value `,` $address (`if` $pred^)? attr-dict `:` type($value) `,` type($address)"

    def __init__(self, value: SSAValue, address: SSAValue, pred: SSAValue | None = None):
        super().__init__(operands=[value, address, [] if pred is None else [pred]])

    def verify_(self) -> None:
        _check_access(self, self.value.type)
        _expect_pointer(self, "address", self.address, GLOBAL_SPACE, SHARED_SPACE)


RED_KINDS = {"add": (f32, i32, f64, i64, Float16Type(), BFloat16Type()), "max": (i32, i64), "min": (i32, i64), "umax": (i32, i64),
             "umin": (i32, i64), "and": (i32, i64), "or": (i32, i64), "xor": (i32, i64)}
"""The reductions ``frag.red`` performs, with the value types PTX's ``red.global`` has for each
(``umax``/``umin``: the i32 read unsigned, ``red.global.{max,min}.u32``; ``and``/``or``/``xor`` on the bits;
an f16 or bf16 sum is ``add.noftz.f16`` / ``.bf16``, the latter from sm_90)."""


@irdl_op_definition
class RedOp(IRDLOperation):
    """``red.global.{add,max,min}``: combine ``value`` into the global element at ``address``
    atomically (no result), skipped where the predicate is false."""

    name = "frag.red"

    kind = prop_def(StringAttr)
    value = operand_def()
    address = operand_def(LLVMPointerType)
    pred = opt_operand_def(IntegerType(1))

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$kind $value `,` $address (`if` $pred^)? attr-dict `:` type($value) `,` type($address)"

    def __init__(self, kind: str, value: SSAValue, address: SSAValue, pred: SSAValue | None = None):
        super().__init__(operands=[value, address, [] if pred is None else [pred]],
                         properties={"kind": StringAttr(kind)})

    def verify_(self) -> None:
        types = RED_KINDS.get(self.kind.data)
        if types is None:
            _fail(self, f"kind must be one of {', '.join(RED_KINDS)}, got {self.kind.data}")
        if self.value.type not in types:
            _fail(self, f"{self.kind.data} combines {' or '.join(map(str, types))} values, not {self.value.type}")
        _expect_pointer(self, "address", self.address, GLOBAL_SPACE)


ATOM_KINDS = {"add": (f32, i32, f64, i64, Float16Type(), BFloat16Type()), "max": (i32, i64), "min": (i32, i64), "umax": (i32, i64),
              "umin": (i32, i64), "exch": (f32, i32, f64, i64), "cas": (f32, i32, f64, i64), "and": (i32, i64),
              "or": (i32, i64), "xor": (i32, i64)}
"""What ``frag.atom`` does, with the value types PTX's ``atom.global`` has for each (``umax``/``umin``:
the i32 read unsigned; ``exch``/``cas``/``and``/``or``/``xor`` on the 32 bits)."""


@irdl_op_definition
class AtomOp(IRDLOperation):
    """``atom.acq_rel.gpu.global.<kind>``: combine ``value`` into the global element at ``address``
    atomically and give the element's value from before (``cas``: write ``value`` where the element
    equals ``cmp``). Where the predicate is false nothing is done and the result is 0."""

    name = "frag.atom"

    T: ClassVar = VarConstraint("T", EqAttrConstraint(i32) | EqAttrConstraint(f32) | EqAttrConstraint(i64) |
                                EqAttrConstraint(f64) | EqAttrConstraint(Float16Type()) |
                                EqAttrConstraint(BFloat16Type()))
    kind = prop_def(StringAttr)
    value = operand_def(T)
    address = operand_def(LLVMPointerType)
    cmp = opt_operand_def(T)
    pred = opt_operand_def(IntegerType(1))
    result = result_def(T)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = ("$kind $value `,` $address (`cmp` $cmp^)? (`if` $pred^)? attr-dict `:` type($value) `,` "
                       "type($address)")

    def __init__(self, kind: str, value: SSAValue, address: SSAValue, cmp: SSAValue | None = None,
                 pred: SSAValue | None = None):
        super().__init__(operands=[value, address, [] if cmp is None else [cmp], [] if pred is None else [pred]],
                         properties={"kind": StringAttr(kind)}, result_types=[SSAValue.get(value).type])

    def verify_(self) -> None:
        kind = self.kind.data
        types = ATOM_KINDS.get(kind)
        if types is None:
            _fail(self, f"kind must be one of {', '.join(ATOM_KINDS)}, got {kind}")
        if self.value.type not in types:
            _fail(self, f"{kind} combines {' or '.join(map(str, types))} values, not {self.value.type}")
        if (kind == "cas") != (self.cmp is not None):
            _fail(self, "cas takes the value to compare with" if kind == "cas" else f"{kind} compares with nothing")
        _expect_pointer(self, "address", self.address, GLOBAL_SPACE)


@irdl_op_definition
class SharedOp(IRDLOperation):
    """The address of a static shared-memory buffer of the kernel (``bytes`` long, aligned).

    ``bytes = 0`` names the dynamic shared memory given at launch.
    """

    name = "frag.shared"

    sym_name = prop_def(StringAttr)
    bytes = prop_def(IntegerAttr[I64])
    align = prop_def(IntegerAttr[I64])
    result = result_def(LLVMPointerType)

    traits = traits_def(Pure())

    assembly_format = "$sym_name `,` $bytes `,` `align` $align attr-dict `:` type($result)"

    def __init__(self, name: str, nbytes: int, align: int = 16):
        super().__init__(
            properties={"sym_name": StringAttr(name), "bytes": _int(nbytes), "align": _int(align)},
            result_types=[LLVMPointerType(IntAttr(SHARED_SPACE))],
        )

    def verify_(self) -> None:
        a = self.align.value.data
        if a <= 0 or a & (a - 1):
            _fail(self, f"alignment must be a power of two, got {a}")
        if self.bytes.value.data < 0:
            _fail(self, f"size must be non-negative, got {self.bytes.value.data}")
        _expect_pointer(self, "result", self.result, SHARED_SPACE)


@irdl_op_definition
class ShflOp(IRDLOperation):
    """``shfl.sync.{idx,bfly}.b32`` over the full warp."""

    name = "frag.shfl"

    T: ClassVar = VarConstraint("T", EqAttrConstraint(i32) | EqAttrConstraint(f32))

    kind = prop_def(StringAttr)
    value = operand_def(T)
    lane = operand_def(i32)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$kind $value `,` $lane attr-dict `:` type($value)"

    def __init__(self, kind: str, value: SSAValue, lane: SSAValue):
        super().__init__(
            operands=[value, lane], properties={"kind": StringAttr(kind)}, result_types=[SSAValue.get(value).type]
        )

    def verify_(self) -> None:
        if self.kind.data not in ("idx", "bfly"):
            _fail(self, f"kind must be idx or bfly, got {self.kind.data}")


@irdl_op_definition
class PackOp(IRDLOperation):
    """``cvt.rn.{f16x2,bf16x2}.f32``: two f32 → one 32-bit register, ``lo`` in the low half."""

    name = "frag.pack"

    kind = prop_def(StringAttr)
    lo = operand_def(f32)
    hi = operand_def(f32)
    result = result_def(i32)

    traits = traits_def(Pure())

    assembly_format = "$kind $lo `,` $hi attr-dict"

    def __init__(self, kind: str, lo: SSAValue, hi: SSAValue):
        super().__init__(operands=[lo, hi], properties={"kind": StringAttr(kind)}, result_types=[i32])

    def verify_(self) -> None:
        if self.kind.data not in ("f16x2", "bf16x2"):
            _fail(self, f"kind must be f16x2 or bf16x2, got {self.kind.data}")


class _UnaryF32(IRDLOperation):
    input = operand_def(f32)
    result = result_def()

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict"


@irdl_op_definition
class ToTF32Op(_UnaryF32):
    """``cvt.rna.tf32.f32``: the f32 rounded to tf32, as the b32 register mma.sync takes."""

    name = "frag.tf32"

    result = result_def(i32)

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[i32])


@irdl_op_definition
class Ex2Op(_UnaryF32):
    """``ex2.approx.f32``: 2^x, the fast exponential of softmax-like epilogues."""

    name = "frag.ex2"

    result = result_def(f32)

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[f32])


class _BinaryF32(IRDLOperation):
    lhs = operand_def(f32)
    rhs = operand_def(f32)
    result = result_def(f32)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[f32])


@irdl_op_definition
class FMaxOp(_BinaryF32):
    """``max.f32``."""

    name = "frag.fmax"


@irdl_op_definition
class FMinOp(_BinaryF32):
    """``min.f32``."""

    name = "frag.fmin"


# ---------------------------------------------------------------- warpgroup MMA (sm_90a)

WGMMA_TYPES = {"f16": Float16Type, "bf16": BFloat16Type, "e4m3": Float8E4M3FNType, "e5m2": Float8E5M2Type,
               "s8": IntegerType}
"""Operand element types of ``frag.wgmma`` (f32 accumulators), by their PTX names."""

WGMMA_K = {"f16": 16, "bf16": 16, "e4m3": 32, "e5m2": 32, "s8": 32}
"""One wgmma's K by operand type: 32 bytes of it."""

WGMMA_KMAJOR_ONLY = ("e4m3", "e5m2", "s8")
"""Operand types whose wgmma has no transpose: A and B are read K-major only."""

WGMMA_MAX_N = 256


@irdl_op_definition
class WgmmaDescOp(IRDLOperation):
    """The 64-bit shared-memory matrix descriptor of an operand starting at ``base``:
    ``(address(base) >> 4) & 0x3FFF | high`` where ``high`` holds the strides and the swizzle mode
    (:meth:`tilec.layout.gmma.GmmaDescriptor.high_bits`). Stepping an operand along K adds the step's
    bytes / 16 to the descriptor (``arith.addi``)."""

    name = "frag.wgmma_desc"

    base = operand_def(LLVMPointerType)
    high = prop_def(IntegerAttr[I64])
    result = result_def(IntegerType(64))

    traits = traits_def(Pure())
    assembly_format = "$base `,` $high attr-dict `:` type($base)"

    def __init__(self, base: SSAValue, high: int):
        super().__init__(operands=[base], properties={"high": _int(high)}, result_types=[IntegerType(64)])

    def verify_(self) -> None:
        _expect_pointer(self, "base", self.base, SHARED_SPACE)
        if self.high.value.data & ((1 << 14) - 1):
            _fail(self, f"high bits {self.high.value.data:#x} overlap the 14-bit start address field")


@irdl_op_definition
class WgmmaFenceOp(IRDLOperation):
    """``wgmma.fence.sync.aligned``: register and shared-memory writes before it are seen by the
    warpgroup's next ``wgmma``. Warpgroup-collective."""

    name = "frag.wgmma_fence"

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


def _verify_wgmma(op: IRDLOperation, n: int, dtype: str, c: tuple, d: tuple) -> None:
    """What ``frag.wgmma`` and ``frag.wgmma_rs`` share: the element type, N and the accumulator count."""
    if dtype not in WGMMA_TYPES:
        _fail(op, f"dtype must be one of {', '.join(WGMMA_TYPES)}, got {dtype!r}")
    if not (8 <= n <= WGMMA_MAX_N and n % 8 == 0):
        _fail(op, f"n must be a multiple of 8 from 8 to {WGMMA_MAX_N}, got {n}")
    if len(c) != n // 2 or len(d) != n // 2:
        _fail(op, f"m64n{n} takes and gives {n // 2} accumulator registers per lane, got {len(c)} and {len(d)}")


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """``wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t}``: ``d = A·B + c``, A and B in shared
    memory (descriptors), ``c``/``d`` this lane's ``n / 2`` accumulator registers (the m16n8 C
    fragment of its warp's 16 rows, repeated along N). ``trans_a``/``trans_b``: the operand is
    MN-major. Asynchronous: ``d`` may be read only after ``frag.wgmma_wait`` returns it."""

    name = "frag.wgmma"

    ACC: ClassVar = VarConstraint("ACC", EqAttrConstraint(f32) | EqAttrConstraint(i32))
    desc_a = operand_def(IntegerType(64))
    desc_b = operand_def(IntegerType(64))
    c = var_operand_def(ACC)
    n = prop_def(IntegerAttr[I64])
    dtype = prop_def(StringAttr)
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    d = var_result_def(ACC)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = (
        "$dtype `n` $n $desc_a `,` $desc_b (`trans_a` $trans_a^)? (`trans_b` $trans_b^)? `(` $c `)` "
        "attr-dict `:` type($d)"
    )

    def __init__(self, desc_a: SSAValue, desc_b: SSAValue, c, *, n: int, dtype: str,
                 trans_a: bool = False, trans_b: bool = False):
        props: dict[str, Attribute] = {"n": _int(n), "dtype": StringAttr(dtype)}
        if trans_a:
            props["trans_a"] = UnitAttr()
        if trans_b:
            props["trans_b"] = UnitAttr()
        super().__init__(operands=[desc_a, desc_b, c], properties=props,
                         result_types=[[i32 if dtype == "s8" else f32] * len(c)])

    def verify_(self) -> None:
        _verify_wgmma(self, self.n.value.data, self.dtype.data, self.c, self.d)
        acc = i32 if self.dtype.data == "s8" else f32
        if any(v.type != acc for v in self.c):
            _fail(self, f"a {self.dtype.data} wgmma accumulates in {acc}")
        n = self.n.value.data
        if self.dtype.data == "s8" and not (n in (8, 16, 24) or n % 16 == 0):
            _fail(self, f"an s8 wgmma's n is 8, 16, 24 or a multiple of 16, got {n}")
        if self.dtype.data in WGMMA_KMAJOR_ONLY and (self.trans_a is not None or self.trans_b is not None):
            _fail(self, f"a {self.dtype.data} wgmma reads A and B K-major only: no trans_a or trans_b")


WGMMA_A_REGISTERS = 4
"""``frag.wgmma_rs``'s A: per lane, the m16n8k16 A fragment of its warp's 16 rows (four f16/bf16 pairs)."""


@irdl_op_definition
class WgmmaRsOp(IRDLOperation):
    """``wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} d, {a0..a3}, descB``: ``d = A·B + c`` with A
    in registers, so that an operand computed in registers (a softmax's P) needs no trip through shared
    memory. ``a`` is this lane's m16n8k16 A fragment of its warp's 16 rows of A (lane ``l``,
    ``g = l / 4``, ``t = l % 4``: rows ``g``, ``g + 8`` by columns ``2t, 2t+1``, then the same at
    ``2t + 8``, low half the lower column); B and ``c``/``d`` as for ``frag.wgmma``. Register A is
    K-major by definition: there is no ``trans_a``. The registers of ``a`` need a
    ``frag.wgmma_fence`` after their writers, like the accumulators."""

    name = "frag.wgmma_rs"

    a = var_operand_def(i32)
    desc_b = operand_def(IntegerType(64))
    c = var_operand_def(f32)
    n = prop_def(IntegerAttr[I64])
    dtype = prop_def(StringAttr)
    trans_b = opt_prop_def(UnitAttr)
    d = var_result_def(f32)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$dtype `n` $n ` ` `(` $a `)` `,` $desc_b (`trans_b` $trans_b^)? `(` $c `)` attr-dict `:` type($d)"
    )

    def __init__(self, a, desc_b: SSAValue, c, *, n: int, dtype: str, trans_b: bool = False):
        props: dict[str, Attribute] = {"n": _int(n), "dtype": StringAttr(dtype)}
        if trans_b:
            props["trans_b"] = UnitAttr()
        super().__init__(operands=[a, desc_b, c], properties=props, result_types=[[f32] * len(c)])

    def verify_(self) -> None:
        _verify_wgmma(self, self.n.value.data, self.dtype.data, self.c, self.d)
        if self.dtype.data in WGMMA_KMAJOR_ONLY:
            _fail(self, f"register A is f16 or bf16 (the m16n8k16 A fragment), got {self.dtype.data}")
        if len(self.a) != WGMMA_A_REGISTERS:
            _fail(self, f"takes {WGMMA_A_REGISTERS} A registers (i32) per lane, got {len(self.a)}")


@irdl_op_definition
class WgmmaCommitOp(IRDLOperation):
    """``wgmma.commit_group.sync.aligned``: the ``wgmma`` issued since the last commit form a group."""

    name = "frag.wgmma_commit"

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """``wgmma.wait_group.sync.aligned pending``: at most ``pending`` groups are still running. It
    passes the accumulators through (``d = c``), so that nothing reads them before the wait."""

    name = "frag.wgmma_wait"

    ACC: ClassVar = VarConstraint("ACC", EqAttrConstraint(f32) | EqAttrConstraint(i32))
    c = var_operand_def(ACC)
    pending = prop_def(IntegerAttr[I64])
    d = var_result_def(ACC)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    assembly_format = "$pending `(` $c `)` attr-dict `:` type($d)"

    def __init__(self, c, pending: int):
        super().__init__(operands=[c], properties={"pending": _int(pending)},
                         result_types=[[SSAValue.get(v).type for v in c]])

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            _fail(self, f"pending must be 0 to 7, got {self.pending.value.data}")
        if len(self.c) != len(self.d):
            _fail(self, f"passes {len(self.c)} accumulators through, gives {len(self.d)}")


Frag = Dialect(
    "frag",
    [
        LdMatrixOp,
        MmaOp,
        CpAsyncOp,
        CpAsyncCommitOp,
        CpAsyncWaitOp,
        MbarInitOp,
        MbarInitFenceOp,
        FenceProxyAsyncOp,
        MbarExpectTxOp,
        TmaLoadOp,
        TensorMapPrefetchOp,
        TmaStoreWarpOp,
        BulkCommitWarpOp,
        BulkWaitWarpOp,
        WarpSyncOp,
        MbarWaitOp,
        MbarArriveWarpOp,
        NamedBarrierSyncOp,
        NamedBarrierArriveOp,
        LoadOp,
        StoreOp,
        RedOp,
        AtomOp,
        SharedOp,
        ShflOp,
        PackOp,
        ToTF32Op,
        Ex2Op,
        FMaxOp,
        FMinOp,
        WgmmaDescOp,
        WgmmaFenceOp,
        WgmmaOp,
        WgmmaRsOp,
        WgmmaCommitOp,
        WgmmaWaitOp,
    ],
    [],
)
