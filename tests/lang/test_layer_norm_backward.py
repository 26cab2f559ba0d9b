"""Layer norm's backward pass as Triton's tutorial writes it (examples/lang/layer_norm.py): dx per row,
dw and db through rows of partial sums each guarded by a spin lock on ``tl.atomic_cas`` and a count
that tells the first block to write and the later ones to add, then a column-slice reduction.

Run on the tile-level interpreter and lane by lane after ``tile-distribute``, the partial sums
poisoned with NaN (the first block at a row must write it, not add to it), against float64.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SPEC = importlib.util.spec_from_file_location(
    "layer_norm_example", Path(__file__).resolve().parents[2] / "examples" / "lang" / "layer_norm.py")
example = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(example)

RNG = np.random.default_rng(20261129)


@pytest.mark.parametrize("after", (None, "tile-distribute"))
@pytest.mark.parametrize("rows, cols, group", [(24, 300, 4), (9, 64, 16)])
def test_layer_norm_backward(after, rows, cols, group):
    x = (RNG.standard_normal((rows, cols)) * 3 + 1).astype(np.float32)
    dy, w = RNG.standard_normal((rows, cols)).astype(np.float32), RNG.standard_normal(cols).astype(np.float32)
    mean, rstd = example.statistics(x)
    n = 1 << (cols - 1).bit_length()
    dx = np.full_like(x, np.nan)
    dw, db = (np.full((group, cols), np.nan, np.float32) for _ in range(2))
    count, lock = np.zeros(group, np.int32), np.zeros(group, np.int32)
    example.layer_norm_backward_dx.interpret(dx, dy, dw, db, count, lock, x, w, mean, rstd, grid=(rows,),
                                             GROUP=group, N=n, after=after)
    assert (lock == 0).all() and (count == (np.arange(group) < rows)).all()
    fdw, fdb = np.full_like(w, np.nan), np.full_like(w, np.nan)
    example.layer_norm_backward_dwdb.interpret(dw[:min(group, rows)], db[:min(group, rows)], fdw, fdb,
                                               grid=(-(-cols // 64),), BM=32, BN=64, after=after)
    for got, ref in zip((dx, fdw, fdb), example.layer_norm_backward_reference(dy, x, w)):
        assert np.abs(got - ref).max() / np.abs(ref).max() < 1e-5


def test_compiles_for_both_targets():
    x = np.zeros((8, 300), np.float32)
    i32 = np.zeros(4, np.int32)
    for arch in ("sm_80", "sm_90"):
        ptx = example.layer_norm_backward_dx.compile(x, x, x, x, i32, i32, x, x[0], x[:, 0], x[:, 0], GROUP=4, N=512,
                                                     arch=arch).asm["ptx"]
        assert "atom.acq_rel.gpu.global.cas.b32" in ptx and "atom.acq_rel.gpu.global.exch.b32" in ptx
        example.layer_norm_backward_dwdb.compile(x, x, x[0], x[0], BM=32, BN=64, arch=arch)
