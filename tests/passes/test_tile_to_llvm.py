"""tile-to-llvm: the sample kernels to PTX that ptxas accepts, control flow, errors.

Every PTX produced here is assembled by ptxas (sm_80 and sm_90) and must
use no local memory (no spills, no stack frame). Without ptxas those tests
skip and say why; the lowering itself is still checked.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from tilec.api import make_context
from tilec.codegen.ptx import compile_module
from tilec.codegen.ptxas import assemble, find_ptxas, kernel_resources
from tilec.passes.tile_to_llvm import LoweringError, TileToLLVMPass

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "kernels"
ARCHS = ("sm_80", "sm_90")

SAMPLES: dict[str, tuple[str, ...]] = {
    "mma_f16": (
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    ),
    "mma_bf16": (
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    ),
    "mma_tf32": (
        "cvt.rna.tf32.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    ),
}
COMMON = (
    ".maxntid 32, 1, 1",
    "cp.async.cg.shared.global",
    "cp.async.commit_group;",
    "cp.async.wait_group",
    "bar.sync",
    "st.global.v2.b32",
)


@pytest.fixture(scope="module")
def ptxas() -> str:
    found = find_ptxas()
    if found is None:
        pytest.skip("ptxas not found (PATH, nvidia-cuda-nvcc wheel, $CUDA_HOME/bin): "
                    "install 'nvidia-cuda-nvcc>=13' to assemble PTX in tests")
    return str(found)


def parse(text: str, name: str = "<test>") -> ModuleOp:
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module


def lower(text: str, name: str = "<test>") -> ModuleOp:
    module = parse(text, name)
    TileToLLVMPass().apply(make_context(), module)
    module.verify()
    return module


@pytest.fixture(scope="module")
def lowered_samples() -> dict[str, ModuleOp]:
    return {k: lower((EXAMPLES / f"{k}.mlir").read_text(), f"{k}.mlir") for k in SAMPLES}


def assert_clean(ptx: str, arch: str, ptxas: str, kernel: str) -> None:
    """ptxas accepts the PTX for arch and reports no local memory use for kernel."""
    resources = kernel_resources(ptx, arch, ptxas=ptxas)
    assert kernel in resources, resources
    used = resources[kernel]
    assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used
    assert ".local" not in ptx


# ---------------------------------------------------------------- the samples


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kernel", sorted(SAMPLES))
def test_sample_kernel_to_ptx_assembles(kernel: str, arch: str, lowered_samples, ptxas: str) -> None:
    compiled = compile_module(lowered_samples[kernel], arch)
    assert f".target {arch}" in compiled.ptx
    assert f".visible .entry {kernel}(" in compiled.ptx
    for needle in COMMON + SAMPLES[kernel]:
        assert needle in compiled.ptx, f"{needle!r} missing from the PTX of {kernel} for {arch}"
    assert compiled.ptx.count("st.global.v2.b32") == 2
    assert_clean(compiled.ptx, arch, ptxas, kernel)


@pytest.mark.parametrize("kernel", sorted(SAMPLES))
def test_sample_kernel_is_pure_llvm(kernel: str, lowered_samples) -> None:
    module = lowered_samples[kernel]
    names = {op.name for op in module.walk() if op is not module}
    assert all(n.startswith("llvm.") for n in names), names
    (fn,) = [op for op in module.ops if isinstance(op, llvm.FuncOp)]
    assert "nvvm.kernel" in fn.attributes
    assert list(fn.attributes["nvvm.maxntid"].iter_values()) == [32, 1, 1]  # pyright: ignore
    assert fn.linkage.linkage.data == "external"
    # The argument attributes the API reads survive the lowering.
    attrs = [dict(d.data) for d in fn.arg_attrs]  # pyright: ignore
    assert "tile.output" in attrs[2] and "tile.output" not in attrs[0]
    globals_ = {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.GlobalOp)}
    assert set(globals_) == {"sa", "sb"}
    assert all(g.addr_space.value.data == 3 and g.alignment.value.data == 128 for g in globals_.values())  # pyright: ignore


# ---------------------------------------------------------------- control flow, ids, calls

CONTROL_FLOW = """
func.func private @twice(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  func.return %y : f32
}

