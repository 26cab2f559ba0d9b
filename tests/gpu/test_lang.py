"""tilec.lang kernels on the GPU against float64: the examples (vector add, softmax, the norms, the
GEMM), ragged shapes, torch tensors; fresh random inputs, outputs poisoned with NaN first."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.lang launch on torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "lang"


def example(name: str):
    spec = importlib.util.spec_from_file_location(f"lang_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rel_err(got, ref) -> float:
    assert not got.isnan().any(), "an output was not written"
    return ((got.double() - ref).abs().max() / ref.abs().max()).item()


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 1000, 100_003])
def test_vector_add(n):
    add = example("vector_add").vector_add
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.full_like(a, float("nan"))
    add[(-(-n // 256),)](a, b, c, BLOCK=256)
    assert rel_err(c, a.double() + b.double()) < 1e-6


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 7), (300, 1000), (1000, 4097)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_softmax(shape, dtype):
    mod = example("softmax")
    x = (torch.randn(shape, device="cuda") * 10).to(dtype)
    ref = torch.softmax(x.double(), -1)
    n = 1 << (shape[1] - 1).bit_length()
    o = torch.full_like(x, float("nan"))
    mod.softmax[(-(-shape[0] // 4),)](x, o, BM=4, N=max(n, 32), num_warps=4)
    assert rel_err(o, ref) < 3e-3
    o = torch.full_like(x, float("nan"))
    mod.softmax_online[(-(-shape[0] // 4),)](x, o, BM=4, BN=256)
    assert rel_err(o, ref) < 3e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(5, 33), (300, 1000)], ids=str)
def test_norms(shape):
    mod = example("layer_norm")
    x = torch.randn(shape, device="cuda", dtype=torch.float16) + 3
    w, b = (torch.randn(shape[1], device="cuda", dtype=torch.float16) for _ in range(2))
    n = max(32, 1 << (shape[1] - 1).bit_length())
    grid = (-(-shape[0] // 4),)
    y = torch.full_like(x, float("nan"))
    mod.layer_norm[grid](x, w, b, y, BM=4, N=n)
    ref = torch.nn.functional.layer_norm(x.double(), (shape[1],), w.double(), b.double(), 1e-5)
    assert rel_err(y, ref) < 3e-3
    y = torch.full_like(x, float("nan"))
    mod.rms_norm[grid](x, w, y, BM=4, N=n)
    ref = x.double() * torch.rsqrt((x.double() ** 2).mean(1, keepdim=True) + 1e-6) * w.double()
    assert rel_err(y, ref) < 3e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("shape, group", [((5, 33), 64), ((4096, 1000), 64), ((1000, 4096), 32)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
def test_layer_norm_backward(shape, group, dtype):
    """Triton's tutorial layer-norm backward in tilec.lang (examples/lang/layer_norm.py): dx per row, dw
    and db through ``group`` rows of partial sums behind spin locks, against torch's float64 autograd."""
    mod = example("layer_norm")
    m, cols = shape
    x = torch.randn(shape, device="cuda", dtype=dtype) * 2 + 1
    w, b = (torch.randn(cols, device="cuda", dtype=dtype) for _ in range(2))
    dy = torch.randn_like(x)
    x64 = x.double().requires_grad_()
    w64, b64 = w.double().requires_grad_(), b.double().requires_grad_()
    torch.nn.functional.layer_norm(x64, (cols,), w64, b64, 1e-5).backward(dy.double())
    mean, rstd = x.double().mean(1).float(), torch.rsqrt(x.double().var(1, unbiased=False) + 1e-5).float()
    n = max(32, 1 << (cols - 1).bit_length())
    dx = torch.full_like(x, float("nan"))
    dw, db = (torch.full((group, cols), float("nan"), device="cuda") for _ in range(2))
    count, lock = (torch.zeros(group, device="cuda", dtype=torch.int32) for _ in range(2))
    mod.layer_norm_backward_dx[(m,)](dx, dy, dw, db, count, lock, x, w, mean, rstd, GROUP=group, N=n)
    assert (lock == 0).all() and (count == (torch.arange(group, device="cuda") < m)).all()
    fdw, fdb = torch.full_like(w, float("nan")), torch.full_like(w, float("nan"))
    rows = min(group, m)
    mod.layer_norm_backward_dwdb[(-(-cols // 64),)](dw[:rows], db[:rows], fdw, fdb, BM=32, BN=64)
    tol = 3e-3 if dtype == torch.float16 else 1e-5
    assert rel_err(dx, x64.grad) < tol and rel_err(fdw, w64.grad) < tol and rel_err(fdb, b64.grad) < tol


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("mnk", [(128, 128, 32), (1000, 520, 72), (2048, 2048, 2048)], ids=str)
def test_matmul(mnk):
    mod = example("matmul")
    m, n, k = mnk
    a, b = torch.randn(m, k, device="cuda", dtype=torch.float16), torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    mod.matmul[mod.grid(m, n)](a, b, c, **mod.CONFIG)
    assert rel_err(c, a.double() @ b.double()) < 2e-3


@gpu
@pytest.mark.gpu
def test_prepared_launches_follow_new_tensors():
    add = example("vector_add").vector_add
    for _ in range(3):  # the second and third calls replay the first's prepared launch
        a, b = torch.randn(4096, device="cuda"), torch.randn(4096, device="cuda")
        c = torch.full_like(a, float("nan"))
        add[(16,)](a, b, c, BLOCK=256)
        assert rel_err(c, a.double() + b.double()) < 1e-6
    assert len(add._fast) == 1


hopper = pytest.mark.skipif(not has_device() or torch.cuda.get_device_capability() != (9, 0),
                            reason="tl.wgmma and bulk tensor copies need an sm_90 GPU (H100/H200)")


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("mnk", [(128, 256, 64), (1000, 520, 200), (4096, 4096, 4096)], ids=str)
@pytest.mark.parametrize("producer", [False, True], ids=["", "producer"])
def test_matmul_wgmma(mnk, producer):
    """The sm_90a GEMM with its producer warpgroup (warp specialisation), and without it."""
    import tilec.lang as tl

    mod = example("matmul")
    kernel = tl.Kernel(mod.matmul_wgmma.fn, num_warps=8, num_stages=3, bulk=True, producer=producer)
    m, n, k = mnk
    a, b = torch.randn(m, k, device="cuda", dtype=torch.float16), torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    cfg = mod.CONFIG_WGMMA
    kernel[mod.grid(m, n, **cfg)](a, b, c, arch="sm_90a", **cfg)
    assert rel_err(c, a.double() @ b.double()) < 2e-3


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("mnk", [(128, 256, 64), (1000, 520, 200), (2048, 2048, 2048)], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("producer", [False, True], ids=["", "producer"])
def test_a_triton_style_gemm_on_warpgroup_mmas(mnk, dtype, producer):
    """examples/lang/matmul.py's ``matmul_block`` (tl.dot of block tiles) compiled for sm_90a: tile-stage
    makes the dot the block's wgmmas on the staged tiles (bulk copies; a producer warpgroup or not)."""
    mod = example("matmul")
    kernel = mod.BLOCK_WGMMA.with_options(producer=producer)
    m, n, k = mnk
    t = getattr(torch, dtype)
    a, b = torch.randn(m, k, device="cuda", dtype=t), torch.randn(k, n, device="cuda", dtype=t)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=t)
    cfg = mod.CONFIG_BLOCK_WGMMA
    kernel[mod.grid(m, n, **cfg)](a, b, c, arch="sm_90a", **cfg)
    assert rel_err(c, a.double() @ b.double()) < (1e-2 if dtype == "bfloat16" else 2e-3)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 2, 1000, 1000), (2, 4, 257, 1030), (1, 2, 4096, 4096)], ids=str)
