"""f16 and bf16 atomic sums on the GPU (``red``/``atom.global.add.noftz.f16`` / ``.bf16``): an embedding
backward's rows added at their token's index, duplicates combining. Small integers make every order of
the sums exact, so the result is compared exactly; the output starts from a poisoned-but-finite value."""

from __future__ import annotations

import pytest

import tilec.lang as tl
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.lang launch on torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")


@tl.kernel
def embedding_backward(grad_ptr, ids_ptr, out_ptr, D: tl.constexpr):
    t = tl.program_id(0)
    cols = tl.arange(0, D)
    token = tl.load(ids_ptr + t)
    tl.atomic_add(out_ptr + token * D + cols, tl.load(grad_ptr + t * D + cols))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_atomic_sums(dtype):
    dt = getattr(torch, dtype)
    if dt == torch.bfloat16 and torch.cuda.get_device_capability() < (9, 0):
        pytest.skip("bf16 atomic adds need sm_90")
    tokens, vocab, d = 4000, 50, 128
    grad = torch.randint(-4, 5, (tokens, d), device="cuda").to(dt)
    ids = torch.randint(0, vocab, (tokens,), device="cuda", dtype=torch.int64)
    out = torch.full((vocab, d), 0.5, device="cuda", dtype=dt)
    embedding_backward[(tokens,)](grad, ids, out, D=d)
    ref = torch.full((vocab, d), 0.5, device="cuda", dtype=torch.float64).index_add_(0, ids, grad.double())
    assert torch.equal(out.double(), ref)
