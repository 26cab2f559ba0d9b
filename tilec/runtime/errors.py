"""Exceptions of the runtime.

Every failure the runtime can report has its own class so that callers (and
tests) can tell "there is no GPU here" from "the driver rejected this call"
from "the PTX did not compile", and every message names what failed: the
driver call, the CUDA error, the kernel, and where there is one, the
compiler's log.
"""

from __future__ import annotations


class RuntimeFailure(RuntimeError):
    """Base class of the runtime's own errors (not argument errors)."""


class NoDeviceError(RuntimeFailure):
    """There is no usable CUDA device, so nothing can be loaded or launched.

    The message always starts with ``no CUDA device:`` followed by the reason
    (no driver library, ``cuInit`` failed, zero devices, ...).
    """

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"no CUDA device: {reason}")


class CudaError(RuntimeFailure):
    """A CUDA driver call returned something other than ``CUDA_SUCCESS``."""

    def __init__(
        self,
        call: str,
        code: int,
        name: str,
        description: str,
        kernel: str | None = None,
        detail: str | None = None,
    ):
        self.call = call
        self.code = code
        self.name = name
        self.description = description
        self.kernel = kernel
        self.detail = detail
        msg = f"{call} failed: {name} ({code}): {description}"
        if kernel:
            msg += f" [kernel {kernel!r}]"
        if detail:
            msg += f"\n{detail}"
        super().__init__(msg)


class CompileError(RuntimeFailure):
    """PTX could not be turned into a cubin; ``log`` holds the compiler's log."""

    log: str = ""


class JitError(CudaError, CompileError):
    """The driver's JIT linker rejected the PTX; ``log`` is its error log."""

    def __init__(self, call: str, code: int, name: str, description: str,
                 log: str, kernel: str | None = None):
        self.log = log
        detail = "JIT error log:\n" + (log.strip() or "(empty)")
        super().__init__(call, code, name, description, kernel=kernel, detail=detail)


class PtxasError(CompileError):
    """``ptxas`` failed (or could not be found); ``log`` is its output."""

    def __init__(self, message: str, log: str = ""):
        self.log = log
        full = message
        if log.strip():
            full += "\nptxas log:\n" + log.strip()
        super().__init__(full)


class LaunchConfigError(ValueError):
    """A launch configuration the device cannot run (e.g. too much shared memory)."""
