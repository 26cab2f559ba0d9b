"""Thread-block clusters in both interpreters (``#tile.launch<..., cluster = [cx, cy, cz]>``).

The blocks of a cluster run together, every warp of every block under one
cooperative scheduler: ``tile.barrier`` meets the warps of a block,
``tile.cluster_barrier`` those of the cluster, and a warp spinning on an
mbarrier lets any warp of the cluster run. So a pipeline whose blocks multicast
a shared operand into each other's stages runs deterministically, and its
mistakes (a stage released by one block only, windows that differ between
blocks, a barrier used before its block initialised it) show on every run, at
tile level and, through ``tile-layout,tile-distribute`` or written by hand, lane
by lane (``frag.tma_load ... multicast``, ``frag.mbar_arrive_warp ... cluster``).
"""

from __future__ import annotations

import numpy as np
import pytest

from tilec.interp import TileInterpreterError, parse_module, run, run_fragment, run_text

GL = "!tile.gl<f32, [?, ?]>"


def launch(grid: str, block: int, cluster: str, smem: int = 0, extra: str = "") -> str:
    return (f"attributes {{tile.launch = #tile.launch<grid = [{grid}], block = [{block}, 1, 1], smem = {smem}, "
            f"cluster = [{cluster}]>{extra}}}")


# -- ids -------------------------------------------------------------------------------

ID_OPS = ["cluster_id x", "cluster_id y", "cluster_count x", "cluster_count y", "block_rank"]


def ids_kernel(cluster: str) -> str:
    """Block (x, y) writes its cluster ids, cluster counts and rank to row ``4 y + x`` of ``%out``."""
    body = ""
    for i, name in enumerate(ID_OPS):
        body += f"""
  %v{i} = tile.{name}
  %v{i}_i = arith.index_cast %v{i} : index to i64
  %v{i}_f = arith.sitofp %v{i}_i : i64 to f32
  %v{i}_t = tile.fill %v{i}_f : f32 -> !tile.rt<1x1xf32>
  %col{i} = arith.constant {i} : index
  tile.store %v{i}_t, %out[%row, %col{i}] : !tile.rt<1x1xf32> -> {GL}"""
    return f"""
func.func @ids(%out: {GL}) {launch("4, ?, 1", 64, cluster)} {{
  %bx = tile.block_id x
  %by = tile.block_id y
  %c4 = arith.constant 4 : index
  %row0 = arith.muli %by, %c4 : index
  %row = arith.addi %row0, %bx : index{body}
  func.return
}}
"""


def lane_ids_kernel(cluster: str) -> str:
    """The same, lane by lane: every lane stores the block's values (i32) with frag.store."""
    body = ""
    for i, name in enumerate(ID_OPS):
        body += f"""
  %v{i} = tile.{name}
  %v{i}_i = arith.index_cast %v{i} : index to i32
  %col{i} = arith.constant {i} : i32
  %o{i} = arith.addi %row5, %col{i} : i32
  %p{i} = llvm.getelementptr %out[%o{i}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  frag.store %v{i}_i, %p{i} : i32, !llvm.ptr<1>"""
    return f"""
func.func @ids(%out: !llvm.ptr<1> {{tile.dtype = i32}}) {launch("4, ?, 1", 64, cluster)} {{
  %bx = tile.block_id x
  %by = tile.block_id y
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %row0 = arith.muli %by, %c4 : index
  %row = arith.addi %row0, %bx : index
  %row5i = arith.muli %row, %c5 : index
  %row5 = arith.index_cast %row5i : index to i32{body}
  func.return
}}
"""


