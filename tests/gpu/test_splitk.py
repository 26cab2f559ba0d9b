"""Split-K on the GPU: ``tilec.matmul(..., split_k=S)`` and the heuristic's splits, against float64.

Fresh random inputs, outputs poisoned with NaN, every element written, relative Frobenius error;
the forced cases cover every operand layout, ragged M and N, bias + ReLU, f32/bf16 outputs and FP8
with scales; the fast path (a repeated call) gets new values; the reduction is deterministic (two
runs give the same bits); a call on an explicit stream is not split and still right.
"""

from __future__ import annotations

import pytest

import tilec
import tilec.kernels.gemm as gemm
from tilec.runtime import has_device, no_device_reason

pytestmark = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="the GPU tests make their inputs with torch, which is not installed")


def _operand(torch, rows, cols, how, dtype):
    x = torch.randn(rows, cols, device="cuda", dtype=dtype)
    return x.t().contiguous().t() if how == "col" else x


def _error(got, ref) -> float:
    return ((got.double() - ref).norm() / ref.norm()).item()


CASES = [  # m, n, k, A, B, dtype, out dtype, bias + activation (None: neither), split
    (16, 4096, 4096, "row", "row", "float16", "float16", None, None),  # the heuristic's own split
    (128, 1024, 8192, "row", "col", "bfloat16", "bfloat16", None, None),
    (100, 300, 3072, "row", "row", "float16", "float32", "relu", 3),
    (100, 300, 3072, "col", "row", "float16", "float16", "relu", 2),
    (33, 65, 4096, "col", "col", "bfloat16", "float32", None, 4),
    (256, 512, 2048, "row", "col", "float16", "bfloat16", "relu", 4),
    (100, 300, 3072, "row", "row", "float16", "float32", "gelu", 3),
    (256, 512, 2048, "row", "col", "bfloat16", "bfloat16", "silu", 4),
]


@pytest.mark.parametrize("m,n,k,la,lb,dtype,out_dtype,epilogue,split", CASES,
                         ids=[f"{c[0]}x{c[1]}x{c[2]}-{c[3]}/{c[4]}-{c[5]}-{c[6]}{'-bias-' + c[7] if c[7] else ''}-S{c[8]}"
                              for c in CASES])
def test_split_matmul(torch, m, n, k, la, lb, dtype, out_dtype, epilogue, split):
    dt, ot = getattr(torch, dtype), getattr(torch, out_dtype)
    a, b = _operand(torch, m, k, la, dt), _operand(torch, k, n, lb, dt)
    bias = torch.randn(n, device="cuda") if epilogue else None
    kw = dict(bias=bias, activation=epilogue, out_dtype=ot, split_k=split)
    plan = gemm.plan_matmul(a, b, **kw)
    assert plan.split_k == (split or plan.split_k) and plan.split_k > 1
    out = torch.full((m, n), float("nan"), device="cuda", dtype=ot)
    assert tilec.matmul(a, b, out=out, **kw) is out
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    if epilogue:
        act = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}[epilogue]
        ref = act(ref + bias.double())
    assert not torch.isnan(out).any()
    assert _error(out, ref) < (1e-3 if out_dtype == "float32" else 1e-2)
    again = torch.full_like(out, float("nan"))
    tilec.matmul(a, b, out=again, **kw)  # the prepared (fast) path: the same bits
    assert torch.equal(again, out)


def test_split_fp8_with_scales(torch):
    m, n, k = 128, 1024, 8192
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(3.0, device="cuda")
    assert gemm.plan_matmul(a, w.t(), scale_a=sa, scale_b=sb).split_k == 4
    c = tilec.matmul(a, w.t(), scale_a=sa, scale_b=sb)
    assert _error(c, a.double() @ w.double().t() * 1.5) < 1e-2
    sa.fill_(2.0)  # read in the kernel: the next (fast-path) call sees it
    c = tilec.matmul(a, w.t(), scale_a=sa, scale_b=sb)
    assert _error(c, a.double() @ w.double().t() * 6.0) < 1e-2


def test_split_fast_path_new_values_and_explicit_stream(torch):
    a = torch.randn(16, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    assert gemm.plan_matmul(a, b).split_k == 2
    for _ in range(3):
        a.normal_()
        c = tilec.matmul(a, b)
        assert _error(c, a.double() @ b.double()) < 1e-2
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a2 = torch.randn(16, 4096, device="cuda", dtype=torch.float16)
    s.synchronize()
    c = tilec.matmul(a2, b, stream=s)  # not split: the workspace would be freed on another stream
    s.synchronize()
    assert _error(c, a2.double() @ b.double()) < 1e-2
    with pytest.raises(ValueError, match="split_k=2 splits K, which runs on torch tensors and torch's current stream"):
        tilec.matmul(a2, b, stream=s, split_k=2)
    a.normal_()  # the unsplit call on the other stream left nothing behind for this key: still split, right
    c = tilec.matmul(a, b)
    assert _error(c, a.double() @ b.double()) < 1e-2 and isinstance(gemm._FAST.get(
        gemm._fast_key(a, b, None, None, None, None, False, False, False, None, False)), gemm._SplitCall)


def test_autotune_times_splits(torch, tmp_path, monkeypatch):
    """The autotuner times K in slices beside the unsplit configs where the grid leaves SMs idle; its winner,
    split or not, runs through ``config=`` and ``autotune=True``; a call on an explicit stream tunes unsplit."""
    import tilec.kernels.autotune as at
    from tilec.kernels.gemm_config import SplitConfig

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    at.forget()
    m, n, k = 64, 1024, 8192
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    r = tilec.autotune(a, b, out=out, reps=5, progress=False)
    timed = [t for t in r.timings if t.seconds is not None]
    print(f"\n{r.key.text}: winner {r.config.describe()}; "
          + "; ".join(f"{t.config.describe()} {t.seconds * 1e6:.1f} us" for t in timed))
    assert r.key.splits and sum(isinstance(t.config, SplitConfig) for t in timed) >= 2
    ref = a.double() @ b.double()
    for call in (dict(config=r.config), dict(autotune=True)):
        out.fill_(float("nan"))
        tilec.matmul(a, b, out=out, **call)
        torch.cuda.synchronize()
        assert not torch.isnan(out).any() and _error(out, ref) < 1e-2, call
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        out.fill_(float("nan"))
        tilec.matmul(a, b, out=out, autotune=True, stream=stream.cuda_stream)
    torch.cuda.synchronize()
    assert not torch.isnan(out).any() and _error(out, ref) < 1e-2
    assert not tilec.autotune(a, b, out=out, progress=False, allow_split=False).key.splits
    at.forget()
