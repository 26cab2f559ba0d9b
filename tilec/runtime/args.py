"""Kernel signatures and the checking of Python arguments against them.

Why: a wrong argument (count, dtype, rank, alignment, a CPU tensor, an
out-of-range scalar) must be reported with the parameter's name and index
*before* anything reaches the driver, where it would be a crash or silent
garbage.  :func:`bind_arguments` is a pure function over the signature and
the Python values, so all of this is checked and tested without a GPU.
"""

from __future__ import annotations

import ctypes
import numbers
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from . import dtypes
from .arrays import ArrayInfo, NotAnArray, describe_array, is_torch_tensor, torch_dtype_name
from .errors import CudaError, LaunchConfigError
from .tensor_map import TensorMapArg, box_problem
from .tensor_map import encode as encode_map

POINTER = "pointer"
SCALAR = "scalar"
TENSOR_MAP = "tensor_map"


@dataclass(frozen=True)
class Param:
    """One kernel parameter.

    ``kind`` is ``"pointer"`` (``dtype`` is the element type, None = any) or
    ``"scalar"`` (``dtype`` e.g. ``"int32"``); a dtype name given as ``kind``
    is shorthand for a scalar.  For pointers: ``is_output`` marks data the
    kernel writes (numpy arrays are copied back), ``ndim``/``shape`` (None
    entries match anything) constrain the array, ``align`` is the required
    address alignment in bytes (default: the element size) and
    ``contiguous`` requires C-contiguous memory.

    ``"tensor_map"``: a ``CUtensorMap`` passed by value (128 bytes), of the
    gl view ``view`` whose pointer is parameter ``view_index``; ``dtype`` is
    the view's element type, ``box`` (rows, inner) and ``swizzle`` (bytes)
    the tile it loads. Its value is a
    :class:`~tilec.runtime.tensor_map.TensorMapArg` (``tilec.runtime.gl_views.expand``
    makes it).
    """

    name: str
    kind: str = POINTER
    dtype: Any = None
    is_output: bool = False
    ndim: int | None = None
    shape: tuple[int | None, ...] | None = None
    align: int | None = None
    contiguous: bool = True
    view: str | None = None
    view_index: int | None = None
    box: tuple[int, ...] | None = None
    swizzle: int = 0

    def __post_init__(self):
        kind, dtype = self.kind, self.dtype
        if kind not in (POINTER, SCALAR, TENSOR_MAP):
            if dtype is None and dtypes.is_known(dtypes.canonical(kind)):
                kind, dtype = SCALAR, kind
            else:
                raise ValueError(
                    f"parameter {self.name!r}: kind must be 'pointer' or 'scalar' (or 'tensor_map'), got {kind!r}")
        if dtype is not None:
            dtype = dtypes.canonical(dtype)
        if kind == TENSOR_MAP:
            self._check_tensor_map(dtype)
        elif self.view is not None or self.view_index is not None or self.box is not None or self.swizzle:
            raise ValueError(f"parameter {self.name!r}: view/view_index/box/swizzle only apply to tensor maps")
        if kind == SCALAR:
            if dtype is None or dtype not in dtypes.SCALAR_DTYPES:
                raise ValueError(
                    f"parameter {self.name!r}: scalar dtype must be one of {', '.join(dtypes.SCALAR_DTYPES)}, got {dtype!r}"
                )
            if self.is_output or self.ndim is not None or self.shape is not None or self.align is not None:
                raise ValueError(f"parameter {self.name!r}: is_output/ndim/shape/align only apply to pointers")
        shape = self.shape
        if shape is not None:
            shape = tuple(None if d is None else int(d) for d in shape)
            if self.ndim is not None and self.ndim != len(shape):
                raise ValueError(f"parameter {self.name!r}: ndim={self.ndim} contradicts shape={shape}")
        if self.align is not None and (self.align <= 0 or self.align & (self.align - 1)):
            raise ValueError(f"parameter {self.name!r}: align must be a power of two, got {self.align}")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "shape", shape)

    def _check_tensor_map(self, dtype) -> None:
        where = f"parameter {self.name!r}"
        if not isinstance(self.view, str) or not self.view:
            raise ValueError(f"{where}: a tensor map needs the name of its gl view, got view={self.view!r}")
        if self.view_index is not None and (not isinstance(self.view_index, int) or self.view_index < 0):
            raise ValueError(f"{where}: view_index must be a parameter index, got {self.view_index!r}")
        if self.is_output or self.ndim is not None or self.shape is not None or self.align is not None:
            raise ValueError(f"{where}: is_output/ndim/shape/align only apply to pointers")
        box = tuple(int(b) for b in self.box) if self.box is not None else None
        problem = "it has no box" if box is None else box_problem(dtype, box, self.swizzle)
        if problem is not None:
            raise ValueError(f"{where}: tensor map of gl view {self.view!r}: {problem}")
        object.__setattr__(self, "box", box)

    @classmethod
    def tensor_map(cls, name: str, view: str, dtype, box, swizzle: int = 0, *,
                   view_index: int | None = None) -> "Param":
        return cls(name, TENSOR_MAP, dtype, view=view, view_index=view_index, box=box, swizzle=swizzle)

    @classmethod
    def pointer(cls, name: str, dtype=None, *, is_output: bool = False, ndim: int | None = None,
                shape=None, align: int | None = None, contiguous: bool = True) -> "Param":
        return cls(name, POINTER, dtype, is_output=is_output, ndim=ndim, shape=shape,
                   align=align, contiguous=contiguous)

    @classmethod
    def scalar(cls, name: str, dtype) -> "Param":
        return cls(name, SCALAR, dtype)

    @property
    def is_pointer(self) -> bool:
        return self.kind == POINTER

    def required_alignment(self) -> int:
        if self.align is not None:
            return self.align
        if self.dtype is None:
            return 1
        return dtypes.itemsize(self.dtype) or 1

    @property
    def is_tensor_map(self) -> bool:
        return self.kind == TENSOR_MAP

    def describe(self) -> str:
        if self.kind == SCALAR:
            return f"{self.dtype} scalar"
        if self.kind == TENSOR_MAP:
            return (f"tensor map of gl view {self.view!r} ({self.dtype}, box {self.box[0]}x{self.box[1]}, "
                    f"swizzle {self.swizzle})")
        parts = [self.dtype or "any-dtype"]
        if self.shape is not None:
            parts.append("array of shape (" + ", ".join("?" if d is None else str(d) for d in self.shape) + ")")
        elif self.ndim is not None:
            parts.append(f"{self.ndim}-d array")
        else:
            parts.append("array")
        return " ".join(parts)


