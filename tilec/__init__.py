"""tilec: a compiler for GPU tile programs, built on xDSL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from tilec.api import CompilationError, CompiledKernel, compile

__all__ = ["CompilationError", "CompiledKernel", "__version__", "compile"]

_API = ("compile", "CompiledKernel", "CompilationError")


def __getattr__(name: str) -> Any:
    # The API imports xDSL, llvmlite and cuda-python: load it on first use, so
    # that `import tilec` (e.g. for __version__ or tilec.layout) stays cheap.
    if name in _API:
        from tilec import api

        return getattr(api, name)
    raise AttributeError(f"module 'tilec' has no attribute {name!r}")
