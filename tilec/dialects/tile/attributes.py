"""Attributes of the tile dialect: layouts, swizzles, atoms and launch shapes.

Each attribute wraps an immutable value from ``tilec.layout`` and prints it in
CuTe's notation, e.g. ``#tile.layout<(8,(4,2)):(4,(1,32))>`` or
``#tile.layout<Sw<3,3,3> o 0 o (8,64):(64,1)>``.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute, Data, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tilec.dialects.tile.layout_syntax import parse_any_layout, parse_layout, parse_swizzle_body
from tilec.layout import COPY_ATOMS, MMA_ATOMS, ComposedLayout, CopyAtom, Layout, MMAAtom, Swizzle

DYNAMIC = -1
"""A dimension only known at run time, written ``?``."""

MAX_THREADS_PER_BLOCK = 1024
MAX_SHARED_BYTES = 227 * 1024
"""Largest dynamic shared memory one block may opt in to on sm_90 (sm_80: 163 KB)."""
MAX_CLUSTER_BLOCKS = 8
"""Blocks in a thread-block cluster: 8 is the portable limit (16 needs a non-portable opt-in)."""


@irdl_attr_definition
class LayoutAttr(Data[Layout | ComposedLayout]):
    """A layout or a swizzled (composed) layout in CuTe notation."""

    name = "tile.layout"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Layout | ComposedLayout:
        with parser.in_angle_brackets():
            return parse_any_layout(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")

    @property
    def layout(self) -> Layout | ComposedLayout:
        return self.data


@irdl_attr_definition
class SwizzleAttr(Data[Swizzle]):
    """``#tile.swizzle<B,M,S>``: CuTe's ``Swizzle<B,M,S>`` on element offsets."""

    name = "tile.swizzle"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Swizzle:
        return parse_swizzle_body(parser)

    def print_parameter(self, printer: Printer) -> None:
        sw = self.data
        printer.print_string(f"<{sw.bits},{sw.base},{sw.shift}>")


@irdl_attr_definition
class TVLayoutAttr(Data[Layout]):
    """``#tile.tv<(thr,val):(...)>``: a thread–value layout (tile given by the user of it)."""

    name = "tile.tv"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Layout:
        pos = parser.pos
        with parser.in_angle_brackets():
            layout = parse_layout(parser)
        if len(layout) != 2:
            parser.raise_error(f"TV layout {layout} must have two modes (thread, value)", pos, parser.pos)
        return layout

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data}>")


def _parse_atom_name(parser: AttrParser, table: dict, what: str):
    """``<name>``: an atom of ``table``; an unknown name is an error listing the known ones."""
    pos = parser.pos
    with parser.in_angle_brackets():
        key = parser.parse_identifier(f" naming {what}")
    if key not in table:
        parser.raise_error(f"unknown {what} '{key}', expected one of {', '.join(sorted(table))}", pos, parser.pos)
    return table[key]


@irdl_attr_definition
class MMAAtomAttr(Data[MMAAtom]):
    """``#tile.mma_atom<mma_m16n8k16_f16>``: one of ``tilec.layout.MMA_ATOMS``."""

    name = "tile.mma_atom"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> MMAAtom:
        return _parse_atom_name(parser, MMA_ATOMS, "MMA atom")

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.name}>")


@irdl_attr_definition
class CopyAtomAttr(Data[CopyAtom]):
    """``#tile.copy_atom<ldmatrix_x4_trans>``: one of ``tilec.layout.COPY_ATOMS``."""

    name = "tile.copy_atom"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> CopyAtom:
        return _parse_atom_name(parser, COPY_ATOMS, "copy atom")

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.name}>")


def _int_array(values: Sequence[int]) -> ArrayAttr[IntAttr]:
    return ArrayAttr(IntAttr(v) for v in values)


def parse_dims(parser: AttrParser) -> list[int]:
    """``[?, 64, 1]``: integers or ``?`` for dynamic."""

    def dim() -> int:
        if parser.parse_optional_punctuation("?") is not None:
            return DYNAMIC
        return parser.parse_integer(allow_boolean=False, allow_negative=False)

    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, dim)


def print_dims(printer: Printer, dims: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join("?" if d == DYNAMIC else str(d) for d in dims) + "]")


