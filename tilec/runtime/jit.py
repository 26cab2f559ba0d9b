"""PTX -> cubin, by ``ptxas`` or by the driver's JIT linker.

Why two compilers: ``ptxas`` (from PATH or the ``nvidia-cuda-nvcc`` wheel)
builds cubins anywhere, GPU or not, so they can be checked and cached, and it
is the compiler the tests assemble every kernel with; where it is missing, the
driver's linker (``cuLinkCreate``/``cuLinkAddData``/``cuLinkComplete``)
targets the device and its error log explains a bad PTX. :func:`resolve_backend`
says which one ``auto`` takes and why ptxas first.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import subprocess
import tempfile
from pathlib import Path

from tilec.codegen.ptxas import find_ptxas

from . import driver
from .errors import JitError, PtxasError

# ------------------------------------------------------------------ ptxas

_ARCH_RE = re.compile(r"^sm_\d+[af]?$")


@functools.lru_cache(maxsize=None)
def ptxas_version(ptxas: str) -> str:
    """Version of a ``ptxas`` binary, e.g. ``13.5.37`` (the whole banner if unparsable)."""
    try:
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True, timeout=60).stdout
    except Exception as e:
        return f"unknown ({type(e).__name__})"
    m = re.search(r"V(\d+\.\d+\.\d+)", out)
    return m.group(1) if m else out.strip().replace("\n", " ")


@functools.lru_cache(maxsize=None)
def ptxas_identity(ptxas: str) -> str:
    """What names a ``ptxas`` binary in cache keys, without running it: its real path, size and
    modification time (another or an upgraded ptxas changes one of them). ``ptxas --version``
    would start a process, 5-20 ms of every cold compile on a machine without a GPU."""
    real = os.path.realpath(ptxas)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def _ptx_bytes(ptx: str | bytes) -> bytes:
    data = ptx.encode() if isinstance(ptx, str) else bytes(ptx)
    return data.rstrip(b"\0")


def compile_with_ptxas(ptx: str | bytes, arch: str, *, opt_level: int = 3,
                       extra_args: tuple[str, ...] = (), ptxas: str | None = None,
                       timeout: float = 300.0) -> bytes:
    """Assemble ``ptx`` for ``arch`` (e.g. ``sm_90``) with ptxas; return the cubin.

    Raises :class:`PtxasError` with ptxas's output when it fails.
    """
    if not _ARCH_RE.match(arch):
        raise ValueError(f"arch must look like 'sm_90' (or 'sm_90a'), got {arch!r}")
    found = ptxas or find_ptxas()
    if found is None:
        raise PtxasError("ptxas not found: put it on PATH, install the nvidia-cuda-nvcc wheel, or set TILEC_PTXAS")
    exe = str(found)
    with tempfile.TemporaryDirectory(prefix="tilec-ptxas-") as tmp:
        src = Path(tmp) / "kernel.ptx"
        dst = Path(tmp) / "kernel.cubin"
        src.write_bytes(_ptx_bytes(ptx))
        cmd = [exe, f"-arch={arch}", f"-O{opt_level}", *extra_args, "-o", str(dst), str(src)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise PtxasError(f"ptxas timed out after {timeout} s: {' '.join(cmd)}") from e
        log = (proc.stderr or "") + (proc.stdout or "")
        if proc.returncode != 0 or not dst.exists():
            raise PtxasError(f"ptxas -arch={arch} failed with exit code {proc.returncode}", log=log)
        return dst.read_bytes()


# ------------------------------------------------------------- driver JIT

_LOG_SIZE = 1 << 16


def _decode_log(buf: bytearray) -> str:
    return bytes(buf).split(b"\0", 1)[0].decode("utf-8", errors="replace")


def compile_with_driver(ptx: str | bytes, *, device: driver.Device | None = None,
                        kernel: str | None = None, opt_level: int | None = None,
                        max_registers: int | None = None) -> bytes:
    """JIT-link ``ptx`` for ``device`` (default: device 0); return the cubin.

    Raises :class:`JitError` carrying the JIT error log when the PTX is bad,
    :class:`NoDeviceError` without a GPU.
    """
    drv = driver.init()
    dev = device or driver.get_device(0)
    dev.make_current()
    opt = drv.CUjit_option
    info_buf, err_buf = bytearray(_LOG_SIZE), bytearray(_LOG_SIZE)
    keys = [opt.CU_JIT_INFO_LOG_BUFFER, opt.CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            opt.CU_JIT_ERROR_LOG_BUFFER, opt.CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES]
    values: list = [info_buf, _LOG_SIZE, err_buf, _LOG_SIZE]
    if opt_level is not None:
        keys.append(opt.CU_JIT_OPTIMIZATION_LEVEL)
        values.append(int(opt_level))
    if max_registers is not None:
        keys.append(opt.CU_JIT_MAX_REGISTERS)
        values.append(int(max_registers))
    # The driver writes the logs into info_buf/err_buf; they stay referenced
    # here until the link state is destroyed.
    state = driver.call("cuLinkCreate", len(keys), keys, values, kernel=kernel)
    try:
        data = _ptx_bytes(ptx) + b"\0"
        for call_name, thunk in (
            ("cuLinkAddData", lambda: drv.cuLinkAddData(
                state, drv.CUjitInputType.CU_JIT_INPUT_PTX, data, len(data), b"tilec.ptx", 0, None, None)),
            ("cuLinkComplete", lambda: drv.cuLinkComplete(state)),
        ):
            res = thunk()
            code = res[0] if isinstance(res, tuple) else res
            if int(code) != 0:
                number, name, description = driver._error_text(drv, code)
                log = _decode_log(err_buf) or _decode_log(info_buf)
                raise JitError(call_name, number, name, description, log=log, kernel=kernel)
        cubin_out, size = res[1], int(res[2])
        addr = cubin_out if isinstance(cubin_out, int) else int(cubin_out)
        cubin = ctypes.string_at(addr, size)  # copy: the image belongs to the link state
    finally:
        try:
            drv.cuLinkDestroy(state)
        except Exception:
            pass
        del info_buf, err_buf, values
    return cubin


# ------------------------------------------------------------ choosing one


_TARGET_RE = re.compile(rb"^\s*\.target\s+(sm_\d+[af]?)", re.MULTILINE)


def ptx_target(ptx: str | bytes) -> str | None:
    """The ``.target`` of a PTX text (``sm_90a``), or None when it names none."""
    m = _TARGET_RE.search(_ptx_bytes(ptx))
    return m.group(1).decode() if m else None


def device_target(device_arch: str, target: str | None) -> str:
    """What ptxas builds for a device (``sm_90``) from PTX for ``target``: the device's arch, in its
    arch-specific variant (``sm_90a``) when the PTX asks for that variant of the device's arch."""
    if target is not None and target[-1] in "af" and target[:-1] == device_arch:
        return target
    return device_arch


