"""tile-layout + tile-distribute: warp-level tile IR → fragment-level IR.

- fragments: the layouts built from the MMA atoms agree with the PTX ISA's
  fragment tables and ThunderKittens' rt_base; ldmatrix plans reproduce them
  lane by lane; SIMT fragments number lanes as tile-tiling does;
- the output of the contract kernel (examples/levels/gemm_warp_level.mlir):
  only fragment-level ops, the kernel ABI of pointers, extents and strides,
  ``tile.registers``;
- variants of the contract (swizzled shared layouts, bf16, B stored N x K,
  tf32, cp.async, tile-pipeline's multi-stage buffers, the SIMT fma path) go
  through tile-to-llvm to PTX that ptxas assembles for sm_80 and sm_90 with
  no spills;
- meaning: each variant runs in the tile-level interpreter before and in the
  lane-level interpreter (tilec.interp.lanes) after the pass on ragged shapes
  (17x33x65, 100x70x45, 64x64x32), and both agree with a float64 reference;
- errors: a register budget over 255 names the tile and the count.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from tilec.api import make_context
from tilec.codegen.ptx import compile_module
from tilec.codegen.ptxas import find_ptxas, kernel_resources
from tilec.dialects import frag
from tilec.layout import MMA_M16N8K8_TF32, MMA_M16N8K16_F16
from tilec.passes.tile_distribute import TileDistributePass
from tilec.passes.tile_layout import TileLayoutPass
from tilec.passes.fragments import (
    FragmentError,
    check_ldmatrix,
    fma_fragment,
    linear_fields,
    mma_fragment,
    plan_ldmatrix,
)
from tilec.layout import MMA_M16N8K32_S8
from tilec.passes.tile_to_llvm import TileToLLVMPass

REPO = Path(__file__).resolve().parents[2]
CONTRACT = (REPO / "examples" / "levels" / "gemm_warp_level.mlir").read_text()
ARCHS = ("sm_80", "sm_90")
SHAPES = [(17, 33, 65), (100, 70, 45), (64, 64, 32)]


# ---------------------------------------------------------------- the kernels


def _layout_and_distribute(module):
    """tile-layout then tile-distribute (what the tile-regalloc alias runs)."""
    TileLayoutPass().apply(make_context(), module)
    TileDistributePass().apply(make_context(), module)


def _sub(text: str, old: str, new: str, count: int | None = None) -> str:
    n = text.count(old)
    assert n and (count is None or n == count), f"the contract changed: {old!r} found {n} times"
    return text.replace(old, new)


def _swizzled(text: str) -> str:
    text = _sub(text, "(64,32):(32,1)>", "Sw<2,3,3> o 0 o (64,32):(32,1)>")
    return _sub(text, "(32,64):(64,1)>", "Sw<3,3,3> o 0 o (32,64):(64,1)>")


def _async(text: str) -> str:
    text = _sub(text, "tile.copy %a[%row0, %k]", "tile.async_copy %a[%row0, %k]", 1)
    text = _sub(text, "tile.copy %b[%k, %col0]", "tile.async_copy %b[%k, %col0]", 1)
    return _sub(text, "    tile.barrier\n    %ra", "    tile.async_commit\n    tile.async_wait 0\n    tile.barrier\n    %ra", 1)


def _f32(text: str, atom: str) -> str:
    """f32 in and out: tf32 tensor cores or SIMT fmas (copies of 4 floats per thread)."""
    text = _sub(text, "f16", "f32")
    text = _sub(text, "val <(1,8):(1,1)>", "val <(1,4):(1,1)>")
    text = _sub(text, "smem = 8192", "smem = 16384", 1)
    text = _sub(text, "    %h = arith.truncf %r : f32 to f32\n    tile.yield %h : f32", "    tile.yield %r : f32", 1)
    return _sub(text, "atom <mma_m16n8k16_f32>", atom, 1)


def _transposed_b(text: str) -> str:
    """B given N x K (row-major), read as ``transpose_b``: a swizzled 64x32 shared tile, plain ldmatrix."""
    st = "!tile.st<64x32xf16, Sw<2,3,3> o 0 o (64,32):(32,1)>"
    text = _sub(text, "%sb = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>", f"%sb = tile.alloc : {st}", 1)
    text = _sub(
        text,
        "tile.copy %b[%k, %col0] -> %sb thr <(16,8):(8,1)> val <(1,8):(1,1)> "
        ": !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>",
        f"tile.copy %b[%col0, %k] -> %sb thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> {st}",
        1,
    )
    text = _sub(
        text,
        "%rb = tile.load %sb[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)>",
        f"%rb = tile.load %sb[%wcol, %c0] : {st}",
        1,
    )
    text = _sub(text, "tile.mma %ra, %rb, %acc_i atom", "tile.mma %ra, %rb, %acc_i transpose_b atom", 1)
    return _sub(text, "%N = tile.dim %b, 1", "%N = tile.dim %b, 0", 1)


def _pipelined(text: str) -> str:
    try:
        from tilec.passes.tile_pipeline import TilePipelinePass
    except ImportError as e:  # another pass of the pipeline, built separately
        pytest.skip(f"tile-pipeline is not available: {e}")
    module = _parse(text)
    TilePipelinePass(stages=3).apply(make_context(), module)
    return str(module)


VARIANTS = {
    "contract": lambda: CONTRACT,
    "swizzle": lambda: _swizzled(CONTRACT),
    "bf16": lambda: _sub(_swizzled(CONTRACT), "f16", "bf16"),
    "b_transposed": lambda: _transposed_b(CONTRACT),
    "tf32": lambda: _f32(_swizzled(CONTRACT), "atom <mma_m16n8k8_tf32>"),
    "async": lambda: _async(_swizzled(CONTRACT)),
    "pipelined": lambda: _pipelined(_swizzled(CONTRACT)),
    "simt": lambda: _f32(CONTRACT, "atom <fma_f32> {tile.thread_tile = array<i64: 4, 8>}"),
}
"""name -> the warp-level program (64x64x32 blocks of 2x2 warps, relu(A @ B + bias))."""

INPUTS = {"bf16": "bf16", "tf32": "f32", "simt": "f32"}  # element type of A, B and C, else f16


def _parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


@lru_cache(maxsize=None)
def source(name: str) -> str:
    return VARIANTS[name]()


@lru_cache(maxsize=None)
def regalloc(name: str) -> ModuleOp:
    module = _parse(source(name))
    _layout_and_distribute(module)
    module.verify()
    return module


def kernel(module: ModuleOp) -> func.FuncOp:
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return fn


# ---------------------------------------------------------------- fragments


def test_mma_fragments_are_the_ptx_tables():
    c = mma_fragment(MMA_M16N8K16_F16, "C", (32, 32))
    a = mma_fragment(MMA_M16N8K16_F16, "A", (32, 32))
    b = mma_fragment(MMA_M16N8K16_F16, "B", (32, 32), transposed=True)  # a K x N tile
    assert (c.num_values, a.num_registers, b.num_registers) == (32, 16, 16)
    assert c.tiles == (2, 4) and a.tiles == (2, 2) and b.tiles == (4, 2)
    for lane in range(32):
        g, q = lane // 4, lane % 4
        assert [c.coord(lane, v) for v in range(4)] == [(g, 2 * q), (g, 2 * q + 1), (g + 8, 2 * q), (g + 8, 2 * q + 1)]
        # value 4 is the next 16x8 atom down (mi = 1), value 8 the next one right (ni = 1)
        assert c.coord(lane, 4) == (g + 16, 2 * q) and c.coord(lane, 8) == (g, 2 * q + 8)
        # rt_base: a0 = (g, 2q..), a1 = (g+8, 2q..), a2 = (g, 2q+8..), a3 = (g+8, 2q+8..)
        assert [a.coord(lane, 2 * r) for r in range(4)] == [(g, 2 * q), (g + 8, 2 * q), (g, 2 * q + 8), (g + 8, 2 * q + 8)]
        # B (k, n): b0 = k 2q..2q+1 at column g, b1 = k + 8
        assert [b.coord(lane, v) for v in range(4)] == [(2 * q, g), (2 * q + 1, g), (2 * q + 8, g), (2 * q + 9, g)]
    tf = mma_fragment(MMA_M16N8K8_TF32, "A", (16, 8))
    for lane in range(32):
        g, q = lane // 4, lane % 4
        assert [tf.coord(lane, v) for v in range(4)] == [(g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4)]


def test_ldmatrix_plans_reproduce_the_fragments():
    a = mma_fragment(MMA_M16N8K16_F16, "A", (32, 32))
    plan = plan_ldmatrix(a, contig=1)  # row-major A: 8 contiguous k per row
    assert [(ld.num, ld.trans) for ld in plan] == [(4, False)] * 4
    # ThunderKittens: lane l points at row l % 16, column 8 * (l / 16)
    assert [plan[0].lane_row(lane) for lane in range(32)] == [(lane % 16, 8 * (lane // 16)) for lane in range(32)]
    b_kn = mma_fragment(MMA_M16N8K16_F16, "B", (32, 32), transposed=True)
    assert [(ld.num, ld.trans) for ld in plan_ldmatrix(b_kn, contig=1)] == [(4, True)] * 4
    b_nk = mma_fragment(MMA_M16N8K16_F16, "B", (32, 32))
    assert [(ld.num, ld.trans) for ld in plan_ldmatrix(b_nk, contig=1)] == [(4, False)] * 4
    assert [(ld.num, ld.trans) for ld in plan_ldmatrix(mma_fragment(MMA_M16N8K16_F16, "B", (16, 8), True), 1)] == [(2, True)]
    for fr in (a, b_kn, b_nk):
        for contig in (0, 1):
            check_ldmatrix(fr, plan_ldmatrix(fr, contig))
    assert plan_ldmatrix(mma_fragment(MMA_M16N8K16_F16, "C", (16, 8)), 1) is None  # f32: no ldmatrix


def test_ldmatrix_plans_of_8_bit_operands():
    """The s8 atom's A (M x K) and B (N x K) contiguous along K: each lane's four bytes are its half of a
    row of 16-bit units, so ldmatrix (no .trans) fills them; contiguous along M or N it cannot."""
    a = mma_fragment(MMA_M16N8K32_S8, "A", (32, 64))
    plan = plan_ldmatrix(a, contig=1)
    assert [(ld.num, ld.trans) for ld in plan] == [(4, False)] * 4 and a.packing == 4
    assert [plan[0].lane_row(lane) for lane in range(32)] == [(lane % 16, 16 * (lane // 16)) for lane in range(32)]
    b_nk = mma_fragment(MMA_M16N8K32_S8, "B", (32, 64))
    assert [(ld.num, ld.trans) for ld in plan_ldmatrix(b_nk, contig=1)] == [(4, False)] * 4
    for fr in (a, b_nk):
        check_ldmatrix(fr, plan_ldmatrix(fr, 1))
        assert plan_ldmatrix(fr, 0) is None  # bytes along M or N: a .trans would move 16-bit units


def test_fma_fragments_number_lanes_row_major():
    c = fma_fragment("C", (32, 32), (8, 4), (4, 8))
    a = fma_fragment("A", (32, 32), (8, 4), (4, 8))
    b = fma_fragment("B", (32, 32), (8, 4), (4, 8), transposed=True)
    for lane in range(32):
        i, j = lane // 4, lane % 4
        assert c.coord(lane, 0) == (4 * i, 8 * j) and c.coord(lane, 1 + 4 * 2) == (4 * i + 1, 8 * j + 2)
        assert a.coord(lane, 3 + 4 * 5) == (4 * i + 3, 5)
        assert b.coord(lane, 7 + 8 * 6) == (6, 8 * j + 7)
    with pytest.raises(FragmentError, match="not a warp"):
        fma_fragment("C", (32, 32), (4, 4), (8, 8))


def test_linear_fields():
    assert linear_fields([3 * (t % 4) + 10 * (t // 4) for t in range(32)])[0] == 0
    assert linear_fields([t % 3 for t in range(32)]) is None


# ---------------------------------------------------------------- the output


def _names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op is not module]


def test_contract_becomes_fragment_level():
    module = regalloc("contract")
    fn = kernel(module)
    names = _names(module)
    tile_ops = {n for n in names if n.startswith("tile.")}
    assert tile_ops <= {"tile.block_id", "tile.warp_id", "tile.lane_id", "tile.thread_id", "tile.barrier"}
    # one 32x32x32 warp step: A 2x2 and B 2x2 ldmatrix.x4 (B with .trans), 2x4x2 mma.sync
    lds = [op for op in module.walk() if isinstance(op, frag.LdMatrixOp)]
    assert sorted((op.num.value.data, op.trans is not None) for op in lds) == [(4, False)] * 4 + [(4, True)] * 4
    assert names.count("frag.mma") == 16
    # the accumulator: 32 f32 per lane, carried by the K loop
    (loop,) = [op for op in module.walk() if op.name == "scf.for"]
    assert len(loop.results) == 32 and all(str(r.type) == "f32" for r in loop.results)
    assert fn.attributes["tile.registers"].value.data <= 255
    assert "frag.cp_async" not in names and "frag.cp_async" in _names(regalloc("async"))


def test_kernel_abi():
    fn = kernel(regalloc("contract"))
    args = [(a.name_hint, str(a.type), dict(d.data)) for a, d in zip(fn.args, fn.arg_attrs.data)]
    assert [n for n, _, _ in args] == [
        "a", "a_dim0", "a_dim1", "a_stride0", "a_stride1",
        "b", "b_dim0", "b_dim1", "b_stride0", "b_stride1",
        "c", "c_dim0", "c_dim1", "c_stride0", "c_stride1",
        "bias", "bias_dim0", "bias_stride0",
    ]
    name, ty, attrs = args[0]
    assert ty == "!llvm.ptr<1>" and str(attrs["tile.dtype"]) == "f16" and attrs["tile.gl"].data == "a"
    assert "tile.output" in args[10][2] and "tile.output" not in args[0][2]
    assert args[1][1] == "i64" and args[1][2]["tile.dim"].value.data == 0
    assert args[4][2]["tile.stride"].value.data == 1 and args[4][2]["tile.gl"].data == "a"
    assert str(args[15][2]["tile.dtype"]) == "f32"


def test_register_budget_is_enforced():
    text = """
