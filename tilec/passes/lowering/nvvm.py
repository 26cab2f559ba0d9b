"""Builders for the GPU's own operations, as xDSL `llvm` ops.

Each builder inserts ops through an xDSL `Builder`, checks the types of its
operands first (ValueError naming the PTX operation and what it expected),
and returns the SSA values it produced. NVVM intrinsics of LLVM 22 are used
through `llvm.call_intrinsic`, by their current (not auto-upgraded) names,
so LLVM checks their signatures when it parses the IR; `llvm.inline_asm` is
used only for what LLVM has no intrinsic for (cp.async with an L2 prefetch
hint). The register conventions are PTX's: f16/bf16 pairs are 32-bit
registers whose low half is element 0.
"""

from __future__ import annotations

import functools

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    VectorType,
    bf16,
    f16,
    f32,
    i1,
    i32,
)
from xdsl.ir import Attribute, Block, SSAValue
from xdsl.rewriter import InsertPoint

from tilec.ir import fast
from tilec.passes.lowering.llvm_build import (
    GLOBAL,
    SHARED,
    Value,
    address_space,
    bitcast,
    const_i32,
    constant,
    expect_count,
    expect_pointer,
    expect_type,
    extract_element,
    extract_values,
    value_of,
    zero,
)

F16X2 = VectorType(f16, [2])
_I32X4 = VectorType(i32, [4])
BF16X2 = VectorType(bf16, [2])
FULL_MASK = 0xFFFFFFFF


def call_intrinsic(
    builder: Builder,
    name: str,
    args: Sequence[SSAValue],
    result_type: Attribute | None = None,
) -> SSAValue | None:
    """`llvm.call_intrinsic name(args)`, returning its result if it has one."""
    op = builder.insert(
        fast.call_intrinsic_op(name, args, [result_type] if result_type is not None else [])
    )
    return op.ress


@functools.cache
def _struct(count: int, element: Attribute) -> llvm.LLVMStructType:
    """The literal struct of ``count`` ``element``s, made once (xDSL's constructor verifies each)."""
    return llvm.LLVMStructType.from_type_list([element] * count)


# ------------------------------------------------------------ thread ids

_DIMS = ("x", "y", "z")


def _special_register(builder: Builder, register: str, dim: str) -> SSAValue:
    if dim not in _DIMS:
        raise ValueError(f"%{register}: dimension must be x, y or z, got {dim!r}")
    value = call_intrinsic(builder, f"llvm.nvvm.read.ptx.sreg.{register}.{dim}", [], i32)
    assert value is not None
    return value


def thread_id(builder: Builder, dim: str = "x") -> SSAValue:
    """`%tid.{dim}`: the thread's index in its block (i32)."""
    return _special_register(builder, "tid", dim)


def block_id(builder: Builder, dim: str = "x") -> SSAValue:
    """`%ctaid.{dim}`: the block's index in the grid (i32)."""
    return _special_register(builder, "ctaid", dim)


def block_dim(builder: Builder, dim: str = "x") -> SSAValue:
    """`%ntid.{dim}`: threads per block along `dim` (i32)."""
    return _special_register(builder, "ntid", dim)


def grid_dim(builder: Builder, dim: str = "x") -> SSAValue:
    """`%nctaid.{dim}`: blocks per grid along `dim` (i32)."""
    return _special_register(builder, "nctaid", dim)


def cluster_id(builder: Builder, dim: str = "x") -> SSAValue:
    """`%clusterid.{dim}`: the block's thread-block cluster in the grid (i32, sm_90)."""
    return _special_register(builder, "clusterid", dim)


def cluster_count(builder: Builder, dim: str = "x") -> SSAValue:
    """`%nclusterid.{dim}`: clusters per grid along `dim` (i32, sm_90)."""
    return _special_register(builder, "nclusterid", dim)


def block_rank(builder: Builder) -> SSAValue:
    """`%cluster_ctarank`: the block's rank in its cluster (i32, sm_90)."""
    value = call_intrinsic(builder, "llvm.nvvm.read.ptx.sreg.cluster.ctarank", [], i32)
    assert value is not None
    return value


def cluster_barrier(builder: Builder) -> None:
    """`barrier.cluster.arrive` (release) then `barrier.cluster.wait` (acquire): every thread of the
    cluster's blocks meets, their memory accesses before it ordered before those after (sm_90)."""
    call_intrinsic(builder, "llvm.nvvm.barrier.cluster.arrive", [])
    call_intrinsic(builder, "llvm.nvvm.barrier.cluster.wait", [])


def lane_id(builder: Builder) -> SSAValue:
    """`%laneid`: the thread's lane in its warp, 0..31 (i32)."""
    value = call_intrinsic(builder, "llvm.nvvm.read.ptx.sreg.laneid", [], i32)
    assert value is not None
    return value


def warp_id(builder: Builder, linear: Value | None = None, *, broadcast: bool = True) -> SSAValue:
    """The warp's index in the block, `tid.x / 32` (or `linear / 32`, the thread's linear index in a
    2-D or 3-D block) (i32), read from lane 0 (`shfl.sync.idx`).

    Computed rather than read from `%warpid`, which names a hardware warp
    slot that may change during execution. The shuffle is what tells ptxas the
    value is the same in every lane: a branch on it (a warpgroup's role) is
    then uniform, and the descriptors and stage addresses computed under it
    stay in uniform registers (an attention K/V step: 457 → 379 instructions,
    the 64-bit descriptor arithmetic and its moves to uniform registers gone).
    Every lane of the warp must run it (`mask` is the full warp): emit it
    where the warp is converged, e.g. at the kernel's entry; `broadcast=False`
    leaves the shuffle out (a device function, which may be called from a
    branch of some lanes).
    """
    tid = thread_id(builder, "x") if linear is None else linear
    warp = builder.insert(fast.binary_op(llvm.LShrOp, tid, const_i32(builder, 5))).res
    return shfl_sync(builder, warp, 0) if broadcast else warp


def barrier(builder: Builder, threads: int | None = None) -> None:
    """`bar.sync 0`: every thread of the block waits here (`__syncthreads`); with ``threads``,
    `bar.sync 0, threads`: the block's threads that take part (the others run elsewhere)."""
    if threads is None:
        call_intrinsic(builder, "llvm.nvvm.barrier.cta.sync.aligned.all", [const_i32(builder, 0)])
    else:
        call_intrinsic(builder, "llvm.nvvm.barrier.cta.sync.aligned.count",
                       [const_i32(builder, 0), const_i32(builder, threads)])


