"""Thread-block clusters outside the interpreters: options, the grid, the launch, the uniformity proof.

The interpreters' model of a cluster (blocks run together, multicast copies, cluster-wide
barriers) is tested in ``tests/interp/test_clusters.py``; the lowering in the lit tests
``dialects/tile/clusters.mlir`` and ``passes/tile-tiling/cluster.mlir``; the GPU in
``tests/gpu/test_gemm.py``.
"""

from __future__ import annotations

import dataclasses

import pytest
from xdsl.dialects import scf

from tilec.api import make_context
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.kernels.gemm_config import PERSISTENT_WGMMA_CONFIG, MatmulConfig, config_from_json, config_to_json
from tilec.passes.tile_pipeline import TilePipelineError
from tilec.passes.uniformity import cluster_varying
from tilec.passes.tile_tiling import TileTilingPass
from tilec.passes.tile_to_ptx import TileToPTX
from tilec.passes.tiling_config import TilingConfigError
from tilec.runtime.args import check_whole_clusters
from tilec.runtime.errors import LaunchConfigError

C2 = dataclasses.replace(PERSISTENT_WGMMA_CONFIG, cluster=2)
C1X2 = dataclasses.replace(PERSISTENT_WGMMA_CONFIG, cluster=(1, 2))


def test_cluster_options_are_checked():
    with pytest.raises(TilingConfigError, match=r"cluster must be C \(1 .. 8 blocks along M\) or CM,CN .* got 9"):
        TileTilingPass(cluster=9, persistent=True)
    with pytest.raises(TilingConfigError, match="got 1,16$"):
        TileTilingPass(cluster=(1, 16))
    with pytest.raises(TilingConfigError, match="cluster=2,2: a cluster spans blocks along M or along N, not both"):
        TileTilingPass(cluster=(2, 2))
    assert TileTilingPass(cluster=(2, 1)).cluster == TileTilingPass(cluster=2).cluster == (2,)
    assert TileTilingPass(cluster=(1, 1)).cluster == (1,) and TileTilingPass(cluster=(1, 4)).cluster == (1, 4)
    with pytest.raises(TilePipelineError, match="cluster=1,2 multicasts bulk copies"):
        TileToPTX(block=(128, 256, 64), wgmma=True, cluster=(1, 2))
    with pytest.raises(TilePipelineError, match="cluster=2 multicasts bulk copies into stages the blocks release"):
        TileToPTX(block=(128, 256, 64), wgmma=True, persistent=True, cluster=2)
    with pytest.raises(ValueError, match="cluster > 1 multicasts bulk copies .* it needs bulk=True and release=True"):
        MatmulConfig(block=(128, 256, 64), bulk=True, release=False, cluster=2)
    with pytest.raises(ValueError, match="MatmulConfig: cluster must be C .* got 0"):
        MatmulConfig(block=(128, 256, 64), bulk=True, cluster=0)
    with pytest.raises(ValueError, match="MatmulConfig: cluster=4,2: a cluster spans blocks along M or along N"):
        MatmulConfig(block=(128, 256, 64), bulk=True, cluster=(4, 2))
    assert C2.cluster == (2,) and C2.describe().endswith("persistent, clusters of 2 along M")
    assert C1X2.describe().endswith("persistent, clusters of 2 along N")


