"""tilec.compile: sources, texts, signatures, errors, launch checks and the disk cache.

Everything here runs without a GPU (launches stop at NoDeviceError after the
argument checks); cubins are built with ptxas, and those tests skip, saying
why, when ptxas cannot be found.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tilec
from tilec.api import CompilationError, CompiledKernel
from tilec.runtime import CubinCache, NoDeviceError, Param, has_device

REPO = Path(__file__).resolve().parents[1]
F16 = REPO / "examples" / "kernels" / "mma_f16.mlir"

SCALARS = """
func.func @scalars(%p: !llvm.ptr<1>, %out: !llvm.ptr<1> {tile.dtype = i32, tile.output},
                   %n: i32, %x: f32, %h: f16, %i: index, %b: bf16)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [64, 1, 1], smem = 4096>} {
  %buf = frag.shared "dyn", 0, align 16 : !llvm.ptr<3>
  %st = frag.shared "st", 512, align 16 : !llvm.ptr<3>
  frag.store %n, %out : i32, !llvm.ptr<1>
  func.return
}
"""

TWO_KERNELS = """
func.func @first(%p: !llvm.ptr<1>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  func.return
}
func.func @second(%p: !llvm.ptr<1>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  func.return
}
"""


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own cubin cache folder (never the user's ~/.cache/tilec)."""
    d = tmp_path / "tilec-cache"
    monkeypatch.setenv("TILEC_CACHE_DIR", str(d))
    return d


@pytest.fixture(scope="module")
def f16() -> CompiledKernel:
    return tilec.compile(F16, arch="sm_80")


def needs_ptxas() -> None:
    from tilec.codegen.ptxas import find_ptxas

    if find_ptxas() is None:
        pytest.skip("ptxas not found (PATH, nvidia-cuda-nvcc wheel, $CUDA_HOME/bin): "
                    "install 'nvidia-cuda-nvcc>=13'")


# ---------------------------------------------------------------- sources and texts


def test_compile_from_path(f16: CompiledKernel) -> None:
    assert f16.name == "mma_f16"
    assert set(f16.asm) == {"tile", "llvm", "ptx"}
    assert f16.asm["tile"] == F16.read_text()
    assert 'define ptx_kernel void @"mma_f16"' in f16.asm["llvm"]
    assert ".visible .entry mma_f16(" in f16.asm["ptx"]
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in f16.asm["ptx"]
    assert f16.arch == "sm_80" and ".target sm_80" in f16.asm["ptx"]
    assert "mma_f16(a: float16 array, b: float16 array, d: float32 array (out))" in repr(f16)


def test_compile_from_text_path_string_and_module(f16: CompiledKernel) -> None:
    from xdsl.parser import Parser

    from tilec.api import make_context

    text = F16.read_text()
    for source in (text, str(F16), text.encode()):
        k = tilec.compile(source, arch="sm_80")
        assert k.asm["ptx"] == f16.asm["ptx"]
    module = Parser(make_context(), text).parse_module()
    before = str(module)
    k = tilec.compile(module, arch="sm_90")
    assert ".target sm_90" in k.asm["ptx"]
    assert str(module) == before  # the caller's module is not lowered in place
    assert k.asm["tile"] == before


def test_make_context_knows_what_tile_opt_knows() -> None:
    from tilec.api import make_context
    from tilec.tools.tile_opt import TileOptMain

    ours, tools = make_context(), TileOptMain(args=[]).ctx
    assert sorted(ours.registered_dialect_names) == sorted(tools.registered_dialect_names)
    assert {op.name for op in ours.loaded_ops} == {op.name for op in tools.loaded_ops}


def test_default_arch() -> None:
    from tilec.api import default_arch

    arch = default_arch()
    if not has_device():
        assert arch == "sm_80"
    assert tilec.compile(F16).arch == arch


