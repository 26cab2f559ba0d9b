"""sm_90a's warpgroup MMA on the GPU: ``examples/kernels/wgmma_f16.mlir`` (and its bf16 twin)
against float64, with fresh random inputs and a NaN-poisoned output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import tilec
from tilec.api import default_arch
from tilec.runtime.gl_views import expand
from tilec.runtime import has_device, no_device_reason

KERNEL = Path(__file__).resolve().parents[2] / "examples" / "kernels" / "wgmma_f16.mlir"

pytestmark = pytest.mark.gpu


def _sm90() -> str | None:
    if not has_device():
        return f"no CUDA device: {no_device_reason()}"
    if default_arch() != "sm_90":
        return f"wgmma needs sm_90a (an H100/H200); this GPU is {default_arch()}"
    return None



@pytest.mark.skipif(_sm90() is not None, reason=str(_sm90()))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_one_block_wgmma(dtype):
    torch = pytest.importorskip("torch")
    text = KERNEL.read_text()
    if dtype == "bfloat16":
        text = text.replace("f16", "bf16").replace("wgmma_bbf16", "wgmma_bf16")
    kernel = tilec.compile(text.encode(), pipeline="tile-regalloc,tile-to-llvm", arch="sm_90a")
    g = torch.Generator().manual_seed(7)
    tdt = getattr(torch, dtype)
    a = torch.randn(128, 64, generator=g).to(tdt).cuda()
    b = torch.randn(64, 128, generator=g).to(tdt).cuda()
    c = torch.full((128, 128), float("nan"), device="cuda")
    kernel(*expand(kernel, a, b, c))
    torch.cuda.synchronize()
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
    err = float(np.abs(c.double().cpu().numpy() - ref).max() / np.abs(ref).max())
    assert err < 1e-5, f"relative error {err}"


@pytest.mark.skipif(_sm90() is not None, reason=str(_sm90()))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("block,stages,release", [((128, 128, 64), 4, True), ((128, 256, 64), 3, False),
                                                  ((128, 128, 64), 3, True), ((64, 128, 128), 4, True),
                                                  ((64, 64, 128), 6, True)])
@pytest.mark.parametrize("shape", [(256, 512, 1024), (200, 136, 200), (1000, 264, 72)])
def test_matmul_with_wgmma(dtype, block, stages, release, shape):
    """tilec.matmul forced onto the wgmma configuration, ragged shapes included (rows a multiple of 8
    elements, what the bulk copies' 16-byte aligned rows need)."""
    torch = pytest.importorskip("torch")
    from tilec.kernels.gemm_config import MatmulConfig

    m, n, k = shape
    config = MatmulConfig(block, None, stages, bulk=True, release=release, wgmma=True)
    g = torch.Generator(device="cuda").manual_seed(11)
    tdt = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", generator=g).to(tdt)
    b = torch.randn(k, n, device="cuda", generator=g).to(tdt)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
    tilec.matmul(a, b, out=c, config=config)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    assert err < (1e-2 if dtype == "bfloat16" else 2e-3), f"relative error {err}"


@pytest.mark.skipif(_sm90() is not None, reason=str(_sm90()))
@pytest.mark.parametrize("shape, tile", [((128, 4096, 4096), "64x64x128"), ((100, 8192, 1100), "64x128x128"),
                                         ((64, 8192, 1100), "64x64x128"),
                                         ((500, 4096, 1000), "128x128x64"), ((17, 4096, 520), None)], ids=str)
def test_few_rows_take_the_narrower_wgmma_tiles(shape, tile):
    """tilec.matmul's own choice on sm_90 when WGMMA_CONFIG's tiles do not fill the SMs (the next tile
    of WGMMA_LADDER whose grid does, or mma.sync when none does), with a bias and ReLU into f32."""
    torch = pytest.importorskip("torch")
    from tilec.kernels.gemm_config import choose_config

    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda")
    if torch.cuda.get_device_properties(0).multi_processor_count == 132:
        chosen = choose_config(m, n, k, "bfloat16", sm_count=132, aligned=True, arch="sm_90")
        assert (chosen.describe().split(",")[0] if chosen.wgmma else None) == tile
    tilec.matmul(a, b, out=c, bias=bias, activation="relu", out_dtype="float32")
    torch.cuda.synchronize()
    ref = torch.relu(a.double() @ b.double() + bias.double())
    err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    assert err < 1e-2, f"relative error {err}"


@pytest.mark.skipif(_sm90() is not None, reason=str(_sm90()))
@pytest.mark.parametrize("out_dtype", ["bfloat16", "float32"])
def test_more_tiles_than_sms_take_four_stages_and_chunked_stores(out_dtype):
    """1100 x 4200 x 520 is 153 tiles of 128x256 (ragged on every side): more than the SMs, so the
    persistent kernel with four stages, each warp storing its rows in 64-column chunks (32 of f32)
    through a ring of two slots; fresh inputs, NaN-poisoned output, a bias, float64 reference."""
    torch = pytest.importorskip("torch")
    from tilec.kernels.gemm_config import DEEP_PERSISTENT_WGMMA_CONFIG, choose_config

    m, n, k = 1100, 4200, 520
    if torch.cuda.get_device_properties(0).multi_processor_count <= 153:
        assert choose_config(m, n, k, "bfloat16", aligned=True, arch="sm_90") == DEEP_PERSISTENT_WGMMA_CONFIG
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=getattr(torch, out_dtype))
    tilec.matmul(a, b, out=c, bias=bias, out_dtype=out_dtype, config=DEEP_PERSISTENT_WGMMA_CONFIG)
    torch.cuda.synchronize()
    ref = a.double() @ b.double() + bias.double()
    assert not torch.isnan(c).any()
    err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    assert err < 1e-2, f"relative error {err}"
