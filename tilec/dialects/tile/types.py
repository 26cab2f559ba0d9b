"""Types of the tile dialect, named after ThunderKittens' tiles.

- ``!tile.gl<f16, [?, ?]>``: a global-memory view, shape (and strides) known at run time.
- ``!tile.st<128x32xf16, Sw<3,3,3> o 0 o (128,32):(32,1)>``: a shared-memory tile and
  the layout that places its elements (coordinate -> element offset).
- ``!tile.rt<16x8xf32>``: a register tile, owned by a warp or a block; after
  register allocation it carries its fragment, a thread–value layout
  ``(lane, value) -> offset`` into the tile's column-major coordinates.
- ``!tile.rv<64xf32, row>``: a register vector, one value per row (``row``) or
  per column (``col``) of a register tile: what row/column reductions produce.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float64Type,
    IntAttr,
    IntegerType,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tilec.dialects.tile.attributes import DYNAMIC, LayoutAttr, TVLayoutAttr, parse_dims, print_dims
from tilec.dialects.tile.layout_syntax import parse_any_layout, parse_layout
from tilec.layout import ComposedLayout, Layout, TVLayout
from tilec.layout.int_tuple import flatten, suffix_product

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)

FLOAT8_TYPES = (Float8E4M3FNType, Float8E5M2Type)
"""The 8-bit floats (OCP FP8: ``f8E4M3FN``, ``f8E5M2``): in memory, shared tiles and register tiles; they
are loaded, stored, converted and multiplied (``tile.mma``, ``tile.wgmma``, ``tile.matmul``), not computed
on (PTX has no arithmetic on them)."""


def rounded_float(value: float, element_type: Attribute) -> float:
    """``value`` rounded to a float ``element_type`` as IEEE arithmetic rounds it: past the type's
    largest finite number it is ±inf (numpy's and Triton's answer), where xDSL's ``FloatAttr`` of the
    type would raise packing it. A bf16 value is left to ``FloatAttr``'s one rounding unless it overflows.
    An FP8 value is rounded as a conversion into FP8 rounds it: saturating (``cvt.rn.satfinite``)."""
    import numpy as np  # lazy: numpy costs ~45 ms of import (measured); the dialects need it only here

    if isinstance(element_type, FLOAT8_TYPES):
        from tilec.ir.float8 import f8_bits, f8_values, saturated_f8  # lazy: it imports numpy (~45 ms, as above)

        name = element_type.name
        return float(f8_values(f8_bits(saturated_f8(value, name), name), name))
    if not math.isfinite(value):
        return value
    if isinstance(element_type, BFloat16Type):  # FloatAttr rounds to bf16 itself: only its overflow here
        return math.copysign(math.inf, value) if abs(value) >= BF16_OVERFLOW else value
    name = {Float16Type: "float16", Float32Type: "float32"}.get(type(element_type))
    if name is None:
        return value
    with np.errstate(over="ignore"):
        return float(np.array(value, dtype=name))


BF16_OVERFLOW = (2 - 2**-8) * 2.0**127
"""The halfway point between bf16's largest finite number and 2^128: from it on, rounding to nearest
(ties to even: the largest's last bit is odd) gives infinity."""


def element_bits(element_type: Attribute) -> int:
    if isinstance(element_type, IntegerType):
        return element_type.width.data
    if isinstance(element_type, FLOAT8_TYPES):
        return 8
    if isinstance(element_type, Float16Type | BFloat16Type):
        return 16
    if isinstance(element_type, Float32Type):
        return 32
    if isinstance(element_type, Float64Type):
        return 64
    raise ValueError(f"unsupported tile element type {element_type}")


REGISTER_INT_TYPES = (IntegerType(1), IntegerType(8), IntegerType(16), IntegerType(32), IntegerType(64))
"""Integer element types of register tiles and vectors: coordinates (``tile.iota``), masks, i8 and i16
(quantized values), and i64 (torch's index type: ids, offsets)."""

MEMORY_INT_TYPES = (IntegerType(8), IntegerType(16), IntegerType(32))
"""Integer element types of arrays and shared tiles (i64 arrays: global memory only)."""


def _check_element(owner: str, element_type: Attribute, registers: bool = False, global_memory: bool = False) -> None:
    if isinstance(element_type, (*FLOAT_TYPES, *FLOAT8_TYPES)) or (registers and element_type in REGISTER_INT_TYPES):
        return  # FP8 in registers: values loaded, stored, converted and multiplied (tensor cores), not computed on
    if global_memory and element_type == IntegerType(64):
        return  # i64 arrays (torch's index type): read an element at a time (tile.load_scalar)
    if not registers and element_type in MEMORY_INT_TYPES:
        return  # i8, i16, i32 (values, indices, counts) in memory and registers
    if registers:
        raise VerifyException(f"{owner}: element type must be f16, bf16, f32, f64, f8E4M3FN or f8E5M2, or i8 / i16 / "
                              f"i32 / i64 / i1 in registers, got {element_type}")
    raise VerifyException(f"{owner}: element type must be f16, bf16, f32, f64, f8E4M3FN, f8E5M2, i8, i16 or i32"
                          f"{' (or i64)' if global_memory else ''}, got {element_type}")


def _print_shape(printer: Printer, shape: Sequence[int], element_type: Attribute) -> None:
    """``128x32xf16``, as memref and vector types spell it."""
    printer.print_string("".join(f"{d}x" for d in shape))
    printer.print_attribute(element_type)


def row_major(shape: Sequence[int]) -> Layout:
    """The default shared layout: compact, last dimension contiguous."""
    shape = tuple(shape)
    return Layout(shape, suffix_product(shape))


class _CheckedAtParse:
    """Types whose verifier errors point at their text: checked once parsed."""

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        return checked_parameters(cls, parser, cls._parse_body)


def checked_parameters(cls, parser: AttrParser, parse_body) -> Sequence[Attribute]:
    """Parse with ``parse_body`` and report a verifier error at the parsed text."""
    start = parser.pos
    params = parse_body(parser)
    try:
        cls.new(params)
    except VerifyException as err:
        parser.raise_error(str(err), start, parser.pos)
    return params


class _TileShaped:
    """Static-shape helpers shared by shared and register tiles."""

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n


EXTENT_LIMIT = 1 << 62
"""Every extent of a ``!tile.gl`` view is below this (no array is that large; the
launcher rejects a view that claims it), so index math on origins inside a view
cannot wrap around 64 bits (see ``known_range`` in ``tile-distribute``)."""


MAX_GL_RANK = 4
"""Global views have 1 to 4 dimensions (batch, head, rows, columns); loads and stores take 1-D or 2-D windows."""


@irdl_attr_definition
class GlobalType(_CheckedAtParse, ParametrizedAttribute, TypeAttribute):
    """``!tile.gl<f16, [?, ?]>``: a strided view of global memory (a kernel argument).

    Its extents are below :data:`EXTENT_LIMIT`.
    """

    name = "tile.gl"

    element_type: Attribute
    shape: ArrayAttr[IntAttr]

    def __init__(self, element_type: Attribute, shape: Sequence[int]):
        super().__init__(element_type, ArrayAttr(IntAttr(d) for d in shape))

    @property
    def dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            element_type = parser.parse_type()
            parser.parse_punctuation(",")
            dims = parse_dims(parser)
        return (element_type, ArrayAttr(IntAttr(d) for d in dims))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.element_type)
        printer.print_string(", ")
        print_dims(printer, self.dims)
        printer.print_string(">")

    def verify(self) -> None:
        _check_element(self.name, self.element_type, global_memory=True)
        if not 1 <= self.rank <= MAX_GL_RANK:
            raise VerifyException(f"{self.name}: rank must be 1 to {MAX_GL_RANK}, got {self.rank} (windows are 1-D or "
                                  "2-D: a higher-rank view is read through tile.subview of its leading coordinates)")
        if any(d != DYNAMIC and d <= 0 for d in self.dims):
            raise VerifyException(f"{self.name}: extents must be positive or '?', got {list(self.dims)}")