def setmaxnreg(builder: Builder, action: str, regs: int) -> None:
    """`setmaxnreg.{inc,dec}.sync.aligned.u32 regs` (sm_90a): the warpgroup's registers per thread."""
    if action not in ("inc", "dec") or not (24 <= regs <= 256 and regs % 8 == 0):
        raise ValueError(f"setmaxnreg: action inc/dec and a multiple of 8 in 24 .. 256, got {action} {regs}")
    inline_asm(builder, f"setmaxnreg.{action}.sync.aligned.u32 {regs};", "~{memory}", [])


def named_barrier(builder: Builder, barrier: Value, count: int, *, wait: bool) -> None:
    """`bar.sync id, count` (``wait``) or `bar.arrive id, count`: named barrier ``id`` (i32, 0 .. 15)
    completes when ``count`` threads have arrived; `bar.arrive` does not wait for that."""
    op = "sync" if wait else "arrive"
    bar = expect_type(f"bar.{op}", "barrier", barrier, i32)
    call_intrinsic(builder, f"llvm.nvvm.barrier.cta.{op}.aligned.count", [bar, const_i32(builder, count)])


# ------------------------------------------------------------ ldmatrix / mma


def ldmatrix(
    builder: Builder, ptr: Value, *, count: int = 4, trans: bool = False
) -> list[SSAValue]:
    """`ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16`.

    The warp loads `count` 8x8 b16 matrices from shared memory; lanes
    8i..8i+7 give the row addresses of matrix i. Each thread gets one i32
    (two b16 values) per matrix; `trans` transposes each matrix.
    """
    op = "ldmatrix"
    if count not in (1, 2, 4):
        raise ValueError(f"{op}: count must be 1, 2 or 4, got {count}")
    ptr = expect_pointer(op, "address", ptr, SHARED)
    layout = ".trans" if trans else ""
    name = f"llvm.nvvm.ldmatrix.sync.aligned.m8n8.x{count}{layout}.b16.p3"
    if count == 1:
        value = call_intrinsic(builder, name, [ptr], i32)
        assert value is not None
        return [value]
    result = call_intrinsic(builder, name, [ptr], _struct(count, i32))
    assert result is not None
    return extract_values(builder, result, count)


def _fragment(
    builder: Builder,
    op: str,
    what: str,
    values: Sequence[Value],
    count: int,
    register_type: Attribute,
    also: Attribute,
) -> list[SSAValue]:
    """Check a fragment of `count` registers; bitcast those of type `also`."""
    expect_count(op, what, values, count)
    checked = [expect_type(op, what, v, register_type, also) for v in values]
    return [
        v if v.type == register_type else bitcast(builder, v, register_type)
        for v in checked
    ]


def _mma(
    builder: Builder,
    op: str,
    name: str,
    a: list[SSAValue],
    b: list[SSAValue],
    c: Sequence[Value],
) -> list[SSAValue]:
    expect_count(op, "C", c, 4)
    acc = [expect_type(op, "C", v, f32) for v in c]
    result = call_intrinsic(builder, name, [*a, *b, *acc], _struct(4, f32))
    assert result is not None
    return extract_values(builder, result, 4)


def mma_m16n8k16(
    builder: Builder,
    a: Sequence[Value],
    b: Sequence[Value],
    c: Sequence[Value],
    *,
    dtype: str = "f16",
) -> list[SSAValue]:
    """`mma.sync.aligned.m16n8k16.row.col.f32.{dtype}.{dtype}.f32`: D = A·B + C.

    A is 4 registers, B 2, C and the result D 4 f32 per thread. For f16 a
    register is `vector<2xf16>` (an i32, e.g. from ldmatrix, is bitcast);
    for bf16 it is an i32 (a `vector<2xbf16>` is bitcast).
    """
    op = f"mma.sync.m16n8k16.{dtype}"
    if dtype == "f16":
        name = "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"
        reg, other = F16X2, i32
    elif dtype == "bf16":
        name = "llvm.nvvm.mma.m16n8k16.row.col.bf16"
        reg, other = i32, BF16X2
    else:
        raise ValueError(f"mma.sync.m16n8k16: dtype must be f16 or bf16, got {dtype!r}")
    a_regs = _fragment(builder, op, "A", a, 4, reg, other)
    b_regs = _fragment(builder, op, "B", b, 2, reg, other)
    return _mma(builder, op, name, a_regs, b_regs, c)


def mma_m16n8k8_tf32(
    builder: Builder, a: Sequence[Value], b: Sequence[Value], c: Sequence[Value]
) -> list[SSAValue]:
    """`mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`: D = A·B + C.

    A is 4 tf32 registers, B 2, C and D 4 f32 per thread. A tf32 register is
    an i32 (from `round_tf32`); an f32 is bitcast, and the hardware then
    ignores its low 13 mantissa bits.
    """
    op = "mma.sync.m16n8k8.tf32"
    a_regs = _fragment(builder, op, "A", a, 4, i32, f32)
    b_regs = _fragment(builder, op, "B", b, 2, i32, f32)
    return _mma(builder, op, "llvm.nvvm.mma.m16n8k8.row.col.tf32", a_regs, b_regs, c)


def mma_m16n8k32_s8(builder: Builder, a: Sequence[Value], b: Sequence[Value], c: Sequence[Value]) -> list[SSAValue]:
    """`mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32`: D = A·B + C, sums wrapping in 32 bits.

    A is 4 registers of four int8 each (along K), B 2, C and the result D 4 i32 per thread."""
    op = "mma.sync.m16n8k32.s8"
    a_regs = _fragment(builder, op, "A", a, 4, i32, i32)
    b_regs = _fragment(builder, op, "B", b, 2, i32, i32)
    expect_count(op, "C", c, 4)
    acc = [expect_type(op, "C", v, i32) for v in c]
    result = call_intrinsic(builder, "llvm.nvvm.mma.m16n8k32.row.col.s8", [*a_regs, *b_regs, *acc], _struct(4, i32))
    assert result is not None
    return extract_values(builder, result, 4)