# ------------------------------------------------------------ bound values


@dataclass
class DeviceArg:
    """An array already in device memory: its address is passed as is."""

    param: Param
    index: int
    info: ArrayInfo


@dataclass
class HostArg:
    """A numpy array: copied to the device before, and back after if output."""

    param: Param
    index: int
    info: ArrayInfo


@dataclass
class ScalarArg:
    """A scalar, already converted to the bits of its parameter type."""

    param: Param
    index: int
    value: ctypes._SimpleCData


@dataclass
class TensorMapBound:
    """A tensor map, checked; the launcher encodes it (``base``: index of its view's pointer, or None)."""

    param: Param
    index: int
    value: TensorMapArg
    base: int | None


Bound = DeviceArg | HostArg | ScalarArg | TensorMapBound


def _where(kernel: str, i: int, p: Param) -> str:
    return f"kernel {kernel!r}, parameter #{i} {p.name!r}"


def _bind_pointer(kernel: str, i: int, p: Param, value, device: int | None, stream: int | None) -> Bound:
    where = _where(kernel, i, p)
    try:
        info = describe_array(value, stream=stream)
    except NotAnArray:
        raise TypeError(
            f"{where}: expected a {p.describe()} (a CUDA tensor such as torch/cupy, or a numpy array), "
            f"got {type(value).__name__}"
        ) from None
    except (TypeError, ValueError) as e:
        raise type(e)(f"{where}: {e}") from None
    if p.dtype is not None and not dtypes.stores(p.dtype, info.dtype):
        raise TypeError(f"{where}: expected dtype {p.dtype}, got an array of dtype {info.dtype} ({info.source})")
    if p.ndim is not None and info.ndim != p.ndim:
        raise ValueError(f"{where}: expected a {p.ndim}-d array, got {info.ndim}-d with shape {info.shape}")
    if p.shape is not None:
        if len(p.shape) != info.ndim or any(e is not None and e != d for e, d in zip(p.shape, info.shape)):
            want = "(" + ", ".join("?" if d is None else str(d) for d in p.shape) + ")"
            raise ValueError(f"{where}: expected shape {want}, got {info.shape}")
    if p.is_output and info.readonly:
        raise ValueError(f"{where}: is an output, but the array is read-only")
    if info.on_host:
        if info.has_negative_strides():
            raise ValueError(f"{where}: numpy arrays with negative strides cannot be copied to the device "
                             f"(strides {info.strides}); use np.ascontiguousarray")
        if p.contiguous and not info.is_c_contiguous():
            raise ValueError(f"{where}: must be C-contiguous, got a numpy array with shape {info.shape} and "
                             f"strides {info.strides}; use np.ascontiguousarray")
        return HostArg(p, i, info)
    if device is not None and info.device_id is not None and info.device_id != device:
        raise ValueError(f"{where}: the array is on CUDA device {info.device_id}, the kernel runs on device {device}")
    if p.contiguous and not info.is_c_contiguous():
        raise ValueError(f"{where}: must be C-contiguous, got shape {info.shape} with byte strides {info.strides} "
                         f"({info.source})")
    align = p.required_alignment()
    if info.size and info.ptr % align:
        raise ValueError(f"{where}: address {info.ptr:#x} is not aligned to {align} bytes")
    return DeviceArg(p, i, info)


