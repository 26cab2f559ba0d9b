"""PTX from an xDSL `llvm`-dialect module, through llvmlite's NVPTX backend.

The module is translated to LLVM IR (`llvm_translate`), parsed and verified
by LLVM, optimised with LLVM's standard pipeline for the NVPTX target
machine, and printed as PTX by LLVM's NVPTX code generator. PTX text is
never assembled from templates here.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import llvmlite.binding as llvm
import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException

from tilec.codegen.arch import check_arch
from tilec.codegen.llvm_translate import NVPTX_TRIPLE, module_text
from tilec.ir.parser import location_text

PTX_ISA_VERSION = 80
"""PTX ISA 8.0 (CUDA 12.0): new enough for sm_90 (which needs 7.8) and for
every instruction we emit but those of :data:`NEWER_PTX`, old enough for any
CUDA 12 or 13 driver to JIT and for ptxas 12.x/13.x to assemble."""

NEWER_PTX = (
    (re.compile(r"\bmma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e[45]m[32]"), 84),  # mma.sync of FP8
    (re.compile(r"\bcvt\.[\w.]*\.e[45]m[32]x2"), 81),  # FP8 conversions (8.1 is the first for sm_89)
)
"""Instructions a later PTX ISA brought (the version a module using one is written in): a module
without them keeps :data:`PTX_ISA_VERSION`, so what older drivers run stays theirs."""


def ptx_version(ir_text: str) -> int:
    """The PTX ISA version (as LLVM's ``+ptxNN``) a module's PTX is written in."""
    return max([PTX_ISA_VERSION, *(v for pattern, v in NEWER_PTX if pattern.search(ir_text))])


@functools.cache
def _nvptx_target() -> llvm.Target:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    # 32-bit shared/local/constant addresses (the data layout gets p3:32:32): shared memory
    # is < 4 GB, and 64-bit addresses would double the registers and adds of every
    # ldmatrix/cp.async address. It must be set before the first target machine exists.
    llvm.set_option("", "--nvptx-short-ptr")
    return llvm.Target.from_triple(NVPTX_TRIPLE)


class TranslationError(DiagnosticException):
    """The module cannot become PTX for the target: an instruction the arch lacks, or LLVM refusing
    the IR made from it (a module of llvm-dialect ops written by hand, say)."""


@functools.cache
def _target_machine(arch: str, opt_level: int, version: int = PTX_ISA_VERSION) -> llvm.TargetMachine:
    return _nvptx_target().create_target_machine(
        cpu=arch,
        features=f"+ptx{version}",
        opt=opt_level,
        codemodel="default",
    )


def llvm_ir(module: ModuleOp) -> str:
    """The LLVM IR text of `module`, as translated, before any optimisation.

    It carries the NVPTX triple and data layout, so it stands on its own
    (e.g. for LLVM's `opt` or `llc`).
    """
    layout = str(_target_machine("sm_80", 0).target_data)  # same for every sm_XY
    try:
        return module_text(module, triple=NVPTX_TRIPLE, data_layout=layout)
    except KeyError as e:  # a value the writer has not met yet: used above its definition
        value = e.args[0] if e.args else None
        op = getattr(value, "op", None)
        err = TranslationError(f"'{op.name if op else '?'}' result %{getattr(value, 'name_hint', None) or '?'} is "
                               "used before it is defined (LLVM IR needs definitions to dominate their uses)")
        err.op = op
        raise err from None
    except NotImplementedError as e:
        err = TranslationError(f"cannot translate this module to LLVM IR: {e}")
        err.op = getattr(e, "op", None)
        raise err from None


ARCH_INSTRUCTIONS = (
    # (what the IR mentions, the arch it needs, whether it needs the arch-specific "a" target)
    (re.compile(r"llvm\.nvvm\.wgmma\.|\bwgmma\."), 90, True),
    (re.compile(r"\bsetmaxnreg\b|llvm\.nvvm\.setmaxnreg"), 90, True),
    (re.compile(r"cp\.async\.bulk|llvm\.nvvm\.cp\.async\.bulk"), 90, False),
    (re.compile(r"fence\.proxy\.async|expect_tx"), 90, False),
    (re.compile(r"nvvm\.cluster_dim|barrier\.cluster|\bmapa\b|sreg\.(n?clusterid|cluster\.ctarank)"), 90, False),
    # FP8 conversions and mma.sync (in the PTX ISA versions NEWER_PTX gives them)
    (re.compile(r"\bcvt\.[\w.]*\.e[45]m[32]x2|\bmma\.sync\.aligned\.m16n8k32\.row\.col\.f32\.e[45]m[32]"), 89, False),
    (re.compile(r"\b(red|atom)\.[\w.]*\.add\.noftz\.bf16\b"), 90, False),  # bf16 atomic adds
)
"""Instructions LLVM's NVPTX back end (or ptxas) accepts only from an arch on: checked first, so a
module for an older arch gets a diagnostic instead of LLVM aborting the process."""


def check_instructions(ir_text: str, arch: str, module: ModuleOp | None = None) -> None:
    """A :class:`TranslationError` naming the first instruction of ``ir_text`` that ``arch`` lacks (at
    the first op of ``module`` that uses it, when given)."""
    number = int(arch.removeprefix("sm_").rstrip("a"))
    specific = arch.endswith("a")
    for pattern, needs, needs_specific in ARCH_INSTRUCTIONS:
        m = pattern.search(ir_text)
        if m and (number < needs or (needs_specific and not (specific and number == needs))):
            want = f"sm_{needs}a" if needs_specific else f"sm_{needs} or newer"
            err = TranslationError(f"the module uses '{m.group().strip('.')}', which needs {want}; the target is "
                                   f"{arch} (choose another with arch=..., or tile-opt's -t 'ptx{{arch=sm_90a}}')")
            if module is not None:  # the op using it, else the op it is an attribute of (a kernel's cluster)
                ops = [op for op in module.walk() if op is not module]
                needle = m.group()  # as the op prints it (an inline asm string's tab prints as \09: no \b)
                err.op = next((op for op in ops if not op.regions and needle in str(op)), None) or next(
                    (op for op in ops if pattern.search(f"{op.attributes} {op.properties}")), None)
                while err.op is not None and not location_text(err.op) and err.op.parent_op() is not module:
                    err.op = err.op.parent_op()  # an op a lowering made has no line: its function's
            raise err


def ptx_from_llvm_ir(ir_text: str, arch: str = "sm_80", *, opt_level: int = 3) -> str:
    """PTX for `arch` from LLVM IR text; LLVM verifies the IR first."""
    check_arch(arch)
    if not 0 <= opt_level <= 3:
        raise ValueError(f"opt_level must be 0 to 3, got {opt_level}")
    check_instructions(ir_text, arch)
    machine = _target_machine(arch, opt_level, ptx_version(ir_text))
    try:
        parsed = llvm.parse_assembly(ir_text)
        parsed.verify()
    except RuntimeError as e:
        first = str(e).strip().splitlines()
        raise TranslationError(f"LLVM rejects the IR made from this module: {' '.join(first[:3])[:400]}") from None
    parsed.triple = NVPTX_TRIPLE
    parsed.data_layout = str(machine.target_data)
    if opt_level > 0:
        tuning = llvm.create_pipeline_tuning_options(speed_level=opt_level)
        passes = llvm.create_pass_builder(machine, tuning)
        passes.getModulePassManager().run(parsed, passes)
    return machine.emit_assembly(parsed)


def ptx(module: ModuleOp, arch: str = "sm_80", *, opt_level: int = 3) -> str:
    """PTX for `arch` (one of `ACCEPTED_ARCHS`) from an xDSL llvm-dialect module."""
    check_arch(arch)
    text = llvm_ir(module)
    check_instructions(text, arch, module)
    return ptx_from_llvm_ir(text, arch, opt_level=opt_level)


@dataclass(frozen=True)
class CompiledPTX:
    """Both texts of one compilation: LLVM IR (for reading) and PTX (to load)."""

    arch: str
    llvm_ir: str
    ptx: str


HANDOFF_INTERVAL = 0.0002
"""Python's thread switch interval (seconds) while `alongside` runs next to LLVM (default 0.005)."""

_handoff_lock = threading.Lock()
_handoff_users = 0
_handoff_saved = 0.005


@contextmanager
def prompt_gil_handoff() -> Iterator[None]:
    """Within the block, a thread waiting for the GIL gets it within 0.2 ms, not 5 ms.

    LLVM runs without the GIL, but each of the twenty-odd llvmlite calls that
    drive it takes the GIL back to return. While Python code in another
    thread (`alongside`) holds the GIL, each such return waited for Python's
    switch interval, 5 ms: about 50 ms added to LLVM's 0.2 s on a GEMM kernel.
    The interval is restored when the last of (possibly concurrent) users
    leaves; a smaller one already set is kept.
    """
    global _handoff_users, _handoff_saved
    with _handoff_lock:
        if _handoff_users == 0:
            _handoff_saved = sys.getswitchinterval()
            if _handoff_saved > HANDOFF_INTERVAL:
                sys.setswitchinterval(HANDOFF_INTERVAL)
        _handoff_users += 1
    try:
        yield
    finally:
        with _handoff_lock:
            _handoff_users -= 1
            if _handoff_users == 0 and _handoff_saved > HANDOFF_INTERVAL:
                sys.setswitchinterval(_handoff_saved)


def compile_module(
    module: ModuleOp,
    arch: str = "sm_80",
    *,
    opt_level: int = 3,
    alongside: Callable[[], object] | None = None,
) -> CompiledPTX:
    """Translate `module` once and return its LLVM IR and its PTX for `arch`.

    `alongside`, if given, is called in this thread while LLVM optimises and
    emits the PTX in another one (LLVM does not hold the GIL): work that
    does not touch LLVM, e.g. verifying `module`, then costs no wall time on
    a machine with a free core (see :func:`prompt_gil_handoff`). An exception
    from it is raised once LLVM has finished (before LLVM's own exception, if
    both fail).
    """
    check_arch(arch)
    ir_text = llvm_ir(module)
    check_instructions(ir_text, arch, module)  # here, where the module can say which op needs the instruction
    if alongside is None:
        return CompiledPTX(arch, ir_text, ptx_from_llvm_ir(ir_text, arch, opt_level=opt_level))
    outcome: dict[str, object] = {}

    def emit() -> None:
        try:
            outcome["ptx"] = ptx_from_llvm_ir(ir_text, arch, opt_level=opt_level)
        except BaseException as e:  # re-raised in the calling thread
            outcome["error"] = e

    with prompt_gil_handoff():
        worker = threading.Thread(target=emit, name="tilec-llvm", daemon=True)
        worker.start()
        try:
            alongside()
        finally:
            worker.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return CompiledPTX(arch, ir_text, outcome["ptx"])  # type: ignore[arg-type]
