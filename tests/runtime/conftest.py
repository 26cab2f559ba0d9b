"""Fixtures for the runtime tests (kernels live in runtime_kernels.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Make the helper module importable whatever pytest's import mode is.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from runtime_kernels import REPO_ROOT  # noqa: E402

from tilec.runtime import driver  # noqa: E402


@pytest.fixture(autouse=True)
def _skip_gpu_tests_without_device(request):
    """Skip tests marked ``gpu`` with the reason when there is no device."""
    if request.node.get_closest_marker("gpu") is not None and not driver.has_device():
        pytest.skip(f"no CUDA device: {driver.no_device_reason()}")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache folder per test, exported as ``TILEC_CACHE_DIR``.

    Autouse, so no runtime test reads or writes the user's ~/.cache/tilec.
    """
    d = tmp_path / "tilec-cache"
    monkeypatch.setenv("TILEC_CACHE_DIR", str(d))
    return d


@pytest.fixture
def subprocess_env(cache_dir):
    """Environment for child Python processes: repo importable, same cache dir."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["TILEC_CACHE_DIR"] = str(cache_dir)
    return env


@pytest.fixture
def python_exe():
    return sys.executable
