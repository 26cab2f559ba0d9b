"""The one door to the CUDA driver API (``cuda.bindings.driver``).

Why one module: every driver call goes through :func:`call`, which turns a
non-success ``CUresult`` into a :class:`CudaError` naming the call, the error
and the kernel; ``cuInit`` happens lazily on first use, and a machine with no
driver library, a failing ``cuInit`` or zero devices is reported once, as
:class:`NoDeviceError`, never as a crash at import time.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

from .errors import CudaError, NoDeviceError

_lock = threading.RLock()
# None: not tried yet; otherwise (driver module or None, reason or None).
_init_state: tuple[Any, str | None] | None = None
_devices: dict[int, "Device"] = {}


class DriverLibraryMissing(OSError):
    """The NVIDIA driver library cannot be loaded: this machine has no usable GPU."""


_DRIVER_LIBRARY = {"linux": "libcuda.so.1", "win32": "nvcuda.dll"}


def _import_bindings():
    """Import ``cuda.bindings.driver`` (a seam that tests replace).

    The driver library is loaded first: without it there is nothing to bind,
    and finding that out takes a failed ``dlopen`` (about a millisecond)
    instead of importing cuda-python (30-90 ms, paid by the first
    ``cubin()`` of every process on a machine without a GPU).
    """
    name = _DRIVER_LIBRARY.get(sys.platform)
    if name is not None:
        try:
            ctypes.CDLL(name)
        except OSError as e:
            raise DriverLibraryMissing(str(e)) from None
    from cuda.bindings import driver  # lazy: cuda-python costs 60-90 ms of import (measured), paid only once a driver is there

    return driver


def _bindings_for_names():
    """The bindings that name a CUresult: the driver's once probed, else cuda-python's
    (which names codes without the driver library)."""
    if _init_state and _init_state[0]:
        return _init_state[0]
    try:
        return _import_bindings()
    except DriverLibraryMissing:
        from cuda.bindings import driver  # lazy: cuda-python costs 60-90 ms of import (measured); only to name an error here

        return driver


def _error_text(drv, code) -> tuple[int, str, str]:
    """(number, name, description) of a CUresult, without raising."""
    number = int(code)
    try:
        name = drv.CUresult(number).name
    except Exception:
        name = f"CUresult {number}"
    description = "unknown error"
    try:
        err, text = drv.cuGetErrorName(code)
        if int(err) == 0 and text:
            name = text.decode() if isinstance(text, bytes) else str(text)
        err, text = drv.cuGetErrorString(code)
        if int(err) == 0 and text:
            description = text.decode() if isinstance(text, bytes) else str(text)
    except Exception:
        pass
    return number, name, description


CONTEXT_LOST = frozenset({700, 702, 714, 715, 716, 717, 718, 719, 720})
"""CUDA errors after which the context is unusable (illegal address, launch failure, illegal
instruction, misaligned address, ... : "sticky" errors)."""

last_launched: list[str | None] = [None]
"""The name of the kernel launched last (set by :func:`tilec.runtime.launch.launch_raw`), for the
message of a fault that surfaces later."""


def check(result, call_name: str, kernel: str | None = None):
    """Check a cuda-python return tuple ``(CUresult, *values)``.

    Returns None, the single value, or a tuple of values; raises
    :class:`CudaError` naming ``call_name`` (and ``kernel``) on failure.
    """
    if isinstance(result, tuple):
        code, values = result[0], result[1:]
    else:
        code, values = result, ()
    if int(code) != 0:
        number, name, description = _error_text(_bindings_for_names(), code)
        detail = None
        if number in CONTEXT_LOST:
            last = f"the last kernel launched was {last_launched[0]!r}; " if last_launched[0] else ""
            kernel = kernel or last_launched[0]
            detail = (f"the CUDA context is lost: a kernel faulted ({last}faults surface at the next call that "
                      "waits for the GPU). This error is sticky: every later call in this process fails; restart "
                      "it to use the GPU again, and run the kernel under compute-sanitizer to find the access")
        raise CudaError(call_name, number, name, description, kernel=kernel, detail=detail)
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return values


def _initialize() -> tuple[Any, str | None]:
    try:
        drv = _import_bindings()
    except DriverLibraryMissing as e:
        return None, f"the NVIDIA driver library cannot be loaded ({e})"
    except Exception as e:  # ImportError, or a broken install
        return None, f"cuda-python (cuda.bindings.driver) cannot be imported: {e}"
    try:
        res = drv.cuInit(0)
    except Exception as e:  # the driver library (libcuda) is not there
        return None, f"the NVIDIA driver library cannot be loaded ({type(e).__name__}: {e})"
    code = res[0] if isinstance(res, tuple) else res
    if int(code) != 0:
        number, name, description = _error_text(drv, code)
        return None, f"cuInit failed: {name} ({number}): {description}"
    try:
        res = drv.cuDeviceGetCount()
    except Exception as e:
        return None, f"cuDeviceGetCount raised {type(e).__name__}: {e}"
    if int(res[0]) != 0:
        number, name, description = _error_text(drv, res[0])
        return None, f"cuDeviceGetCount failed: {name} ({number}): {description}"
    if int(res[1]) == 0:
        return None, "the driver reports 0 CUDA devices"
    return drv, None


def _state() -> tuple[Any, str | None]:
    global _init_state
    if _init_state is None:
        with _lock:
            if _init_state is None:
                _init_state = _initialize()
    return _init_state


def init():
    """Initialise the driver once; return the bindings module or raise NoDeviceError."""
    drv, reason = _state()
    if drv is None:
        raise NoDeviceError(reason or "unknown reason")
    return drv


def has_device() -> bool:
    """True when a CUDA device can be used; never raises."""
    try:
        return _state()[0] is not None
    except Exception:
        return False


def no_device_reason() -> str | None:
    """Why there is no device (None when there is one); never raises."""
    try:
        return _state()[1]
    except Exception as e:
        return f"driver probe raised {type(e).__name__}: {e}"


def _reset_for_tests() -> None:
    """Forget the probe result and the device table (tests only)."""
    global _init_state
    with _lock:
        _init_state = None
        _devices.clear()


def call(name: str, *args, kernel: str | None = None):
    """Call driver function ``name`` with ``args`` and check its result."""
    drv = init()
    return check(getattr(drv, name)(*args), name, kernel)


def driver_version() -> int | None:
    """The driver's CUDA version as an int (e.g. 12040), or None without a driver."""
    try:
        drv = init()
        return int(check(drv.cuDriverGetVersion(), "cuDriverGetVersion"))
    except Exception:
        return None


