"""Launch one kernel with already checked arguments.

Why separate from argument checking: everything here needs the driver
(staging numpy arrays in device memory, ``cuLaunchKernel``, copying outputs
back), while :mod:`args` is pure.  Kernel parameters are packed here as the
C API wants them: an array of pointers, one per parameter, each pointing at
the parameter's bytes.

Two ways to launch:

- :func:`launch`: any checked arguments (numpy arrays are staged), fresh
  ctypes values per call: the general path;
- :class:`ParamBuffer` + :func:`launch_raw`: the per-call fast path. The
  ``void* params[n]`` array and the n 8-byte slots it points at are made once
  per kernel; a call only writes the values into the slots (one
  ``struct.pack_into``, or one store per pointer) and calls the driver.
  ``cuLaunchKernel`` copies the parameter bytes before it returns, so the
  buffer can be rewritten by the next call; a lock keeps two threads from
  writing it at once. :class:`PreparedLaunch` goes one step further for a
  launch repeated with the same shapes (``tilec.matmul``): grid, block,
  shared memory and every scalar are fixed, a call writes the pointers.

A tensor-map parameter (:mod:`tensor_map`) is 128 bytes passed by value:
its ``params`` entry points at a 64-byte aligned copy of the encoded map
(encoded through the map cache). A :class:`PreparedLaunch` re-encodes a map
only when its view's pointer changed since the previous call; the per-call
fast path gets each map's bytes from the cache and :meth:`ParamBuffer.pack`
copies them into the map's slot when they differ from the slot's.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import Any, Sequence

from . import driver
from .args import TENSOR_MAP, Bound, DeviceArg, HostArg, Param, ScalarArg, TensorMapBound
from .tensor_map import MAP_ALIGN, MAP_BYTES, TensorMapSpec, aligned_map_buffer, encode


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


def param_values(bound: Sequence[Bound], staged: dict[int, int], *, kernel: str = "?",
                 device: int = 0) -> list[Any]:
    """The C value of each parameter; ``staged`` maps host-arg index -> device address.

    A tensor map is encoded (cached) over its view's address (the staged copy
    for a numpy view) into a 64-byte aligned 128-byte ctypes buffer.
    """
    out: list[Any] = []
    for b in bound:
        if isinstance(b, ScalarArg):
            out.append(b.value)
        elif isinstance(b, DeviceArg):
            out.append(ctypes.c_uint64(b.info.ptr))
        elif isinstance(b, HostArg):
            out.append(ctypes.c_uint64(staged[b.index]))
        elif isinstance(b, TensorMapBound):
            address = staged.get(b.base, b.value.address) if b.base is not None else b.value.address
            what = f"kernel {kernel!r}, parameter #{b.index} {b.param.name!r}"
            out.append(aligned_map_buffer(encode(b.value.spec, address, what=what, device=device)))
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
        addr, keepalive = pack_params(param_values(bound, staged, kernel=kernel))
        driver.last_launched[0] = kernel
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


# ------------------------------------------------------------ the fast path

SLOT_BYTES = 8
"""Every parameter gets one 8-byte slot (all scalar and pointer types are at most 8 bytes); a tensor
map's entry points at its own 128-byte slot instead (its 8-byte slot is unused)."""

_SLOT_FORMATS = {  # dtype -> struct format of one slot, little-endian, padded to 8 bytes
    "int8": "b7x", "int16": "h6x", "int32": "i4x", "int64": "q",
    "uint8": "B7x", "uint16": "H6x", "uint32": "I4x", "uint64": "Q",
    "float16": "e6x", "float32": "f4x", "float64": "d",
}


def slot_format(param: Param) -> str | None:
    """The ``struct`` format of ``param``'s slot, or None where ``struct`` cannot check and pack it
    exactly as :func:`tilec.runtime.args.bind_arguments` would (bool, bfloat16)."""
    if param.is_pointer:
        return "Q"
    if param.kind == TENSOR_MAP:
        return None
    return _SLOT_FORMATS.get(param.dtype)


