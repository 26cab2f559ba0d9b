"""FP8 GEMMs on the GPU (sm_90): ``tilec.matmul`` on float8_e4m3fn / float8_e5m2 inputs with per-tensor
scales, against a float64 reference of the same FP8 values and against ``torch._scaled_mm``.

Every case draws fresh random inputs, poisons the output with NaN first and checks that every element
was written; the error is ``|C - ref| / |ref|`` (Frobenius norms). The rungs of the FP8 ladder are forced
one by one on ragged shapes, so each kernel (persistent with TMA stores, producer, one warpgroup) runs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import tilec
from tilec.kernels.gemm_config import FP8_WGMMA_LADDER
from tilec.runtime import has_device, no_device_reason

pytestmark = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

TOLERANCE = {"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-3}
"""By output dtype: its rounding; f32 allows for the tensor cores' FP8 accumulation (not exact f32)."""


@pytest.fixture(scope="module")
def torch():
    torch = pytest.importorskip("torch", reason="the GPU tests make their inputs with torch, which is not installed")
    if torch.cuda.get_device_capability() < (9, 0):
        pytest.skip(f"FP8 matmul needs sm_90 (wgmma); this GPU is sm_{''.join(map(str, torch.cuda.get_device_capability()))}")
    return torch


def _inputs(torch, m: int, n: int, k: int, dtype: str, spread: float = 2.0):
    """A (M x K) and W (N x K) of random FP8 values; B = W.t() is K x N stored N x K."""
    fp8 = getattr(torch, dtype)
    a = (torch.randn(m, k, device="cuda") * spread).to(fp8)
    w = torch.randn(n, k, device="cuda").to(fp8)
    return a, w


def _error(result, ref) -> float:
    return ((result.double() - ref).norm() / ref.norm()).item()


CASES = [
    # (m, n, k, dtype, out dtype, scaled, bias+relu, forced rung of FP8_WGMMA_LADDER or None)
    (4096, 4096, 4096, "float8_e4m3fn", "bfloat16", True, False, None),
    (4096, 4096, 4096, "float8_e5m2", "float16", True, False, None),
    (1000, 1032, 1024, "float8_e4m3fn", "bfloat16", True, True, None),
    (128, 4096, 4096, "float8_e4m3fn", "bfloat16", True, False, None),
    (16, 4096, 4096, "float8_e4m3fn", "bfloat16", False, False, None),
    (17, 48, 32, "float8_e4m3fn", "float32", True, True, None),
    *((1000, 1032, 1040, "float8_e4m3fn", out, True, True, rung) for rung in range(len(FP8_WGMMA_LADDER))
      for out in ("bfloat16", "float32")),
    (3000, 1032, 528, "float8_e5m2", "bfloat16", False, True, 0),
]


@pytest.mark.parametrize("m,n,k,dtype,out_dtype,scaled,epilogue,rung", CASES,
                         ids=[f"{m}x{n}x{k}-{d[6:]}-{o}{'-scaled' if s else ''}{'-bias-relu' if e else ''}"
                              f"{'' if r is None else f'-rung{r}'}" for m, n, k, d, o, s, e, r in CASES])
def test_fp8_matmul(torch, m, n, k, dtype, out_dtype, scaled, epilogue, rung):
    a, w = _inputs(torch, m, n, k, dtype)
    out_t = getattr(torch, out_dtype)
    sa = torch.rand((), device="cuda") + 0.5 if scaled else None
    sb = torch.rand((), device="cuda") + 0.5 if scaled else None
    bias = torch.randn(n, device="cuda") if epilogue else None
    out = torch.full((m, n), float("nan"), device="cuda", dtype=out_t)
    config = None if rung is None else FP8_WGMMA_LADDER[rung]
    got = tilec.matmul(a, w.t(), out=out, out_dtype=out_t, scale_a=sa, scale_b=sb, bias=bias,
                       activation="relu" if epilogue else None, config=config)
    torch.cuda.synchronize()
    assert got is out
    ref = a.double() @ w.double().t()
    if scaled:
        ref = ref * sa.double() * sb.double()
    if epilogue:
        ref = torch.relu(ref + bias.double())
    assert not torch.isnan(out).any(), f"{int(torch.isnan(out).sum())} elements of C were never written"
    err = _error(out, ref)
    assert err < TOLERANCE[out_dtype], f"relative error {err:.2e}"
    if not epilogue and out_dtype != "float32" and dtype == "float8_e4m3fn":  # cuBLASLt (no e5m2 x e5m2)
        theirs = torch._scaled_mm(a, w.t(), scale_a=sa if scaled else torch.ones((), device="cuda"),
                                  scale_b=sb if scaled else torch.ones((), device="cuda"), out_dtype=out_t)
        assert _error(theirs, ref) < TOLERANCE[out_dtype]


def test_fp8_fast_path_reads_new_scales(torch):
    """The second call replays the prepared launch: new inputs and new scale values (read in the kernel,
    never cached on the host) give the new product."""
    a, w = _inputs(torch, 256, 512, 1024, "float8_e4m3fn")
    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(3.0, device="cuda")
    tilec.matmul(a, w.t(), scale_a=sa, scale_b=sb)
    for scale in (0.25, 2.0):
        a2, w2 = _inputs(torch, 256, 512, 1024, "float8_e4m3fn")
        a.copy_(a2)
        w.copy_(w2)
        sa.fill_(scale)
        c = tilec.matmul(a, w.t(), scale_a=sa, scale_b=sb)
        ref = a.double() @ w.double().t() * scale * 3.0
        assert c.dtype == torch.bfloat16 and _error(c, ref) < TOLERANCE["bfloat16"]


def test_fp8_errors_name_the_argument(torch):
    a, w = _inputs(torch, 64, 64, 64, "float8_e4m3fn")
    with pytest.raises(ValueError, match="read K-major"):
        tilec.matmul(a, w)  # B given K x N row-major
    with pytest.raises(TypeError, match="mixed input dtypes"):
        tilec.matmul(a, w.to(torch.float8_e5m2).t())
    with pytest.raises(ValueError, match="scale_a must hold one number"):
        tilec.matmul(a, w.t(), scale_a=torch.ones(2, device="cuda"))
    with pytest.raises(ValueError, match="wgmma only"):
        tilec.matmul(a, w.t(), config=replace(FP8_WGMMA_LADDER[1], wgmma=False))


def test_fp8_autotune(torch, tmp_path):
    """The autotuner on an FP8 problem with scales: the reference check includes the scales, the
    winner is one of the candidates, and matmul(autotune=True) gives the product with it."""
    a, w = _inputs(torch, 512, 768, 1024, "float8_e4m3fn")
    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(1.5, device="cuda")
    candidates = list(FP8_WGMMA_LADDER[1:4])
    r = tilec.autotune(a, w.t(), scale_a=sa, scale_b=sb, candidates=candidates, reps=3, warmup=1, progress=False,
                       path=tmp_path / "tune.json")
    assert r.config in candidates and len(r.timings) == len(candidates)
    c = tilec.matmul(a, w.t(), scale_a=sa, scale_b=sb, config=r.config)
    assert _error(c, a.double() @ w.double().t() * 0.75) < TOLERANCE["bfloat16"]
