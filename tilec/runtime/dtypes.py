"""Element types the runtime understands, by one canonical name each.

Why: numpy, torch, cupy, DLPack and ``__cuda_array_interface__`` all spell
dtypes differently (``np.float32``, ``torch.float32``, ``'<f4'``, DLPack
code/bits); kernel signatures and argument checks compare one spelling,
``'float32'``, and this module is the only place that translates.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

# name -> (size in bytes, kind) ; kind: "int", "uint", "float", "bool"
_TABLE: dict[str, tuple[int, str]] = {
    "bool": (1, "bool"),
    "int8": (1, "int"),
    "int16": (2, "int"),
    "int32": (4, "int"),
    "int64": (8, "int"),
    "uint8": (1, "uint"),
    "uint16": (2, "uint"),
    "uint32": (4, "uint"),
    "uint64": (8, "uint"),
    "float16": (2, "float"),
    "bfloat16": (2, "float"),
    "float32": (4, "float"),
    "float64": (8, "float"),
    "float8_e4m3fn": (1, "float"),
    "float8_e5m2": (1, "float"),
}

_ALIASES = {
    "f16": "float16", "half": "float16",
    "bf16": "bfloat16",
    "f32": "float32", "float": "float32",
    "f64": "float64", "double": "float64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "int": "int32", "i1": "bool",
}

# DLPack type codes (dlpack.h): kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool, and (DLPack 1.1) the
# 8-bit floats kDLFloat8_e4m3fn and kDLFloat8_e5m2, which name their type themselves.
_DLPACK_CODES = {0: "int", 1: "uint", 2: "float", 4: "bfloat", 6: "bool", 10: "float8_e4m3fn", 12: "float8_e5m2"}


def canonical(dtype) -> str:
    """Canonical dtype name of ``dtype`` (a str, numpy or torch dtype).

    Unknown but well-formed names (e.g. ``float8_e4m3fn``) are passed through
    so arrays of exotic types can still be matched by name.
    """
    if dtype is None:
        raise TypeError("dtype must not be None")
    if isinstance(dtype, str):
        name = dtype.strip()
    elif type(dtype).__module__.startswith("torch"):
        name = str(dtype).rsplit(".", 1)[-1]  # torch.float32 -> float32
    else:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = str(dtype)
    name = name.lower()
    if name.startswith("torch."):
        name = name[len("torch."):]
    return _ALIASES.get(name, name)


def itemsize(name: str) -> int | None:
    """Size in bytes of one element, or None for a dtype we do not know."""
    entry = _TABLE.get(name)
    return entry[0] if entry else None


def is_known(name: str) -> bool:
    return name in _TABLE


def kind(name: str) -> str | None:
    entry = _TABLE.get(name)
    return entry[1] if entry else None


def stores(param: str, array: str) -> bool:
    """Whether a kernel parameter of dtype ``param`` takes an array of dtype ``array``: the same type, or,
    for an integer parameter (the IR's integers are signless), unsigned or bool elements of its width
    (tilec.lang reads those as unsigned numbers and masks)."""
    if param == array:
        return True
    return kind(param) == "int" and kind(array) in ("uint", "bool") and itemsize(param) == itemsize(array)


def numpy_dtype(name: str) -> np.dtype | None:
    """The numpy dtype of ``name``: numpy's own, or ``ml_dtypes``' for bf16 and FP8 where it is installed
    (JAX's numpy types, which tilec reads and writes); None where numpy has none."""
    try:
        return np.dtype(name)
    except TypeError:
        pass
    try:
        import ml_dtypes  # optional: the test extra has it
    except ImportError:
        return None
    found = getattr(ml_dtypes, name, None)
    return np.dtype(found) if found is not None else None


def from_typestr(typestr: str) -> str:
    """Canonical name of an array-interface typestr such as ``'<f4'``."""
    dt = np.dtype(typestr)
    if dt.byteorder == ">" or (dt.byteorder == "=" and not np.little_endian):
        raise TypeError(f"big-endian arrays are not supported (typestr {typestr!r})")
    return canonical(dt)


def from_dlpack(code: int, bits: int, lanes: int) -> str:
    """Canonical name of a DLPack ``DLDataType``."""
    if lanes != 1:
        raise TypeError(f"vector DLPack dtypes (lanes={lanes}) are not supported")
    k = _DLPACK_CODES.get(code)
    if k is None:
        raise TypeError(f"unsupported DLPack dtype code {code}")
    if k in ("bool", "float8_e4m3fn", "float8_e5m2"):
        if k != "bool" and bits != 8:
            raise TypeError(f"DLPack dtype {k} with {bits} bits")
        return k
    if k == "bfloat":
        return f"bfloat{bits}"
    return f"{k}{bits}"


# ---------------------------------------------------------------- scalars

_INT_CTYPES = {
    "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32, "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "bool": ctypes.c_uint8,
}

SCALAR_DTYPES = tuple(name for name in _TABLE if not name.startswith("float8"))
"""Dtypes of scalar kernel parameters (FP8 lives in arrays only)."""


def int_range(name: str) -> tuple[int, int]:
    size, k = _TABLE[name]
    if k == "bool":
        return 0, 1
    if k == "uint":
        return 0, (1 << (8 * size)) - 1
    return -(1 << (8 * size - 1)), (1 << (8 * size - 1)) - 1


def _float_to_bits(value: float, name: str) -> ctypes._SimpleCData:
    """The bits of ``value`` as a ``name`` float; raises ValueError on overflow."""
    if name == "float64":
        return ctypes.c_double(value)
    if name in ("float32", "float16"):
        with np.errstate(over="ignore"):
            arr = np.array(value, dtype=name)
        if math.isfinite(value) and not np.isfinite(arr):
            raise ValueError(f"{value!r} overflows {name}")
        if name == "float32":
            return ctypes.c_float(float(arr))
        return ctypes.c_uint16(int(arr.view(np.uint16)))
    if name == "bfloat16":
        with np.errstate(over="ignore"):
            f32 = np.array(value, dtype=np.float32)
        if math.isfinite(value) and not np.isfinite(f32):
            raise ValueError(f"{value!r} overflows {name}")
        bits = int(f32.view(np.uint32))
        if not math.isfinite(value):  # inf / nan: truncate, keeping a NaN a NaN
            return ctypes.c_uint16((bits >> 16) | (0x40 if math.isnan(value) else 0))
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFFFFFF  # round to nearest even
        out = bits >> 16
        if out & 0x7F80 == 0x7F80:
            raise ValueError(f"{value!r} overflows {name}")
        return ctypes.c_uint16(out)
    raise TypeError(f"not a float dtype: {name}")


def scalar_to_ctype(value, name: str) -> ctypes._SimpleCData:
    """Convert an already type-checked Python number to the bits of ``name``.

    Raises ValueError when the value does not fit (integers out of range,
    finite floats that would overflow to infinity).
    """
    k = kind(name)
    if k in ("int", "uint", "bool"):
        v = int(value)
        lo, hi = int_range(name)
        if not lo <= v <= hi:
            raise ValueError(f"{v} is out of range for {name} [{lo}, {hi}]")
        return _INT_CTYPES[name](v)
    if k == "float":
        try:
            v = float(value)
        except OverflowError:  # a Python int too large even for float64
            raise ValueError(f"{value!r} overflows {name}") from None
        return _float_to_bits(v, name)
    raise TypeError(f"unsupported scalar dtype {name!r}")
