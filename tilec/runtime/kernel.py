"""A loadable, launchable GPU kernel: code image + entry name + signature.

Why: the compiler hands over PTX (or a cubin), the entry name and the
parameter list; a :class:`Kernel` turns that into something callable like a
Python function, compiling once through the cubin cache, loading lazily on
first launch, opting in to more than 48 KB of dynamic shared memory when
asked, and checking every argument before the driver sees it.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from . import args as _args
from . import driver, jit
from .args import Bound, FastArgs, HostArg, Param, TensorMapBound
from .cache import CubinCache, cache_key, default_cache
from .errors import LaunchConfigError, PtxasError
from .launch import ParamBuffer, PreparedLaunch, PreparedMap, launch_raw, param_values
from .launch import launch as _launch

_ELF_MAGIC = b"\x7fELF"


@dataclass
class _Loaded:
    module: Any
    function: Any
    static_shared: int
    max_dynamic_shared: int  # the function's current opt-in limit


_MAX_DIMS = 64  # launch shapes remembered per kernel by the fast path


class _FastPath:
    """What a repeated :meth:`Kernel.launch` needs, made after the first checked launch.

    The function handle, its device, the driver's ``cuLaunchKernel``, one
    :class:`ParamBuffer`, the :class:`FastArgs` check, and the (grid, block)
    values already normalised by a checked launch. A tensor-map parameter's
    value comes out of :meth:`FastArgs.values` as its encoded 128 bytes
    (checked against its view's pointer in the same call, from the map
    cache), which :meth:`ParamBuffer.pack` copies into the map's slot.
    :meth:`launch` answers False whenever the call is not one it can check
    (the caller then takes the checked path, which raises the precise error
    or stages numpy arrays).
    A grid or block is looked up by equality, so one equal to a checked one
    (``2.0`` for ``2``) launches as that one instead of raising.
    """

    def __init__(self, kernel: "Kernel", loaded: _Loaded, device: driver.Device, check: FastArgs):
        self.name = kernel.name
        self.loaded = loaded
        self.device = device
        self.check = check
        self.buffer = ParamBuffer(kernel.signature)
        self.dims: dict[tuple, tuple] = {}
        self.cu_launch = driver.init().cuLaunchKernel

    def remember_dims(self, grid, block, dims: tuple) -> None:
        try:
            if len(self.dims) < _MAX_DIMS:
                self.dims[(grid, block)] = dims
        except TypeError:  # a list: unhashable, normalised on every call
            pass

    def launch(self, args, grid, block, shared_mem, stream) -> bool:
        try:
            dims = self.dims.get((grid, block))
        except TypeError:
            return False
        if dims is None or type(shared_mem) is not int or not 0 <= shared_mem <= self.loaded.max_dynamic_shared:
            return False
        values = self.check.values(args)
        if values is None:
            return False
        handle = stream if type(stream) is int else _args.stream_handle(stream)
        buffer = self.buffer
        with buffer.lock:
            try:
                buffer.pack(values)
            except (struct.error, OverflowError):  # out of range: the checked path says which
                return False
            launch_raw(self.cu_launch, self.loaded.function, dims[0], dims[1], shared_mem, handle,
                       buffer.address, self.device, kernel=self.name)
        return True


class Kernel:
    """A kernel made from PTX or a cubin, its entry ``name`` and ``signature``.

    ``image`` is PTX text (str or bytes) or a cubin (bytes starting with the
    ELF magic).  PTX is compiled on first need with ``backend`` (``auto``:
    ptxas when it is found, for the device's arch on a GPU, else the driver
    JIT; :func:`tilec.runtime.jit.resolve_backend`) through ``cache`` (None: the
    default on-disk cache, False: no cache); ``ir``/``pipeline`` let the
    compiler put its own inputs into the cache key.

    Call it as ``kernel(*args, grid=..., block=..., shared_mem=0, stream=None)``.
    """

    def __init__(self, image: str | bytes, name: str, signature: Sequence[Param], *,
                 device: int = 0, backend: str = "auto", cache: CubinCache | None | bool = None,
                 ir: str | None = None, pipeline: str = "", opt_level: int | None = None):
        if not isinstance(name, str) or not name:
            raise ValueError(f"kernel name must be a non-empty str, got {name!r}")
        sig = tuple(signature)
        for i, p in enumerate(sig):
            if not isinstance(p, Param):
                raise TypeError(f"kernel {name!r}: signature entry #{i} must be a Param, got {type(p).__name__}")
        names = [p.name for p in sig]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"kernel {name!r}: duplicate parameter names {dupes}")
        for i, p in enumerate(sig):
            if p.is_tensor_map and p.view_index is not None and not (
                    p.view_index < len(sig) and sig[p.view_index].is_pointer):
                raise ValueError(f"kernel {name!r}: tensor map #{i} {p.name!r} names parameter #{p.view_index} "
                                 "as its view's pointer, which is not a pointer parameter")
        if isinstance(image, (bytes, bytearray, memoryview)) and bytes(image[:4]) == _ELF_MAGIC:
            self._cubin: bytes | None = bytes(image)
            self._ptx: str | None = None
        elif isinstance(image, (str, bytes, bytearray)):
            self._cubin = None
            self._ptx = image if isinstance(image, str) else bytes(image).decode()
        else:
            raise TypeError(f"kernel {name!r}: image must be PTX text or cubin bytes, got {type(image).__name__}")
        self.name = name
        self.signature = sig
        self.device_ordinal = int(device)
        self.backend = backend
        self.opt_level = opt_level
        self._cache = cache
        self._ir = ir
        self._pipeline = pipeline
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()
        self._fast: _FastPath | None = None
        self._fast_checked = False  # whether the fast path was set up (or found impossible)

    @classmethod
    def from_ptx(cls, ptx: str | bytes, name: str, signature: Sequence[Param], **kwargs) -> "Kernel":
        return cls(ptx, name, signature, **kwargs)

    @classmethod
    def from_cubin(cls, cubin: bytes, name: str, signature: Sequence[Param], **kwargs) -> "Kernel":
        if bytes(cubin[:4]) != _ELF_MAGIC:
            raise ValueError(f"kernel {name!r}: not a cubin (no ELF header)")
        return cls(cubin, name, signature, **kwargs)

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.describe()}" for p in self.signature)
        src = "cubin" if self._cubin is not None else "ptx"
        return f"Kernel({self.name}({params}), {src})"

    @property
    def ptx(self) -> str | None:
        return self._ptx

    # -------------------------------------------------------------- compile

    def _resolved_cache(self) -> CubinCache | None:
        if self._cache is False:
            return None
        if self._cache is None or self._cache is True:
            return default_cache()
        return self._cache

    def cubin(self, arch: str | None = None, backend: str | None = None) -> bytes:
        """The cubin: given, or compiled from the PTX (through the cache).

        ``arch`` matters only for ptxas; the driver JIT compiles for the device.
        ``backend`` overrides the kernel's own (``ptxas`` with an ``arch``
        builds for that target without touching a GPU).
        """
        if self._cubin is not None:
            return self._cubin
        ptx = self._ptx
        requested = backend or self.backend
        backend, arch, compiler = jit.resolve_backend(requested, arch, self.device_ordinal,
                                                      jit.ptx_target(ptx) if ptx is not None else None)

        def build() -> bytes:
            try:
                return jit.compile_ptx(ptx, backend=backend, arch=arch, device=self.device_ordinal,
                                       kernel=self.name, opt_level=self.opt_level)
            except PtxasError:
                # ``auto`` took ptxas; one that cannot build this PTX (older than the driver, say)
                # leaves the device's own compiler, which builds for the same arch
                if requested != "auto" or backend != "ptxas" or not driver.has_device():
                    raise
                return jit.compile_ptx(ptx, backend="driver", device=self.device_ordinal, kernel=self.name,
                                       opt_level=self.opt_level)

        cache = self._resolved_cache()
        if cache is None:
            return build()
        extra = {"kernel": self.name, "opt_level": self.opt_level}
        if self._ir is not None:
            extra["ptx_sha256"] = hashlib.sha256(ptx.encode()).hexdigest()
        key = cache_key(ir=self._ir if self._ir is not None else ptx, pipeline=self._pipeline,
                        arch=arch, compiler=compiler, extra=extra)
        return cache.get_or_build(key, build)

    # ----------------------------------------------------------------- load

    def load(self) -> Any:
        """Load the module on the device (once) and return the ``CUfunction``."""
        return self._load(driver.get_device(self.device_ordinal)).function

    def _load(self, dev: driver.Device) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        with self._lock:
            if self._loaded is not None:
                return self._loaded
            dev.make_current()
            image = self.cubin()
            module = driver.call("cuModuleLoadData", image, kernel=self.name)
            function = driver.call("cuModuleGetFunction", module, self.name.encode(), kernel=self.name)
            drv = driver.init()
            attr = drv.CUfunction_attribute
            static = driver.call("cuFuncGetAttribute", attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                 function, kernel=self.name)
            dynamic = driver.call("cuFuncGetAttribute", attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  function, kernel=self.name)
            self._loaded = _Loaded(module, function, int(static), int(dynamic))
            return self._loaded

    def attributes(self) -> dict[str, int]:
        """Registers, static shared memory, local memory, max threads of the loaded function."""
        loaded = self._load(driver.get_device(self.device_ordinal))
        attr = driver.init().CUfunction_attribute
        names = {
            "num_regs": attr.CU_FUNC_ATTRIBUTE_NUM_REGS,
            "static_shared_bytes": attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "local_bytes": attr.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
            "max_threads_per_block": attr.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            "max_dynamic_shared_bytes": attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        }
        return {k: int(driver.call("cuFuncGetAttribute", a, loaded.function, kernel=self.name))
                for k, a in names.items()}

    def max_active_clusters(self, block, shared_mem: int = 0, cluster=(1, 1, 1)) -> int:
        """How many of this kernel's thread-block clusters (its cubin's ``.reqnctapercluster``) the GPU
        runs at once with ``block`` threads and ``shared_mem`` dynamic bytes a block
        (``cuOccupancyMaxActiveClusters``): a persistent kernel launches no more (the rest would
        wait for a whole cluster of SMs in one GPC to free up)."""
        dev = driver.get_device(self.device_ordinal)
        loaded = self._load(dev)
        dev.make_current()
        smem = _args.normalize_shared_mem(shared_mem)
        self._ensure_shared_mem(loaded, dev, smem)
        drv = driver.init()
        config = drv.CUlaunchConfig()
        config.gridDimX, config.gridDimY, config.gridDimZ = _args.normalize_dims(cluster, "grid")  # one cluster
        config.blockDimX, config.blockDimY, config.blockDimZ = _args.normalize_dims(block, "block")
        config.sharedMemBytes = smem
        config.numAttrs = 0
        return int(driver.call("cuOccupancyMaxActiveClusters", loaded.function, config, kernel=self.name))

    def _ensure_shared_mem(self, loaded: _Loaded, dev: driver.Device, shared_mem: int) -> None:
        total = shared_mem + loaded.static_shared
        limit = dev.max_shared_per_block_optin
        if total > limit:
            raise LaunchConfigError(
                f"kernel {self.name!r}: {shared_mem} bytes of dynamic shared memory + {loaded.static_shared} "
                f"static = {total} bytes per block, more than the device's opt-in maximum of {limit} bytes "
                f"({dev.name}, {dev.arch})"
            )
        if shared_mem > loaded.max_dynamic_shared:
            drv = driver.init()
            driver.call("cuFuncSetAttribute", loaded.function,
                        drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        shared_mem, kernel=self.name)
            loaded.max_dynamic_shared = shared_mem

    # --------------------------------------------------------------- launch

    def validate(self, *args, stream=None) -> list[Bound]:
        """Check ``args`` against the signature without touching the driver."""
        return _args.bind_arguments(self.name, self.signature, args, device=self.device_ordinal,
                                    stream=_args.stream_handle(stream))

    def launch(self, *args, grid, block, shared_mem: int = 0, stream=None) -> None:
        """Check the arguments and launch on ``grid`` x ``block`` threads.

        All argument and configuration errors are raised before the driver is
        touched; without a GPU, a valid call raises :class:`NoDeviceError`.
        After the first launch, calls with torch tensors, Python numbers and
        tensor maps (``TensorMapArg``) take a fast path that checks the same
        facts per call (see :class:`~tilec.runtime.args.FastArgs`) and packs
        them into one prepared buffer; anything else takes the checked path.
        """
        fast = self._fast
        if fast is not None and fast.launch(args, grid, block, shared_mem, stream):
            return
        self._launch_checked(args, grid, block, shared_mem, stream)

    __call__ = launch

    def _launch_checked(self, args, grid, block, shared_mem, stream) -> None:
        handle = _args.stream_handle(stream)
        bound = _args.bind_arguments(self.name, self.signature, args, device=self.device_ordinal, stream=handle)
        grid3 = _args.normalize_dims(grid, "grid")
        block3 = _args.normalize_dims(block, "block")
        smem = _args.normalize_shared_mem(shared_mem)
        dev = driver.get_device(self.device_ordinal)  # NoDeviceError from here on
        loaded = self._load(dev)
        dev.make_current()
        self._ensure_shared_mem(loaded, dev, smem)
        _launch(loaded.function, bound, grid3, block3, smem, handle, kernel=self.name)
        if not self._fast_checked:
            check = FastArgs.for_signature(self.signature, self.device_ordinal)
            self._fast = None if check is None else _FastPath(self, loaded, dev, check)
            self._fast_checked = True
        if self._fast is not None:
            self._fast.remember_dims(grid, block, (grid3, block3))

    def prepare(self, *args, grid, block, shared_mem: int = 0) -> PreparedLaunch:
        """Check a launch once and make it repeatable with new pointers only.

        ``args`` are checked as by :meth:`launch` (device arrays only: there is
        nothing to stage in a prepared launch), the function is loaded and its
        shared memory set up; the result's ``launch(stream, pointers)``
        rewrites the pointer parameters, in signature order, and launches.
        Why: ``tilec.matmul`` repeats a call with the same shapes; everything
        but the addresses is then known to be valid. A tensor map follows its
        view's pointer (``Param.view_index``): it is re-encoded when that
        pointer changes; a map without ``view_index`` stays as prepared.
        """
        bound = _args.bind_arguments(self.name, self.signature, args, device=self.device_ordinal)
        staged = [b for b in bound if isinstance(b, HostArg)]
        if staged:
            raise ValueError(f"kernel {self.name!r}: a prepared launch takes device arrays only; "
                             f"parameter #{staged[0].index} {staged[0].param.name!r} is a numpy array")
        grid3 = _args.normalize_dims(grid, "grid")
        block3 = _args.normalize_dims(block, "block")
        smem = _args.normalize_shared_mem(shared_mem)
        dev = driver.get_device(self.device_ordinal)
        loaded = self._load(dev)
        dev.make_current()
        self._ensure_shared_mem(loaded, dev, smem)
        buffer = ParamBuffer(self.signature)
        buffer.fill(param_values(bound, {}, kernel=self.name, device=self.device_ordinal))
        slots = [i for i, p in enumerate(self.signature) if p.is_pointer]
        maps = [PreparedMap(slots.index(b.base), buffer.map_address(b.index), b.value.spec, b.value.address,
                            f"kernel {self.name!r}, parameter #{b.index} {b.param.name!r}")
                for b in bound if isinstance(b, TensorMapBound) and b.base is not None]
        return PreparedLaunch(self.name, loaded.function, grid3, block3, smem, buffer, slots, dev, maps)
