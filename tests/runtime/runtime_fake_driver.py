"""A CPU stand-in for ``cuda.bindings.driver``, to run the GPU code paths anywhere.

Why: the launcher, loader, JIT and shared-memory logic talk to the driver;
without a GPU those lines would never run in CI.  This fake keeps the real
enums, checks every call's arity against the real binding's signature (and,
where the real driver library is absent, lets the real binding convert the
arguments first, so a wrong argument type fails here as it would on a GPU),
"allocates" device memory in host memory, and emulates the test kernels.
"""

from __future__ import annotations

import ctypes
import inspect
import re
import struct
from collections.abc import Iterator
from contextlib import contextmanager

_ENTRY_RE = re.compile(rb"\.entry\s+(\w+)\s*\(")
_CUBIN_ENTRY_RE = re.compile(rb"\.text\.([A-Za-z_]\w*)\0")
"""Kernels of a real cubin (ptxas's, which the runtime prefers to the JIT): their ``.text.NAME`` sections."""


def _real_library_missing(real) -> bool:
    try:
        real.cuDriverGetVersion()
    except Exception as e:  # DynamicLibNotFoundError: no libcuda on this machine
        return "DynamicLibNotFound" in type(e).__name__
    return False


class FakeDriver:
    """Enough of the driver API for tilec.runtime, over host memory."""

    def __init__(self, real, *, optin: int = 232448, cc=(9, 0), driver_version: int = 13000):
        self._real = real
        self._probe_conversions = _real_library_missing(real)
        self.CUresult = real.CUresult
        self.CUjit_option = real.CUjit_option
        self.CUjitInputType = real.CUjitInputType
        self.CUfunction_attribute = real.CUfunction_attribute
        self.CUdevice_attribute = real.CUdevice_attribute
        for name in ("CUtensorMapDataType", "CUtensorMapInterleave", "CUtensorMapSwizzle", "CUtensorMapL2promotion",
                     "CUtensorMapFloatOOBfill", "cuuint32_t", "cuuint64_t"):
            setattr(self, name, getattr(real, name))
        self.tensor_maps: list[dict] = []  # the arguments of each cuTensorMapEncodeTiled, as plain ints
        self.context_current = True  # False: cuTensorMapEncodeTiled fails until cuCtxSetCurrent
        self.optin = optin
        self.cc = cc
        self.version = driver_version
        self.calls: list[str] = []
        self.memory: dict[int, ctypes.Array] = {}
        self.links: dict[int, dict] = {}
        self.modules: dict[int, list[bytes]] = {}
        self.functions: dict[int, dict] = {}
        self.launches: list[dict] = []
        self.fail_launch_with = None
        self._next = 0x100
        self._keep: list = []

    # ---------------------------------------------------------- plumbing

    def _handle(self) -> int:
        self._next += 1
        return self._next

    def _enter(self, name: str, args: tuple) -> None:
        real = getattr(self._real, name)
        inspect.signature(real).bind(*args)  # arity as the real binding has it
        if self._probe_conversions:
            try:
                real(*args)
            except Exception as e:
                if "DynamicLibNotFound" not in type(e).__name__:
                    raise AssertionError(f"real {name} rejected the arguments: {type(e).__name__}: {e}") from e
        self.calls.append(name)

    def _ok(self, *values):
        return (self.CUresult.CUDA_SUCCESS, *values)

    def _err(self, name: str):
        return (getattr(self.CUresult, name),)

    def count(self, name: str) -> int:
        return self.calls.count(name)

    # ------------------------------------------------------------ errors

    def cuGetErrorName(self, code):
        self._enter("cuGetErrorName", (code,))
        return self._ok(self.CUresult(int(code)).name.encode())

    def cuGetErrorString(self, code):
        self._enter("cuGetErrorString", (code,))
        return self._ok(b"fake driver: " + self.CUresult(int(code)).name.lower().encode())

    # ------------------------------------------------------ init, device

    def cuInit(self, flags):
        self._enter("cuInit", (flags,))
        return self._ok()

    def cuDriverGetVersion(self):
        self.calls.append("cuDriverGetVersion")
        return self._ok(self.version)

    def cuDeviceGetCount(self):
        self._enter("cuDeviceGetCount", ())
        return self._ok(1)

    def cuDeviceGet(self, ordinal):
        self._enter("cuDeviceGet", (ordinal,))
        return self._ok(self._real.CUdevice(ordinal))

    def cuDeviceGetName(self, length, dev):
        self._enter("cuDeviceGetName", (length, dev))
        return self._ok(b"Fake GPU".ljust(length, b"\0"))

    def cuDeviceGetAttribute(self, attr, dev):
        self._enter("cuDeviceGetAttribute", (attr, dev))
        A = self.CUdevice_attribute
        table = {
            A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: self.cc[0],
            A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: self.cc[1],
            A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 132,
            A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
            A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: 49152,
            A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: self.optin,
        }
        return self._ok(table[attr])

    def cuDevicePrimaryCtxRetain(self, dev):
        self._enter("cuDevicePrimaryCtxRetain", (dev,))
        return self._ok(self._real.CUcontext(0xC0))

    def cuCtxSetCurrent(self, ctx):
        self._enter("cuCtxSetCurrent", (ctx,))
        self.context_current = True
        return self._ok()

    def cuCtxSynchronize(self):
        self._enter("cuCtxSynchronize", ())
        return self._ok()

    # --------------------------------------------------------------- JIT

    def cuLinkCreate(self, n, keys, values):
        self._enter("cuLinkCreate", (n, keys, values))
        assert n == len(keys) == len(values)
        opts = dict(zip(keys, values))
        h = self._handle()
        self.links[h] = {"err": opts[self.CUjit_option.CU_JIT_ERROR_LOG_BUFFER],
                         "info": opts[self.CUjit_option.CU_JIT_INFO_LOG_BUFFER], "ptx": b""}
        return self._ok(self._real.CUlinkState(h))

    def cuLinkAddData(self, state, kind, data, size, name, n, keys, values):
        self._enter("cuLinkAddData", (state, kind, data, size, name, n, keys, values))
        link = self.links[int(state)]
        assert data.endswith(b"\0") and size == len(data), "PTX must be NUL-terminated and sized"
        if b"%rd_undeclared" in data:
            msg = b"ptxas application ptx input, line 10; error   : Unknown symbol '%rd_undeclared'\0"
            link["err"][: len(msg)] = msg
            return self._err("CUDA_ERROR_INVALID_PTX")
        link["ptx"] += data.rstrip(b"\0")
        return self._ok()

    def cuLinkComplete(self, state):
        self._enter("cuLinkComplete", (state,))
        image = b"\x7fELF-fake-cubin\n" + self.links[int(state)]["ptx"]
        buf = ctypes.create_string_buffer(image, len(image))
        self.links[int(state)]["image"] = buf  # owned by the link state, like the real one
        return self._ok(ctypes.addressof(buf), len(image))

    def cuLinkDestroy(self, state):
        self._enter("cuLinkDestroy", (state,))
        link = self.links.pop(int(state))
        if "image" in link:  # scribble over the image: callers must have copied it
            ctypes.memset(link["image"], 0, len(link["image"]))
        return self._ok()

    # ------------------------------------------------------------ modules

    def cuModuleLoadData(self, image):
        self._enter("cuModuleLoadData", (image,))
        image = bytes(image)
        if not image.startswith(b"\x7fELF"):
            return self._err("CUDA_ERROR_INVALID_IMAGE")
        h = self._handle()
        self.modules[h] = _ENTRY_RE.findall(image) or _CUBIN_ENTRY_RE.findall(image)
        return self._ok(self._real.CUmodule(h))

    def cuModuleGetFunction(self, module, name):
        self._enter("cuModuleGetFunction", (module, name))
        if name not in self.modules[int(module)]:
            return self._err("CUDA_ERROR_NOT_FOUND")
        h = self._handle()
        self.functions[h] = {"name": name.decode(), "max_dynamic_shared": 49152}
        return self._ok(self._real.CUfunction(h))

    def cuFuncGetAttribute(self, attr, func):
        self._enter("cuFuncGetAttribute", (attr, func))
        F = self.CUfunction_attribute
        f = self.functions[int(func)]
        table = {
            F.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: 0,
            F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: f["max_dynamic_shared"],
            F.CU_FUNC_ATTRIBUTE_NUM_REGS: 16,
            F.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: 0,
            F.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: 1024,
        }
        return self._ok(table[attr])

    def cuFuncSetAttribute(self, func, attr, value):
        self._enter("cuFuncSetAttribute", (func, attr, value))
        assert attr == self.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
        if value > self.optin:
            return self._err("CUDA_ERROR_INVALID_VALUE")
        self.functions[int(func)]["max_dynamic_shared"] = int(value)
        return self._ok()

    # ------------------------------------------------------------- memory

    def cuMemAlloc(self, size):
        self._enter("cuMemAlloc", (size,))
        if size == 0:
            return self._err("CUDA_ERROR_INVALID_VALUE")
        buf = (ctypes.c_uint8 * (size + 256))()
        addr = (ctypes.addressof(buf) + 255) & ~255  # cuMemAlloc aligns to 256
        self.memory[addr] = buf
        return self._ok(self._real.CUdeviceptr(addr))

    def cuMemFree(self, ptr):
        self._enter("cuMemFree", (ptr,))
        if self.memory.pop(int(ptr), None) is None:
            return self._err("CUDA_ERROR_INVALID_VALUE")
        return self._ok()

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        self._enter("cuMemcpyHtoDAsync", (dst, src, n, stream))
        ctypes.memmove(int(dst), int(src), n)
        return self._ok()

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        self._enter("cuMemcpyDtoHAsync", (dst, src, n, stream))
        ctypes.memmove(int(dst), int(src), n)
        return self._ok()

    def cuStreamSynchronize(self, stream):
        self._enter("cuStreamSynchronize", (stream,))
        return self._ok()

    # -------------------------------------------------------- tensor maps

    def cuTensorMapEncodeTiled(self, dtype, rank, address, dims, strides, box, element_strides, interleave, swizzle,
                               l2, oob):
        args = (dtype, rank, address, dims, strides, box, element_strides, interleave, swizzle, l2, oob)
        self._enter("cuTensorMapEncodeTiled", args)
        if not self.context_current:
            return self._err("CUDA_ERROR_INVALID_CONTEXT")
        record = {"dtype": dtype, "rank": rank, "address": int(address), "dims": [int(d) for d in dims],
                  "strides": [int(s) for s in strides], "box": [int(b) for b in box],
                  "element_strides": [int(e) for e in element_strides], "interleave": interleave,
                  "swizzle": swizzle, "l2": l2, "oob": oob}
        self.tensor_maps.append(record)
        if 0 in record["dims"] or int(address) % 16:
            return self._err("CUDA_ERROR_INVALID_VALUE")
        tensor_map = self._real.CUtensorMap()
        ctypes.memmove(tensor_map.getPtr(), fake_map_bytes(record), 128)
        return self._ok(tensor_map)

    # ------------------------------------------------------------- launch

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        self._enter("cuLaunchKernel", (f, gx, gy, gz, bx, by, bz, smem, stream, params, extra))
        if self.fail_launch_with:
            return self._err(self.fail_launch_with)
        func = self.functions[int(f)]
        if smem > func["max_dynamic_shared"]:
            return self._err("CUDA_ERROR_INVALID_VALUE")
        self.launches.append({"name": func["name"], "grid": (gx, gy, gz), "block": (bx, by, bz),
                              "shared_mem": smem, "stream": stream})
        emulate = getattr(self, "_run_" + func["name"], None)
        if emulate is None:
            return self._ok()
        ptrs = (ctypes.c_void_p * 8).from_address(params)
        return emulate(ptrs, (gx, gy, gz), (bx, by, bz), smem)

    def _run_axpy(self, p, grid, block, smem):
        x = ctypes.c_uint64.from_address(p[0]).value
        y = ctypes.c_uint64.from_address(p[1]).value
        out = ctypes.c_uint64.from_address(p[2]).value
        alpha = ctypes.c_float.from_address(p[3]).value
        n = ctypes.c_int32.from_address(p[4]).value
        threads = grid[0] * block[0]
        F = ctypes.c_float
        for i in range(min(n, threads)):
            F.from_address(out + 4 * i).value = alpha * F.from_address(x + 4 * i).value + F.from_address(y + 4 * i).value
        return self._ok()

    def _run_smem_probe(self, p, grid, block, smem):
        out = ctypes.c_uint64.from_address(p[0]).value
        nwords = ctypes.c_uint32.from_address(p[1]).value
        if nwords * 4 > smem:
            return self._err("CUDA_ERROR_ILLEGAL_ADDRESS")
        for t in range(block[0]):
            ctypes.c_float.from_address(out + 4 * t).value = float(block[0] - t)
        return self._ok()


def fake_map_bytes(record: dict) -> bytes:
    """The 128 bytes the fake driver encodes for a map: its inputs, so tests can tell maps apart."""
    words = [record["address"], int(record["dtype"]), *record["dims"], *record["strides"], *record["box"],
             int(record["swizzle"]), int(record["l2"]), int(record["oob"]), int(record["interleave"])]
    if len(words) > 16:  # maps of rank 3 to 5: the words past the 15th folded into the last
        words = words[:15] + [hash(tuple(words[15:])) % 2**64]
    return struct.pack("<16Q", *(words + [0xFEED] * (16 - len(words))))


@contextmanager
def installed(monkeypatch) -> Iterator["FakeDriver"]:
    """A :class:`FakeDriver` over ``cuda.bindings``' driver module as tilec's driver, within the block."""
    from cuda.bindings import driver as cu

    from tilec.runtime import driver, tensor_map

    fake = FakeDriver(cu)
    driver._reset_for_tests()
    tensor_map.clear_cache()  # maps are keyed by their inputs, not by driver: none made before is this one's
    monkeypatch.setattr(driver, "_import_bindings", lambda: fake)
    try:
        yield fake
    finally:
        monkeypatch.undo()
        driver._reset_for_tests()
        tensor_map.clear_cache()