def mma_m16n8k32_f8(builder: Builder, a: Sequence[Value], b: Sequence[Value], c: Sequence[Value], a_type: str,
                    b_type: str) -> list[SSAValue]:
    """`mma.sync.aligned.m16n8k32.row.col.f32.{a_type}.{b_type}.f32` (8-bit floats, sm_89 on): D = A·B + C.

    The int8 atom's registers (A 4, B 2, four values a register along K), C and D 4 f32. Inline PTX: the
    LLVM this project pins has no intrinsic for it."""
    op = f"mma.sync.m16n8k32.{a_type}.{b_type}"
    a_regs = _fragment(builder, op, "A", a, 4, i32, i32)
    b_regs = _fragment(builder, op, "B", b, 2, i32, i32)
    expect_count(op, "C", c, 4)
    acc = [expect_type(op, "C", v, f32) for v in c]
    asm = (f"mma.sync.aligned.m16n8k32.row.col.f32.{a_type}.{b_type}.f32 {{$0, $1, $2, $3}}, {{$4, $5, $6, $7}}, "
           "{$8, $9}, {$10, $11, $12, $13};")
    result = inline_asm(builder, asm, "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", [*a_regs, *b_regs, *acc], _struct(4, f32),
                        side_effects=False)
    assert result is not None
    return extract_values(builder, result, 4)


# ------------------------------------------------------------ cp.async


def inline_asm(
    builder: Builder,
    asm: str,
    constraints: str,
    operands: Sequence[Value],
    result_type: Attribute | None = None,
    *,
    side_effects: bool = True,
) -> SSAValue | None:
    """`llvm.inline_asm` for one PTX instruction LLVM has no intrinsic for.

    The constraint string must list one output per result (`=r`, ...) and
    one input per operand, so a mismatch fails here, not inside LLVM.
    """
    entries = [e for e in constraints.split(",") if e and not e.startswith("~")]
    outputs = sum(1 for e in entries if e.startswith("="))
    expected_outputs = (
        0
        if result_type is None
        else len(result_type.types)
        if isinstance(result_type, llvm.LLVMStructType)
        else 1
    )
    if outputs != expected_outputs or len(entries) - outputs != len(operands):
        raise ValueError(
            f"inline asm {asm!r}: constraints {constraints!r} declare {outputs} "
            f"outputs and {len(entries) - outputs} inputs, expected "
            f"{expected_outputs} and {len(operands)}"
        )
    op = fast.inline_asm_op(
        asm,
        constraints,
        [value_of("inline asm", v) for v in operands],
        [result_type] if result_type is not None else [],
        has_side_effects=side_effects,
    )
    builder.insert(op)
    return op.res


def cp_async(
    builder: Builder,
    dst: Value,
    src: Value,
    *,
    size: int = 16,
    cache: str = "cg",
    src_size: Value | None = None,
    l2_prefetch: int | None = None,
    ignore_src: Value | None = None,
) -> None:
    """`cp.async.{cache}.shared.global [dst], [src], size[, src_size | ignore_src]`.

    Copies `size` bytes global → shared without passing through registers.
    `cache` is "ca" (L1 and L2; 4, 8 or 16 bytes) or "cg" (L2 only; 16
    bytes). With `src_size` (i32, 0..size) only that many bytes are read and
    the rest of `dst` is zero-filled: the predicated/out-of-bounds form.
    `l2_prefetch` (64, 128 or 256 bytes) adds PTX's `.L2::{n}B` hint, which
    LLVM's intrinsics cannot express, so that form is inline asm. So is
    `ignore_src` (an i1: where true nothing is read and `dst` is zero-filled),
    PTX's predicate operand, which ptxas uses as the copy's own predicate.
    """
    op = f"cp.async.{cache}"
    if cache not in ("ca", "cg"):
        raise ValueError(f"cp.async: cache must be 'ca' or 'cg', got {cache!r}")
    if size not in ((4, 8, 16) if cache == "ca" else (16,)):
        allowed = "4, 8 or 16" if cache == "ca" else "16"
        raise ValueError(f"{op}: size must be {allowed} bytes, got {size}")
    dst = expect_pointer(op, "destination", dst, SHARED)
    src = expect_pointer(op, "source", src, GLOBAL)
    args = [dst, src]
    if src_size is not None and ignore_src is not None:
        raise ValueError(f"{op}: takes src_size or ignore_src, not both")
    if src_size is not None:
        args.append(expect_type(op, "src_size", src_size, i32))
    if ignore_src is not None:
        args.append(expect_type(op, "ignore_src", ignore_src, i1))
        hint = "" if l2_prefetch is None else f".L2::{_prefetch_bytes(op, l2_prefetch)}B"
        asm = f"cp.async.{cache}.shared.global{hint} [$0], [$1], {size}, $2;"
        # "r": a shared address is 32 bits (PTX accepts it for .shared), "b": a predicate
        inline_asm(builder, asm, "r,l,b", args)
        return
    if l2_prefetch is None:
        suffix = ".s" if src_size is not None else ""
        name = f"llvm.nvvm.cp.async.{cache}.shared.global.{size}{suffix}"
        call_intrinsic(builder, name, args)
        return
    tail = ", $2" if src_size is not None else ""
    asm = f"cp.async.{cache}.shared.global.L2::{_prefetch_bytes(op, l2_prefetch)}B [$0], [$1], {size}{tail};"
    inline_asm(builder, asm, "l,l" + (",r" if src_size is not None else ""), args)


def _prefetch_bytes(op: str, l2_prefetch: int) -> int:
    if l2_prefetch not in (64, 128, 256):
        raise ValueError(f"{op}: l2_prefetch must be 64, 128 or 256, got {l2_prefetch}")
    return l2_prefetch


def cp_async_commit_group(builder: Builder) -> None:
    """`cp.async.commit_group`: close the group of cp.async issued so far."""
    call_intrinsic(builder, "llvm.nvvm.cp.async.commit.group", [])


def cp_async_wait_group(builder: Builder, pending: int) -> None:
    """`cp.async.wait_group N`: wait until at most `pending` groups are in flight."""
    if not isinstance(pending, int) or not 0 <= pending <= 7:
        raise ValueError(
            f"cp.async.wait_group: pending must be an int 0..7, got {pending!r}"
        )
    count = const_i32(builder, pending)
    call_intrinsic(builder, "llvm.nvvm.cp.async.wait.group", [count])


def cp_async_wait_all(builder: Builder) -> None:
    """`cp.async.wait_all`: wait for every cp.async of this thread."""
    call_intrinsic(builder, "llvm.nvvm.cp.async.wait.all", [])


# ------------------------------------------------------------ warp shuffles

_SHFL_MODES = ("idx", "bfly", "up", "down")


# ------------------------------------------------------------ bulk tensor copies (sm_90)


