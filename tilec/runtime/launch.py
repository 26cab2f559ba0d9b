"""Launch one kernel with already checked arguments.

Why separate from argument checking: everything here needs the driver
(staging numpy arrays in device memory, ``cuLaunchKernel``, copying outputs
back), while :mod:`args` is pure.  Kernel parameters are packed here as the
C API wants them: an array of pointers, one per parameter, each pointing at
the parameter's bytes.
"""

from __future__ import annotations

import ctypes
from typing import Any, Sequence

from . import driver
from .args import Bound, DeviceArg, HostArg, ScalarArg


def pack_params(values: Sequence[ctypes._SimpleCData]) -> tuple[int | None, Any]:
    """Build ``void* params[n]`` pointing at each value.

    Returns (address of the array or None when there are no parameters, an
    object that must stay alive until ``cuLaunchKernel`` returns).
    """
    values = list(values)
    if not values:
        return None, None
    array = (ctypes.c_void_p * len(values))(*(ctypes.addressof(v) for v in values))
    return ctypes.addressof(array), (array, values)


def param_values(bound: Sequence[Bound], staged: dict[int, int]) -> list[ctypes._SimpleCData]:
    """The C value of each parameter; ``staged`` maps host-arg index -> device address."""
    out: list[ctypes._SimpleCData] = []
    for b in bound:
        if isinstance(b, ScalarArg):
            out.append(b.value)
        elif isinstance(b, DeviceArg):
            out.append(ctypes.c_uint64(b.info.ptr))
        elif isinstance(b, HostArg):
            out.append(ctypes.c_uint64(staged[b.index]))
        else:  # pragma: no cover - bind_arguments makes only these
            raise TypeError(f"unexpected bound argument {b!r}")
    return out


def launch(function, bound: Sequence[Bound], grid: tuple[int, int, int], block: tuple[int, int, int],
           shared_mem: int, stream: int, *, kernel: str) -> None:
    """Launch ``function`` on ``stream`` (the caller made the context current).

    numpy arguments are copied into fresh device memory first; those marked
    as outputs are copied back after the kernel, then the stream is
    synchronised and the memory freed.  With only device arrays the launch is
    asynchronous, like any CUDA launch.
    """
    staged: dict[int, int] = {}
    allocations: list[tuple[HostArg, Any, int]] = []
    ok = False
    try:
        for b in bound:
            if isinstance(b, HostArg):
                span = b.info.span_bytes()
                dptr = driver.call("cuMemAlloc", max(span, 1), kernel=kernel)
                allocations.append((b, dptr, span))
                staged[b.index] = int(dptr)
                if span:
                    driver.call("cuMemcpyHtoDAsync", dptr, b.info.ptr, span, stream, kernel=kernel)
        addr, keepalive = pack_params(param_values(bound, staged))
        driver.call("cuLaunchKernel", function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                    shared_mem, stream, addr, 0, kernel=kernel)
        del keepalive  # the driver copied the parameter bytes
        if allocations:
            for b, dptr, span in allocations:
                if b.param.is_output and span:
                    driver.call("cuMemcpyDtoHAsync", b.info.ptr, dptr, span, stream, kernel=kernel)
            driver.call("cuStreamSynchronize", stream, kernel=kernel)
        ok = True
    finally:
        if allocations:
            if not ok:
                try:
                    driver.call("cuStreamSynchronize", stream, kernel=kernel)
                except Exception:
                    pass
            for _, dptr, _ in allocations:
                try:
                    driver.call("cuMemFree", dptr, kernel=kernel)
                except Exception:
                    if ok:
                        raise
