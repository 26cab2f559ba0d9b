"""Output targets for `tile-opt -t ...`: our LLVM IR and PTX.

xDSL's own `llvm` target uses its converter with the gaps listed in
`llvm_translate`; these targets use ours. Options follow xDSL's spec
syntax, e.g. `-t 'ptx{arch=sm_90}'`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from tilec.codegen.arch import check_arch
from tilec.codegen.ptx import llvm_ir, ptx


@dataclass(frozen=True)
class NVPTXLLVMIRTarget(Target):
    """Print the module's LLVM IR for NVPTX, as translated (unoptimised)."""

    name: ClassVar[str] = "nvptx-llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(llvm_ir(module))


@dataclass(frozen=True)
class PTXTarget(Target):
    """Print the module's PTX for `arch` (default sm_80)."""

    name: ClassVar[str] = "ptx"

    arch: str = "sm_80"
    opt_level: int = 3

    def __post_init__(self) -> None:
        check_arch(self.arch)

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(ptx(module, self.arch, opt_level=self.opt_level))


TARGETS: dict[str, type[Target]] = {
    NVPTXLLVMIRTarget.name: NVPTXLLVMIRTarget,
    PTXTarget.name: PTXTarget,
}
"""By name, for a tool's `register_all_targets`."""
