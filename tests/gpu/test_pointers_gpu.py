"""Triton's pointer arithmetic and index tiles on the GPU (examples/lang/pointers.py): against float64
torch, fresh random inputs, outputs poisoned with NaN; torch tensors with their own strides (a
transposed view, a row slice), offsets past 2**31 elements, offsets outside the array."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import tilec.lang as tl
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.lang launch on torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

_spec = importlib.util.spec_from_file_location(
    "lang_example_pointers", Path(__file__).resolve().parents[2] / "examples" / "lang" / "pointers.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)

ARCHS = ["sm_80", None]  # sm_80 code, and the GPU's own (sm_90a on an H100/H200)


def rel_err(got, ref) -> float:
    assert not got.isnan().any(), "an output was not written"
    return ((got.double() - ref).abs().max() / ref.abs().max()).item()


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("n", [1, 1000, 1 << 20, 1_000_003])
def test_vector_add(n, arch):
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    c = torch.full_like(a, float("nan"))
    ex.add_kernel[(-(-n // 1024),)](a, b, c, n, BLOCK_SIZE=1024, arch=arch)
    assert torch.equal(c, a + b)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("shape", [(1, 7), (300, 1000), (64, 4096)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_softmax_of_strided_rows(shape, dtype, arch):
    full = (torch.randn(shape[0], shape[1] + 37, device="cuda") * 10).to(dtype)
    x = full[:, 5:5 + shape[1]]  # rows of stride shape[1] + 37, starting at element 5
    o = torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    block = 1 << (shape[1] - 1).bit_length()
    ex.softmax_kernel[(shape[0],)](o, x, x.stride(0), o.stride(0), shape[1], BLOCK_SIZE=max(block, 32), arch=arch)
    assert rel_err(o, torch.softmax(x.double(), -1)) < 3e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=str)
def test_embedding_rows(dtype, arch):
    table = torch.randn(5000, 256, device="cuda").to(dtype)
    ids = torch.randint(-10, 5010, (1000,), device="cuda", dtype=torch.int32)  # some outside: rows of zeros
    out = torch.full((1000, 256), float("nan"), device="cuda", dtype=dtype)
    ex.embedding[(-(-1000 // 32), 256 // 128)](ids, table, out, 1000, BM=32, D=128, arch=arch)
    inside = (ids >= 0) & (ids < 5000)
    ref = torch.zeros_like(out)
    ref[inside] = table[ids[inside].long()]
    assert torch.equal(out, ref)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
def test_scatter_rows(arch):
    x = torch.randn(512, 64, device="cuda")
    index = torch.randperm(512, device="cuda").to(torch.int64)
    index[::7] = -1
    out = torch.full_like(x, float("nan"))
    ex.scatter_rows[(512 // 32,)](x, index, out, BM=32, D=64, arch=arch)
    keep = index >= 0
    ref = torch.full_like(x, float("nan"))
    ref[index[keep]] = x[keep]
    assert torch.equal(out.nan_to_num(7.0), ref.nan_to_num(7.0))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shape", [(300, 200, 333), (256, 512, 320), (1000, 1000, 1000)], ids=str)
@pytest.mark.parametrize("stages,warps,tiles", [(1, 4, (64, 64, 32)), (3, 4, (128, 128, 64)), (4, 8, (128, 256, 64))],
                         ids=["1stage", "3stages", "4stages-8warps"])
def test_the_matmul_tutorials_pointers(stages, warps, tiles, shape, transposed, arch):
    """The tutorial's loads are gathers staged through shared memory (gathering cp.async copies where a
    thread's runs are consecutive and aligned: the aligned shapes; element by element elsewhere: K = 333,
    the wrapped columns of `% N`, a transposed B)."""
    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = (torch.randn(n, k, device="cuda", dtype=torch.float16).t() if transposed
         else torch.randn(k, n, device="cuda", dtype=torch.float16))
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    bm, bn, bk = tiles
    ex.matmul_kernel[(-(-m // bm), -(-n // bn))](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                                 c.stride(0), c.stride(1), BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                                                 BLOCK_SIZE_K=bk, arch=arch, num_warps=warps, num_stages=stages)
    assert rel_err(c, a.double() @ b.double()) < 2e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("form,step", [("down", 1), ("int64", 1), ("up", 2)])
@pytest.mark.parametrize("shape", [(512, 512, 512), (300, 200, 333)], ids=str)
def test_pointer_gemms_walked_other_ways(shape, form, step, arch):
    """tests/lang's three other K loops (pointers walked down, int64 offsets, a loop step of 2), staged as
    gathering copies, on the GPU: cp.async runs inside, element by element at the ragged edges."""
    from tests.lang.test_pointers import gemm_variants

    m, n, k = shape
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float32)
    bk = 64
    gemm_variants[(-(-m // 128), -(-n // 128))](a, b, c, m, n, k, step, FORM=form, BM=128, BN=128, BK=bk, arch=arch,
                                                 num_stages=3)
    tiles = range(0, -(-k // bk), step)
    ks = [j for i in tiles for j in (range(k - bk * (i + 1), k - bk * i) if form == "down" else range(bk * i, bk * i + bk))
          if 0 <= j < k]
    ks = torch.tensor(ks, device="cuda")
    assert rel_err(c, a.double()[:, ks] @ b.double()[ks]) < 2e-3


@gpu
@pytest.mark.gpu
def test_offsets_past_two_to_the_31():
    """An int64 offset reaches past 2**31 elements of a 4.3 GB array (i64 addressing end to end)."""
    n = (1 << 31) + 4096
    x = torch.empty(n, device="cuda", dtype=torch.float16)
    x[-4096:] = torch.randn(4096, device="cuda", dtype=torch.float16)
    start = torch.tensor([n - 4096], device="cuda", dtype=torch.int64)
    out = torch.full((4096,), float("nan"), device="cuda", dtype=torch.float16)
    _far_copy[(4,)](x, start, out, BLOCK=1024)
    assert torch.equal(out, x[-4096:])
    del x


@tl.kernel(num_warps=4)
def _far_copy(x, start, out, BLOCK: tl.constexpr):
    """Elements of ``x`` from the offset ``start`` holds (an int64 read from memory: i64 offsets)."""
    first = tl.load(start + 0)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + offs, tl.load(x + (first + offs)))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
def test_histogram(arch):
    n, bins = 1_000_003, 97
    x = torch.randint(0, bins, (n,), device="cuda", dtype=torch.int32)
    h = torch.zeros(bins, device="cuda", dtype=torch.int32)
    ex.histogram[(-(-n // 1024),)](x, h, n, BLOCK=1024, arch=arch)
    assert torch.equal(h, torch.bincount(x, minlength=bins).to(torch.int32))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
def test_index_add(arch):
    src = torch.randn(4096, 64, device="cuda")
    index = torch.randint(0, 100, (4096,), device="cuda", dtype=torch.int32)
    out = torch.zeros(100, 64, device="cuda")
    ex.index_add[(4096 // 32,)](src, index, out, BM=32, D=64, arch=arch)
    ref = torch.zeros(100, 64, device="cuda", dtype=torch.float64).index_add_(0, index.long(), src.double())
    assert rel_err(out, ref) < 1e-5


@tl.kernel(num_warps=4)
def _wide_atomics(x, keys, total, counts, BLOCK: tl.constexpr):
    """An f64 sum and int64 counts past 2^32 (64-bit atomics), with old values handed to their holders."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(total + 0, tl.sum(tl.load(x + offs), axis=0))
    tl.atomic_add(counts + tl.load(keys + offs), 1 << 33)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", ARCHS)
def test_64_bit_atomics(arch):
    n = 1 << 20
    x = torch.randn(n, device="cuda", dtype=torch.float64)
    keys = torch.randint(0, 64, (n,), device="cuda", dtype=torch.int64)
    total = torch.zeros(1, device="cuda", dtype=torch.float64)
    counts = torch.zeros(64, device="cuda", dtype=torch.int64)
    _wide_atomics[(n // 256,)](x, keys, total, counts, BLOCK=256, arch=arch)
    assert abs(total.item() - x.sum().item()) < 1e-9 * n
    assert torch.equal(counts, torch.bincount(keys, minlength=64) << 33)
