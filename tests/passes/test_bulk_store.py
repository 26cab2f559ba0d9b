"""``tile-bulk-store`` keeps a kernel's meaning: the GEMM with its C stored through per-warp shared
buffers and bulk tensor stores computes what it computed before, on ragged shapes (the tensor
map clips the edges), in the tile interpreter; and the pass leaves alone what it must."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr

from tilec.api import make_context
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import GlobalType
from tilec.interp import run
from tilec.kernels.gemm_config import DEEP_PERSISTENT_WGMMA_CONFIG, PERSISTENT_WGMMA_CONFIG, WGMMA_LADDER
from tilec.kernels.gemm_ir import MatmulSpec, build_module
from tilec.passes.registry import build_pipeline

MID_PERSISTENT = dataclasses.replace(WGMMA_LADDER[1], producer=True, persistent=True, bulk_store=True)


def _lowered(spec: MatmulSpec, config, last: str):
    module = build_module(spec)
    build_pipeline(config.pipeline_to(last)).apply(make_context(), module)
    module.verify()
    return module


def _ops(module, kind) -> list:
    return [op for op in module.walk() if isinstance(op, kind)]


@pytest.mark.parametrize("m,n,k,blocks", [(200, 136, 200, 3), (64, 8, 64, 1)])
def test_gemm_meaning_with_bulk_stores(m, n, k, blocks):
    """The persistent warp-specialised 128x128 wgmma GEMM (bias + ReLU into f16) before and after
    tile-bulk-store, in the tile interpreter, against float64: a ragged 2x2 grid of tiles over 3
    blocks, and one block whose tile is mostly past the edges."""
    spec = MatmulSpec("float16", "float16", bias_dtype="float32", activation="relu", align=16)
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0.0)
    for last in ("tile-pipeline", "tile-bulk-store"):
        module = _lowered(spec, MID_PERSISTENT, last)
        assert bool(_ops(module, t.BulkStoreOp)) == (last == "tile-bulk-store")
        c = np.full((m, n), np.nan, np.float16)
        run(module, "matmul_f16_nn_f16_bias_f32_relu_a16", a, b, c, bias, grid=(blocks, 1, 1))
        assert not np.isnan(c).any(), f"after {last}: NaN left in C"
        err = np.abs(c - ref).max() / np.abs(ref).max()
        assert err < 2e-3, f"after {last}: relative error {err:.2e}"


def test_the_store_waits_before_it_writes_and_before_the_kernel_ends():
    module = _lowered(MatmulSpec("float16", "float16", align=16), PERSISTENT_WGMMA_CONFIG, "tile-bulk-store")
    (store,) = _ops(module, t.BulkStoreOp)
    before = [o for o in store.parent_block().ops]
    i = before.index(store)
    assert isinstance(before[i - 1], t.StoreOp) and isinstance(before[i - 2], t.BulkStoreWaitOp)
    assert isinstance(before[i - 3], t.StageOp) and isinstance(before[i - 4], t.WarpIdOp)
    fn = next(o for o in module.walk() if o.name == "func.func")
    last = list(fn.body.block.ops)[-2:]
    assert isinstance(last[0], t.BulkStoreWaitOp) and last[1].name == "func.return"
    (alloc,) = [o for o in _ops(module, t.AllocOp) if o.result.type.dims == (8, 16, 256)]  # the 8 consumer warps
    assert alloc.parent_block() is fn.body.block


def test_no_room_for_whole_tiles_stores_in_chunks():
    """An f32 C of the 128x256 tile would need 128 KB of whole-tile buffers besides the stages' 144 KB:
    each warp stores its 16 x 256 tile as eight 32-column chunks (one 128-byte box each) through a
    ring of two slots, waiting before each write until at most one store still reads."""
    module = _lowered(MatmulSpec("float16", "float32", align=16), PERSISTENT_WGMMA_CONFIG, "tile-bulk-store")
    stores = _ops(module, t.BulkStoreOp)
    assert len(stores) == 8 and not [o for o in _ops(module, t.StoreOp) if isinstance(o.dest.type, GlobalType)]
    (alloc,) = [o for o in _ops(module, t.AllocOp) if o.result.name_hint == "sc"]
    assert alloc.result.type.dims == (16, 16, 32)  # 8 consumer warps x 2 slots
    waits = [o.pending_count for o in _ops(module, t.BulkStoreWaitOp)]
    assert waits == [1] * 8 + [0]  # one a chunk, and all before the kernel ends
    slices = _ops(module, t.SliceOp)
    assert [s.offset_values for s in slices] == [(0, c) for c in range(0, 256, 32)]


def test_no_room_no_bulk_store():
    """Four stages of the 128x256x64 tile (192 KB) leave room for no f16 buffer of the whole tile but for
    the chunks' 32 KB; five leave none at all: the stores stay."""
    four = _lowered(MatmulSpec("float16", "float16", align=16), dataclasses.replace(PERSISTENT_WGMMA_CONFIG, stages=4),
                    "tile-bulk-store")
    assert len(_ops(four, t.BulkStoreOp)) == 4
    module = _lowered(MatmulSpec("float16", "float16", align=16),
                      dataclasses.replace(PERSISTENT_WGMMA_CONFIG, block=(128, 256, 32), stages=9), "tile-bulk-store")
    assert not _ops(module, t.BulkStoreOp) and _ops(module, t.StoreOp)


