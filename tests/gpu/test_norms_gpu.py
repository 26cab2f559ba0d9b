"""tilec.rms_norm and tilec.layer_norm on the GPU against float64 (NaN-poisoned outputs)."""

from __future__ import annotations

import pytest

import tilec
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of the norms use torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

TOL = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (7, 300), (300, 1000), (4096, 4096), (9, 20000), (17, 32768), (3, 70000)],
                         ids=str)
def test_norms(dtype, shape):
    x = (torch.randn(shape, device="cuda") * 2 + 1).to(dtype)
    w, b = torch.randn(shape[1], device="cuda"), torch.randn(shape[1], device="cuda")
    x64 = x.double()
    out = torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    tilec.layer_norm(x, w, b, 1e-5, out=out)
    ref = torch.nn.functional.layer_norm(x64, shape[1:], w.double(), b.double(), 1e-5)
    assert not out.isnan().any()
    assert ((out.double() - ref).abs().max() / ref.abs().max()).item() < TOL[dtype]
    out = tilec.rms_norm(x, w, 1e-6)
    ref = x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6) * w.double()
    assert ((out.double() - ref).abs().max() / ref.abs().max()).item() < TOL[dtype]
