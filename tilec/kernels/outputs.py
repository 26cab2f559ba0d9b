"""Outputs of the user-level kernels: allocated like an input, launched on its library's stream."""

from __future__ import annotations

from typing import Any

import numpy as np

from tilec.kernels.gemm_plan import array_library


def allocate_like(like: Any, shape: tuple[int, ...], dtype: str, owner: str) -> Any:
    """An uninitialised ``shape`` array of ``dtype`` from ``like``'s library and device."""
    lib = array_library(like)
    if lib == "torch":
        # optional: torch is installed when an input is a torch tensor
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if dtype == "bfloat16":
        raise TypeError(f"{owner}: {lib} has no bfloat16: pass out= a bf16 device array or another dtype")
    if lib == "cupy":
        # optional: cupy is installed when an input is a cupy array
        import cupy

        return cupy.empty(shape, dtype)
    return np.empty(shape, dtype)


def torch_stream(like: Any) -> int | None:
    """torch's current stream for a torch input (so the launch orders with torch's work), else None."""
    if array_library(like) != "torch":
        return None
    # optional: torch is installed when an input is a torch tensor
    import torch

    return torch.cuda.current_stream(like.device).cuda_stream