def test_a_cluster_config_launches_whole_clusters():
    """Each cluster takes two block rows of a column of tiles: the grid is whole clusters, at most one
    block an SM, at most the clusters the tiles fill."""
    assert C2.grid(4096, 4096, sm_count=132) == 132
    assert C2.grid(1000, 1000, sm_count=132) == 32  # 8 x 4 tiles: 4 x 4 clusters of 2
    assert C2.grid(129, 300, sm_count=132) == 4  # a ragged last cluster row still takes its pair
    assert C2.grid(4096, 4096, sm_count=131) == 130
    thin = MatmulConfig(block=(64, 64, 128), stages=6, bulk=True, wgmma=True, producer=True, cluster=2)
    assert thin.grid(128, 4096) == 128 and thin.grid(65, 100) == 4  # a block a tile, whole clusters
    assert config_from_json(config_to_json(C2)) == C2 and "cluster" not in config_to_json(PERSISTENT_WGMMA_CONFIG)
    assert config_to_json(C2)["cluster"] == 2 and config_to_json(C1X2)["cluster"] == [1, 2]  # old records read alike
    assert config_from_json(config_to_json(C1X2)) == C1X2
    # along N each cluster takes two block columns of one row of tiles: 8 x ceil(4 / 2) clusters at 1000^2
    assert C1X2.grid(1000, 1000, sm_count=132) == 32 and C1X2.grid(300, 257, sm_count=132) == 6
    with pytest.raises(ValueError, match="malformed config"):
        config_from_json({**config_to_json(C2), "cluster": "2"})
    with pytest.raises(LaunchConfigError, match=r"runs in clusters of \[2, 1, 1\] blocks: its grid \[131, 1, 1\] "
                                                r"must be whole clusters, but 131 blocks along x"):
        check_whole_clusters("k", 131, (2, 1, 1))
    check_whole_clusters("k", (132, 3), (2, 1, 1))


def test_launch_replace_keeps_the_cluster():
    launch = LaunchAttr((-1, 1, 1), (256, 1, 1), 1024, (2, 1, 1))
    assert launch.replace(smem=2048).cluster_dims == (2, 1, 1)
    assert launch.replace(block=(384, 1, 1)) == LaunchAttr((-1, 1, 1), (384, 1, 1), 1024, (2, 1, 1))
    assert LaunchAttr((4, 1, 1), (32, 1, 1)).cluster_size == 1


UNIFORM = """
func.func @k(%v: !tile.gl<f16, [?, ?]>, %n: index) attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 0, cluster = [2, 1, 1]>} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %cid = tile.cluster_id x
  %ncl = tile.cluster_count x
  %rank = tile.block_rank
  %bid = tile.block_id x
  %by = tile.block_id y
  %m = tile.dim %v, 0 : !tile.gl<f16, [?, ?]>
  scf.for %t = %cid to %m step %ncl {
    %col = arith.muli %t, %c64 : index
    %q = arith.divui %col, %n : index
    %row = arith.addi %q, %rank : index
    %other = arith.addi %t, %bid : index
    scf.for %s = %c0 to %row step %c64 {
      %inner = arith.addi %s, %c0 : index
    }
  }
  func.return
}
"""


def test_cluster_varying_values():
    """What tile-pipeline multicasts: values the same in every block of a cluster (constants,
    arguments, cluster ids and counts, extents, the block id along an axis the cluster does not span
    (attention's head), loops over such bounds, and arithmetic of them); not the block's id along
    the cluster's axis or its rank, nor what they reach, nor a loop that runs differently."""
    from xdsl.parser import Parser

    module = Parser(make_context(), UNIFORM).parse_module()
    varying = cluster_varying(next(op for op in module.walk() if op.name == "func.func"))
    values = {}
    for op in module.walk():
        for r in op.results:
            values[r.name_hint] = r
        if isinstance(op, scf.ForOp):
            values[op.body.block.args[0].name_hint] = op.body.block.args[0]
    uniform = {name for name, v in values.items() if v not in varying}
    assert {"c0", "c64", "cid", "ncl", "by", "m", "t", "col", "q"} <= uniform
    assert not uniform & {"rank", "bid", "row", "other", "s", "inner"}  # s loops to a rank-dependent bound
    assert isinstance(values["rank"].owner, t.BlockRankOp)