class ParamBuffer:
    """``void* params[n]`` pointing at n 8-byte slots, made once per kernel.

    ``packer`` (None when a parameter has no :func:`slot_format`) writes all
    values at once and raises ``struct.error``/``OverflowError`` for a value
    that does not fit its type, like the checked path's range checks.
    ``words`` views the slots as unsigned 64-bit ints, for pointer stores.
    A tensor-map parameter's entry points at a 64-byte aligned 128-byte slot
    of its own (:meth:`map_address`).

    A tensor map has no :func:`slot_format`, so ``packer`` is None for a
    signature with maps; :meth:`pack` then takes each map's encoded 128
    bytes as its value (:meth:`tilec.runtime.args.FastArgs.values` gives
    them), copies them into the map's slot unless that slot already holds
    the same ``bytes`` object (the map cache hands out one object per
    (spec, address): a repeated launch copies nothing), and packs the other
    parameters with a second struct whose ``8s`` item for a map writes the
    first 8 bytes of its value into the map's unused 8-byte slot.
    """

    def __init__(self, signature: Sequence[Param]):
        n = len(signature)
        self._slots = (ctypes.c_uint64 * max(n, 1))()
        base = ctypes.addressof(self._slots)
        addresses = [base + SLOT_BYTES * i for i in range(n)]
        maps = [i for i, p in enumerate(signature) if p.kind == TENSOR_MAP]
        if maps:
            self._maps = (ctypes.c_uint8 * (MAP_BYTES * len(maps) + MAP_ALIGN))()
            first = ctypes.addressof(self._maps) + (-ctypes.addressof(self._maps) % MAP_ALIGN)
            for k, i in enumerate(maps):
                addresses[i] = first + MAP_BYTES * k
        self._addresses = addresses
        self._pointers = (ctypes.c_void_p * max(n, 1))(*addresses)
        self.address: int | None = ctypes.addressof(self._pointers) if n else None
        self.words = memoryview(self._slots).cast("B").cast("Q")
        formats = [slot_format(p) for p in signature]
        self.packer = struct.Struct("<" + "".join(formats)) if all(f is not None for f in formats) else None
        self.lock = threading.Lock()
        self._map_slots = tuple((i, addresses[i]) for i in maps)
        self._written: list[Any] = [None] * len(maps)  # the bytes object each map slot holds
        if maps and all(f is not None for i, f in enumerate(formats) if i not in maps):
            self._map_packer = struct.Struct("<" + "".join("8s" if i in maps else f for i, f in enumerate(formats)))
            self.pack = self._pack_with_maps  # type: ignore[method-assign]

    def map_address(self, index: int) -> int:
        """Where parameter ``index``'s bytes are (a tensor map's 128-byte slot)."""
        return self._addresses[index]

    def pack(self, values: Sequence[Any]) -> None:
        """Write every parameter (pointers as ints, tensor maps as their 128 encoded bytes); the caller
        holds :attr:`lock`."""
        self.packer.pack_into(self._slots, 0, *values)

    def _pack_with_maps(self, values: Sequence[Any]) -> None:
        """:meth:`pack` for a signature with tensor maps (``values[i]``: the map's ``bytes``)."""
        written = self._written
        for k, (i, address) in enumerate(self._map_slots):
            data = values[i]
            if data is not written[k]:
                if type(data) is not bytes or len(data) != MAP_BYTES:
                    raise TypeError(f"parameter #{i}: a tensor map's value must be its {MAP_BYTES} encoded bytes")
                ctypes.memmove(address, data, MAP_BYTES)
                written[k] = data
        self._map_packer.pack_into(self._slots, 0, *values)

    def fill(self, values: Sequence[Any]) -> None:
        """Copy already converted C values (from :func:`param_values`) into the slots."""
        for address, v in zip(self._addresses, values):
            ctypes.memmove(address, ctypes.addressof(v), ctypes.sizeof(v))
        self._written[:] = [None] * len(self._written)  # the map slots hold copies now


_RETRY_ERRORS = frozenset({201, 400, 709})
"""CUDA_ERROR_INVALID_CONTEXT, _INVALID_HANDLE, _CONTEXT_IS_DESTROYED: what a launch returns when
the calling thread does not have the kernel's context current (a new thread, or another context)."""


