"""tilec.softmax on the GPU against float64: dtypes, ragged and large shapes, strided rows, dim 0.

Fresh random inputs (x30: the max must be subtracted), outputs poisoned with NaN first.
"""

from __future__ import annotations

import pytest

import tilec
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.softmax use torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

TOL = {torch.float32: 1e-6, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("shape", [(1, 1), (7, 13), (300, 1000), (1000, 4097), (4096, 4096), (9, 20000), (17, 32768),
                                   (3, 70000)], ids=str)
def test_softmax(dtype, shape):
    x = (torch.randn(shape, device="cuda") * 30).to(dtype)
    out = torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    tilec.softmax(x, out=out)
    ref = torch.softmax(x.double(), -1)
    assert not out.isnan().any()
    assert (out.double() - ref).abs().max().item() < TOL[dtype]


@gpu
@pytest.mark.gpu
def test_strided_rows_and_dim0():
    base = torch.randn(300, 513, device="cuda") * 30
    x = base[:, ::2]  # rows of stride 513, columns of stride 2
    y = tilec.softmax(x)
    assert (y.double() - torch.softmax(x.double(), -1)).abs().max().item() < 1e-6
    y0 = tilec.softmax(base, dim=0)
    assert (y0.double() - torch.softmax(base.double(), 0)).abs().max().item() < 1e-6