def expected_ids(cx: int, cy: int) -> np.ndarray:
    rows = []
    for y in range(2):
        for x in range(4):
            rows.append([x // cx, y // cy, 4 // cx, 2 // cy, x % cx + (y % cy) * cx])
    return np.array(rows)


@pytest.mark.parametrize("cx,cy", [(2, 1), (2, 2), (1, 1)])
def test_cluster_ids_tile_level(cx, cy):
    out = np.full((8, 5), np.nan, np.float32)
    run_text(ids_kernel(f"{cx}, {cy}, 1"), "ids", out, grid=(4, 2, 1))
    np.testing.assert_array_equal(out, expected_ids(cx, cy))


@pytest.mark.parametrize("cx,cy", [(2, 1), (2, 2)])
def test_cluster_ids_lane_level(cx, cy):
    out = np.full(40, -1, np.int32)
    run_fragment(parse_module(lane_ids_kernel(f"{cx}, {cy}, 1")), "ids", [out], grid=(4, 2, 1))
    np.testing.assert_array_equal(out.reshape(8, 5), expected_ids(cx, cy))


@pytest.mark.parametrize("lanes", [False, True], ids=["tile", "lane"])
def test_a_grid_of_partial_clusters_is_an_error(lanes):
    text = lane_ids_kernel("2, 2, 1") if lanes else ids_kernel("2, 2, 1")
    out = np.zeros(40, np.int32) if lanes else np.zeros((8, 5), np.float32)
    with pytest.raises(TileInterpreterError, match=r"@ids.*grid \[4, 3, 1\] is not whole thread-block clusters of "
                                                   r"\[2, 2, 1\]: its extent 3 on axis y is not a multiple of 2"):
        run(parse_module(text), "ids", out, grid=(4, 3, 1))


# -- tile.cluster_barrier -----------------------------------------------------------------


def handoff(barrier: bool, per_warp: bool) -> str:
    """Block rank r writes r + 1 to ``%g[0, r]``, then reads the other block's entry into ``%g[1, r]``."""
    return f"""
func.func @handoff(%g: {GL}) {launch("2, 1, 1", 64, "2, 1, 1")} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  {"%w = tile.warp_id" if per_warp else ""}
  %r = tile.block_rank
  %r1 = arith.addi %r, %c1 : index
  %ri = arith.index_cast %r1 : index to i64
  %rf = arith.sitofp %ri : i64 to f32
  %mine = tile.fill %rf : f32 -> !tile.rt<1x1xf32>
  tile.store %mine, %g[%c0, %r] : !tile.rt<1x1xf32> -> {GL}
  {"tile.cluster_barrier" if barrier else ""}
  %other = arith.subi %c1, %r : index
  %seen = tile.load %g[%c0, %other] : {GL} -> !tile.rt<1x1xf32>
  tile.store %seen, %g[%c1, %r] : !tile.rt<1x1xf32> -> {GL}
  func.return
}}
"""


@pytest.mark.parametrize("per_warp", [False, True], ids=["block-level", "per-warp"])
@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_cluster_barrier_orders_the_blocks(per_warp, order):
    g = np.zeros((2, 2), np.float32)
    run_text(handoff(True, per_warp), "handoff", g, warp_order=order)
    np.testing.assert_array_equal(g, [[1, 2], [2, 1]])


@pytest.mark.parametrize("per_warp", [False, True], ids=["block-level", "per-warp"])
@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_without_the_cluster_barrier_the_first_block_reads_the_old_value(per_warp, order):
    """The blocks of a cluster take turns in the warp order: without the barrier the block that runs
    first reads the other's entry before it is written, on every run."""
    g = np.zeros((2, 2), np.float32)
    run_text(handoff(False, per_warp), "handoff", g, warp_order=order)
    first = 0 if order == "ascending" else 1
    assert g[1, first] == 0 and g[1, 1 - first] == first + 1


def test_a_block_that_skips_the_cluster_barrier_diverges():
    text = f"""
func.func @k() {launch("2, 1, 1", 64, "2, 1, 1")} {{
  %c0 = arith.constant 0 : index
  %w = tile.warp_id
  %r = tile.block_rank
  %first = arith.cmpi eq, %r, %c0 : index
  scf.if %first {{
    tile.cluster_barrier
  }}
  func.return
}}
"""
    with pytest.raises(TileInterpreterError, match=r"'tile.cluster_barrier'.*\[block \(0, 0, 0\), warp 0\].*warp\(s\) "
                                                   r"0, 1 of block \(0, 0, 0\) wait at tile.cluster_barrier, but "
                                                   r"warp\(s\) 0, 1 of block \(1, 0, 0\) finished"):
        run_text(text, "k")


def test_block_barriers_stay_within_their_block():
    """A warp of block 1 diverging on tile.barrier is reported as block 1's, while block 0 is fine."""
    text = f"""
func.func @k() {launch("2, 1, 1", 64, "2, 1, 1")} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %w = tile.warp_id
  %r = tile.block_rank
  %first_warp = arith.cmpi eq, %w, %c0 : index
  %second_block = arith.cmpi eq, %r, %c1 : index
  %skip = arith.andi %first_warp, %second_block : i1
  scf.if %skip {{
  }} else {{
    tile.barrier
  }}
  func.return
}}
"""
    with pytest.raises(TileInterpreterError, match=r"warp\(s\) 1 of block \(1, 0, 0\) wait at tile.barrier, but "
                                                   r"warp\(s\) 0 of block \(1, 0, 0\) finished without reaching it"):
        run_text(text, "k")


def test_a_deadlock_names_the_blocks():
    text = f"""
func.func @k() {launch("2, 1, 1", 64, "2, 1, 1")} {{
  %c1 = arith.constant 1 : index
  %w = tile.warp_id
  %r = tile.block_rank
  %second = arith.cmpi eq, %r, %c1 : index
  scf.if %second {{
    scf.while () : () -> () {{
      %t = arith.constant true
      scf.condition(%t)
    }} do {{
      scf.yield
    }}
  }}
  tile.cluster_barrier
  func.return
}}
"""
    # whichever waiting warp's deadline passes first reports it
    with pytest.raises(TileInterpreterError, match=r"deadlock: warp \d of block \(\d, 0, 0\) waited 0.2 s [a-z ]+; "
                                                   r"warp 0 of block \(1, 0, 0\) has been running since"):
        run_text(text, "k", barrier_timeout=0.2)


# -- a two-block pipeline with a multicast operand (tile level) ------------------------------------

ST = "!tile.st<32x32xf32, (32,32):(32,1)>"
BUF = "!tile.st<2x32x32xf32, (2,32,32):(1024,32,1)>"


def pipeline(empty: str = "cluster_warps", arrive: bool = True, x_col: str = "%xc", init_barrier: bool = True) -> str:
    """Clusters of two blocks of three warps: warp 2 produces, warps 0 and 1 consume (16 rows each).

    Over ``%k_tiles`` steps through two stages the producer of block rank r
    multicasts rows [16 r, 16 r + 16) of the cluster's 32x32 tile of ``%x`` into
    both blocks' stage, and copies the block's own tile of ``%y``; the full
    barriers count both (8192 bytes), the ``empty`` barriers the consumers'
    releases. The consumers sum ``x + y`` over the steps into ``%o``. The
    producer and consumer regions are marked as ``tile-pipeline{producer}``
    marks them, so ``tile-distribute`` lowers the kernel as it is.
    """
    release = f"tile.mbar_arrive %empty[%rs] : !tile.mbar<2, {empty}>" if arrive else ""
    return f"""
func.func @sums(%x: {GL} {{tile.aligned_rows = 16 : i64}}, %y: {GL} {{tile.aligned_rows = 16 : i64}}, %o: {GL},
                %k_tiles: index)
    {launch("?, 1, 1", 96, "2, 1, 1", 16384, ", tile.producer_threads = 32 : i64")} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  %sx = tile.alloc : {BUF}
  %sy = tile.alloc : {BUF}
  %full = tile.mbar_init : !tile.mbar<2>
  %empty = tile.mbar_init : !tile.mbar<2, {empty}>
  {"tile.cluster_barrier" if init_barrier else ""}
  %w = tile.warp_id
  %b = tile.block_id x
  %cid = tile.cluster_id x
  %rank = tile.block_rank
  %xc = arith.muli %cid, %c32 : index
  %xr = arith.muli %rank, %c32 : index
  %yc = arith.muli %b, %c32 : index
  %producer = arith.cmpi eq, %w, %c2 : index
  scf.if %producer {{
    %wph_end, %ws_end = scf.for %k = %c0 to %k_tiles step %c1 iter_args(%wph = %c1, %ws = %c0) -> (index, index) {{
      tile.mbar_wait %empty[%ws], %wph issuer : !tile.mbar<2, {empty}>
      tile.mbar_expect %full[%ws], 8192 : !tile.mbar<2>
      %sxw = tile.stage %sx[%ws] : {BUF} -> {ST}
      %syw = tile.stage %sy[%ws] : {BUF} -> {ST}
      %row = arith.muli %k, %c32 : index
      tile.bulk_copy %x[%row, {x_col}] -> %sxw, %full[%ws] multicast : {GL} -> {ST}, !tile.mbar<2>
      tile.bulk_copy %y[%row, %yc] -> %syw, %full[%ws] : {GL} -> {ST}, !tile.mbar<2>
      %ws_inc = arith.addi %ws, %c1 : index
      %wrap = arith.cmpi eq, %ws_inc, %c2 : index
      %ws_next = arith.select %wrap, %c0, %ws_inc : index
      %wph_flip = arith.subi %c1, %wph : index
      %wph_next = arith.select %wrap, %wph_flip, %wph : index
      scf.yield %wph_next, %ws_next : index, index
    }}
  }} {{tile.role = "producer"}}
  %consumer = arith.cmpi ult, %w, %c2 : index
  scf.if %consumer {{
    %r0 = arith.muli %w, %c16 : index
    %zero = tile.zeros : !tile.rt<16x32xf32>
    %acc, %ph_end, %rs_end = scf.for %k = %c0 to %k_tiles step %c1
        iter_args(%acc_i = %zero, %ph = %c0, %rs = %c0) -> (!tile.rt<16x32xf32>, index, index) {{
      tile.mbar_wait %full[%rs], %ph : !tile.mbar<2>
      %sxr = tile.stage %sx[%rs] : {BUF} -> {ST}
      %syr = tile.stage %sy[%rs] : {BUF} -> {ST}
      %a = tile.load %sxr[%r0, %c0] : {ST} -> !tile.rt<16x32xf32>
      %bb = tile.load %syr[%r0, %c0] : {ST} -> !tile.rt<16x32xf32>
      {release}
      %s = tile.add %a, %bb : !tile.rt<16x32xf32>
      %d = tile.add %acc_i, %s : !tile.rt<16x32xf32>
      %rs_inc = arith.addi %rs, %c1 : index
      %wrap = arith.cmpi eq, %rs_inc, %c2 : index
      %rs_next = arith.select %wrap, %c0, %rs_inc : index
      %ph_flip = arith.subi %c1, %ph : index
      %ph_next = arith.select %wrap, %ph_flip, %ph : index
      scf.yield %d, %ph_next, %rs_next : !tile.rt<16x32xf32>, index, index
    }}
    tile.store %acc, %o[%r0, %yc] : !tile.rt<16x32xf32> -> {GL}
  }} {{tile.role = "consumers"}}
  tile.cluster_barrier
  func.return
}}
"""


def pipeline_inputs(rng, clusters: int = 2, k: int = 5):
    x = rng.standard_normal((32 * k, 32 * clusters)).astype(np.float32)
    y = rng.standard_normal((32 * k, 64 * clusters)).astype(np.float32)
    o = np.full((32, 64 * clusters), np.nan, np.float32)
    return x, y, o


def pipeline_reference(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Block b's columns: the sum over the steps of its cluster's tile of x plus its own tile of y."""
    xs = x.astype(np.float64).reshape(k, 32, -1).sum(0)  # one 32-column tile per cluster
    ys = y.astype(np.float64).reshape(k, 32, -1).sum(0)  # one per block
    return np.repeat(xs.reshape(32, -1, 1, 32), 2, axis=2).reshape(32, -1) + ys


@pytest.mark.parametrize("options", [{}, {"warp_order": "descending"}, {"async_mode": "eager"}],
                         ids=["default", "descending", "eager"])
def test_multicast_pipeline(rng, options):
    k = 5
    x, y, o = pipeline_inputs(rng, 2, k)
    run_text(pipeline(), "sums", x, y, o, k, grid=(4, 1, 1), **options)
    assert not np.isnan(o).any(), f"seed {rng.seed}"
    np.testing.assert_allclose(o, pipeline_reference(x, y, k), rtol=1e-5, atol=1e-5, err_msg=f"seed {rng.seed}")


def test_a_stage_released_by_its_own_block_only_is_overwritten_early(rng):
    """With ``warps`` empty barriers each producer waits for its own block's consumers only, and
    multicasts the next tile into the other block's stage while that block has not read it: the
    extra bytes come into the phase before it completes."""
    k = 5
    x, y, o = pipeline_inputs(rng, 2, k)
    with pytest.raises(TileInterpreterError, match=r"'tile.mbar_wait'.*\[block \(1, 0, 0\), warp 0\]: barrier 0: "
                                                   r"phase 0 expects 8192 bytes, its bulk copies bring 10240 before "
                                                   r"it completes.*before every block of the cluster had released it"):
        run_text(pipeline(empty="warps"), "sums", x, y, o, k, grid=(4, 1, 1))


def test_a_missing_release_is_a_hang(rng):
    k = 3
    x, y, o = pipeline_inputs(rng, 1, k)
    with pytest.raises(TileInterpreterError, match=r"'tile.mbar_wait'.*on the GPU this wait never ends"):
        run_text(pipeline(arrive=False), "sums", x, y, o, k, grid=(2, 1, 1))


def test_blocks_multicasting_different_windows_is_an_error(rng):
    k = 2
    x, y, o = pipeline_inputs(rng, 2, k)
    with pytest.raises(TileInterpreterError, match=r"'tile.bulk_copy'.*\[block \(1, 0, 0\), warp 2\]: the blocks of "
                                                   r"the cluster multicast different windows into phase 0 of barrier "
                                                   r"0: rank 1 copies the window at \[0, 32\], rank 0 copied the one "
                                                   r"at \[0, 0\]"):
        run_text(pipeline(x_col="%xr"), "sums", x, y, o, k, grid=(4, 1, 1))


def test_using_a_peers_barriers_before_it_initialised_them_is_an_error(rng):
    k = 2
    x, y, o = pipeline_inputs(rng, 1, k)
    with pytest.raises(TileInterpreterError, match=r"'tile.bulk_copy'.*\[block \(0, 0, 0\), warp 2\]: block rank 1 of "
                                                   r"the cluster has not initialised its barriers of `%full = "
                                                   r"tile.mbar_init.*a tile.cluster_barrier after tile.mbar_init"):
        run_text(pipeline(init_barrier=False), "sums", x, y, o, k, grid=(2, 1, 1))


# -- the same at fragment level: the pipeline through tile-distribute ---------------------------------


def distributed(**variant):
    """:func:`pipeline` through ``tile-layout,tile-distribute``: ``frag.tma_load ... multicast 3`` of each
    block's 16 rows, ``frag.mbar_arrive_warp ... cluster 2`` on the cluster_warps barriers."""
    from tilec.dialects.context import make_context
    from tilec.passes.registry import build_pipeline

    module = parse_module(pipeline(**variant))
    build_pipeline("tile-layout,tile-distribute").apply(make_context(), module)
    return module


def run_distributed(module, x, y, o, k, **options) -> None:
    from tilec.dialects.abi import gl_params
    from tilec.runtime.gl_views import expand

    (fn,) = list(module.ops)
    run(module, "sums", *expand(gl_params(fn), x, y, o, k, signature_length=len(fn.args)), grid=(4, 1, 1),
        **options)


@pytest.mark.parametrize("options", [{}, {"warp_order": "descending"}, {"async_mode": "eager"}],
                         ids=["default", "descending", "eager"])
def test_distributed_multicast_pipeline(rng, options):
    from tilec.dialects import frag

    module = distributed()
    loads = [op for op in module.walk() if isinstance(op, frag.TmaLoadOp)]
    arrivals = [op for op in module.walk() if isinstance(op, frag.MbarArriveWarpOp)]
    assert sorted(op.multicast.value.data if op.multicast else 0 for op in loads) == [0, 3]
    assert [op.cluster.value.data for op in arrivals] == [2]
    k = 5
    x, y, o = pipeline_inputs(rng, 2, k)
    run_distributed(module, x, y, o, k, **options)
    assert not np.isnan(o).any(), f"seed {rng.seed}"
    np.testing.assert_allclose(o, pipeline_reference(x, y, k), rtol=1e-5, atol=1e-5, err_msg=f"seed {rng.seed}")


@pytest.mark.parametrize("variant,error", [
    ({"empty": "warps"}, r"'frag.mbar_wait'.*\[block \(1, 0, 0\), warp 0\]: the mbarrier at byte 0 of shared "
                         r"\"sums_full\": phase 0 expects 8192 bytes, its bulk copies bring 10240 before it completes"),
    ({"init_barrier": False}, r"'frag.tma_load'.*\[block \(0, 0, 0\), warp 2\]: lane 0: no mbarrier at byte offset 0 "
                              r"of shared \"sums_full\" in block rank 1 of the cluster"),
], ids=["released-by-own-block", "no-cluster-barrier-after-init"])
def test_distributed_pipeline_mistakes(rng, variant, error):
    k = 3
    x, y, o = pipeline_inputs(rng, 2, k)
    with pytest.raises(TileInterpreterError, match=error):
        run_distributed(distributed(**variant), x, y, o, k)


# -- fragment level by hand ----------------------------------------------------------------------------


def lane_pipeline(cluster_arrive: bool = True, init_barrier: bool = True) -> str:
    """Clusters of two one-warp blocks, one 32x32 f32 stage: at step k lane 0 of block rank r waits
    until the stage is free (``empty``: one arrival per block of the cluster), announces 4096 bytes on
    ``full`` and multicasts rows [32 k + 16 r, 32 k + 16 r + 16) of ``%x`` (its 16-row box) to
    rows [16 r, 16 r + 16) of both blocks' stage; lane l of each block adds up row l, then the warp
    releases the stage in both blocks (``cluster 2``). Lane l's total goes to ``%o[32 r + l]``."""
    arrive = "frag.mbar_arrive_warp %empty cluster 2 : !llvm.ptr<3>" if cluster_arrive else (
        "frag.mbar_arrive_warp %empty : !llvm.ptr<3>")
    return f"""
func.func @sums(%x: !llvm.ptr<1> {{tile.dtype = f32, tile.gl = "x"}}, %x_dim0: i64 {{tile.gl = "x", tile.dim = 0 : i64}},
    %x_dim1: i64 {{tile.gl = "x", tile.dim = 1 : i64}}, %x_stride0: i64 {{tile.gl = "x", tile.stride = 0 : i64}},
    %x_stride1: i64 {{tile.gl = "x", tile.stride = 1 : i64}},
    %x_map0: !llvm.ptr {{tile.gl = "x", tile.tensor_map = 0 : i64, tile.box = array<i64: 16, 32>, tile.swizzle = 0 : i64}},
    %o: !llvm.ptr<1> {{tile.dtype = f32}}, %k_tiles: index) {launch("2, 1, 1", 32, "2, 1, 1", 4352)} {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i32 = arith.constant 32 : index
  %zero = arith.constant 0.0 : f32
  %lane_index = tile.lane_id
  %lane = arith.index_cast %lane_index : index to i32
  %rank_index = tile.block_rank
  %rank = arith.index_cast %rank_index : index to i32
  %lead = arith.cmpi eq, %lane, %c0 : i32
  %full = frag.shared "full", 8, align 8 : !llvm.ptr<3>
  %empty = frag.shared "empty", 8, align 8 : !llvm.ptr<3>
  %s = frag.shared "s", 4096, align 128 : !llvm.ptr<3>
  scf.if %lead {{
    frag.mbar_init %full, 1 : !llvm.ptr<3>
    frag.mbar_init %empty, 2 : !llvm.ptr<3>
    frag.mbar_init_fence
  }}
  {"tile.cluster_barrier" if init_barrier else ""}
  %my_rows = arith.muli %rank, %c16 : i32
  %my_elems = arith.muli %my_rows, %c32 : i32
  %dst = llvm.getelementptr %s[%my_elems] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %row_start = arith.muli %lane, %c32 : i32
  %total = scf.for %k = %i0 to %k_tiles step %i1 iter_args(%acc = %zero) -> (f32) {{
    %ki = arith.index_cast %k : index to i32
    %parity = arith.andi %ki, %c1 : i32
    %free = arith.xori %parity, %c1 : i32
    scf.if %lead {{
      frag.mbar_wait %empty, %free : !llvm.ptr<3>
      frag.mbar_expect_tx %full, 4096 : !llvm.ptr<3>
      %tile_row = arith.muli %ki, %c32 : i32
      %row = arith.addi %tile_row, %my_rows : i32
      frag.tma_load %dst, %x_map0[%c0, %row], %full multicast 3 : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
    }}
    frag.mbar_wait %full, %parity : !llvm.ptr<3>
    %sum = scf.for %j = %i0 to %i32 step %i1 iter_args(%part = %acc) -> (f32) {{
      %ji = arith.index_cast %j : index to i32
      %at = arith.addi %row_start, %ji : i32
      %p = llvm.getelementptr %s[%at] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      %v = frag.load %p : !llvm.ptr<3> -> f32
      %next = arith.addf %part, %v : f32
      scf.yield %next : f32
    }}
    {arrive}
    scf.yield %sum : f32
  }}
  %base = arith.muli %rank, %c32 : i32
  %out_at = arith.addi %base, %lane : i32
  %q = llvm.getelementptr %o[%out_at] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  frag.store %total, %q : f32, !llvm.ptr<1>
  tile.cluster_barrier
  func.return
}}
"""


def lane_pipeline_args(x: np.ndarray, o: np.ndarray, k: int) -> list:
    return [x, *x.shape, *(s // x.itemsize for s in x.strides), o, k]


@pytest.mark.parametrize("options", [{}, {"warp_order": "descending"}, {"async_mode": "eager"}],
                         ids=["default", "descending", "eager"])
def test_lane_level_multicast_pipeline(rng, options):
    k = 3
    x = rng.standard_normal((32 * k, 32)).astype(np.float32)
    o = np.full(64, np.nan, np.float32)
    run(parse_module(lane_pipeline()), "sums", *lane_pipeline_args(x, o, k), **options)
    rows = x.astype(np.float64).reshape(k, 32, 32).sum(axis=(0, 2))  # row l of every tile
    np.testing.assert_allclose(o, np.concatenate([rows, rows]), rtol=1e-5, atol=1e-5, err_msg=f"seed {rng.seed}")


def test_lane_level_release_in_one_block_only_is_a_hang(rng):
    """``empty`` counts one arrival of each block: arriving in its own block only, no phase completes."""
    k = 2
    x = rng.standard_normal((32 * k, 32)).astype(np.float32)
    o = np.zeros(64, np.float32)
    with pytest.raises(TileInterpreterError, match=r"'frag.mbar_wait'.*has 1 of its 2 arrivals: on the GPU this wait "
                                                   "never ends"):
        run(parse_module(lane_pipeline(cluster_arrive=False)), "sums", *lane_pipeline_args(x, o, k))


def test_lane_level_peer_barrier_before_its_init_is_an_error(rng):
    x = rng.standard_normal((32, 32)).astype(np.float32)
    o = np.zeros(64, np.float32)
    with pytest.raises(TileInterpreterError, match=r"'frag.tma_load'.*\[block \(0, 0, 0\), warp 0\]: lane 0: no "
                                                   r"mbarrier at byte offset 0 of shared \"full\" in block rank 1 of "
                                                   "the cluster"):
        run(parse_module(lane_pipeline(init_barrier=False)), "sums", *lane_pipeline_args(x, o, 1))
