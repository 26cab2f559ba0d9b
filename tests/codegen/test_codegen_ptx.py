"""PTX emission (`tilec.codegen.ptx`) and ptxas (`tilec.codegen.ptxas`)."""

from __future__ import annotations

import stat

import pytest
from xdsl.dialects.builtin import ModuleOp, f32

from tilec.codegen import ACCEPTED_ARCHS
from tilec.codegen.arch import ARCH_SPECIFIC
from tilec.codegen.ptx import PTX_ISA_VERSION, TranslationError, compile_module, llvm_ir, ptx, ptx_from_llvm_ir
from tilec.codegen.ptxas import (
    KernelResources,
    PtxasError,
    PtxasNotFoundError,
    assemble,
    find_ptxas,
    kernel_resources,
    parse_resources,
)
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering import llvm_build as L
from tilec.passes.lowering import nvvm as N


def _small_kernel(max_threads: int | None = 128) -> ModuleOp:
    module = ModuleOp([])
    func, b = K.kernel(module, "scale", [L.GLOBAL_PTR, f32], max_threads=max_threads)
    g, x = func.body.block.args
    slot = L.offset(b, g, N.thread_id(b), f32)
    value = N.vector_load(b, slot, f32)
    N.vector_store(b, N.fmax(b, value, x), slot)
    K.ret(b)
    return module


@pytest.mark.parametrize("arch", ACCEPTED_ARCHS + ARCH_SPECIFIC)
def test_every_accepted_arch_emits_an_entry_with_launch_bounds(arch, ptxas_path):
    text = ptx(_small_kernel(), arch)
    assert f".target {arch}" in text
    assert f".version {PTX_ISA_VERSION // 10}.{PTX_ISA_VERSION % 10}" in text
    assert ".visible .entry scale(" in text
    assert ".maxntid 128" in text
    assert assemble(text, arch, ptxas=ptxas_path)[:4] == b"\x7fELF"


def test_no_launch_bounds_without_max_threads():
    assert ".maxntid" not in ptx(_small_kernel(max_threads=None))


@pytest.mark.parametrize("bad", ["sm_75", "sm_100", "compute_80", ""])
def test_unknown_arch_is_refused_with_the_accepted_list(bad):
    module = _small_kernel()
    expected = rf"unsupported GPU architecture '{bad}': expected one of sm_80, sm_86, sm_89, sm_90, sm_90a"
    with pytest.raises(ValueError, match=expected):
        ptx(module, bad)
    with pytest.raises(ValueError, match=expected):
        compile_module(module, bad)
    with pytest.raises(ValueError, match=expected):
        ptx_from_llvm_ir(llvm_ir(module), bad)
    with pytest.raises(ValueError, match=expected):
        assemble("", bad)


def test_compile_module_returns_ir_and_ptx():
    compiled = compile_module(_small_kernel(), "sm_90")
    assert compiled.arch == "sm_90"
    assert 'define ptx_kernel void @"scale"' in compiled.llvm_ir
    assert '"nvvm.maxntid"="128"' in compiled.llvm_ir
    assert ".target sm_90" in compiled.ptx
    assert compiled.ptx == ptx(_small_kernel(), "sm_90")


def test_opt_level_zero_still_emits_valid_ptx(ptxas_path):
    text = ptx(_small_kernel(), "sm_80", opt_level=0)
    assert "max.f32" in text
    assemble(text, "sm_80", ptxas=ptxas_path)
    with pytest.raises(ValueError, match="opt_level must be 0 to 3, got 4"):
        ptx(_small_kernel(), "sm_80", opt_level=4)


def test_invalid_llvm_ir_is_reported_by_llvm():
    """LLVM's own message, as a diagnostic (not a bare RuntimeError from llvmlite)."""
    with pytest.raises(TranslationError, match="LLVM rejects the IR made from this module: .*expected"):
        ptx_from_llvm_ir("define void @f( {", "sm_80")


def test_an_instruction_the_arch_lacks_is_a_diagnostic_not_an_llvm_abort():
    """wgmma on sm_80 would make LLVM's instruction selection abort the process."""
    text = "declare void @llvm.nvvm.wgmma.fence.sync.aligned()\n"
    with pytest.raises(TranslationError, match="uses 'llvm.nvvm.wgmma', which needs sm_90a; the target is sm_80"):
        ptx_from_llvm_ir(text, "sm_80")
    with pytest.raises(TranslationError, match="needs sm_90a; the target is sm_90"):
        ptx_from_llvm_ir(text, "sm_90")


