"""tilec: a compiler for GPU tile programs, built on xDSL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from tilec.api import CompilationError, CompiledKernel, compile
    from tilec.autotune import autotune  # tilec.autotune: the module, callable as the function
    from tilec.matmul import matmul, matmul_kernel  # tilec.matmul: the module, callable as the function
    from tilec.matmul_config import MatmulConfig

__all__ = ["CompilationError", "CompiledKernel", "MatmulConfig", "__version__", "autotune", "compile", "matmul",
           "matmul_kernel"]

_API = ("compile", "CompiledKernel", "CompilationError")
_SUBMODULE_FUNCTIONS = ("matmul", "autotune")


def __getattr__(name: str) -> Any:
    # The API imports xDSL, llvmlite and cuda-python: load it on first use, so
    # that `import tilec` (e.g. for __version__ or tilec.layout) stays cheap.
    if name in _API:
        from tilec import api

        return getattr(api, name)
    if name in _SUBMODULE_FUNCTIONS:
        # tilec.matmul and tilec.autotune are the modules tilec/matmul.py and tilec/autotune.py,
        # callable as their functions (importing a submodule sets the package attribute, so the
        # two names could not differ)
        import importlib

        return importlib.import_module(f"tilec.{name}")
    if name == "matmul_kernel":
        from tilec.matmul import matmul_kernel

        return matmul_kernel
    if name == "MatmulConfig":
        from tilec.matmul_config import MatmulConfig

        return MatmulConfig
    raise AttributeError(f"module 'tilec' has no attribute {name!r}")
