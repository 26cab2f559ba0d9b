"""Shared by the GPU tests: cubins go to a fresh folder per test, never the user's ~/.cache/tilec
(a module may override ``cache_dir`` with a wider scope, as test_gemm.py does)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "tilec-cache"
    monkeypatch.setenv("TILEC_CACHE_DIR", str(d))
    return d