@irdl_attr_definition
class SharedType(_CheckedAtParse, _TileShaped, ParametrizedAttribute, TypeAttribute):
    """``!tile.st<128x32xf16, LAYOUT>``: a shared tile placed by a (possibly swizzled) layout."""

    name = "tile.st"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    layout_attr: Attribute

    def __init__(self, shape: Sequence[int], element_type: Attribute, layout: Layout | ComposedLayout | None = None):
        layout = row_major(shape) if layout is None else layout
        super().__init__(ArrayAttr(IntAttr(d) for d in shape), element_type, LayoutAttr(layout))

    @property
    def layout(self) -> Layout | ComposedLayout:
        return self.layout_attr.data

    @property
    def size_bytes(self) -> int:
        return self.layout.cosize() * element_bits(self.element_type) // 8

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            if parser.parse_optional_punctuation(","):
                layout = parse_any_layout(parser)
            else:
                layout = row_major(dims) if dims and all(d > 0 for d in dims) else Layout(1, 0)
        return (ArrayAttr(IntAttr(d) for d in dims), element_type, LayoutAttr(layout))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        _print_shape(printer, self.dims, self.element_type)
        printer.print_string(f", {self.layout}>")

    def verify(self) -> None:
        _check_element(self.name, self.element_type)
        _check_static_shape(self.name, self.dims)
        elements = 1
        for d in self.dims:
            elements *= d
        if elements * element_bits(self.element_type) // 8 > MAX_SHARED_BYTES:  # before the layout is evaluated
            raise VerifyException(f"{self.name}: a {'x'.join(map(str, self.dims))} tile of {self.element_type} takes "
                                  f"{elements * element_bits(self.element_type) // 8} bytes; a block has at most "
                                  f"{MAX_SHARED_BYTES} bytes of shared memory")
        layout = self.layout
        strides = flatten((layout.layout if isinstance(layout, ComposedLayout) else layout).stride)
        if any(d < 0 for d in strides):
            raise VerifyException(f"{self.name}: layout {layout} has a negative stride; shared offsets must be non-negative")
        if isinstance(layout, ComposedLayout) and not 0 <= layout.offset * element_bits(self.element_type) // 8 \
                < MAX_SHARED_BYTES:
            raise VerifyException(f"{self.name}: layout {layout} starts at element {layout.offset}; shared offsets are "
                                  f"0 to {MAX_SHARED_BYTES} bytes")
        if layout.rank() != len(self.dims):
            raise VerifyException(
                f"{self.name}: layout {layout} has rank {layout.rank()}, the {'x'.join(map(str, self.dims))} tile has rank {len(self.dims)}"
            )
        mode_sizes = [layout[i].size() for i in range(len(self.dims))] if len(self.dims) > 1 else [layout.size()]
        if tuple(mode_sizes) != self.dims:
            raise VerifyException(
                f"{self.name}: layout {layout} covers {'x'.join(map(str, mode_sizes))} elements, "
                f"expected the tile's {'x'.join(map(str, self.dims))}"
            )
        if self.size_bytes > MAX_SHARED_BYTES:
            raise VerifyException(f"{self.name}: a {'x'.join(map(str, self.dims))} tile of {self.element_type} takes "
                                  f"{self.size_bytes} bytes; a block has at most {MAX_SHARED_BYTES} bytes of shared "
                                  "memory")