@pytest.mark.parametrize("config,shape", [
    (C2, (136, 264, 72)),  # persistent, a producer warpgroup, TMA stores; ragged last cluster row
    (MatmulConfig(block=(64, 64, 128), stages=3, bulk=True, wgmma=True, cluster=2), (72, 64, 264)),  # plain pipeline
    (C1X2, (136, 520, 72)),  # along N: A's tiles multicast; a ragged last cluster column
    (MatmulConfig(block=(128, 64, 64), stages=4, bulk=True, wgmma=True, cluster=(1, 2)), (72, 136, 200)),
], ids=["persistent-producer", "plain", "along-n-persistent", "along-n-plain"])
def test_cluster_gemm_means_the_same_at_each_level(config, shape):
    """The GEMM of a cluster config, interpreted after tile-tiling (tile level, no pipeline yet),
    after tile-pipeline (multicast copies, cluster-wide empty barriers) and after tile-distribute
    (lane by lane): each equals the float64 product."""
    import numpy as np
    from xdsl.passes import PassPipeline

    import tilec.kernels.gemm as mm
    from tilec.dialects.abi import gl_params
    from tilec.interp import run
    from tilec.runtime.gl_views import expand

    m, n, k = shape
    rng = np.random.default_rng(m + n + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    plan = mm.plan_matmul(a, b, config=config, arch="sm_90a", sm_count=132)
    plan = dataclasses.replace(plan, spec=dataclasses.replace(plan.spec, align=16))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    for last in ("tile-tiling", "tile-pipeline", "tile-distribute"):
        module = mm.build_module(plan.spec)
        PassPipeline(config.passes_to(last)).apply(make_context(), module)
        fn = next(op for op in module.walk() if op.name == "func.func")
        out = np.full((m, n), np.nan, np.float16)
        views = plan.views(out)
        args = expand(gl_params(fn), *views, signature_length=len(fn.args)) if last == "tile-distribute" else \
            [v.array if hasattr(v, "array") else v for v in (a, b, out)]
        run(module, fn.sym_name.data, *args, grid=(plan.grid, 1, 1))
        err = float(np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref))
        assert not np.isnan(out).any() and err < 2e-3, (last, err)
        if last == "tile-pipeline":
            assert "multicast" in str(module) and "cluster_warps" in str(module)


_GUARDED = """
func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f32, [?, ?]>, %lim: index)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 8192, cluster = [2, 1, 1]>} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.gl<f16, [?, ?]>
  %bid = tile.block_id x
  %cid = tile.cluster_id x
  %row0 = arith.muli %bid, %c64 : index
  %col0 = arith.muli %cid, %c64 : index
  %warp = tile.warp_id
  %wm = arith.divui %warp, %c2 : index
  %wn = arith.remui %warp, %c2 : index
  %wrow = arith.muli %wm, %c32 : index
  %wcol = arith.muli %wn, %c32 : index
  %sa = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
  %sb = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  %zero = tile.zeros : !tile.rt<32x32xf32>
  %go = GO
  %ub = UB
  scf.if %go {
    %acc = scf.for %k = %c0 to %ub step %c32 iter_args(%acc_i = %zero) -> (!tile.rt<32x32xf32>) {
      tile.copy %a[%row0, %k] -> %sa thr <(32,4):(4,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(32,1)>
      tile.copy %b[%k, %col0] -> %sb thr <(16,8):(8,1)> val <(1,8):(1,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
      tile.barrier
      %ra = tile.load %sa[%wrow, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x32xf16>
      %rb = tile.load %sb[%c0, %wcol] : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x32xf16>
      %d = tile.mma %ra, %rb, %acc_i atom <mma_m16n8k16_f16> : !tile.rt<32x32xf16>, !tile.rt<32x32xf16>, !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
      tile.barrier
      scf.yield %d : !tile.rt<32x32xf32>
    }
    %row = arith.addi %row0, %wrow : index
    %col = arith.addi %col0, %wcol : index
    tile.store %acc, %c[%row, %col] : !tile.rt<32x32xf32> -> !tile.gl<f32, [?, ?]>
  }
  func.return
}
"""


