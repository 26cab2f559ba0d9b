"""Gathers and top-k on the GPU: the kernels ``tests/lang/test_gather.py`` runs on both interpreters, launched
on fresh random values with NaN-poisoned outputs, on both code paths (sm_80's and, on a Hopper GPU,
sm_90a's), against numpy (exact picks and orders) or float64 (the router's weights)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gpu.test_lang_shapes import _arches
from tests.lang.test_gather import gather_types, gathers, gathers_reference, routing, topks, topks_reference
from tilec.runtime import has_device, no_device_reason

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")
RNG = np.random.default_rng()


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
@pytest.mark.parametrize("m, n, k", [(16, 64, 8), (32, 32, 64), (8, 128, 128)])
def test_gathers_on_the_gpu(arch, m, n, k):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    ir = RNG.integers(0, n, (m, k)).astype(np.int32)
    ic = RNG.integers(0, m, (k, n)).astype(np.int16)
    outs = [np.full((m, k), np.nan, np.float32), np.full((k, n), np.nan, np.float32)]
    gathers[(1,)](x, ir, ic, *outs, M=m, N=n, K=k, arch=arch)
    for got, want in zip(outs, gathers_reference(x, ir, ic)):
        np.testing.assert_array_equal(got, want)
    table = RNG.standard_normal(64).astype(np.float16)
    picks = RNG.integers(0, 80, 256).astype(np.uint8)
    out = np.full(256, np.nan, np.float16)
    gather_types[(1,)](table, picks, out, N=64, arch=arch)
    np.testing.assert_array_equal(out, np.where(picks < 64, table[np.minimum(picks, 63)], np.float16(0)))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
@pytest.mark.parametrize("m, n, k", [(16, 64, 8), (8, 32, 1), (4, 128, 128), (8, 256, 32)])
def test_topk_on_the_gpu(arch, m, n, k):
    x = RNG.standard_normal((m, n)).astype(np.float32)
    outs = [np.full(d, np.nan, np.float32) for d in ((m, k), (m, k), (k,), (m, 2 * n))]
    topks[(1,)](x, *outs, M=m, N=n, K=k, arch=arch)
    for got, want in zip(outs, topks_reference(x, k)):
        np.testing.assert_array_equal(got, want.astype(np.float32))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
def test_the_routing_examples_on_the_gpu(arch):
    n_bytes, group = 100_003, 64
    packed = RNG.integers(0, 256, n_bytes).astype(np.uint8)
    absmax = RNG.uniform(0.5, 2, -(-2 * n_bytes // group)).astype(np.float32)
    out = np.full(2 * n_bytes, np.nan, np.float32)
    routing.nf4_dequant[(-(-n_bytes // 1024),)](packed, absmax, routing.NF4, out, n_bytes, BLOCK=1024, GROUP=group,
                                                arch=arch)
    np.testing.assert_array_equal(out, routing.nf4_reference(packed, absmax, group))
    for e, k in ((64, 8), (128, 4), (8, 2)):
        tokens = 1000
        logits = RNG.standard_normal((tokens, e)).astype(np.float32) * 3
        w, ids = np.full((tokens, k), np.nan, np.float32), np.full((tokens, k), -1, np.int32)
        routing.topk_route[(-(-tokens // 16),)](logits, w, ids, tokens, E=e, K=k, BT=16, arch=arch)
        want_w, want_ids = routing.route_reference(logits, k)
        np.testing.assert_array_equal(ids, want_ids)
        np.testing.assert_allclose(w, want_w, rtol=2 * e * 2.0**-23 + 1e-6, atol=1e-7)


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
def test_inline_asm_on_the_gpu(arch):
    from tests.lang.test_gather import inline_asm, inline_asm_outputs

    x = (RNG.standard_normal(256) * 10).astype(np.float32)
    outs = inline_asm_outputs(256)
    inline_asm[(1,)](x, *outs, N=256, arch=arch)
    np.testing.assert_array_equal(outs[0], np.rint(x))
    np.testing.assert_array_equal(outs[1], x.view(np.int32))
    np.testing.assert_array_equal(outs[2], x + np.float32(2.5))


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("arch", _arches())
def test_group_scales_on_the_gpu(arch):
    from tests.lang.test_gather import group_scales

    n, block, group, shift = 100_003, 2048, 64, 100
    x = RNG.standard_normal(n).astype(np.float32)
    s = RNG.standard_normal(-(-n // group) + 1).astype(np.float32)
    o = np.full(n, np.nan, np.float32)
    group_scales[(-(-n // block),)](x, s, o, n, shift, BLOCK=block, GROUP=group, arch=arch)
    offs = np.arange(n)
    shifted = np.fix((offs - shift) / group).astype(np.int64)
    want = x * (s[offs // group] + np.where(shifted >= 0, s[np.maximum(shifted, 0)], 0))
    np.testing.assert_array_equal(o, want.astype(np.float32))