func.func @control(%src: !llvm.ptr<1>, %dst: !llvm.ptr<1>, %n: index, %k: i32)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 4, 1], smem = 1024>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %tid = tile.thread_id x
  %warp = tile.warp_id
  %bid = tile.block_id x
  %buf = frag.shared "dyn", 0, align 16 : !llvm.ptr<3>
  %lim = arith.index_cast %k : i32 to index
  %sum:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %cnt = %c0) -> (f32, index) {
    %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%a = %acc) -> (f32) {
      %off = arith.addi %i, %j : index
      %off64 = arith.index_cast %off : index to i64
      %p = llvm.getelementptr %src[%off64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
      %inside = arith.cmpi slt, %off, %lim : index
      %v = frag.load %p if %inside : !llvm.ptr<1> -> f32
      %h = frag.load %p if %inside : !llvm.ptr<1> -> f16
      %hf = arith.extf %h : f16 to f32
      %v4 = frag.load %p if %inside : !llvm.ptr<1> -> vector<4xf32>
      %e = vector.extract %v4[3] : f32 from vector<4xf32>
      %s = arith.addf %v, %hf : f32
      %s2 = arith.addf %s, %e : f32
      %a2 = arith.addf %a, %s2 : f32
      scf.yield %a2 : f32
    }
    %cnt2 = arith.addi %cnt, %c1 : index
    scf.yield %inner, %cnt2 : f32, index
  }
  %big = arith.cmpi ugt, %sum#1, %warp : index
  %r = scf.if %big -> (f32) {
    %t = func.call @twice(%sum#0) : (f32) -> f32
    scf.yield %t : f32
  } else {
    %m = frag.fmax %sum#0, %zero
    scf.yield %m : f32
  }
  %lane = tile.lane_id
  %lane32 = arith.index_cast %lane : index to i32
  %x = frag.shfl "bfly" %r, %lane32 : f32
  %t32 = arith.index_cast %tid : index to i32
  %sp = llvm.getelementptr %buf[%t32] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  frag.store %x, %sp : f32, !llvm.ptr<3>
  tile.barrier
  %y = frag.load %sp : !llvm.ptr<3> -> f32
  %bid64 = arith.index_cast %bid : index to i64
  %q = llvm.getelementptr %dst[%bid64] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
  %first = arith.cmpi eq, %tid, %c0 : index
  %yh = arith.truncf %y : f32 to f16
  frag.store %yh, %q if %first : f16, !llvm.ptr<1>
  func.return
}
"""


def test_control_flow_kernel_assembles(ptxas: str) -> None:
    module = lower(CONTROL_FLOW)
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)}
    assert funcs["twice"].linkage.linkage.data == "internal"
    assert "nvvm.kernel" not in funcs["twice"].attributes
    assert list(funcs["control"].attributes["nvvm.maxntid"].iter_values()) == [32, 4, 1]  # pyright: ignore
    (dyn,) = [op for op in module.ops if isinstance(op, llvm.GlobalOp)]
    assert dyn.linkage.linkage.data == "external" and dyn.addr_space.value.data == 3
    for arch in ARCHS:
        ptx = compile_module(module, arch).ptx
        assert ".extern .shared .align 16 .b8 dyn[]" in ptx
        assert "shfl.sync.bfly.b32" in ptx
        assert_clean(ptx, arch, ptxas, "control")


@pytest.mark.parametrize("lit_input", ["frag", "structure", "arith", "scf"])
def test_lit_inputs_lower_and_assemble(lit_input: str, ptxas: str) -> None:
    """The lit tests' inputs (every frag op, ids, arith, scf) give PTX that ptxas accepts."""
    text = (REPO / "tests" / "lit" / "passes" / "tile-to-llvm" / f"{lit_input}.mlir").read_text()
    module = lower(text)
    for arch in ARCHS:
        cubin = assemble(compile_module(module, arch).ptx, arch, ptxas=ptxas)
        assert cubin[:4] == b"\x7fELF"


# ---------------------------------------------------------------- errors

TILE_MMA = """func.func @regs(%a: !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>,
                %b: !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>,
                %c: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) {
  %t = tile.thread_id x
  %d = tile.mma %a, %b, %c transpose_b atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
  func.return
}
"""


def test_unlowered_tile_op_is_an_error_naming_op_and_pass() -> None:
    from tilec.ir.parser import LocatingParser

    module = LocatingParser(make_context(), TILE_MMA, "regs.mlir").parse_module()
    before = str(module)
    with pytest.raises(LoweringError) as info:
        TileToLLVMPass().apply(make_context(), module)
    err = info.value
    assert err.op.name == "tile.mma"
    assert err.location == "regs.mlir:5:8"
    assert "'tile.mma' op at regs.mlir:5:8" in str(err)
    assert "tile-distribute" in str(err)
    assert str(module) == before  # nothing was rewritten


