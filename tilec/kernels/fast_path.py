"""Replaying a checked call for new torch tensors of the same kinds: what a launch costs the host.

The user-level entry points (``tilec.matmul``, ``tilec.softmax``, the norms) check their
arguments, plan, compile (cached) and launch: tens of microseconds of Python. A call whose torch
tensors have the class, shape, strides, dtype and device of an earlier successful call, with the
same options, is the same plan: it replays that call's :class:`FastCall`, and only the addresses
(their low four bits decide a kernel's ``tile.aligned_rows``: other bits send the call back to the
checked path) and the stream are new. An output passed by the caller is checked against the inputs
by byte spans (:class:`OutputGuard`): a replay never writes memory an input shares.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from tilec.runtime.args import stream_handle
from tilec.runtime.arrays import is_torch_tensor

LOW_MASK = 15
"""The address bits that, with the shape and strides in the key, decide a kernel's ``tile.aligned_rows``."""
LIMIT = 1024
"""Prepared calls a cache keeps; it is emptied when full (a workload has a few shapes, not thousands)."""


def tensor_key(x: Any) -> tuple | None:
    """What a plan reads from a torch tensor, minus its address; None for other arrays."""
    if not is_torch_tensor(x):
        return None
    try:
        return (type(x), x.shape, x.stride(), x.dtype, x.device)
    except Exception:  # not quite a tensor: the checked path describes it, or says why not
        return None


def _torch_current_stream(torch: Any, device: Any) -> int:
    return torch.cuda.current_stream(device).cuda_stream


def current_stream_of(device: Any) -> Any:
    """A function giving torch's current stream on ``device`` as a raw handle (the cheapest way there is)."""
    torch = sys.modules["torch"]
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is not None and device.index is not None:
        return functools.partial(raw, device.index)
    return functools.partial(_torch_current_stream, torch, device)


def byte_span(x: Any) -> tuple[int, int]:
    """``(lo, hi)``: the bytes a tensor's elements occupy, ``[ptr + lo, ptr + hi)`` (empty for no elements)."""
    item = x.element_size()
    lo = hi = 0
    for n, stride in zip(x.shape, x.stride()):
        if n == 0:
            return 0, 0
        d = (n - 1) * stride * item
        lo, hi = (lo + d, hi) if d < 0 else (lo, hi + d)
    return lo, hi + item


class OutputGuard:
    """Which pointer of a replayed call is the output and the byte spans of all (fixed by the key's
    shapes, strides and dtypes): a replay whose output's bytes meet an input's goes back to the checked
    path, which refuses the overlap or finds that no element is shared, unless the output sits where
    the checked call had it from that input (the same kinds at the same distance share the same
    elements: none, or exactly one in place, as the checked call found)."""

    __slots__ = ("out", "spans", "checked")

    def __init__(self, arrays: list[Any], out: int):
        self.out = out
        self.spans = tuple(byte_span(a) for a in arrays)
        pointers = [a.data_ptr() for a in arrays]
        self.checked = tuple(pointers[out] - p if i != out and self._meet(pointers, i) else None
                             for i, p in enumerate(pointers))

    def _meet(self, pointers, i: int) -> bool:
        lo, hi = self.spans[i]
        lo_o, hi_o = self.spans[self.out]
        p, po = pointers[i], pointers[self.out]
        return lo != hi and lo_o != hi_o and p + lo < po + hi_o and po + lo_o < p + hi

    def meets(self, pointers: tuple[int, ...]) -> bool:
        """Whether the output's bytes may meet an input's at these addresses in a way not checked."""
        po = pointers[self.out]
        for i in range(len(self.spans)):
            if i != self.out and self._meet(pointers, i) and po - pointers[i] != self.checked[i]:
                return True
        return False


class FastCall:
    """A checked call made ready: the kernel's :class:`~tilec.runtime.launch.PreparedLaunch` (grid, block,
    shared memory, extents, strides and scalars in place), the low bits of each address it was
    planned for, how to get torch's current stream, how to allocate the output, and its
    :class:`OutputGuard` (None: the output is always a fresh allocation)."""

    __slots__ = ("prepared", "low_bits", "current_stream", "allocate", "guard")

    def __init__(self, prepared: Any, low_bits: tuple[int, ...], current_stream: Any, allocate: Any,
                 guard: OutputGuard | None = None):
        self.prepared = prepared
        self.low_bits = low_bits
        self.current_stream = current_stream
        self.allocate = allocate
        self.guard = guard

    def launch(self, pointers: tuple[int, ...], stream: Any) -> bool:
        """Launch with ``pointers`` (in the checked call's order) on ``stream`` (None: torch's current);
        False, launching nothing, when an address's low bits differ from the checked call's or the
        output's bytes meet an input's."""
        for pointer, low in zip(pointers, self.low_bits):
            if pointer & LOW_MASK != low:
                return False
        if self.guard is not None and self.guard.meets(pointers):
            return False
        self.prepared.launch(self.current_stream() if stream is None else stream_handle(stream), pointers)
        return True


def prepare(kernel: Any, flat: list[Any], grid: tuple[int, int, int], names: list[str], pointers: list[int],
            device: Any, allocate: Any, guard: OutputGuard | None = None) -> FastCall | None:
    """A :class:`FastCall` of the launch just made of ``kernel`` with ``flat`` (whose gl parameters are
    ``names``, at ``pointers``), or None when the kernel is not one this can replay."""
    runtime = getattr(kernel, "_runtime", None)  # the loaded runtime Kernel, set by the launch just made
    if runtime is None or [g.name for g in kernel.gl_params] != names:
        return None
    defaults = kernel.launch_defaults
    prepared = runtime.prepare(*flat, grid=grid, block=defaults.block, shared_mem=defaults.shared_mem)
    return FastCall(prepared, tuple(p & LOW_MASK for p in pointers), current_stream_of(device), allocate, guard)


class FastCache:
    """Prepared calls by key (see the module docstring); an unhashable key finds nothing."""

    def __init__(self):
        self._calls: dict[tuple, FastCall] = {}

    def get(self, key: tuple | None) -> FastCall | None:
        if key is None:
            return None
        try:
            return self._calls.get(key)
        except TypeError:  # an unhashable option: the checked path says what is wrong with it
            return None

    def put(self, key: tuple, call: FastCall | None) -> None:
        if call is None:
            return
        if len(self._calls) >= LIMIT:
            self._calls.clear()
        try:
            self._calls[key] = call
        except TypeError:
            pass

    def clear(self) -> None:
        self._calls.clear()

    def __len__(self) -> int:
        return len(self._calls)


__all__ = ["LOW_MASK", "FastCache", "FastCall", "OutputGuard", "byte_span", "current_stream_of", "prepare",
           "tensor_key"]