def test_ptxas_failure_carries_ptxas_message(ptxas_path):
    text = ptx(_small_kernel(), "sm_80").replace("max.f32", "maxx.f32")
    with pytest.raises(PtxasError) as raised:
        assemble(text, "sm_80", ptxas=ptxas_path)
    message = str(raised.value)
    assert "ptxas -arch=sm_80 failed" in message
    assert "maxx" in message or "syntax error" in message.lower()


def test_kernel_resources_reports_registers_and_shared_memory(ptxas_path):
    module = ModuleOp([])
    func, b = K.kernel(module, "tiles", [L.GLOBAL_PTR])
    smem = K.shared_address(b, K.shared_buffer(module, "smem", 2048))
    slot = L.offset(b, smem, N.thread_id(b), f32)
    N.vector_store(b, L.constant(b, 1.0, f32), slot)
    N.barrier(b)
    N.vector_store(b, N.vector_load(b, slot, f32), func.body.block.args[0])
    K.ret(b)
    for arch in ("sm_80", "sm_90"):
        found = kernel_resources(ptx(module, arch), arch, ptxas=ptxas_path)
        usage = found["tiles"]
        assert usage.registers > 0
        assert usage.shared_bytes == 2048
        assert usage.spill_stores == usage.spill_loads == 0


def test_parse_resources_reads_ptxas_verbose_output():
    output = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm' for 'sm_80'
ptxas info    : Function properties for gemm
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 49152 bytes smem, 380 bytes cmem[0]
ptxas info    : Function properties for helper
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers
"""
    assert parse_resources(output) == {
        "gemm": KernelResources(255, 8, 12, 16, 49152),
        "helper": KernelResources(10, 0, 0, 0, 0),
    }


def test_find_ptxas_search_order(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "ptxas"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'ptxas fatal   : fake' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    monkeypatch.delenv("TILEC_PTXAS", raising=False)
    monkeypatch.setenv("PATH", str(fake.parent))
    assert find_ptxas() == fake
    with pytest.raises(PtxasError, match="ptxas fatal   : fake"):
        assemble(".version 8.0", "sm_80")
    # Without PATH the wheel (if installed) or $CUDA_HOME is used.
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    found = find_ptxas()
    assert found is None or found == fake or "nvidia" in str(found)


def test_tilec_ptxas_comes_first(tmp_path, monkeypatch):
    chosen = tmp_path / "chosen" / "ptxas"
    chosen.parent.mkdir()
    chosen.write_text("#!/bin/sh\n")
    chosen.chmod(chosen.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TILEC_PTXAS", str(chosen))
    assert find_ptxas() == chosen
    # one that cannot run: none (not another one)
    monkeypatch.setenv("TILEC_PTXAS", str(tmp_path / "no-such-ptxas"))
    assert find_ptxas() is None
    with pytest.raises(PtxasNotFoundError, match="TILEC_PTXAS"):
        assemble(".version 8.0", "sm_80")


def test_the_runtime_uses_the_same_ptxas():
    from tilec.runtime import find_ptxas as runtime_find_ptxas

    assert runtime_find_ptxas is find_ptxas


def test_missing_ptxas_is_a_clear_error(monkeypatch):
    monkeypatch.setattr("tilec.codegen.ptxas.find_ptxas", lambda: None)
    with pytest.raises(PtxasNotFoundError, match="ptxas not found on PATH"):
        assemble(".version 8.0", "sm_80")
    assert isinstance(PtxasNotFoundError(), FileNotFoundError)


def test_tile_opt_targets_emit_ir_and_ptx():
    import io

    from xdsl.context import Context
    from xdsl.utils.arg_spec import parse_spec

    from tilec.codegen.targets import TARGETS, PTXTarget

    module = _small_kernel()
    target = PTXTarget.from_spec(parse_spec("ptx{arch=sm_90}"))
    out = io.StringIO()
    target.emit(Context(), module, out)
    assert ".target sm_90" in out.getvalue()
    out = io.StringIO()
    TARGETS["nvptx-llvm"]().emit(Context(), module, out)
    assert out.getvalue() == llvm_ir(module)
    with pytest.raises(ValueError, match="unsupported GPU architecture 'sm_70'"):
        PTXTarget.from_spec(parse_spec("ptx{arch=sm_70}"))