def mbarrier_init(builder: Builder, bar: Value, count: int) -> None:
    """`mbarrier.init.shared.b64 [bar], count`: a barrier expecting `count` arrivals per phase."""
    bar = expect_pointer("mbarrier.init", "barrier", bar, SHARED)
    call_intrinsic(builder, "llvm.nvvm.mbarrier.init.shared", [bar, const_i32(builder, count)])


def fence_proxy_async(builder: Builder) -> None:
    """`fence.proxy.async.shared::cta`: generic-proxy writes to shared memory are seen by the async proxy."""
    inline_asm(builder, "fence.proxy.async.shared::cta;", "~{memory}", [])


def mbarrier_init_fence(builder: Builder) -> None:
    """`fence.mbarrier_init.release.cluster` then `fence.proxy.async.shared::cta`: the
    initialised barriers are visible to the bulk copies (async proxy) that complete on them."""
    inline_asm(builder, "fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;", "~{memory}", [])


def mbarrier_arrive_expect_tx(builder: Builder, bar: Value, nbytes: int) -> None:
    """`mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], nbytes`: arrive, announcing the phase's bytes.

    Inline asm: LLVM 22's expect-tx intrinsics return the barrier state this
    arrival has no use for; PTX's sink `_` needs no register.
    """
    bar = expect_pointer("mbarrier.arrive.expect_tx", "barrier", bar, SHARED)
    inline_asm(builder, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}",
               [bar, const_i32(builder, nbytes)])


def tma_load(builder: Builder, dst: Value, tensor_map: Value, bar: Value, coords: Sequence[Value],
             multicast: int | None = None) -> None:
    """`cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes`.

    One box of the tensor map at `coords` (i32, innermost first) into shared
    memory at `dst`, completing on `bar`. Inline asm with the CTA's own
    32-bit shared addresses (valid `.shared::cluster` addresses of the
    executing CTA): the NVVM intrinsic takes an `addrspace(7)` destination,
    whose conversion from a shared pointer costs three `cvta` per copy.
    With `multicast` (a mask of cluster ranks), `.multicast::cluster`: the box
    lands at the same offsets (`dst`, `bar`) in every block of the mask.
    """
    op = "cp.async.bulk.tensor"
    n = len(coords)
    if not 1 <= n <= 5:
        raise ValueError(f"{op}: takes 1 to 5 coordinates, got {n}")
    dst = expect_pointer(op, "destination", dst, SHARED)
    bar = expect_pointer(op, "barrier", bar, SHARED)
    tmap = value_of(op, tensor_map)
    args = [dst, tmap, *(expect_type(op, f"coordinate {i}", c, i32) for i, c in enumerate(coords)), bar]
    places = ", ".join(f"${i + 2}" for i in range(n))
    if multicast is None:
        asm = (f"cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
               f"[$0], [$1, {{{places}}}], [${n + 2}];")
        inline_asm(builder, asm, "r,l," + "r," * n + "r,~{memory}", args)
        return
    if not 0 < multicast < 1 << 16:
        raise ValueError(f"{op}: the multicast mask is 16 bits of cluster ranks, got {multicast}")
    args.append(constant(builder, multicast, IntegerType(16)))
    asm = (f"cp.async.bulk.tensor.{n}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
           f"[$0], [$1, {{{places}}}], [${n + 2}], ${n + 3};")
    inline_asm(builder, asm, "r,l," + "r," * n + "r,h,~{memory}", args)


def tensormap_prefetch(builder: Builder, tensor_map: Value) -> None:
    """`prefetch.tensormap [tensor_map]` (a generic address of a kernel parameter): the descriptor
    cache holds the map before the first bulk copy through it."""
    inline_asm(builder, "prefetch.tensormap [$0];", "l,~{memory}", [value_of("prefetch.tensormap", tensor_map)])


_LANE0 = "\t.reg .pred lead;\n\t.reg .b32 lane;\n\tmov.u32 lane, %laneid;\n\tsetp.eq.u32 lead, lane, 0;\n\t"
"""Inline asm that sets the predicate ``lead`` in the warp's lane 0 (a warp-collective op's issuer)."""


def tma_store_warp(builder: Builder, src: Value, tensor_map: Value, coords: Sequence[Value]) -> None:
    """`cp.async.bulk.tensor.{n}d.global.shared::cta.tile.bulk_group` by the warp's lane 0.

    One box of shared memory at `src` (the tensor map's layout) to the tensor at
    `coords` (i32, innermost first); the hardware clips what lies past the
    tensor's edges. Inline asm for the same reason as :func:`tma_load` (the
    CTA's own 32-bit shared address), with the lane election inside.
    """
    op = "cp.async.bulk.tensor"
    n = len(coords)
    if not 1 <= n <= 5:
        raise ValueError(f"{op}: takes 1 to 5 coordinates, got {n}")
    src = expect_pointer(op, "source", src, SHARED)
    tmap = value_of(op, tensor_map)
    args = [src, tmap, *(expect_type(op, f"coordinate {i}", c, i32) for i, c in enumerate(coords))]
    places = ", ".join(f"${i + 2}" for i in range(n))
    asm = ("{\n" + _LANE0 + f"@lead cp.async.bulk.tensor.{n}d.global.shared::cta.tile.bulk_group "
           f"[$1, {{{places}}}], [$0];\n}}")
    inline_asm(builder, asm, "r,l," + "r," * n + "~{memory}", args)


def bulk_commit_warp(builder: Builder) -> None:
    """`cp.async.bulk.commit_group` by the warp's lane 0 (who issued its bulk stores)."""
    inline_asm(builder, "{\n" + _LANE0 + "@lead cp.async.bulk.commit_group;\n}", "~{memory}", [])


def bulk_wait_warp(builder: Builder, pending: int) -> None:
    """`cp.async.bulk.wait_group.read pending` by the warp's lane 0, then `bar.warp.sync -1`: the
    warp's bulk stores but the last `pending` groups have read their shared memory."""
    if not 0 <= pending <= 7:
        raise ValueError(f"cp.async.bulk.wait_group: pending must be 0 to 7, got {pending}")
    asm = "{\n" + _LANE0 + f"@lead cp.async.bulk.wait_group.read {pending};\n\tbar.warp.sync -1;\n}}"
    inline_asm(builder, asm, "~{memory}", [])


def warp_sync(builder: Builder) -> None:
    """`bar.warp.sync -1`: the warp's lanes meet (and their memory accesses are ordered)."""
    inline_asm(builder, "bar.warp.sync -1;", "~{memory}", [])