def test_rows_not_known_aligned_keep_their_stores():
    spec = MatmulSpec("float16", "float16", align=(16, 16, 8))
    config = dataclasses.replace(WGMMA_LADDER[1], bulk_store=True)
    module = _lowered(spec, config, "tile-bulk-store")
    assert not _ops(module, t.BulkStoreOp)


_COPY = '''func.func @k(%a: !tile.gl<T, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<T, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %warp = tile.warp_id
  %row = arith.muli %warp, %c16 : index
  %v = tile.load %a[%row, %c0] : !tile.gl<T, [?, ?]> -> !tile.rt<16xCxT>
  tile.store %v, %c[%row, %c0] : !tile.rt<16xCxT> -> !tile.gl<T, [?, ?]>
  func.return
}'''


_TAKEN = '''  %taken = tile.alloc : !tile.st<Rx1024xf16>
'''


@pytest.mark.parametrize("ty, cols, taken, boxes, waits", [
    ("bf16", 32, 0, 1, [0, 0]), ("f16", 192, 0, 3, [0, 0]), ("f32", 64, 0, 2, [0, 0]),
    ("f16", 192, 104, 3, [0, 1, 1, 0]),  # 208 KB taken: three chunks, the first waiting for all
    ("f16", 256, 104, 4, [1, 1, 1, 1, 0]),  # 208 KB taken: four chunks, a ring of two slots
    ("f16", 192, 108, 0, []),  # 216 KB taken: no room for two chunks a warp, the store stays
    ("f16", 96, 108, 0, []),  # 96 columns: 64-byte boxes, no chunks (partial lines); no room for the whole
])
def test_bulk_stores_of_other_boxes_in_the_lane_interpreter(ty, cols, taken, boxes, waits):
    """Four warps copy 57 rows through tile-bulk-store (the last warp's window past the edge): a
    64-byte swizzle (32 bf16), three 128-byte boxes side by side (192 f16), 4-byte elements (f32); with
    most of the shared memory taken (``taken`` rows of 1024 f16), in column chunks of one box or not at
    all. The lane interpreter writes back exactly the input, clipped at the view's edge."""
    from tilec.dialects import frag
    from tilec.dialects.abi import gl_params
    from tilec.interp import parse_module, round_bf16
    from tilec.runtime.gl_views import expand

    text = _COPY.replace("T", ty).replace("C", str(cols))
    if taken:
        text = text.replace("  %warp = tile.warp_id\n", _TAKEN.replace("R", str(taken)) + "  %warp = tile.warp_id\n")
    module = parse_module(text)
    build_pipeline("tile-layout,tile-bulk-store").apply(make_context(), module)
    assert [o.pending_count for o in _ops(module, t.BulkStoreWaitOp)] == waits
    build_pipeline("tile-distribute").apply(make_context(), module)
    assert len(_ops(module, frag.TmaStoreWarpOp)) == boxes
    fn = next(o for o in module.walk() if o.name == "func.func")
    a = np.random.default_rng(cols).standard_normal((57, cols)).astype(np.float32)
    a = np.array(round_bf16(a), dtype=np.float32) if ty == "bf16" else a.astype({"f16": np.float16}.get(ty, np.float32))
    c = np.full(a.shape, np.nan, a.dtype)
    run(module, "k", *expand(gl_params(fn), a, c, signature_length=len(fn.args)), grid=(1, 1, 1))
    assert np.array_equal(a, c)


@pytest.mark.parametrize("out, bias, config", [("float32", "float32", PERSISTENT_WGMMA_CONFIG),
                                               ("bfloat16", "bfloat16", DEEP_PERSISTENT_WGMMA_CONFIG)])