MAX_SHARED_BYTES = 232448
"""Shared memory a block may use on the largest GPU tilec targets (227 KB, sm_90's opt-in maximum)."""

MAX_REGISTER_ELEMENTS = 1024 * 255
"""Elements a register tile or vector may have: every register of a 1024-thread block (255 each)."""


def _check_static_shape(owner: str, dims: Sequence[int]) -> None:
    if not dims or any(d <= 0 for d in dims):
        raise VerifyException(f"{owner}: shape must be static and positive, got {list(dims)}")


def _check_register_size(owner: str, dims: Sequence[int]) -> None:
    """A register value must fit a block's registers (the passes may then enumerate its fragment)."""
    elements = 1
    for d in dims:
        elements *= d
    if elements > MAX_REGISTER_ELEMENTS:
        raise VerifyException(f"{owner}: {'x'.join(map(str, dims))} is {elements} elements; registers hold at most "
                              f"{MAX_REGISTER_ELEMENTS} (255 32-bit registers x 1024 threads)")


MAX_THREADS = 1024
"""Threads of a CUDA block: what a fragment may span at most."""


@lru_cache(maxsize=256)
def _fragment_problem(layout: Layout, dims: tuple[int, ...]) -> str | None:
    """Why ``layout`` is not a fragment of a tile (or vector) of ``dims``, or None if it is.

    A fragment maps (thread, value) into the tile and holds every element at least once; several
    threads may hold the same element (a broadcast: the SIMT operands, register vectors), one
    thread holds an element once.
    """
    shape = "x".join(map(str, dims))
    elements = 1
    for d in dims:
        elements *= d
    if len(layout) == 2:
        threads, values = layout[0].size(), layout[1].size()
        if threads > MAX_THREADS:
            return f"fragment {layout} spans {threads} threads; a block has at most {MAX_THREADS}"
        if values > elements:
            return f"fragment {layout} gives a thread {values} values of the {shape} tile's {elements} elements"
    try:
        tv = TVLayout(layout, dims)
    except ValueError as err:
        return str(err)
    if not tv.covers():
        return f"fragment {layout} does not hold every element of the {shape} tile"
    for t in range(tv.num_threads):
        held = [tv.offset(t, v) for v in range(tv.num_values)]
        if len(set(held)) != len(held):
            return f"fragment {layout} gives thread {t} an element of the {shape} tile twice"
    return None