def mbarrier_wait(builder: Builder, bar: Value, parity: Value) -> None:
    """Spin on `mbarrier.try_wait.parity.shared::cta.b64` until the phase of `parity` has completed.

    One inline-asm loop (as CUTLASS's `ClusterBarrier::wait`): LLVM has no
    intrinsic that waits, and a loop built from `try_wait` in IR would split
    the kernel's blocks around every wait. `${:uid}` keeps each copy's label unique.
    """
    op = "mbarrier.try_wait.parity"
    bar = expect_pointer(op, "barrier", bar, SHARED)
    parity = expect_type(op, "parity", parity, i32)
    asm = ("{\n\t.reg .pred done;\n"
           "tilec_wait_${:uid}:\n\t"
           "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n\t"
           "@!done bra tilec_wait_${:uid};\n}")
    inline_asm(builder, asm, "r,r,~{memory}", [bar, parity])


def mbarrier_arrive_warp(builder: Builder, bar: Value, cluster: int | None = None) -> None:
    """The warp arrives once on `bar`: `bar.warp.sync` (which orders its lanes' memory
    accesses), then lane 0's `mbarrier.arrive` (release semantics) carries them all. With
    `cluster` (blocks), lane r < cluster arrives on the barrier at `bar`'s offset in the block of rank
    r instead, all at once (`mapa`, then `mbarrier.arrive.shared::cluster`: release at the CTA's
    scope, as CUTLASS's cluster pipelines do; at the cluster's scope each arrival costs a fence that
    made the GEMM 1.75x slower on the H200)."""
    bar = expect_pointer("mbarrier.arrive", "barrier", bar, SHARED)
    head = ("{\n\t.reg .pred lead;\n\t.reg .b32 lane;\n\t"
            "bar.warp.sync -1;\n\t"
            "mov.u32 lane, %laneid;\n\t"
            "setp.eq.u32 lead, lane, 0;\n\t")
    if cluster is None:
        inline_asm(builder, head + "@lead mbarrier.arrive.shared::cta.b64 _, [$0];\n}", "r,~{memory}", [bar])
        return
    if not 2 <= cluster <= 16:
        raise ValueError(f"mbarrier.arrive: a cluster has 2 .. 16 blocks, got {cluster}")
    asm = ("{\n\t.reg .pred lead;\n\t.reg .b32 lane;\n\t.reg .b32 remote;\n\t"
           "bar.warp.sync -1;\n\t"
           "mov.u32 lane, %laneid;\n\t"
           f"setp.lt.u32 lead, lane, {cluster};\n\t"
           "@lead mapa.shared::cluster.u32 remote, $0, lane;\n\t"
           "@lead mbarrier.arrive.shared::cluster.b64 _, [remote];\n}")
    inline_asm(builder, asm, "r,~{memory}", [bar])


# ------------------------------------------------------------ warpgroup MMA (sm_90a)


def wgmma_desc(builder: Builder, base: Value, high: int) -> SSAValue:
    """A wgmma matrix descriptor: the 14-bit start field (shared address / 16) of `base`, OR `high`."""
    base = expect_pointer("wgmma descriptor", "base", base, SHARED)
    address = builder.insert(fast.cast_op(llvm.PtrToIntOp, base, IntegerType(64))).results[0]
    field = builder.insert(fast.binary_op(llvm.LShrOp, address, constant(builder, 4, IntegerType(64)))).res
    field = builder.insert(fast.binary_op(llvm.AndOp, field, constant(builder, (1 << 14) - 1, IntegerType(64)))).res
    return builder.insert(fast.binary_op(llvm.OrOp, field, constant(builder, high, IntegerType(64)))).res


def wgmma_fence(builder: Builder) -> None:
    """`wgmma.fence.sync.aligned`."""
    call_intrinsic(builder, "llvm.nvvm.wgmma.fence.sync.aligned", [])


def wgmma_commit(builder: Builder) -> None:
    """`wgmma.commit_group.sync.aligned`."""
    call_intrinsic(builder, "llvm.nvvm.wgmma.commit_group.sync.aligned", [])


def wgmma(
    builder: Builder,
    desc_a: Value,
    desc_b: Value,
    c: Sequence[Value],
    *,
    n: int,
    dtype: str,
    trans_a: bool = False,
    trans_b: bool = False,
) -> list[SSAValue]:
    """`wgmma.mma_async.sync.aligned.m64n{n}k{16|32}.f32.{dtype}.{dtype}`: D = A·B + C, scale-d = 1.

    Inline asm (LLVM 22 has no intrinsic for it): the `n / 2` accumulators are
    outputs tied to their inputs, so they stay in the same registers. FP8
    (`e4m3`, `e5m2`) is K = 32 and has no transpose operands (K-major only).
    """
    k = {"f16": 16, "bf16": 16, "e4m3": 32, "e5m2": 32, "s8": 32}.get(dtype)
    op = f"wgmma.m64n{n}k{k or 16}.{dtype}"
    if k is None:
        raise ValueError(f"{op}: dtype must be f16, bf16, e4m3, e5m2 or s8, got {dtype!r}")
    eight_bit = k == 32
    if eight_bit and (trans_a or trans_b):
        raise ValueError(f"{op}: 8-bit operands are K-major only (no transpose)")
    integer = dtype == "s8"  # s32 sums, and no scale or transpose operands
    acc_type, reg = (i32, "r") if integer else (f32, "f")
    count = n // 2
    expect_count(op, "C", c, count)
    acc = [expect_type(op, "C", v, acc_type) for v in c]
    da = expect_type(op, "A descriptor", desc_a, IntegerType(64))
    db = expect_type(op, "B descriptor", desc_b, IntegerType(64))
    regs = ", ".join(f"${i}" for i in range(count))
    shape = f"m64n{n}k{k}.s32.s8.s8" if integer else f"m64n{n}k{k}.f32.{dtype}.{dtype}"
    operands = "" if integer else ", 1, 1" + ("" if eight_bit else f", {int(trans_a)}, {int(trans_b)}")
    asm = ("{\n\t.reg .pred p;\n\t"
           f"setp.ne.b32 p, ${count + 2}, 0;\n\t"
           f"wgmma.mma_async.sync.aligned.{shape} "
           f"{{{regs}}}, ${count}, ${count + 1}, p{operands};\n}}")
    constraints = ",".join([f"={reg}"] * count + ["l", "l", "r"] + [str(i) for i in range(count)]) + ",~{memory}"
    result = inline_asm(builder, asm, constraints, [da, db, const_i32(builder, 1), *acc], _struct(count, acc_type))
    assert result is not None
    return extract_values(builder, result, count)


