"""Operations of the tile dialect.

Four groups (loops and index math are ``scf`` and ``arith``):

- kernel structure: ``tile.block_id``/``tile.thread_id`` per axis,
  ``tile.warp_id``, ``tile.lane_id``, ``tile.barrier``;
- the whole problem: ``tile.matmul`` with an elementwise epilogue region;
- memory: ``tile.alloc``, ``tile.load``/``tile.store`` between global or
  shared tiles and register tiles, ``tile.gather``/``tile.scatter`` at coordinates held
  in register tiles, ``tile.copy`` (a tiled copy, optionally with
  thread and value layouts) and its ``cp.async`` form ``tile.async_copy`` with
  ``tile.async_commit``/``tile.async_wait``, and sm_90's bulk tensor copy
  ``tile.bulk_copy`` with its transaction barriers (``tile.mbar_init``,
  ``tile.mbar_expect``, ``tile.mbar_wait``);
- compute on register tiles: ``tile.mma``, elementwise maps, row/column
  reductions into register vectors and broadcasts back.

A global view is addressed by the element coordinates of a tile's origin
(``%g[%row0, %col0]``), not by tile numbers. Reads of a global view outside
its run-time shape give zero and writes there are dropped: that is how ragged
edges are expressed at this level.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    IndexType,
    IntAttr,
    IntegerType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    opt_region_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import HasParent, IsTerminator, MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from tilec.dialects.tile.attributes import DYNAMIC, CopyAtomAttr, LaunchAttr, LayoutAttr, MMAAtomAttr
from tilec.dialects.tile.types import (
    FLOAT8_TYPES,
    FLOAT_TYPES,
    MAX_THREADS,
    MBAR_TX,
    MBAR_WARPS,
    GlobalType,
    MbarType,
    RegisterType,
    RegisterVectorType,
    SharedType,
    element_bits,
)
from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.layout.bulk import BulkBox, bulk_box

MMA_INPUT_TYPES = (Float16Type, BFloat16Type, Float32Type)
MATMUL_INPUT_TYPES = (*MMA_INPUT_TYPES, *FLOAT8_TYPES)
"""What ``tile.matmul`` multiplies: the mma.sync types, and FP8 (wgmma only, A and B K-major)."""
WGMMA_K_BYTES = 32
"""One wgmma's K step in bytes: 16 f16/bf16 elements, 32 FP8 ones."""


def _fail(op: IRDLOperation, message: str) -> None:
    raise VerifyException(f"'{op.name}' {message}")


def _dims_text(dims) -> str:
    return "x".join("?" if d == DYNAMIC else str(d) for d in dims)


# -- kernel structure ----------------------------------------------------------

_AXES = ("x", "y", "z")


class _AxisIdOp(IRDLOperation):
    """An id along one launch axis: ``%i = tile.block_id x``."""

    axis = prop_def(IntAttr)
    result = result_def(IndexType)

    traits = traits_def(Pure())

    def __init__(self, axis: str | int = "x"):
        index = _AXES.index(axis) if isinstance(axis, str) else axis
        super().__init__(properties={"axis": IntAttr(index)}, result_types=[IndexType()])

    @classmethod
    def parse(cls, parser):
        pos = parser.pos
        axis = parser.parse_identifier(" ('x', 'y' or 'z')")
        if axis not in _AXES:
            parser.raise_error(f"'{cls.name}' axis must be x, y or z, got '{axis}'", pos, parser.pos)
        op = cls(axis)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer):
        printer.print_string(f" {_AXES[self.axis.data]}")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        if not 0 <= self.axis.data <= 2:
            _fail(self, f"axis must be 0, 1 or 2 (x, y, z), got {self.axis.data}")


@irdl_op_definition
class BlockIdOp(_AxisIdOp):
    name = "tile.block_id"


@irdl_op_definition
class ThreadIdOp(_AxisIdOp):
    name = "tile.thread_id"


@irdl_op_definition
class GridDimOp(_AxisIdOp):
    """The number of blocks of the launch along an axis (``%nctaid``): a persistent kernel's stride
    over its tiles (Triton's ``num_programs``)."""

    name = "tile.grid_dim"


@irdl_op_definition
class ClusterIdOp(_AxisIdOp):
    """Which thread-block cluster of the launch the block is in, along an axis (``%clusterid``; the
    block index divided by the cluster's extent): the same for every block of a cluster."""

    name = "tile.cluster_id"


@irdl_op_definition
class ClusterCountOp(_AxisIdOp):
    """The number of clusters of the launch along an axis (``%nclusterid``): a persistent kernel's
    stride over its tiles when a cluster works on tiles together."""

    name = "tile.cluster_count"


class _LinearIdOp(IRDLOperation):
    result = result_def(IndexType)

    traits = traits_def(Pure())

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[IndexType()])


@irdl_op_definition
class WarpIdOp(_LinearIdOp):
    """The warp of the calling thread within its block (linear thread id / 32)."""

    name = "tile.warp_id"


@irdl_op_definition
class LaneIdOp(_LinearIdOp):
    """The lane of the calling thread within its warp (0..31)."""

    name = "tile.lane_id"


@irdl_op_definition
class BlockRankOp(_LinearIdOp):
    """The block's rank in its thread-block cluster (``%cluster_ctarank``: 0 .. blocks a cluster - 1,
    x fastest); 0 in a launch without clusters."""

    name = "tile.block_rank"


@irdl_op_definition
class ClusterBarrierOp(IRDLOperation):
    """Every thread of every block of the thread-block cluster waits here (``barrier.cluster.arrive``
    with release, ``barrier.cluster.wait`` with acquire): what one block wrote before it, in its own
    or another block's shared memory (barriers initialised, stages released), is visible to all after
    it. A kernel with clusters meets here once its barriers are initialised (before any block arrives
    on another's) and before it ends (no block leaves while another may still write to it)."""

    name = "tile.cluster_barrier"

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class BarrierOp(IRDLOperation):
    """Every thread of the block waits here; shared-memory writes before it are visible after it.

    ``tile.barrier threads N``: only the block's first ``N`` threads take part (a multiple of 32),
    the others are elsewhere: the consumer warps of a warp-specialised kernel, whose producer warps
    run their own loop (``tile-pipeline{producer=true}``)."""

    name = "tile.barrier"

    threads = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "(`threads` $threads^)? attr-dict"

    def __init__(self, threads: int | None = None):
        super().__init__(properties={} if threads is None else {"threads": IntegerAttr(threads, 64)})

    def verify_(self) -> None:
        if self.threads is not None and not (32 <= self.threads.value.data <= 1024 and self.threads.value.data % 32 == 0):
            _fail(self, f"threads must be a multiple of 32 in 32 .. 1024, got {self.threads.value.data}")


def limit_barriers(op: Operation, threads: int) -> None:
    """Every ``tile.barrier`` nested in ``op`` takes part with the block's first ``threads`` only: the
    consumer region of a warp-specialised kernel, which the producer warps never enter."""
    for inner in op.walk():
        if isinstance(inner, BarrierOp) and inner.threads is None:
            inner.properties["threads"] = IntegerAttr(threads, 64)


@irdl_op_definition
class SetMaxNRegOp(IRDLOperation):
    """``tile.setmaxnreg "inc"|"dec" N``: the executing warpgroup's threads now own ``N`` registers each
    (sm_90a's ``setmaxnreg``): a warp-specialised kernel's producer gives registers back (``dec``)
    and its consumers take them (``inc``). Every warp of a warpgroup must execute the same one."""

    name = "tile.setmaxnreg"

    action = prop_def(StringAttr)
    regs = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$action $regs attr-dict"

    def __init__(self, action: str, regs: int):
        super().__init__(properties={"action": StringAttr(action), "regs": IntegerAttr(regs, 64)})

    def verify_(self) -> None:
        if self.action.data not in ("inc", "dec"):
            _fail(self, f"action must be inc or dec, got {self.action.data!r}")
        n = self.regs.value.data
        if not (24 <= n <= 256 and n % 8 == 0):
            _fail(self, f"a warpgroup's registers per thread must be a multiple of 8 in 24 .. 256, got {n}")


MAX_TURN_GROUPS = 15
"""Warp groups that can take turns: one named barrier each (ids 1 .. 15; 0 is ``tile.barrier``'s)."""


class _TurnOp(IRDLOperation):
    groups = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())  # a scheduling point: nothing moves across

    assembly_format = "$groups attr-dict"

    def __init__(self, groups: int):
        super().__init__(properties={"groups": IntegerAttr(groups, 64)})

    def verify_(self) -> None:
        if not 2 <= self.groups.value.data <= MAX_TURN_GROUPS:
            _fail(self, f"groups must be 2 to {MAX_TURN_GROUPS} (one named barrier each), got {self.groups.value.data}")


@irdl_op_definition
class TurnBeginOp(_TurnOp):
    """``tile.turn_begin G``: the block's warps, split into ``G`` equal groups of consecutive warps,
    run the code up to ``tile.turn_end`` one group at a time, in turn (group 0, 1, .., G-1, 0, ..):
    FlashAttention-3's ping-pong, where one warpgroup's tensor-core work runs while the other
    computes its softmax. Only the schedule changes, never a value: every group must pass through
    the turns equally often, as every thread must reach a ``tile.barrier``."""

    name = "tile.turn_begin"


@irdl_op_definition
class TurnEndOp(_TurnOp):
    """``tile.turn_end G``: this group's turn ends; the next group's begins (see ``tile.turn_begin``)."""

    name = "tile.turn_end"


