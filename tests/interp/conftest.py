"""Fixtures for the interpreter tests: fresh random inputs with a reported seed.

Every test that takes ``rng`` gets a generator seeded from fresh entropy (or
from ``TILEC_SEED`` to replay a failure); the seed is printed, so pytest shows
it with any failure, and ``interp_util.assert_close`` puts it in the message.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import numpy as np
import pytest

# Make the helper module importable whatever pytest's import mode is.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def seed() -> int:
    value = int(os.environ["TILEC_SEED"]) if "TILEC_SEED" in os.environ else secrets.randbits(32)
    print(f"random seed: {value} (replay with TILEC_SEED={value})")
    return value


class SeededRng:
    """A ``np.random.Generator`` that remembers its ``seed`` (for failure messages)."""

    def __init__(self, seed: int):
        self.seed = seed
        self._gen = np.random.default_rng(seed)

    def __getattr__(self, name):
        return getattr(self._gen, name)


@pytest.fixture
def rng(seed) -> SeededRng:
    return SeededRng(seed)