@irdl_attr_definition
class RegisterType(_CheckedAtParse, _TileShaped, ParametrizedAttribute, TypeAttribute):
    """``!tile.rt<64x64xf32>`` or, after ``tile-layout``, ``!tile.rt<16x8xf32, FRAGMENT>``: the fragment
    is a TV layout ``(lane, value) -> offset`` into the tile's column-major coordinates."""

    name = "tile.rt"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    fragment_attr: Attribute

    def __init__(self, shape: Sequence[int], element_type: Attribute, fragment: Layout | None = None):
        frag = NoneAttr() if fragment is None else TVLayoutAttr(fragment)
        super().__init__(ArrayAttr(IntAttr(d) for d in shape), element_type, frag)

    @property
    def fragment(self) -> TVLayout | None:
        if isinstance(self.fragment_attr, NoneAttr):
            return None
        return TVLayout(self.fragment_attr.data, self.dims)

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            frag: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(","):
                frag = TVLayoutAttr(parse_layout(parser))
        return (ArrayAttr(IntAttr(d) for d in dims), element_type, frag)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        _print_shape(printer, self.dims, self.element_type)
        if not isinstance(self.fragment_attr, NoneAttr):
            printer.print_string(f", {self.fragment_attr.data}")
        printer.print_string(">")

    def verify(self) -> None:
        _check_element(self.name, self.element_type, registers=True)
        _check_static_shape(self.name, self.dims)
        _check_register_size(self.name, self.dims)
        if len(self.dims) != 2:
            raise VerifyException(f"{self.name}: register tiles are 2-D, got shape {list(self.dims)}")
        if isinstance(self.fragment_attr, NoneAttr):
            return
        if not isinstance(self.fragment_attr, TVLayoutAttr) or len(self.fragment_attr.data) != 2:
            raise VerifyException(f"{self.name}: fragment must be a (thread, value) layout, got {self.fragment_attr}")
        problem = _fragment_problem(self.fragment_attr.data, self.dims)
        if problem:
            raise VerifyException(f"{self.name}: {problem}")

    def with_fragment(self, fragment: Layout | None) -> "RegisterType":
        return RegisterType(self.dims, self.element_type, fragment)


@irdl_attr_definition
class RegisterVectorType(_CheckedAtParse, ParametrizedAttribute, TypeAttribute):
    """``!tile.rv<64xf32, row>``: one value per row (``row``) or column (``col``) of a tile.

    After ``tile-layout`` it carries its fragment, ``!tile.rv<32xf32, row, ((4,8),4):((0,1),8)>``: a
    TV layout ``(lane, value) -> index`` into the vector, where the lanes that hold one row of the
    tile hold the same values (stride 0).
    """

    name = "tile.rv"

    length: IntAttr
    element_type: Attribute
    orientation: StringAttr
    fragment_attr: Attribute

    def __init__(self, length: int, element_type: Attribute, orientation: str = "row", fragment: Layout | None = None):
        frag = NoneAttr() if fragment is None else TVLayoutAttr(fragment)
        super().__init__(IntAttr(length), element_type, StringAttr(orientation), frag)

    @property
    def is_row(self) -> bool:
        return self.orientation.data == "row"

    @property
    def fragment(self) -> TVLayout | None:
        if isinstance(self.fragment_attr, NoneAttr):
            return None
        return TVLayout(self.fragment_attr.data, (self.length.data,))

    def with_fragment(self, fragment: Layout | None) -> "RegisterVectorType":
        return RegisterVectorType(self.length.data, self.element_type, self.orientation.data, fragment)

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            pos = parser.pos
            orientation = parser.parse_identifier(" ('row' or 'col')")
            if orientation not in ("row", "col"):
                parser.raise_error(f"register vector orientation must be 'row' or 'col', got '{orientation}'", pos, parser.pos)
            if len(dims) != 1:
                parser.raise_error(f"register vector must have one dimension, got {dims}", pos)
            frag: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(","):
                frag = TVLayoutAttr(parse_layout(parser))
        return (IntAttr(dims[0]), element_type, StringAttr(orientation), frag)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        _print_shape(printer, [self.length.data], self.element_type)
        printer.print_string(f", {self.orientation.data}")
        if not isinstance(self.fragment_attr, NoneAttr):
            printer.print_string(f", {self.fragment_attr.data}")
        printer.print_string(">")

    def verify(self) -> None:
        _check_element(self.name, self.element_type, registers=True)
        if self.length.data <= 0:
            raise VerifyException(f"{self.name}: length must be positive, got {self.length.data}")
        _check_register_size(self.name, (self.length.data,))
        if self.orientation.data not in ("row", "col"):
            raise VerifyException(f"{self.name}: orientation must be 'row' or 'col', got {self.orientation.data!r}")
        if isinstance(self.fragment_attr, NoneAttr):
            return
        if not isinstance(self.fragment_attr, TVLayoutAttr) or len(self.fragment_attr.data) != 2:
            raise VerifyException(f"{self.name}: fragment must be a (thread, value) layout, got {self.fragment_attr}")
        problem = _fragment_problem(self.fragment_attr.data, (self.length.data,))
        if problem:
            raise VerifyException(f"{self.name}: {problem}")


