"""tile.wgmma in the tile interpreter: examples/kernels/wgmma_f16.mlir (and a bf16 twin) against float64."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tilec.interp.errors import TileInterpreterError
from tilec.interp.launch import run_text

KERNEL = (Path(__file__).resolve().parents[2] / "examples" / "kernels" / "wgmma_f16.mlir").read_text()


def test_each_warp_gets_its_16_rows_of_its_warpgroups_band():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((64, 128)).astype(np.float16)
    c = np.full((128, 128), np.nan, np.float32)
    run_text(KERNEL, "wgmma_f16", a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c - ref).max() / np.abs(ref).max() < 1e-6


def test_a_band_off_a_multiple_of_64_is_an_error():
    text = KERNEL.replace("%row = arith.muli %g, %c64 : index", "%row = arith.muli %g, %c16 : index")
    a = np.ones((128, 64), np.float16)
    b = np.ones((64, 128), np.float16)
    c = np.zeros((128, 128), np.float32)
    with pytest.raises(TileInterpreterError, match="must be a multiple of 64"):
        run_text(text, "wgmma_f16", a, b, c)
