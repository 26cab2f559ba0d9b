"""Launching kernels with the gl ABI: one array → pointer, extents, strides.

After ``tile-regalloc`` every ``!tile.gl<T, [d0, ..]>`` argument ``%x`` of a
kernel is ``1 + 2r`` parameters (see :mod:`tilec.passes.tile_distribute.kernel`)::

    %x            !llvm.ptr<1> {tile.dtype = T, tile.gl = "x" [, tile.output]}
    %x_dim<i>     i64 {tile.gl = "x", tile.dim = i}       extents
    %x_stride<i>  i64 {tile.gl = "x", tile.stride = i}    strides, in elements

:func:`gl_params` reads those groups from a lowered kernel's argument
attributes (``tilec.compile`` stores them as ``CompiledKernel.gl_params``),
and :func:`expand` turns one Python value per group into the flat argument
list the launcher takes::

    k = tilec.compile("examples/gemm.mlir", pipeline="tile-to-ptx")
    k(*expand(k, a, b, c), grid=(blocks, 1, 1))     # a, b, c: torch/cupy/numpy arrays

An array's own shape and strides are used (any strides, so transposed and
sliced views need no copy); :class:`GlView` gives the extents and strides
explicitly (e.g. a transposed view of an array whose library cannot make
one). Parameters outside the groups (scalars) take the next value as is.
Nothing here touches the GPU.

A view may also come with tensor maps (sm_90 TMA descriptors), each one
more parameter of the group::

    %x_map<k>   !llvm.ptr {tile.gl = "x", tile.tensor_map = k, tile.box = array<i64: R, C>,
                           tile.swizzle = S}

(k = 0, 1, ..: the view's maps; a box of R x C elements, C along the
contiguous last dimension; S = 0/32/64/128 bytes). :func:`expand` gives
each a :class:`~tilec.runtime.tensor_map.TensorMapArg` of the same array
as the view's pointer, extents and strides; the launcher encodes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    IntegerAttr,
    StringAttr,
    UnitAttr,
)

from tilec.dialects.tile.types import EXTENT_LIMIT, element_bits
from tilec.runtime.arrays import NotAnArray, describe_array, is_torch_tensor
from tilec.runtime.tensor_map import TensorMapArg

GL_ATTR, DIM_ATTR, STRIDE_ATTR, OUTPUT_ATTR = "tile.gl", "tile.dim", "tile.stride", "tile.output"
ALIGNED_ROWS_ATTR, DTYPE_ATTR = "tile.aligned_rows", "tile.dtype"
TENSOR_MAP_ATTR, BOX_ATTR, SWIZZLE_ATTR = "tile.tensor_map", "tile.box", "tile.swizzle"


@dataclass(frozen=True)
class GlParam:
    """One ``!tile.gl`` argument of a lowered kernel: where its parameters are."""

    name: str
    pointer: int
    """Index of the pointer parameter in the kernel's signature."""
    dims: tuple[int, ...]
    """Indices of the extent parameters, dimension 0 first."""
    strides: tuple[int, ...]
    """Indices of the stride parameters, dimension 0 first."""
    is_output: bool
    aligned_rows: int = 0
    """``tile.aligned_rows`` in bytes (0: none): what the kernel assumes of every row, checked at launch."""
    element_bytes: int = 0
    """Bytes per element (from ``tile.dtype``; 0 when unknown)."""
    tensor_maps: tuple[tuple[int, int, int, int], ...] = ()
    """The view's tensor maps, map 0 first: (parameter index, box rows, box inner, swizzle bytes)."""
    dtype: str | None = None
    """The element type's runtime name (``float16``, ``bfloat16``, ``float32``) when a tensor map needs it."""

    @property
    def rank(self) -> int:
        return len(self.dims)


