"""Code generation: xDSL `llvm` dialect → LLVM IR (llvmlite) → PTX → cubin.

`nvvm` and `kernel` build GPU code in the llvm dialect, `llvm_translate`
turns it into LLVM IR (filling the gaps of xDSL's converter), `ptx` prints
PTX through LLVM's NVPTX backend, and `ptxas` assembles and inspects it.
"""

from tilec.codegen.arch import ACCEPTED_ARCHS, check_arch
from tilec.codegen.llvm_ops import load_llvm_extensions
from tilec.codegen.llvm_translate import translate_module
from tilec.codegen.ptx import CompiledPTX, compile_module, llvm_ir, ptx, ptx_from_llvm_ir
from tilec.codegen.ptxas import (
    KernelResources,
    PtxasError,
    PtxasNotFoundError,
    assemble,
    find_ptxas,
    kernel_resources,
)

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
    "load_llvm_extensions",
    "ptx",
    "ptx_from_llvm_ir",
    "translate_module",
]