def _is_array_like(value) -> bool:
    if isinstance(value, np.generic):  # numpy scalars expose __array_interface__ too
        return False
    return isinstance(value, np.ndarray) or hasattr(value, "__cuda_array_interface__") or \
        hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__")


def _bind_scalar(kernel: str, i: int, p: Param, value) -> ScalarArg:
    where = _where(kernel, i, p)
    k = dtypes.kind(p.dtype)
    if _is_array_like(value):
        raise TypeError(f"{where}: expected a {p.dtype} scalar, got an array ({type(value).__name__})")
    is_bool = isinstance(value, (bool, np.bool_))
    is_int = isinstance(value, numbers.Integral) or is_bool
    is_real = is_int or isinstance(value, numbers.Real)
    if k in ("int", "uint"):
        ok = is_int
    elif k == "bool":
        ok = is_int
    else:  # float
        ok = is_real
    if not ok:
        raise TypeError(f"{where}: expected a {p.dtype} scalar, got {type(value).__name__} {value!r}")
    try:
        return ScalarArg(p, i, dtypes.scalar_to_ctype(value, p.dtype))
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None


def bind_arguments(kernel: str, signature: Sequence[Param], args: Sequence[Any], *,
                   device: int | None = None, stream: int | None = None) -> list[Bound]:
    """Check ``args`` against ``signature``; return what the launcher needs.

    Pure: reads the values (and DLPack capsules) but never calls the driver.
    Raises TypeError (count, Python type, dtype) or ValueError (shape,
    alignment, device, contiguity, read-only output, scalar range), each
    naming the kernel, the parameter's index and name, and what was expected.
    """
    if len(args) != len(signature):
        names = ", ".join(p.name for p in signature)
        raise TypeError(f"kernel {kernel!r} takes {len(signature)} argument(s) ({names}), got {len(args)}")
    bound: list[Bound] = []
    for i, (p, value) in enumerate(zip(signature, args)):
        if p.kind == POINTER:
            bound.append(_bind_pointer(kernel, i, p, value, device, stream))
        elif p.kind == TENSOR_MAP:
            bound.append(TensorMapBound(p, i, value, p.view_index))
        else:
            bound.append(_bind_scalar(kernel, i, p, value))
    for b in bound:
        if isinstance(b, TensorMapBound):
            _check_tensor_map(kernel, b, bound)
    return bound


def _check_tensor_map(kernel: str, b: TensorMapBound, bound: Sequence[Bound]) -> None:
    """The value is a TensorMapArg of the parameter's dtype/box/swizzle, encodable, over its view's array."""
    p, value, where = b.param, b.value, _where(kernel, b.index, b.param)
    if not isinstance(value, TensorMapArg):
        raise TypeError(f"{where}: expected a {p.describe()} (a tilec.runtime.tensor_map.TensorMapArg, as "
                        f"tilec.runtime.gl_views.expand makes), got {type(value).__name__}")
    for field in ("dtype", "box", "swizzle"):
        if getattr(value.spec, field) != getattr(p, field):
            raise ValueError(f"{where}: expected a {p.describe()}, got a map with {field} "
                             f"{getattr(value.spec, field)!r}")
    base = bound[b.base] if b.base is not None and b.base < len(bound) else None
    if b.base is not None and not isinstance(base, (DeviceArg, HostArg)):
        raise TypeError(f"{where}: its view's pointer, parameter #{b.base}, is not a pointer parameter")
    # a staged numpy view gets its device address at launch: only the device address is checked
    value.spec.check(None if isinstance(base, HostArg) else value.address, where)
    if isinstance(base, DeviceArg) and base.info.size and base.info.ptr != value.address:
        raise ValueError(f"{where}: the map is of address {value.address:#x}, but its view's pointer, "
                         f"parameter #{b.base} {base.param.name!r}, is at {base.info.ptr:#x}")


