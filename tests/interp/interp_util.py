"""Helpers shared by the interpreter tests."""

from __future__ import annotations

import numpy as np

SWIZZLED_64 = "Sw<3,3,3> o 0 o (64,64):(64,1)"


def rel_error(got: np.ndarray, ref: np.ndarray) -> float:
    """max |got - ref| / max |ref|, in float64."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    return float(np.max(np.abs(got - ref))) / scale


def assert_close(got, ref, tol: float, rng, what: str = "result") -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"{what}: shape {got.shape} vs {ref.shape} (seed {rng.seed})"
    assert not np.isnan(got).any(), f"{what}: NaN in the result (seed {rng.seed})"
    err = rel_error(got, ref)
    assert err <= tol, f"{what}: relative error {err:.3g} > {tol:g} (seed {rng.seed})"


def randn(rng, shape, dtype) -> np.ndarray:
    """Standard-normal values in ``dtype`` (never all zeros)."""
    return rng.standard_normal(shape).astype(dtype)
