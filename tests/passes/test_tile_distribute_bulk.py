"""tile-distribute and codegen of bulk tensor copies (sm_90): ABI, one issuing thread, PTX that ptxas takes.

The GPU check of the same kernels is ``tests/gpu/test_gemm.py`` (the bulk
configuration forced on ragged shapes, every transpose, bf16, bias + ReLU).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, i64

import tilec
from tilec.dialects import frag
from tilec.kernels.gemm import compile_matmul
from tilec.kernels.gemm_ir import MatmulSpec, build_module
from dataclasses import replace

from tilec.kernels.gemm_config import (ALIGNED_CONFIGS, BULK_CONFIG, BULK_MEDIUM_CONFIG, DEEP_PERSISTENT_WGMMA_CONFIG,
                                       MID_WGMMA_CONFIG, PERSISTENT_WGMMA_CONFIG, THIN_WGMMA_CONFIGS, WGMMA_CONFIG,
                                       choose_config, has_bulk_copies)
from tilec.passes.registry import build_pipeline
from tilec.api import make_context


def _module(dtype: str = "float16", aligned: bool = True):
    return build_module(MatmulSpec(dtype, dtype, align=16 if aligned else 0))


RELEASE = replace(BULK_CONFIG, release=True)
"""The large bulk tile with stages released on empty barriers (no block barrier in the K loop)."""


@pytest.fixture(scope="module")
def bulk_kernel():
    return compile_matmul(MatmulSpec("float16", "float16", align=16), RELEASE, arch="sm_90")


def test_the_chosen_bulk_kernel_synchronises_once_per_k_tile():
    ptx = compile_matmul(MatmulSpec("float16", "float16", align=16), BULK_CONFIG, arch="sm_90").asm["ptx"]
    # barrier init, after the first tile's wait, once per K tile, after the loop
    assert "bar.warp.sync" not in ptx and ptx.count("bar.sync") == 4


def test_signature_has_a_tensor_map_per_operand(bulk_kernel):
    maps = [p for p in bulk_kernel.signature if p.kind == "tensor_map"]
    assert [(p.name, p.view, p.box, p.swizzle) for p in maps] == [
        ("a_map0", "a", (128, 64), 128),  # A's 128x64 tile: one box of 128-byte rows
        ("b_map0", "b", (64, 64), 128),  # B's 64x128 tile: two 64x64 boxes side by side
    ]


def test_ptx_issues_bulk_copies_from_one_thread(bulk_kernel):
    ptx = bulk_kernel.asm["ptx"]
    assert len(re.findall(r"\.param \.align 64 \.b8 \w+\[128\]", ptx)) == 2
    assert ptx.count("cvta.param") == 2
    copies = re.findall(r"cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.tile\.mbarrier::complete_tx::bytes", ptx)
    # prologue: 2 stages x (1 box of A + 2 of B); loop: 3 boxes
    assert len(copies) == 9
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx and "mbarrier.try_wait.parity" in ptx
    # the warps release stages on empty barriers: no block barrier in the K loop
    assert "bar.warp.sync" in ptx and "@lead mbarrier.arrive.shared::cta.b64 _" in ptx
    # one after the full and the empty barriers' init (adjacent tile.mbar_init ops share it), one after the K loop
    assert ptx.count("bar.sync") == 2
    # each tensor map prefetched once, at the entry, before the barriers are made
    assert ptx.count("prefetch.tensormap") == 2
    assert ptx.index("prefetch.tensormap") < ptx.index("mbarrier.init")
    assert "cp.async.cg" not in ptx and "cp.async.wait_group" not in ptx  # no per-thread copies are left
    assert bulk_kernel.launch_defaults.shared_mem >= 3 * (128 * 64 + 64 * 128) * 2 + 2 * 3 * 8


def test_ptxas_assembles_without_spills(bulk_kernel):
    from tilec.codegen.ptxas import find_ptxas, kernel_resources

    if find_ptxas() is None:
        pytest.skip("ptxas is not installed (pip install -e '.[test]' brings it)")
    res = kernel_resources(bulk_kernel.asm["ptx"], "sm_90")[bulk_kernel.name]
    assert res.spill_stores == res.spill_loads == 0
    assert res.registers < 255  # the cp.async kernel of the same tile needs 254


def test_the_leader_thread_issues_and_every_thread_waits():
    module = _module()
    build_pipeline(RELEASE.pipeline_to("tile-distribute")).apply(make_context(), module)
    ops = list(module.walk())
    loads = [o for o in ops if isinstance(o, frag.TmaLoadOp)]
    expects = [o for o in ops if isinstance(o, frag.MbarExpectTxOp)]
    assert loads and expects and all(o.parent_op().name == "scf.if" for o in loads + expects)
    assert {o.bytes.value.data for o in expects} == {(128 * 64 + 64 * 128) * 2}
    inits = [o for o in ops if isinstance(o, frag.MbarInitOp)]
    # 3 full barriers (one arrival: the issuing thread's expect_tx), 3 empty ones (one arrival per warp)
    assert sorted(o.count.value.data for o in inits) == [1, 1, 1, 4, 4, 4]
    # the issuing thread alone waits for a stage's release; every warp releases, once
    waits = [o for o in ops if isinstance(o, frag.MbarWaitOp)]
    assert sum(o.parent_op().name == "scf.if" and o.parent_op().parent_op().name == "scf.if" for o in waits) == 1
    arrives = [o for o in ops if isinstance(o, frag.MbarArriveWarpOp)]
    assert len(arrives) == 1 and arrives[0].parent_op().name == "scf.for"
    # the boxes of B go to consecutive 8 KB blocks of its stage: coordinates col0 and col0 + 64
    assert all(len(o.coords) == 2 for o in loads)


def test_bulk_copy_needs_aligned_rows():
    module = _module(aligned=False)
    fn = next(iter(module.ops))
    fn.arg_attrs = ArrayAttr([DictionaryAttr({})] * 3)
    # without tile.aligned_rows the pipeline keeps cp.async: nothing to refuse
    build_pipeline(BULK_CONFIG.pipeline_to("tile-distribute")).apply(make_context(), module)
    assert not any(isinstance(o, frag.TmaLoadOp) for o in module.walk())


def test_regalloc_refuses_a_bulk_copy_of_an_unaligned_view():
    from tilec.interp import parse_module
    from xdsl.utils.exceptions import PassFailedException

    text = """
    func.func @k(%a: !tile.gl<f16, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 4096>} {
      %c0 = arith.constant 0 : index
      %bars = tile.mbar_init : !tile.mbar<1>
      %s = tile.alloc : !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>
      tile.mbar_expect %bars[%c0], 4096 : !tile.mbar<1>
      tile.bulk_copy %a[%c0, %c0] -> %s, %bars[%c0] : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>, !tile.mbar<1>
      tile.mbar_wait %bars[%c0], %c0 : !tile.mbar<1>
      func.return
    }
    """
    module = parse_module(text)
    with pytest.raises(PassFailedException, match=r"read by tile.bulk_copy or written by tile.bulk_store, .* give it tile.aligned_rows = 16"):
        build_pipeline("tile-regalloc").apply(make_context(), module)


def test_bulk_config_needs_sm_90():
    with pytest.raises(ValueError, match="need sm_90; the target is sm_80"):
        compile_matmul(MatmulSpec("float16", "float16", align=16), BULK_CONFIG, arch="sm_80")


def test_choose_config_takes_bulk_copies_on_sm_90_only():
    assert has_bulk_copies("sm_90") and not has_bulk_copies("sm_80") and not has_bulk_copies(None)
    # 512 of its 128x256 tiles (more than the SMs): the persistent kernel with four stages
    assert choose_config(4096, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90") == DEEP_PERSISTENT_WGMMA_CONFIG
    assert choose_config(4096, 4096, 4096, "bfloat16", sm_count=132, aligned=True, arch="sm_90") == DEEP_PERSISTENT_WGMMA_CONFIG
    # the warpgroup MMA takes row-major A and B only; transposed operands keep the mma.sync tile
    assert choose_config(4096, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90",
                         transpose_a=True) == BULK_CONFIG
    # 2048^3 is 128 such tiles (of 132 SMs): still the warpgroup MMA; 1536^3 (72 tiles) its half-width
    # tile (144 of them); transposed, the mma.sync bulk tile
    assert choose_config(2048, 2048, 2048, "float16", sm_count=132, aligned=True, arch="sm_90") == PERSISTENT_WGMMA_CONFIG
    assert choose_config(1536, 1536, 1536, "float16", sm_count=132, aligned=True, arch="sm_90") == PERSISTENT_WGMMA_CONFIG
    assert choose_config(1536, 1536, 1536, "float16", sm_count=132, aligned=True, arch="sm_90",
                         transpose_a=True) == BULK_CONFIG
    assert choose_config(512, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90") == MID_WGMMA_CONFIG
    assert choose_config(256, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[0]
    # K steps of 128 want a few of them: a short K keeps the mma.sync tile
    assert choose_config(256, 4096, 512, "float16", sm_count=132, aligned=True, arch="sm_90") == BULK_MEDIUM_CONFIG
    assert choose_config(4096, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_80") == ALIGNED_CONFIGS["wide"]
    assert choose_config(4096, 4096, 4096, "float16", sm_count=132, aligned=False, arch="sm_90").bulk is False
    # a decode step's few rows: one warpgroup of 64 rows, the widest tile that fills the SMs; too few
    # even for that (64 x 4096), or transposed, the mma.sync short tile
    assert choose_config(128, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[1]
    assert choose_config(128, 8192, 8192, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[0]
    assert choose_config(1024, 1024, 1024, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[0]
    assert choose_config(100, 8192, 1100, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[0]
    assert choose_config(64, 8192, 8192, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[1]
    assert choose_config(64, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90") == ALIGNED_CONFIGS["short"]
    assert choose_config(128, 4096, 4096, "float16", sm_count=132, aligned=True, arch="sm_90",
                         transpose_a=True) == ALIGNED_CONFIGS["short"]
    assert choose_config(16, 8192, 8192, "float16", sm_count=132, aligned=True, arch="sm_90") == ALIGNED_CONFIGS["decode"]
    assert choose_config(128, 8192, 8192, "float16", sm_count=132, aligned=True, arch="sm_80") == ALIGNED_CONFIGS["short"]
    assert "bulk=true" in BULK_CONFIG.pipeline() and "bulk copies" in BULK_CONFIG.describe()
    assert "release=false" in BULK_CONFIG.pipeline() and "release" not in RELEASE.pipeline()
    # fewer large tiles than SMs: the 64x128 wgmma tile of one warpgroup, or transposed the medium tile fed
    # by bulk copies on sm_90
    assert choose_config(1024, 1024, 1024, "float16", sm_count=132, aligned=True, arch="sm_90") == THIN_WGMMA_CONFIGS[0]
    assert choose_config(1024, 1024, 1024, "float16", sm_count=132, aligned=True, arch="sm_90",
                         transpose_a=True) == BULK_MEDIUM_CONFIG
    assert choose_config(1024, 1024, 1024, "float16", sm_count=132, aligned=True, arch="sm_80") == ALIGNED_CONFIGS["medium"]


def test_plan_matmul_chooses_for_the_target():
    a = np.zeros((4096, 4096), np.float16)
    for arch in ("sm_90", "sm_80"):
        plan = tilec.kernels.gemm.plan_matmul(a, a, sm_count=132, arch=arch)
        assert plan.config == choose_config(4096, 4096, 4096, "float16", sm_count=132, aligned=plan.spec.aligned,
                                            arch=arch)
