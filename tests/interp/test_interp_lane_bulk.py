"""Bulk tensor copies (sm_90 TMA) and mbarriers in the lane interpreter (tilec.interp.lane_bulk).

What ``tile-regalloc`` makes of ``tile-pipeline{bulk=true}`` runs lane by lane
and agrees with float64 numpy on ragged shapes: the boxes land where the
kernel's swizzled ``ldmatrix`` addresses look for them, out-of-range elements
arrive as zeros, and the barriers order the copies (a copy lands only when a
wait completes its phase, so a missing wait gives NaN, a wrong byte count an
error). The placement rule is also checked against ``tilec.layout.bulk``'s
box layouts, which its own tests check against the PTX ISA.
"""

from __future__ import annotations

import numpy as np
import pytest
from interp_util import rel_error
from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects.builtin import f16

from tilec.dialects import frag
from tilec.dialects.abi import gl_params
from tilec.runtime.gl_views import expand
from tilec.interp import TileInterpreterError, parse_module, run
from tilec.interp.lane_bulk import swizzle_address
from tilec.layout.bulk import BulkBox, box_layout
from tilec.runtime.tensor_map import TensorMapArg

from tests.passes.test_pipeline import transformed
from tests.passes.test_pipeline_bulk import ALIGNED

SPECS = ["tile-pipeline{stages=3 bulk=true}", "tile-pipeline{stages=3 bulk=true release=false}",
         "tile-pipeline{stages=3 bulk=true reg-double-buffer=false}"]
SHAPES = [(100, 72, 48), (17, 40, 200), (64, 64, 8), (20, 32, 0)]
_CACHE: dict[str, object] = {}


def lowered(spec: str, fresh: bool = False):
    """The contract GEMM through ``spec`` and tile-regalloc (cached unless ``fresh``: the caller edits it)."""
    if fresh or spec not in _CACHE:
        module = transformed(f"{spec},tile-regalloc", ALIGNED)
        if fresh:
            return module
        _CACHE[spec] = module
    return _CACHE[spec]


def kernel_of(module) -> func.FuncOp:
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return fn


def gemm_inputs(rng, m: int, n: int, k: int):
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    return a, b, np.full((m, n), np.nan, np.float16), bias


