"""The tilec runtime: PTX -> cubin (cached) -> launch, with cuda-python only.

Importing this package never needs a GPU; the driver is initialised on first
use, and without a device every load or launch raises :class:`NoDeviceError`
(argument errors are still reported first, since checking is pure).
"""

from .args import LaunchDefaults, Param, bind_arguments, normalize_dims, stream_handle
from .arrays import ArrayInfo, describe_array
from .cache import CacheStats, CubinCache, cache_key, default_cache, tool_versions
from .driver import Device, device_count, driver_version, get_device, has_device, no_device_reason
from .errors import (
    CompileError,
    CudaError,
    JitError,
    LaunchConfigError,
    NoDeviceError,
    PtxasError,
    RuntimeFailure,
)
from .jit import compile_with_driver, compile_with_ptxas, find_ptxas, ptxas_version
from .kernel import Kernel
from .launch import PreparedLaunch
from .tensor_map import TensorMapArg, TensorMapSpec

__all__ = [
    "ArrayInfo",
    "CacheStats",
    "CompileError",
    "CubinCache",
    "CudaError",
    "Device",
    "JitError",
    "Kernel",
    "LaunchConfigError",
    "LaunchDefaults",
    "NoDeviceError",
    "Param",
    "PreparedLaunch",
    "PtxasError",
    "RuntimeFailure",
    "TensorMapArg",
    "TensorMapSpec",
    "bind_arguments",
    "cache_key",
    "compile_with_driver",
    "compile_with_ptxas",
    "default_cache",
    "describe_array",
    "device_count",
    "driver_version",
    "find_ptxas",
    "get_device",
    "has_device",
    "no_device_reason",
    "normalize_dims",
    "ptxas_version",
    "stream_handle",
    "tool_versions",
]