@irdl_attr_definition
class LaunchAttr(ParametrizedAttribute):
    """``#tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 32768>`` on a kernel ``func.func``.

    Grid extents may be dynamic: the host computes them from the problem shape.
    ``cluster = [2, 1, 1]`` (sm_90, optional) groups the grid's blocks into
    thread-block clusters of that shape (consecutive block indices, as CUDA
    does), whose blocks run at the same time on one GPC and may wait for each
    other (``tile.cluster_barrier``) and write each other's shared memory
    (``tile.bulk_copy ... multicast``); the grid must be whole clusters.
    """

    name = "tile.launch"

    grid: ArrayAttr[IntAttr]
    block: ArrayAttr[IntAttr]
    smem: IntAttr
    cluster: ArrayAttr[IntAttr]

    def __init__(self, grid: Sequence[int], block: Sequence[int], smem: int = 0, cluster: Sequence[int] = (1, 1, 1)):
        super().__init__(_int_array(grid), _int_array(block), IntAttr(smem), _int_array(cluster))

    def replace(self, *, grid: Sequence[int] | None = None, block: Sequence[int] | None = None,
                smem: int | None = None, cluster: Sequence[int] | None = None) -> LaunchAttr:
        """This launch with the given fields changed (the others, the cluster too, kept)."""
        return LaunchAttr(self.grid_dims if grid is None else grid, self.block_dims if block is None else block,
                          self.smem.data if smem is None else smem, self.cluster_dims if cluster is None else cluster)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        params = cls._parse_body(parser)
        try:
            cls.new(params)
        except VerifyException as err:
            parser.raise_error(str(err), start, parser.pos)
        return params

    @classmethod
    def _parse_body(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            parser.parse_keyword("grid")
            parser.parse_punctuation("=")
            grid = parse_dims(parser)
            parser.parse_punctuation(",")
            parser.parse_keyword("block")
            parser.parse_punctuation("=")
            block = parse_dims(parser)
            smem = 0
            cluster = (1, 1, 1)
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("smem")
                parser.parse_punctuation("=")
                smem = parser.parse_integer(allow_boolean=False, allow_negative=False)
                if parser.parse_optional_punctuation(","):
                    parser.parse_keyword("cluster")
                    parser.parse_punctuation("=")
                    cluster = parse_dims(parser)
        return (_int_array(grid), _int_array(block), IntAttr(smem), _int_array(cluster))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<grid = ")
        print_dims(printer, self.grid_dims)
        printer.print_string(", block = ")
        print_dims(printer, self.block_dims)
        printer.print_string(f", smem = {self.smem.data}")
        if self.cluster_size > 1:
            printer.print_string(", cluster = ")
            print_dims(printer, self.cluster_dims)
        printer.print_string(">")

    @property
    def grid_dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.grid.data)

    @property
    def block_dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.block.data)

    @property
    def cluster_dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.cluster.data)

    @property
    def cluster_size(self) -> int:
        """Blocks a cluster (1: no clusters)."""
        x, y, z = self.cluster_dims
        return x * y * z

    @property
    def threads(self) -> int:
        x, y, z = self.block_dims
        return x * y * z

    def verify(self) -> None:
        if len(self.grid.data) != 3 or len(self.block.data) != 3 or len(self.cluster.data) != 3:
            raise VerifyException(f"{self.name}: grid, block and cluster need 3 extents each, got "
                                  f"{len(self.grid.data)}, {len(self.block.data)} and {len(self.cluster.data)}")
        if any(d == DYNAMIC or d <= 0 for d in self.block_dims):
            raise VerifyException(f"{self.name}: block extents must be static and positive, got {list(self.block_dims)}")
        if self.threads > MAX_THREADS_PER_BLOCK:
            raise VerifyException(f"{self.name}: {self.threads} threads per block, the limit is {MAX_THREADS_PER_BLOCK}")
        if any(d != DYNAMIC and d <= 0 for d in self.grid_dims):
            raise VerifyException(f"{self.name}: grid extents must be positive or '?', got {list(self.grid_dims)}")
        if any(d == DYNAMIC or d <= 0 for d in self.cluster_dims) or self.cluster_size > MAX_CLUSTER_BLOCKS:
            raise VerifyException(f"{self.name}: cluster extents must be static and positive, at most "
                                  f"{MAX_CLUSTER_BLOCKS} blocks in all (the portable limit), got {list(self.cluster_dims)}")
        for axis, (g, c) in enumerate(zip(self.grid_dims, self.cluster_dims)):
            if g != DYNAMIC and g % c:
                raise VerifyException(f"{self.name}: the grid is whole clusters: its extent {g} along "
                                      f"{'xyz'[axis]} is not a multiple of the cluster's {c}")
        if self.smem.data > MAX_SHARED_BYTES:
            raise VerifyException(
                f"{self.name}: {self.smem.data} bytes of shared memory, more than the device limit of {MAX_SHARED_BYTES}"
            )