def test_signature_of_sample(f16: CompiledKernel) -> None:
    assert f16.signature == (
        Param.pointer("a", "float16"),
        Param.pointer("b", "float16"),
        Param.pointer("d", "float32", is_output=True),
    )
    assert f16.launch_defaults.grid == (1, 1, 1)
    assert f16.launch_defaults.block == (32, 1, 1)
    assert f16.launch_defaults.shared_mem == 0  # smem = 768 is all static buffers


def test_signature_of_scalars_and_shared_memory() -> None:
    k = tilec.compile(SCALARS)
    assert k.signature == (
        Param.pointer("p"),  # no tile.dtype: any element type
        Param.pointer("out", "int32", is_output=True),
        Param.scalar("n", "int32"),
        Param.scalar("x", "float32"),
        Param.scalar("h", "float16"),
        Param.scalar("i", "int64"),  # index is i64
        Param.scalar("b", "bfloat16"),
    )
    assert k.launch_defaults.grid == (None, 1, 1)
    # smem is the block's total: what the 512 static bytes leave goes to the dynamic buffer.
    assert k.launch_defaults.shared_mem == 4096 - 512


# ---------------------------------------------------------------- errors


def _error(source, stage: str, *needles: str, **kwargs) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        tilec.compile(source, **kwargs)
    err = info.value
    assert err.stage == stage, str(err)
    for needle in needles:
        assert needle in str(err), str(err)
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)  # no chained traceback
    return err


def test_parse_error_has_location(tmp_path: Path) -> None:
    bad = "func.func @k() {\n  %x = arith.constant 1 : i33x\n  func.return\n}\n"
    _error(bad, "parse", "<source>:2:27: error: ", "i33x", "^")
    path = tmp_path / "bad.mlir"
    path.write_text(bad)
    _error(path, "parse", f"{path}:2:27: error: ")


def test_invalid_ir_is_a_verify_error() -> None:
    bad = F16.read_text().replace("frag.ldmatrix %b_ptr x 2", "frag.ldmatrix %b_ptr x 1")
    _error(bad, "verify", "invalid IR", "x1 gives 1 registers per lane, but has 2 results")


def test_unlowered_tile_op_names_op_location_and_pass(tmp_path: Path) -> None:
    path = tmp_path / "regs.mlir"
    path.write_text(textwrap.dedent("""\
        func.func @regs(%a: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) {
          %b = tile.exp %a : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
          func.return
        }
        """))
    _error(path, "pipeline", "'tile.exp' op at", f"{path}:2:8", "tile-distribute", "while running pass 'tile-to-llvm'",
           "no pipeline= was given; the IR is tile ops outside a kernel (no tile.launch), so the pipeline was "
           "'tile-to-llvm'; pass pipeline=... to choose another")


# ---------------------------------------------------------------- the pipeline, by level


GEMM = REPO / "examples" / "gemm.mlir"
BLOCK_LEVEL = REPO / "examples" / "levels" / "gemm_warp_level.mlir"


@pytest.mark.parametrize("source,pipeline,level", [
    (GEMM, "tile-to-ptx", "a whole-problem tile.matmul"),
    (BLOCK_LEVEL, "tile-stage,tile-swizzle,tile-pipeline,tile-layout,tile-distribute,tile-to-llvm", "a block-level kernel"),
    (F16, "tile-to-llvm", "fragment level"),
], ids=["whole-problem", "block", "fragment"])
def test_the_pipeline_follows_the_level_of_the_ir(source: Path, pipeline: str, level: str) -> None:
    from tilec.api import Pipeline, make_context, pipeline_for
    from tilec.ir.parser import LocatingParser

    chosen, why = pipeline_for(LocatingParser(make_context(), source.read_text(), str(source)).parse_module())
    assert chosen == pipeline and why.startswith(level)
    k = tilec.compile(source, arch="sm_80", cache=False)
    assert k.pipeline == f"{Pipeline.of(pipeline).key} opt_level=3"
    assert k.asm["ptx"] == tilec.compile(source, arch="sm_80", pipeline=pipeline, cache=False).asm["ptx"]