def ptxas_runs_on_driver(ptxas: str) -> bool:
    """Whether cubins from this ptxas load on this machine's driver: a ptxas of a newer CUDA than
    the driver's may write cubins the driver cannot load (a test extra's ptxas 13 on a CUDA 12
    driver), so ``auto`` then keeps the driver's own JIT."""
    version, cuda = ptxas_version(ptxas), driver.driver_version()
    m = re.match(r"(\d+)\.(\d+)", version)
    if m is None or cuda is None:
        return False
    return (int(m.group(1)), int(m.group(2))) <= (cuda // 1000, cuda % 1000 // 10)


def resolve_backend(backend: str = "auto", arch: str | None = None,
                    device: int = 0, target: str | None = None) -> tuple[str, str, str]:
    """Pick the compiler: returns (backend, arch, compiler id for cache keys).

    ``auto`` means ptxas when it is found (on a GPU: for the device's arch, see
    :func:`device_target` for the PTX's ``target``, and only a ptxas no newer than the driver,
    :func:`ptxas_runs_on_driver`), else the driver JIT on a GPU. ptxas first
    because the driver JIT does not always make the same code: on an H200 with driver 580 (CUDA
    13.0) it serialised the wgmmas of a persistent GEMM that ptxas 13.0 keeps in flight (a
    ``WARPGROUP.DEPBAR.LE 0`` after each; 8192^3 559 against 629 TFLOP/s) and made attention 4%
    slower (``bench/NOTES.md``, session 15). The driver JIT always targets the device, so an
    ``arch`` that differs is an error; ptxas needs an ``arch`` (taken from the device when there
    is one).
    """
    if backend not in ("auto", "driver", "ptxas"):
        raise ValueError(f"backend must be 'auto', 'driver' or 'ptxas', got {backend!r}")
    if backend == "auto":
        gpu = driver.has_device()
        exe = find_ptxas()
        backend = "ptxas" if not gpu or (exe is not None and ptxas_runs_on_driver(str(exe))) else "driver"
    if backend == "driver":
        dev = driver.get_device(device)
        if arch is not None and arch != dev.arch:
            raise ValueError(f"the driver JIT compiles for the device ({dev.arch}), not {arch}; use backend='ptxas'")
        return "driver", dev.arch, f"driver-jit/{driver.driver_version()}"
    if arch is None:
        if not driver.has_device():
            raise ValueError("compiling with ptxas without a GPU needs an explicit arch such as 'sm_90'")
        arch = device_target(driver.get_device(device).arch, target)
    exe = find_ptxas()
    if exe is None:
        raise PtxasError("ptxas not found: put it on PATH, install the nvidia-cuda-nvcc wheel, or set TILEC_PTXAS")
    return "ptxas", arch, f"ptxas/{ptxas_identity(str(exe))}"


def compile_ptx(ptx: str | bytes, *, backend: str = "driver", arch: str | None = None,
                device: int = 0, kernel: str | None = None, opt_level: int | None = None) -> bytes:
    """Compile with an already resolved backend (see :func:`resolve_backend`)."""
    if backend == "driver":
        return compile_with_driver(ptx, device=driver.get_device(device), kernel=kernel, opt_level=opt_level)
    if backend == "ptxas":
        if arch is None:
            raise ValueError("ptxas needs an arch")
        return compile_with_ptxas(ptx, arch, opt_level=3 if opt_level is None else opt_level)
    raise ValueError(f"unknown backend {backend!r}")
