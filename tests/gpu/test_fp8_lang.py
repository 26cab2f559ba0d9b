"""FP8 in tilec.lang on the GPU (examples/lang/fp8.py): torch's float8 tensors, fresh random inputs,
outputs poisoned with NaN, float64 references. The quantizer against torch's own conversion (both round
to nearest even; past the range tilec saturates, as Triton's), the matmul tutorial on the FP8
warpgroup MMA (sm_90a) and on mma.sync of FP8 (sm_90 code), ragged shapes and a K whose rows are not
16-byte aligned, two FP8 types mixed, and the window form on bulk tensor copies."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilec.lang as tl
from tilec.ir.float8 import f8_bits, saturated_f8
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.lang launch on torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")
hopper = pytest.mark.skipif(not has_device() or torch.cuda.get_device_capability() < (9, 0),
                            reason="FP8 conversions and products need sm_89 or later; tilec targets sm_90")

_spec = importlib.util.spec_from_file_location(
    "lang_example_fp8", Path(__file__).resolve().parents[2] / "examples" / "lang" / "fp8.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)

FP8 = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}


FP8_SUMS = 5e-3
"""Relative to the largest |C|: Hopper's FP8 tensor cores keep fewer bits while they sum (cuBLASLt's
products are as far from float64: about 1e-3 at K = 1024, 4e-3 at 4096)."""


def rel_err(got, ref) -> float:
    assert not got.isnan().any(), "an output was not written"
    return ((got.double() - ref).abs().max() / ref.abs().max()).item()


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(64, 1024), (1000, 256)], ids=str)
def test_quantize_rows_as_torch_converts(shape):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16) * 5
    q = torch.full((m, n), float("nan"), device="cuda").to(torch.float8_e4m3fn)
    s = torch.full((m,), float("nan"), device="cuda")
    ex.quantize_rows[(-(-m // 16),)](x, q, s, BM=16, N=n)
    scale = x.float().abs().amax(1) / 448.0
    assert torch.allclose(s, scale, rtol=1e-6, atol=0)
    want = (x.float() / s[:, None]).to(torch.float8_e4m3fn)  # the kernel's scales: the same quotients
    assert torch.equal(q.view(torch.uint8), want.view(torch.uint8))
    y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    ex.dequantize_rows[(-(-m // 16),)](q, s, y, BM=16, N=n)
    assert rel_err(y, x.double()) < 2**-3


@tl.kernel(num_warps=1)
def stored_into(x, o, B: tl.constexpr):
    """f32 values stored into an FP8 array: converted as they are stored."""
    tl.store(o, (0,), tl.load(x, (0,), shape=(B,)))


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("kind", FP8)
def test_conversions_into_fp8_round_and_saturate(kind):
    values = torch.cat([torch.tensor([447.0, 460.0, 1000.0, -1e9, float("inf"), float("-inf"), float("nan"), 3e-3,
                                      -0.0, 60000.0, 70000.0, 1e-7]), torch.randn(20) * 100]).cuda()
    q = torch.zeros(32, device="cuda").to(FP8[kind])
    stored_into[(1,)](values, q, B=32)
    name = "f8E4M3FN" if kind == "e4m3" else "f8E5M2"
    x = values.cpu().numpy()
    got, want = q.view(torch.uint8).cpu().numpy(), f8_bits(saturated_f8(x, name), name)
    nan = np.isnan(x)  # which NaN pattern is the GPU's: any NaN
    assert np.array_equal(got[~nan], want[~nan]) and q[torch.from_numpy(nan).cuda()].float().isnan().all()


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_90a", "sm_90"])
@pytest.mark.parametrize("mnk", [(1024, 1024, 1024), (300, 520, 333), (136, 200, 96)], ids=str)
def test_the_matmul_tutorial_on_fp8(mnk, arch):
    """sm_90a: the FP8 warpgroup MMA over cp.async stages; sm_90: mma.sync of FP8. K = 333: rows of A
    and W are not 16-byte aligned (their copies go element by element)."""
    m, n, k = mnk
    a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    block = (128, 256, 128) if arch == "sm_90a" else (128, 128, 64)
    grid, call, consts = ex.tutorial_call(a, w, c, *block)
    kernel = ex.matmul_kernel.with_options(num_warps=8 if arch == "sm_90a" else 4, num_stages=4 if arch == "sm_90a" else 3)
    kernel[grid](*call, **consts, arch=arch)
    assert rel_err(c, a.double() @ w.double().T) < FP8_SUMS


@gpu
@hopper
@pytest.mark.gpu
def test_two_fp8_types_multiplied():
    m, n, k = 256, 192, 320
    a = torch.randn(m, k, device="cuda").to(torch.float8_e5m2)
    w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid, call, consts = ex.tutorial_call(a, w, c, 64, 64, 64)
    ex.matmul_kernel[grid](*call, **consts, arch="sm_90a")
    assert rel_err(c, a.double() @ w.double().T) < FP8_SUMS


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("bulk", [False, True])
def test_the_fp8_linear_layer_on_windows(bulk):
    m, n, k = 512, 512, 1024
    x = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    ex.linear.with_options(num_stages=4, bulk=bulk)[(m // 128, n // 256)](x, w, c, BM=128, BN=256, BK=128, arch="sm_90a")
    assert rel_err(c, x.double() @ w.double().T) < FP8_SUMS
