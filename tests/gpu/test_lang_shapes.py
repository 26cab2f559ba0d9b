"""Reshapes and joins on the GPU: the kernels ``tests/lang/test_shapes.py`` runs on both interpreters,
launched on fresh random values with NaN-poisoned outputs, on both code paths (sm_80's and, on a Hopper
GPU, sm_90a's), against numpy (exact moves) or float64 (products)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from tests.lang.test_shapes import (_sorts_outputs, group_quantize, joined_forms, joined_reference, quantize, shapes,
                                    shapes_reference, sorts, three_axes, w4_joined, w4_rows_interleaved)
from tilec.runtime import has_device, no_device_reason

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")
RNG = np.random.default_rng()

_spec = importlib.util.spec_from_file_location(
    "lang_example_int4", Path(__file__).resolve().parents[2] / "examples" / "lang" / "int4.py")
int4 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(int4)


def _arches() -> list[str]:
    if not has_device():
        return ["sm_80"]
    from tilec.api import target_arch

    return ["sm_80", "sm_90a"] if target_arch(None) in ("sm_90", "sm_90a") else ["sm_80"]


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
def test_moves_are_exact_on_the_gpu(arch):
    m, n = 16, 64
    x = RNG.standard_normal((m, n)).astype(np.float32)
    dims = [(2 * m, n // 2), (m * n,), (m, 2 * n), (2 * m, n), (m, 2 * n), (2 * n,), (2 * n,)]
    outs = [np.full(d, np.nan, np.float32) for d in dims]
    shapes[(1,)](x, *outs, M=m, N=n, arch=arch)
    for got, ref in zip(outs, shapes_reference(x)):
        np.testing.assert_array_equal(got, ref.astype(np.float32))
    dims = [(m, 2 * n), (2 * m, n), (2 * m, n), (n, 2 * m), (m, n), (m, n)]
    outs = [np.full(d, np.nan, np.float32) for d in dims]
    joined_forms[(1,)](x, *outs, M=m, N=n, arch=arch)
    for got, ref in zip(outs, joined_reference(x)):
        np.testing.assert_array_equal(got, ref)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
def test_group_quantize_on_the_gpu(arch):
    n, block, group = 100_003, 256, 32
    x = RNG.standard_normal(n).astype(np.float32) * RNG.uniform(0.1, 10, n).astype(np.float32)
    q, s = np.full(n, 99, np.int8), np.full(-(-n // group), np.nan, np.float32)
    group_quantize[(-(-n // block),)](x, q, s, n, BLOCK=block, GROUP=group, arch=arch)
    want, scale = quantize.reference(x, group)
    np.testing.assert_allclose(s, scale, rtol=1e-6)
    assert np.abs(q.astype(np.int32) - want).max() <= 1


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
@pytest.mark.parametrize("kernel", [w4_rows_interleaved, w4_joined], ids=["interleave", "join"])
def test_four_bit_rows_unpacked_on_the_gpu(arch, kernel):
    m, n, k = 300, 200, 520  # ragged in every dimension
    q = RNG.integers(0, 16, (k, n), dtype=np.uint8)
    a = RNG.standard_normal((m, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    kernel[(-(-m // 64), -(-n // 64))](a, int4.pack_rows(q), c, m, n, k, BM=64, BN=64, BK=32, arch=arch)
    ref = a.astype(np.float64) @ (q.astype(np.float64) - 8)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
def test_the_example_on_gptq_packing(arch):
    """examples/lang/int4.py's kernel for GPTQ's packing (bytes staged by cp.async, the nibbles joined), scaled."""
    torch = pytest.importorskip("torch")
    m, n, k = 257, 384, 1024
    q = torch.randint(0, 16, (k, n), device="cuda", dtype=torch.uint8)
    scale = torch.rand(n, device="cuda") * 0.04 + 0.01
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    grid, args, consts = int4.matmul_rows_call(a, int4.pack_rows(q), scale, c, BM=64, BN=128, BK=128)
    int4.matmul_w4a16_rows.with_options(num_warps=8)[grid](*args, **consts, arch=arch)
    ref = a.double() @ ((q.double() - 8) * scale.double())
    assert ((c.double() - ref).abs().max() / ref.abs().max()).item() < 2e-3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
@pytest.mark.parametrize("m, n", [(16, 64), (8, 256)])
def test_sort_flip_and_three_axes_on_the_gpu(arch, m, n):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    ids = RNG.integers(-(2 ** 31), 2 ** 31 - 1, n, dtype=np.int64).astype(np.int32)
    outs = _sorts_outputs(m, n, ids)
    sorts[(1,)](x, ids, *outs, M=m, N=n, arch=arch)
    want = [np.sort(x, 1), -np.sort(-x, 1), x[:, ::-1], np.sort(x, 0), np.sort(x[0])[::-1], np.sort(ids)]
    for got, ref in zip(outs, want):
        np.testing.assert_array_equal(got, ref)
    np.testing.assert_allclose(outs[6], np.sort(x.sum(1)), rtol=1e-5, atol=1e-5)
    outs = [np.full(d, np.nan, np.float32) for d in [(m, n // 2), (m // 2, n), (m // 2, n), (m // 2, 2 * n)]]
    three_axes[(1,)](x, *outs, M=m, N=n, arch=arch)
    p, r, h = x.reshape(m, n // 2, 2), x.reshape(m // 2, 2, n), x.reshape(2, m // 2, n)
    for got, ref in zip(outs, [p[..., 0] - p[..., 1], r[:, 0] * 2 + r[:, 1], h[0] - h[1],
                               h.transpose(1, 0, 2).reshape(m // 2, 2 * n)]):
        np.testing.assert_array_equal(got, ref)
