"""examples/lang/flash_attention.py: flash attention as a Triton user writes it (block tiles, no warp
ids), on both interpreters against float64, fresh random inputs, outputs poisoned with NaN: GQA, Sq
!= Sk, ragged ends, causal; for sm_80 (mma.sync) and sm_90a (the block's warpgroup MMAs). The PTX
shows the general mechanisms at work: the chained dots keep S and P in registers (no shared-memory
conversion), and for sm_90a both dots are wgmmas."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lang" / "flash_attention.py"
_spec = importlib.util.spec_from_file_location("lang_example_flash_attention", EXAMPLE)
fa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fa)

RNG = np.random.default_rng(20261129)


@pytest.mark.parametrize("arch, after", [(None, None), (None, "tile-distribute"), ("sm_90a", "tile-stage"),
                                         ("sm_90a", "tile-distribute")])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention(arch, after, causal):
    q = RNG.standard_normal((2, 2, 70, 64)).astype(np.float16)
    k, v = (RNG.standard_normal((2, 1, 97, 64)).astype(np.float16) for _ in range(2))
    o = np.full_like(q, np.nan)
    kern, _ = fa.kernel_for(64, arch)
    kern.interpret(q, k, v, o, 0.125, grid=(2, 2, 2), BM=64, BN=64, D=64, GROUP=2, CAUSAL=causal, arch=arch,
                   after=after)
    ref = fa.reference(q, k, v, causal, 0.125)
    assert np.abs(o - ref).max() / np.abs(ref).max() < 2e-3


def test_large_scores_stay_finite():
    """Scores x30 (softmax stability): the running maximum keeps exp2 in range."""
    q = (RNG.standard_normal((1, 1, 64, 64)) * 30).astype(np.float16)
    k, v = (RNG.standard_normal((1, 1, 128, 64)).astype(np.float16) for _ in range(2))
    o = np.full_like(q, np.nan)
    fa.flash_attention.interpret(q, k, v, o, 0.125, grid=(1, 1, 1), BM=64, BN=64, D=64, num_warps=4,
                                 after="tile-distribute")
    ref = fa.reference(q, k, v, False, 0.125)
    assert np.abs(o - ref).max() / np.abs(ref).max() < 2e-3


@pytest.mark.parametrize("d", [64, 128])
def test_the_chain_stays_in_registers(d):
    x = np.zeros((1, 1, 256, d), np.float16)
    kern, cfg = fa.kernel_for(d, None)
    ptx = kern.compile(x, x, x, x, 1.0, D=d, arch="sm_80", **cfg).asm["ptx"]
    assert "mma.sync" in ptx and "st.shared" not in ptx and "ldmatrix" in ptx  # K, V staged; S, P in registers
    kern, cfg = fa.kernel_for(d, "sm_90a")
    ptx = kern.compile(x, x, x, x, 1.0, D=d, arch="sm_90a", **cfg).asm["ptx"]
    assert "wgmma.mma_async" in ptx and "mma.sync" not in ptx and "st.shared" not in ptx


@pytest.mark.parametrize("d", [48, 80, 96])
@pytest.mark.parametrize("arch", [None, "sm_90a"])
def test_head_dimensions_whose_rows_no_thread_split_covers(d, arch):
    """96 f16 columns are 12 vectors of 16 bytes, which no power of two of threads divides: the block's
    copy leaves some threads idle rather than leaving K and V unstaged (808 bytes of spills on sm_80
    before: session 29's hunt)."""
    q = RNG.standard_normal((1, 2, 70, d)).astype(np.float16)
    k, v = (RNG.standard_normal((1, 1, 97, d)).astype(np.float16) for _ in range(2))
    o = np.full_like(q, np.nan)
    kern = fa.flash_attention.with_options(num_warps=4, bulk=arch == "sm_90a")
    kern.interpret(q, k, v, o, 0.1, grid=(2, 1, 2), BM=64, BN=64, D=d, GROUP=2, CAUSAL=True, arch=arch,
                   after="tile-distribute")
    ref = fa.reference(q, k, v, True, 0.1)
    assert np.abs(o - ref).max() / np.abs(ref).max() < 2e-3
    if arch is None:
        ptx = kern.compile(q, k, v, o, 0.1, BM=64, BN=64, D=d, arch="sm_80").asm["ptx"]
        assert "cp.async" in ptx and "ldmatrix" in ptx


@pytest.mark.parametrize("warps, bm, d, producer", [(8, 64, 64, False), (16, 128, 128, False), (8, 64, 128, True)])
def test_a_chain_whose_rows_do_not_fill_the_warpgroups(warps, bm, d, producer):
    """More warpgroups than S has 64-row bands: a wgmma split along N would leave each warpgroup part of
    each row of P, which P V reads whole (592 KB of conversion scratch, refused, before session 30). A
    chain takes warpgroups along M only or stays mma.sync as a whole, with rows in registers. With a
    producer warpgroup the mma.syncs are split over the consumers (the launch's own warps; each warp
    held all of S and O before: 616 registers, refused)."""
    kern = fa.flash_attention.with_options(num_warps=warps, num_stages=3, bulk=True, producer=producer)
    x = np.zeros((1, 1, 256, d), np.float16)
    ptx = kern.compile(x, x, x, x, 1.0, BM=bm, BN=128, D=d, arch="sm_90a").asm["ptx"]
    assert "mma.sync" in ptx and "wgmma.mma_async" not in ptx and "st.shared" not in ptx
    q = RNG.standard_normal((1, 1, bm + 5, d)).astype(np.float16)
    k, v = (RNG.standard_normal((1, 1, 150, d)).astype(np.float16) for _ in range(2))
    o = np.full_like(q, np.nan)
    kern.interpret(q, k, v, o, 0.1, grid=(2, 1, 1), BM=bm, BN=128, D=d, CAUSAL=True, arch="sm_90a",
                   after="tile-distribute")
    ref = fa.reference(q, k, v, True, 0.1)
    assert np.abs(o - ref).max() / np.abs(ref).max() < 2e-3