def wgmma_rs(
    builder: Builder,
    a: Sequence[Value],
    desc_b: Value,
    c: Sequence[Value],
    *,
    n: int,
    dtype: str,
    trans_b: bool = False,
) -> list[SSAValue]:
    """`wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype} d, {a0..a3}, descB, ...`: A from
    registers (this lane's four f16/bf16 pairs), D = A·B + C, scale-d = 1.

    Inline asm as `wgmma`; register A has no transpose operand (it is K-major).
    """
    op = f"wgmma.m64n{n}k16.{dtype} (register A)"
    if dtype not in ("f16", "bf16"):
        raise ValueError(f"{op}: dtype must be f16 or bf16, got {dtype!r}")
    count = n // 2
    expect_count(op, "A", a, 4)
    expect_count(op, "C", c, count)
    regs_a = [expect_type(op, "A", v, i32) for v in a]
    acc = [expect_type(op, "C", v, f32) for v in c]
    db = expect_type(op, "B descriptor", desc_b, IntegerType(64))
    regs = ", ".join(f"${i}" for i in range(count))
    places_a = ", ".join(f"${count + i}" for i in range(4))
    asm = ("{\n\t.reg .pred p;\n\t"
           f"setp.ne.b32 p, ${count + 5}, 0;\n\t"
           f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{dtype}.{dtype} "
           f"{{{regs}}}, {{{places_a}}}, ${count + 4}, p, 1, 1, {int(trans_b)};\n}}")
    constraints = ",".join(["=f"] * count + ["r"] * 4 + ["l", "r"] + [str(i) for i in range(count)]) + ",~{memory}"
    result = inline_asm(builder, asm, constraints, [*regs_a, db, const_i32(builder, 1), *acc], _struct(count, f32))
    assert result is not None
    return extract_values(builder, result, count)


def wgmma_wait(builder: Builder, c: Sequence[Value], pending: int) -> list[SSAValue]:
    """`wgmma.wait_group.sync.aligned pending`, passing the accumulators through (tied operands):
    their later readers depend on the wait, so LLVM cannot move a read above it."""
    op = "wgmma.wait_group"
    acc = [expect_type(op, "C", v, f32, i32) for v in c]
    if not acc:
        call_intrinsic(builder, "llvm.nvvm.wgmma.wait_group.sync.aligned",
                       [constant(builder, pending, IntegerType(64))])
        return []
    count = len(acc)
    reg = "r" if acc[0].type == i32 else "f"
    constraints = ",".join([f"={reg}"] * count + [str(i) for i in range(count)]) + ",~{memory}"
    result = inline_asm(builder, f"wgmma.wait_group.sync.aligned {pending};", constraints, acc,
                        _struct(count, acc[0].type))
    assert result is not None
    return extract_values(builder, result, count)


def shfl_sync(
    builder: Builder,
    value: Value,
    lane: Value | int,
    *,
    mode: str = "idx",
    mask: int = FULL_MASK,
    width: int = 32,
) -> SSAValue:
    """`shfl.sync.{mode}.b32`: read `value` (i32 or f32) from another lane.

    `lane` is the source lane (idx), the XOR mask (bfly) or the delta
    (up/down), within segments of `width` lanes.
    """
    op = f"shfl.sync.{mode}"
    if mode not in _SHFL_MODES:
        modes = ", ".join(_SHFL_MODES)
        raise ValueError(f"shfl.sync: mode must be one of {modes}, got {mode!r}")
    if width not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"{op}: width must be a power of two up to 32, got {width}")
    value = expect_type(op, "value", value, i32, f32)
    if isinstance(lane, int):
        lane_value = const_i32(builder, lane)
    else:
        lane_value = expect_type(op, "lane", lane, i32)
    clamp = ((32 - width) << 8) | (0 if mode == "up" else 0x1F)
    suffix = "i32" if value.type == i32 else "f32"
    result = call_intrinsic(
        builder,
        f"llvm.nvvm.shfl.sync.{mode}.{suffix}",
        [const_i32(builder, mask), value, lane_value, const_i32(builder, clamp)],
        value.type,
    )
    assert result is not None
    return result


# ------------------------------------------------------------ math and conversion


def ex2_approx(builder: Builder, x: Value, *, ftz: bool = False) -> SSAValue:
    """`ex2.approx[.ftz].f32`: 2**x, the fast exponential softmax uses."""
    x = expect_type("ex2.approx.f32", "x", x, f32)
    name = "llvm.nvvm.ex2.approx.ftz.f32" if ftz else "llvm.nvvm.ex2.approx.f32"
    result = call_intrinsic(builder, name, [x], f32)
    assert result is not None
    return result


def approx_f32(builder: Builder, op: str, x: Value) -> SSAValue:
    """One of PTX's approximate f32 functions (``lg2``, ``rsqrt``, ``tanh``, ``sin``, ``cos``; ``ex2`` is
    :func:`ex2_approx`): a few ulp, one instruction, what fused softmax and norm kernels use."""
    names = {"lg2": "llvm.nvvm.lg2.approx.f", "rsqrt": "llvm.nvvm.rsqrt.approx.f", "tanh": "llvm.nvvm.tanh.approx.f32",
             "sin": "llvm.nvvm.sin.approx.f", "cos": "llvm.nvvm.cos.approx.f"}
    if op not in names:
        raise ValueError(f"{op}.approx.f32: expected one of {', '.join(names)}")
    x = expect_type(f"{op}.approx.f32", "x", x, f32)
    result = call_intrinsic(builder, names[op], [x], f32)
    assert result is not None
    return result


def pack_f16x2(builder: Builder, lo: Value, hi: Value) -> SSAValue:
    """`cvt.rn.f16x2.f32`: two f32 → one `vector<2xf16>` register, `lo` as element 0."""
    lo = expect_type("cvt.rn.f16x2.f32", "lo", lo, f32)
    hi = expect_type("cvt.rn.f16x2.f32", "hi", hi, f32)
    # PTX puts the first source in the upper half, so `hi` goes first.
    result = call_intrinsic(builder, "llvm.nvvm.ff2f16x2.rn", [hi, lo], F16X2)
    assert result is not None
    return result


