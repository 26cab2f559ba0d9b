"""Fixtures for codegen tests: build a one-kernel module, emit and assemble it.

`emit_and_assemble` is the check every codegen test ends with: PTX for
sm_80 and sm_90 must contain the expected instructions and must be accepted
by ptxas for its arch. It also checks that every LLVM intrinsic we emit
keeps its name through LLVM's parser, i.e. that we never lean on LLVM's
auto-upgrade of retired intrinsic names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import llvmlite.binding as llvm
import pytest
from xdsl.builder import Builder
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute

from tilec.codegen.ptx import compile_module
from tilec.codegen.ptxas import assemble, find_ptxas
from tilec.passes.lowering import kernel as kernel_builders

ARCHS = ("sm_80", "sm_90")

_INTRINSIC_NAME = re.compile(r'@"?(llvm\.[\w.]+)"?\(')


@pytest.fixture(scope="session")
def ptxas_path() -> str:
    found = find_ptxas()
    if found is None:
        pytest.skip(
            "ptxas not found (PATH, nvidia-cuda-nvcc wheel, $CUDA_HOME/bin): "
            "install 'nvidia-cuda-nvcc>=13' to assemble PTX in tests"
        )
    return str(found)


@pytest.fixture
def new_kernel() -> Callable[..., tuple[ModuleOp, llvm_dialect.FuncOp, Builder]]:
    """`new_kernel(arg_types, max_threads=None)` → (module, kernel, builder)."""

    def make(
        arg_types: Sequence[Attribute], max_threads: int | None = None, name: str = "k"
    ) -> tuple[ModuleOp, llvm_dialect.FuncOp, Builder]:
        module = ModuleOp([])
        func, builder = kernel_builders.kernel(
            module, name, arg_types, max_threads=max_threads
        )
        return module, func, builder

    return make


def _check_intrinsic_names(ir_text: str) -> None:
    emitted = set(_INTRINSIC_NAME.findall(ir_text))
    parsed = str(llvm.parse_assembly(ir_text))
    renamed = sorted(n for n in emitted if f"@{n}(" not in parsed)
    assert not renamed, f"LLVM renamed (auto-upgraded) these intrinsics: {renamed}"


@pytest.fixture
def emit_and_assemble(ptxas_path: str) -> Callable[..., dict[str, str]]:
    """`emit_and_assemble(module, *expected)` → {arch: ptx}, after all the checks."""

    def check(module: ModuleOp, *expected: str) -> dict[str, str]:
        module.verify()
        texts: dict[str, str] = {}
        for arch in ARCHS:
            compiled = compile_module(module, arch)
            _check_intrinsic_names(compiled.llvm_ir)
            for needle in expected:
                assert needle in compiled.ptx, (
                    f"{needle!r} not in PTX for {arch}:\n{compiled.ptx}"
                )
            cubin = assemble(compiled.ptx, arch, ptxas=ptxas_path)
            assert cubin[:4] == b"\x7fELF"
            texts[arch] = compiled.ptx
        return texts

    return check
