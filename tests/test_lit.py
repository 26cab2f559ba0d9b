"""Run the lit/FileCheck suite (tests/lit, every subfolder) as one pytest test.

The test fails when any lit test fails; the assertion message is lit's report
of the failing tests (their RUN lines, output and FileCheck's complaint).
To run a part of the suite, use lit's own environment variable, e.g.
``LIT_OPTS='--filter=dialects/tile' pytest tests/test_lit.py``, or run lit
itself: ``lit -v tests/lit/tools`` (lit 23 has no ``python -m lit``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

LIT_DIR = Path(__file__).resolve().parent / "lit"

# A wall-clock limit on the whole suite: lit's per-test timeout needs psutil,
# which is not a dependency (see tests/lit/lit.cfg).
SUITE_TIMEOUT_S = float(os.environ.get("TILEC_LIT_TIMEOUT", "900"))

# lit 23 has no ``python -m lit``; run its entry point with this interpreter.
_LIT_MAIN = "import sys; from lit.main import main; sys.argv[0] = 'lit'; sys.exit(main())"


def run_lit(*paths: Path, exec_root: Path, extra: tuple[str, ...] = ()) -> tuple[int | None, str]:
    """Run lit on ``paths``; return (exit status, or None on timeout; output)."""
    cmd = [
        sys.executable,
        "-c",
        _LIT_MAIN,
        "-sv",  # succinct progress, full output of the failures only
        f"--param=python={sys.executable}",
        f"--param=exec_root={exec_root}",
        *extra,
        *map(str, paths),
    ]
    # A session of its own, so that a timeout kills lit *and* the tests it runs.
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=LIT_DIR.parent.parent,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=SUITE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out
    return proc.returncode, out


def test_lit(tmp_path: Path) -> None:
    status, report = run_lit(LIT_DIR, exec_root=tmp_path)
    if status is None:
        pytest.fail(f"lit did not finish within {SUITE_TIMEOUT_S:.0f} s:\n{report}", pytrace=False)
    if status != 0:
        pytest.fail(f"lit failed (exit status {status}):\n{report}", pytrace=False)
    found = re.search(r"Total Discovered Tests: (\d+)", report)
    if not found or int(found.group(1)) == 0:
        pytest.fail(f"lit found no tests:\n{report}", pytrace=False)