def pack_bf16x2(builder: Builder, lo: Value, hi: Value) -> SSAValue:
    """`cvt.rn.bf16x2.f32`: two f32 → one `vector<2xbf16>`, `lo` as element 0."""
    lo = expect_type("cvt.rn.bf16x2.f32", "lo", lo, f32)
    hi = expect_type("cvt.rn.bf16x2.f32", "hi", hi, f32)
    result = call_intrinsic(builder, "llvm.nvvm.ff2bf16x2.rn", [hi, lo], BF16X2)
    assert result is not None
    return result


def round_tf32(builder: Builder, x: Value) -> SSAValue:
    """`cvt.rna.tf32.f32`: f32 rounded to tf32, as the i32 register mma takes."""
    x = expect_type("cvt.rna.tf32.f32", "x", x, f32)
    result = call_intrinsic(builder, "llvm.nvvm.f2tf32.rna", [x], i32)
    assert result is not None
    return result


_FLOATS = (f32, F16X2, BF16X2, f16, bf16)


def fmax(builder: Builder, x: Value, y: Value) -> SSAValue:
    """`max.f32` (and f16/bf16 forms): the larger; a NaN operand is ignored."""
    x = expect_type("max", "x", x, *_FLOATS)
    y = expect_type("max", "y", y, x.type)
    return builder.insert(fast.binary_op(llvm.VectorFMaxOp, x, y)).res


def fmin(builder: Builder, x: Value, y: Value) -> SSAValue:
    """`min.f32` (and f16/bf16 forms): the smaller; a NaN operand is ignored."""
    x = expect_type("min", "x", x, *_FLOATS)
    y = expect_type("min", "y", y, x.type)
    return builder.insert(fast.binary_op(llvm.VectorFMinOp, x, y)).res


# ------------------------------------------------------------ vector loads / stores


def byte_size(type_attr: Attribute) -> int | None:
    """Size in bytes of a scalar or 1-D vector type, None for other types."""
    match type_attr:
        case IntegerType():
            width = type_attr.width.data
            return width // 8 if width % 8 == 0 else None
        case Float8E4M3FNType() | Float8E5M2Type():  # a byte in LLVM IR
            return 1
        case Float16Type() | BFloat16Type():
            return 2
        case Float32Type():
            return 4
        case Float64Type():
            return 8
        case VectorType() if type_attr.get_num_dims() == 1:
            element = byte_size(type_attr.element_type)
            return None if element is None else element * type_attr.get_shape()[0]
        case _:
            return None


def _access_size(op: str, type_attr: Attribute) -> int:
    size = byte_size(type_attr)
    if size not in (4, 8, 16):
        raise ValueError(
            f"{op}: type must be 4, 8 or 16 bytes, got {type_attr} ({size} bytes)"
        )
    return size


def if_then(
    builder: Builder, pred: SSAValue, join_args: Sequence[SSAValue]
) -> tuple[InsertPoint, Block]:
    """Cut the current block at the insertion point into an if-then.

    The current block ends with `cond_br pred, then, join(join_args)`; the
    ops after the insertion point move to `join`, which gets one argument
    per value in `join_args` (the values on the skipped path). Returns the
    end of the empty `then` block, where the caller inserts (through the same
    builder) the guarded ops and a branch to `join`, and the `join` block.
    """
    point = builder.insertion_point
    current, region = point.block, point.block.parent
    if region is None:
        raise ValueError("predicated access: the insertion block must be inside a region")
    then_block = Block()
    join_block = Block(arg_types=[v.type for v in join_args])
    rest = []
    op = point.insert_before
    while op is not None:
        rest.append(op)
        op = op.next_op
    for op in rest:
        op.detach()
    join_block.add_ops(rest)
    region.insert_block_after([then_block, join_block], current)
    builder.insert(
        fast.cond_br_op(pred, then_block, [], join_block, list(join_args)),
        InsertPoint.at_end(current),
    )
    return InsertPoint.at_end(then_block), join_block


def vector_load(
    builder: Builder,
    ptr: Value,
    result_type: Attribute,
    *,
    pred: Value | None = None,
    other: Value | None = None,
) -> SSAValue:
    """A 4-, 8- or 16-byte load (`ld.global.v4.u32` and kin), aligned to its size.

    With `pred` (i1) the load happens only where it is true (under a branch,
    so a false lane never touches memory) and the result is `other` (zero
    by default) elsewhere; the builder then continues after the branch.
    `ptr` is a global or shared pointer. (A predicated PTX load in inline
    asm, as :func:`predicated_store` does for stores, made ptxas spill in
    kernels whose branchy form it allocates without spills.)
    """
    op = "ld.vector"
    size = _access_size(op, result_type)
    ptr = expect_pointer(op, "address", ptr, GLOBAL, SHARED)
    load = fast.load_op(ptr, result_type, alignment=size)
    if pred is None:
        return builder.insert(load).dereferenced_value
    pred = expect_type(op, "predicate", pred, i1)
    other = expect_type(
        op, "other", zero(builder, result_type) if other is None else other, result_type
    )
    then, join = if_then(builder, pred, [other])
    builder.insert(load, then)
    builder.insert(fast.br_op(join, [load.dereferenced_value]), then)
    builder.insertion_point = InsertPoint.at_start(join)
    return join.args[0]


def vector_store(
    builder: Builder, value: Value, ptr: Value, *, pred: Value | None = None
) -> None:
    """A 4-, 8- or 16-byte store aligned to its size; with `pred` (i1) only where true."""
    op = "st.vector"
    value = value_of(op, value)
    size = _access_size(op, value.type)
    ptr = expect_pointer(op, "address", ptr, GLOBAL, SHARED)
    if pred is None:
        builder.insert(fast.store_op(value, ptr, alignment=size))
        return
    predicated_store(builder, value, ptr, expect_type(op, "predicate", pred, i1))


# A predicated store is one PTX instruction under a predicate (`@p st.global.b32`), as Triton
# writes its masked stores, not a branch around an LLVM store: LLVM's passes and ptxas see
# straight-line code (the GEMM epilogue's bounds-checked stores cost no control flow), and ptxas
# predicates the store itself, as it would the branch.
_PREDICATED_BITS = {2: (16, "h"), 4: (32, "r"), 8: (64, "l"), 16: (32, "r")}
"""Access size in bytes -> (register bits, inline asm constraint); 16 bytes are four b32 registers."""


def _space_operand(ptr: SSAValue) -> tuple[str, str]:
    """PTX state space and constraint of an address (shared addresses are 32 bits, --nvptx-short-ptr)."""
    return ("global", "l") if address_space(ptr.type) == GLOBAL else ("shared", "r")