def test_pass_is_registered_with_targets() -> None:
    from tilec.codegen.targets import LLVMIRTarget, PTXTarget
    from tilec.passes.registry import build_pipeline, get_all_targets

    (p,) = build_pipeline("tile-to-llvm").passes
    assert isinstance(p, TileToLLVMPass)
    targets = get_all_targets()
    assert targets["llvm"]() is LLVMIRTarget  # ours, not xDSL's converter
    assert targets["ptx"]() is PTXTarget


# ---------------------------------------------------------------- meaning, without a GPU
#
# A small warp simulator of the fragment-level samples: 32 lanes run the IR
# in lock step; ldmatrix and mma.sync exchange data between lanes as the PTX
# ISA says (written out below, independently of the kernels and of
# tilec.layout). It catches an address or fragment-layout mistake in a
# sample kernel without a GPU; the GPU tests then check the hardware agrees.

import numpy as np  # noqa: E402
from xdsl.dialects import arith, func, scf, vector  # noqa: E402
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, IntegerType  # noqa: E402

from tilec.dialects import frag  # noqa: E402
from tilec.dialects.tile import ops as tile_ops  # noqa: E402

def _bits(t) -> int:
    return t.width.data if isinstance(t, IntegerType) else 64


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) else v


def _elem_bytes(t) -> int:
    return frag.access_bytes(t) or 1


def _lane_program(body, lane: int, args: dict, memory: dict):
    """A generator running one lane; yields at warp-collective ops."""
    env = dict(args)

    def run(block):
        for op in block.ops:
            match op:
                case tile_ops.LaneIdOp():
                    env[op.result] = lane
                case arith.ConstantOp():
                    v = op.value
                    if isinstance(v, IntegerAttr):
                        env[op.result] = v.value.data % (1 << _bits(op.result.type))
                    elif isinstance(v, FloatAttr):
                        env[op.result] = np.float32(v.value.data)
                    else:
                        assert isinstance(v, DenseIntOrFPElementsAttr)
                        env[op.result] = np.array(list(v.get_values()), np.float32)
                case arith.IndexCastOp():
                    env[op.result] = env[op.input] % (1 << _bits(op.result.type))
                case arith.AddiOp() | arith.MuliOp() | arith.AndIOp() | arith.ShRUIOp():
                    x, y, m = env[op.lhs], env[op.rhs], 1 << _bits(op.result.type)
                    env[op.result] = {
                        arith.AddiOp: lambda: (x + y) % m,
                        arith.MuliOp: lambda: (x * y) % m,
                        arith.AndIOp: lambda: x & y,
                        arith.ShRUIOp: lambda: x >> y,
                    }[type(op)]()
                case arith.CmpiOp():
                    name = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
                    assert name == "ult"
                    env[op.result] = env[op.lhs] < env[op.rhs]
                case llvm.GEPOp():
                    (index,) = op.ssa_indices
                    space, offset = env[op.ptr]
                    step = _signed(env[index], _bits(index.type)) * _elem_bytes(op.elem_type)
                    env[op.result] = (space, offset + step)
                case frag.SharedOp():
                    memory.setdefault(op.sym_name.data, np.zeros(op.bytes.value.data, np.uint8))
                    env[op.result] = (op.sym_name.data, 0)
                case frag.CpAsyncOp():
                    n = op.bytes.value.data
                    assert env[op.dst][1] % n == 0 and env[op.src][1] % n == 0, "cp.async needs aligned addresses"
                    _span(memory, env[op.dst], n)[:] = _span(memory, env[op.src], n)
                case frag.CpAsyncCommitOp() | frag.CpAsyncWaitOp():
                    pass
                case tile_ops.BarrierOp():
                    yield ("barrier",)
                case frag.LdMatrixOp():
                    regs = yield ("ldmatrix", op.num.value.data, op.trans is not None, env[op.address])
                    env.update(zip(op.results, regs))
                case frag.MmaOp():
                    regs = yield ("mma", op.atom.data.name, [env[v] for v in op.a], [env[v] for v in op.b],
                                  [env[v] for v in op.c])
                    env.update(zip(op.results, regs))
                case frag.LoadOp():
                    assert _elem_bytes(op.result.type) == 4
                    env[op.result] = _span(memory, env[op.address], 4).view(np.float32)[0]
                case frag.ToTF32Op():
                    bits = int(np.float32(env[op.input]).view(np.uint32))
                    env[op.result] = ((bits + 0x1000) & 0xFFFFE000) % (1 << 32)  # cvt.rna
                case vector.InsertOp():
                    (pos,) = op.static_position.iter_values()
                    v = np.array(env[op.dest], np.float32)
                    v[pos] = env[op.source]
                    env[op.result] = v
                case frag.StoreOp():
                    data = np.asarray(env[op.value], np.float32).view(np.uint8).ravel()
                    assert env[op.address][1] % data.size == 0, "vector store needs an aligned address"
                    _span(memory, env[op.address], data.size)[:] = data
                case scf.IfOp():
                    region = op.true_region if env[op.cond] else op.false_region
                    if region.blocks:
                        yield from run(region.blocks.first)
                case scf.YieldOp() | func.ReturnOp():
                    pass
                case _:
                    raise NotImplementedError(f"the simulator does not know {op.name}")

    yield from run(body)


