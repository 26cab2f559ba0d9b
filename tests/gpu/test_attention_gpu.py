"""tilec.attention on the GPU against float64: tiny, ragged, GQA, causal with Sq != Sk, strided views,
large inputs (x30: the softmax must subtract its maximum); outputs poisoned with NaN first."""

from __future__ import annotations

import math

import pytest

import tilec
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.attention use torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")


def reference(q, k, v, causal, scale=None):
    q, k, v = (x.double() for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.transpose(-1, -2) * scale
    if causal:
        s = s.masked_fill(~torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril(), float("-inf"))
    lse = torch.logsumexp(s, -1)
    return torch.softmax(s, -1) @ v, lse


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("shape", [(1, 1, 1, 1, 1, 64), (1, 2, 2, 17, 17, 64), (2, 4, 2, 1000, 1000, 128),
                                   (1, 8, 1, 1, 4097, 64), (1, 2, 2, 4097, 300, 128),
                                   (1, 4, 2, 8200, 300, 64), (1, 2, 1, 3000, 700, 128)], ids=str)  # blocks of 192 rows (LONG_QUERIES) on
                                                                        # sm_90 from 2048 rows at D 128, 8192 at 64
def test_attention(shape, causal, dtype):
    b, hq, hkv, sq, sk, d = shape
    q = torch.randn(b, hq, sq, d, device="cuda").to(dtype)
    k, v = (torch.randn(b, hkv, sk, d, device="cuda").to(dtype) for _ in range(2))
    out = torch.full_like(q, float("nan"))
    o, lse = tilec.attention(q, k, v, causal=causal, return_lse=True, out=out)
    want, want_lse = reference(q, k, v, causal)
    tol = 2e-2 if dtype == torch.bfloat16 else 3e-3
    assert not o.isnan().any()
    assert ((o.double() - want).abs().max() / want.abs().max()).item() < tol
    assert (lse.double() - want_lse).abs().max().item() < 1e-2


@gpu
@pytest.mark.gpu
def test_strided_views_and_large_values():
    b, s, h, d = 2, 300, 4, 64
    q = (torch.randn(b, s, h, d, device="cuda") * 30).half().transpose(1, 2)  # (B, H, S, D) over (B, S, H, D)
    k = torch.randn(b, s, h, d, device="cuda").half().transpose(1, 2)
    v = torch.randn(b, s, h, d, device="cuda").half().transpose(1, 2)
    o = tilec.attention(q, k, v, causal=True, scale=0.2)
    want, _ = reference(q, k, v, True, scale=0.2)
    assert ((o.double() - want).abs().max() / want.abs().max()).item() < 3e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", [None, "sm_80"], ids=["default", "mma.sync"])
@pytest.mark.parametrize("d", [32, 96, 144, 192, 256])
def test_other_head_dimensions(d, arch):
    """Head dimensions past the tuned 64 and 128 on the GPU's path (wgmma on sm_90) and on mma.sync
    (up to MMA_MAX_HEAD_DIM there; past it a ValueError, before any launch)."""
    from tilec.kernels.attention import MMA_MAX_HEAD_DIM

    q = torch.randn(2, 3, 333, d, device="cuda").to(torch.bfloat16)
    k, v = (torch.randn(2, 3, 400, d, device="cuda").to(torch.bfloat16) for _ in range(2))
    out = torch.full_like(q, float("nan"))
    if arch == "sm_80" and d > MMA_MAX_HEAD_DIM:
        with pytest.raises(ValueError, match=f"head dimension {d} on the mma.sync kernel"):
            tilec.attention(q, k, v, out=out, arch=arch)
        return
    for causal in (False, True):
        o = tilec.attention(q, k, v, causal=causal, out=out, arch=arch)
        want, _ = reference(q, k, v, causal)
        assert not o.isnan().any()
        assert ((o.double() - want).abs().max() / want.abs().max()).item() < 2e-2


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", [None, "sm_80"], ids=["default", "mma.sync"])
@pytest.mark.parametrize("heads", [3, 4])
def test_blocks_in_groups_of_heads(heads, arch):
    """The causal blocks' order through groups of ``heads_per_group`` (batch, head) pairs, longest first, with a
    short last group (10 pairs in groups of 3 and 4) and one K/V head for all five query heads (MQA),
    set in place of what ``order_heads`` picks."""
    from tilec.kernels import attention as A

    q = torch.randn(2, 5, 700, 128, device="cuda").to(torch.float16)
    k, v = (torch.randn(2, 1, 900, 128, device="cuda").to(torch.float16) for _ in range(2))
    kernel, target = A.path(arch, 128)
    wgmma = kernel is not A.attention_fwd
    for causal in (False, True):
        out = torch.full_like(q, float("nan"))
        args, constexprs = A._arguments(q, k, v, out, None, causal, None, wgmma)
        constexprs["heads_per_group"] = heads
        kernel[A.grid(q, wgmma)](*args, arch=target, num_warps=A.warps(constexprs), **constexprs)
        want, _ = reference(q, k, v, causal)
        assert not out.isnan().any()
        assert ((out.double() - want).abs().max() / want.abs().max()).item() < 3e-3
