"""Code generation: xDSL `llvm` dialect → LLVM IR (llvmlite) → PTX → cubin.

`llvm_translate` turns a module of the llvm dialect into LLVM IR (filling the
gaps of xDSL's converter), `ptx` prints PTX through LLVM's NVPTX backend,
`ptxas` assembles and inspects it, `targets` are `tile-opt`'s outputs and
`arch` names the GPUs we accept. The builders that make the llvm dialect
(`nvvm`, `kernel`, `llvm_build`) belong to the passes, in
`tilec.passes.lowering`.

The names below are loaded on first use: `tilec.runtime` needs only `ptxas`
(and `arch`), and loading `ptx` and `llvm_translate` (llvmlite, xDSL) with
them would add about 120 ms to its import. (The function `ptx.ptx` is not
among them: `tilec.codegen.ptx` is the module.)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilec.codegen.arch import ACCEPTED_ARCHS, check_arch
    from tilec.codegen.llvm_translate import translate_module
    from tilec.codegen.ptx import CompiledPTX, compile_module, llvm_ir, ptx_from_llvm_ir
    from tilec.codegen.ptxas import (
        KernelResources,
        PtxasError,
        PtxasNotFoundError,
        assemble,
        find_ptxas,
        kernel_resources,
    )

_MODULE_OF = {
    "ACCEPTED_ARCHS": "arch",
    "check_arch": "arch",
    "translate_module": "llvm_translate",
    "CompiledPTX": "ptx",
    "compile_module": "ptx",
    "llvm_ir": "ptx",
    "ptx_from_llvm_ir": "ptx",
    "KernelResources": "ptxas",
    "PtxasError": "ptxas",
    "PtxasNotFoundError": "ptxas",
    "assemble": "ptxas",
    "find_ptxas": "ptxas",
    "kernel_resources": "ptxas",
}
"""Each name of ``__all__``: the submodule that defines it."""


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tilec.codegen' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"tilec.codegen.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ACCEPTED_ARCHS",
    "CompiledPTX",
    "KernelResources",
    "PtxasError",
    "PtxasNotFoundError",
    "assemble",
    "check_arch",
    "compile_module",
    "find_ptxas",
    "kernel_resources",
    "llvm_ir",
    "ptx_from_llvm_ir",
    "translate_module",
]
