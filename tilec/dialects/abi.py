"""The kernel ABI: the attribute names a lowered kernel carries, and reading them back.

Why one module: the passes write these attributes, and the API, the compile
cache, the launcher and the interpreter read them. Each name is spelled here
only; :func:`gl_params` is the one reader of a kernel's global views.

**The launch.** A kernel is a function with ``tile.launch =
#tile.launch<grid = [..], block = [..], smem = N>`` (:data:`LAUNCH_ATTR`):
its grid (``?`` where the caller gives it), block and shared memory in bytes.
``tile-distribute`` adds ``tile.registers = N`` (:data:`REGISTERS_ATTR`), its
estimate of the 32-bit registers per thread (more than 255 is an error).

**Global views.** After ``tile-distribute`` every ``!tile.gl<T, [d0, ..]>``
argument ``%x`` of rank r is ``1 + 2r`` parameters, in this order::

    %x            !llvm.ptr<1> {tile.dtype = T, tile.gl = "x" [, tile.output] [, tile.aligned_rows = A]}
    %x_dim<i>     i64 {tile.gl = "x", tile.dim = i}       extents (i = 0 .. r-1)
    %x_stride<i>  i64 {tile.gl = "x", tile.stride = i}    strides, in elements

``"x"`` is the argument's name (its SSA name, else ``argN``); ``tile.output``
marks views the kernel writes. Element (i, j) is at ``%x + i * stride0 + j *
stride1`` elements, so strided views work. ``tile.aligned_rows = A`` (bytes)
is a promise the kernel was specialised for: every row of the view is
contiguous, starts at a multiple of A bytes and is a multiple of A bytes
long; the launcher checks it before each launch
(:func:`tilec.runtime.gl_views.check_aligned_rows`).

A pointer without ``tile.gl`` is a plain pointer (C-contiguous, its element
type from ``tile.dtype`` if given, written if ``tile.output``).

**Tensor maps.** A view may also come with tensor maps (sm_90 TMA
descriptors), each one more parameter of its group::

    %x_map<k>   !llvm.ptr {tile.gl = "x", tile.tensor_map = k, tile.box = array<i64: R, C>,
                           tile.swizzle = S}

(k = 0, 1, ..: the view's maps; a box of R x C elements, C along the
contiguous last dimension; S = 0/32/64/128 bytes). The launcher encodes each
from the same array as the view's pointer, extents and strides.

:func:`gl_params` reads these groups from a lowered kernel's argument
attributes (``tilec.compile`` keeps them as ``CompiledKernel.gl_params``);
:func:`tilec.runtime.gl_views.expand` turns one array per group into the
flat launch arguments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
)

from tilec.dialects.tile.types import element_bits

# ---------------------------------------------------------------- the names

LAUNCH_ATTR = "tile.launch"
"""Function attribute: the ``#tile.launch`` of a kernel (grid, block, shared memory)."""
REGISTERS_ATTR = "tile.registers"
"""Function attribute: tile-distribute's estimate of the registers per thread."""
GL_ATTR = "tile.gl"
"""Argument attribute: the global view (by name) a parameter belongs to."""
DIM_ATTR = "tile.dim"
"""Argument attribute: this parameter is extent ``i`` of its view."""
STRIDE_ATTR = "tile.stride"
"""Argument attribute: this parameter is stride ``i`` (in elements) of its view."""
DTYPE_ATTR = "tile.dtype"
"""Argument attribute: the element type behind an ``!llvm.ptr<1>`` (``{tile.dtype = f16}``)."""
OUTPUT_ATTR = "tile.output"
"""Unit argument attribute: the kernel writes through this pointer (numpy arrays are copied back)."""
ALIGNED_ROWS_ATTR = "tile.aligned_rows"
"""Argument attribute: the row alignment in bytes the kernel assumes of a view (checked at launch)."""
TENSOR_MAP_ATTR = "tile.tensor_map"
"""Argument attribute: this parameter is tensor map ``k`` of its view (a ``CUtensorMap`` by value)."""
BOX_ATTR = "tile.box"
"""Argument attribute of a tensor map: its box, ``array<i64: rows, inner>`` elements."""
SWIZZLE_ATTR = "tile.swizzle"
"""Argument attribute of a tensor map: its swizzle in bytes (0, 32, 64, 128)."""
PRODUCER_ATTR = "tile.producer_threads"
"""Kernel attribute (``i64``): the block's last N threads are a producer warpgroup that issues the
K loops' bulk copies (``tile-pipeline{producer=true}``); the threads before them are consumers."""


