"""Output targets for `tile-opt -t ...`: our LLVM IR and PTX.

xDSL's own `llvm` target uses its converter with the gaps listed in
`llvm_translate`; these targets use ours (the registry replaces xDSL's
`llvm` target with `LLVMIRTarget`). Options follow xDSL's spec syntax, e.g.
`-t 'ptx{arch=sm_90}'`. The module must be at the llvm level already
(`-p tile-to-llvm`); anything else is a diagnostic saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from tilec.codegen.arch import check_arch
from tilec.codegen.ptx import llvm_ir, ptx


class NotLLVMError(DiagnosticException):
    """The module still holds ops other than `llvm.func` / `llvm.mlir.global`."""


def require_llvm_module(module: ModuleOp, target: str) -> None:
    """Raise `NotLLVMError` unless `module` is made of llvm-dialect ops only."""
    for op in module.walk():
        if op is module or op.name.startswith("llvm."):
            continue
        raise NotLLVMError(
            f"target '{target}' needs a module of llvm-dialect ops, but it contains "
            f"'{op.name}'; lower it first, e.g. with -p tile-to-llvm"
        )


@dataclass(frozen=True)
class NVPTXLLVMIRTarget(Target):
    """Print the module's LLVM IR for NVPTX, as translated (unoptimised)."""

    name: ClassVar[str] = "nvptx-llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        require_llvm_module(module, self.name)
        output.write(llvm_ir(module))


@dataclass(frozen=True)
class LLVMIRTarget(NVPTXLLVMIRTarget):
    """`-t llvm`: the same as `nvptx-llvm`, under the name users expect."""

    name: ClassVar[str] = "llvm"


@dataclass(frozen=True)
class PTXTarget(Target):
    """Print the module's PTX for `arch` (default sm_80)."""

    name: ClassVar[str] = "ptx"

    arch: str = "sm_80"
    opt_level: int = 3

    def __post_init__(self) -> None:
        check_arch(self.arch)
        if not 0 <= self.opt_level <= 3:
            raise ValueError(f"opt_level must be 0 to 3, got {self.opt_level}")

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        require_llvm_module(module, self.name)
        output.write(ptx(module, self.arch, opt_level=self.opt_level))


TARGETS: dict[str, type[Target]] = {
    NVPTXLLVMIRTarget.name: NVPTXLLVMIRTarget,
    LLVMIRTarget.name: LLVMIRTarget,
    PTXTarget.name: PTXTarget,
}
"""By name, for a tool's `register_all_targets`."""
