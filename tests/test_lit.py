"""Run the lit/FileCheck suite (tests/lit, every subfolder) as one pytest test.

The test fails when any lit test fails; the assertion message is lit's report
of the failing tests (their RUN lines, output and FileCheck's complaint).
To run a part of the suite, use lit's own environment variable, e.g.
``LIT_OPTS='--filter=dialects/tile' pytest tests/test_lit.py``, or run lit
itself: ``lit -v tests/lit/tools`` (lit 23 has no ``python -m lit``).

The RUN lines' ``tile-opt`` and ``filecheck`` run as forks of one process that imported them
(``tests/lit/fork_server.py``), started here around the lit run: a fresh Python for each of the
suite's 450 tool calls spent most of its time importing. Without the server (it did not start)
the tools start as ``python -m`` processes, as under plain ``lit``.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

LIT_DIR = Path(__file__).resolve().parent / "lit"
REPO = LIT_DIR.parent.parent

# A wall-clock limit on the whole suite: lit's per-test timeout needs psutil,
# which is not a dependency (see tests/lit/lit.cfg).
SUITE_TIMEOUT_S = float(os.environ.get("TILEC_LIT_TIMEOUT", "900"))

# lit 23 has no ``python -m lit``; run its entry point with this interpreter.
_LIT_MAIN = "import sys; from lit.main import main; sys.argv[0] = 'lit'; sys.exit(main())"


@contextlib.contextmanager
def fork_server(folder: Path) -> Iterator[dict[str, str]]:
    """``tests/lit/fork_server.py`` listening in ``folder``: the environment that sends lit's tools
    to it (empty when it did not start within a minute)."""
    socket_path = folder / "tools.sock"
    env = dict(os.environ, PYTHONNOUSERSITE="1",
               PYTHONPATH=os.pathsep.join(p for p in [str(REPO), os.environ.get("PYTHONPATH", "")] if p))
    proc = subprocess.Popen([sys.executable, str(LIT_DIR / "fork_server.py"), str(socket_path)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        ready = select.select([proc.stdout], [], [], 60)[0] and proc.stdout.readline().strip() == "ready"
        yield {"TILEC_LIT_FORKSERVER": str(socket_path)} if ready else {}
    finally:
        proc.kill()
        proc.wait()


def run_lit(*paths: Path, exec_root: Path, extra: tuple[str, ...] = (),
            env: dict[str, str] | None = None) -> tuple[int | None, str]:
    """Run lit on ``paths`` (with ``env`` added to the environment); return (exit status, or None on
    timeout; output)."""
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
        cwd=REPO,
        env={**os.environ, **(env or {})},
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
    with fork_server(tmp_path) as env:
        status, report = run_lit(LIT_DIR, exec_root=tmp_path, env=env)
    if status is None:
        pytest.fail(f"lit did not finish within {SUITE_TIMEOUT_S:.0f} s:\n{report}", pytrace=False)
    if status != 0:
        pytest.fail(f"lit failed (exit status {status}):\n{report}", pytrace=False)
    found = re.search(r"Total Discovered Tests: (\d+)", report)
    if not found or int(found.group(1)) == 0:
        pytest.fail(f"lit found no tests:\n{report}", pytrace=False)


def _client(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", str(LIT_DIR / "fork_client.py"), *args], input=stdin,
                          capture_output=True, text=True, env=dict(os.environ, **env), cwd=REPO, timeout=120)


def test_the_fork_server_passes_streams_and_exit_status(tmp_path: Path) -> None:
    """Through the server and without one (an unanswered socket: ``python -m`` of the tool), the same
    output, diagnostics and exit status: tile-opt on a module and on a bad one, filecheck on stdin."""
    bad = tmp_path / "bad.mlir"
    bad.write_text('func.func @f() {\n  %x = "tile.bogus"() : () -> i32\n  func.return\n}\n')
    with fork_server(tmp_path) as served:
        assert served, "the fork server did not start"
        for env in (served, {"TILEC_LIT_FORKSERVER": str(tmp_path / "nobody.sock")}):
            good = _client(env, "tile-opt", stdin="func.func @f() {\n  func.return\n}\n")
            assert good.returncode == 0 and "func.func @f()" in good.stdout and not good.stderr
            wrong = _client(env, "tile-opt", str(bad))
            assert wrong.returncode == 1 and f"{bad}:2:" in wrong.stderr and "tile.bogus" in wrong.stderr
            check = tmp_path / "check.txt"
            check.write_text("// CHECK: hello\n")
            assert _client(env, "filecheck", str(check), stdin="say hello\n").returncode == 0
            missed = _client(env, "filecheck", str(check), stdin="goodbye\n")
            assert missed.returncode == 1 and "hello" in missed.stderr