ROLE_ATTR = "tile.role"
"""``scf.if`` attribute of a warp-specialised kernel: the warps that run the region, :data:`PRODUCER`
(the producer warpgroup's copy loops) or :data:`CONSUMERS` (everything else)."""
PRODUCER = "producer"
CONSUMERS = "consumers"

REGISTER_FILE = 65536
"""32-bit registers of an SM (sm_80, sm_90): what a block of one kernel a SM shares out."""


def launch_registers(threads: int) -> int:
    """Registers per thread a warp-specialised block of ``threads`` starts with (``.maxnreg``, an even
    share of :data:`REGISTER_FILE` in multiples of 8); ``setmaxnreg`` moves them from producer to consumers."""
    return min(REGISTER_FILE // threads // 8 * 8, 248)


def producer_threads(op: Any) -> int:
    """The producer threads of the kernel ``op`` is in (0: it is not warp-specialised)."""
    while op is not None and LAUNCH_ATTR not in getattr(op, "attributes", {}):
        op = op.parent_op()
    attr = op.attributes.get(PRODUCER_ATTR) if op is not None else None
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


# ---------------------------------------------------------------- reading a lowered kernel


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


_MAP_DTYPES = ((Float16Type, "float16"), (BFloat16Type, "bfloat16"), (Float32Type, "float32"),
               (Float8E4M3FNType, "float8_e4m3fn"), (Float8E5M2Type, "float8_e5m2"))


_MAP_INTEGERS = {8: "int8", 16: "int16", 32: "int32"}


def map_dtype(attr: Any) -> str | None:
    """The runtime name of a ``tile.dtype`` a tensor map can describe (f16, bf16, f32, FP8, i8, i16, i32),
    else None."""
    for cls, name in _MAP_DTYPES:
        if isinstance(attr, cls):
            return name
    if isinstance(attr, IntegerType):
        return _MAP_INTEGERS.get(attr.width.data)
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
    """The gl groups of a lowered kernel, from ``tile.gl``/``tile.dim``/``tile.stride``/``tile.tensor_map``.

    Raises ValueError (naming the kernel and the view) for a group that is not whole.
    """
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
        if ms and (sorted(ms) != list(range(len(ms))) or not 2 <= rank <= 5 or map_dtypes.get(name) is None):
            raise ValueError(f"kernel '{kernel}': gl argument '{name}' has tensor maps {sorted(ms)}; expected "
                             "maps 0..k-1 of a view of rank 2 to 5 of f16, bf16, f32, FP8, i8, i16 or i32")
        out.append(GlParam(name, ptr, tuple(ds[i] for i in range(rank)), tuple(ss[i] for i in range(rank)),
                           name in outputs, aligned.get(name, 0), elem_bytes.get(name, 0),
                           tuple(ms[k] for k in range(len(ms))), map_dtypes.get(name) if ms else None))
    return tuple(sorted(out, key=lambda g: g.pointer))


__all__ = [
    "ALIGNED_ROWS_ATTR",
    "BOX_ATTR",
    "DIM_ATTR",
    "DTYPE_ATTR",
    "GL_ATTR",
    "LAUNCH_ATTR",
    "OUTPUT_ATTR",
    "CONSUMERS",
    "PRODUCER",
    "PRODUCER_ATTR",
    "ROLE_ATTR",
    "REGISTER_FILE",
    "REGISTERS_ATTR",
    "STRIDE_ATTR",
    "SWIZZLE_ATTR",
    "TENSOR_MAP_ATTR",
    "GlParam",
    "launch_registers",
    "producer_threads",
    "gl_params",
    "is_view_pointer",
    "map_dtype",
    "tensor_map_attrs",
]