# -- whole problem -----------------------------------------------------------


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """``c = epilogue(op(a) @ op(b), inputs...)`` over whole global matrices.

    ``a`` is ``M x K`` (``K x M`` with ``transpose_a``), ``b`` is ``K x N``
    (``N x K`` with ``transpose_b``), accumulation is in f32. With 3-D views
    (``B x M x K`` ...) it is a batch of such matmuls, one per leading index
    (the epilogue's inputs are the same for each): what split-K runs, K's
    slices as a batch of strided views. The epilogue
    block receives the f32 accumulator of one element, then one element of
    each extra input (rank-1 inputs are indexed by column, rank-2 by
    ``(row, column)``; a rank-1 input of static extent ``[1]`` is one number
    for every element, as NumPy broadcasts it: a per-tensor scale), and
    yields the value stored to ``c``.
    """

    name = "tile.matmul"

    a = operand_def(GlobalType)
    b = operand_def(GlobalType)
    c = operand_def(GlobalType)
    inputs = var_operand_def(GlobalType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    epilogue = region_def("single_block")

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = (
        "$a `,` $b `->` $c (`epilogue` `(` $inputs^ `:` type($inputs) `)`)? "
        "(`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? "
        "attr-dict `:` type($a) `,` type($b) `->` type($c) $epilogue"
    )

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue,
        inputs: tuple[SSAValue, ...] = (),
        epilogue: Region | None = None,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        if epilogue is None:
            epilogue = default_epilogue(SSAValue.get(c).type, [SSAValue.get(i).type for i in inputs])
        props: dict[str, Attribute] = {}
        if transpose_a:
            props["transpose_a"] = UnitAttr()
        if transpose_b:
            props["transpose_b"] = UnitAttr()
        super().__init__(operands=[a, b, c, inputs], properties=props, regions=[epilogue])

    @property
    def batched(self) -> bool:
        """Whether a, b and c are rank 3: a batch of matrices, one matmul per leading index."""
        return self.c.type.rank == 3

    def problem_dims(self) -> tuple[int, int, int]:
        """Static (M, N, K) where known, ``DYNAMIC`` otherwise."""
        am, ak = self.a.type.dims[-2:][::-1] if self.transpose_a else self.a.type.dims[-2:]
        bk, bn = self.b.type.dims[-2:][::-1] if self.transpose_b else self.b.type.dims[-2:]
        return am, bn, ak if ak != DYNAMIC else bk

    def verify_(self) -> None:
        a, b, c = self.a.type, self.b.type, self.c.type
        rank = c.rank if c.rank in (2, 3) else 2
        for label, t in (("a", a), ("b", b), ("c", c)):
            if t.rank != rank:
                _fail(self, f"operand {label} must be a {rank}-D global view"
                            f"{' (a batch, as c is)' if rank == 3 else ' (or a, b and c all 3-D: a batch)'}, got {t}")
        if rank == 3:
            batches = {x.dims[0] for x in (a, b, c)} - {DYNAMIC}
            if len(batches) > 1:
                ext = ["?" if x.dims[0] == DYNAMIC else str(x.dims[0]) for x in (a, b, c)]
                _fail(self, f"a, b and c must have one batch extent, got {ext[0]}, {ext[1]} and {ext[2]}")
        a, b, c = (GlobalType(x.element_type, list(x.dims[-2:])) for x in (a, b, c))
        if not isinstance(a.element_type, MATMUL_INPUT_TYPES) or a.element_type != b.element_type:
            _fail(self, f"a and b must share an element type among f16, bf16, f32, f8E4M3FN, f8E5M2; got "
                        f"{a.element_type} and {b.element_type}")
        if isinstance(a.element_type, FLOAT8_TYPES) and (self.transpose_a or not self.transpose_b):
            _fail(self, f"{a.element_type} operands are read K-major (FP8 wgmma has no transpose): a must be M x K "
                        "and b N x K (transpose_b), without transpose_a")
        if not isinstance(c.element_type, MMA_INPUT_TYPES):
            _fail(self, f"c must have element type f16, bf16 or f32, got {c.element_type}")
        am, ak = a.dims[::-1] if self.transpose_a else a.dims
        bk, bn = b.dims[::-1] if self.transpose_b else b.dims
        cm, cn = c.dims
        for what, x, y in (("K of a and b", ak, bk), ("M of a and c", am, cm), ("N of b and c", bn, cn)):
            if DYNAMIC not in (x, y) and x != y:
                _fail(self, f"{what} differ: {x} vs {y} (a is {_dims_text(a.dims)}, b is {_dims_text(b.dims)}, c is {_dims_text(c.dims)})")
        for i, inp in enumerate(self.inputs):
            t = inp.type
            if t.rank == 1 and DYNAMIC not in (t.dims[0], cn) and t.dims[0] not in (cn, 1):
                _fail(self, f"epilogue input {i} has {t.dims[0]} elements, expected N = {cn} (or 1, one number "
                            "for every element)")
            if t.rank == 2 and any(DYNAMIC not in (x, y) and x != y for x, y in zip(t.dims, c.dims)):
                _fail(self, f"epilogue input {i} is {_dims_text(t.dims)}, expected the shape of c {_dims_text(c.dims)}")
        block = self.epilogue.block
        expected = [Float32Type(), *(i.type.element_type for i in self.inputs)]
        got = [arg.type for arg in block.args]
        if got != expected:
            _fail(self, f"epilogue block takes ({', '.join(map(str, got))}), expected ({', '.join(map(str, expected))})")
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1 or term.values[0].type != c.element_type:
            _fail(self, f"epilogue must end with 'tile.yield' of one {c.element_type} value (the element of c)")


def default_epilogue(c_type: GlobalType, input_types: list[Attribute]) -> Region:
    """The epilogue that stores the accumulator converted to ``c``'s element type."""
    block = Block(arg_types=[Float32Type(), *(t.element_type for t in input_types)])
    value = block.args[0]
    if c_type.element_type != Float32Type():
        trunc = arith.TruncFOp(value, c_type.element_type)
        block.add_op(trunc)
        value = trunc.result
    block.add_op(YieldOp(value))
    return Region(block)


def _register_shape(ty: Attribute) -> tuple:
    """A register tile's dims, or a register vector's (length, orientation)."""
    return ty.dims if isinstance(ty, RegisterType) else (ty.length.data, ty.orientation.data)


@irdl_op_definition
class MapOp(IRDLOperation):
    """An elementwise function of register tiles (or register vectors) of one shape: the region maps
    scalars to a scalar.

    This is how a whole-problem epilogue survives tiling, and how any math, comparison or
    selection reaches registers: the block argument types are the operands' element types,
    ``tile.yield`` gives the result's.
    """

    name = "tile.map"

    inputs = var_operand_def(RegisterType | RegisterVectorType)
    result = result_def(RegisterType | RegisterVectorType)
    body = region_def("single_block")

    traits = traits_def(Pure())

    assembly_format = "$inputs attr-dict `:` type($inputs) `->` type($result) $body"

    def __init__(self, inputs, result_type: RegisterType, body: Region):
        super().__init__(operands=[inputs], result_types=[result_type], regions=[body])

    def verify_(self) -> None:
        if not self.inputs:
            _fail(self, "needs at least one input tile")
        shape = _register_shape(self.result.type)
        for i, v in enumerate(self.inputs):
            if _register_shape(v.type) != shape:
                _fail(self, f"input {i} is {v.type}, the result is {self.result.type}: shapes differ (broadcast the vector first)")
        block = self.body.block
        expected = [v.type.element_type for v in self.inputs]
        got = [a.type for a in block.args]
        if got != expected:
            _fail(self, f"body takes ({', '.join(map(str, got))}), expected ({', '.join(map(str, expected))})")
        term = block.last_op
        if not isinstance(term, YieldOp) or len(term.values) != 1 or term.values[0].type != self.result.type.element_type:
            _fail(self, f"body must end with 'tile.yield' of one {self.result.type.element_type} value")
        _check_visible(self, self.body)
        for op in block.ops:
            # what a body may do with FP8 values: convert, bitcast, select, make constants, yield
            if not isinstance(op, (arith.ExtFOp, arith.TruncFOp, arith.BitcastOp, arith.SelectOp, arith.ConstantOp,
                                   YieldOp)) and \
                    any(isinstance(v.type, FLOAT8_TYPES) for v in (*op.operands, *op.results)):
                _fail(self, f"its body computes on an 8-bit float ({op.name} of {', '.join(str(v.type) for v in op.operands)}):"
                            " FP8 values are converted (arith.extf / arith.truncf), selected and bitcast, not computed "
                            "on (PTX has no arithmetic on them)")


def _check_visible(op: IRDLOperation, region: Region) -> None:
    """Every value ``region``'s ops use is defined in it or above ``op`` (xDSL's parser takes a name from a
    sibling region, which no pass can lower: the per-element bodies are copied where only those exist)."""
    above = set()
    block = op.parent_block()
    while block is not None:
        above.add(block)
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    inside = set(region.blocks) | {b for inner in region.walk() for r in inner.regions for b in r.blocks}
    for inner in region.walk():
        for v in inner.operands:
            owner = v.owner if isinstance(v.owner, Block) else v.owner.parent_block()
            if owner not in above and owner not in inside:
                _fail(op, f"its region uses %{v.name_hint or '?'} ({v.type}), defined outside it and not above "
                          f"{op.name}")


def _verify_combining(op: IRDLOperation, region: Region, element: Attribute) -> None:
    """A scan's or reduction's combining function: two ``element`` scalars to one (``tile.yield``)."""
    _check_visible(op, region)
    block = region.block
    if [a.type for a in block.args] != [element, element]:
        takes = ", ".join(str(a.type) for a in block.args)
        _fail(op, f"region takes ({takes}), expected ({element}, {element})")
    term = block.last_op
    if not isinstance(term, YieldOp) or [v.type for v in term.values] != [element]:
        _fail(op, f"region must end with 'tile.yield' of one {element} value")


SCAN_KINDS = ("sum", "prod", "max", "min", "combine")


@irdl_op_definition
class ScanOp(IRDLOperation):
    """The inclusive scan of a register tile along ``dim`` (or of a register vector):
    ``%c = tile.scan "sum" %x dim 1 : !tile.rt<64x128xf32> -> !tile.rt<64x128xf32>`` holds
    ``x[i, 0] + ... + x[i, j]`` at ``(i, j)`` (Triton's ``tl.cumsum``; ``prod``, ``max`` and ``min`` the
    same with those). ``reverse``: from the other end (``x[i, j] + ... + x[i, n-1]``). 16-bit floats
    are combined in f32 and rounded once; integers (signed) in their own width, wrapping as the GPU's
    adds do. The extent scanned is a power of two.

    ``"combine"`` (Triton's ``tl.associative_scan``) combines with the op's region instead: two scalars
    of the element type, the earlier first, to one (``tile.yield``), in the element type. The order of
    the combinations is a tree's, so the function must be associative; it need not commute."""

    name = "tile.scan"

    T: ClassVar = VarConstraint("T", base(RegisterType) | base(RegisterVectorType))

    input = operand_def(T)
    result = result_def(T)
    kind = prop_def(StringAttr)
    dim = prop_def(IntegerAttr[I64])
    reverse = opt_prop_def(UnitAttr)
    combine = opt_region_def("single_block")

    traits = traits_def(Pure())

    assembly_format = ("$kind $input `dim` $dim (`reverse` $reverse^)? attr-dict `:` type($input) `->` type($result) "
                       "($combine^)?")

    def __init__(self, value: SSAValue, kind: str, dim: int, reverse: bool = False, combine: Region | None = None):
        props: dict[str, Attribute] = {"kind": StringAttr(kind), "dim": IntegerAttr(dim, 64)}
        if reverse:
            props["reverse"] = UnitAttr()
        super().__init__(operands=[value], properties=props, result_types=[SSAValue.get(value).type],
                         regions=[[combine] if combine is not None else []])

    @property
    def extent(self) -> int:
        ty = self.input.type
        return ty.length.data if isinstance(ty, RegisterVectorType) else ty.dims[self.dim.value.data]

    def verify_(self) -> None:
        ty, dim, kind = self.input.type, self.dim.value.data, self.kind.data
        if kind not in SCAN_KINDS:
            _fail(self, f"scans with one of {', '.join(SCAN_KINDS)}, not {kind!r}")
        rank = 1 if isinstance(ty, RegisterVectorType) else 2
        if not 0 <= dim < rank:
            _fail(self, f"dim {dim} is not a dimension of {ty}")
        n = self.extent
        if n & (n - 1):
            _fail(self, f"scans an extent that is a power of two, got {n} along dim {dim} of {ty}")
        element = ty.element_type
        if not (isinstance(element, Float16Type | BFloat16Type | Float32Type | Float64Type)
                or element in (IntegerType(32), IntegerType(64))):
            _fail(self, f"scans float, i32 or i64 values, got {ty}")
        if (kind == "combine") != (self.combine is not None):
            _fail(self, "has a combining region exactly when its kind is 'combine'")
        if self.combine is not None:
            _verify_combining(self, self.combine, element)


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Each row (a ``row`` result) or column (``col``) of a register tile combined by the op's region,
    Triton's ``tl.reduce`` with a function: two scalars of the element type to one (``tile.yield``), in
    the element type. The rows' values are combined in a tree (registers, then lanes, then warps), so
    the function must be associative and commutative, as Triton's reductions take it."""

    name = "tile.reduce"

    V: ClassVar = VarConstraint("V", base(RegisterVectorType))

    input = operand_def(RegisterType)
    acc = opt_operand_def(V)
    result = result_def(V)
    combine = region_def("single_block")

    traits = traits_def(Pure())

    assembly_format = "$input (`into` $acc^)? attr-dict `:` type($input) `->` type($result) $combine"

    def __init__(self, value: SSAValue, orientation: str, combine: Region):
        t = SSAValue.get(value).type
        length = t.dims[0] if orientation == "row" else t.dims[1]
        super().__init__(operands=[value, []], regions=[combine],
                         result_types=[RegisterVectorType(length, t.element_type, orientation)])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        orientation = dst.orientation.data
        length = src.dims[0] if orientation == "row" else src.dims[1]
        if dst.length.data != length or dst.element_type != src.element_type:
            _fail(self, f"reducing {src} gives !tile.rv<{length}x{src.element_type}, {orientation}>, not {dst}")
        _verify_combining(self, self.combine, src.element_type)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends an epilogue with the value(s) it produces."""

    name = "tile.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), HasParent(MatmulOp, MapOp, ScanOp, ReduceOp), Pure())

    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


@irdl_op_definition
class DimOp(IRDLOperation):
    """The run-time extent of one dimension of a global view (``memref.dim``'s counterpart)."""

    name = "tile.dim"

    view = operand_def(GlobalType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(IndexType)

    traits = traits_def(Pure())

    assembly_format = "$view `,` $dim attr-dict `:` type($view)"

    def __init__(self, view: SSAValue, dim: int):
        super().__init__(operands=[view], properties={"dim": IntegerAttr(dim, 64)}, result_types=[IndexType()])

    def verify_(self) -> None:
        rank = self.view.type.rank
        if not 0 <= self.dim.value.data < rank:
            _fail(self, f"dimension {self.dim.value.data} is out of range for {self.view.type} of rank {rank}")


@irdl_op_definition
class SubviewOp(IRDLOperation):
    """The view of a global view's trailing dimensions at fixed leading coordinates (CuTe's slice):
    ``%qh = tile.subview %q[%b, %h] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>``.

    A view, not a copy: the same memory at offset ``b * stride0 + h * stride1``, with the trailing
    extents and strides. A leading coordinate outside its extent gives a view of extent 0 (reads
    of it are ``other``, writes to it are dropped), as windows past a view's end are.
    """

    name = "tile.subview"

    source = operand_def(GlobalType)
    indices = var_operand_def(IndexType)
    result = result_def(GlobalType)

    traits = traits_def(Pure())

    assembly_format = "$source `[` $indices `]` attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, indices):
        src = SSAValue.get(source).type
        indices = list(indices)
        super().__init__(operands=[source, indices],
                         result_types=[GlobalType(src.element_type, list(src.dims[len(indices):]))])

    def verify_(self) -> None:
        src, dst = self.source.type, self.result.type
        n = len(self.indices)
        if not 1 <= n < src.rank:
            _fail(self, f"fixes 1 to {src.rank - 1} leading coordinates of {src}, got {n}")
        if dst.element_type != src.element_type or tuple(dst.dims) != tuple(src.dims[n:]):
            _fail(self, f"the view of {src} at {n} leading coordinates is {GlobalType(src.element_type, list(src.dims[n:]))}, not {dst}")


# -- memory ------------------------------------------------------------------


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A shared tile of the block."""

    name = "tile.alloc"

    result = result_def(SharedType)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, tile_type: SharedType):
        super().__init__(result_types=[tile_type])


@irdl_op_definition
class ZerosOp(IRDLOperation):
    """A register tile (or vector) of zeros (an accumulator's start)."""

    name = "tile.zeros"

    result = result_def(RegisterType | RegisterVectorType)

    traits = traits_def(Pure())

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, tile_type: RegisterType):
        super().__init__(result_types=[tile_type])


@irdl_op_definition
class FillOp(IRDLOperation):
    """A register tile (or vector) with every element equal to a scalar (``-inf`` starts a running max)."""

    name = "tile.fill"

    value = operand_def()
    result = result_def(RegisterType | RegisterVectorType)

    traits = traits_def(Pure())

    assembly_format = "$value attr-dict `:` type($value) `->` type($result)"

    def __init__(self, value: SSAValue, tile_type: RegisterType):
        super().__init__(operands=[value], result_types=[tile_type])

    def verify_(self) -> None:
        if self.value.type != self.result.type.element_type:
            _fail(self, f"fills a tile of {self.result.type.element_type} with a {self.value.type} value")


def _check_window(op: IRDLOperation, view: Attribute, indices, tile_dims, role: str) -> None:
    """A global view is addressed by one index per dimension (the window's origin).

    A shared tile is used whole (no indices, same shape) or through a window
    (one index per dimension, a window that fits inside the tile).
    """
    if isinstance(view, GlobalType):
        if len(indices) != view.rank:
            _fail(op, f"{role} {view} needs {view.rank} indices (the tile's origin), got {len(indices)}")
        if view.rank != len(tile_dims):
            _fail(op, f"{role} {view} has rank {view.rank}, the tile {_dims_text(tile_dims)} has rank {len(tile_dims)}")
    elif isinstance(view, SharedType):
        if not indices and view.dims != tuple(tile_dims):
            _fail(op, f"{role} {view} is {_dims_text(view.dims)}, expected {_dims_text(tile_dims)}")
        if indices and len(indices) != len(view.dims):
            _fail(op, f"{role} {view} needs {len(view.dims)} indices for a window, or none, got {len(indices)}")
        if indices and (len(tile_dims) != len(view.dims) or any(t > d for t, d in zip(tile_dims, view.dims))):
            _fail(op, f"a {_dims_text(tile_dims)} window does not fit in {role} {view}")
    else:
        _fail(op, f"{role} must be a !tile.gl or !tile.st, got {view}")
    for i in indices:
        if not isinstance(i.type, IndexType):
            _fail(op, f"indices must be of type index, got {i.type}")


def _check_same_element(op: IRDLOperation, x: Attribute, y: Attribute) -> None:
    if x.element_type != y.element_type:
        _fail(op, f"element types differ: {x.element_type} vs {y.element_type} (use tile.convert)")


def _rank(ty: GlobalType | SharedType) -> int:
    return ty.rank if isinstance(ty, GlobalType) else len(ty.dims)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Global or shared window → register tile; a rank-1 global or shared window → a register vector.

    Elements of the window outside the view read as ``other`` (0 unless given): ``other -inf``
    keeps ragged rows out of a maximum, 0 out of a sum.
    """

    name = "tile.load"

    source = operand_def(GlobalType | SharedType)
    indices = var_operand_def(IndexType)
    result = result_def(RegisterType | RegisterVectorType)
    other = opt_prop_def(FloatAttr)

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$source (`[` $indices^ `]`)? (`other` `(` $other^ `)`)? attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, indices, tile_type: RegisterType, other: float | None = None):
        props = {} if other is None or other == 0 else {"other": FloatAttr(other, Float64Type())}
        super().__init__(operands=[source, indices], result_types=[tile_type], properties=props)

    @property
    def fill(self) -> float:
        """The value of elements outside the view."""
        return 0.0 if self.other is None else self.other.value.data

    def verify_(self) -> None:
        result = self.result.type
        if isinstance(result, RegisterVectorType):
            src = self.source.type
            if _rank(src) != 1:
                _fail(self, f"loads a register vector only from a rank-1 view or shared tile, got {src} -> {result}")
            _check_window(self, src, self.indices, (result.length.data,), "source")
        else:
            _check_window(self, self.source.type, self.indices, result.dims, "source")
        _check_same_element(self, self.source.type, result)


@irdl_op_definition
class LoadScalarOp(IRDLOperation):
    """One element of a global view, the same for every thread: ``%s = tile.load_scalar %v[%i, ...]``
    (``linear``: ``%v[%off]``, the element ``%off`` elements in memory from the view's first, as
    ``tile.gather``'s ``linear`` counts).

    For numbers a kernel reads from device memory rather than takes as arguments (a per-tensor scale
    that the host has not synchronised to read); an element outside the view reads as 0. Its result is
    an ordinary scalar, which ``tile.map`` bodies may use.
    """

    name = "tile.load_scalar"

    source = operand_def(GlobalType)
    indices = var_operand_def(IndexType)
    result = result_def()
    linear = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryReadEffect())

    assembly_format = "$source `[` $indices `]` (`linear` $linear^)? attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue, indices, linear: bool = False):
        super().__init__(operands=[source, indices], result_types=[SSAValue.get(source).type.element_type],
                         properties={"linear": UnitAttr()} if linear else {})

    def verify_(self) -> None:
        src = self.source.type
        if self.linear is not None and len(self.indices) != 1:
            _fail(self, f"linear takes one index (the element's offset in memory), got {len(self.indices)}")
        if self.linear is None and len(self.indices) != src.rank:
            _fail(self, f"takes one index per dimension of {src}: {src.rank}, got {len(self.indices)}")
        if not (isinstance(src.element_type, (*FLOAT_TYPES, *FLOAT8_TYPES)) or src.element_type in (
                IntegerType(8), IntegerType(16), IntegerType(32), IntegerType(64))):
            _fail(self, f"reads f8E4M3FN, f8E5M2, f16, bf16, f32, f64, i8, i16, i32 or i64 elements, not "
                        f"{src.element_type}")
        if self.result.type != src.element_type:
            _fail(self, f"result must be the view's element type {src.element_type}, got {self.result.type}")


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Register tile → global window or shared tile; register vector → rank-1 global window or shared tile.

    ``mask %m`` (a global window only): an i1 tile (or vector) of the value's shape; only the elements
    where it is true are written, as Triton's ``tl.store(..., mask=m)``; elements outside the view are
    dropped either way.
    """

    name = "tile.store"

    value = operand_def(RegisterType | RegisterVectorType)
    dest = operand_def(GlobalType | SharedType)
    indices = var_operand_def(IndexType)
    mask = opt_operand_def(RegisterType | RegisterVectorType)

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = ("$value `,` $dest (`[` $indices^ `]`)? (`mask` $mask^)? attr-dict `:` type($value) `->` "
                       "type($dest) (`,` type($mask)^)?")

    def __init__(self, value: SSAValue, dest: SSAValue, indices=(), mask: SSAValue | None = None):
        super().__init__(operands=[value, dest, indices, [] if mask is None else [mask]])

    def verify_(self) -> None:
        value = self.value.type
        if isinstance(value, RegisterVectorType):
            if _rank(self.dest.type) != 1:
                _fail(self, f"stores a register vector only to a rank-1 view or shared tile, got {value} -> "
                            f"{self.dest.type}")
            _check_window(self, self.dest.type, self.indices, (value.length.data,), "destination")
        else:
            _check_window(self, self.dest.type, self.indices, value.dims, "destination")
        _check_same_element(self, value, self.dest.type)
        if self.mask is not None:
            _check_mask(self, self.mask.type, value)
            if not isinstance(self.dest.type, GlobalType):
                _fail(self, f"masks stores into a global view only, not into {self.dest.type}")


def _check_mask(op: IRDLOperation, mask: Attribute, value: Attribute) -> None:
    """A store's mask: i1 elements in the value's shape (and, once tile-layout ran, its fragment)."""
    same_shape = type(mask) is type(value) and (
        mask.dims == value.dims if isinstance(value, RegisterType)
        else (mask.length, mask.orientation) == (value.length, value.orientation))
    if not same_shape or mask.element_type != IntegerType(1):
        want = (f"!tile.rt<{_dims_text(value.dims)}xi1>" if isinstance(value, RegisterType)
                else f"!tile.rv<{value.length.data}xi1, {value.orientation.data}>")
        _fail(op, f"mask must be {want} (i1 in the value's shape), got {mask}")
    if value.fragment is not None and mask.fragment is not None and mask.fragment_attr != value.fragment_attr:
        _fail(op, f"mask {mask} and value {value} have different fragments (tile-layout gives them one)")


INDEX_ELEMENT_TYPES = (IntegerType(32), IntegerType(64))
"""Element types of the index tiles of ``tile.gather`` / ``tile.scatter``."""


def _same_shape(a: Attribute, b: Attribute) -> bool:
    """Whether two register tiles (or vectors) have one shape (vectors: one length and orientation)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, RegisterType):
        return a.dims == b.dims
    return (a.length, a.orientation) == (b.length, b.orientation)


def _check_element_indices(op: IRDLOperation, view: GlobalType, indices, value: Attribute, linear: bool) -> None:
    """``tile.gather`` / ``tile.scatter``: one index tile per dimension of the view (one with ``linear``),
    each of i32 or i64 elements in the shape (and, once tile-layout ran, the fragment) of ``value``."""
    want = 1 if linear else view.rank
    if len(indices) != want:
        what = "one index tile (the elements' offsets in memory)" if linear else \
            f"{view.rank} index tiles (one per dimension of {view})"
        _fail(op, f"takes {what}, got {len(indices)}")
    for i in indices:
        ty = i.type
        if not isinstance(ty, RegisterType | RegisterVectorType) or ty.element_type not in INDEX_ELEMENT_TYPES:
            _fail(op, f"index tiles are register tiles or vectors of i32 or i64, got {ty}")
        if not _same_shape(ty, value):
            _fail(op, f"index tile {ty} must have the shape of {value}")
        if value.fragment is not None and ty.fragment is not None and ty.fragment_attr != value.fragment_attr:
            _fail(op, f"index tile {ty} and {value} have different fragments (tile-layout gives them one)")


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Elements of a global view at coordinates held in register tiles: numpy's ``x[i, j]`` with index
    tiles ``i`` and ``j`` of the result's shape (Triton's ``tl.load`` of a tensor of pointers).

    ``%r = tile.gather %x[%i, %j] : !tile.gl<f16, [?, ?]>[!tile.rt<64x64xi32>, !tile.rt<64x64xi32>] ->
    !tile.rt<64x64xf16>`` (the index tiles' types in brackets after the view's). An element whose coordinates fall outside the view reads as ``other`` (0
    unless given; a negative index is outside), and so does one where ``mask %m`` (i1 in the result's
    shape) is false: it is not read. ``fill %f`` (a register tile of the result's type) gives each such
    element its own value instead. ``linear``: one index tile of offsets in memory, in elements from
    the view's first one (Triton's ``x_ptr + offsets`` with the array's own strides); an offset is
    outside where it passes the elements the view spans. A window (``tile.load``) is the case of
    coordinates ``origin + iota``; it moves whole rows as vectors, which a gather (an element at a
    time) does not.
    """

    name = "tile.gather"

    T: ClassVar = VarConstraint("T", base(RegisterType) | base(RegisterVectorType))
    source = operand_def(GlobalType)
    indices = var_operand_def(RegisterType | RegisterVectorType)
    mask = opt_operand_def(RegisterType | RegisterVectorType)
    fill_tile = opt_operand_def(T)
    result = result_def(T)
    linear = opt_prop_def(UnitAttr)
    other = opt_prop_def(FloatAttr)

    traits = traits_def(MemoryReadEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = ("$source `[` $indices `]` (`linear` $linear^)? (`mask` $mask^)? (`other` `(` $other^ `)`)? "
                       "(`fill` $fill_tile^)? attr-dict `:` type($source) `[` type($indices) `]` (`,` type($mask)^)? "
                       "`->` type($result)")

    def __init__(self, source: SSAValue, indices, result_type: Attribute, linear: bool = False,
                 mask: SSAValue | None = None, other: float | None = None, fill: SSAValue | None = None):
        props: dict[str, Attribute] = {"linear": UnitAttr()} if linear else {}
        if other is not None and other != 0:
            props["other"] = FloatAttr(other, Float64Type())
        super().__init__(operands=[source, indices, [] if mask is None else [mask], [] if fill is None else [fill]],
                         result_types=[result_type], properties=props)

    @property
    def fill(self) -> float:
        """The value of elements outside the view or masked off."""
        return 0.0 if self.other is None else self.other.value.data

    def verify_(self) -> None:
        _check_element_indices(self, self.source.type, self.indices, self.result.type, self.linear is not None)
        _check_same_element(self, self.source.type, self.result.type)
        if self.mask is not None:
            _check_mask(self, self.mask.type, self.result.type)
        if self.fill_tile is not None and self.other is not None:
            _fail(self, "takes a number (other) or a tile (fill) for the elements it does not read, not both")


@irdl_op_definition
class ScatterOp(IRDLOperation):
    """Elements of a register tile into a global view at coordinates held in register tiles (numpy's
    ``x[i, j] = v``; Triton's ``tl.store`` to a tensor of pointers), as ``tile.gather`` reads them:
    ``tile.scatter %v, %x[%i, %j] : !tile.rt<64x64xf16> -> !tile.gl<f16, [?, ?]>[!tile.rt<64x64xi32>,
    !tile.rt<64x64xi32>]``.

    Elements whose coordinates fall outside the view are dropped, and so are those where ``mask %m``
    (i1 in the value's shape) is false. Where two elements name one place, one of them is written
    (which one is not defined, as on the GPU).
    """

    name = "tile.scatter"

    value = operand_def(RegisterType | RegisterVectorType)
    dest = operand_def(GlobalType)
    indices = var_operand_def(RegisterType | RegisterVectorType)
    mask = opt_operand_def(RegisterType | RegisterVectorType)
    linear = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = ("$value `,` $dest `[` $indices `]` (`linear` $linear^)? (`mask` $mask^)? attr-dict `:` "
                       "type($value) `->` type($dest) `[` type($indices) `]` (`,` type($mask)^)?")

    def __init__(self, value: SSAValue, dest: SSAValue, indices, mask: SSAValue | None = None, linear: bool = False):
        super().__init__(operands=[value, dest, indices, [] if mask is None else [mask]],
                         properties={"linear": UnitAttr()} if linear else {})

    def verify_(self) -> None:
        _check_element_indices(self, self.dest.type, self.indices, self.value.type, self.linear is not None)
        _check_same_element(self, self.value.type, self.dest.type)
        if self.mask is not None:
            _check_mask(self, self.mask.type, self.value.type)


_F32_I32 = (Float32Type(), IntegerType(32))
_WIDE = (Float64Type(), IntegerType(64))
ATOMIC_KINDS = {"add": (*_F32_I32, *_WIDE, Float16Type(), BFloat16Type()), "max": (*_F32_I32, IntegerType(64)), "min": (*_F32_I32, IntegerType(64)),
                "umax": (IntegerType(32), IntegerType(64)), "umin": (IntegerType(32), IntegerType(64)),
                "xchg": (*_F32_I32, *_WIDE), "cas": (*_F32_I32, *_WIDE),
                "and": (IntegerType(32), IntegerType(64)), "or": (IntegerType(32), IntegerType(64)),
                "xor": (IntegerType(32), IntegerType(64))}
"""What ``tile.atomic`` does, with the element types it does it to atomically for each (an f32
maximum or minimum is one of two integer operations on its bits, chosen by its sign: tile-distribute;
``umax`` / ``umin`` read the integers' bits as unsigned numbers;
``xchg`` writes the value, ``cas`` writes it where the element equals ``cmp``; 64-bit integers and
f64 sums as PTX has them: no f64 maximum; f16 and bf16 sums, each add rounded to the type, bf16's
from sm_90)."""


@irdl_op_definition
class AtomicOp(IRDLOperation):
    """``tile.atomic "add" %v, %g[%i, %j] : !tile.rt<16x64xf32> -> !tile.gl<f32, [?, ?]>``: each
    element of a register tile (or vector) combined into the global window atomically (Triton's
    ``tl.atomic_add``/``max``/``min``/``xchg``/``cas``/``and``/``or``/``xor``), elements outside the
    view dropped. ``cas`` takes the compared values: ``... cmp %c``; ``mask %m`` (i1 in the value's
    shape) leaves the elements where it is false alone (their old values read as 0). ``ordered``: PTX's
    ``atom`` (acquire-release) even when nothing reads the old values (a release a flag's reader relies on).

    With a result (``%old = tile.atomic ... returns !tile.rt<16x64xf32>``) it gives the elements' values
    from before, as PTX's ``atom`` does (acquire-release, GPU scope: Triton's default); without one it
    is PTX's ``red`` (relaxed). An element outside the view gives 0.

    Each element is combined once however many threads hold a copy of it: once a block for a value,
    indices, ``cmp`` and mask that are the same in every warp (outside any branch or loop the warps
    take differently), once a warp where one of them is computed from ``tile.warp_id`` (or under such a
    branch: each warp that runs it), by every holder where the indices come from the lane id; every
    holder gets the old value. The order in which blocks (or warps) combine is the GPU's: f32 sums may differ in their
    last bits from run to run.
    """

    name = "tile.atomic"

    T: ClassVar = VarConstraint("T", base(RegisterType) | base(RegisterVectorType))
    kind = prop_def(StringAttr)
    value = operand_def(T)
    dest = operand_def(GlobalType)
    indices = var_operand_def(IndexType)
    cmp = opt_operand_def(T)
    mask = opt_operand_def(RegisterType | RegisterVectorType)
    old = opt_result_def(T)
    ordered = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = ("$kind (`ordered` $ordered^)? $value `,` $dest (`[` $indices^ `]`)? (`cmp` $cmp^)? "
                       "(`mask` $mask^)? attr-dict `:` type($value) `->` type($dest) (`,` type($mask)^)? "
                       "(`returns` type($old)^)?")

    def __init__(self, kind: str, value: SSAValue, dest: SSAValue, indices=(), cmp: SSAValue | None = None,
                 returns: bool = False, mask: SSAValue | None = None, ordered: bool = False):
        super().__init__(**_atomic_parts(kind, value, dest, indices, cmp, returns, mask, ordered=ordered))

    def verify_(self) -> None:
        _check_atomic_kind(self)
        value = self.value.type
        if isinstance(value, RegisterVectorType):
            if _rank(self.dest.type) != 1:
                _fail(self, f"combines a register vector only into a rank-1 view, got {value} -> {self.dest.type}")
            _check_window(self, self.dest.type, self.indices, (value.length.data,), "destination")
        else:
            _check_window(self, self.dest.type, self.indices, value.dims, "destination")
        _check_same_element(self, value, self.dest.type)
        if self.mask is not None:
            _check_mask(self, self.mask.type, value)


def _atomic_parts(kind: str, value: SSAValue, dest: SSAValue, indices, cmp: SSAValue | None, returns: bool,
                  mask: SSAValue | None, **flags: bool) -> dict:
    """The operands, properties (``kind`` and the unit flags set) and result types of an atomic."""
    value = SSAValue.get(value)
    props: dict[str, Attribute] = {"kind": StringAttr(kind), **{k: UnitAttr() for k, on in flags.items() if on}}
    return dict(operands=[value, dest, indices, [] if cmp is None else [cmp], [] if mask is None else [mask]],
                properties=props, result_types=[[value.type] if returns else []])


def _check_atomic_kind(op: IRDLOperation) -> None:
    """An atomic's kind, its element type and whether it has ``cmp`` agree."""
    kind = op.kind.data
    types = ATOMIC_KINDS.get(kind)
    if types is None:
        _fail(op, f"kind must be one of {', '.join(ATOMIC_KINDS)}, got {kind!r}")
    value = op.value.type
    if value.element_type not in types:
        _fail(op, f"{kind} combines {' or '.join(map(str, types))} elements atomically, not {value.element_type}")
    if (kind == "cas") != (op.cmp is not None):
        _fail(op, "cas takes the values to compare with ('cmp %c')" if kind == "cas"
              else f"takes values to compare with only for cas, not {kind}")


@irdl_op_definition
class ScatterAtomicOp(IRDLOperation):
    """``tile.atomic`` at coordinates held in register tiles, as ``tile.scatter`` writes them (numpy's
    ``np.add.at(x, (i, j), v)``; Triton's ``tl.atomic_add`` on a tensor of pointers: a histogram, an
    index-add): ``tile.scatter_atomic "add" %v, %x[%i] linear mask %m : !tile.rv<128xi32, col> ->
    !tile.gl<i32, [?]>[!tile.rv<128xi32, col>], !tile.rv<128xi1, col>``. Elements naming one place are
    each combined (a histogram's counts add up; their old values follow the order the GPU combines
    them in); the rest is ``tile.atomic``'s: kinds, ``cmp``, mask, old values, ``ordered``, and each
    element combined once however many threads hold copies of it.
    """

    name = "tile.scatter_atomic"

    T: ClassVar = VarConstraint("T", base(RegisterType) | base(RegisterVectorType))
    kind = prop_def(StringAttr)
    value = operand_def(T)
    dest = operand_def(GlobalType)
    indices = var_operand_def(RegisterType | RegisterVectorType)
    cmp = opt_operand_def(T)
    mask = opt_operand_def(RegisterType | RegisterVectorType)
    old = opt_result_def(T)
    ordered = opt_prop_def(UnitAttr)
    linear = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = ("$kind (`ordered` $ordered^)? $value `,` $dest `[` $indices `]` (`linear` $linear^)? "
                       "(`cmp` $cmp^)? (`mask` $mask^)? attr-dict `:` type($value) `->` type($dest) "
                       "`[` type($indices) `]` (`,` type($mask)^)? (`returns` type($old)^)?")

    def __init__(self, kind: str, value: SSAValue, dest: SSAValue, indices=(), cmp: SSAValue | None = None,
                 returns: bool = False, mask: SSAValue | None = None, ordered: bool = False, linear: bool = False):
        super().__init__(**_atomic_parts(kind, value, dest, indices, cmp, returns, mask, ordered=ordered,
                                         linear=linear))

    def verify_(self) -> None:
        _check_atomic_kind(self)
        _check_element_indices(self, self.dest.type, self.indices, self.value.type, self.linear is not None)
        _check_same_element(self, self.value.type, self.dest.type)
        if self.mask is not None:
            _check_mask(self, self.mask.type, self.value.type)


ATOMIC_OPS = (AtomicOp, ScatterAtomicOp)
"""The atomics: at a window (``tile.atomic``) and at coordinates in tiles (``tile.scatter_atomic``)."""


def _check_tiled_copy(op: IRDLOperation, tile: SharedType) -> None:
    """Thread and value layouts, when given, must tile the shared tile exactly."""
    thr, val = op.thr, op.val
    if (thr is None) != (val is None):
        _fail(op, "takes both 'thr' and 'val' layouts or neither")
    if thr is None:
        return
    t, v = thr.data, val.data
    if not isinstance(t, type(v)) or t.rank() != len(tile.dims) or v.rank() != len(tile.dims):
        _fail(op, f"thread layout {t} and value layout {v} must both have the tile's rank {len(tile.dims)}")
    if t.cosize() > MAX_THREADS:
        _fail(op, f"thread layout {t} numbers threads up to {t.cosize() - 1}; a block has at most {MAX_THREADS}")
    if v.size() > tile.num_elements:
        _fail(op, f"value layout {v} gives a thread {v.size()} values of a {_dims_text(tile.dims)} tile")
    covered = tuple(t[i].size() * v[i].size() for i in range(len(tile.dims))) if len(tile.dims) > 1 else (t.size() * v.size(),)
    if any(dim % c for dim, c in zip(tile.dims, covered)):
        _fail(op, f"thread layout {t} times value layout {v} covers {_dims_text(covered)}, which does not tile {_dims_text(tile.dims)}")


@irdl_op_definition
class CopyOp(IRDLOperation):
    """A block-wide tiled copy between a global window and a shared tile.

    ``thr`` and ``val`` are CuTe's ``make_tiled_copy`` layouts: ``thr`` maps a
    thread's coordinate in the thread grid to its thread index, ``val`` is the
    block of values each thread moves; together they repeat over the tile.
    Without them the tiling pass chooses. Elements of a global window outside the view read as zero and are
    not written. ``mask %m`` (a global window into a shared tile only): an i1 tile of the tile's shape;
    the elements where it is false read as zero too (Triton's ``tl.load(..., mask=m, other=0)`` copied
    to shared memory: ``cp.async`` zero-fills them). ``prefix``: every row of the mask is true, then
    false (:func:`tilec.passes.trends.falls_along_rows`), so each copied run is a prefix of set bits.

    ``offsets %o`` instead of the source's indices: a gather into the shared tile. ``%o`` (i32 or i64 in
    the tile's shape) holds each element's offset in memory from the view's first element, as
    ``tile.gather ... linear`` reads it (Triton's tile of pointers ``a_ptr + offs``); an offset past
    the elements the view spans reads zero: ``tile.copy %a offsets %o -> %s : !tile.gl<f16, [?, ?]>
    [!tile.rt<128x64xi32>] -> !tile.st<128x64xf16>``.
    """

    name = "tile.copy"

    source = operand_def(GlobalType | SharedType)
    source_indices = var_operand_def(IndexType)
    dest = operand_def(GlobalType | SharedType)
    dest_indices = var_operand_def(IndexType)
    offsets = opt_operand_def(RegisterType)
    mask = opt_operand_def(RegisterType)
    prefix = opt_prop_def(UnitAttr)
    thr = opt_prop_def(LayoutAttr)
    val = opt_prop_def(LayoutAttr)
    atom = opt_prop_def(CopyAtomAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$source (`[` $source_indices^ `]`)? (`offsets` $offsets^)? `->` $dest (`[` $dest_indices^ `]`)? "
        "(`mask` $mask^)? (`prefix` $prefix^)? (`thr` $thr^)? (`val` $val^)? (`atom` $atom^)? attr-dict `:` "
        "type($source) (`[` type($offsets)^ `]`)? `->` type($dest) (`,` type($mask)^)?"
    )

    def __init__(self, source: SSAValue, source_indices, dest: SSAValue, dest_indices=(), thr=None, val=None,
                 mask: SSAValue | None = None, prefix: bool = False, offsets: SSAValue | None = None):
        props: dict[str, Attribute] = {}
        if thr is not None:
            props["thr"], props["val"] = LayoutAttr(thr), LayoutAttr(val)
        if prefix:
            props["prefix"] = UnitAttr()
        super().__init__(operands=[source, source_indices, dest, dest_indices, [] if offsets is None else [offsets],
                                   [] if mask is None else [mask]], properties=props)

    def verify_(self) -> None:
        src, dst = self.source.type, self.dest.type
        shared = [t for t in (src, dst) if isinstance(t, SharedType)]
        if len(shared) != 1:
            _fail(self, f"copies between a global view and a shared tile, got {src} -> {dst}")
        tile = shared[0]
        if self.offsets is not None:
            if not (isinstance(src, GlobalType) and isinstance(dst, SharedType)) or self.dest_indices:
                _fail(self, f"gathers (offsets) from a global view into a whole shared tile only, not {src} -> {dst}")
            _check_copy_offsets(self, self.source_indices, tile)
        else:
            _check_window(self, src, self.source_indices, tile.dims, "source")
        _check_window(self, dst, self.dest_indices, tile.dims, "destination")
        _check_same_element(self, src, dst)
        _check_tiled_copy(self, tile)
        if self.mask is not None:
            if not (isinstance(src, GlobalType) and isinstance(dst, SharedType)) or self.dest_indices:
                _fail(self, f"masks copies from a global window into a whole shared tile only, not {src} -> {dst}")
        _check_copy_mask(self, tile)


def _check_copy_offsets(op: IRDLOperation, indices, tile: SharedType) -> None:
    """A gathering copy's offsets: i32 or i64 in the shared tile's shape, in place of the source's indices."""
    if indices:
        _fail(op, f"takes the source's indices or offsets, not both (got {len(indices)} indices)")
    ty = op.offsets.type
    if not isinstance(ty, RegisterType) or ty.dims != tile.dims or ty.element_type not in INDEX_ELEMENT_TYPES:
        _fail(op, f"offsets must be !tile.rt<{_dims_text(tile.dims)}xi32> or i64 (each element's offset in the "
                  f"copied tile's shape), got {ty}")


def _check_copy_mask(op: IRDLOperation, tile: SharedType) -> None:
    """A copy's mask: an i1 register tile of the shared tile's shape; ``prefix`` only with one."""
    if op.mask is None:
        if op.prefix is not None:
            _fail(op, "'prefix' says how the rows of a mask fall: it needs a mask")
        return
    mask = op.mask.type
    if not isinstance(mask, RegisterType) or mask.dims != tile.dims or mask.element_type != IntegerType(1):
        _fail(op, f"mask must be !tile.rt<{_dims_text(tile.dims)}xi1> (i1 in the copied tile's shape), got {mask}")


@irdl_op_definition
class AsyncCopyOp(IRDLOperation):
    """``tile.copy`` from global to shared as ``cp.async``: completes at ``tile.async_wait``. ``mask %m``
    and ``offsets %o`` as ``tile.copy``'s: elements where the mask is false are zero-filled."""

    name = "tile.async_copy"

    source = operand_def(GlobalType)
    indices = var_operand_def(IndexType)
    dest = operand_def(SharedType)
    offsets = opt_operand_def(RegisterType)
    mask = opt_operand_def(RegisterType)
    prefix = opt_prop_def(UnitAttr)
    thr = opt_prop_def(LayoutAttr)
    val = opt_prop_def(LayoutAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    assembly_format = (
        "$source (`[` $indices^ `]`)? (`offsets` $offsets^)? `->` $dest (`mask` $mask^)? (`prefix` $prefix^)? "
        "(`thr` $thr^)? (`val` $val^)? attr-dict `:` type($source) (`[` type($offsets)^ `]`)? `->` type($dest) "
        "(`,` type($mask)^)?"
    )

    def __init__(self, source: SSAValue, indices, dest: SSAValue, thr=None, val=None, mask: SSAValue | None = None,
                 prefix: bool = False, offsets: SSAValue | None = None):
        props: dict[str, Attribute] = {}
        if thr is not None:
            props["thr"], props["val"] = LayoutAttr(thr), LayoutAttr(val)
        if prefix:
            props["prefix"] = UnitAttr()
        super().__init__(operands=[source, indices, dest, [] if offsets is None else [offsets],
                                   [] if mask is None else [mask]], properties=props)

    def verify_(self) -> None:
        tile = self.dest.type
        if self.offsets is not None:
            _check_copy_offsets(self, self.indices, tile)
        else:
            _check_window(self, self.source.type, self.indices, tile.dims, "source")
        _check_same_element(self, self.source.type, tile)
        _check_tiled_copy(self, tile)
        _check_copy_mask(self, tile)


@irdl_op_definition
class AsyncCommitOp(IRDLOperation):
    """Closes the group of async copies issued since the last commit."""

    name = "tile.async_commit"

    traits = traits_def(MemoryWriteEffect())

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class AsyncWaitOp(IRDLOperation):
    """Waits until at most ``pending`` committed groups are still in flight."""

    name = "tile.async_wait"

    pending = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$pending attr-dict"

    def __init__(self, pending: int = 0):
        super().__init__(properties={"pending": IntegerAttr(pending, 64)})

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            _fail(self, f"pending must be between 0 and 7 (cp.async.wait_group), got {self.pending.value.data}")


# -- bulk tensor copies (sm_90) ------------------------------------------------


@irdl_op_definition
class MbarInitOp(IRDLOperation):
    """``%bars = tile.mbar_init : !tile.mbar<N>`` (or ``!tile.mbar<N, warps>``): N barriers in shared memory.

    Block-wide, like ``tile.alloc``: every barrier is initialised for the
    arrivals its kind counts per phase (one, one per warp of the block, or one
    per warp of every block of the cluster), and every thread sees them
    initialised once past the op (other blocks of a cluster, once past the
    next ``tile.cluster_barrier``).
    """

    name = "tile.mbar_init"

    result = result_def(MbarType)

    traits = traits_def(MemoryWriteEffect())

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, count: int, arrivals: str = MBAR_TX):
        super().__init__(result_types=[MbarType(count, arrivals)])

    def verify_(self) -> None:
        if self.result.type.cluster_wide and (launch_cluster_size(self) or 1) < 2:
            _fail(self, f"{self.result.type} counts the warps of every block of a thread-block cluster: its "
                        "kernel's tile.launch needs cluster = [c, ...] with c > 1 blocks")


def _check_kind(op: IRDLOperation, bars: SSAValue, per_warp: bool) -> None:
    if bars.type.per_warp != per_warp:
        want = MbarType(bars.type.count.data, MBAR_WARPS if per_warp else MBAR_TX)
        _fail(op, f"expects {'per-warp' if per_warp else 'transaction'} barriers ({want}), got {bars.type}")


@irdl_op_definition
class MbarExpectOp(IRDLOperation):
    """``tile.mbar_expect %bars[%i], 49152``: the block arrives on barrier ``%i`` (by one thread),
    announcing the bytes this phase's ``tile.bulk_copy``\\ s bring."""

    name = "tile.mbar_expect"

    barriers = operand_def(MbarType)
    index = operand_def(IndexType)
    bytes = prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryWriteEffect())

    assembly_format = "$barriers `[` $index `]` `,` $bytes attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue, index: SSAValue, nbytes: int):
        super().__init__(operands=[barriers, index], properties={"bytes": IntegerAttr(nbytes, 64)})

    def verify_(self) -> None:
        _check_kind(self, self.barriers, per_warp=False)
        if not 0 < self.bytes.value.data < 1 << 20:
            _fail(self, f"expects 1 .. 2^20-1 bytes per phase (the mbarrier's transaction count), got {self.bytes.value.data}")


def _tile_box(tile: SharedType):
    """The box of tensor maps that lay out a 2-D shared tile as it is (None: no tensor map does)."""
    if len(tile.dims) != 2:
        return None
    return bulk_box(tile.layout, tuple(tile.dims), element_bits(tile.element_type) // 8)


def _check_boxed(op: IRDLOperation, tile: SharedType, verb: str) -> None:
    if len(tile.dims) != 2:
        _fail(op, f"{verb} 2-D tiles, got {_dims_text(tile.dims)}")
    if _tile_box(tile) is None:
        _fail(op, f"a tensor map cannot {'write' if verb == 'copies' else 'read'} the layout {tile.layout} of {tile}: "
                  "expected row-major boxes of 32, 64 or 128-byte rows side by side under the matching swizzle "
                  "(see tilec.layout.bulk)")


@irdl_op_definition
class BulkCopyOp(IRDLOperation):
    """``tile.bulk_copy %g[%r, %c] -> %dst, %bars[%i]``: a global window to a whole shared tile,
    issued by one thread of the block as bulk tensor copies (TMA boxes).

    It completes with the phase of barrier ``%i`` (whose ``tile.mbar_expect``
    counts its bytes); elements outside the view arrive as zeros. The shared
    tile's layout must be one a tensor map writes (:mod:`tilec.layout.bulk`:
    row-major boxes, side by side, under the tensor map's swizzle).

    ``multicast`` (a launch with thread-block clusters of ``c`` blocks): every
    block of the cluster runs this copy with the same window, and together they
    copy it once into each block's ``%dst``: block ``r`` issues rows
    ``[r R/c, (r+1) R/c)`` of each box (``R`` its rows) to the same place in
    every block of the cluster, completing on barrier ``%i`` of each. So each
    block's barrier still counts the whole tile's bytes, and a block may issue
    only once every block of the cluster is done with ``%dst``'s previous
    contents (a ``cluster_warps`` barrier, :class:`MbarArriveOp`).
    """

    name = "tile.bulk_copy"

    source = operand_def(GlobalType)
    indices = var_operand_def(IndexType)
    dest = operand_def(SharedType)
    barriers = operand_def(MbarType)
    barrier = operand_def(IndexType)
    multicast = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = (
        "$source `[` $indices `]` `->` $dest `,` $barriers `[` $barrier `]` (`multicast` $multicast^)? attr-dict "
        "`:` type($source) `->` type($dest) `,` type($barriers)"
    )

    def __init__(self, source: SSAValue, indices, dest: SSAValue, barriers: SSAValue, barrier: SSAValue,
                 multicast: bool = False):
        super().__init__(operands=[source, indices, dest, barriers, barrier],
                         properties={"multicast": UnitAttr()} if multicast else {})

    def box(self):
        """The :class:`~tilec.layout.bulk.BulkBox` of the destination's layout (None if there is none)."""
        return _tile_box(self.dest.type)

    def issued_box(self, cluster: int):
        """The box one block issues: :meth:`box`, or with ``multicast`` its share of the rows in a
        cluster of ``cluster`` blocks."""
        box = self.box()
        if self.multicast is None or cluster <= 1:
            return box
        return BulkBox(box.rows // cluster, box.inner, box.elem_bytes, box.swizzle)

    def verify_(self) -> None:
        tile = self.dest.type
        _check_kind(self, self.barriers, per_warp=False)
        _check_window(self, self.source.type, self.indices, tile.dims, "source")
        _check_same_element(self, self.source.type, tile)
        _check_boxed(self, tile, "copies")
        if self.multicast is not None:
            c = launch_cluster_size(self)
            if c is None or c < 2:
                _fail(self, "multicast copies into every block of a thread-block cluster: its kernel's "
                            "tile.launch needs cluster = [c, ...] with c > 1 blocks")
            box = self.box()
            part = box.rows // c
            if box.rows % c or (part * box.inner * box.elem_bytes) % box.alignment():
                _fail(self, f"multicast splits each {box.rows}-row box among the cluster's {c} blocks: the rows "
                            f"must divide into {c} parts of whole {box.alignment()}-byte swizzle periods")


def launch_cluster_size(op: Operation) -> int | None:
    """Blocks a thread-block cluster of the kernel that holds ``op`` (None: not in a kernel)."""
    parent = op.parent_op()
    while parent is not None and parent.name != "func.func":
        parent = parent.parent_op()
    launch = None if parent is None else parent.attributes.get("tile.launch")
    return launch.cluster_size if isinstance(launch, LaunchAttr) else None


@irdl_op_definition
class BulkStoreOp(IRDLOperation):
    """``tile.bulk_store %src -> %g[%r, %c]``: the executing warp stores its shared tile to a global
    window as bulk tensor copies (TMA boxes), issued by its first lane once its lanes' writes to
    ``%src`` are visible to the async proxy. Elements past the view's edges are not written.

    Asynchronous: the warp goes on at once, and must ``tile.bulk_store_wait`` before it writes
    ``%src`` again (and before the kernel ends). Each warp stores its own tile (a warp's
    ``tile.stage`` of a per-warp buffer): no other warp may write ``%src`` meanwhile. The
    shared tile's layout must be one a tensor map reads (:mod:`tilec.layout.bulk`), and the view
    needs 16-byte aligned rows (``tile.aligned_rows``).
    """

    name = "tile.bulk_store"

    source = operand_def(SharedType)
    dest = operand_def(GlobalType)
    indices = var_operand_def(IndexType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = (
        "$source `->` $dest `[` $indices `]` attr-dict `:` type($source) `->` type($dest)"
    )

    def __init__(self, source: SSAValue, dest: SSAValue, indices):
        super().__init__(operands=[source, dest, indices])

    def box(self):
        """The :class:`~tilec.layout.bulk.BulkBox` of the source's layout (None if there is none)."""
        return _tile_box(self.source.type)

    def verify_(self) -> None:
        tile = self.source.type
        _check_window(self, self.dest.type, self.indices, tile.dims, "destination")
        _check_same_element(self, tile, self.dest.type)
        _check_boxed(self, tile, "stores")


@irdl_op_definition
class BulkStoreWaitOp(IRDLOperation):
    """``tile.bulk_store_wait``: the executing warp waits until its earlier bulk stores
    have read their shared tiles (``cp.async.bulk.wait_group.read 0``), which it may then write
    again. Their global writes may still be on their way (they are visible once the kernel ends).

    ``tile.bulk_store_wait pending N``: all but the warp's last ``N`` bulk stores (0 .. 7) have read
    theirs (a ring of ``N + 1`` buffers: the one written next was read ``N + 1`` stores ago)."""

    name = "tile.bulk_store_wait"

    pending = opt_prop_def(IntegerAttr[I64])

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "(`pending` $pending^)? attr-dict"

    def __init__(self, pending: int = 0):
        super().__init__(properties={"pending": IntegerAttr(pending, 64)} if pending else {})

    @property
    def pending_count(self) -> int:
        return 0 if self.pending is None else self.pending.value.data

    def verify_(self) -> None:
        if not 0 <= self.pending_count <= 7:
            _fail(self, f"pending must be 0 to 7 (bulk groups a warp leaves reading), got {self.pending_count}")


@irdl_op_definition
class MbarWaitOp(IRDLOperation):
    """``tile.mbar_wait %bars[%i], %parity``: every thread waits for the phase of barrier ``%i``
    with parity ``%parity`` (0 or 1) to complete; that phase's bulk copies are then visible to it.

    With ``issuer`` only the thread that issues the block's bulk copies waits
    (the others go on): a producer waiting for a stage to be released before
    it refills it. A parity of 1 on a barrier that has completed no phase
    passes at once (the phase before the first counts as complete), as on the GPU.
    """

    name = "tile.mbar_wait"

    barriers = operand_def(MbarType)
    index = operand_def(IndexType)
    parity = operand_def(IndexType)
    issuer = opt_prop_def(UnitAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$barriers `[` $index `]` `,` $parity (`issuer` $issuer^)? attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue, index: SSAValue, parity: SSAValue, issuer: bool = False):
        super().__init__(operands=[barriers, index, parity], properties={"issuer": UnitAttr()} if issuer else {})


@irdl_op_definition
class MbarArriveOp(IRDLOperation):
    """``tile.mbar_arrive %bars[%i] : !tile.mbar<N, warps>``: each warp arrives once on barrier ``%i``,
    after all its threads' earlier shared-memory reads (the consumer's release of a stage). On
    ``cluster_warps`` barriers each warp arrives on barrier ``%i`` of every block of the cluster."""

    name = "tile.mbar_arrive"

    barriers = operand_def(MbarType)
    index = operand_def(IndexType)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$barriers `[` $index `]` attr-dict `:` type($barriers)"

    def __init__(self, barriers: SSAValue, index: SSAValue):
        super().__init__(operands=[barriers, index])

    def verify_(self) -> None:
        _check_kind(self, self.barriers, per_warp=True)


# -- compute -----------------------------------------------------------------


@irdl_op_definition
class MmaOp(IRDLOperation):
    """``d = op(a) @ op(b) + c`` on register tiles (ThunderKittens' mma_AB / ABt / AtB / AtBt)."""

    name = "tile.mma"

    a = operand_def(RegisterType)
    b = operand_def(RegisterType)
    c = operand_def(RegisterType)
    result = result_def(RegisterType)
    transpose_a = opt_prop_def(UnitAttr)
    transpose_b = opt_prop_def(UnitAttr)
    atom = opt_prop_def(MMAAtomAttr)

    traits = traits_def(Pure())

    assembly_format = (
        "$a `,` $b `,` $c (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)? (`atom` $atom^)? "
        "attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)"
    )

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue, transpose_a=False, transpose_b=False, atom=None):
        props: dict[str, Attribute] = {}
        if transpose_a:
            props["transpose_a"] = UnitAttr()
        if transpose_b:
            props["transpose_b"] = UnitAttr()
        if atom is not None:
            props["atom"] = MMAAtomAttr(atom)
        super().__init__(operands=[a, b, c], result_types=[SSAValue.get(c).type], properties=props)

    def verify_(self) -> None:
        a, b, c, d = self.a.type, self.b.type, self.c.type, self.result.type
        m, k = a.dims[::-1] if self.transpose_a else a.dims
        k2, n = b.dims[::-1] if self.transpose_b else b.dims
        if k != k2:
            _fail(self, f"K differs: a gives {k}, b gives {k2} (a is {_dims_text(a.dims)}, b is {_dims_text(b.dims)})")
        if c.dims != (m, n):
            _fail(self, f"accumulator is {_dims_text(c.dims)}, expected {m}x{n}")
        if c.dims != d.dims or c.element_type != d.element_type:
            _fail(self, f"result {d} must have the accumulator's type {c}")
        integer = a.element_type == IntegerType(8)
        fp8 = isinstance(a.element_type, FLOAT8_TYPES) and isinstance(b.element_type, FLOAT8_TYPES)
        if not fp8 and (a.element_type != b.element_type or
                        not (isinstance(a.element_type, MMA_INPUT_TYPES) or integer)):
            _fail(self, f"a and b must share an element type among f16, bf16, f32, i8, or both be FP8 (f8E4M3FN, "
                        f"f8E5M2); got {a.element_type} and {b.element_type}")
        if integer and c.element_type != IntegerType(32):
            _fail(self, f"accumulates i8 products in i32, got {c.element_type}")
        if not integer and not isinstance(c.element_type, Float32Type):
            _fail(self, f"accumulates in f32, got {c.element_type}")
        if self.atom is not None:
            atom = self.atom.data
            am, an, ak = atom.shape_mnk
            if m % am or n % an or k % ak:
                _fail(self, f"atom {atom.name} ({am}x{an}x{ak}) does not tile {m}x{n}x{k}")
            for operand, kind in ((a, atom.a_type), (b, atom.b_type)):
                wants = _ATOM_OPERANDS.get(kind)
                if wants is not None and not isinstance(operand.element_type, wants):
                    _fail(self, f"atom {atom.name} multiplies {atom.a_type} by {atom.b_type}, but a and b are "
                                f"{a.element_type} and {b.element_type}: its registers would be read as another type")


_ATOM_OPERANDS = {"f16": Float16Type, "bf16": BFloat16Type, "tf32": Float32Type, "s8": IntegerType,
                  "e4m3": Float8E4M3FNType, "e5m2": Float8E5M2Type}
"""The element type of the operands a tensor-core atom reads, by its input type (a SIMT atom converts)."""


WGMMA_ROWS = 64
"""Rows of A one warpgroup multiplies (wgmma's M); each of its 4 warps holds 16 of them."""

WGMMA_WARP_ROWS = 16


def integer_wgmma_n(n: int) -> bool:
    """Whether ``n`` is an N PTX's integer (s8) wgmma has: 8, 16, 24, or a multiple of 16 up to 256."""
    return n in (8, 16, 24) or (n % 16 == 0 and 0 < n <= 256)


@irdl_op_definition
class WgmmaOp(IRDLOperation):
    """sm_90a's warpgroup MMA: ``%d = tile.wgmma %sa[%row], %sb[%col], %acc``.

    The four warps ``4g .. 4g+3`` of a warpgroup multiply together the 64-row
    band of ``%sa`` at ``%row`` (all of its K columns) by the ``K x N`` band of
    ``%sb`` at column ``%col``; warp ``w`` holds rows ``16 (w mod 4) ..`` of the
    ``64 x N`` product in its ``16 x N`` accumulator. ``%row`` must be a
    multiple of 64 and ``%col`` of ``N``, the same across the warpgroup (the
    interpreter checks the multiples).

    - **A from registers** (``tile.wgmma %a, %sb[%col], %acc``, no ``%row``):
      each warp gives its own ``16 x K`` rows of A as a register tile (the
      m16n8k16 A fragment), as attention's ``P @ V`` does with the softmax's
      output; the warpgroup's band is the four warps' rows.
    - **``transpose_b``**: ``%sb`` is stored ``N x K`` (``q @ k.T``) and the band
      is its rows at ``%col``.

    - **The block's product** (``groups [GM, GN]``): the accumulator is the
      block's ``M x N`` tile (``tile-stage`` writes this form for a block's
      ``tl.dot`` on sm_90a), the product of the ``M``-row band of ``%sa`` at
      ``%row`` (or of the block's ``M x K`` register tile ``%a``) and the
      ``N``-column band of ``%sb`` at ``%col``. The block's
      ``GM x GN`` warpgroups share it, CuTe's tiled MMA of warpgroup atoms:
      warpgroup ``g`` takes the ``M/GM`` rows at ``(g mod GM) M/GM`` (64-row
      bands, one wgmma each) and the ``N/GN`` columns at ``(g div GM) N/GN``.

    Shared operands stay in shared memory (the layouts must be ones a wgmma
    descriptor describes: what bulk tensor copies write and what
    ``tile-swizzle`` gives tiles a wgmma reads, checked by
    ``tile-distribute``). The op completes before it returns, unless it is
    ``async``: then it is one wgmma group left running, and its result may
    only be waited for (``tile.wgmma_wait``) or be the accumulator of another
    async ``tile.wgmma`` (FlashAttention-3's overlap of one tile's softmax with
    another's MMA). Its operands (registers and shared tiles) must not change
    until the wait.
    """

    name = "tile.wgmma"

    a = operand_def(base(SharedType) | base(RegisterType))
    row = opt_operand_def(IndexType)
    b = operand_def(SharedType)
    col = operand_def(IndexType)
    c = operand_def(RegisterType)
    transpose_b = opt_prop_def(UnitAttr)
    is_async = opt_prop_def(UnitAttr, prop_name="async")
    groups = opt_prop_def(DenseArrayBase)
    result = result_def(RegisterType)

    traits = traits_def(MemoryReadEffect())

    assembly_format = (
        "$a (`[` $row^ `]`)? `,` $b `[` $col `]` `,` $c (`transpose_b` $transpose_b^)? (`async` $async^)? "
        "(`groups` qualified($groups)^)? attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)"
    )

    def __init__(self, a: SSAValue, row: SSAValue | None, b: SSAValue, col: SSAValue, c: SSAValue,
                 transpose_b: bool = False, is_async: bool = False, groups: tuple[int, int] | None = None):
        props = {"transpose_b": UnitAttr()} if transpose_b else {}
        if is_async:
            props["async"] = UnitAttr()
        if groups is not None:
            props["groups"] = DenseArrayBase.from_list(i64, list(groups))
        super().__init__(operands=[a, [] if row is None else [row], b, col, c], properties=props,
                         result_types=[SSAValue.get(c).type])

    @property
    def registers_a(self) -> bool:
        """Whether A comes from each warp's registers (no ``%row``)."""
        return isinstance(self.a.type, RegisterType)

    @property
    def block_groups(self) -> tuple[int, int] | None:
        """``(GM, GN)``: the grid of warpgroups sharing the block's product, or None for a warp's 16 rows."""
        if self.groups is None:
            return None
        return tuple(int(v) for v in self.groups.iter_values())  # type: ignore[return-value]

    def k_step(self) -> int:
        """One wgmma's K in elements: 32 bytes of the operands' type."""
        return WGMMA_K_BYTES * 8 // element_bits(self.a.type.element_type)

    def b_kn(self) -> tuple[int, int]:
        """B's ``(K, N)`` extents as stored (``N x K`` with ``transpose_b``)."""
        dims = tuple(self.b.type.dims)
        return dims[::-1] if self.transpose_b is not None else dims

    def verify_(self) -> None:
        a, b, c, d = self.a.type, self.b.type, self.c.type, self.result.type
        for what, x in (("a", a), ("b", b)):
            if len(x.dims) != 2:
                _fail(self, f"{what} must be a 2-D tile, got {x}")
        k2, nb = self.b_kn()
        if self.registers_a:
            if self.row is not None:
                _fail(self, "a register tile A is the warp's own rows: no [row] band")
            if self.groups is not None and len(c.dims) == 2 and a.dims[0] != c.dims[0]:
                _fail(self, f"a register A of the block's product has its {c.dims[0]} rows, got {_dims_text(a.dims)}")
            if self.groups is None and a.dims[0] != WGMMA_WARP_ROWS:
                _fail(self, f"a register A is a warp's {WGMMA_WARP_ROWS} rows, got {_dims_text(a.dims)}")
        elif self.row is None:
            _fail(self, "a shared A needs the [row] of its 64-row band")
        elif a.dims[0] % WGMMA_ROWS:
            _fail(self, f"a has {a.dims[0]} rows, not a multiple of {WGMMA_ROWS} (one warpgroup's band)")
        k = a.dims[1]
        if k != k2:
            _fail(self, f"K differs: a is {_dims_text(a.dims)} (K = {k}), b is {_dims_text(b.dims)} (K = {k2}"
                  f"{', stored N x K' if self.transpose_b is not None else ''})")
        ka = self.k_step()
        if k % ka:
            _fail(self, f"K = {k} is not a multiple of {ka} (wgmma's K for {a.element_type})")
        if self.groups is not None:
            self._verify_block(a, c, nb)
        else:
            if len(c.dims) != 2 or c.dims[0] != WGMMA_WARP_ROWS:
                _fail(self, f"a warp's accumulator is {WGMMA_WARP_ROWS}xN, got {_dims_text(c.dims)}")
            n = c.dims[1]
            if n % 8 or n > nb or nb % n or n > 256:
                _fail(self, f"N = {n} must be a multiple of 8 up to 256 that divides b's {nb} columns")
        if c.dims != d.dims or c.element_type != d.element_type:
            _fail(self, f"result {d} must have the accumulator's type {c}")
        integer = a.element_type == IntegerType(8)
        if a.element_type != b.element_type or not (
                isinstance(a.element_type, (Float16Type, BFloat16Type, *FLOAT8_TYPES)) or integer):
            _fail(self, f"a and b must both be f16, both bf16, both f8E4M3FN, both f8E5M2 or both i8, got "
                        f"{a.element_type} and {b.element_type}")
        if (isinstance(a.element_type, FLOAT8_TYPES) or integer) and (self.registers_a or self.transpose_b is None):
            _fail(self, f"{a.element_type} operands must both be shared and K-major: a shared A (M x K) and b "
                        "stored N x K (transpose_b)")
        if integer and c.element_type != IntegerType(32):
            _fail(self, f"accumulates i8 products in i32, got {c.element_type}")
        if integer:
            gn = self.block_groups[1] if self.block_groups is not None else 1
            if not integer_wgmma_n(c.dims[1] // gn):
                _fail(self, f"an i8 wgmma's N is 8, 16, 24 or a multiple of 16 (PTX's integer shapes), got "
                            f"{c.dims[1] // gn}")
        if not integer and not isinstance(c.element_type, Float32Type):
            _fail(self, f"accumulates in f32, got {c.element_type}")
        if self.is_async is not None:
            for use in self.result.uses:
                user = use.operation
                last = len(user.operands) - 1
                chained = isinstance(user, WgmmaOp) and user.is_async is not None and use.index == last
                if not (isinstance(user, (WgmmaWaitOp, scf.YieldOp)) or chained):
                    _fail(self, f"the result of an async tile.wgmma is still being written: '{user.name}' may not "
                                "use it before a tile.wgmma_wait (only the wait, another async tile.wgmma as its "
                                "accumulator, or scf.yield to carry it)")


    def _verify_block(self, a: SharedType, c: RegisterType, nb: int) -> None:
        """The block form: ``(GM, GN)`` powers of two, each warpgroup whole 64-row bands and a wgmma's N."""
        groups = self.block_groups
        if len(groups) != 2 or any(g < 1 or g & (g - 1) for g in groups):
            _fail(self, f"groups must be two powers of two [GM, GN], got {list(groups)}")
        gm, gn = groups
        if gm * gn * 4 * 32 > MAX_THREADS:
            _fail(self, f"groups {list(groups)} are {gm * gn * 128} threads; a block has at most {MAX_THREADS}")
        kernel = self.parent_op()
        while kernel is not None and "tile.launch" not in kernel.attributes:  # abi.LAUNCH_ATTR
            kernel = kernel.parent_op()
        launch = kernel.attributes.get("tile.launch") if kernel is not None else None
        if isinstance(launch, LaunchAttr) and launch.threads < gm * gn * 128:
            _fail(self, f"groups {list(groups)} need {gm * gn * 128} threads; the kernel's block has {launch.threads}")
        if len(c.dims) != 2 or c.dims[0] % (WGMMA_ROWS * gm) or c.dims[1] % (8 * gn):
            _fail(self, f"the block's accumulator {_dims_text(c.dims)} does not split into {gm}x{gn} warpgroups of "
                        f"{WGMMA_ROWS}-row bands and columns a multiple of 8")
        m, n = c.dims
        if (not self.registers_a and m > a.dims[0]) or n > nb or nb % n or n // gn > 256:
            _fail(self, f"the {_dims_text(c.dims)} product needs {m} rows of a ({_dims_text(a.dims)}), N = {n} dividing "
                        f"b's {nb} columns, and at most 256 columns a warpgroup")


@irdl_op_definition
class WgmmaWaitOp(IRDLOperation):
    """``%r = tile.wgmma_wait %d, N``: wait until at most ``N`` of this warpgroup's async
    ``tile.wgmma`` groups, the newest ones, are still running (they complete in order); ``%r`` is
    ``%d``, now readable. ``%d`` must come from a group that the wait completes: issued at least
    ``N`` groups before the newest (checked by the lane interpreter)."""

    name = "tile.wgmma_wait"

    T: ClassVar = VarConstraint("T", base(RegisterType))
    value = operand_def(T)
    pending = prop_def(IntegerAttr[I64])
    result = result_def(T)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    assembly_format = "$value `,` $pending attr-dict `:` type($value)"

    def __init__(self, value: SSAValue, pending: int):
        super().__init__(operands=[value], properties={"pending": IntegerAttr(pending, 64)},
                         result_types=[SSAValue.get(value).type])

    def verify_(self) -> None:
        if not 0 <= self.pending.value.data <= 7:
            _fail(self, f"pending must be 0 to 7 (wgmma.wait_group's range), got {self.pending.value.data}")
        if self.value.type != self.result.type:
            _fail(self, f"result {self.result.type} must have the operand's type {self.value.type}")


def _check_float(op: IRDLOperation, ty: Attribute) -> None:
    if not isinstance(ty.element_type, FLOAT_TYPES):
        _fail(op, f"computes on floats, got {ty}: integer and i1 tiles go through tile.map with arith ops")


class _ElementwiseBinary(IRDLOperation):
    T: ClassVar = VarConstraint("T", base(RegisterType) | base(RegisterVectorType))

    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        _check_float(self, self.result.type)


class _ElementwiseUnary(IRDLOperation):
    T: ClassVar = VarConstraint("T", base(RegisterType) | base(RegisterVectorType))

    input = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[SSAValue.get(value).type])

    def verify_(self) -> None:
        _check_float(self, self.result.type)


@irdl_op_definition
class AddOp(_ElementwiseBinary):
    name = "tile.add"


@irdl_op_definition
class SubOp(_ElementwiseBinary):
    name = "tile.sub"


@irdl_op_definition
class MulOp(_ElementwiseBinary):
    name = "tile.mul"


@irdl_op_definition
class DivOp(_ElementwiseBinary):
    name = "tile.div"


@irdl_op_definition
class MaxOp(_ElementwiseBinary):
    name = "tile.max"


@irdl_op_definition
class MinOp(_ElementwiseBinary):
    name = "tile.min"


@irdl_op_definition
class ExpOp(_ElementwiseUnary):
    name = "tile.exp"


@irdl_op_definition
class Exp2Op(_ElementwiseUnary):
    name = "tile.exp2"


@irdl_op_definition
class ReluOp(_ElementwiseUnary):
    name = "tile.relu"


def _check_same_register_shape(op: IRDLOperation, src: Attribute, dst: Attribute) -> None:
    """Both register tiles of one shape, or both register vectors of one length and orientation."""
    if type(src) is not type(dst):
        _fail(op, f"converts {src} to {dst}: both must be register tiles or both register vectors")
    same = src.dims == dst.dims if isinstance(src, RegisterType) else \
        (src.length, src.orientation) == (dst.length, dst.orientation)
    if not same:
        _fail(op, f"converts {src} to {dst}: shapes differ")


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Elementwise change of element type (round to nearest even)."""

    name = "tile.convert"

    input = operand_def(RegisterType | RegisterVectorType)
    result = result_def(RegisterType | RegisterVectorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, result_type: Attribute):
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        _check_same_register_shape(self, self.input.type, self.result.type)


@irdl_op_definition
class SliceOp(IRDLOperation):
    """``%s = tile.slice %r[0, 16] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>``: the static window
    of a register tile starting at ``offsets`` (ThunderKittens' subtile of an ``rt``).

    No data moves when each lane's values of the window are among its values of the tile (the
    window's fragment a part of the tile's: an mma operand's atoms of a wider operand, or two
    accumulator atoms of an mma C tile read as the next mma's A): tile-distribute then picks those
    registers. A window that is an mma operand whose lanes do not hold it is reached by converting the
    tile to that operand's fragment first (tile-layout); other windows must be held so already (a
    diagnostic says when not). ``tile-pipeline`` slices a register operand this way to split an mma
    into its K steps.
    """

    name = "tile.slice"

    source = operand_def(RegisterType)
    offsets = prop_def(DenseArrayBase)
    result = result_def(RegisterType)

    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, offsets, result_type: Attribute):
        super().__init__(operands=[source], properties={"offsets": DenseArrayBase.from_list(i64, list(offsets))},
                         result_types=[result_type])

    @classmethod
    def parse(cls, parser):
        unresolved = parser.parse_unresolved_operand()
        offsets = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False, allow_negative=False))
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source = parser.resolve_operand(unresolved, parser.parse_type())
        parser.parse_punctuation("->")
        op = cls(source, offsets, parser.parse_type())
        op.attributes.update(attrs)
        return op

    def print(self, printer):
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(f"[{', '.join(map(str, self.offset_values))}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @property
    def offset_values(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.offsets.iter_values())

    def verify_(self) -> None:
        src, res = self.source.type, self.result.type
        offsets = self.offset_values
        if len(offsets) != len(src.dims) or len(res.dims) != len(src.dims):
            _fail(self, f"takes one offset per dimension of {src} and a result of its rank, got offsets "
                        f"{list(offsets)} and {res}")
        if src.element_type != res.element_type:
            _fail(self, f"keeps the element type: {src.element_type} in, {res.element_type} out")
        for axis, (o, d, n) in enumerate(zip(offsets, res.dims, src.dims)):
            if o < 0 or o + d > n:
                _fail(self, f"window {_dims_text(res.dims)} at {list(offsets)} leaves {src} along dimension {axis}")


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """``%t = tile.transpose %x : !tile.rt<16x64xf16> -> !tile.rt<64x16xf16>``: the register tile
    with its rows and columns exchanged (Triton's ``tl.trans``, CuTe's transposed tensor view).

    No data moves: ``tile-layout`` gives the result the source's fragment with each element's
    coordinates swapped (:meth:`tilec.layout.TVLayout.transposed`), so every lane keeps its
    registers in their order. Where the result must be held otherwise (an mma operand), the
    source is converted before the transpose. With both fragments in the types they must be
    that pair.
    """

    name = "tile.transpose"

    input = operand_def(RegisterType)
    result = result_def(RegisterType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, result_type: Attribute | None = None):
        if result_type is None:
            src = SSAValue.get(value).type
            frag = src.fragment
            result_type = RegisterType(tuple(reversed(src.dims)), src.element_type,
                                       None if frag is None else frag.transposed().layout)
        super().__init__(operands=[value], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        if len(src.dims) != 2 or tuple(dst.dims) != tuple(reversed(src.dims)):
            _fail(self, f"of {src} gives a tile of {_dims_text(tuple(reversed(src.dims)))}, not {dst}")
        if src.element_type != dst.element_type:
            _fail(self, f"keeps the element type: {src.element_type} in, {dst.element_type} out")
        if src.fragment is not None and dst.fragment is not None:
            try:
                same = src.fragment.transposed().same_function(dst.fragment)
            except ValueError:
                same = False
            if not same:
                _fail(self, f"result fragment {dst.fragment.layout} is not the transpose of the input's "
                            f"{src.fragment.layout}: each lane keeps its values, so it holds the swapped elements")


@irdl_op_definition
class ExtractOp(IRDLOperation):
    """``%s = tile.extract %v : !tile.rv<1xf32, row> -> f32``: the one element of a register tile or
    vector, as a scalar (a full reduction's last step: ``tl.sum(x)`` reduces the rows, then the row
    vector, to one element). Every thread holds a one-element value (every (thread, value) of its
    fragment is that element), so tile-distribute reads the thread's own register.
    """

    name = "tile.extract"

    input = operand_def(RegisterType | RegisterVectorType)
    result = result_def(Attribute)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue):
        super().__init__(operands=[value], result_types=[SSAValue.get(value).type.element_type])

    def verify_(self) -> None:
        src = self.input.type
        count = src.dims[0] * src.dims[1] if isinstance(src, RegisterType) and len(src.dims) == 2 else (
            src.length.data if isinstance(src, RegisterVectorType) else None)
        if count != 1:
            _fail(self, f"takes a tile or vector of one element, got {src}: reduce it first")
        if self.result.type != src.element_type:
            _fail(self, f"gives the element type of {src}, {src.element_type}, not {self.result.type}")


class _RegisterMove(IRDLOperation):
    """A register tile's (or vector's) values held otherwise: ``%y = tile.<op> %x : T1 -> T2``."""

    input = operand_def(RegisterType | RegisterVectorType)
    result = result_def(RegisterType | RegisterVectorType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, result_type: Attribute):
        super().__init__(operands=[value], result_types=[result_type])


@irdl_op_definition
class ReshapeOp(_RegisterMove):
    """``%y = tile.reshape %x : !tile.rt<16x64xf16> -> !tile.rt<32x32xf16>``: the same elements in
    another shape, read and written in row-major order (numpy's and Triton's ``reshape``); a register
    vector is a shape of one dimension, so a tile flattens to a vector and a vector folds into a tile.

    No element changes. ``tile-layout`` gives the result the input's fragment reread in the new shape
    where a layout expresses that (every lane keeps its registers); otherwise ``tile-distribute`` moves
    the values through shared memory (each lane stores its elements at their row-major index in a
    scratch tile, the block synchronises, each lane loads the elements of the result's fragment).
    """

    name = "tile.reshape"

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        if register_elements(src) != register_elements(dst):
            _fail(self, f"of {src} ({register_elements(src)} elements) to {dst} ({register_elements(dst)}): a "
                        "reshape keeps the number of elements")
        if src.element_type != dst.element_type:
            _fail(self, f"reshapes {src} to {dst}: a reshape keeps the element type")


class _Halves(IRDLOperation):
    """An op on a tile's two halves along ``dim``: one after the other, or (``interleaved``) taking turns."""

    dim = prop_def(IntegerAttr[I64])
    interleaved = opt_prop_def(UnitAttr)

    traits = traits_def(Pure())

    @staticmethod
    def halves(dim: int, interleaved: bool) -> dict[str, Attribute]:
        """The properties of halves along ``dim`` (``interleaved``: taking turns)."""
        return {"dim": IntegerAttr(dim, 64), **({"interleaved": UnitAttr()} if interleaved else {})}

    @property
    def dim_value(self) -> int:
        return self.dim.value.data

    def checked_dim(self, tile: Attribute) -> int:
        """The dim, or a verifier error unless it is one of ``tile``'s two."""
        if self.dim_value not in (0, 1):
            _fail(self, f"dim {self.dim_value} is not a dimension of {tile}")
        return self.dim_value


@irdl_op_definition
class JoinOp(_Halves):
    """Two register tiles of one type side by side along ``dim``: ``%r = tile.join %a, %b dim 1 :
    !tile.rt<16x32xf16>, !tile.rt<16x32xf16> -> !tile.rt<16x64xf16>`` puts ``b`` after ``a`` (numpy's
    ``concatenate``, Triton's ``tl.cat``); ``interleaved`` makes them take turns (element ``x`` of ``a``
    at ``2x``, of ``b`` at ``2x + 1``: Triton's ``tl.interleave``, or ``tl.join`` read as a 2-D tile).

    ``tile-layout`` gives the result a fragment each thread holds of both parts' values side by side,
    or, when the result's fragment is decided first (an mma operand), the parts the fragment of the
    elements it holds of each (:func:`tilec.passes.fragments.part_fragment`), so that no data moves;
    otherwise ``tile-distribute`` moves the values through shared memory. Two vectors join along dim 0
    into a vector of twice their length (``tl.interleave`` and ``tl.cat`` of vectors).
    """

    name = "tile.join"

    lhs = operand_def(RegisterType | RegisterVectorType)
    rhs = operand_def(RegisterType | RegisterVectorType)
    result = result_def(RegisterType | RegisterVectorType)

    assembly_format = ("$lhs `,` $rhs `dim` $dim (`interleaved` $interleaved^)? attr-dict `:` type($lhs) `,` "
                       "type($rhs) `->` type($result)")

    def __init__(self, lhs: SSAValue, rhs: SSAValue, dim: int, interleaved: bool, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type], properties=self.halves(dim, interleaved))

    def verify_(self) -> None:
        a, b, r = self.lhs.type, self.rhs.type, self.result.type
        if isinstance(a, RegisterVectorType) or isinstance(b, RegisterVectorType):
            self._verify_vectors(a, b, r)
            return
        if a.element_type != b.element_type or tuple(a.dims) != tuple(b.dims):
            _fail(self, f"joins two tiles of one shape and element type, got {a} and {b}")
        dim = self.checked_dim(a)
        want = tuple(2 * d if i == dim else d for i, d in enumerate(a.dims))
        if tuple(r.dims) != want or r.element_type != a.element_type:
            _fail(self, f"of two {a} along dim {dim} gives a tile of {_dims_text(want)}x{a.element_type}, not {r}")

    def _verify_vectors(self, a: Attribute, b: Attribute, r: Attribute) -> None:
        """Two vectors of one length, orientation and element type, along dim 0: a vector of twice the length."""
        if not (isinstance(a, RegisterVectorType) and isinstance(b, RegisterVectorType)) or \
                (a.length, a.orientation, a.element_type) != (b.length, b.orientation, b.element_type):
            _fail(self, f"joins two tiles, or two vectors, of one shape and element type, got {a} and {b}")
        if self.dim_value != 0:
            _fail(self, f"dim {self.dim_value} is not a dimension of {a}")
        if not isinstance(r, RegisterVectorType) or r.length.data != 2 * a.length.data or \
                (r.orientation, r.element_type) != (a.orientation, a.element_type):
            _fail(self, f"of two {a} gives a vector of {2 * a.length.data}x{a.element_type}, {a.orientation.data}, "
                        f"not {r}")


@irdl_op_definition
class SplitOp(_Halves):
    """The two halves of a register tile along ``dim``, the inverse of ``tile.join``: ``%a, %b = tile.split %x
    dim 0 interleaved : !tile.rt<32x8xf32> -> !tile.rt<16x8xf32>, !tile.rt<16x8xf32>`` takes the even rows
    and the odd ones (without ``interleaved``: the first half and the second). Triton's ``tl.split`` of a
    value whose pair axis was reshaped out of a tile (``x.reshape(m, 2, n)``).

    ``tile-layout`` gives the parts the fragment of the elements each thread holds of both, or the
    input the parts side by side (:func:`tilec.passes.fragments.part_fragment`, ``joined_fragment``), so
    that no data moves; otherwise ``tile-distribute`` moves the values through shared memory.
    """

    name = "tile.split"

    input = operand_def(RegisterType)
    first = result_def(RegisterType)
    second = result_def(RegisterType)

    assembly_format = ("$input `dim` $dim (`interleaved` $interleaved^)? attr-dict `:` type($input) `->` "
                       "type($first) `,` type($second)")

    def __init__(self, value: SSAValue, dim: int, interleaved: bool, part_type: Attribute):
        super().__init__(operands=[value], result_types=[part_type, part_type], properties=self.halves(dim, interleaved))

    def verify_(self) -> None:
        x, a, b = self.input.type, self.first.type, self.second.type
        dim = self.checked_dim(x)
        if x.dims[dim] % 2:
            _fail(self, f"of {x} along dim {dim}: an extent of {x.dims[dim]} has no halves")
        want = tuple(d // 2 if i == dim else d for i, d in enumerate(x.dims))
        for part in (a, b):
            if tuple(part.dims) != want or part.element_type != x.element_type:
                _fail(self, f"of {x} along dim {dim} gives two tiles of {_dims_text(want)}x{x.element_type}, not {part}")


@irdl_op_definition
class TakeOp(IRDLOperation):
    """Elements of a register tile picked along one axis by an index tile: numpy's ``take_along_axis``,
    Triton's ``tl.gather(src, index, axis)``. ``%r = tile.take %src[%idx] axis 1 : !tile.rt<16x64xf32>
    [!tile.rt<16x8xi32>] -> !tile.rt<16x8xf32>`` gives ``r[i, j] = src[i, idx[i, j]]`` (axis 0:
    ``src[idx[i, j], j]``); a vector takes ``r[i] = src[idx[i]]``. The index has the result's shape, which
    is the source's but along ``axis``; an index outside ``[0, extent)`` (a negative one too) reads 0.

    ``tile-layout`` gives the index and the result one fragment; the source keeps its own.
    ``tile-distribute`` moves the source through shared memory (each lane stores its elements at their
    row-major places, the block synchronises, each lane loads the element each index names).
    """

    name = "tile.take"

    source = operand_def(RegisterType | RegisterVectorType)
    index = operand_def(RegisterType | RegisterVectorType)
    result = result_def(RegisterType | RegisterVectorType)
    axis = prop_def(IntegerAttr[I64])

    traits = traits_def(Pure())

    assembly_format = ("$source `[` $index `]` `axis` $axis attr-dict `:` type($source) `[` type($index) `]` `->` "
                       "type($result)")

    def __init__(self, source: SSAValue, index: SSAValue, axis: int, result_type: Attribute):
        super().__init__(operands=[source, index], result_types=[result_type], properties={"axis": IntegerAttr(axis, 64)})

    @property
    def axis_value(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        src, idx, r = self.source.type, self.index.type, self.result.type
        if type(src) is not type(idx):
            _fail(self, f"takes from {src} with {idx}: both register tiles or both register vectors")
        if idx.element_type not in INDEX_ELEMENT_TYPES:
            _fail(self, f"index {idx} must hold i32 or i64 elements")
        dims, want = _register_shape(src), _register_shape(idx)
        axis = self.axis_value
        if not 0 <= axis < len(dims):
            _fail(self, f"axis {axis} is not an axis of {src}")
        if any(a != b for i, (a, b) in enumerate(zip(dims, want)) if i != axis):
            _fail(self, f"index {idx} must have the extents of {src} but along axis {axis}")
        if not _same_shape(idx, r) or r.element_type != src.element_type:
            _fail(self, f"gives a value of the index's shape and the source's element type ({src.element_type}), "
                        f"not {r}")
        if r.fragment is not None and idx.fragment is not None and idx.fragment_attr != r.fragment_attr:
            _fail(self, f"index {idx} and result {r} have different fragments (tile-layout gives them one)")


def _register_shape(ty: Attribute) -> tuple[int, ...]:
    """A register tile's dims, or a vector's length as a shape of one dimension."""
    return tuple(ty.dims) if isinstance(ty, RegisterType) else (ty.length.data,)


def register_elements(ty: Attribute) -> int:
    """How many elements a register tile or vector type holds."""
    return ty.num_elements if isinstance(ty, RegisterType) else ty.length.data


@irdl_op_definition
class ConvertLayoutOp(_RegisterMove):
    """The same tile (or vector) in another fragment: ``%y = tile.convert_layout %x : T1 -> T2``.

    ``tile-layout`` inserts it where a value's uses need two different fragments (e.g. an mma's
    result used as the next mma's A operand in a fragment that is not the same function); the
    values do not change, only which lane holds which of them.
    """

    name = "tile.convert_layout"

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        _check_same_register_shape(self, src, dst)
        if src.element_type != dst.element_type:
            _fail(self, f"converts {src} to {dst}: a layout conversion keeps the element type")


class _Reduction(IRDLOperation):
    """Reduce each row (``row_*``: one value per row) or column (``col_*``) of a register tile.

    With an accumulator (``tile.row_max %x into %m``) the result also combines the accumulator's
    values: ``max(m, row_max(x))``, how online softmax keeps its running maximum.
    """

    V: ClassVar = VarConstraint("V", base(RegisterVectorType))

    input = operand_def(RegisterType)
    acc = opt_operand_def(V)
    result = result_def(V)

    traits = traits_def(Pure())

    assembly_format = "$input (`into` $acc^)? attr-dict `:` type($input) `->` type($result)"

    ORIENTATION: ClassVar[str] = "row"

    def __init__(self, value: SSAValue, acc: SSAValue | None = None):
        t = SSAValue.get(value).type
        length = t.dims[0] if self.ORIENTATION == "row" else t.dims[1]
        result = SSAValue.get(acc).type if acc is not None else RegisterVectorType(length, t.element_type, self.ORIENTATION)
        super().__init__(operands=[value, [acc] if acc is not None else []], result_types=[result])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        length = src.dims[0] if self.ORIENTATION == "row" else src.dims[1]
        if dst.orientation.data != self.ORIENTATION or dst.length.data != length or dst.element_type != src.element_type:
            _fail(self, f"reducing {src} gives !tile.rv<{length}x{src.element_type}, {self.ORIENTATION}>, not {dst}")


@irdl_op_definition
class RowSumOp(_Reduction):
    name = "tile.row_sum"


@irdl_op_definition
class RowMaxOp(_Reduction):
    name = "tile.row_max"


@irdl_op_definition
class RowMinOp(_Reduction):
    name = "tile.row_min"


@irdl_op_definition
class ColSumOp(_Reduction):
    name = "tile.col_sum"
    ORIENTATION: ClassVar[str] = "col"


@irdl_op_definition
class ColMaxOp(_Reduction):
    name = "tile.col_max"
    ORIENTATION: ClassVar[str] = "col"


@irdl_op_definition
class ColMinOp(_Reduction):
    name = "tile.col_min"
    ORIENTATION: ClassVar[str] = "col"


@irdl_op_definition
class IotaOp(IRDLOperation):
    """Each element's coordinate along ``dim``, plus ``offset``: ``%r = tile.iota %r0 dim 0 : !tile.rt<64x64xi32>``.

    With the window's origin as the offset these are the element's coordinates in the view: the
    row and column a mask compares (``tile.map`` with ``arith.cmpi`` and ``arith.select``), e.g. a
    causal mask keeps column <= row. A register vector's coordinate is its index (``dim 0``).
    """

    name = "tile.iota"

    offset = operand_def(IndexType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(RegisterType | RegisterVectorType)

    traits = traits_def(Pure())

    assembly_format = "$offset `dim` $dim attr-dict `:` type($result)"

    def __init__(self, offset: SSAValue, dim: int, result_type: Attribute):
        super().__init__(operands=[offset], properties={"dim": IntegerAttr(dim, 64)}, result_types=[result_type])

    def verify_(self) -> None:
        ty, dim = self.result.type, self.dim.value.data
        rank = 1 if isinstance(ty, RegisterVectorType) else 2
        if not 0 <= dim < rank:
            _fail(self, f"dim {dim} is not a dimension of {ty}")
        if ty.element_type != IntegerType(32):
            _fail(self, f"coordinates are i32, got {ty}")


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """A register vector repeated across a tile: along each row (``row``) or down each column (``col``)."""

    name = "tile.broadcast"

    input = operand_def(RegisterVectorType)
    result = result_def(RegisterType)

    traits = traits_def(Pure())

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, value: SSAValue, tile_type: RegisterType):
        super().__init__(operands=[value], result_types=[tile_type])

    def verify_(self) -> None:
        src, dst = self.input.type, self.result.type
        length = dst.dims[0] if src.is_row else dst.dims[1]
        if src.length.data != length or src.element_type != dst.element_type:
            _fail(self, f"a {src.orientation.data} vector {src} does not fit tile {dst}: expected length {length} of {dst.element_type}")


# -- multi-stage shared buffers (tile-pipeline) ---------------------------------


def stage_layout(buffer_layout) -> tuple[object, int]:
    """The layout of one stage of a multi-stage shared buffer, and the stage stride ``P``.

    The buffer's layout is ``(N, ...):(P, ...)`` (a plain layout) or
    ``Sw<B,M,S> o 0 o (N, ...):(P, ...)``: its first mode, a single ``N:P``,
    is the stage. Stage ``i`` starts at element offset ``i * P``; its layout
    is the buffer's with that mode dropped, keeping the swizzle. That is exact
    only when ``P`` is a multiple of the swizzle's period ``2^(B+M+|S|)``: the
    swizzle reads and flips bits below that, so ``Sw(i*P + o) = i*P + Sw(o)``.
    Raises ``ValueError`` saying why a layout has no such stages.
    """
    composed = isinstance(buffer_layout, ComposedLayout)
    base = buffer_layout.layout if composed else buffer_layout
    if composed and (not isinstance(buffer_layout.inner, Swizzle) or buffer_layout.offset != 0):
        raise ValueError(f"layout {buffer_layout} is not Sw<B,M,S> o 0 o layout: its stages are not layouts of their own")
    if not isinstance(base.shape, tuple) or len(base.shape) < 2:
        raise ValueError(f"layout {buffer_layout} needs a stage mode and the stage's modes")
    stages, stride = base.shape[0], base.stride[0]
    if isinstance(stages, tuple) or isinstance(stride, tuple):
        raise ValueError(f"the stage mode {stages}:{stride} of {buffer_layout} must be a single N:P")
    rest = base[1] if len(base.shape) == 2 else Layout(base.shape[1:], base.stride[1:])
    if not composed:
        return rest, stride
    sw = buffer_layout.inner
    if stride % sw.size():
        raise ValueError(
            f"stage stride {stride} of {buffer_layout} is not a multiple of the period {sw.size()} of {sw}: "
            "the swizzle would not be the same in every stage"
        )
    return ComposedLayout(sw, 0, rest), stride


@irdl_op_definition
class StageOp(IRDLOperation):
    """One stage of a multi-stage shared buffer: ``%s = tile.stage %buf[%i]``.

    ``%buf`` is an ``N x R x C`` shared tile whose layout's first mode ``N:P``
    is the stage (see :func:`stage_layout`); ``%s`` is the ``R x C`` tile at
    element offset ``i * P`` (``0 <= i < N``), with the buffer's layout minus
    that mode, e.g. ``!tile.st<3x64x32xf16, Sw<3,3,3> o 0 o (3,64,32):(2048,32,1)>``
    → ``!tile.st<64x32xf16, Sw<3,3,3> o 0 o (64,32):(32,1)>``. The stages may
    not overlap (``P`` at least the stage's cosize). A view, not a copy:
    codegen adds ``i * P`` elements to the buffer's address.
    """

    name = "tile.stage"

    buffer = operand_def(SharedType)
    index = operand_def(IndexType)
    result = result_def(SharedType)

    traits = traits_def(Pure())

    assembly_format = "$buffer `[` $index `]` attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer: SSAValue, index: SSAValue, stage_type: SharedType | None = None):
        if stage_type is None:
            buf = SSAValue.get(buffer).type
            stage_type = SharedType(buf.dims[1:], buf.element_type, stage_layout(buf.layout)[0])
        super().__init__(operands=[buffer, index], result_types=[stage_type])

    def verify_(self) -> None:
        buf, stage = self.buffer.type, self.result.type
        if len(buf.dims) < 2 or buf.dims[1:] != stage.dims:
            _fail(self, f"a stage of {_dims_text(buf.dims)} is {_dims_text(buf.dims[1:])}, not {_dims_text(stage.dims)}")
        _check_same_element(self, buf, stage)
        try:
            expected, stride = stage_layout(buf.layout)
        except ValueError as err:
            _fail(self, f"buffer {buf} has no stages: {err}")
        if str(stage.layout) != str(expected):
            _fail(self, f"a stage of {buf} has layout {expected}, not {stage.layout}")
        if stride < stage.layout.cosize():
            _fail(self, f"stages of {buf} overlap: stride {stride} is less than the stage's cosize {stage.layout.cosize()}")


TILE_OPS = [
    BlockIdOp,
    GridDimOp,
    ClusterIdOp,
    ClusterCountOp,
    BlockRankOp,
    ThreadIdOp,
    WarpIdOp,
    LaneIdOp,
    BarrierOp,
    ClusterBarrierOp,
    MatmulOp,
    YieldOp,
    DimOp,
    SubviewOp,
    MapOp,
    AllocOp,
    ZerosOp,
    FillOp,
    LoadOp,
    LoadScalarOp,
    StoreOp,
    GatherOp,
    ScatterOp,
    ScatterAtomicOp,
    CopyOp,
    AsyncCopyOp,
    AsyncCommitOp,
    AsyncWaitOp,
    MbarInitOp,
    MbarExpectOp,
    BulkCopyOp,
    BulkStoreOp,
    BulkStoreWaitOp,
    MbarWaitOp,
    MbarArriveOp,
    MmaOp,
    WgmmaOp,
    WgmmaWaitOp,
    TurnBeginOp,
    TurnEndOp,
    SetMaxNRegOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    MaxOp,
    MinOp,
    ExpOp,
    Exp2Op,
    ReluOp,
    ConvertOp,
    ConvertLayoutOp,
    ReshapeOp,
    JoinOp,
    SplitOp,
    TakeOp,
    SliceOp,
    TransposeOp,
    ExtractOp,
    AtomicOp,
    RowSumOp,
    RowMaxOp,
    RowMinOp,
    ColSumOp,
    ColMaxOp,
    ColMinOp,
    ReduceOp,
    ScanOp,
    IotaOp,
    BroadcastOp,
    StageOp,
]