def test_gemm_meaning_with_chunked_bulk_stores(out, bias, config):
    """The persistent 128x256 kernel whose whole-tile buffers do not fit (an f32 C: eight 32-column
    chunks; four stages: four 64-column chunks), ragged 136x264x72 over three blocks (four tiles),
    with a bias: the tile interpreter after tile-bulk-store and the lane interpreter after
    tile-distribute against float64."""
    from tilec.dialects.abi import gl_params
    from tilec.interp import round_bf16
    from tilec.runtime.gl_views import expand

    in_dt = "bfloat16" if out == "bfloat16" else "float16"
    spec = MatmulSpec(in_dt, out, bias_dtype=bias, align=16)
    m, n, k = 136, 264, 72
    rng = np.random.default_rng(n)

    def values(*shape):  # what the dtype holds, as float32 (bf16 rounded) or float16
        x = rng.standard_normal(shape).astype(np.float32)
        return np.array(round_bf16(x), np.float32) if in_dt == "bfloat16" else x.astype(np.float16)

    a, b, v = values(m, k), values(k, n), values(n)
    v = v.astype(np.float32) if bias == "float32" else v
    ref = a.astype(np.float64) @ b.astype(np.float64) + v.astype(np.float64)
    for last in ("tile-bulk-store", "tile-distribute"):
        module = _lowered(spec, config, last)
        fn = next(o for o in module.walk() if o.name == "func.func")
        c = np.full((m, n), np.nan, np.float32 if out == "float32" else a.dtype)
        if last == "tile-bulk-store":
            chunks = 8 if out == "float32" else 4
            assert len(_ops(module, t.BulkStoreOp)) == chunks and len(_ops(module, t.SliceOp)) == chunks
            run(module, fn.sym_name.data, a, b, c, v, grid=(3, 1, 1))
        else:
            run(module, fn.sym_name.data, *expand(gl_params(fn), a, b, c, v, signature_length=len(fn.args)),
                grid=(3, 1, 1))
        assert not np.isnan(c).any(), f"after {last}: NaN left in C"
        err = np.abs(c.astype(np.float64) - ref).max() / np.abs(ref).max()
        assert err < 1e-2, f"after {last}: relative error {err:.2e}"


def test_the_bulk_store_kernels_assemble():
    """ptxas (sm_90a) takes the persistent TMA-store GEMM, plain and with a bias into bf16."""
    from tilec.api import compile as tilec_compile
    from tilec.codegen.ptxas import find_ptxas, kernel_resources

    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    for spec in (MatmulSpec("float16", "float16", align=16),
                 MatmulSpec("bfloat16", "bfloat16", bias_dtype="float32", activation="relu", align=16)):
        kernel = tilec_compile(build_module(spec), pipeline=PERSISTENT_WGMMA_CONFIG, arch="sm_90a")
        ptx = kernel.asm["ptx"]
        assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") == 4
        assert kernel_resources(ptx, "sm_90a")[kernel.name].registers <= 168
    # the chunked stores: four stages (bf16 C, a bias), and an f32 C
    for spec, config, chunks in ((MatmulSpec("bfloat16", "bfloat16", bias_dtype="bfloat16", align=16),
                                  DEEP_PERSISTENT_WGMMA_CONFIG, 4),
                                 (MatmulSpec("float16", "float32", align=16), PERSISTENT_WGMMA_CONFIG, 8)):
        kernel = tilec_compile(build_module(spec), pipeline=config, arch="sm_90a")
        ptx = kernel.asm["ptx"]
        assert ptx.count("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group") == chunks
        assert ptx.count("cp.async.bulk.wait_group.read 1") == chunks
        resources = kernel_resources(ptx, "sm_90a")[kernel.name]
        assert resources.registers <= 168 and resources.spill_stores == resources.spill_loads == 0


def test_the_tile_interpreter_catches_a_slot_rewritten_while_a_bulk_store_reads_it():
    """The ring's waits, checked: in the tile interpreter a bulk store's shared tile stays read until
    its warp's tile.bulk_store_wait covers it, and a tile.store into it before then is an error. Four
    chunks through two slots pass with ``pending 1``; with ``pending 2`` chunk 2 would overwrite slot 0
    while chunk 0's store may still read it."""
    from tilec.interp import TileInterpreterError, parse_module

    text = _COPY.replace("T", "f16").replace("C", "256")
    text = text.replace("  %warp = tile.warp_id\n", _TAKEN.replace("R", "104") + "  %warp = tile.warp_id\n")
    a = np.random.default_rng(7).standard_normal((64, 256)).astype(np.float16)
    for pending, ok in ((1, True), (2, False)):
        module = parse_module(text)
        build_pipeline("tile-layout,tile-bulk-store").apply(make_context(), module)
        for wait in _ops(module, t.BulkStoreWaitOp):
            if wait.pending is not None:
                wait.properties["pending"] = IntegerAttr(pending, 64)
        c = np.full(a.shape, np.nan, a.dtype)
        if ok:
            run(module, "k", a, c, grid=(1, 1, 1))
            assert np.array_equal(a, c)
        else:
            with pytest.raises(TileInterpreterError, match="may still be reading"):
                run(module, "k", a, c, grid=(1, 1, 1))