# ------------------------------------------------------------ the fast path


_INT_KINDS = ("int", "uint")


class FastArgs:
    """The per-call check of :func:`bind_arguments`, for calls it can decide cheaply.

    Why: a launch of a compiled kernel with torch tensors and Python numbers
    should not build an :class:`ArrayInfo` and a ctypes value per argument.
    The classes of the arguments (``tuple(map(type, args))``) are judged once:
    every scalar must be a Python ``int`` (integer parameters) or
    ``int``/``float`` (float parameters), every pointer a torch tensor and
    every tensor map a :class:`~tilec.runtime.tensor_map.TensorMapArg`; any
    other mix (numpy arrays to stage, cupy, numpy scalars, a wrong count,
    ...) answers None and the caller takes :func:`bind_arguments`, which also
    raises the precise errors. Per call, each tensor is checked for the
    facts :func:`bind_arguments` checks: device, dtype, rank and contiguity
    where required, address alignment; scalar ranges are checked when
    :class:`~tilec.runtime.launch.ParamBuffer` packs them.

    A tensor map (sm_90 TMA descriptor) is checked per call as
    :func:`_check_tensor_map` checks it: its spec's dtype, box and swizzle
    are the parameter's, and its address is that of its view's pointer
    (parameter ``view_index``) in this same call; its 128 bytes then come
    from :func:`~tilec.runtime.tensor_map.encode` (a cache hit for a view
    launched before), which also refuses a view the driver cannot describe.
    Any mismatch (or an encoding error) answers None: the checked path says
    what is wrong. The only difference left: an empty view's map of another
    address than its pointer's, which :func:`bind_arguments` accepts, takes
    the checked path every call.
    """

    def __init__(self, signature: Sequence[Param], device: int):
        self.signature = tuple(signature)
        self.device = device
        self._by_classes: dict[tuple, tuple | None] = {}
        self._maps = tuple((i, p.view_index, p.dtype, p.box, p.swizzle)
                           for i, p in enumerate(self.signature) if p.kind == TENSOR_MAP)

    @classmethod
    def for_signature(cls, signature: Sequence[Param], device: int) -> "FastArgs | None":
        """None when a parameter has constraints this path does not check (shape, bool/bf16 scalars),
        or is a tensor map whose ``view_index`` is not a pointer parameter of the signature (a
        :class:`~tilec.runtime.Kernel` refuses those; a map without ``view_index`` is encoded at its own
        address, as the checked path does)."""
        signature = tuple(signature)
        for p in signature:
            if p.is_pointer and p.shape is not None:
                return None
            if p.kind == TENSOR_MAP:
                if p.view_index is not None and not (
                        p.view_index < len(signature) and signature[p.view_index].is_pointer):
                    return None
            elif not p.is_pointer and (dtypes.kind(p.dtype) == "bool" or p.dtype == "bfloat16"):
                return None
        return cls(signature, device)

    def _judge(self, classes: tuple, args: Sequence[Any]) -> tuple | None:
        """The pointer checks to run for arguments of these classes, or None (checked path)."""
        if len(classes) != len(self.signature):
            return None
        pointers = []
        for i, (p, c) in enumerate(zip(self.signature, classes)):
            if p.is_pointer:
                if not is_torch_tensor(args[i]):
                    return None
                pointers.append((i, p.dtype, p.required_alignment(), p.contiguous, p.ndim))
            elif p.kind == TENSOR_MAP:
                if c is not TensorMapArg:
                    return None
            elif dtypes.kind(p.dtype) in _INT_KINDS:
                if c is not int:
                    return None
            elif c is not float and c is not int:
                return None
        return tuple(pointers)

    def values(self, args: Sequence[Any]) -> list[Any] | None:
        """The parameter values (tensors replaced by their addresses, tensor maps by their 128 encoded
        bytes), or None for the checked path."""
        classes = tuple(map(type, args))
        try:
            pointers = self._by_classes[classes]
        except KeyError:
            pointers = self._by_classes[classes] = self._judge(classes, args)
        if pointers is None:
            return None
        values = list(args)
        device = self.device
        for i, dtype, align, contiguous, ndim in pointers:
            t = values[i]
            if t.get_device() != device or (dtype is not None and torch_dtype_name(t.dtype) != dtype):
                return None
            if (contiguous and not t.is_contiguous()) or (ndim is not None and t.dim() != ndim):
                return None
            address = t.data_ptr()
            if address % align:
                return None
            values[i] = address
        for i, base, dtype, box, swizzle in self._maps:
            value = values[i]  # a TensorMapArg (judged above); values[base] is already an address
            spec, address = value.spec, value.address
            if (base is not None and values[base] != address) or spec.dtype != dtype or spec.box != box \
                    or spec.swizzle != swizzle:
                return None
            try:
                values[i] = encode_map(spec, address, device=device)
            except (TypeError, ValueError, CudaError):  # unencodable: the checked path says why
                return None
        return values