def device_count() -> int:
    """Number of CUDA devices (0 without a driver); never raises."""
    try:
        drv = init()
        return int(check(drv.cuDeviceGetCount(), "cuDeviceGetCount"))
    except Exception:
        return 0


@dataclass
class Device:
    """One CUDA device and its (retained) primary context.

    The primary context is the one torch and cupy use too, so pointers they
    hand us are valid in it.
    """

    ordinal: int
    handle: Any
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    max_threads_per_block: int
    max_shared_per_block: int
    max_shared_per_block_optin: int
    _context: Any = field(default=None, repr=False)

    @property
    def arch(self) -> str:
        """The ptxas/JIT architecture name, e.g. ``sm_90``."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}"

    @property
    def context(self):
        """The device's primary context, retained on first use."""
        if self._context is None:
            with _lock:
                if self._context is None:
                    self._context = call("cuDevicePrimaryCtxRetain", self.handle)
        return self._context

    def make_current(self) -> None:
        """Bind the primary context to the calling thread."""
        call("cuCtxSetCurrent", self.context)

    def synchronize(self) -> None:
        """Wait for all work on this device's context."""
        self.make_current()
        call("cuCtxSynchronize")


def _attribute(drv, dev, attr_name: str) -> int:
    attr = getattr(drv.CUdevice_attribute, attr_name)
    return int(check(drv.cuDeviceGetAttribute(attr, dev), "cuDeviceGetAttribute"))


def get_device(ordinal: int = 0) -> Device:
    """The :class:`Device` for ``ordinal`` (default 0); raises NoDeviceError without one."""
    drv = init()
    with _lock:
        dev = _devices.get(ordinal)
        if dev is not None:
            return dev
        count = int(check(drv.cuDeviceGetCount(), "cuDeviceGetCount"))
        if not 0 <= ordinal < count:
            raise NoDeviceError(f"device ordinal {ordinal} requested, but there are {count} device(s)")
        handle = check(drv.cuDeviceGet(ordinal), "cuDeviceGet")
        raw_name = check(drv.cuDeviceGetName(256, handle), "cuDeviceGetName")
        name = raw_name.split(b"\0", 1)[0].decode(errors="replace") if isinstance(raw_name, bytes) else str(raw_name)
        A = "CU_DEVICE_ATTRIBUTE_"
        dev = Device(
            ordinal=ordinal,
            handle=handle,
            name=name,
            compute_capability=(
                _attribute(drv, handle, A + "COMPUTE_CAPABILITY_MAJOR"),
                _attribute(drv, handle, A + "COMPUTE_CAPABILITY_MINOR"),
            ),
            sm_count=_attribute(drv, handle, A + "MULTIPROCESSOR_COUNT"),
            max_threads_per_block=_attribute(drv, handle, A + "MAX_THREADS_PER_BLOCK"),
            max_shared_per_block=_attribute(drv, handle, A + "MAX_SHARED_MEMORY_PER_BLOCK"),
            max_shared_per_block_optin=_attribute(drv, handle, A + "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        )
        _devices[ordinal] = dev
        return dev