def gemm(module, rng, m: int, n: int, k: int, **options):
    """C of the lowered kernel on random data (tensor maps as tilec.runtime.gl_views.expand gives them), and the reference."""
    a, b, c, bias = gemm_inputs(rng, m, n, k)
    fn = kernel_of(module)
    args = expand(gl_params(fn), a, b, c, bias, signature_length=len(fn.args))
    run(module, "gemm", *args, grid=(-(-m // 64) * -(-n // 64), 1, 1), **options)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    return c, ref


def ops_of(module, kind) -> list:
    return [op for op in module.walk() if isinstance(op, kind)]


# -- meaning ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("spec", SPECS)
def test_gemm_after_regalloc(spec, shape, rng):
    module = lowered(spec)
    assert ops_of(module, frag.TmaLoadOp) and not ops_of(module, frag.CpAsyncOp)
    c, ref = gemm(module, rng, *shape)
    assert not np.isnan(c).any(), f"NaN in the output: a stage was read before its phase completed (seed {rng.seed})"
    assert rel_error(c, ref) < 2e-3, f"seed {rng.seed}"


@pytest.mark.parametrize("options", [{"async_mode": "eager"}, {"warp_order": "descending"}])
def test_other_schedules(options, rng):
    c, ref = gemm(lowered(SPECS[0]), rng, 100, 72, 48, **options)
    assert not np.isnan(c).any() and rel_error(c, ref) < 2e-3, f"seed {rng.seed}"


def _view(x: np.ndarray) -> list:
    return [x, *x.shape, *(s // x.itemsize for s in x.strides)]


def test_tensor_maps_may_be_left_out(rng):
    """Without tensor-map arguments (or with None) the interpreter makes them from their views."""
    module = lowered(SPECS[0])
    a, b, c, bias = gemm_inputs(rng, 70, 40, 72)
    run(module, "gemm", *_view(a), *_view(b), *_view(c), *_view(bias), grid=(2, 1, 1))
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    assert rel_error(c, ref) < 2e-3
    fn = kernel_of(module)
    given = expand(gl_params(fn), a, b, c, bias, signature_length=len(fn.args))
    again = np.full_like(c, np.nan)
    with_none = [None if isinstance(v, TensorMapArg) else again if v is c else v for v in given]
    run(module, "gemm", *with_none, grid=(2, 1, 1))
    np.testing.assert_array_equal(again, c)


def test_a_tensor_map_of_another_view_is_an_error(rng):
    module = lowered(SPECS[0])
    a, b, c, bias = gemm_inputs(rng, 64, 64, 32)
    fn = kernel_of(module)
    args = expand(gl_params(fn), a, b, c, bias, signature_length=len(fn.args))
    i = next(i for i, v in enumerate(args) if isinstance(v, TensorMapArg))
    args[i] = TensorMapArg.of(args[i].address, "float16", (64, 16), (16, 1), args[i].box, args[i].swizzle)
    with pytest.raises(TileInterpreterError, match=r"%a_map0\) describes .* a tensor map must describe its own view"):
        run(module, "gemm", *args, grid=(1, 1, 1))


@pytest.mark.parametrize("release", [False, True], ids=["block-barrier", "empty-barriers"])
def test_matmul_bulk_config(rng, release):
    """tilec.matmul's sm_90 kernel (128x128x64 tiles, 3 stages, two 64x64 boxes of B) on a ragged shape,
    as chosen (a block barrier per K tile) and with stages released on empty barriers."""
    from dataclasses import replace

    from tilec.api import make_context
    from tilec.kernels.gemm_ir import MatmulSpec, build_module
    from tilec.kernels.gemm_config import BULK_CONFIG
    from tilec.passes.registry import build_pipeline

    module = build_module(MatmulSpec("float16", "float16", align=16))
    build_pipeline(replace(BULK_CONFIG, release=release).pipeline_to("tile-distribute")).apply(make_context(), module)
    assert ops_of(module, frag.TmaLoadOp) and bool(ops_of(module, frag.MbarArriveWarpOp)) == release
    fn = kernel_of(module)
    m, n, k = 130, 136, 200
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    run(module, fn.sym_name.data, *expand(gl_params(fn), a, b, c, signature_length=len(fn.args)), grid=(4, 1, 1))
    assert not np.isnan(c).any(), f"seed {rng.seed}"
    assert rel_error(c, a.astype(np.float64) @ b.astype(np.float64)) < 2e-3, f"seed {rng.seed}"


# -- where a box lands ---------------------------------------------------------------------

BOXES = [BulkBox(16, 64, 2, 128), BulkBox(16, 32, 2, 64), BulkBox(16, 16, 2, 32), BulkBox(8, 32, 4, 128),
         BulkBox(5, 24, 2, 0)]


@pytest.mark.parametrize("box", BOXES, ids=str)
def test_placement_is_the_box_layout(box):
    """Row r at r * I * e, the swizzle on the byte address: tilec.layout.bulk's layout of the box, byte for byte."""
    layout = box_layout(box, box.inner)
    rows, cols = np.meshgrid(np.arange(box.rows), np.arange(box.inner), indexing="ij")
    linear = (rows * box.inner + cols) * box.elem_bytes
    expected = np.vectorize(lambda r, c: layout((int(r), int(c))))(rows, cols) * box.elem_bytes
    np.testing.assert_array_equal(swizzle_address(linear, box.swizzle), expected)


def test_a_box_of_a_rank_four_view_at_every_coordinate():
    """A tensor map of a (B, H, S, D) tensor stored (B, S, H, D): the box at (column, row, head, batch)
    is that head's rows; a head or batch outside the view (or rows past S) reads zeros, as TMA fills."""
    from tilec.interp.lane_bulk import TensorMap
    from tilec.interp.lane_memory import GLOBAL, Memory

    b, h, s, d = 2, 3, 5, 16
    x = np.arange(b * s * h * d, dtype=np.float16).reshape(b, s, h, d)
    mem = Memory("global argument 0 (%k)", GLOBAL, x.view(np.uint8).reshape(-1))
    view = x.transpose(0, 2, 1, 3)
    tmap = TensorMap("%k_map0", mem, 0, view.shape, tuple(st // 2 for st in view.strides), BulkBox(4, 16, 2, 32))

    def box(*coords):
        return tmap.read_box(coords).view(np.float16).reshape(4, 16)

    np.testing.assert_array_equal(box(0, 1, 2, 1), view[1, 2, 1:5])
    np.testing.assert_array_equal(box(0, 3, 0, 0)[:2], view[0, 0, 3:5])
    assert not box(0, 3, 0, 0)[2:].any()
    assert not box(0, 0, 3, 0).any() and not box(0, 0, 0, 2).any() and not box(0, 0, -1, 0).any()


def test_swizzle_of_one_address():
    # 128-byte swizzle: row 1 (bits 7..9 = 1) swaps the 16-byte chunks 0 and 1 of its line
    assert swizzle_address(np.int64(128 + 4), 128) == 128 + 16 + 4
    assert swizzle_address(np.int64(1024 + 5 * 128 + 3 * 16), 64) == 1024 + 5 * 128 + (3 ^ 1) * 16


# -- what the barriers guard ---------------------------------------------------------------


def _issuer_only(op) -> bool:
    """Whether ``op`` runs under the issuing thread's branch (``scf.if %warp == 0``, and its lane's)."""
    parent = op.parent_op()
    while isinstance(parent, scf.IfOp):
        cond = parent.cond.owner
        if isinstance(cond, arith.CmpiOp) and any(v.name_hint in ("tid", "warp", "lane") for v in cond.operands):
            return True
        parent = parent.parent_op()
    return False


def _loop(module) -> scf.ForOp:
    (loop,) = ops_of(module, scf.ForOp)
    return loop


def _erase(op) -> None:
    op.detach()
    op.erase()


def test_wrong_byte_count_never_ends(rng):
    module = lowered(SPECS[0], fresh=True)
    for op in ops_of(module, frag.MbarExpectTxOp):
        op.properties["bytes"] = frag.MbarExpectTxOp(op.bar, op.bytes.value.data - 2).bytes
    with pytest.raises(TileInterpreterError, match="expects 8190 bytes, its bulk copies bring 8192: on the GPU this "
                                                   "wait never ends"):
        gemm(module, rng, 64, 64, 96)


def test_removing_the_loop_wait_gives_nan(rng):
    module = lowered(SPECS[2], fresh=True)
    (wait,) = [o for o in _loop(module).walk() if isinstance(o, frag.MbarWaitOp) and not _issuer_only(o)]
    _erase(wait)
    c, ref = gemm(module, rng, 100, 72, 48)
    assert np.isnan(c).any() or rel_error(c, ref) > 1e-2


def test_a_missing_release_is_a_hang(rng):
    module = lowered(SPECS[0], fresh=True)
    (arrive,) = ops_of(module, frag.MbarArriveWarpOp)
    _erase(arrive)
    with pytest.raises(TileInterpreterError, match="on the GPU this wait never ends"):
        gemm(module, rng, 64, 64, 200)


def test_misaligned_destination_is_an_error(rng):
    module = lowered(SPECS[0], fresh=True)
    load = next(o for o in ops_of(module, frag.TmaLoadOp) if o.tensor_map.name_hint == "b_map0")
    moved = llvm.GEPOp.from_mixed_indices(load.dst, [64], f16, result_type=load.dst.type)  # 128 bytes on
    load.parent_block().insert_op_before(moved, load)
    load.operands = [moved.result, *load.operands[1:]]
    with pytest.raises(TileInterpreterError, match=r"'frag.tma_load'.*is not 1024-byte aligned, as a 128-byte "
                                                   "swizzle needs"):
        gemm(module, rng, 64, 64, 32)


BARRIER = """
func.func @k(%parity: i32) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 64>} {
  %bar = frag.shared "bar", 16, align 8 : !llvm.ptr<3>
  %c0 = arith.constant 0 : i32
  %lane_index = tile.lane_id
  %lane = arith.index_cast %lane_index : index to i32
  %first = arith.cmpi eq, %lane, %c0 : i32
  scf.if %first {
    frag.mbar_init %bar, 1 : !llvm.ptr<3>
  }
  BODY
  func.return
}
"""


@pytest.mark.parametrize("body,parity,error", [
    ("frag.mbar_wait %bar, %parity : !llvm.ptr<3>", 1, None),  # the phase before the first counts as completed
    ("frag.mbar_wait %bar, %parity : !llvm.ptr<3>", 0, "phase 0 .*which nothing has arrived at: on the GPU this "
                                                       "wait never ends"),
    ("frag.mbar_arrive_warp %bar : !llvm.ptr<3>\n  frag.mbar_wait %bar, %parity : !llvm.ptr<3>", 0, None),
    ("scf.if %first {\n frag.mbar_arrive_warp %bar : !llvm.ptr<3>\n }", 0,
     "'frag.mbar_arrive_warp'.*needs all 32 lanes"),
    ("%other = llvm.getelementptr %bar[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i32\n"
     "  frag.mbar_wait %other, %parity : !llvm.ptr<3>", 0, "'frag.mbar_wait'.*is not 8-byte aligned"),
    ("frag.mbar_init %bar, 1 : !llvm.ptr<3>\n  frag.mbar_expect_tx %bar, 16 : !llvm.ptr<3>", 0,
     "'frag.mbar_expect_tx'.*already had one"),  # every lane arrives: 32 arrivals
])
def test_barrier_ops(body, parity, error):
    module = parse_module(BARRIER.replace("BODY", body))
    if error is None:
        run(module, "k", parity)
    else:
        with pytest.raises(TileInterpreterError, match=error):
            run(module, "k", parity)


def test_a_barrier_nobody_made_is_an_error():
    module = parse_module(BARRIER.replace("frag.mbar_init %bar, 1", "frag.mbar_init_fence").replace(
        "frag.mbar_init_fence : !llvm.ptr<3>", "frag.mbar_init_fence").replace(
        "BODY", "frag.mbar_wait %bar, %parity : !llvm.ptr<3>"))
    with pytest.raises(TileInterpreterError, match=r"'frag.mbar_wait'.*no mbarrier at byte offset 0 of shared \"bar\""):
        run(module, "k", 1)


@pytest.mark.parametrize("index", [1, 2, 3, 4], ids=["128x128x64", "128x64x128-producer", "64x128x128", "64x64x128"])
def test_matmul_narrower_wgmma_configs(rng, index):
    """tilec.matmul's sm_90a kernels for problems whose 128x256 tiles do not fill the SMs
    (WGMMA_LADDER past WGMMA_CONFIG: the half-width tile, one warpgroup of 64 rows with K steps of
    128 and 4 or 6 stages) with a bias and ReLU into f32, on a ragged shape (rows past M, a last
    partial K step) in the lane interpreter."""
    from tilec.api import make_context
    from tilec.kernels.gemm_ir import MatmulSpec, build_module
    from tilec.kernels.gemm_config import WGMMA_LADDER
    from tilec.passes.registry import build_pipeline

    config = WGMMA_LADDER[index]
    module = build_module(MatmulSpec("float16", "float32", bias_dtype="float32", activation="relu", align=16))
    build_pipeline(config.pipeline_to("tile-distribute")).apply(make_context(), module)
    assert ops_of(module, frag.TmaLoadOp)
    fn = kernel_of(module)
    m, n, k = 100, 136, 328
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    grid = config.grid(m, n)
    run(module, fn.sym_name.data, *expand(gl_params(fn), a, b, c, bias, signature_length=len(fn.args)),
        grid=(grid, 1, 1))
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    assert not np.isnan(c).any()
    assert rel_error(c, ref) < 2e-3


@pytest.mark.parametrize("name", ["wgmma-producer", "wgmma-tma-store", "wgmma-nt", "wgmma-one-warpgroup", "cp.async"])
def test_matmul_persistent(rng, name):
    """tilec.matmul's kernels made persistent (``persistent=True``: fewer blocks than tiles, each
    looping over its share): the half-width wgmma tile with a producer warpgroup (its stage ring
    carried from tile to tile), the same storing C by bulk tensor stores (``tile-bulk-store``: each
    warp's stage of the buffer reused from tile to tile, the edges clipped by the tensor map), the
    one-warpgroup wgmma tile (no producer: its barriers set up again before each tile's K loop),
    and the sm_80 cp.async tile, with a bias and ReLU into f32 on a ragged shape, in the lane
    interpreter; ``wgmma-nt`` is the TMA-store kernel with B given N x K (read K-major)."""
    import dataclasses

    from tilec.api import make_context
    from tilec.kernels.gemm_config import ALIGNED_CONFIGS, WGMMA_LADDER
    from tilec.kernels.gemm_ir import MatmulSpec, build_module
    from tilec.passes.registry import build_pipeline

    base = {"wgmma-producer": dataclasses.replace(WGMMA_LADDER[1], producer=True),
            "wgmma-tma-store": dataclasses.replace(WGMMA_LADDER[1], producer=True, bulk_store=True),
            "wgmma-nt": dataclasses.replace(WGMMA_LADDER[1], producer=True, bulk_store=True),
            "wgmma-one-warpgroup": WGMMA_LADDER[4], "cp.async": ALIGNED_CONFIGS["medium"]}[name]
    config = dataclasses.replace(base, persistent=True)
    nt = name == "wgmma-nt"
    module = build_module(MatmulSpec("float16", "float32", transpose_b=nt, bias_dtype="float32", activation="relu",
                                     align=16))
    build_pipeline(config.pipeline_to("tile-distribute")).apply(make_context(), module)
    fn = kernel_of(module)
    assert bool(ops_of(module, frag.TmaStoreWarpOp)) == config.bulk_store
    m, n, k = (200, 264, 200) if config.wgmma else (100, 72, 136)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    c = np.full((m, n), np.nan, np.float32)
    grid = config.grid(m, n, sm_count=3)
    assert grid == 3 < config.tiles(m, n)
    b_arg = np.ascontiguousarray(b.T) if nt else b  # N x K rows
    run(module, fn.sym_name.data, *expand(gl_params(fn), a, b_arg, c, bias, signature_length=len(fn.args)),
        grid=(grid, 1, 1))
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    assert not np.isnan(c).any()
    assert rel_error(c, ref) < 2e-3