# ------------------------------------------------------------ launch config

_GRID_MAX = (2**31 - 1, 65535, 65535)
_BLOCK_MAX = (1024, 1024, 64)


@dataclass(frozen=True)
class LaunchDefaults:
    """What a kernel's ``#tile.launch`` says: grid (None where dynamic), block, shared memory, cluster.

    ``static_shared`` and ``dynamic_shared`` come from the kernel's shared buffers.
    """

    grid: tuple[int | None, ...] | None
    block: tuple[int, ...] | None
    smem: int
    static_shared: int
    dynamic_shared: bool
    cluster: tuple[int, ...] = (1, 1, 1)
    """The thread-block cluster (sm_90; the cubin requires it): a launch's grid is whole clusters."""

    @property
    def shared_mem(self) -> int:
        """Dynamic shared memory to ask for at launch: ``smem`` is the block's total,
        so this is what the static buffers leave of it (0 without a dynamic buffer)."""
        return max(0, self.smem - self.static_shared) if self.dynamic_shared else 0


def normalize_dims(value, what: str) -> tuple[int, int, int]:
    """``int`` or 1-3 ints -> (x, y, z), checked against CUDA's fixed limits."""
    if isinstance(value, (numbers.Integral,)) and not isinstance(value, bool):
        dims = [int(value)]
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3 and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value
    ):
        dims = [int(v) for v in value]
    else:
        raise TypeError(f"{what} must be an int or a tuple of 1 to 3 ints, got {value!r}")
    dims += [1] * (3 - len(dims))
    limits = _GRID_MAX if what == "grid" else _BLOCK_MAX
    for axis, (d, lim) in enumerate(zip(dims, limits)):
        if not 1 <= d <= lim:
            raise ValueError(f"{what}[{axis}] must be in [1, {lim}], got {d} (from {value!r})")
    if what == "block" and dims[0] * dims[1] * dims[2] > 1024:
        raise ValueError(f"block has {dims[0] * dims[1] * dims[2]} threads, more than 1024")
    return dims[0], dims[1], dims[2]


def check_whole_clusters(kernel: str, grid, cluster: tuple[int, ...]) -> None:
    """A :class:`LaunchConfigError` unless ``grid`` is whole thread-block clusters of ``cluster``."""
    dims = normalize_dims(grid, "grid")
    for axis, (g, c) in enumerate(zip(dims, cluster)):
        if g % c:
            raise LaunchConfigError(f"kernel {kernel!r} runs in clusters of {list(cluster)} blocks: its grid "
                                    f"{list(dims)} must be whole clusters, but {g} blocks along {'xyz'[axis]} "
                                    f"are not a multiple of {c}")


def normalize_shared_mem(value) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or not 0 <= int(value) < 2**32:
        raise ValueError(f"shared_mem must be a non-negative int (bytes), got {value!r}")
    return int(value)


def stream_handle(stream) -> int:
    """The raw ``CUstream`` address of ``stream``; 0 (legacy default) for None.

    Accepts ints, ``cuda.bindings`` ``CUstream``, objects with the
    ``__cuda_stream__`` protocol (cuda.core), torch streams
    (``cuda_stream``) and cupy streams (``ptr``).
    """
    if stream is None:
        return 0
    if isinstance(stream, numbers.Integral) and not isinstance(stream, bool):
        return int(stream)
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        res = proto() if callable(proto) else proto
        return int(res[1])
    for attr in ("cuda_stream", "ptr"):
        v = getattr(stream, attr, None)
        if isinstance(v, numbers.Integral):
            return int(v)
    if type(stream).__name__ == "CUstream":
        return int(stream)
    raise TypeError(f"stream must be None, an int handle, a CUstream, or a torch/cupy/cuda.core stream; "
                    f"got {type(stream).__name__}")