@pytest.mark.parametrize("go,ub,multicast", [
    ("arith.constant true", "arith.addi %K, %c0 : index", True),  # every block runs the loop alike
    ("arith.cmpi ult, %bid, %lim : index", "arith.addi %K, %c0 : index", False),  # a block may skip it
    ("arith.constant true", "arith.addi %K, %bid : index", False),  # trip counts differ between blocks
], ids=["alike", "block-dependent-branch", "block-dependent-trips"])
def test_multicast_only_where_every_block_runs_the_loop_alike(go, ub, multicast):
    """A block that skips the K loop, or runs it fewer times, would never issue its share of a multicast
    (nor release the stages the others wait for): then the copies stay each block's own. Either way the
    pipelined kernel means what the input meant (a review found the first version deadlocking here)."""
    import numpy as np
    from xdsl.passes import PassPipeline
    from xdsl.parser import Parser

    from tilec.interp import run
    from tilec.passes.tile_pipeline import TilePipelinePass

    text = _GUARDED.replace("GO", go).replace("UB", ub)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((128, 64)).astype(np.float16), rng.standard_normal((64, 64)).astype(np.float16)
    results = []
    for pipelined in (False, True):
        module = Parser(make_context(), text).parse_module()
        if pipelined:
            PassPipeline((TilePipelinePass(stages=3, bulk=True, reg_double_buffer=False),)).apply(make_context(), module)
            assert ("multicast" in str(module)) == multicast and ("cluster_warps" in str(module)) == multicast
        c = np.full((128, 128), np.nan, np.float32)
        run(module, "gemm", a, b, c, 1, grid=(2, 1, 1), barrier_timeout=10)
        results.append(c)
    np.testing.assert_array_equal(np.isnan(results[0]), np.isnan(results[1]))
    np.testing.assert_allclose(np.nan_to_num(results[1]), np.nan_to_num(results[0]), rtol=1e-3, atol=1e-3)


def test_warp_specialised_blocks_stay_independent_when_they_run_the_loop_differently():
    """The producer's ring is one for all of a kernel's K loops: with a K loop whose trip count depends
    on the block's rank nothing is multicast and the empty barriers count the block's own warps (with
    the cluster's, a block's producer would wait for releases the other block never makes)."""
    import numpy as np
    from xdsl.dialects import arith, scf
    from xdsl.passes import PassPipeline
    from xdsl.rewriter import InsertPoint, Rewriter

    import tilec.kernels.gemm as mm
    from tilec.interp import run

    config = MatmulConfig(block=(128, 128, 64), bulk=True, wgmma=True, producer=True, cluster=2)
    plan = mm.plan_matmul(np.zeros((256, 512), np.float16), np.zeros((512, 128), np.float16), config=config,
                          arch="sm_90a", sm_count=132)
    plan = dataclasses.replace(plan, spec=dataclasses.replace(plan.spec, align=16))
    module = mm.build_module(plan.spec)
    passes = config.passes_to("tile-pipeline")
    PassPipeline(passes[:1]).apply(make_context(), module)  # tile-tiling
    rank = next(op for op in module.walk() if isinstance(op, t.BlockRankOp)).result
    k_loop = next(op for op in module.walk() if isinstance(op, scf.ForOp) and op.body.block.args[0].name_hint == "k")
    two = arith.ConstantOp.from_int_and_width(2, rank.type)
    half = arith.DivUIOp(k_loop.ub, two.result)
    cut = arith.MuliOp(half.result, rank)
    ub = arith.SubiOp(k_loop.ub, cut.result)  # rank 0 runs all of K, rank 1 half of it
    Rewriter.insert_op([two, half, cut, ub], InsertPoint.before(k_loop))
    k_loop.operands[1] = ub.result
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((256, 512)).astype(np.float16), rng.standard_normal((512, 128)).astype(np.float16)
    results = []
    for pipelined in (False, True):
        if pipelined:
            PassPipeline(passes[1:]).apply(make_context(), module)
            text = str(module)
            assert "multicast" not in text and "cluster_warps" not in text and "tile.cluster_barrier" not in text
        c = np.full((256, 128), np.nan, np.float16)
        run(module, "matmul_f16_nn_f16_a16", a, b, c, grid=(2, 1, 1), barrier_timeout=20)
        results.append(c)
    np.testing.assert_allclose(results[1].astype(np.float32), results[0].astype(np.float32), rtol=2e-3, atol=2e-3)
    ref = a[128:, :256].astype(np.float32) @ b[:256].astype(np.float32)
    assert np.abs(results[1][128:].astype(np.float32) - ref).max() < 0.1