def launch_raw(cu_launch, function, grid: tuple[int, int, int], block: tuple[int, int, int], shared_mem: int,
               stream: int, params: int | None, device: driver.Device, *, kernel: str) -> None:
    """``cuLaunchKernel`` with packed parameters; the caller holds the buffer's lock.

    The context is not made current before every launch (a driver call each
    time): a launch that fails because this thread has no or another context
    current makes the kernel's context current and is tried once more.
    """
    driver.last_launched[0] = kernel
    result = cu_launch(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem, stream,
                       params, 0)
    if result[0]:
        if int(result[0]) in _RETRY_ERRORS:
            device.make_current()
            result = cu_launch(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_mem,
                               stream, params, 0)
        driver.check(result, "cuLaunchKernel", kernel)


class PreparedLaunch:
    """One launch made ready: function, grid, block, shared memory and every scalar in place.

    Made by :meth:`tilec.runtime.Kernel.prepare` from a fully checked call;
    :meth:`launch` then takes only the pointers (in the order of
    ``pointer_slots``) and a stream handle, so a repeated launch costs a few
    stores and the driver call. The caller vouches that the new pointers are
    arrays of the same kinds (dtype, shape, strides, device) as the checked
    ones, e.g. by keying prepared launches on those facts.

    ``maps``: one :class:`PreparedMap` per tensor map whose view's pointer is
    among the pointers; a call re-encodes (through the cache) the map of a
    view whose pointer changed since the previous call. Without maps,
    :meth:`launch` does exactly what it did before maps existed.
    """

    def __init__(self, kernel: str, function: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
                 shared_mem: int, buffer: ParamBuffer, pointer_slots: Sequence[int], device: driver.Device,
                 maps: Sequence["PreparedMap"] = ()):
        self.kernel = kernel
        self.grid = grid
        self.block = block
        self.shared_mem = shared_mem
        self.pointer_slots = tuple(pointer_slots)
        self._function = function
        self._buffer = buffer
        self._device = device
        self._cu_launch = driver.init().cuLaunchKernel
        self.maps = tuple(maps)
        if self.maps:
            self.launch = self._launch_with_maps  # type: ignore[method-assign]

    def launch(self, stream: int, pointers: Sequence[int]) -> None:
        """Write ``pointers`` into the pointer slots and launch on ``stream`` (a raw handle)."""
        buffer = self._buffer
        with buffer.lock:
            words = buffer.words
            for slot, pointer in zip(self.pointer_slots, pointers):
                words[slot] = pointer
            launch_raw(self._cu_launch, self._function, self.grid, self.block, self.shared_mem, stream,
                       buffer.address, self._device, kernel=self.kernel)

    def _launch_with_maps(self, stream: int, pointers: Sequence[int]) -> None:
        """:meth:`launch` for a kernel with tensor maps: re-encode those whose view moved."""
        buffer = self._buffer
        with buffer.lock:
            words = buffer.words
            for slot, pointer in zip(self.pointer_slots, pointers):
                words[slot] = pointer
            for m in self.maps:
                pointer = pointers[m.position]
                if pointer != m.pointer:
                    ctypes.memmove(m.address, encode(m.spec, pointer, what=m.what, device=self._device.ordinal),
                                   MAP_BYTES)
                    m.pointer = pointer
            launch_raw(self._cu_launch, self._function, self.grid, self.block, self.shared_mem, stream,
                       buffer.address, self._device, kernel=self.kernel)


class PreparedMap:
    """A tensor map of a :class:`PreparedLaunch`: its slot, its spec, which pointer is its view's."""

    __slots__ = ("position", "address", "spec", "pointer", "what")

    def __init__(self, position: int, address: int, spec: TensorMapSpec, pointer: int, what: str):
        self.position = position  # index into the pointers of PreparedLaunch.launch
        self.address = address  # the 128-byte slot in the ParamBuffer
        self.spec = spec
        self.pointer = pointer  # the address the slot's map was encoded for
        self.what = what