def _span(memory: dict, address: tuple, n: int) -> np.ndarray:
    """The n bytes at address (a view: writes go to memory); out of bounds fails."""
    space, offset = address
    assert 0 <= offset and offset + n <= memory[space].size, f"{n} bytes at {space}+{offset} are out of bounds"
    return memory[space][offset:offset + n]


def _half(word: int, h: int) -> int:
    return (word >> (16 * h)) & 0xFFFF


def _ldmatrix(requests: list, memory: dict) -> list[list[int]]:
    """PTX ISA: lanes 8i..8i+7 give the row addresses of matrix i; lane l gets, per
    matrix, row l/4, columns 2(l%4) and 2(l%4)+1 (.trans: that column, those rows)."""
    _, num, trans, _ = requests[0]
    mats = []
    for i in range(num):
        rows = []
        for r in range(8):
            address = requests[8 * i + r][3]
            assert address[1] % 16 == 0, "ldmatrix rows are 16-byte aligned"
            rows.append(_span(memory, address, 16).view(np.uint16))
        mats.append(np.array(rows))
    out = []
    for lane in range(32):
        g, q = lane // 4, lane % 4
        regs = []
        for m in mats:
            lo, hi = (m[2 * q, g], m[2 * q + 1, g]) if trans else (m[g, 2 * q], m[g, 2 * q + 1])
            regs.append(int(lo) | int(hi) << 16)
        out.append(regs)
    return out


def _value(bits: int, dtype: str) -> float:
    if dtype == "f16":
        return float(np.uint16(bits).view(np.float16))
    if dtype == "bf16":
        return float(np.uint32(bits << 16).view(np.float32))
    return float(np.uint32(bits).view(np.float32))  # tf32 in a b32 register


