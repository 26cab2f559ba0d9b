"""The warp-level GEMM (examples/levels/gemm_warp_level.mlir) computes relu(A @ B + bias) on any shape.

That file is the contract between tile-tiling (which produces this form) and
the passes after it; here the interpreter pins down its meaning.
"""

from pathlib import Path

import numpy as np
import pytest

from tilec.interp import run_text

KERNEL = (Path(__file__).resolve().parents[2] / "examples" / "levels" / "gemm_warp_level.mlir").read_text()


@pytest.mark.parametrize("m,n,k", [(64, 64, 32), (100, 70, 45), (17, 33, 65), (1, 1, 1), (200, 130, 70)])
def test_warp_level_gemm_matches_float64(m, n, k):
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    c = np.full((m, n), np.nan, np.float16)
    blocks = -(-m // 64) * -(-n // 64)
    run_text(KERNEL, "gemm", a, b, c, bias, grid=(blocks, 1, 1))
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    err = np.abs(c.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-12)
    assert not np.isnan(c).any() and err < 2e-3, f"relative error {err}"