@dataclass(frozen=True)
class GlView:
    """An array with explicit extents and strides (in elements) for a gl parameter."""

    array: Any
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def __post_init__(self):
        for d in self.shape:
            if not 0 <= int(d) < EXTENT_LIMIT:
                raise ValueError(f"GlView: extent {d} of shape {tuple(self.shape)} must be in [0, 2^62)")


_MAP_DTYPES = ((Float16Type, "float16"), (BFloat16Type, "bfloat16"), (Float32Type, "float32"))


def map_dtype(attr: Any) -> str | None:
    """The runtime name of a ``tile.dtype`` a tensor map can describe (f16, bf16, f32), else None."""
    for cls, name in _MAP_DTYPES:
        if isinstance(attr, cls):
            return name
    return None


def tensor_map_attrs(attrs: dict[str, Any]) -> tuple[int, tuple[int, ...], int] | None:
    """(map number, box, swizzle) of a tensor-map argument's attributes; None for other arguments.

    Raises ValueError when ``tile.tensor_map`` is there but ``tile.box`` is
    not an ``array<i64: ...>`` or ``tile.swizzle`` not an integer.
    """
    number = attrs.get(TENSOR_MAP_ATTR)
    if number is None:
        return None
    box, swizzle = attrs.get(BOX_ATTR), attrs.get(SWIZZLE_ATTR, None)
    if not isinstance(number, IntegerAttr):
        raise ValueError(f"{TENSOR_MAP_ATTR} = {number} must be an integer")
    if not isinstance(box, DenseArrayBase):
        raise ValueError(f"a tensor map needs {BOX_ATTR} = array<i64: rows, inner>, got {box}")
    if swizzle is not None and not isinstance(swizzle, IntegerAttr):
        raise ValueError(f"{SWIZZLE_ATTR} = {swizzle} must be an integer (bytes)")
    return number.value.data, tuple(int(v) for v in box.get_values()), swizzle.value.data if swizzle else 0


def is_view_pointer(attrs: dict[str, Any]) -> bool:
    """Whether an argument is a gl view's pointer: ``tile.gl`` without dim, stride or tensor map."""
    return isinstance(attrs.get(GL_ATTR), StringAttr) and not any(
        k in attrs for k in (DIM_ATTR, STRIDE_ATTR, TENSOR_MAP_ATTR))


