"""PTX -> cubin without a GPU (ptxas), through the cache, across processes."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tilec.runtime import CubinCache, Kernel, PtxasError, compile_with_ptxas, find_ptxas, ptxas_version
from tilec.runtime import jit

from runtime_kernels import AXPY_PTX, AXPY_SIGNATURE, BROKEN_PTX, REPO_ROOT, SMEM_PROBE_PTX

needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found (PATH or nvidia-cuda-nvcc wheel)")


@needs_ptxas
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_builds_a_cubin(arch):
    cubin = compile_with_ptxas(AXPY_PTX, arch)
    assert cubin[:4] == b"\x7fELF"
    assert b"axpy" in cubin  # the entry's symbol name


@needs_ptxas
def test_ptxas_accepts_dynamic_shared_memory_kernel():
    assert compile_with_ptxas(SMEM_PROBE_PTX, "sm_90")[:4] == b"\x7fELF"


@needs_ptxas
def test_ptxas_error_carries_the_log():
    with pytest.raises(PtxasError) as info:
        compile_with_ptxas(BROKEN_PTX, "sm_90")
    err = info.value
    assert "%rd_undeclared" in err.log
    assert "ptxas -arch=sm_90 failed" in str(err) and "%rd_undeclared" in str(err)


def test_bad_arch_rejected():
    with pytest.raises(ValueError, match="arch must look like"):
        compile_with_ptxas(AXPY_PTX, "hopper")


def test_missing_ptxas_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("TILEC_PTXAS", str(tmp_path / "no-such-ptxas"))
    assert find_ptxas() is None
    with pytest.raises(PtxasError, match="ptxas not found"):
        compile_with_ptxas(AXPY_PTX, "sm_90")


def test_find_ptxas_falls_back_to_the_wheel(monkeypatch, tmp_path):
    fake_site = tmp_path / "site-packages"
    exe = fake_site / "nvidia" / "cu13" / "bin" / "ptxas"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.5, V13.5.37'\n")
    exe.chmod(0o755)
    monkeypatch.delenv("TILEC_PTXAS", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.syspath_prepend(str(fake_site))  # its nvidia/ joins the namespace package, searched first
    assert find_ptxas() == exe
    assert ptxas_version(str(exe)) == "13.5.37"


@needs_ptxas
def test_kernel_cubin_through_cache_with_ptxas(tmp_path):
    cache = CubinCache(tmp_path)
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, backend="ptxas", cache=cache)
    first = k.cubin(arch="sm_90")
    assert cache.stats.as_dict() == {"hits": 0, "misses": 1, "compiles": 1}
    assert k.cubin(arch="sm_90") == first
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "compiles": 1}
    k.cubin(arch="sm_80")  # another arch is another key
    assert cache.stats.as_dict() == {"hits": 1, "misses": 2, "compiles": 2}
    # the same PTX with a different pipeline string (compiler input) misses too
    k2 = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, backend="ptxas", cache=cache, ir="ir", pipeline="p1")
    k2.cubin(arch="sm_90")
    assert cache.stats.compiles == 3
    # a cubin kernel built from it needs no compiler
    assert Kernel.from_cubin(first, "axpy", AXPY_SIGNATURE).cubin() == first


@needs_ptxas
def test_kernel_without_cache(tmp_path, cache_dir):
    k = Kernel(AXPY_PTX, "axpy", AXPY_SIGNATURE, backend="ptxas", cache=False)
    assert k.cubin(arch="sm_90")[:4] == b"\x7fELF"
    assert not cache_dir.exists()


def test_ptxas_backend_without_gpu_needs_arch(monkeypatch):
    from tilec.runtime import driver

    monkeypatch.setattr(driver, "has_device", lambda: False)
    with pytest.raises(ValueError, match="explicit arch"):
        jit.resolve_backend("ptxas", None)
    assert jit.resolve_backend("auto", "sm_90")[0] == "ptxas"


_CHILD = r"""
import json, sys
from tilec.runtime import Kernel, Param, default_cache
sig = [Param.pointer("x", "float32"), Param.pointer("y", "float32"),
       Param.pointer("out", "float32", is_output=True), Param.scalar("alpha", "float32"),
       Param.scalar("n", "int32")]
k = Kernel(open(sys.argv[1]).read(), "axpy", sig, backend="ptxas")
cubin = k.cubin(arch="sm_90")
assert cubin[:4] == b"\x7fELF"
print(json.dumps(default_cache().stats.as_dict()))
"""


@needs_ptxas
def test_second_process_with_warm_cache_compiles_nothing(tmp_path, subprocess_env, python_exe, cache_dir):
    ptx = tmp_path / "axpy.ptx"
    ptx.write_text(AXPY_PTX)

    def run():
        out = subprocess.run([python_exe, "-c", _CHILD, str(ptx)], env=subprocess_env, cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run() == {"hits": 0, "misses": 1, "compiles": 1}
    assert run() == {"hits": 1, "misses": 0, "compiles": 0}
    assert len(list(cache_dir.rglob("*.cubin"))) == 1


def test_ptxas_identity_names_the_binary_without_running_it(tmp_path):
    exe = tmp_path / "ptxas"
    exe.write_text("#!/bin/sh\nexit 1\n")  # running it would fail
    exe.chmod(0o755)
    first = jit.ptxas_identity(str(exe))
    assert first.startswith(str(exe.resolve()))
    link = tmp_path / "bin" / "ptxas"
    link.parent.mkdir()
    link.symlink_to(exe)
    assert jit.ptxas_identity(str(link)) == first  # the same binary under another name
    jit.ptxas_identity.cache_clear()
    exe.write_text("#!/bin/sh\nexit 2\n")  # another binary, same size
    os.utime(exe, ns=(0, exe.stat().st_mtime_ns + 1))
    assert jit.ptxas_identity(str(exe)) != first
