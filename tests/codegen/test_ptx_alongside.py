"""compile_module(alongside=...): the work next to LLVM runs with a short thread switch interval."""

from __future__ import annotations

import sys
import threading

import pytest
from xdsl.dialects.builtin import ModuleOp, f32

from tilec.codegen.ptx import HANDOFF_INTERVAL, compile_module, prompt_gil_handoff
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N


def _module() -> ModuleOp:
    module = ModuleOp([])
    func, b = K.kernel(module, "copy", [L.GLOBAL_PTR], max_threads=32)
    slot = L.offset(b, func.body.block.args[0], N.thread_id(b), f32)
    N.vector_store(b, N.vector_load(b, slot, f32), slot)
    K.ret(b)
    return module


def test_alongside_runs_with_a_short_switch_interval_which_is_restored():
    before = sys.getswitchinterval()
    seen = []
    compiled = compile_module(_module(), alongside=lambda: seen.append(sys.getswitchinterval()))
    assert seen == [pytest.approx(min(before, HANDOFF_INTERVAL))]
    assert sys.getswitchinterval() == before
    assert compile_module(_module()).ptx == compiled.ptx


def test_restored_after_a_failure_and_only_by_the_last_user():
    before = sys.getswitchinterval()
    with pytest.raises(ZeroDivisionError):
        compile_module(_module(), alongside=lambda: 1 / 0)
    assert sys.getswitchinterval() == before
    inside, release = threading.Event(), threading.Event()

    def other_user():
        with prompt_gil_handoff():
            inside.set()
            release.wait()

    worker = threading.Thread(target=other_user, daemon=True)
    worker.start()
    try:
        inside.wait()
        with prompt_gil_handoff():
            pass
        assert sys.getswitchinterval() == pytest.approx(min(before, HANDOFF_INTERVAL))  # the other is still inside
    finally:
        release.set()
        worker.join()
    assert sys.getswitchinterval() == before


def test_a_smaller_interval_is_kept():
    before = sys.getswitchinterval()
    sys.setswitchinterval(HANDOFF_INTERVAL / 2)
    smaller = sys.getswitchinterval()
    try:
        with prompt_gil_handoff():
            assert sys.getswitchinterval() == smaller
        assert sys.getswitchinterval() == smaller
    finally:
        sys.setswitchinterval(before)