def test_llvm_level_ir_runs_no_pass() -> None:
    from tilec.api import _run_pipeline, make_context, pipeline_for
    from tilec.ir.parser import LocatingParser

    ctx = make_context()
    module = LocatingParser(ctx, F16.read_text(), str(F16)).parse_module()
    _run_pipeline(ctx, module, "tile-to-llvm", str(F16), False)
    assert pipeline_for(module) == ("", "llvm dialect")
    k = tilec.compile(str(module), arch="sm_80", cache=False)
    assert k.pipeline == "opt_level=3"
    assert k.asm["ptx"] == tilec.compile(F16, arch="sm_80", cache=False).asm["ptx"]


def test_a_chosen_pipeline_that_fails_says_how_to_choose_another() -> None:
    # math.expm1 has no lowering to llvm: the epilogue verifies, the pipeline fails
    bad = GEMM.read_text().replace("%h = arith.truncf %acc : f32 to f16",
                                   "%e = math.expm1 %acc : f32\n    %h = arith.truncf %e : f32 to f16")
    _error(bad, "pipeline", "'math.expm1' op at <source>:12:10", "while running pass 'tile-to-ptx'",
           "<source>: note: no pipeline= was given; the IR is a whole-problem tile.matmul, so the pipeline was "
           "'tile-to-ptx'; pass pipeline=... to choose another", cache=False)


def test_bad_pipeline() -> None:
    _error(F16, "pipeline", "unknown pass 'tile-to-lvm'", "did you mean 'tile-to-llvm'", pipeline="tile-to-lvm")


def test_pipeline_that_does_not_reach_llvm() -> None:
    _error(F16, "codegen", "after pipeline 'cse'", "lower it first", pipeline="cse")


def test_kernel_selection() -> None:
    _error(TWO_KERNELS, "kernel", "2 kernels (first, second)", "kernel=")
    assert tilec.compile(TWO_KERNELS, kernel="second").name == "second"
    _error(TWO_KERNELS, "kernel", "no kernel named 'third'; the kernels are: first, second", kernel="third")
    _error("func.func @f() {\n  func.return\n}\n", "kernel", "no kernel", "#tile.launch")