MBAR_TX, MBAR_WARPS, MBAR_CLUSTER_WARPS = "tx", "warps", "cluster_warps"
"""The kinds of ``!tile.mbar``: transaction (full) barriers, per-warp (empty) barriers, and per-warp
barriers of a thread-block cluster (empty barriers of stages that other blocks multicast into)."""


MBAR_BYTES = 8
"""Shared memory an ``mbarrier`` object takes (PTX: a 64-bit object)."""


@irdl_attr_definition
class MbarType(_CheckedAtParse, ParametrizedAttribute, TypeAttribute):
    """``!tile.mbar<3>`` / ``!tile.mbar<3, warps>``: sm_90 ``mbarrier`` objects in shared memory.

    Two kinds, by what completes a phase (the second parameter, ``tx`` by default):

    - ``tx`` (transaction barriers, the stages' "full" barriers): one arrival
      per phase (``tile.mbar_expect``, which also names the bytes its bulk
      copies will bring); the phase completes when that arrival and those
      bytes are in. A ``tile.bulk_copy`` into a multi-stage buffer uses the
      barrier of its stage.
    - ``warps`` (the stages' "empty" barriers): one arrival per warp of the
      block (``tile.mbar_arrive``, a warp saying it is done reading a stage).
    - ``cluster_warps`` (empty barriers of a thread-block cluster whose blocks
      multicast into each other's stages, ``tile.bulk_copy ... multicast``): one
      arrival per warp of every block of the cluster; ``tile.mbar_arrive``
      arrives on the barrier of that index in each block of the cluster.

    ``tile.mbar_wait`` waits for a phase of either kind by its parity.
    """

    name = "tile.mbar"

    count: IntAttr
    arrivals: StringAttr

    def __init__(self, count: int, arrivals: str = MBAR_TX):
        super().__init__(IntAttr(count), StringAttr(arrivals))

    @property
    def per_warp(self) -> bool:
        """Arrivals are warps' (``warps`` or ``cluster_warps``), not a transaction's."""
        return self.arrivals.data in (MBAR_WARPS, MBAR_CLUSTER_WARPS)

    @property
    def cluster_wide(self) -> bool:
        """Every block of the cluster's warps arrive (``cluster_warps``)."""
        return self.arrivals.data == MBAR_CLUSTER_WARPS

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            count = parser.parse_integer(allow_boolean=False, allow_negative=False)
            arrivals = MBAR_TX
            if parser.parse_optional_punctuation(","):
                arrivals = parser.parse_identifier()
        return (IntAttr(count), StringAttr(arrivals))

    def print_parameters(self, printer: Printer) -> None:
        kind = "" if self.arrivals.data == MBAR_TX else f", {self.arrivals.data}"
        printer.print_string(f"<{self.count.data}{kind}>")

    def verify(self) -> None:
        if self.arrivals.data not in (MBAR_TX, MBAR_WARPS, MBAR_CLUSTER_WARPS):
            raise VerifyException(f"{self.name}: arrivals must be '{MBAR_TX}', '{MBAR_WARPS}' or "
                                  f"'{MBAR_CLUSTER_WARPS}', got {self.arrivals.data!r}")
        if self.count.data <= 0:
            raise VerifyException(f"{self.name}: needs at least one barrier, got {self.count.data}")
        if self.count.data * MBAR_BYTES > MAX_SHARED_BYTES:
            raise VerifyException(f"{self.name}: {self.count.data} barriers of {MBAR_BYTES} bytes do not fit in the "
                                  f"{MAX_SHARED_BYTES} bytes of a block's shared memory")
