"""tile-tiling: a whole-problem tile.matmul → the warp-level block program.

Meaning: the input (one tile.matmul, run on whole arrays) and its tiled kernel
(run block by block, warp by warp, with real barriers) are both run in the CPU
interpreter on random ragged shapes and compared with float64 numpy, for every
element type and atom (f16, bf16, f32 SIMT, tf32), every transpose and
epilogues with rank-1 and rank-2 inputs. Form: the output has the shape of
examples/levels/gemm_warp_level.mlir (the contract with the later passes),
its numbers come from the layout algebra, and bad options are errors that name
the option and the numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, ModuleOp
from xdsl.utils.exceptions import PassFailedException

from tilec.dialects.tile import ops as t
from tilec.interp import parse_module, round_bf16, run
from tilec.layout import Layout
from tilec.passes.registry import PipelineSpecError, build_pipeline
from tilec.passes.tile_tiling import TileTilingPass
from tilec.passes.tiling_config import TilingConfigError, layout_terms, plan_tiling
from tilec.interp.launch import make_context

REPO = Path(__file__).resolve().parents[2]
CONTRACT = REPO / "examples" / "levels" / "gemm_warp_level.mlir"

NP = {"f16": np.float16, "bf16": np.float32, "f32": np.float32}  # bf16 lives in float32 arrays

# -- building the input ------------------------------------------------------------------


def _convert(value: str, out: str) -> tuple[str, str]:
    """Lines converting the f32 ``value`` to ``out`` and the name of the result."""
    if out == "f32":
        return "", value
    return f"    %o = arith.truncf {value} : f32 to {out}\n", "%o"


EPILOGUES = {
    # name: (inputs [(name, rank, type)], body lines producing %r (f32), numpy reference)
    "plain": ([], "", lambda acc, ins: acc),
    "bias_relu": (
        [("bias", 1, "f32")],
        "    %s = arith.addf %acc, %bias_e : f32\n"
        "    %z = arith.constant 0.000000e+00 : f32\n"
        "    %r = arith.maximumf %s, %z : f32\n",
        lambda acc, ins: np.maximum(acc + ins[0][None, :], 0),
    ),
    "scale_residual": (
        [("scale", 1, "f32"), ("res", 2, "f16")],
        "    %x = arith.extf %res_e : f16 to f32\n"
        "    %p = arith.mulf %acc, %scale_e : f32\n"
        "    %r = arith.addf %p, %x : f32\n",
        lambda acc, ins: acc * ins[0][None, :] + ins[1],
    ),
}


def matmul_text(ab: str, out: str, epilogue: str, ta: bool, tb: bool) -> str:
    inputs, body, _ = EPILOGUES[epilogue]
    gl2 = lambda ty: f"!tile.gl<{ty}, [?, ?]>"  # noqa: E731
    gl = lambda rank, ty: gl2(ty) if rank == 2 else f"!tile.gl<{ty}, [?]>"  # noqa: E731
    params = [f"%a: {gl2(ab)}", f"%b: {gl2(ab)}", f"%c: {gl2(out)}"] + [f"%{n}: {gl(r, ty)}" for n, r, ty in inputs]
    clause = ""
    if inputs:
        clause = f" epilogue({', '.join('%' + n for n, _, _ in inputs)} : {', '.join(gl(r, ty) for _, r, ty in inputs)})"
    flags = (" transpose_a" if ta else "") + (" transpose_b" if tb else "")
    args = ", ".join(["%acc: f32"] + [f"%{n}_e: {ty}" for n, _, ty in inputs])
    result = "%r" if body else "%acc"
    conv, final = _convert(result, out)
    return (
        f"func.func @gemm({', '.join(params)}) {{\n"
        f"  tile.matmul %a, %b -> %c{clause}{flags} : {gl2(ab)}, {gl2(ab)} -> {gl2(out)} {{\n"
        f"  ^bb0({args}):\n{body}{conv}"
        f"    tile.yield {final} : {out}\n"
        "  }\n"
        "  func.return\n"
        "}\n"
    )


def tiled(text: str, spec: str) -> ModuleOp:
    module = parse_module(text)
    build_pipeline(spec).apply(make_context(), module)
    module.verify()
    return module


def kernel_of(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def grid_of(module: ModuleOp, m: int, n: int) -> int:
    bm, bn, _ = kernel_of(module).attributes["tile.tiling"].data["block"].get_values()
    return -(-m // bm) * -(-n // bn)


def _data(rng, shape, ty):
    x = rng.standard_normal(shape).astype(NP[ty])
    return round_bf16(x) if ty == "bf16" else x


def check_meaning(spec: str, ab: str, out: str, epilogue: str, ta: bool, tb: bool, shapes, tol: float,
                  blocks: int | None = None, **run_options):
    """Input and tiled kernel agree with float64 numpy on every shape (``blocks``: launch this many
    blocks, not one a tile: a persistent kernel's)."""
    text = matmul_text(ab, out, epilogue, ta, tb)
    whole = parse_module(text)
    kernel = tiled(text, spec)
    inputs, _, reference = EPILOGUES[epilogue]
    for m, n, k in shapes:
        rng = np.random.default_rng(m * 1_000_003 + n * 1009 + k * 7 + ta * 2 + tb)
        a = _data(rng, (k, m) if ta else (m, k), ab)
        b = _data(rng, (n, k) if tb else (k, n), ab)
        extra = [_data(rng, (n,) if rank == 1 else (m, n), ty) for _, rank, ty in inputs]
        a64 = a.astype(np.float64).T if ta else a.astype(np.float64)
        b64 = b.astype(np.float64).T if tb else b.astype(np.float64)
        ref = reference(a64 @ b64, [x.astype(np.float64) for x in extra])
        tiled_grid = (grid_of(kernel, m, n) if blocks is None else blocks, 1, 1)
        for label, module, grid in (("input", whole, None), ("tiled", kernel, tiled_grid)):
            c = np.full((m, n), np.nan, NP[out])
            run(module, "gemm", a, b, c, *extra, grid=grid, **run_options)
            assert not np.isnan(c).any(), f"{label} {m}x{n}x{k}: NaN in c (unwritten or read from unwritten shared memory)"
            scale = max(float(np.abs(ref).max()), 1e-30)
            err = float(np.abs(c.astype(np.float64) - ref).max()) / scale
            assert err <= tol, f"{label} {m}x{n}x{k} under {spec}: relative error {err:.3g} > {tol:g}"


SHAPES = [(17, 33, 65), (1, 1, 1), (100, 70, 45)]
TRANSPOSES = [(False, False), (True, False), (False, True), (True, True)]
TRANSPOSE_IDS = ["nn", "tn", "nt", "tt"]

# (id, pass spec, a/b element type, c element type, tolerance)
CONFIGS = [
    ("f16", "tile-tiling{block=32,32,16 warps=2,2}", "f16", "f16", 2e-3),
    ("f16-f32out-64", "tile-tiling{block=64,64,32 warps=2,2 group=2}", "f16", "f32", 1e-5),
    ("bf16", "tile-tiling{block=32,32,16 warps=2,1 group=3}", "bf16", "bf16", 1e-2),
    ("f32-simt", "tile-tiling{block=32,32,16 thread_tile=4,4}", "f32", "f32", 1e-5),
    ("f32-simt-4warps", "tile-tiling{block=32,32,8 warps=2,2 thread_tile=2,4 group=1}", "f32", "f32", 1e-5),
    ("tf32", "tile-tiling{block=32,32,16 tf32=true}", "f32", "f32", 2e-3),
]


@pytest.mark.parametrize("ta,tb", TRANSPOSES, ids=TRANSPOSE_IDS)
@pytest.mark.parametrize("spec,ab,out,tol", [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_meaning_bias_relu(spec, ab, out, tol, ta, tb):
    check_meaning(spec, ab, out, "bias_relu", ta, tb, SHAPES, tol)


@pytest.mark.parametrize("epilogue", ["plain", "scale_residual"])
@pytest.mark.parametrize("spec,ab,out,tol", [c[1:] for c in CONFIGS], ids=[c[0] for c in CONFIGS])
def test_meaning_epilogues(spec, ab, out, tol, epilogue):
    check_meaning(spec, ab, out, epilogue, True, False, [(100, 70, 45)], tol)
    check_meaning(spec, ab, out, epilogue, False, True, [(17, 33, 65)], tol)


def test_meaning_many_blocks_grouped_descending_warps():
    """7x5 blocks in groups of 2 block rows (a ragged last group); warps take turns in reverse order."""
    check_meaning("tile-tiling{block=32,32,16 group=2}", "f16", "f32", "scale_residual", False, False,
                  [(200, 130, 70)], 1e-5, warp_order="descending")


@pytest.mark.parametrize("blocks", [1, 3, 40])
def test_meaning_persistent(blocks):
    """A persistent kernel: 1, 3 or 40 blocks stride over 7x5 tiles in groups of 2 block rows (40: more
    blocks than tiles, the last five take none)."""
    check_meaning("tile-tiling{block=32,32,16 group=2 persistent=true}", "f16", "f32", "bias_relu", False, True,
                  [(200, 130, 70)], 1e-5, blocks=blocks)


def test_meaning_default_config():
    """The default config (128x128x32, 2x2 warps) on a shape smaller than one block and one just over."""
    check_meaning("tile-tiling", "f16", "f16", "bias_relu", False, False, [(130, 20, 40)], 2e-3)


# -- form: the contract ------------------------------------------------------------------------

CONTRACT_INPUT = matmul_text("f16", "f16", "bias_relu", False, False)


def _op_names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name not in ("arith.constant", "builtin.module")]


def test_form_is_the_contract():
    """With the contract's config the pass produces the contract's program, op for op."""
    ours = tiled(CONTRACT_INPUT, "tile-tiling{block=64,64,32 warps=2,2}")
    contract = parse_module(CONTRACT.read_text())
    assert _op_names(ours) == _op_names(contract)
    ka, kc = kernel_of(ours), kernel_of(contract)
    assert ka.attributes["tile.launch"] == kc.attributes["tile.launch"]
    ours_ops = {op.name: op for op in ka.walk()}
    contract_ops = {op.name: op for op in kc.walk()}
    for name in ("tile.alloc", "tile.zeros", "tile.mma", "tile.map", "tile.broadcast"):
        assert ours_ops[name].result_types == contract_ops[name].result_types, name
    ours_copies = [op for op in ka.walk() if isinstance(op, t.CopyOp)]
    contract_copies = [op for op in kc.walk() if isinstance(op, t.CopyOp)]
    for o, c in zip(ours_copies, contract_copies):
        assert o.val == c.val  # 16-byte vectors; ours use all 128 threads for A (the contract 64)
        assert o.thr.data.size() == 128


def test_default_output_text():
    text = str(tiled(CONTRACT_INPUT, "tile-tiling"))
    for line in (
        "tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 16384>",
        "tile.tiling = {block = array<i64: 128, 128, 32>, warps = array<i64: 4, 2>, group = 8 : i64, "
        "warp_tile = array<i64: 32, 64>, warp_layout = #tile.layout<(4,2):(2,1)>, "
        "atom = #tile.mma_atom<mma_m16n8k16_f16>, atoms = array<i64: 2, 8, 2>}",
        "%wm = arith.divui %warp, %c2 : index",
        "%wrow = arith.muli %wm, %c32 : index",
        "%wn = arith.remui %warp, %c2 : index",
        "%wcol = arith.muli %wn, %c64 : index",
        "%sa = tile.alloc : !tile.st<128x32xf16, (128,32):(32,1)>",
        "%sb = tile.alloc : !tile.st<32x128xf16, (32,128):(128,1)>",
        "tile.copy %a[%row0, %k] -> %sa thr <(64,4):(4,1)> val <(1,8):(1,1)>",
        "tile.copy %b[%k, %col0] -> %sb thr <(16,16):(16,1)> val <(1,8):(1,1)>",
        "%d = tile.mma %ra, %rb, %acc_i atom <mma_m16n8k16_f16> : !tile.rt<32x32xf16>, !tile.rt<32x64xf16>",
        "%bias_v = tile.load %bias[%col] : !tile.gl<f32, [?]> -> !tile.rv<64xf32, col>",
        "tile.store %out, %c[%row, %col] : !tile.rt<32x64xf16> -> !tile.gl<f16, [?, ?]>",
    ):
        assert line in text, line
    assert "tile.matmul" not in text


def test_transposed_orientation():
    text = str(tiled(matmul_text("bf16", "bf16", "scale_residual", True, True), "tile-tiling{block=64,32,32 warps=2,1}"))
    assert "%sa = tile.alloc : !tile.st<32x64xbf16, (32,64):(64,1)>" in text  # BK x BM, as A is stored
    assert "%sb = tile.alloc : !tile.st<32x32xbf16, (32,32):(32,1)>" in text  # BN x BK
    assert "tile.copy %a[%k, %row0] -> %sa" in text
    assert "tile.copy %b[%col0, %k] -> %sb" in text
    assert "%ra = tile.load %sa[%c0, %wrow] : !tile.st<32x64xbf16, (32,64):(64,1)> -> !tile.rt<32x32xbf16>" in text
    assert "%rb = tile.load %sb[%c0, %c0] : !tile.st<32x32xbf16, (32,32):(32,1)> -> !tile.rt<32x32xbf16>" in text
    assert re.search(r"tile\.mma %ra, %rb, %acc_i transpose_a transpose_b atom <mma_m16n8k16_bf16>", text)
    assert "%M = tile.dim %a, 1" in text and "%K = tile.dim %a, 0" in text and "%N = tile.dim %b, 0" in text
    assert "%res_t = tile.load %res[%row, %col0] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x32xf16>" in text  # one warp column: col is col0


def test_simt_form():
    module = tiled(matmul_text("f32", "f32", "bias_relu", False, False), "tile-tiling")
    fn = kernel_of(module)
    assert fn.attributes["tile.launch"].block_dims == (256, 1, 1)  # 128x128 / 8x8 thread tiles
    tiling = fn.attributes["tile.tiling"].data
    assert tiling["warps"].get_values() == (4, 2)
    assert tiling["thread_tile"].get_values() == (8, 8)
    assert str(tiling["lane_layout"].data) == "(4,8):(8,1)"  # 4x8 lanes of 8x8 over the 32x64 warp tile
    (mma,) = [op for op in fn.walk() if isinstance(op, t.MmaOp)]
    assert mma.atom.data.name == "fma_f32"
    assert mma.attributes["tile.thread_tile"].get_values() == (8, 8)
    assert mma.result.type.dims == (32, 64) and mma.result.type.fragment is None
    copies = [op for op in fn.walk() if isinstance(op, t.CopyOp)]
    assert [str(c.val.data) for c in copies] == ["(1,4):(1,1)"] * 2  # 4 x f32 = 16 bytes


# -- the plan: numbers from the layout algebra -------------------------------------------------


@pytest.mark.parametrize("layout", ["(2,2):(0,32)", "(2,2):(32,0)", "(4,2):(16,0)", "(4,2):(0,32)", "(2,3,2):(5,0,7)", "1:0", "8:3"])
def test_layout_terms_evaluate_the_layout(layout):
    lay = Layout.parse(layout)
    terms = layout_terms(lay)
    for i in range(lay.size()):
        value = 0
        for term in terms:
            q = i // term.divisor
            value += (q % term.modulus if term.modulus else q) * term.stride
        assert value == lay(i)


@pytest.mark.parametrize("warps", [(1, 1), (2, 2), (4, 1), (1, 4), (2, 4), (4, 2), (8, 4)])
def test_warp_origins(warps):
    wm, wn = warps
    block = (64, 64, 32) if warps == (1, 1) else (128, 128, 32)  # one warp's accumulators must fit
    plan = plan_tiling(element_type=Float16Type(), block=block, warps=warps)
    wtm, wtn = plan.warp_tile
    for w in range(wm * wn):
        assert (plan.warp_row(w), plan.warp_col(w)) == ((w // wn) * wtm, (w % wn) * wtn)
    assert plan.atoms == (wtm // 16, wtn // 8, 2)


@pytest.mark.parametrize(
    "ty,block,warps,ta,tb",
    [
        (Float16Type(), (128, 128, 32), (2, 2), False, False),
        (Float16Type(), (32, 32, 16), (2, 2), True, True),
        (BFloat16Type(), (256, 128, 64), (4, 2), False, True),
        (Float32Type(), (64, 64, 16), (2, 2), True, False),
        (Float16Type(), (16, 8, 16), (1, 1), False, False),
    ],
)
def test_copy_plans_tile_the_shared_tiles_with_16_byte_vectors(ty, block, warps, ta, tb):
    plan = plan_tiling(element_type=ty, block=block, warps=warps, transpose_a=ta, transpose_b=tb,
                       tf32=isinstance(ty, Float32Type))
    bits = plan.element_bits
    for copy, dims in ((plan.copy_a, plan.shared_a), (plan.copy_b, plan.shared_b)):
        assert copy.dims == dims
        assert copy.val.size() * bits == 128
        assert copy.threads <= plan.threads
        r, c = copy.copy_tile
        assert dims[0] % r == 0 and dims[1] % c == 0
        owner = {}
        for tm in range(copy.thr[0].size()):
            for tn in range(copy.thr[1].size()):
                for v in range(copy.vector):
                    owner.setdefault((tm, tn * copy.vector + v), set()).add(copy.thr((tm, tn)))
        assert len(owner) == r * c and all(len(o) == 1 for o in owner.values())
        assert len(set().union(*owner.values())) == copy.threads


# -- errors ------------------------------------------------------------------------------------

F16 = matmul_text("f16", "f16", "bias_relu", False, False)
F32 = matmul_text("f32", "f32", "plain", False, False)


@pytest.mark.parametrize(
    "text,spec,message",
    [
        (F16, "tile-tiling{block=100,128,32}", "block=100,128,32: BM=100 is not a multiple of warps × atom = 2·16 = 32"),
        (F16, "tile-tiling{block=128,120,32 warps=2,2}", "BN=120 is not a multiple of warps × atom = 2·8 = 16"),
        (F16, "tile-tiling{block=128,128,8}", "BK=8 is not a multiple of the atom's K = 16 (mma_m16n8k16_f16)"),
        (F16, "tile-tiling{warps=8,8}", "warps=8,8 is 64 warps, 2048 threads per block; the limit is 1024"),
        (F16, "tile-tiling{block=256,256,256 warps=4,4}", "take 262144 bytes, more than the 232448 bytes (227 KB)"),
        (F16, "tile-tiling{block=128,128}", "block=128,128: expected 3 positive integers BM,BN,BK"),
        (F16, "tile-tiling{warps=2}", "warps=2: expected 2 positive integers WM,WN"),
        (F16, "tile-tiling{group=0}", "group=0: expected a positive number"),
        (F16, "tile-tiling{atom=foo}", "atom=foo is not an MMA atom; expected one of fma_f32"),
        (F16, "tile-tiling{atom=fma_f32}", "atom=fma_f32 multiplies f32 inputs, but a and b are f16"),
        (F32, "tile-tiling{atom=fma_f32 tf32=true}", "tf32=true asks for tensor cores, atom=fma_f32"),
        (F32, "tile-tiling{warps=2,2}", "a 64x64 warp tile of 8x8 thread tiles has 8x8 = 64 lanes, a warp has 32 (try warps=4,2)"),
        (F32, "tile-tiling{block=40,32,32 thread_tile=8,8}", "block=40,32,32 with thread_tile=8,8 needs 20 threads, not a whole number of 32-thread warps"),
        (F32, "tile-tiling{block=64,64,2 thread_tile=4,4}", "rows of 2 elements are not a whole number of 16-byte vectors (4 elements of 32 bits)"),
    ],
)
def test_config_errors(text, spec, message):
    """Options that do not fit the IR fail the pass naming the function; options that are wrong whatever
    the IR (not positive, too many warps) are refused when the pipeline is built."""
    module = parse_module(text)
    with pytest.raises((TilingConfigError, PipelineSpecError)) as info:
        build_pipeline(spec).apply(make_context(), module)
    assert message in str(info.value)
    if isinstance(info.value, PipelineSpecError):
        assert "invalid options for pass 'tile-tiling'" in str(info.value)
    else:
        assert "(in @gemm)" in str(info.value)
    assert any(isinstance(op, t.MatmulOp) for op in module.walk())  # nothing changed


@pytest.mark.parametrize(
    "body,message",
    [
        ("MM\n  MM", "has 2 tile.matmul ops"),
        ("%v = tile.load %a[%i, %i] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf16>\n  MM", "holds 'tile.load' besides its tile.matmul"),
    ],
)
def test_function_errors(body, message):
    mm = F16.split("\n", 1)[1].rsplit("  func.return", 1)[0].strip()
    header = F16.split("\n", 1)[0]
    text = header + "\n  %i = arith.constant 0 : index\n  " + body.replace("MM", mm) + "\n  func.return\n}\n"
    module = parse_module(text)
    with pytest.raises(PassFailedException, match=re.escape(message)):
        TileTilingPass().apply(make_context(), module)


def test_functions_without_matmul_are_left_alone_and_pure_ops_stay():
    text = CONTRACT.read_text() + F16.replace("@gemm", "@other").replace(
        "  tile.matmul", "  %unused = arith.constant 1.0 : f32\n  tile.matmul"
    )
    module = parse_module(text)
    before = str(module.body.block.first_op)
    TileTilingPass(block=(64, 64, 32)).apply(make_context(), module)
    module.verify()
    fns = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    assert str(fns[0]) == before
    assert "tile.launch" in fns[1].attributes and "%unused = arith.constant" in str(fns[1])


def test_epilogue_may_use_scalar_arguments_and_values_defined_outside():
    """The cloned epilogue keeps its uses of kernel scalars and of constants before the matmul."""
    text = (
        "func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %alpha: f32) {\n"
        "  %two = arith.constant 2.0 : f32\n"
        "  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f32, [?, ?]> {\n"
        "  ^bb0(%x: f32):\n"
        "    %s = arith.mulf %x, %alpha : f32\n"
        "    %t = arith.mulf %s, %two : f32\n"
        "    tile.yield %t : f32\n"
        "  }\n"
        "  func.return\n"
        "}\n"
    )
    kernel = tiled(text, "tile-tiling{block=32,32,16}")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((40, 20)).astype(np.float16)
    b = rng.standard_normal((20, 50)).astype(np.float16)
    ref = 2 * 0.5 * (a.astype(np.float64) @ b.astype(np.float64))
    for module, grid in ((parse_module(text), None), (kernel, (grid_of(kernel, 40, 50), 1, 1))):
        c = np.full((40, 50), np.nan, np.float32)
        run(module, "gemm", a, b, c, np.float32(0.5), grid=grid)
        assert np.abs(c - ref).max() <= 1e-5 * np.abs(ref).max()