@pytest.mark.parametrize("d", [64, 96, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["", "causal"])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_triton_style_flash_attention(shape, d, causal, arch):
    """examples/lang/flash_attention.py (block tiles, no warp ids) against float64 SDPA: GQA (two query
    heads a key head), Sq != Sk, ragged ends; mma.sync (sm_80 PTX, which the driver compiles for any
    newer GPU), and on sm_90 the block's warpgroup MMAs."""
    if arch == "sm_90a" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs on an sm_90 GPU (H100/H200) only")
    import torch.nn.functional as F

    fa = example("flash_attention")
    b, h, sq, sk = shape
    q = torch.randn(b, h, sq, d, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(b, h // 2, sk, d, device="cuda", dtype=torch.float16) for _ in range(2))
    o = torch.full_like(q, float("nan"))
    kern, cfg = fa.kernel_for(d, arch)
    kern[(-(-sq // cfg["BM"]), b, h)](q, k, v, o, d ** -0.5, D=d, GROUP=2, CAUSAL=causal, arch=arch, **cfg)
    kk, vv = (x.double().repeat_interleave(2, dim=1) for x in (k, v))
    mask = torch.ones(sq, sk, device="cuda", dtype=torch.bool).tril() if causal else None
    ref = F.scaled_dot_product_attention(q.double(), kk, vv, attn_mask=mask)
    assert rel_err(o, ref) < 2e-3


@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("warps, bm, d, producer", [(8, 64, 64, False), (16, 128, 128, False), (8, 64, 128, True)])
def test_flash_attention_whose_rows_do_not_fill_the_warpgroups(warps, bm, d, producer):
    """More warpgroups than 64-row bands of S on sm_90a: the chain stays mma.sync as a whole, split
    over the (consumer) warps along M (tests/lang/test_flash_attention.py), launched: causal, GQA."""
    import torch.nn.functional as F

    fa = example("flash_attention")
    q = torch.randn(1, 2, 300, d, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(1, 1, 333, d, device="cuda", dtype=torch.float16) for _ in range(2))
    o = torch.full_like(q, float("nan"))
    kern = fa.flash_attention.with_options(num_warps=warps, num_stages=3, bulk=True, producer=producer)
    kern[(-(-300 // bm), 1, 2)](q, k, v, o, d ** -0.5, BM=bm, BN=128, D=d, GROUP=2, CAUSAL=True, arch="sm_90a")
    kk, vv = (x.double().repeat_interleave(2, dim=1) for x in (k, v))
    mask = torch.ones(300, 333, device="cuda", dtype=torch.bool).tril()
    assert rel_err(o, F.scaled_dot_product_attention(q.double(), kk, vv, attn_mask=mask)) < 2e-3


@gpu
@pytest.mark.gpu
def test_int64_labels_and_a_silu_epilogue():
    """torch's int64 index tensors read by tl.load_scalar (a cross-entropy's labels), and the fused SiLU
    epilogue (tests/lang/test_triton_habits.py's kernels)."""
    from tests.lang.test_triton_habits import gather_by_int64, gemm_silu

    x = torch.randn(64, 100, device="cuda")
    labels = torch.randint(0, 100, (64,), device="cuda")  # int64
    o = torch.full((64,), float("nan"), device="cuda")
    gather_by_int64[(64,)](x, labels, o)
    assert torch.equal(o, x[torch.arange(64, device="cuda"), labels])
    a, b = torch.randn(300, 200, device="cuda", dtype=torch.float16), torch.randn(200, 260, device="cuda", dtype=torch.float16)
    c = torch.full((300, 260), float("nan"), device="cuda", dtype=torch.float16)
    gemm_silu[(3, 3)](a, b, c, BM=128, BN=128, BK=32)
    acc = a.double() @ b.double()
    assert rel_err(c, acc * torch.sigmoid(acc)) < 2e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("warps", [1, 4, 8])
def test_int64_tiles_on_the_gpu(warps):
    """tests/lang/test_triton_habits.py's int64 kernels: 64-bit loads, shuffles and shared-memory
    reductions, C's division, saturating conversions; argmax's indices stored as int64."""
    import numpy as np

    from tests.lang.test_triton_habits import _truncated, argmax_ids, int64_tiles

    a = torch.randint(-(1 << 50), 1 << 50, (60, 64), device="cuda")
    f = torch.randn(64, 64, device="cuda") * 1e12
    f[0, :4] = torch.tensor([1e30, -1e30, float("nan"), 3.7])
    o, of = torch.full((64,), -7, device="cuda"), torch.full((64, 64), -7, device="cuda")
    int64_tiles[(1,)](a, f, o, of, BM=64, N=64, num_warps=warps)
    t = torch.zeros(64, 64, dtype=torch.int64)
    t[:60] = a.cpu()
    t = t.numpy()
    u = t * 3 + _truncated(t, 7) - (t - 5 * _truncated(t, 5))
    u = np.where(u > (1 << 40), u, -u)
    assert (o.cpu().numpy() == u.sum(0) + t.max(1) + (1 << 33)).all()
    got = of.cpu().numpy()
    assert (got[1:] == f[1:].cpu().numpy().astype(np.int64) - t[1:]).all()
    assert (got[0, :4] + t[0, :4] == np.array([2**63 - 1, -(2**63), -(2**63), 3], np.int64)).all()
    x = torch.randn(8, 32, device="cuda")
    ids, copy_of = torch.full((8,), -1, device="cuda"), torch.full((2,), -1, device="cuda")
    argmax_ids[(2,)](x, ids, copy_of, BM=4, N=32)
    assert torch.equal(ids, x.argmax(1)) and copy_of.tolist() == [(1 << 40), (1 << 40) + 1]


@gpu
@pytest.mark.gpu
def test_early_exits_conditions_and_promotion_on_the_gpu():
    """tests/lang/test_helpers.py's early exit, a helper returning from its branches and and/or/not on
    run-time scalars, and test_triton_habits.py's promotions and Triton keywords, launched."""
    from tests.lang.test_helpers import conditions, early_exit, uses_pick
    from tests.lang.test_triton_habits import promotes, triton_keywords

    x = torch.randn(64, device="cuda")
    o = torch.full_like(x, float("nan"))
    early_exit[(4,)](x, o, 3, BN=16)
    assert torch.equal(o[:48], x[:48] * 2) and o[48:].isnan().all()
    x = torch.randn(64, device="cuda") + torch.tensor([3.0, -3.0, 0.0, 0.1], device="cuda").repeat_interleave(16)
    o, which = torch.full_like(x, float("nan")), torch.full((4,), float("nan"), device="cuda")
    uses_pick[(4,)](x, o, which, 8.0, BN=16)
    sums = x.view(4, 16).double().sum(1)
    want_w = torch.where(sums > 8, 1.0, torch.where(sums < -8, -1.0, 0.0)).float()
    want = x.view(4, 16) * torch.where(want_w == 1, 2.0, 1.0)[:, None] - (want_w == -1).float()[:, None]
    assert torch.equal(which, want_w) and (o - want.flatten()).abs().max() < 1e-6
    o = torch.full_like(x, float("nan"))
    conditions[(4,)](x, o, 3, BN=16)
    t, pid = x.view(4, 16).double(), torch.arange(4, device="cuda")[:, None]
    r = torch.where((pid < 3) & (t.sum(1, keepdim=True) > 0), t * 3.0, t)
    r = torch.where((pid >= 3) | (t.max(1, keepdim=True).values < -1), r - 100, r)
    assert (o.double() - r.flatten()).abs().max() < 1e-5
    n = 32
    x16, y32 = torch.randn(n, device="cuda", dtype=torch.float16), torch.randn(n, device="cuda") * 10
    o16, o32 = torch.full((n,), float("nan"), device="cuda", dtype=torch.float16), torch.full((n,), float("nan"), device="cuda")
    oi, acc = torch.full((n,), -7, device="cuda", dtype=torch.int32), torch.ones(n, device="cuda")
    promotes[(1,)](x16, y32, 7, 1.5, o16, o32, oi, acc, N=n)
    i = torch.arange(n, device="cuda", dtype=torch.float64)
    xd = x16.double()
    assert (o16.double() - (xd * 1.5 + y32.double())).abs().max() < 2e-2
    want = xd + torch.floor(xd * 4) + i * 0.5 + i / 7 + torch.where(i < 3, i, 0.25) + (i > 5) * 1.5
    assert (o32.double() - want).abs().max() < 1e-5
    assert torch.equal(oi, torch.trunc(y32).int()) and torch.equal(acc, 1 + x16.float())
    x = torch.randn(64, device="cuda")
    o, om, oi, bits = (torch.full((1,), float("nan"), device="cuda"), torch.full((1,), float("nan"), device="cuda"),
                       torch.full((1,), -1, device="cuda", dtype=torch.int32), torch.full((64,), float("nan"), device="cuda"))
    triton_keywords[(1,)](x, o, om, oi, bits, N=64, BN=16)
    assert abs(o.item() - x.double().sum().item()) < 1e-4 and om.item() == x.max().item() and oi.item() == x.argmax().item()
    assert torch.equal(bits.view(torch.int32), x.view(torch.int32) ^ 0x7FFFFF)


@gpu
@pytest.mark.gpu
def test_random_numbers_on_the_gpu_are_tritons():
    """tests/lang/test_random.py's kernels launched: Philox words against the numpy reference, and
    tl.rand / tl.randint against Triton's own for the same seed and offsets when Triton is installed."""
    import numpy as np

    from tests.lang.test_random import philox_reference, uniform_reference, words

    n = 4096
    out = [torch.full((n,), -7, device="cuda", dtype=torch.int32) for _ in range(4)]
    u = torch.full((n,), float("nan"), device="cuda")
    words[(n // 256,)](1234, *out, u, BN=256)
    want = philox_reference(1234, np.arange(n))
    for got, w in zip(out, want):
        assert (got.cpu().numpy() == w).all()
    assert (u.cpu().numpy() == uniform_reference(want[0])).all()
    triton = pytest.importorskip("triton", reason="Triton's tl.rand to compare with")
    import triton.language as ttl

    @triton.jit
    def triton_rand(o, w, seed, BN: ttl.constexpr):
        offsets = ttl.program_id(0) * BN + ttl.arange(0, BN)
        ttl.store(o + offsets, ttl.rand(seed, offsets))
        ttl.store(w + offsets, ttl.randint(seed, offsets).to(ttl.int32, bitcast=True))

    tu, tw = torch.empty(n, device="cuda"), torch.empty(n, device="cuda", dtype=torch.int32)
    triton_rand[(n // 256,)](tu, tw, 1234, BN=256)
    assert torch.equal(tw, out[0]) and torch.equal(tu, u)


@hopper
@pytest.mark.gpu
def test_the_wgmma_forms_on_the_gpu():
    """tests/lang/test_wgmma_forms.py's kernels on an H100/H200: a transposed B's later band, a
    register A loaded from global memory, and a K loop of async wgmmas."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lang"))
    import test_wgmma_forms as forms

    a, b = torch.randn(64, 32, device="cuda").half(), torch.randn(128, 32, device="cuda").half()
    c = torch.full((64, 32), float("nan"), device="cuda")
    forms.second_band[(1,)](a, b, c, COL=96, arch="sm_90a")
    assert rel_err(c, a.double() @ b[96:].double().T) < 1e-5
    a, b = torch.randn(128, 32, device="cuda").bfloat16(), torch.randn(32, 64, device="cuda").bfloat16()
    c = torch.full((128, 64), float("nan"), device="cuda")
    forms.register_a_from_global[(1,)](a, b, c, K=32, arch="sm_90a")
    assert rel_err(c, a.double() @ b.double()) < 1e-5
    a, b = torch.randn(64, 1000, device="cuda").half(), torch.randn(1000, 64, device="cuda").half()
    c = torch.full((64, 64), float("nan"), device="cuda")
    forms.k_loop_async[(1,)](a, b, c, BK=32, PENDING=0, num_stages=3, arch="sm_90a")
    assert rel_err(c, a.double() @ b.double()) < 1e-4


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("steps", [1, 7])
def test_warpgroups_taking_turns(steps):
    """``tl.turns(2)`` on the GPU (tests/lang's kernel): named barriers hand the turn between the two
    warpgroups each step, and the block exits with none left waiting."""
    spec = importlib.util.spec_from_file_location("lang_tests", Path(__file__).resolve().parents[1] / "lang" / "test_lang.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    rows_in_turns = tests.rows_in_turns

    x = torch.randn(128, 32, device="cuda")
    o = torch.full_like(x, float("nan"))
    rows_in_turns[(1,)](x, o, STEPS=steps)
    want = x.double()
    for _ in range(steps):
        want = want * 2 + 1
    assert rel_err(o, want) < 1e-6


@gpu
@hopper
@pytest.mark.gpu
@pytest.mark.parametrize("mnk, blocks", [((1000, 520, 200), 3), ((4096, 4096, 4096), 132), ((300, 1000, 64), 1)], ids=str)
@pytest.mark.parametrize("producer, bulk_store", [(False, False), (True, False), (True, True)],
                         ids=["", "producer", "producer-tma-store"])
def test_a_persistent_gemm(mnk, blocks, producer, bulk_store):
    """examples/lang/matmul.py's ``matmul_persistent``: fewer blocks than tiles, each looping over
    several; with a producer the stage ring runs on from tile to tile, without one the K loop's
    barriers start afresh each tile (before, that kernel hung from a block's second tile on); as
    written, its C goes out by bulk tensor stores."""
    import tilec.lang as tl

    mod = example("matmul")
    kernel = tl.Kernel(mod.matmul_persistent.fn, num_warps=8, num_stages=3, bulk=True, producer=producer,
                       bulk_store=bulk_store)
    m, n, k = mnk
    a, b = torch.randn(m, k, device="cuda", dtype=torch.float16), torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    cfg = mod.CONFIG_WGMMA
    kernel[(blocks,)](a, b, c, arch="sm_90a", **cfg)
    assert rel_err(c, a.double() @ b.double()) < 2e-3


@gpu
@hopper
@pytest.mark.gpu
def test_consumer_warpgroups_take_turns_beside_a_producer():
    """tests/lang's ``matmul_in_turns``: the two consumer warpgroups issue their wgmmas in turns
    (named barriers of 256 threads) while a producer warpgroup feeds them."""
    spec = importlib.util.spec_from_file_location("lang_tests", Path(__file__).resolve().parents[1] / "lang" / "test_lang.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    a, b = torch.randn(128, 1000, device="cuda").half(), torch.randn(1000, 64, device="cuda").half()
    c = torch.full((128, 64), float("nan"), device="cuda").half()
    tests.matmul_in_turns[(1,)](a, b, c, BM=128, BN=64, BK=32, arch="sm_90a")
    assert rel_err(c, a.double() @ b.double()) < 2e-3


@gpu
def test_a_cluster_kernel_on_the_gpu():
    """``@tl.kernel(cluster=2)`` (sm_90): the launch runs whole clusters (the cubin's
    ``.reqnctapercluster``); cluster ids, ranks and counts are the interpreter's; a grid that is not
    whole clusters is refused before the launch."""
    import tilec.lang as tl
    from tilec.runtime.errors import LaunchConfigError

    if torch.cuda.get_device_capability()[0] < 9:
        pytest.skip("thread-block clusters need sm_90")

    @tl.kernel(num_warps=1, cluster=2)
    def shifted(x, o):
        i = tl.block_id(0)
        v = tl.load(x, (i * 32,), shape=(32,))
        tl.cluster_barrier()
        tl.store(o, (i * 32,), v + (tl.cluster_id(0) * 100 + tl.block_rank() * 10 + tl.num_clusters(0)).to(tl.float32))

    x = torch.randn(256, device="cuda")
    o = torch.full_like(x, float("nan"))
    shifted[(8,)](x, o)
    torch.cuda.synchronize()
    want = torch.tensor([100 * (b // 2) + 10 * (b % 2) + 4 for b in range(8)], device="cuda",
                        dtype=torch.float32).repeat_interleave(32)
    assert torch.equal(o, x + want)
    with pytest.raises(LaunchConfigError, match="must be whole clusters"):
        shifted[(7,)](x, o)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("n", [3, 200])
def test_if_on_run_time_values(n):
    """The run-time if of tests/lang/test_lang.py (an scf.if with a tile, a vector and a scalar as
    results, an elif; a constexpr if) and its form in a tl.range loop, launched against float64."""
    path = Path(__file__).resolve().parents[1] / "lang" / "test_lang.py"
    spec = importlib.util.spec_from_file_location("lang_tests_of_the_cpu", path)
    cpu_tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cpu_tests)
    x = torch.randn(64, 32, device="cuda")
    o = torch.full_like(x, float("nan"))
    cpu_tests.branchy[(4,)](x, o, n, BM=16, N=32, SHIFT=True)
    assert rel_err(o, torch.from_numpy(cpu_tests.branchy_reference(x.cpu().numpy(), n)).cuda()) < 1e-5
    x = torch.randn(32, 5 * 16, device="cuda")
    o = torch.full((32, 16), float("nan"), device="cuda")
    cpu_tests.branch_in_loop[(2,)](x, o, 5, BM=16, N=16)
    assert rel_err(o, torch.from_numpy(cpu_tests.branch_in_loop_reference(x.cpu().numpy(), 5)).cuda()) < 1e-5


@gpu
@pytest.mark.gpu
def test_math_functions_on_the_gpu():
    """``tl.erf`` (a polynomial), ``tl.sin``/``cos`` (PTX's approximate instructions), ``tl.floor``/``ceil``
    (exact) and ``tl.clamp`` against float64 over [-6, 6], 16 rows of 1024 in one block."""
    import tilec.lang as tl

    @tl.kernel
    def functions(x, o, N: tl.constexpr):
        t = tl.load(x, (0, 0), shape=(16, N))
        tl.store(o[0], (0, 0), tl.erf(t))
        tl.store(o[1], (0, 0), tl.sin(t))
        tl.store(o[2], (0, 0), tl.cos(t))
        tl.store(o[3], (0, 0), tl.floor(t) + tl.ceil(t * 0.5))
        tl.store(o[4], (0, 0), tl.clamp(t, -1.5, 2.5))

    x = torch.linspace(-6, 6, 16 * 1024, device="cuda").reshape(16, 1024)
    x[0, :4] = torch.tensor([0.0, -0.0, 1e-8, -1e-30])
    o = torch.full((5, 16, 1024), float("nan"), device="cuda")
    functions[(1,)](x, o, N=1024)
    torch.cuda.synchronize()
    xd = x.double()
    want = [torch.erf(xd), torch.sin(xd), torch.cos(xd), torch.floor(xd) + torch.ceil(xd * 0.5), xd.clamp(-1.5, 2.5)]
    bounds = [6e-7, 2e-6, 2e-6, 0.0, 0.0]  # absolute: A&S 7.1.26 in f32; sin/cos.approx on |x| <= 6
    for name, got, ref, bound in zip(["erf", "sin", "cos", "floor+ceil", "clamp"], o, want, bounds):
        assert not got.isnan().any(), name
        assert (got.double() - ref).abs().max().item() <= bound, name


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 7), (1000, 4097), (333, 130)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_transpose(shape, dtype):
    """``x.T`` of a tile of the block: each side read or written in coalesced rows, the ragged edges
    masked (tests/lang/test_transpose.py's kernel)."""
    from tests.lang.test_transpose import transpose

    x = torch.randn(shape, device="cuda").to(dtype)
    y = torch.full(shape[::-1], float("nan"), device="cuda", dtype=dtype)
    transpose[(-(-shape[0] // 32), -(-shape[1] // 64))](x, y, BM=32, BN=64)
    assert torch.equal(y, x.T)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("mnk", [(64, 64, 32), (100, 70, 300), (257, 129, 65)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_dot_with_a_transposed_operand(mnk, dtype):
    """``a @ b.T`` with ``b`` held (N, K) as nn.Linear's weight, through ``tl.trans`` of its tiles: each
    warp's B registers are loaded in the fragment the transposed tile feeds the mma with."""
    import tilec.lang as tl

    @tl.kernel(num_warps=4)
    def linear(a, w, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        i, j = tl.program_id(0) * BM, tl.program_id(1) * BN
        row = i + tl.warp_id() * (BM // 4)  # each warp its rows of the block's tile
        acc = tl.zeros((BM // 4, BN))
        for k in tl.range(0, a.shape[1], BK):
            x = tl.load(a, (row, k), shape=(BM // 4, BK))
            acc = tl.dot(x, tl.trans(tl.load(w, (j, k), shape=(BN, BK))), acc)
        tl.store(c, (row, j), acc.to(c.dtype))

    m, n, k = mnk
    a, w = torch.randn(m, k, device="cuda").to(dtype), torch.randn(n, k, device="cuda").to(dtype)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
    linear[(-(-m // 64), -(-n // 64))](a, w, c, BM=64, BN=64, BK=32)
    assert rel_err(c, a.double() @ w.double().T) < 1e-2


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_total_reductions_and_scalar_stores(n):
    """``tl.sum`` of vectors carried through a loop, one partial a block stored as a scalar, and the
    total statistics of int32 and float tiles (tests/lang/test_full_reductions.py's kernels)."""
    from tests.lang.test_full_reductions import dot_product, int_reductions, totals, totals_reference

    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    o = torch.full((132,), float("nan"), device="cuda")
    dot_product[(132,)](x, y, o, N=1024)
    ref = x.double() @ y.double()
    assert abs(o.double().sum().item() - ref.item()) <= 1e-5 * (x.double() * y.double()).abs().sum().item()
    t = torch.randn(16, 64, device="cuda") * 3
    s = torch.full((6,), float("nan"), device="cuda")
    totals[(1,)](t, s, BM=16, BN=64)
    want = torch.tensor(totals_reference(t.cpu().numpy()), dtype=torch.float64)
    assert torch.allclose(s.cpu().double(), want, rtol=1e-5, atol=1e-3)
    i = torch.randint(-1000, 1000, (16, 64), device="cuda", dtype=torch.int32)
    r = torch.full((19, 64), -7, device="cuda", dtype=torch.int32)
    int_reductions[(1,)](i, r, BM=16, BN=64)
    assert torch.equal(r[:16], i.sum(1, dtype=torch.int32)[:, None].expand(16, 64))
    assert torch.equal(r[16], i.max(0).values) and (r[17] == i.min()).all() and (r[18] == i.sum()).all()


@gpu
@pytest.mark.gpu
def test_an_embedding_gather_by_int32_ids():
    """Row ids read from an int32 tensor (``tl.load_scalar``) address the rows a block copies."""
    import tilec.lang as tl

    @tl.kernel(num_warps=2)
    def embed(ids, table, o, D: tl.constexpr):
        i = tl.program_id(0)
        tl.store(o, (i, 0), tl.load(table, (tl.load_scalar(ids, (i,)), 0), shape=(1, D)))

    ids = torch.randint(0, 5000, (777,), device="cuda", dtype=torch.int32)
    table = torch.randn(5000, 96, device="cuda", dtype=torch.bfloat16)
    o = torch.full((777, 96), float("nan"), device="cuda", dtype=torch.bfloat16)
    embed[(777,)](ids, table, o, D=128)
    assert torch.equal(o, table[ids.long()])


@gpu
@pytest.mark.gpu
def test_atomics_on_the_gpu():
    """``tl.atomic_add/max/min`` from many blocks (tests/lang/test_atomics.py's kernels): column sums of
    a split over row blocks, one total from 1024 blocks, int32 extremes, and a block's value added
    once against a warp's own added by each warp."""
    from tests.lang.test_atomics import column_sums, extremes, float_extremes, total, warp_totals

    x = torch.randn(5000, 300, device="cuda")
    o = torch.full((300,), 0.25, device="cuda")
    column_sums[(-(-5000 // 32), -(-300 // 64))](x, o, BM=32, BN=64)
    assert (o.double() - (x.double().sum(0) + 0.25)).abs().max().item() < 1e-3
    y = torch.randn(1 << 20, device="cuda")
    s = torch.full((1,), 2.0, device="cuda")
    total[(1024,)](y, s, N=1024)
    assert abs(s.item() - (y.double().sum().item() + 2)) < 1e-2
    i = torch.randint(-(1 << 30), 1 << 30, (4099, 32), device="cuda", dtype=torch.int32)
    e = torch.tensor([-(1 << 31)] * 32 + [(1 << 31) - 1] * 32 + [7], device="cuda", dtype=torch.int32)
    extremes[(-(-4099 // 32),)](i, e, BM=32)
    assert torch.equal(e[:32], i.max(0).values) and torch.equal(e[32:64], i.min(0).values)
    assert e[64].item() == (i.long().sum().item() + 7 + (1 << 31)) % (1 << 32) - (1 << 31)  # i32 sums wrap
    w = torch.randn(64, 64, device="cuda")
    t = torch.zeros(2, device="cuda")
    warp_totals[(1,)](w, t, BN=64)
    assert abs(t[0].item() - w.double().sum().item()) < 1e-3 and abs(t[1].item() - w[:16].double().sum().item()) < 1e-3
    f = torch.randn(4099, 32, device="cuda")
    fo = torch.tensor([float("-inf")] * 32 + [float("inf")] * 32 + [0.5], device="cuda")
    float_extremes[(-(-4099 // 32),)](f, fo, BM=32)  # f32 extremes of both signs, as integer reductions
    assert torch.equal(fo[:32], f.max(0).values) and torch.equal(fo[32:64], f.min(0).values)
    assert fo[64].item() == f.abs().max().item()


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_80", None])
def test_atomics_that_return_old_values_on_the_gpu(arch):
    """The old values of ``tl.atomic_*`` (tests/lang/test_atomics.py's kernels) on the GPU: tickets from
    4096 blocks are a permutation, the last block to arrive sums 999 partials, and a tile's, a block
    vector's and a warp's lanes' old values (add, max, xchg), compare-and-swap and the bitwise kinds."""
    from tests.lang.test_atomics import bits, last_block_sums, old_tiles, swaps, tickets

    opts = {} if arch is None else {"arch": arch}
    counter = torch.full((1,), 3, device="cuda", dtype=torch.int32)
    got = torch.full((4096,), -1, device="cuda", dtype=torch.int32)
    tickets[(4096,)](counter, got, **opts)
    assert counter.item() == 4099 and torch.equal(got.sort().values.cpu(), torch.arange(3, 4099, dtype=torch.int32))
    x = torch.randn(999 * 256, device="cuda")
    partial = torch.full((1024,), float("nan"), device="cuda")
    count, out = torch.zeros(1, device="cuda", dtype=torch.int32), torch.full((1,), float("nan"), device="cuda")
    last_block_sums[(999,)](x, partial, count, out, N=256, G=999, **opts)
    assert count.item() == 999 and abs(out.item() - x.double().sum().item()) < 1e-2
    bm, bn = 64, 32
    t = torch.randn(bm, bn, device="cuda")
    o, o1 = torch.randn(bm, bn + 8, device="cuda"), torch.randn(bn + bm + 8, device="cuda")
    before, before1 = o.clone(), o1.clone()
    prev, prev1 = torch.full_like(o, float("nan")), torch.full_like(o1, float("nan"))
    old_tiles[(1,)](t, o, prev, o1, prev1, BM=bm, BN=bn, **opts)
    assert torch.equal(prev[:, :bn], before[:, :bn]) and torch.equal(prev1[:bn + bm], before1[:bn + bm])
    assert torch.allclose(o[:, :bn], before[:, :bn] + t) and torch.equal(o[:, bn:], before[:, bn:])
    assert torch.equal(o1[:bn], torch.maximum(before1[:bn], t.max(0).values))
    assert torch.allclose(o1[bn:bn + bm], t.sum(1), atol=1e-4) and torch.equal(o1[bn + bm:], before1[bn + bm:])
    o = torch.randint(0, 4, (1, 64), device="cuda", dtype=torch.int32)
    cmp = torch.randint(0, 4, (1, 64), device="cuda", dtype=torch.int32)
    before, prev = o.clone(), torch.full_like(o, -1)
    swaps[(1,)](o, prev, cmp, BN=64, **opts)
    cols = torch.arange(64, device="cuda", dtype=torch.int32)[None, :]
    assert torch.equal(prev, before) and torch.equal(o, torch.where(before == cmp, cols, before))
    o = torch.randint(-(1 << 31), (1 << 31) - 1, (3,), device="cuda", dtype=torch.int32)
    before, prev = o.clone(), torch.zeros(1, device="cuda", dtype=torch.int32)
    bits[(1,)](o, prev, 0x0F0F0F0F, **opts)
    a, b = before[0].item(), before[1].item()
    assert o[0].item() == a & 0x0F0F0F0F and o[1].item() == b | a and o[2].item() == before[2].item() ^ b
    assert prev.item() == before[2].item()


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(96, 64), (4099, 256)], ids=str)
def test_int8_quantization_on_the_gpu(shape):
    """Row-wise int8 quantization and back (tests/lang/test_int8.py's kernels) against torch, and int8
    sums, extremes and saturating conversions."""
    from tests.lang.test_int8 import conversions, dequantize, int8_math, quantize

    m, n = shape
    x = torch.randn(m, n, device="cuda") * torch.rand(m, 1, device="cuda") * 10
    q, scale = torch.zeros(m, n, device="cuda", dtype=torch.int8), torch.full((m,), float("nan"), device="cuda")
    quantize[(-(-m // 32),)](x, q, scale, BM=32, BN=n)
    v = x * (127.0 / x.abs().amax(1, keepdim=True))
    want = torch.where(v >= 0, v + 0.5, v - 0.5).trunc()  # half away from zero
    # the kernel may fuse v + 0.5 into one FMA (contracted): a value within rounding of a tie may go either way
    tie = ((v.abs() - v.abs().trunc()) - 0.5).abs() < 1e-4
    assert ((q.int() - want.int()).abs() <= tie.int()).all()
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    dequantize[(-(-m // 32),)](q, scale, out, BM=32, BN=n)
    assert rel_err(out, x.double()) < 1e-2
    r = torch.randint(-128, 128, (16, 32), device="cuda", dtype=torch.int8)
    sums, extremes, doubled = (torch.zeros(16, device="cuda", dtype=torch.int32),
                               torch.zeros(64, device="cuda", dtype=torch.int8), torch.zeros_like(r))
    int8_math[(1,)](r, sums, extremes, doubled, BM=16, BN=32)
    assert torch.equal(sums, r.int().sum(1)) and torch.equal(doubled, (r.int() * 2).to(torch.int8))
    assert torch.equal(extremes, torch.cat([r.max(0).values, r.min(0).values]))
    f = torch.tensor([300.0, -300.0, 1.7, -1.7, float("nan"), 127.9, -128.9, 40000.0] * 4, device="cuda")
    i = torch.tensor([300, -300, 127, 128, -129, 255, 256, 65535] * 4, device="cuda", dtype=torch.int32)
    c8, ci8, c16 = (torch.zeros(32, device="cuda", dtype=t) for t in (torch.int8, torch.int8, torch.int16))
    conversions[(1,)](f, i, c8, ci8, c16, BN=32)
    assert c8[:8].tolist() == [127, -128, 1, -1, 0, 127, -128, 127]
    assert ci8[:8].tolist() == [44, -44, 127, -128, 127, -1, 0, -1]
    assert c16[:8].tolist() == [301, -299, 2, 0, 1, 128, -127, -32768]

@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("mnk, block, warps", [((64, 64, 64), (64, 64, 32), 4), ((1000, 1032, 520), (128, 128, 64), 8),
                                               ((4096, 4096, 4096), (128, 128, 64), 8)], ids=str)
def test_int8_gemm_on_the_gpu(mnk, block, warps):
    """``tl.dot`` of int8 tiles (tests/lang/test_int8_dot.py's kernel) against torch's exact int64 product;
    int32 sums that wrap at the large shape's extremes are compared modulo 2^32, as the GPU sums."""
    from tests.lang.test_int8_dot import dequantized, int8_matmul, int8_matmul_nt

    m, n, k = mnk
    a = torch.randint(-128, 128, (m, k), device="cuda", dtype=torch.int8)
    b = torch.randint(-128, 128, (k, n), device="cuda", dtype=torch.int8)
    c = torch.full((m, n), -7, device="cuda", dtype=torch.int32)
    bm, bn, bk = block
    int8_matmul.with_options(num_warps=warps)[(-(-m // bm), -(-n // bn))](a, b, c, BM=bm, BN=bn, BK=bk)
    ref = (a.cpu().long() @ b.cpu().long() + (1 << 31)) % (1 << 32) - (1 << 31)
    assert torch.equal(c.cpu().long(), ref)
    c.fill_(-7)  # weights N x K: on sm_90 the block's s8 wgmma
    int8_matmul_nt.with_options(num_warps=warps)[(-(-m // bm), -(-n // bn))](a, b.T.contiguous(), c, BM=bm, BN=bn, BK=bk)
    assert torch.equal(c.cpu().long(), ref)
    if m == 64:
        sa, sb = torch.rand(64, device="cuda") / 10, torch.rand(64, device="cuda") / 10
        out = torch.full((64, 64), float("nan"), device="cuda", dtype=torch.float16)
        dequantized[(1, 1)](a, b.T.contiguous(), sa, sb, out, BM=64, BN=64, K=64)
        assert rel_err(out, (a.double() @ b.double()) * sa.double()[:, None] * sb.double()[None, :]) < 2e-3

@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_80", None])
def test_while_loops_on_the_gpu(arch):
    """``while`` on run-time values (tests/lang/test_while.py's kernels): 512 blocks serialised by a
    spin lock on ``tl.atomic_cas`` add into one float, a carried tile halved until it is small, a
    binary search per block, and a run-time trip count."""
    from tests.lang.test_while import countdown, halvings, locked_sum, search

    opts = {} if arch is None else {"arch": arch}
    x = torch.randn(512 * 256, device="cuda")
    lock, out = torch.zeros(1, device="cuda", dtype=torch.int32), torch.full((1,), 0.5, device="cuda")
    locked_sum[(512,)](x, lock, out, N=256, **opts)
    assert lock.item() == 0 and abs(out.item() - (x.double().sum().item() + 0.5)) < 1e-2
    scale = torch.tensor([0.5, 4.0, 1e3, 1e-3], device="cuda").repeat_interleave(32)[:, None]
    t = torch.randn(128, 64, device="cuda") * scale
    y, count = torch.full_like(t, float("nan")), torch.full((4,), -1, device="cuda", dtype=torch.int32)
    halvings[(4,)](t, y, count, BM=32, BN=64, **opts)
    for b in range(4):
        rows = t[b * 32:(b + 1) * 32]
        n = max(0, int(torch.ceil(torch.log2(rows.abs().max())).item()))
        assert count[b].item() == n and torch.equal(y[b * 32:(b + 1) * 32], rows * 0.5 ** n)
    a = torch.randint(0, 10_000, (1000,), device="cuda", dtype=torch.int32).sort().values
    targets = torch.randint(-5, 10_005, (300,), device="cuda", dtype=torch.int32)
    found = torch.full((300,), -1, device="cuda", dtype=torch.int32)
    search[(300,)](a, targets, found, N=1000, **opts)
    assert torch.equal(found.long().cpu(), torch.searchsorted(a.cpu(), targets.cpu()))
    out = torch.full((2,), -1, device="cuda", dtype=torch.int32)
    countdown[(1,)](torch.tensor([1000], device="cuda", dtype=torch.int32), out, **opts)
    assert out.tolist() == [500500, 1003]


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("mnk", [(64, 64, 32), (1000, 1032, 520), (257, 129, 65)], ids=str)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_triton_style_block_gemm(mnk, dtype):
    """``tl.dot`` of whole-block tiles (no warp ids) split over the block's warps by tile-layout, and a
    row softmax of a split accumulator (tests/lang/test_block_dot.py's kernels)."""
    from tests.lang.test_block_dot import gemm, scores_softmax

    m, n, k = mnk
    a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
    c = torch.full((m, n), float("nan"), device="cuda")
    gemm[(-(-m // 128), -(-n // 64))](a, b, c, BM=128, BN=64, BK=32, DT=dtype, num_warps=8)
    t = getattr(torch, dtype)
    ref = torch.relu(a.to(t).double() @ b.to(t).double() * 0.5 + 1.0)
    assert rel_err(c, ref) < 1e-5
    q, kk = torch.randn(256, 64, device="cuda", dtype=torch.float16), torch.randn(128, 64, device="cuda", dtype=torch.float16)
    o = torch.full((256, 128), float("nan"), device="cuda", dtype=torch.float16)
    scores_softmax[(4,)](q, kk, o, BM=64, BN=128, D=64)
    assert (o.double() - torch.softmax(q.double() @ kk.double().T, -1)).abs().max().item() < 2e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("mnk", [(128, 256, 64), (1000, 1032, 520), (2048, 2048, 2048)], ids=str)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_the_tutorial_loop_and_dots_outside_k_loops(mnk, arch):
    """tests/lang/test_block_dot.py's Triton-tutorial loop (``k * BK`` offsets, ``acc += tl.dot``), a
    dot of the whole K (K = 128) and a loop of one dot per output tile, each staged by tile-stage."""
    from tests.lang.test_block_dot import dot_per_tile, one_dot, tutorial_gemm

    if arch == "sm_90a" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs on an sm_90 GPU only")
    m, n, k = mnk
    a, b = (torch.randn(s, device="cuda", dtype=torch.float16) for s in ((m, k), (k, n)))
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    tutorial_gemm[(-(-m // 128), -(-n // 256))](a, b, c, k, BM=128, BN=256, BK=64, num_warps=8, arch=arch)
    assert rel_err(c, a.double() @ b.double()) < 2e-3
    a, b = a[:, :128].contiguous(), b[:128].contiguous()
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    one_dot[(-(-m // 128), -(-n // 128))](a, b, c, BM=128, BN=128, K=128, arch=arch)
    assert rel_err(c, a.double() @ b.double()) < 2e-3
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    tiles = -(-m // 64)
    dot_per_tile[(-(-n // 64),)](a, b, c, tiles, BM=64, BN=64, K=128, arch=arch)
    sign = torch.where(torch.arange(m, device="cuda") // 64 % 2 == 0, 1.0, -1.0).double()[:, None]
    assert rel_err(c, sign * (a.double() @ b.double())) < 2e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("bm, bn, warps", [(16, 32, 4), (4, 256, 4), (2, 1024, 8), (128, 16, 4)], ids=str)
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_scans_on_the_gpu(bm, bn, warps, arch):
    """tests/lang/test_scan.py's kernels: running sums along and down block tiles (the exchange between
    warps through shared memory included), reversed maxima, int32 sums, an mma's accumulator and a
    vector, against torch's cumsum / cummax in float64."""
    from tests.lang.test_scan import fill_rows, forward_fill, scan_products, scan_rows

    if arch == "sm_90a" and torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("sm_90a code runs on an sm_90 GPU only")
    m = 6 * bm
    for axis in (0, 1):
        x = torch.randn(m, bn, device="cuda")
        o = torch.full_like(x, float("nan"))
        scan_rows.with_options(num_warps=warps)[(m // bm,)](x, o, BM=bm, BN=bn, AXIS=axis, KIND="sum", REV=False,
                                                            arch=arch)
        want = torch.cat([c.double().cumsum(axis) for c in x.split(bm)])
        assert rel_err(o, want) < 1e-5
        o.fill_(float("nan"))
        scan_rows.with_options(num_warps=warps)[(m // bm,)](x, o, BM=bm, BN=bn, AXIS=axis, KIND="max", REV=True,
                                                            arch=arch)
        want = torch.cat([c.double().flip(axis).cummax(axis).values.flip(axis) for c in x.split(bm)])
        assert rel_err(o, want) < 1e-6
        xi = (x * 100).int()
        oi = torch.full_like(xi, -12345)
        scan_rows.with_options(num_warps=warps)[(m // bm,)](xi, oi, BM=bm, BN=bn, AXIS=axis, KIND="sum", REV=False,
                                                            arch=arch)
        assert torch.equal(oi, torch.cat([c.cumsum(axis, dtype=torch.int32) for c in xi.split(bm)]))
        xs = (x[:bm] * 2).round() * (torch.rand_like(x[:bm]) < 0.3)  # tl.associative_scan: forward fill + max
        o = torch.full_like(xs, float("nan"))
        fill_rows.with_options(num_warps=warps)[(1,)](xs, o, BM=bm, BN=bn, AXIS=axis, REV=True, arch=arch)
        xn = xs.cpu().numpy()
        want = forward_fill(xn, axis, True) + np.maximum.accumulate(xn, axis=axis)
        assert np.array_equal(o.cpu().numpy(), want)
    a, b = torch.randn(128, 32, device="cuda", dtype=torch.float16), torch.randn(32, 64, device="cuda", dtype=torch.float16)
    v = torch.randn(1024, device="cuda")
    o, ov = torch.full((128, 64), float("nan"), device="cuda"), torch.full_like(v, float("nan"))
    scan_products.with_options(num_warps=8)[(1,)](a, b, v, o, ov, BM=128, BN=64, K=32, N=1024, arch=arch)
    p = a.double() @ b.double()
    assert rel_err(o, p.cumsum(0) - p.flip(1).cumsum(1).flip(1)) < 1e-5
    x = v.double()
    assert rel_err(ov, x.flip(0).cumsum(0).flip(0) + x.cumsum(0) + (x > 0).double().cumsum(0)) < 1e-5


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("bm, bn, warps", [(16, 32, 4), (2, 1024, 8), (64, 64, 4)], ids=str)
def test_reductions_with_a_function_on_the_gpu(bm, bn, warps):
    """tests/lang/test_reduce_fn.py's tl.reduce with @tl.func and lambda functions, against float64."""
    from tests.lang.test_reduce_fn import reductions

    x, v = torch.randn(bm, bn, device="cuda"), torch.randn(bn, device="cuda")
    rows, cols, total = (torch.full((n,), float("nan"), device="cuda") for n in (bm, bn, 1))
    reductions.with_options(num_warps=warps)[(1,)](x, v, rows, cols, total, BM=bm, BN=bn)
    assert rel_err(rows, x.double().sum(1)) < 1e-5
    assert torch.equal(cols, x.abs().max(0).values + x.max())
    assert rel_err(total, (v.double().sum() + x.double().sum()).reshape(1)) < 1e-5


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_80", None])
def test_masks_on_the_gpu(arch):
    """``mask=`` on stores, loads and atomics (tests/lang/test_masks.py's kernels): exactly the masked-in
    elements written (the rest keep their NaN), packed sequences whose blocks run into the next sequence
    (which other blocks write at the same time), masked-off columns out of a maximum, masked atomics."""
    from tests.lang.test_masks import every_third, keep_positive, masked_atomics, padded_columns, varlen_rows

    opts = {} if arch is None else {"arch": arch}
    x = torch.randn(1000, 700, device="cuda")
    o = torch.full_like(x, float("nan"))
    keep_positive[(-(-1000 // 64), -(-700 // 64))](x, o, 777, BM=64, BN=64, **opts)
    keep = (x > 0) & (torch.arange(1000, device="cuda")[:, None] < 777)
    assert torch.equal(o.isnan(), ~keep) and torch.equal(o[keep], 2 * x[keep])
    v = torch.randn(100_000, device="cuda")
    ov = torch.full_like(v, float("nan"))
    every_third[(-(-100_000 // 1024),)](v, ov, B=1024, **opts)
    kv = torch.arange(100_000, device="cuda") % 3 != 0
    assert torch.equal(ov.isnan(), ~kv) and torch.equal(ov[kv], v[kv] + 1)
    m = torch.randn(4000, 128, device="cuda") * 30
    om = torch.full((4000,), float("nan"), device="cuda")
    padded_columns[(500,)](m, om, 77, BN=128, **opts)
    assert torch.equal(om, m[:, :77].max(1).values)
    lengths = torch.randint(1, 300, (64,)).tolist()
    starts = torch.tensor([0] + lengths, dtype=torch.int32).cumsum(0, dtype=torch.int32).cuda()
    xs = torch.randn(sum(lengths), 128, device="cuda")
    os_ = torch.full_like(xs, float("nan"))
    varlen_rows[(64, -(-300 // 32))](xs, starts, os_, BM=32, D=128, **opts)
    seq = torch.repeat_interleave(torch.arange(64, device="cuda"), torch.tensor(lengths, device="cuda")).float()
    assert torch.equal(os_, xs + seq[:, None])
    b, grid, n = 256, 300, 50_000
    xa = torch.randn(grid * b, device="cuda")
    h = torch.full((2 * b + 2 + grid * b + grid,), -5, device="cuda", dtype=torch.int32)
    masked_atomics[(grid,)](xa, h, n, B=b, **opts)
    ok = (xa > 0) & (torch.arange(grid * b, device="cuda") < n)
    assert torch.equal(h[:b], ok.reshape(grid, b).sum(0, dtype=torch.int32) - 5)
    assert h[b].item() == grid - 5 and h[b + 1].item() == -5
    olds = h[2 * b + 2:2 * b + 2 + grid * b].reshape(grid, b)
    assert (olds[:, 3:] == 0).all() and sorted(tuple(r) for r in olds[:, :3].tolist()) == [(-5,) * 3] + [(7,) * 3] * (grid - 1)
    assert sorted(h[2 * b + 2 + grid * b:].tolist()) == list(range(-5, grid - 5))


@gpu
@pytest.mark.gpu
def test_int64_number_arguments_on_the_gpu():
    """A number argument past int32 is passed as an i64 (tests/lang/test_triton_habits.py's kernel)."""
    from tests.lang.test_triton_habits import wide_arguments

    o = torch.full((16,), float("nan"), device="cuda")
    wide_arguments[(1,)](o, 12345678901, 5 * 10**9, SEED=12345678901)
    assert torch.equal(o, torch.full_like(o, 5.0))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_80", None])
def test_block_pointers_on_the_gpu(arch):
    """Triton's block-pointer GEMM (tests/lang/test_block_ptr.py) on ragged shapes, against float64, and
    tensor descriptors; the advanced offsets are staged like windows (cp.async, or wgmma on sm_90a)."""
    from tests.lang.test_block_ptr import matmul_bp, scale_rows, split_k_bp

    opts = {} if arch is None else {"arch": arch}
    M, N, K = 1000, 770, 520
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    matmul_bp[(-(-M // 64), -(-N // 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32, **opts)
    assert rel_err(c, a.double() @ b.double()) < 2e-3
    x = torch.randn(333, 1000, device="cuda")
    o = torch.full_like(x, float("nan"))
    scale_rows[(-(-333 // 16),)](x, o, 333, 1000, BM=16, BN=128, **opts)
    assert torch.equal(o, 2 * x + 1)
    bt = torch.randn(N, K, device="cuda", dtype=torch.float16)  # B as N x K, read through a K^T pointer
    acc = torch.zeros(M, N, device="cuda")
    split_k_bp[(-(-M // 64) * -(-N // 64), 4)](a, bt, acc, M, N, K, 160, BM=64, BN=64, BK=32, **opts)  # 4 slices of K
    assert rel_err(acc, a.double() @ bt.double().T) < 1e-4


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_80", None])
def test_the_tutorials_masked_gemm_on_the_gpu(arch):
    """Triton's tutorial GEMM with masked K residues (tests/lang/test_masks.py), staged through shared memory
    by copies that take the masks: K at the arrays' end and before it (the masks, not the bounds, decide),
    masks no prefix of a copy's runs (every third K index), and examples/lang's ``matmul_masked`` at its
    benchmark tiles (on an sm_90 GPU by default: the block's warpgroup MMAs)."""
    from tests.lang.test_masks import every_third_k, tutorial_gemm

    mod = example("matmul")

    opts = {} if arch is None else {"arch": arch}
    M, N, KA = 1000, 777, 530
    a = torch.randn(M, KA, device="cuda", dtype=torch.float16)
    b = torch.randn(KA, N, device="cuda", dtype=torch.float16)
    for K in (KA, 517):
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
        tutorial_gemm[(-(-M // 64), -(-N // 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32, **opts)
        assert rel_err(c, a[:, :K].double() @ b[:K].double()) < 2e-3
    keep = ((torch.arange(KA, device="cuda") % 3 != 0) & (torch.arange(KA, device="cuda") < 517)).double()
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    every_third_k[(-(-M // 64), -(-N // 64))](a, b, c, 517, BM=64, BN=64, BK=32, **opts)
    assert rel_err(c, (a.double() * keep) @ b.double()) < 2e-3
    hopper = arch is None and torch.cuda.get_device_capability() == (9, 0)
    kernel, cfg = (mod.MASKED_WGMMA, mod.CONFIG_BLOCK_WGMMA) if hopper else (mod.matmul_masked, mod.CONFIG_BLOCK)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    kernel[(-(-M // cfg["BM"]) * -(-N // cfg["BN"]),)](a, b, c, M, N, 517, **cfg, **opts)
    assert rel_err(c, a[:, :517].double() @ b[:517].double()) < 2e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ["sm_80", None])
def test_masks_on_every_edge_and_on_attentions_keys_on_the_gpu(arch):
    """tests/lang/test_masks.py's GEMM with every load edge masked and attention with its keys' loads
    masked (over the first n keys, fewer than the arrays hold): masked copies of both operands."""
    from tests.lang.test_masks import edges_masked_gemm, masked_attention

    opts = {} if arch is None else {"arch": arch}
    M, N, KA, K = 1000, 777, 530, 517
    a = torch.randn(M, KA, device="cuda", dtype=torch.float16)
    b = torch.randn(KA, N, device="cuda", dtype=torch.float16)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    edges_masked_gemm[(-(-M // 64), -(-N // 64))](a, b, c, M, N, K, BM=64, BN=64, BK=32, **opts)
    assert rel_err(c, a[:, :K].double() @ b[:K].double()) < 2e-3
    S, SK, n, D = 512, 1100, 1000, 64
    q = torch.randn(S, D, device="cuda", dtype=torch.float16)
    k, v = (torch.randn(SK, D, device="cuda", dtype=torch.float16) for _ in range(2))
    o = torch.full((S, D), float("nan"), device="cuda", dtype=torch.float16)
    masked_attention[(S // 64,)](q, k, v, o, n, D ** -0.5, BM=64, BN=32, D=D, **opts)
    s = q.double() @ k[:n].double().T * D ** -0.5
    assert rel_err(o, torch.softmax(s, dim=1) @ v[:n].double()) < 1e-2
