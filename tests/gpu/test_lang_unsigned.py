"""Unsigned integers and bool arrays in tilec.lang on the GPU: torch's uint8 / uint32 / bool tensors,
fresh random inputs, outputs poisoned first, exact integer or float64 references. The W4A16 layer of
examples/lang/int4.py (4-bit weights in bytes) at ragged shapes on both targets, a uint32 hash carried
through a loop, unsigned reductions and atomics, and bool masks read and written."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import tilec.lang as tl
from tilec.runtime import has_device, no_device_reason

torch = pytest.importorskip("torch", reason="the GPU tests of tilec.lang launch on torch tensors")
gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

_spec = importlib.util.spec_from_file_location(
    "lang_example_int4", Path(__file__).resolve().parents[2] / "examples" / "lang" / "int4.py")
ex = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ex)

RNG = np.random.default_rng(20261129)


def arch_of_the_gpu_and_sm80():
    return [None, "sm_80"]  # None: the GPU's own (sm_90a on a Hopper)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", arch_of_the_gpu_and_sm80(), ids=lambda a: a or "native")
@pytest.mark.parametrize("shape", [(1000, 1000, 1024), (64, 4096, 4096), (17, 200, 96)], ids=str)
def test_w4a16_matmul(shape, arch):
    m, n, k = shape
    q = torch.randint(0, 16, (k, n), device="cuda", dtype=torch.uint8)
    w = q[: k // 2] | (q[k // 2:] << 4)
    scale = torch.rand(n, device="cuda") * 0.04 + 0.01
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid, args, consts = ex.matmul_call(a, w, scale, c, BM=64, BN=64, BK=32)
    ex.matmul_w4a16[grid](*args, arch=arch, **consts)
    ref = a.double() @ ((q.double() - 8) * scale.double())
    assert not c.isnan().any()
    assert ((c.double() - ref).abs().max() / ref.abs().max()).item() < 2e-3


@gpu
@pytest.mark.gpu
def test_dequantize_bytes():
    k, n = 300, 500
    q = torch.randint(0, 16, (k, n), device="cuda", dtype=torch.uint8)
    w = q[: k // 2] | (q[k // 2:] << 4)
    scale = torch.rand(n, device="cuda") + 0.5
    out = torch.full((k, n), float("nan"), device="cuda", dtype=torch.float16)
    ex.dequantize[(-(-(k // 2) // 32), -(-n // 64))](w, scale, out, k // 2, n, BK=32, BN=64)
    assert torch.equal(out, ((q.float() - 8) * scale).half())


@tl.kernel
def hash_rounds(seed_ptr, out_ptr, n, ROUNDS, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    h = tl.load(seed_ptr + offs, mask=offs < n)
    for _ in tl.range(0, ROUNDS):
        h = h ^ (h >> 16)
        h = h * 0x45D9F3B
        h = h ^ (h >> 16)
    tl.store(out_ptr + offs, h // 3 + (h > 0x80000000).to(tl.uint32), mask=offs < n)


def _hash_reference(seed: np.ndarray, rounds: int) -> list[int]:
    out = []
    for h in (int(v) for v in seed):
        for _ in range(rounds):
            h ^= h >> 16
            h = (h * 0x45D9F3B) % (1 << 32)
            h ^= h >> 16
        out.append(h // 3 + (h > 0x80000000))
    return out


@gpu
@pytest.mark.gpu
def test_uint32_hash_through_a_loop():
    n = 5000
    seed = RNG.integers(0, 2**32, n, dtype=np.uint32)
    x = torch.from_numpy(seed).cuda()
    out = torch.from_numpy(np.full(n, 0xDEADBEEF, np.uint32)).cuda()
    hash_rounds[(-(-n // 256),)](x, out, n, 4, BLOCK=256)
    assert out.cpu().numpy().tolist() == _hash_reference(seed, 4)


@tl.kernel
def unsigned_rows(x_ptr, top_ptr, total_ptr, arg_ptr, C: tl.constexpr):
    r = tl.program_id(0)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + r * C + cols)  # uint8
    tl.store(top_ptr + r, tl.max(x))
    tl.store(arg_ptr + r, tl.argmax(x, axis=0))
    tl.atomic_max(total_ptr, tl.sum(x))  # a uint32: atom.max.u32


@gpu
@pytest.mark.gpu
def test_unsigned_reductions_and_atomics():
    rows, cols = 300, 256
    x = RNG.integers(0, 256, (rows, cols), dtype=np.uint8)
    top = torch.zeros(rows, device="cuda", dtype=torch.uint8)
    arg = torch.full((rows,), -1, device="cuda", dtype=torch.int32)
    total = torch.zeros(1, device="cuda", dtype=torch.uint32)
    unsigned_rows[(rows,)](torch.from_numpy(x).cuda(), top, total, arg, C=cols)
    assert top.cpu().numpy().tolist() == x.max(1).tolist()
    assert arg.cpu().numpy().tolist() == x.argmax(1).tolist()
    assert int(total.cpu().numpy()[0]) == int(x.astype(np.int64).sum(1).max())


@tl.kernel
def masked_copy(x_ptr, keep_ptr, y_ptr, positive_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside, other=0.0)
    keep = tl.load(keep_ptr + offs, mask=inside, other=False)
    tl.store(y_ptr + offs, tl.where(keep, x, -x), mask=inside)
    tl.store(positive_ptr + offs, x > 0, mask=inside)


@gpu
@pytest.mark.gpu
def test_bool_tensors_are_masks():
    n = 10_000
    x = torch.randn(n, device="cuda")
    keep = torch.rand(n, device="cuda") < 0.3
    y = torch.full((n,), float("nan"), device="cuda")
    positive = torch.zeros(n, device="cuda", dtype=torch.uint8).view(torch.bool)
    positive.view(torch.uint8).fill_(7)  # poisoned: neither 0 nor 1
    masked_copy[(-(-n // 512),)](x, keep, y, positive, n, BLOCK=512)
    assert torch.equal(y, torch.where(keep, x, -x))
    assert torch.equal(positive.view(torch.uint8), (x > 0).to(torch.uint8))


@tl.kernel
def numbers_into_arrays(u8_ptr, u32_ptr, u64_ptr, flags_ptr, seed, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(u8_ptr + i, 200)
    tl.store(u32_ptr + i, 0xFFFFFFFF)
    tl.atomic_or(u32_ptr + N, 0x80000000)
    tl.atomic_xchg(u64_ptr + i, 1 << 63)
    tl.store(flags_ptr + i, True)
    tl.store(flags_ptr + N + i, False)
    tl.store(u64_ptr + N + i, seed - i.to(tl.uint64))


@gpu
@pytest.mark.gpu
def test_unsigned_numbers_and_a_uint64_argument_on_the_gpu():
    """Python ints in unsigned arrays' ranges, bools, and a uint64 argument past 2^63 (numpy host arrays)."""
    n = 64
    u8, u32 = np.full(n, 7, np.uint8), np.full(n + 1, 7, np.uint32)
    u64, flags = np.full(2 * n, 7, np.uint64), np.zeros(2 * n, np.bool_)
    seed = 0xFEEDFACECAFEBEEF
    numbers_into_arrays[(1,)](u8, u32, u64, flags, seed, N=n)
    assert u8.tolist() == [200] * n and u32.tolist() == [0xFFFFFFFF] * n + [0x80000007]
    assert u64.tolist() == [1 << 63] * n + [seed - k for k in range(n)]
    assert flags.tolist() == [True] * n + [False] * n