def gl_params(fn: llvm.FuncOp) -> tuple[GlParam, ...]:
    """The gl groups of a lowered kernel, from ``tile.gl``/``tile.dim``/``tile.stride``/``tile.tensor_map``."""
    if fn.arg_attrs is None:
        return ()
    kernel = fn.sym_name.data
    pointers: dict[str, int] = {}
    dims: dict[str, dict[int, int]] = {}
    strides: dict[str, dict[int, int]] = {}
    maps: dict[str, dict[int, tuple[int, int, int, int]]] = {}
    outputs: set[str] = set()
    aligned: dict[str, int] = {}
    elem_bytes: dict[str, int] = {}
    map_dtypes: dict[str, str | None] = {}
    for i, attrs in enumerate(fn.arg_attrs.data):
        d = attrs.data
        gl = d.get(GL_ATTR)
        if not isinstance(gl, StringAttr):
            continue
        name = gl.data
        try:
            tensor_map = tensor_map_attrs(d)
        except ValueError as e:
            raise ValueError(f"kernel '{kernel}': argument #{i} of gl view '{name}': {e}") from None
        if tensor_map is not None:
            number, box, swizzle = tensor_map
            if len(box) != 2:
                raise ValueError(f"kernel '{kernel}': tensor map {number} of gl view '{name}' has box {box}; "
                                 "expected (rows, inner)")
            if number in maps.get(name, {}):
                raise ValueError(f"kernel '{kernel}': gl view '{name}' has two tensor maps numbered {number}")
            maps.setdefault(name, {})[number] = (i, box[0], box[1], swizzle)
        elif isinstance(d.get(DIM_ATTR), IntegerAttr):
            dims.setdefault(name, {})[d[DIM_ATTR].value.data] = i
        elif isinstance(d.get(STRIDE_ATTR), IntegerAttr):
            strides.setdefault(name, {})[d[STRIDE_ATTR].value.data] = i
        else:
            pointers[name] = i
            if isinstance(d.get(OUTPUT_ATTR), UnitAttr):
                outputs.add(name)
            if isinstance(d.get(ALIGNED_ROWS_ATTR), IntegerAttr):
                aligned[name] = d[ALIGNED_ROWS_ATTR].value.data
            dtype = d.get(DTYPE_ATTR)
            if dtype is not None:
                elem_bytes[name] = element_bits(dtype) // 8
            map_dtypes[name] = map_dtype(dtype)
    for name in maps:
        if name not in pointers:
            raise ValueError(f"kernel '{kernel}': tensor maps of gl view '{name}', which has no pointer argument")
    out = []
    for name, ptr in pointers.items():
        ds, ss, ms = dims.get(name, {}), strides.get(name, {}), maps.get(name, {})
        rank = len(ds)
        if sorted(ds) != list(range(rank)) or sorted(ss) != list(range(rank)):
            raise ValueError(f"kernel '{kernel}': gl argument '{name}' has extents {sorted(ds)} "
                             f"and strides {sorted(ss)}; expected 0..r-1 of each")
        if ms and (sorted(ms) != list(range(len(ms))) or rank != 2 or map_dtypes.get(name) is None):
            raise ValueError(f"kernel '{kernel}': gl argument '{name}' has tensor maps {sorted(ms)}; expected "
                             "maps 0..k-1 of a 2-d view of f16, bf16 or f32")
        out.append(GlParam(name, ptr, tuple(ds[i] for i in range(rank)), tuple(ss[i] for i in range(rank)),
                           name in outputs, aligned.get(name, 0), elem_bytes.get(name, 0),
                           tuple(ms[k] for k in range(len(ms))), map_dtypes.get(name) if ms else None))
    return tuple(sorted(out, key=lambda g: g.pointer))


