"""Suite-wide checks.

Every PTX text the test suite produces in this process (all of it passes
through ``tilec.codegen.ptx.ptx_from_llvm_ir``) is recorded, and at the end
of the session each one is assembled by ptxas (but for those a test already had ptxas
assemble for that target): for sm_90, and also for sm_80 when it was emitted for sm_80 (PTX for sm_90a, whose wgmma only sm_90a has, for sm_90a). A PTX that ptxas rejects fails the run with
ptxas's message, so no test can produce PTX that only looks right.

``TILEC_VERIFY_EACH=1`` is set for the whole run (see below).
"""

from __future__ import annotations

import importlib
import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from tilec.codegen.ptxas import PtxasError, assemble, find_ptxas

# tilec.compile verifies the IR once, after the whole pipeline; the tests verify it after
# every pass (also in the tools and scripts they start), so that a pass that breaks the IR
# fails the test that ran it, naming the pass.
os.environ.setdefault("TILEC_VERIFY_EACH", "1")

_produced: dict[str, str] = {}  # PTX text -> the nodeid of the test that made it first
_assembled: set[tuple[str, str]] = set()  # (PTX text, arch) that a test already had ptxas assemble
_current_test = ["(collection)"]
_TARGET = re.compile(r"^\s*\.target\s+(sm_\d+a?)", re.MULTILINE)


def _recording(original):
    def wrapper(*args, **kwargs):
        text = original(*args, **kwargs)
        _produced.setdefault(text, _current_test[0])
        return text

    wrapper.__wrapped__ = original
    return wrapper


def pytest_collection_modifyitems(session, config, items):
    """The lit suite first. It is one test that takes about a third of the suite's time (a tile-opt
    process per RUN line): under pytest-xdist one worker then starts it at once while the other
    runs the rest, instead of running it alone at the end when it was collected late."""
    items.sort(key=lambda item: not (item.path.name == "test_lit.py" and item.name == "test_lit"))


def _remembering(original):
    """``ptxas``'s runner, noting each (text, arch) it assembled: the end of the session need not
    assemble those again."""

    def wrapper(ptx_text, arch, *args, **kwargs):
        result = original(ptx_text, arch, *args, **kwargs)
        _assembled.add((ptx_text, arch))
        return result

    wrapper.__wrapped__ = original
    return wrapper


def pytest_configure(config):
    # the package re-exports a function named ``ptx``, so take the module itself
    ptx_module = importlib.import_module("tilec.codegen.ptx")
    ptx_module.ptx_from_llvm_ir = _recording(ptx_module.ptx_from_llvm_ir)
    ptxas_module = importlib.import_module("tilec.codegen.ptxas")
    ptxas_module._run_ptxas = _remembering(ptxas_module._run_ptxas)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    _current_test[0] = item.nodeid
    return (yield)


def _assemble_all(ptxas: str) -> list[str]:
    jobs = []
    for text, test in _produced.items():
        target = (m := _TARGET.search(text)) and m.group(1)
        archs = ["sm_90a"] if target == "sm_90a" else ["sm_90"] + (["sm_80"] if target == "sm_80" else [])
        jobs += [(text, arch, test) for arch in archs if (text, arch) not in _assembled]

    def run(job):
        text, arch, test = job
        try:
            assemble(text, arch, ptxas=ptxas)
        except PtxasError as err:
            return f"{test}: ptxas -arch={arch} rejected its PTX:\n{err}"
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        return [msg for msg in pool.map(run, jobs) if msg]


def pytest_sessionfinish(session, exitstatus):
    if not _produced:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    ptxas = find_ptxas()
    if ptxas is None:
        if reporter:
            reporter.write_line(f"ptxas not found: {len(_produced)} PTX texts were not assembled", yellow=True)
        return
    failures = _assemble_all(str(ptxas))
    if reporter:
        reporter.write_line("")
        reporter.write_line(f"ptxas assembled all {len(_produced)} PTX texts the suite produced" if not failures else "")
        for msg in failures:
            reporter.write_line(msg, red=True)
    if failures:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