_RED_TYPES = {"f32": ("f32", "f"), "i32": ("s32", "r"), "f64": ("f64", "d"), "i64": ("s64", "l"),
              "f16": ("noftz.f16", "h"), "bf16": ("noftz.bf16", "h")}
"""Value type -> (PTX type of ``red``, inline asm constraint; a 16-bit float travels as its i16 bits)."""


def _as_bits16(builder: Builder, value: SSAValue) -> SSAValue:
    """An f16 / bf16 value as the i16 of its bits (inline asm's ``h`` registers hold integers); others as they are."""
    return bitcast(builder, value, IntegerType(16)) if str(value.type) in ("f16", "bf16") else value


def red_global(builder: Builder, kind: str, value: Value, ptr: Value, pred: Value | None = None) -> None:
    """``[@pred] red.global.{add,max,min}.{f32,s32}``: ``value`` combined into the element at ``ptr``
    atomically, no result (what an ``atomicrmw`` whose result is unused becomes)."""
    op = "red.global"
    value = value_of(op, value)
    ptx_type, reg = _RED_TYPES.get(str(value.type), (None, None))
    if ptx_type is None or (kind != "add" and ptx_type[-3:] in ("f32", "f64", "f16")) or \
            kind not in ("add", "max", "min", "umax", "umin", "and", "or", "xor"):
        raise ValueError(f"{op}: no {kind} of {value.type}")
    bits = ptx_type[1:]
    if kind == "add" and ptx_type == "s64":  # PTX adds 64-bit integers as u64 (the same bits)
        ptx_type = "u64"
    if kind in ("umax", "umin"):  # the bits read unsigned
        kind, ptx_type = kind[1:], f"u{bits}"
    if kind in ("and", "or", "xor"):
        ptx_type = f"b{bits}"
    ptr = expect_pointer(op, "address", ptr, GLOBAL)
    value = _as_bits16(builder, value)
    if pred is None:
        inline_asm(builder, f"red.global.{kind}.{ptx_type} [$0], $1;", f"l,{reg}", [ptr, value])
        return
    pred = expect_type(op, "predicate", pred, i1)
    inline_asm(builder, f"@$0 red.global.{kind}.{ptx_type} [$1], $2;", f"b,l,{reg}", [pred, ptr, value])


_ATOM_PTX = {"add": ("add", {"f32": "f32", "i32": "u32", "f64": "f64", "i64": "u64", "f16": "noftz.f16",
                             "bf16": "noftz.bf16"}),
             "max": ("max", {"i32": "s32", "i64": "s64"}), "min": ("min", {"i32": "s32", "i64": "s64"}),
             "umax": ("max", {"i32": "u32", "i64": "u64"}), "umin": ("min", {"i32": "u32", "i64": "u64"}),
             "exch": ("exch", {"f32": "b32", "i32": "b32", "f64": "b64", "i64": "b64"}),
             "cas": ("cas", {"f32": "b32", "i32": "b32", "f64": "b64", "i64": "b64"}),
             "and": ("and", {"i32": "b32", "i64": "b64"}), "or": ("or", {"i32": "b32", "i64": "b64"}),
             "xor": ("xor", {"i32": "b32", "i64": "b64"})}
"""``frag.atom``'s kinds -> (PTX operation, value type -> PTX type)."""


def atom_global(builder: Builder, kind: str, value: Value, ptr: Value, cmp: Value | None = None,
                pred: Value | None = None) -> SSAValue:
    """``[@pred] atom.acq_rel.gpu.global.<kind>``: ``value`` combined into the element at ``ptr``
    atomically (``cas``: written where the element equals ``cmp``); the element's value from before
    (0 where ``pred`` is false). Acquire-release at GPU scope, Triton's default for its atomics."""
    op = "atom.global"
    value = value_of(op, value)
    operation, types = _ATOM_PTX.get(kind, (None, {}))
    ptx_type = types.get(str(value.type))
    if ptx_type is None:
        raise ValueError(f"{op}: no {kind} of {value.type}")
    reg = _RED_TYPES[str(value.type)][1]
    ptr = expect_pointer(op, "address", ptr, GLOBAL)
    operands, constraints = [ptr], ["l"]
    if cmp is not None:
        operands.append(expect_type(op, "compared value", value_of(op, cmp), value.type))
        constraints.append(reg)
    operands.append(_as_bits16(builder, value))
    constraints.append(reg)
    first = 1 if pred is None else 2
    args = ", ".join(f"${first + k}" for k in range(1, len(operands)))
    instruction = f"atom.acq_rel.gpu.global.{operation}.{ptx_type} $0, [${first}], {args};"
    if pred is not None:
        operands.insert(0, expect_type(op, "predicate", pred, i1))
        constraints.insert(0, "b")
        instruction = f"mov.b{ptx_type[-2:]} $0, 0;\n@$1 {instruction}"
    bits16 = str(value.type) in ("f16", "bf16")
    old = inline_asm(builder, instruction, ",".join([f"={reg}", *constraints]), operands,
                     IntegerType(16) if bits16 else value.type)
    return bitcast(builder, old, value.type) if bits16 else old


def predicated_store(builder: Builder, value: Value, ptr: Value, pred: Value) -> None:
    """`@pred st.{global,shared}` of a 2-, 4-, 8- or 16-byte `value`, aligned to its size."""
    op = "st.predicated"
    value = value_of(op, value)
    size = byte_size(value.type)
    if size not in _PREDICATED_BITS:
        raise ValueError(f"{op}: type must be 2, 4, 8 or 16 bytes, got {value.type} ({size} bytes)")
    ptr = expect_pointer(op, "address", ptr, GLOBAL, SHARED)
    pred = expect_type(op, "predicate", pred, i1)
    space, address = _space_operand(ptr)
    bits, reg = _PREDICATED_BITS[size]
    if size == 16:
        words = value if value.type == _I32X4 else bitcast(builder, value, _I32X4)
        parts = [extract_element(builder, words, i) for i in range(4)]
        asm = f"@$0 st.{space}.v4.b32 [$1], {{$2, $3, $4, $5}};"
        inline_asm(builder, asm, f"b,{address},r,r,r,r", [pred, ptr, *parts])
        return
    raw = value if value.type == IntegerType(bits) else bitcast(builder, value, IntegerType(bits))
    inline_asm(builder, f"@$0 st.{space}.b{bits} [$1], $2;", f"b,{address},{reg}", [pred, ptr, raw])