def view_of(value: Any, what: str = "argument") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(extents, strides in elements) of an array, or of a :class:`GlView`."""
    if isinstance(value, GlView):
        return tuple(int(d) for d in value.shape), tuple(int(s) for s in value.strides)
    if is_torch_tensor(value) and getattr(value, "is_cuda", False):
        # torch gives element strides itself: no ArrayInfo per call (a CPU tensor goes on to the error below)
        return tuple(value.shape), tuple(value.stride())
    try:
        info = describe_array(value)
    except NotAnArray:
        raise TypeError(f"{what}: expected an array (torch/cupy/numpy), got {type(value).__name__}") from None
    except (TypeError, ValueError) as e:
        raise type(e)(f"{what}: {e}") from None
    strides = []
    for s in info.byte_strides():
        if s % info.itemsize:
            raise ValueError(f"{what}: byte strides {info.byte_strides()} are not whole elements of {info.itemsize} bytes")
        strides.append(s // info.itemsize)
    return info.shape, tuple(strides)


def expand(kernel_or_params: Any, *args: Any, signature_length: int | None = None) -> list[Any]:
    """The flat launch arguments: each gl group's value → array, extents..., strides...

    ``kernel_or_params``: a :class:`~tilec.api.CompiledKernel` (its
    ``gl_params`` and ``signature``) or a sequence of :class:`GlParam` (then
    ``signature_length`` is the number of kernel parameters). ``args``: one
    value per gl group and one per other parameter, in signature order.
    """
    params: Sequence[GlParam]
    if hasattr(kernel_or_params, "gl_params"):
        params = kernel_or_params.gl_params
        n = len(kernel_or_params.signature)
    else:
        params = tuple(kernel_or_params)
        if signature_length is None:
            raise TypeError("expand: give signature_length with a list of GlParam")
        n = signature_length
    by_pointer = {g.pointer: g for g in params}
    skipped = {i for g in params for i in (*g.dims, *g.strides, *(m[0] for m in g.tensor_maps))}
    slots = [i for i in range(n) if i not in skipped]
    if len(args) != len(slots):
        names = [by_pointer[i].name if i in by_pointer else f"#{i}" for i in slots]
        raise TypeError(f"expected {len(slots)} argument(s) ({', '.join(names)}): one array per gl view "
                        f"and one value per other parameter; got {len(args)}")
    flat: list[Any] = [None] * n
    for i, value in zip(slots, args):
        g = by_pointer.get(i)
        if g is None:
            flat[i] = value
            continue
        shape, strides = view_of(value, f"gl argument '{g.name}'")
        if len(shape) != g.rank:
            raise ValueError(f"gl argument '{g.name}': expected a {g.rank}-d array, got shape {shape}")
        flat[i] = value.array if isinstance(value, GlView) else value
        for j in range(g.rank):
            flat[g.dims[j]] = shape[j]
            flat[g.strides[j]] = strides[j]
        if g.tensor_maps:
            try:
                address = _address(flat[i])
            except NotAnArray:
                raise TypeError(f"gl argument '{g.name}': expected an array, got {type(flat[i]).__name__}") from None
            for index, rows, inner, swizzle in g.tensor_maps:
                flat[index] = TensorMapArg.of(address, g.dtype, shape, strides, (rows, inner), swizzle)
    return flat


def _address(value: Any) -> int:
    if is_torch_tensor(value):
        return int(value.data_ptr())
    if isinstance(value, int):
        return value
    return describe_array(value).ptr


def aligned_rows_problem(g: GlParam, address: int, shape: Sequence[int], strides: Sequence[int]) -> str | None:
    """What breaks ``g``'s ``tile.aligned_rows`` promise for a view, or None when it holds.

    The promise: the innermost stride is 1, and the address, every outer
    stride and the row length are whole multiples of ``aligned_rows`` bytes.
    """
    align, size = g.aligned_rows, g.element_bytes
    if not align:
        return None
    if strides[-1] != 1:
        return f"its innermost stride is {strides[-1]} elements, not 1"
    if address % align:
        return f"its address {address:#x} is not a multiple of {align} bytes"
    for d, s in enumerate(strides[:-1]):
        if (s * size) % align:
            return f"stride {d} is {s} elements = {s * size} bytes, not a multiple of {align}"
    if (shape[-1] * size) % align:
        return f"its rows are {shape[-1]} elements = {shape[-1] * size} bytes, not a multiple of {align}"
    return None


def check_aligned_rows(params: Sequence[GlParam], args: Sequence[Any], kernel: str) -> None:
    """Raise ValueError naming the argument when a flat launch breaks a ``tile.aligned_rows`` promise."""
    for g in params:
        if not g.aligned_rows or max(g.pointer, *g.dims, *g.strides) >= len(args) \
                or isinstance(args[g.pointer], GlView):
            continue
        try:
            address = _address(args[g.pointer])
            shape = [int(args[i]) for i in g.dims]
            strides = [int(args[i]) for i in g.strides]
        except (NotAnArray, TypeError, ValueError, IndexError):
            continue  # not an array, or too few arguments: the signature check names that
        problem = aligned_rows_problem(g, address, shape, strides)
        if problem is not None:
            raise ValueError(
                f"kernel '{kernel}': gl argument '{g.name}' was compiled with tile.aligned_rows = {g.aligned_rows} "
                f"(contiguous rows, {g.aligned_rows}-byte aligned and a whole number of {g.aligned_rows}-byte "
                f"vectors) but {problem}; pass such a view or compile without tile.aligned_rows"
            )


__all__ = ["GlParam", "GlView", "aligned_rows_problem", "check_aligned_rows", "expand", "gl_params", "view_of"]