def test_bad_arguments() -> None:
    _error("missing/nowhere.mlir", "read", "cannot read 'missing/nowhere.mlir'")
    with pytest.raises(ValueError, match="unsupported GPU architecture 'sm_70'"):
        tilec.compile(F16, arch="sm_70")
    with pytest.raises(TypeError, match="source must be IR text, a path or an xDSL ModuleOp"):
        tilec.compile(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------- launching


def test_arguments_are_checked_before_launch(f16: CompiledKernel) -> None:
    a = np.ones((16, 16), np.float16)
    b = np.ones((8, 16), np.float16)
    d = np.zeros((16, 8), np.float32)
    with pytest.raises(TypeError, match=r"takes 3 argument\(s\) \(a, b, d\), got 2"):
        f16(a, b)
    with pytest.raises(TypeError, match="parameter #1 'b': expected dtype float16, got an array of dtype float32"):
        f16(a, b.astype(np.float32), d)
    with pytest.raises(TypeError, match="parameter #2 'd'"):
        f16(a, b, 3)


@pytest.mark.skipif(has_device(), reason="checks the no-GPU path")
def test_launch_without_gpu_raises_no_device(f16: CompiledKernel) -> None:
    d = np.zeros((16, 8), np.float32)
    with pytest.raises(NoDeviceError, match="no CUDA device"):
        f16(np.ones((16, 16), np.float16), np.ones((8, 16), np.float16), d)
    assert "cubin" not in f16.asm  # nothing was built for a launch that cannot happen


def test_reading_the_cubin_builds_it() -> None:
    needs_ptxas()
    k = tilec.compile(F16, arch="sm_90", cache=False)
    assert "cubin" not in k.asm and k.asm.get("cubin") is None  # asking does not build
    cubin = k.asm["cubin"]
    assert cubin[:4] == b"\x7fELF" and "cubin" in k.asm and k.cubin() is cubin
    with pytest.raises(KeyError):
        k.asm["sass"]


def test_a_cubin_for_a_named_target_touches_no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cubin(arch)`` is ptxas for that target (an ahead-of-time build), even where a GPU is present."""
    from tilec.runtime import driver

    needs_ptxas()
    monkeypatch.setattr(driver, "has_device", lambda: pytest.fail("cubin(arch) asked for the GPU"))
    k = tilec.compile(F16, arch="sm_80", cache=False)
    for arch in ("sm_80", "sm_90"):
        cubin = k.cubin(arch)
        sm = (struct.unpack_from("<I", cubin, 0x30)[0] >> 8) & 0xFF  # the ELF header's e_flags name the SM
        assert cubin[:4] == b"\x7fELF" and f"sm_{sm}" == arch
    assert "cubin" not in k.asm  # the default cubin (this machine's) is not replaced
    with pytest.raises(ValueError, match="unsupported GPU architecture 'sm_70'"):
        k.cubin("sm_70")


def test_reading_the_cubin_without_ptxas_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilec.runtime import PtxasError, jit

    if has_device():
        pytest.skip("on a GPU the driver builds the cubin")
    monkeypatch.setattr(jit, "find_ptxas", lambda: None)
    k = tilec.compile(F16, arch="sm_90", cache=False)
    with pytest.raises(PtxasError, match="ptxas not found: put it on PATH"):
        k.asm["cubin"]
    assert "cubin" not in k.asm


def test_dynamic_grid_must_be_given() -> None:
    k = tilec.compile(SCALARS)
    p = np.zeros(4, np.float32)
    out = np.zeros(1, np.int32)
    with pytest.raises(TypeError, match=r"dynamic grid \(None, 1, 1\): pass grid="):
        k(p, out, 1, 1.0, 1.0, 1, 1.0)


# ---------------------------------------------------------------- cubins and the disk cache


def test_cubin_is_built_once_through_the_cache(cache_dir: Path) -> None:
    needs_ptxas()
    cache = CubinCache(cache_dir)
    k = tilec.compile(F16, arch="sm_90", cache=cache)
    cubin = k.cubin()
    assert cubin[:4] == b"\x7fELF" and k.asm["cubin"] is cubin
    assert cache.stats.as_dict() == {"hits": 0, "misses": 1, "compiles": 1}
    again = tilec.compile(F16, arch="sm_90", cache=cache).cubin()
    assert again == cubin
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "compiles": 1}
    other_arch = tilec.compile(F16, arch="sm_80", cache=cache).cubin()
    assert other_arch != cubin and cache.stats.compiles == 2


CHILD = """
import json, sys, time
t0 = time.perf_counter()
import tilec
from tilec.runtime import default_cache
k = tilec.compile(sys.argv[1], arch="sm_90")
t1 = time.perf_counter()
k.cubin()
t2 = time.perf_counter()
print(json.dumps({**default_cache().stats.as_dict(), "compile_s": t1 - t0, "cubin_s": t2 - t1}))
"""


def test_second_process_compiles_nothing(cache_dir: Path) -> None:
    """A warm disk cache: a new process gets the cubin without running ptxas."""
    needs_ptxas()
    env = {**os.environ, "TILEC_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(REPO)}

    def child() -> dict:
        done = subprocess.run([sys.executable, "-c", CHILD, str(F16)], env=env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    cold = child()
    warm = child()
    print(f"cold: {cold}\nwarm: {warm}")
    assert (cold["compiles"], cold["misses"], cold["hits"]) == (1, 1, 0)
    assert (warm["compiles"], warm["misses"], warm["hits"]) == (0, 0, 1)
    assert len(list(cache_dir.rglob("*.cubin"))) == 1
