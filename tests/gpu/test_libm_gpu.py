"""libdevice's math functions written in the language (tilec/lang/libm.py) on the GPU: fresh random
inputs, outputs poisoned with NaN, against float64 torch (PTX's approximate exp2/log2/sin/cos under them)."""

from __future__ import annotations

import pytest

import tilec.lang as tl
from tilec.lang.compat import libdevice
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.lang launch on torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

CASES = {
    "tan": (torch.tan, lambda n: torch.cat([torch.rand(n // 2) * 2.8 - 1.4, (torch.rand(n // 2) - 0.5) * 1e-3])),
    "expm1": (torch.expm1, lambda n: torch.cat([torch.randn(n // 2) * 3, torch.randn(n // 2) * 1e-4])),
    "log1p": (torch.log1p, lambda n: torch.cat([torch.rand(n // 2) * 10 - 0.99, torch.randn(n // 2) * 1e-4])),
    "sinh": (torch.sinh, lambda n: torch.cat([torch.randn(n // 2) * 4, torch.randn(n // 2) * 1e-5])),
    "cosh": (torch.cosh, lambda n: torch.randn(n) * 4),
    "asin": (torch.asin, lambda n: torch.rand(n) * 2 - 1),
    "acos": (torch.acos, lambda n: torch.rand(n) * 2 - 1),
    "atan": (torch.atan, lambda n: torch.randn(n) * 5),
    "cbrt": (lambda v: torch.sign(v) * v.abs() ** (1 / 3), lambda n: torch.randn(n) * 100),
}


def _kernel(name: str):
    f = getattr(libdevice, name)

    @tl.kernel(num_warps=4)
    def apply(x, o, B: tl.constexpr):
        r = tl.program_id(0) * B
        tl.store(o, (r,), f(tl.load(x, (r,), shape=(B,))))

    return apply


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(CASES))
def test_against_float64(name):
    ref_fn, make = CASES[name]
    x = make(1 << 16).cuda()
    o = torch.full_like(x, float("nan"))
    _kernel(name)[((1 << 16) // 1024,)](x, o, B=1024)
    ref = ref_fn(x.double()).float().double()
    assert not o.isnan().any()
    err = ((o.double() - ref).abs() / ref.abs().clamp_min(1e-30)).max().item()
    assert err < 1e-5, (name, err)
