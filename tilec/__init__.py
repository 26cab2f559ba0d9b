"""tilec: a compiler for GPU tile programs, built on xDSL.

The public names: :func:`compile` and :class:`CompiledKernel` (:mod:`tilec.api`),
:func:`matmul`, :func:`matmul_kernel`, :func:`autotune`, :class:`MatmulConfig` and
:class:`SplitConfig` (the GEMM, :mod:`tilec.kernels.gemm`), :func:`softmax`, :func:`layer_norm`, :func:`rms_norm` and
their ``*_kernel`` twins (:mod:`tilec.kernels.softmax`, :mod:`tilec.kernels.norms`), :func:`attention` and
:func:`attention_kernel` (:mod:`tilec.kernels.attention`). They are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tilec.version import __version__

if TYPE_CHECKING:
    from tilec.api import CompilationError, CompiledKernel, compile
    from tilec.kernels.attention import attention, attention_kernel
    from tilec.kernels.gemm import autotune, matmul, matmul_kernel
    from tilec.kernels.gemm_config import MatmulConfig, SplitConfig
    from tilec.kernels.norms import layer_norm, layer_norm_kernel, rms_norm, rms_norm_kernel
    from tilec.kernels.softmax import softmax, softmax_kernel

__all__ = ["CompilationError", "CompiledKernel", "MatmulConfig", "SplitConfig", "__version__", "attention", "attention_kernel",
           "autotune", "compile", "matmul",
           "layer_norm", "layer_norm_kernel", "matmul_kernel", "rms_norm", "rms_norm_kernel", "softmax",
           "softmax_kernel"]

_HOMES = {
    "compile": "tilec.api",
    "CompiledKernel": "tilec.api",
    "CompilationError": "tilec.api",
    "matmul": "tilec.kernels.gemm",
    "matmul_kernel": "tilec.kernels.gemm",
    "autotune": "tilec.kernels.gemm",
    "MatmulConfig": "tilec.kernels.gemm_config",
    "SplitConfig": "tilec.kernels.gemm_config",
    "softmax": "tilec.kernels.softmax",
    "softmax_kernel": "tilec.kernels.softmax",
    "layer_norm": "tilec.kernels.norms",
    "layer_norm_kernel": "tilec.kernels.norms",
    "rms_norm": "tilec.kernels.norms",
    "rms_norm_kernel": "tilec.kernels.norms",
    "attention": "tilec.kernels.attention",
    "attention_kernel": "tilec.kernels.attention",
}
"""Where each public name lives."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tilec' has no attribute {name!r}")
    # loaded here, not above: the API imports xDSL, llvmlite and cuda-python (~250 ms measured), and
    # `import tilec` (for __version__ or tilec.layout) stays at ~2 ms
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