def _mma(requests: list) -> list[list[np.float32]]:
    """PTX ISA fragments of mma.m16n8k16 (f16/bf16) and mma.m16n8k8 (tf32); g = l/4, q = l%4."""
    name = requests[0][1]
    k_dim = 8 if name.endswith("tf32") else 16
    A, B, C = np.zeros((16, k_dim)), np.zeros((k_dim, 8)), np.zeros((16, 8))
    for lane, (_, _, a, b, c) in enumerate(requests):
        g, q = lane // 4, lane % 4
        if k_dim == 16:
            dtype = name.rsplit("_", 1)[1]
            for r in range(4):  # a0..a7: rows g, g+8, g, g+8; columns 2q+h (+8 for a4..a7)
                for h in range(2):
                    A[g + 8 * (r & 1), 2 * q + h + 8 * (r >> 1)] = _value(_half(a[r], h), dtype)
            for r in range(2):  # b0..b3: k = 2q+h (+8 for b2, b3), n = g
                for h in range(2):
                    B[2 * q + h + 8 * r, g] = _value(_half(b[r], h), dtype)
        else:  # a0..a3: (g, q), (g+8, q), (g, q+4), (g+8, q+4); b0, b1: (q, g), (q+4, g)
            for r in range(4):
                A[g + 8 * (r & 1), q + 4 * (r >> 1)] = _value(a[r], "tf32")
            for r in range(2):
                B[q + 4 * r, g] = _value(b[r], "tf32")
        for r in range(4):  # c0..c3: (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1)
            C[g + 8 * (r >> 1), 2 * q + (r & 1)] = c[r]
    D = A @ B + C
    return [
        [np.float32(D[lane // 4 + 8 * (r >> 1), 2 * (lane % 4) + (r & 1)]) for r in range(4)]
        for lane in range(32)
    ]


def simulate_warp(text: str, inputs: list[np.ndarray], out_shape: tuple[int, int]) -> np.ndarray:
    """Run a one-warp fragment-level kernel on (a, b) and return its f32 output."""
    module = parse(text)
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    body = fn.body.blocks.first
    out = np.full(out_shape, np.nan, np.float32)
    memory = {f"arg{i}": np.ascontiguousarray(x).view(np.uint8).ravel().copy() for i, x in enumerate(inputs)}
    memory[f"arg{len(inputs)}"] = out.view(np.uint8).ravel().copy()
    args = {arg: (f"arg{i}", 0) for i, arg in enumerate(body.args)}
    lanes = [_lane_program(body, lane, args, memory) for lane in range(32)]
    pending = [next(p, None) for p in lanes]
    while any(r is not None for r in pending):
        assert all(r is not None and r[0] == pending[0][0] for r in pending), "lanes diverged at a warp op"
        kind = pending[0][0]
        replies = (
            _ldmatrix(pending, memory) if kind == "ldmatrix"
            else _mma(pending) if kind == "mma"
            else [None] * 32
        )
        pending = [_send(p, reply) for p, reply in zip(lanes, replies, strict=True)]
    return memory[f"arg{len(inputs)}"].view(np.float32).reshape(out_shape)


def _send(program, value):
    try:
        return program.send(value)
    except StopIteration:
        return None


def _bf16(x: np.ndarray) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


@pytest.mark.parametrize("kernel", sorted(SAMPLES))
def test_sample_kernel_computes_the_product_in_a_warp_simulator(kernel: str) -> None:
    rng = np.random.default_rng()
    text = (EXAMPLES / f"{kernel}.mlir").read_text()
    if kernel == "mma_f16":
        a, b = rng.standard_normal((16, 16)).astype(np.float16), rng.standard_normal((16, 8)).astype(np.float16)
        got = simulate_warp(text, [a, np.ascontiguousarray(b.T)], (16, 8))  # B given column-major
        ref, tol = a.astype(np.float64) @ b.astype(np.float64), 1e-5
    elif kernel == "mma_bf16":
        a, b = _bf16(rng.standard_normal((16, 16))), _bf16(rng.standard_normal((16, 8)))
        got = simulate_warp(text, [a, b], (16, 8))  # B row-major
        wide = lambda x: (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
        ref, tol = wide(a) @ wide(b), 1e-5
    else:
        a, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
        got = simulate_warp(text, [a, b], (16, 8))
        ref, tol = a.astype(np.float64) @ b.astype(np.float64), 1e-2  # tf32 inputs
    assert not np.isnan(got).any(), got
    err = np.abs(got - ref).max() / np.abs(ref).max()
    assert err < tol, f"{kernel}: relative error {err:.2e}\n{got}\n{ref}"


# ---------------------------------------------------------------- scf -> branches, against xDSL's patterns


def _xdsl_scf_to_cf(module: ModuleOp, _builder) -> None:
    """The reference: xDSL's convert-scf-to-cf patterns (cf.br/cf.cond_br, lowered in step 4), which
    insert through their own rewriter, not the pass's builder."""
    from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
    from xdsl.transforms.convert_scf_to_cf import ForLowering, IfLowering

    walker = PatternRewriteWalker(GreedyRewritePatternApplier([IfLowering(), ForLowering()], dce_enabled=False),
                                  apply_recursively=False)
    walker.rewrite_module(module)


@pytest.mark.parametrize("config", ["64x64x32/2x2/3", "128x128x8/simt", "64x64x64/2x2/4/aligned"])
def test_scf_lowering_matches_xdsls_patterns(config, monkeypatch):
    from tilec.kernels.gemm_config import MatmulConfig
    from tilec.kernels.gemm_ir import MatmulSpec, build_module
    from tilec.passes import tile_to_llvm
    from tilec.passes.registry import build_pipeline

    block, rest = config.split("/", 1)
    dims = tuple(int(x) for x in block.split("x"))
    if rest == "simt":
        spec = MatmulSpec("float32", "float32", bias_dtype="float32", activation="relu")
        cfg = MatmulConfig(dims, stages=3, thread_tile=(8, 8))
    else:
        warps, stages, *aligned = rest.split("/")
        spec = MatmulSpec("float16", "float32", transpose_b=True, align=16 if aligned else 0)
        cfg = MatmulConfig(dims, tuple(int(x) for x in warps.split("x")), int(stages))
    module = build_module(spec)
    build_pipeline(cfg.pipeline_to("tile-distribute")).apply(make_context(), module)
    ours, reference = module.clone(), module.clone()
    TileToLLVMPass().apply(make_context(), ours)
    monkeypatch.setattr(tile_to_llvm, "_scf_to_cf", _xdsl_scf_to_cf)
    TileToLLVMPass().apply(make_context(), reference)
    assert str(ours) == str(reference)