func.func @big(%a: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %sa = tile.alloc : !tile.st<128x16xf16>
  %sb = tile.alloc : !tile.st<16x128xf16>
  %acc = tile.zeros : !tile.rt<128x128xf32>
  %ra = tile.load %sa : !tile.st<128x16xf16> -> !tile.rt<128x16xf16>
  %rb = tile.load %sb : !tile.st<16x128xf16> -> !tile.rt<16x128xf16>
  %d = tile.mma %ra, %rb, %acc atom <mma_m16n8k16_f16> : !tile.rt<128x16xf16>, !tile.rt<16x128xf16>, !tile.rt<128x128xf32> -> !tile.rt<128x128xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<128x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
"""
    with pytest.raises(PassFailedException, match=r"more than 255.*128x128xf32.* 512"):
        _layout_and_distribute(_parse(text))


# ---------------------------------------------------------------- PTX


@pytest.fixture(scope="module")
def ptxas() -> str:
    found = find_ptxas()
    if found is None:
        pytest.skip("ptxas not found (PATH, nvidia-cuda-nvcc wheel, $CUDA_HOME/bin): install 'nvidia-cuda-nvcc>=13'")
    return str(found)


@lru_cache(maxsize=None)
def lowered(name: str) -> ModuleOp:
    module = regalloc(name).clone()
    TileToLLVMPass().apply(make_context(), module)
    module.verify()
    return module


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("arch", ARCHS)
def test_variant_assembles_without_spills(name: str, arch: str, ptxas: str):
    module = lowered(name)
    assert all(n.startswith("llvm.") for n in _names(module))
    ptx = compile_module(module, arch).ptx
    used = kernel_resources(ptx, arch, ptxas=ptxas)["gemm"]
    assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used
    assert used.registers <= 255
    if name != "simt":
        assert "mma.sync.aligned" in ptx
    if name in ("contract", "swizzle", "bf16", "b_transposed", "async", "pipelined"):
        assert "ldmatrix.sync.aligned.m8n8.x4" in ptx
    if name in ("async", "pipelined"):
        assert "cp.async.cg.shared.global" in ptx


# ---------------------------------------------------------------- meaning


@pytest.fixture(scope="module")
def lanes():
    try:
        from tilec.interp import lanes
    except ImportError as e:
        pytest.skip(f"the lane-level interpreter tilec.interp.lanes is missing ({e}): cannot run fragment-level IR")
    with pytest.MonkeyPatch.context() as patch:
        _ensure_ptrtoint(lanes, patch)
        yield lanes


def _ensure_ptrtoint(lanes, patch: pytest.MonkeyPatch) -> None:
    """The kernels check their pointers' alignment with ``llvm.ptrtoint``; while the lane
    interpreter lacks that op, give it one for these tests (an array's address is its byte
    offset: numpy arrays start suitably aligned)."""
    from dataclasses import dataclass

    from xdsl.interpreter import InterpreterFunctions, impl, register_impls

    probe = lanes.make_lane_interpreter(ModuleOp([]), lanes.LaneState())
    if llvm.PtrToIntOp in probe._impls._impl_dict:  # pyright: ignore[reportPrivateUsage]
        return

    @register_impls
    @dataclass
    class _PtrToInt(InterpreterFunctions):
        @impl(llvm.PtrToIntOp)
        def run_ptrtoint(self, interpreter, op, args):
            return (np.asarray(args[0].offsets, dtype=np.int64).copy(),)

    make = lanes.make_lane_interpreter

    def with_ptrtoint(module, state):
        interpreter = make(module, state)
        interpreter.register_implementations(_PtrToInt())
        return interpreter

    patch.setattr(lanes, "make_lane_interpreter", with_ptrtoint)


def _view(x: np.ndarray) -> list:
    """A numpy array as the kernel's (pointer, extents..., strides...) arguments."""
    return [x, *x.shape, *(s // x.itemsize for s in x.strides)]


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_meaning_before_and_after(name: str, shape, lanes):
    from tilec.interp import round_bf16, run

    m, n, k = shape
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    dtype = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}[INPUTS.get(name, "f16")]
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if name == "b_transposed" else (k, n)).astype(dtype)
    if name == "bf16":
        a, b = round_bf16(a), round_bf16(b)
    bias = rng.standard_normal(n).astype(np.float32)
    grid = (-(-m // 64) * -(-n // 64), 1, 1)

    before = np.full((m, n), np.nan, dtype)
    run(_parse(source(name)), "gemm", a, b, before, bias, grid=grid)

    after = np.full((m, n), np.nan, dtype)
    if name == "bf16":  # the kernel reads and writes 16-bit bf16 bits
        bits = np.full((m, n), 0x7FC0, np.uint16)
        run(regalloc(name), "gemm", *_view(_bf16_bits(a)), *_view(_bf16_bits(b)), *_view(bits), *_view(bias), grid=grid)
        after = (bits.astype(np.uint32) << 16).view(np.float32)
    else:
        run(regalloc(name), "gemm", *_view(a), *_view(b), *_view(after), *_view(bias), grid=grid)

    ref = np.maximum(a.astype(np.float64) @ (b.T if name == "b_transposed" else b).astype(np.float64) + bias, 0)
    scale = max(np.abs(ref).max(), 1e-12)
    tol = {np.float16: 2e-3, np.float32: 1e-5}[dtype] if name not in ("bf16", "tf32") else 1e-2
    assert not np.isnan(after).any()
    for got in (before, after):
        assert np.abs(got.astype(np.float64) - ref).max() / scale < tol
    assert np.abs(after.astype(np.float64) - before.astype(np.float64)).max() / scale < tol


def test_meaning_of_strided_views(lanes):
    """Views that are not contiguous, or whose rows are not vector-aligned, take the element paths."""
    from tilec.interp import run

    m, n, k = 70, 45, 45
    rng = np.random.default_rng(7)
    base_a = rng.standard_normal((m, 48)).astype(np.float16)  # 16-byte aligned rows, ragged K
    a = base_a[:, :k]
    base_b = rng.standard_normal((n, k)).astype(np.float16)  # B as the transpose of an N x K array
    b = base_b.T
    bias = rng.standard_normal(n).astype(np.float32)
    c = np.full((m, 64), np.nan, np.float16)
    args = [base_a, m, k, 48, 1, base_b, k, n, 1, k, c, m, n, 64, 1, bias, n, 1]
    run(regalloc("contract"), "gemm", *args, grid=(2, 1, 1))
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert np.abs(c[:, :n] - ref).max() / np.abs(ref).max() < 2e-3
    assert np.isnan(c[:, n:]).all()  # nothing written past the view


ROWS = """
func.func @rows(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %z: !tile.gl<f16, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %r = tile.load %a[%c0, %c16] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>
  tile.store %r, %c[%c0, %c16] : !tile.rt<16x16xf16> -> !tile.gl<f16, [?, ?]>
  tile.store %r, %z[%c0, %c0] : !tile.rt<16x16xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
"""


def test_meaning_of_aligned_rows(lanes):
    """Register tiles to and from views with tile.aligned_rows: each run of two f16 moves as one
    predicated vector or not at all (tests/lit/passes/tile-distribute/aligned_rows.mlir), which is
    what the tile interpreter does element by element on a view whose window is cut off at
    row 13 and column 24: what lies outside reads as zeros and is never written."""
    from tilec.interp import run

    rng = np.random.default_rng(3)
    a = rng.standard_normal((13, 24)).astype(np.float16)
    expected_z = np.zeros((16, 16), np.float16)
    expected_z[:13, :8] = a[:, 16:]

    def outputs():
        return np.full((13, 24), np.nan, np.float16), np.full((16, 16), np.nan, np.float16)

    c, z = outputs()
    run(_parse(ROWS), "rows", a, c, z)
    lowered = _parse(ROWS)
    _layout_and_distribute(lowered)
    c_after, z_after = outputs()
    run(lowered, "rows", *_view(a), *_view(c_after), *_view(z_after))
    for got_c, got_z in ((c, z), (c_after, z_after)):
        np.testing.assert_array_equal(got_c[:, 16:], a[:, 16:])
        assert np.isnan(got_c[:, :16]).all()
        np.testing.assert_array_equal(got_z, expected_z)


NARROW = """
func.func @narrow(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = ALIGN : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = ALIGN : i64})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 512>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x16xf16>
  tile.async_copy %a[%c0, %c0] -> %s thr <(16,2):(2,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<16x16xf16>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %r = tile.load %s : !tile.st<16x16xf16> -> !tile.rt<16x16xf16>
  tile.store %r, %c[%c0, %c0] : !tile.rt<16x16xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
"""


@pytest.mark.parametrize("elem,align,cols", [("f16", 8, 12), ("f16", 4, 14), ("f16", 2, 13), ("f32", 4, 13)])
def test_meaning_of_narrow_rows(lanes, elem, align, cols):
    """A 16x16 window of a 13 x ``cols`` view with ``tile.aligned_rows = align`` below 16 bytes
    (tests/lit/passes/tile-distribute/narrow_rows.mlir): cp.async of ``align`` bytes (one per f32
    element for 4-byte f32 rows), or element loads for 2, and element stores; the same result as
    the tile interpreter's, zeros outside not written."""
    from tilec.interp import run

    text = NARROW.replace("ALIGN", str(align)).replace("f16", elem).replace("smem = 512", "smem = 1024")
    dtype = {"f16": np.float16, "f32": np.float32}[elem]
    a = np.random.default_rng(align).standard_normal((13, cols)).astype(dtype)
    c = np.full((13, cols), np.nan, dtype)
    run(_parse(text), "narrow", a, c)
    np.testing.assert_array_equal(c, a)
    lowered = _parse(text)
    _layout_and_distribute(lowered)
    wanted = {8: "8 ignore_src", 4: "4 ignore_src", 2: "frag.load"}[align]
    assert wanted in str(lowered)
    c = np.full((13, cols), np.nan, dtype)
    run(lowered, "narrow", *_view(a), *_view(c))
    np.testing.assert_array_equal(c, a)


MISC = """
func.func @misc(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %r: !tile.gl<f32, [?, ?]>, %c: !tile.gl<f32, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 4096>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c20 = arith.constant 20 : index
  %M = tile.dim %a, 0 : !tile.gl<f16, [?, ?]>
  %warp = tile.warp_id
  %wrow = arith.muli %warp, %c16 : index
  %sa = tile.alloc : !tile.st<32x16xf16>
  %sb = tile.alloc : !tile.st<16x8xf16>
  %sc = tile.alloc : !tile.st<32x8xf32>
  tile.copy %a[%c0, %c0] -> %sa : !tile.gl<f16, [?, ?]> -> !tile.st<32x16xf16>
  tile.copy %b[%c0, %c0] -> %sb : !tile.gl<f16, [?, ?]> -> !tile.st<16x8xf16>
  tile.barrier
  %ra = tile.load %sa[%wrow, %c0] : !tile.st<32x16xf16> -> !tile.rt<16x16xf16>
  %rb = tile.load %sb : !tile.st<16x8xf16> -> !tile.rt<16x8xf16>
  %zero = tile.zeros : !tile.rt<16x8xf32>
  %d = tile.mma %ra, %rb, %zero atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  %res = tile.load %r[%wrow, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x8xf32>
  %big = arith.cmpi ugt, %M, %c20 : index
  %e = scf.if %big -> (!tile.rt<16x8xf32>) {
    %x = tile.add %d, %res : !tile.rt<16x8xf32>
    scf.yield %x : !tile.rt<16x8xf32>
  } else {
    %y = tile.relu %d : !tile.rt<16x8xf32>
    scf.yield %y : !tile.rt<16x8xf32>
  }
  tile.store %e, %sc[%wrow, %c0] : !tile.rt<16x8xf32> -> !tile.st<32x8xf32>
  tile.barrier
  %f = tile.load %sc[%wrow, %c0] : !tile.st<32x8xf32> -> !tile.rt<16x8xf32>
  tile.store %f, %c[%wrow, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
"""


@pytest.mark.parametrize("m,k", [(32, 16), (19, 13)])
def test_meaning_of_branches_and_shared_staging(m: int, k: int, lanes):
    """Copies without thr/val layouts, a tile-valued scf.if, elementwise ops, register tiles
    stored to and loaded from shared memory, a register tile loaded from global memory."""
    from tilec.interp import run

    rng = np.random.default_rng(m)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, 7)).astype(np.float16)
    r = rng.standard_normal((m, 7)).astype(np.float32)
    module = _parse(MISC)
    _layout_and_distribute(module)
    c = np.full((m, 7), np.nan, np.float32)
    run(module, "misc", *_view(a), *_view(b), *_view(r), *_view(c))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    ref = ref + r if m > 20 else np.maximum(ref, 0)
    assert np.abs(c - ref).max() < 1e-5 * max(1, np.abs(ref).max())


def test_meaning_of_tiled_transposes(lanes):
    """tile-tiling's program for C = A^T B^T (A stored K x M: ldmatrix .trans for A, plain for B)."""
    try:
        from tilec.passes.tile_tiling import TileTilingPass
    except ImportError as e:
        pytest.skip(f"tile-tiling is not available: {e}")
    from tilec.interp import run

    text = """
func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c transpose_a transpose_b : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}
"""
    module = _parse(text)
    TileTilingPass(block=(64, 64, 32), warps=(2, 2)).apply(make_context(), module)
    _layout_and_distribute(module)
    lds = [op for op in module.walk() if isinstance(op, frag.LdMatrixOp)]
    assert sorted(op.trans is not None for op in lds) == [False] * 4 + [True] * 4
    m, n, k = 17, 33, 65
    rng = np.random.default_rng(3)
    a = rng.standard_normal((k, m)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    run(module, "gemm", *_view(a), *_view(b), *_view(c), grid=(1, 1, 1))
    ref = a.T.astype(np.float64) @ b.T.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 2e-3


def test_default_pipeline_end_to_end(ptxas: str, lanes):
    """examples/gemm.mlir through tile-tiling (128x128x32, 2x2 warps of 64x64), tile-swizzle and
    tile-pipeline{stages=3}, then tile-regalloc: PTX without spills, and the right numbers."""
    try:
        from tilec.passes.tile_pipeline import TilePipelinePass
        from tilec.passes.tile_swizzle import TileSwizzlePass
        from tilec.passes.tile_tiling import TileTilingPass
    except ImportError as e:
        pytest.skip(f"an earlier pass is not available: {e}")

    module = _parse((REPO / "examples" / "gemm.mlir").read_text())
    ctx = make_context()
    for p in (TileTilingPass(), TileSwizzlePass(), TilePipelinePass(stages=3), TileLayoutPass(), TileDistributePass()):
        p.apply(ctx, module)
    _gemm_lanes_then_ptxas(module, (130, 200, 70), np.float16, 2e-3, ptxas, seed=11)


def _gemm_lanes_then_ptxas(module, mnk, dtype, tol: float, ptxas: str, seed: int) -> None:
    """A whole-problem GEMM after tile-distribute: the lane interpreter against float64 on ``mnk``, then its
    PTX assembled without spills for every arch."""
    from tilec.interp import run

    module.verify()
    m, n, k = mnk
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = np.full((m, n), np.nan, dtype)
    run(module, "gemm", *_view(a), *_view(b), *_view(c), grid=(-(-m // 128) * -(-n // 128), 1, 1))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < tol
    TileToLLVMPass().apply(make_context(), module)
    for arch in ARCHS:
        used = kernel_resources(compile_module(module, arch).ptx, arch, ptxas=ptxas)["gemm"]
        assert (used.spill_stores, used.spill_loads, used.stack_frame) == (0, 0, 0), used


def test_default_pipeline_on_an_f32_gemm(ptxas: str, lanes):
    """tile-to-ptx's defaults on f32 (SIMT FMA atom, 8x8 thread tiles, BK 32): the K loop does not carry the
    next tile's operands, which would be (8 + 8) x 32 registers a lane (tile-distribute refused the kernel
    at 632); the lane interpreter agrees with float64 on a ragged problem and ptxas spills nothing."""
    from tilec.passes.registry import build_pipeline

    text = (REPO / "examples" / "gemm.mlir").read_text().replace("f16", "f32")
    text = text.replace("%h = arith.truncf %acc : f32 to f32\n    tile.yield %h : f32", "tile.yield %acc : f32")
    module = _parse(text)
    build_pipeline("tile-tiling,tile-swizzle,tile-pipeline,tile-layout,tile-distribute").apply(make_context(), module)
    _gemm_lanes_then_ptxas(module, (130, 136, 70), np.float32, 1e-5, ptxas, seed=12)


@pytest.mark.parametrize("rows,cols,warps", [(1, 64, 1), (2, 64, 1), (8, 8, 1), (3, 5, 4), (7, 33, 4)])
def test_iota_along_a_dimension_no_lane_moves_in(rows: int, cols: int, warps: int, lanes):
    """``tile.iota`` of a constant offset along a dimension whose coordinate no lane bit moves (the rows of a
    1x64 tile on one warp): the emitter folds each value to a Python number; they become constants
    (an AttributeError inside tile-distribute before, found by a helper). Both interpreters, float64."""
    from tilec.interp import run

    text = f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>)
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{32 * warps}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<{rows}x{cols}xf32>
  %i = tile.iota %c5 dim 0 : !tile.rt<{rows}x{cols}xi32>
  %o = tile.map %i, %t : !tile.rt<{rows}x{cols}xi32>, !tile.rt<{rows}x{cols}xf32> -> !tile.rt<{rows}x{cols}xf32> {{
  ^bb0(%a: i32, %v: f32):
    %f = arith.sitofp %a : i32 to f32
    %r = arith.addf %v, %f : f32
    tile.yield %r : f32
  }}
  tile.store %o, %y[%c0, %c0] : !tile.rt<{rows}x{cols}xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}}
"""
    x = np.random.default_rng(rows * 100 + cols).standard_normal((rows, cols)).astype(np.float32)
    ref = x.astype(np.float64) + (5 + np.arange(rows))[:, None]
    before = np.full_like(x, np.nan)
    run(_parse(text), "k", x, before, grid=(1, 1, 1))
    module = _parse(text)
    ctx = make_context()
    for p in (TileLayoutPass(), TileDistributePass()):
        p.apply(ctx, module)
    module.verify()
    after = np.full_like(x, np.nan)
    run(module, "k", *_view(x), *_view(after), grid=(1, 1, 1))
    for got in (before, after):
        assert np.abs(got - ref).max() < 1e-5


def test_meaning_of_fp8_conversions(lanes):
    """tile.convert from and to FP8 through f32 where PTX has no direct cvt
    (tests/lit/passes/tile-distribute/fp8_convert.mlir): the same values before and after the pass."""
    from tilec.interp import run
    from tilec.interp.dtypes import round_f8

    text = (Path(__file__).parents[1] / "lit" / "passes" / "tile-distribute" / "fp8_convert.mlir").read_text()
    rng = np.random.default_rng(37)
    a = round_f8(rng.standard_normal((8, 16)) * 20, "f8E4M3FN")
    outs = [np.full((8, 16), np.nan, np.float32), np.zeros((8, 16), np.int32), np.full((8, 16), np.nan, np.float32),
            np.full((8, 16), np.nan, np.float64)]
    run(_parse(text), "conv", a, *outs, grid=(1, 1, 1))
    lowered = _parse(text)
    _layout_and_distribute(lowered)
    after = [np.full_like(o, np.nan) if o.dtype.kind == "f" else np.zeros_like(o) for o in outs]
    run(lowered, "conv", *(x for arr in (a, *after) for x in _view(arr)), grid=(1, 1, 1))
    for before, got in zip(outs, after):
        np.testing.assert_array_equal(got, before)
    np.testing.assert_array_equal(outs[1], np.trunc(a).astype(np.int32))
    np.testing.assert_array_equal(outs[2], round_f8(a, "f8E5M2"))
