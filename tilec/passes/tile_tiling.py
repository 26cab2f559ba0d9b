"""``tile-tiling``: a whole-problem ``tile.matmul`` → the warp-level block program.

Options (``tile-tiling{block=128,128,32 warps=2,2 group=8 atom=... tf32=false thread_tile=8,8}``):

- ``block=BM,BN,BK`` the block tile (default 128,128,32);
- ``warps=WM,WN`` the block's warps, laid out row-major over the block tile
  (default 2,2; on the SIMT path, as many warps as ``thread_tile`` asks,
  e.g. 4,2 for the default block and 8x8 thread tiles);
- ``group=G`` grouped block order: ``G`` consecutive block rows share a band of B in L2 (default 8);
- ``atom=NAME`` one of ``tilec.layout.MMA_ATOMS``; default from the element
  type: ``mma_m16n8k16_f16``, ``mma_m16n8k16_bf16``, for f32
  ``mma_m16n8k8_tf32`` with ``tf32=true``, else ``fma_f32`` (SIMT);
- ``thread_tile=TM,TN`` SIMT only: each lane computes a ``TM x TN`` block of C (default 8,8);
- ``persistent=true`` a persistent kernel: the launch's blocks loop over C's tiles, block ``i`` of
  ``n`` (``tile.grid_dim x``) taking tiles ``i, i + n, ...`` in the same grouped order, so the host
  launches as many blocks as run at once (one an SM) and a block's next tile follows its last
  without a new launch (with ``tile-pipeline{producer}``, the producer loads the next tile's K
  tiles while the consumers store this one);
- ``cluster=C`` (also ``C,1``; sm_90) thread-block clusters of ``C`` blocks along M
  (``#tile.launch<..., cluster = [C, 1, 1]>``) over a grouped order of ``ceil(tiles_m / C) x
  tiles_n`` tiles of ``C`` block rows each: cluster ``j`` (``tile.cluster_id x``) takes tile ``j``,
  or with ``persistent`` the tiles ``j, j + n, ...`` (``n``: ``tile.cluster_count x``), the block of
  rank ``r`` (``tile.block_rank``) its row ``r``: the cluster's blocks read the same tiles of B at
  the same K steps, which ``tile-pipeline`` then multicasts (each block loads its share for all);
  ``cluster=1,C`` the same along N (tiles of ``C`` block columns, ``tiles_m x ceil(tiles_n / C)``
  of them, rank ``r`` taking column ``r``): the blocks share A's tiles (CUTLASS's cluster shapes
  2x1 and 1x2);
- ``wgmma=true`` sm_90a's warpgroup MMA (f16/bf16, A row-major M x K, B K x N or, with
  ``transpose_b``, N x K; BM a multiple of 64, BN at most 256): warps ``BM/16 x 1``, warp
  ``w`` holds rows ``16w ..`` and all BN columns; the K loop's ``tile.load``/``tile.mma``
  become one ``tile.wgmma %sa[64 * (warp / 4)], %sb[0], %acc`` (``transpose_b``: B's shared
  tile is ``BN x BK``, read K-major; operands stay in shared memory, in the layouts bulk
  tensor copies write: use ``tile-pipeline{bulk=true}``).

Input: ``func.func``\\ s whose body is one ``tile.matmul`` (any transposes, batched or not,
f16/bf16/f32 (FP8 with ``wgmma``) in, f16/bf16/f32 out, epilogue inputs of rank 1
(per column; of static extent ``[1]``, one number) or 2 (per element)) besides side-effect-free ops; functions without a matmul are
left alone. Output: the function becomes a kernel,
``#tile.launch<grid = [?, 1, 1], block = [32*WM*WN, 1, 1], smem = bytes of A's and B's shared tiles>``
(``grid = [?, ?, 1]`` for a batch: block ``y`` takes matrix ``block_id(1)``, its views ``tile.subview``\\ s),
whose body is the warp-level program of ``examples/levels/gemm_warp_level.mlir``:

1. ``tile.dim`` M, K (of a) and N (of b), with the transposes;
2. the block's tile origin ``(row0, col0)`` from ``tile.block_id x`` over a 1-D
   grid of ``ceil(M/BM)*ceil(N/BN)`` blocks in grouped order (Triton's); with
   ``persistent``, from the tile index of an ``scf.for`` from ``tile.block_id x`` to the
   tile count, step ``tile.grid_dim x``, whose body holds steps 2 (the origin), 4 (from
   the accumulator on) and 5;
3. the warp's tile origin ``(wrow, wcol)`` from ``tile.warp_id``, emitted from
   the layouts ``warp_row``/``warp_col`` of the plan
   (:mod:`tilec.passes.tiling_config`: ``zipped_divide`` of the block tile by
   the warp tile, composed with the inverse of the row-major warp layout);
4. shared tiles for A and B in their global orientation (A: ``BM x BK``, or
   ``BK x BM`` when A is stored K x M; B: ``BK x BN`` or ``BN x BK``); an f32
   ``BM/WM x BN/WN`` accumulator as the ``iter_arg`` of an ``scf.for`` over K
   with step BK; in it: ``tile.copy`` of both global windows with the plan's
   thr/val layouts (16-byte vectors along the contiguous dimension),
   ``tile.barrier``, ``tile.load`` of the warp's windows of the shared tiles,
   ``tile.mma`` with ``transpose_a``/``transpose_b`` for the transposed
   orientations and the ``atom``, ``tile.barrier``;
5. the epilogue at the warp's C window ``(row0 + wrow, col0 + wcol)``: rank-1
   inputs ``tile.load`` as ``!tile.rv<WNxT, col>`` and ``tile.broadcast``,
   rank-2 inputs ``tile.load`` as register tiles, rank-1 inputs ``[1]``
   ``tile.load_scalar`` (one register, not a vector of copies), one ``tile.map``
   whose body is the matmul's epilogue block (cloned, its ``tile.yield`` yields
   the map's element; the scalars' arguments replaced by the loaded numbers), ``tile.store`` into c. Ragged edges need nothing: windows read
   zeros past the edges and drop writes there.

On the SIMT path (atom ``fma_f32``) the program is the same; the register
tiles carry no fragment yet, and the ``tile.mma`` records the thread tile as
``tile.thread_tile = array<i64: TM, TN>``: the warp's ``(TM*a) x (TN*b)``
tile is an ``a x b`` grid of lanes numbered row-major (lane ``i*b + j`` owns
rows ``i*TM ..`` and columns ``j*TN ..``), which ``tile-distribute`` turns into
the FMA fragments.

The kernel also carries ``tile.tiling``, a dictionary of the plan: ``block``,
``warps``, ``group``, ``warp_tile``, the ``warp_layout`` (warp coordinate →
warp id), ``atom`` and ``atoms`` (atoms per warp and K step, M x N x K; on the SIMT
path FMAs per lane and K step), and
on the SIMT path ``thread_tile`` and ``lane_layout``, and ``persistent`` (a unit) for a
persistent kernel. The host computes the grid from ``block``: ``ceil(M/BM) * ceil(N/BN)``
blocks along x, or for a persistent kernel at most one an SM.

Bad options raise :class:`~tilec.passes.tiling_config.TilingConfigError`
(a ``PassFailedException``) naming the option and the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DenseArrayBase,
    DictionaryAttr,
    Float32Type,
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from tilec.ir.parser import location_text
from tilec.ir.purity import is_pure
from xdsl.utils.exceptions import PassFailedException

from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import DYNAMIC, LaunchAttr, LayoutAttr, MMAAtomAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, RegisterVectorType, SharedType
from tilec.passes.tiling_config import (
    DEFAULT_BLOCK,
    DEFAULT_THREAD_TILE,
    TilingConfigError,
    TilingPlan,
    check_cluster,
    cluster_shape,
    check_options,
    layout_terms,
    plan_tiling,
)

TILING_ATTR = "tile.tiling"
THREAD_TILE_ATTR = "tile.thread_tile"


class _Emitter:
    """Inserts ops before an anchor op (or at the end of a block); index constants go to the function's top."""

    def __init__(self, fn: func.FuncOp, anchor: Operation):
        self.fn = fn
        self.block: Block = anchor.parent_block()
        self.anchor: Operation | None = anchor
        self.constants: dict[int, arith.ConstantOp] = {}

    def const(self, value: int) -> SSAValue:
        if value not in self.constants:
            op = arith.ConstantOp(IntegerAttr(value, IndexType()))
            op.result.name_hint = f"c{value}"
            self.constants[value] = op
        return self.constants[value].result

    def emit(self, op: Operation, name: str | None = None) -> Operation:
        if self.anchor is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.anchor)
        if name is not None and op.results:
            op.results[0].name_hint = name
        return op

    def value(self, op: Operation, name: str | None = None) -> SSAValue:
        return self.emit(op, name).results[0]

    def place_constants(self) -> None:
        """Put the constants at the start of the function, in increasing order (as written by hand)."""
        entry = self.fn.body.blocks[0]
        ops = [self.constants[v] for v in sorted(self.constants)]
        first = entry.first_op
        for op in ops:
            if first is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, first)

    # index arithmetic --------------------------------------------------------------

    def add(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        return self.value(arith.AddiOp(x, y), name)

    def offset(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        """``x + y``, or ``x`` itself when ``y`` is the constant 0 (a single warp along that dimension)."""
        if 0 in self.constants and y is self.constants[0].result:
            return x
        return self.add(x, y, name)

    def sub(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        return self.value(arith.SubiOp(x, y), name)

    def mul(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        return self.value(arith.MuliOp(x, y), name)

    def div(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        return self.value(arith.DivUIOp(x, y), name)

    def rem(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        return self.value(arith.RemUIOp(x, y), name)

    def min(self, x: SSAValue, y: SSAValue, name=None) -> SSAValue:
        return self.value(arith.MinUIOp(x, y), name)

    def layouts(self, index: SSAValue, *specs) -> list[SSAValue]:
        """``layout(index)`` as arith for each ``(layout, coord_name, name)`` of ``specs``.

        Each layout becomes one ``((index / p) % s) * d`` per mode (see
        ``layout_terms``); the coordinates ``(index / p) % s`` of all layouts
        come first, then their scaling and sums (the order of the contract).
        """
        coords = []
        for layout, coord_name, _ in specs:
            terms = layout_terms(layout)
            single = len(terms) == 1
            qs = []
            for term in terms:
                q = index
                if term.divisor != 1:
                    q = self.div(q, self.const(term.divisor), coord_name if single and term.modulus is None else None)
                if term.modulus is not None:
                    q = self.rem(q, self.const(term.modulus), coord_name if single else None)
                qs.append((q, term.stride))
            coords.append(qs)
        results = []
        for (_, _, name), qs in zip(specs, coords):
            if not qs:
                results.append(self.const(0))
                continue
            total = None
            for i, (q, stride) in enumerate(qs):
                last = i == len(qs) - 1
                if stride != 1:
                    q = self.mul(q, self.const(stride), name if len(qs) == 1 else None)
                total = q if total is None else self.add(total, q, name if last else None)
            results.append(total)
        return results


def _array(values) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def _find_matmul(fn: func.FuncOp) -> t.MatmulOp | None:
    matmuls = [op for op in fn.walk() if isinstance(op, t.MatmulOp)]
    if not matmuls:
        return None
    name = fn.sym_name.data
    if len(matmuls) > 1:
        raise PassFailedException(f"tile-tiling: @{name} has {len(matmuls)} tile.matmul ops; a kernel computes one")
    mm = matmuls[0]
    if mm.parent_op() is not fn:
        raise PassFailedException(f"tile-tiling: the tile.matmul of @{name} must be at the top level of its body, not in '{mm.parent_op().name}'")
    if LAUNCH_ATTR in fn.attributes:
        raise PassFailedException(f"tile-tiling: @{name} already has tile.launch; tile-tiling makes the kernel from a plain function")
    if fn.function_type.outputs.data:
        raise PassFailedException(f"tile-tiling: @{name} returns values; a kernel cannot")
    if len(fn.body.blocks) > 1:
        where = location_text(fn)
        raise PassFailedException(f"tile-tiling: 'func.func' @{name}{f' at {where}' if where else ''}: the body has "
                                  f"{len(fn.body.blocks)} blocks; a kernel's body is one block")
    for op in fn.body.block.ops:
        if op is mm or isinstance(op, func.ReturnOp):
            continue
        if not is_pure(op):
            raise PassFailedException(
                f"tile-tiling: @{name} holds '{op.name}' besides its tile.matmul; every thread of the kernel "
                "would run it, so only side-effect-free ops may stay"
            )
    return mm


@dataclass(frozen=True)
class TileTilingPass(ModulePass):
    """Whole-problem ``tile.matmul`` → warp-level block program (see the module docstring)."""

    name: ClassVar[str] = "tile-tiling"

    block: tuple[int, ...] = DEFAULT_BLOCK
    warps: tuple[int, ...] | None = None
    group: int = 8
    atom: str | None = None
    tf32: bool = False
    thread_tile: tuple[int, ...] = DEFAULT_THREAD_TILE
    wgmma: bool = False
    persistent: bool = False
    cluster: tuple[int, ...] = (1,)
    """Blocks of a thread-block cluster (sm_90): ``C`` neighbours along M that work on tiles of one
    column of C together, so they share B's tiles (``tile-pipeline`` multicasts them), or ``1,C``
    neighbours along N, sharing A's tiles."""

    def __post_init__(self):
        check_options(self.block, self.warps, self.group, self.thread_tile)
        object.__setattr__(self, "cluster", check_cluster(self.cluster))

    def plan(self, mm: t.MatmulOp) -> TilingPlan:
        return plan_tiling(
            element_type=mm.a.type.element_type,
            transpose_a=mm.transpose_a is not None,
            transpose_b=mm.transpose_b is not None,
            block=self.block,
            warps=self.warps,
            group=self.group,
            atom=self.atom,
            tf32=self.tf32,
            thread_tile=self.thread_tile,
            wgmma=self.wgmma,
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        work = []
        for fn in op.walk():
            if isinstance(fn, func.FuncOp) and not fn.is_declaration:
                mm = _find_matmul(fn)
                if mm is not None:
                    try:
                        work.append((fn, mm, self.plan(mm)))
                    except TilingConfigError as err:
                        located = TilingConfigError(f"{err} (in @{fn.sym_name.data})")
                        located.op = mm  # the op the options do not tile: tile-opt points its diagnostic there
                        raise located from None
        for fn, mm, plan in work:  # every function checked before any is changed
            tile_matmul(fn, mm, plan, persistent=self.persistent, cluster=self.cluster)


def tile_matmul(fn: func.FuncOp, mm: t.MatmulOp, plan: TilingPlan, persistent: bool = False,
                cluster: int | tuple[int, ...] = 1) -> None:
    """Replace ``mm`` (in ``fn``) by the warp-level program of ``plan`` and make ``fn`` a kernel
    (``persistent``: its blocks loop over C's tiles, see the module docstring; ``cluster``: in
    clusters of ``CM`` blocks along M (``C`` or ``C,1``) or ``CN`` along N (``1,C``), which take the
    tiles of that many consecutive block rows of one column of C, or block columns of one row, at a
    time)."""
    cm, cn = cluster_shape(cluster)
    cluster_blocks = cm * cn
    e = _Emitter(fn, mm)
    bm, bn, bk = plan.block
    wtm, wtn = plan.warp_tile
    ta, tb = plan.transpose_a, plan.transpose_b
    a, b, c = mm.a, mm.b, mm.c
    elem = a.type.element_type
    f32 = Float32Type()

    # 0. a batch: block y multiplies matrix number block_id(1) (views of the trailing dimensions)
    if mm.batched:
        batch = e.value(t.BlockIdOp("y"), "batch")
        a, b, c = (e.value(t.SubviewOp(x, [batch]), f"{x.name_hint or name}_b")
                   for x, name in ((a, "a"), (b, "b"), (c, "c")))

    # 1. problem size
    m = e.value(t.DimOp(a, 1 if ta else 0), "M")
    k = e.value(t.DimOp(a, 0 if ta else 1), "K")
    n = e.value(t.DimOp(b, 0 if tb else 1), "N")

    # 2. grouped block order: GROUP consecutive block rows share a band of B in L2
    bid = e.value(t.BlockIdOp("x"), "bid")
    tiles_m = e.div(e.add(m, e.const(bm - 1), "m_pad"), e.const(bm), "tiles_m")
    tiles_n = e.div(e.add(n, e.const(bn - 1), "n_pad"), e.const(bn), "tiles_n")
    group = e.const(plan.group)
    width = e.mul(tiles_n, group, "width")

    def origin(tile: SSAValue, rows: SSAValue = tiles_m, width: SSAValue = width,
               rank: SSAValue | None = None) -> tuple[SSAValue, SSAValue]:
        """The (row, column) of C where tile number ``tile`` of the grouped order of ``rows`` x
        ``width / group`` starts; with a cluster, the grouped order counts tiles of the cluster's
        blocks and ``rank`` picks the block's row (``cm`` blocks along M) or column in its cluster's."""
        grp = e.div(tile, width, "group")
        first_m = e.mul(grp, group, "first_m")
        group_m = e.min(e.sub(rows, first_m, "left_m"), group, "group_m")
        in_group = e.rem(tile, width, "in_group")
        pid_m = e.add(first_m, e.rem(in_group, group_m, "pid_m_off"), "pid_m")
        pid_n = e.div(in_group, group_m, "pid_n")
        if rank is not None and cm > 1:
            pid_m = e.add(e.mul(pid_m, e.const(cm), "cluster_m"), rank, "pid_m_rank")
        if rank is not None and cn > 1:
            pid_n = e.add(e.mul(pid_n, e.const(cn), "cluster_n"), rank, "pid_n_rank")
        return e.mul(pid_m, e.const(bm), "row0"), e.mul(pid_n, e.const(bn), "col0")

    def cluster_order() -> tuple[SSAValue, SSAValue, SSAValue]:
        """(rows, columns, width) of the clusters' grouped order: a cluster's tile is ``cm`` block
        rows of one column, or ``cn`` block columns of one row."""
        rows, cols = tiles_m, tiles_n
        if cm > 1:
            rows = e.div(e.add(tiles_m, e.const(cm - 1), "mc_pad"), e.const(cm), "cluster_rows")
        if cn > 1:
            cols = e.div(e.add(tiles_n, e.const(cn - 1), "nc_pad"), e.const(cn), "cluster_cols")
        return rows, cols, width if cn == 1 else e.mul(cols, group, "cluster_width")

    if not persistent and cluster_blocks > 1:  # block r of cluster j: block r of the j-th tile of the cluster's blocks
        rows_c, _, width_c = cluster_order()
        row0, col0 = origin(e.value(t.ClusterIdOp("x"), "cluster"), rows_c, width_c, e.value(t.BlockRankOp(), "rank"))
    elif not persistent:
        row0, col0 = origin(bid)

    # 3. this warp's part of the block tile, from the plan's layouts of the warp id
    warp = e.value(t.WarpIdOp(), "warp")
    wrow, wcol = e.layouts(warp, (plan.warp_row, "wm", "wrow"), (plan.warp_col, "wn", "wcol"))

    if plan.wgmma:  # warps 4g .. 4g+3 multiply A's rows 64g ..
        band = e.mul(e.div(warp, e.const(4), "wg"), e.const(64), "wg_row")

    # 4. shared tiles (a persistent kernel's tile loop reuses them)
    st_a = SharedType(plan.shared_a, elem)
    st_b = SharedType(plan.shared_b, elem)
    sa = e.value(t.AllocOp(st_a), "sa")
    sb = e.value(t.AllocOp(st_b), "sb")

    if persistent and cluster_blocks > 1:  # the clusters stride over tiles of the cluster's blocks
        rows_c, cols_c, width_c = cluster_order()
        tiles = e.mul(rows_c, cols_c, "tiles")
        first = e.value(t.ClusterIdOp("x"), "cluster")
        clusters = e.value(t.ClusterCountOp("x"), "clusters")
        rank = e.value(t.BlockRankOp(), "rank")
        tile_body = Block(arg_types=[IndexType()])
        tile_body.args[0].name_hint = "tile"
        e.emit(scf.ForOp(first, tiles, clusters, [], tile_body))
        e.block, e.anchor = tile_body, None
        row0, col0 = origin(tile_body.args[0], rows_c, width_c, rank)
    elif persistent:  # the launch's blocks stride over the tiles: the rest runs once a tile
        tiles = e.mul(tiles_m, tiles_n, "tiles")
        blocks = e.value(t.GridDimOp("x"), "blocks")
        tile_body = Block(arg_types=[IndexType()])
        tile_body.args[0].name_hint = "tile"
        e.emit(scf.ForOp(bid, tiles, blocks, [], tile_body))
        e.block, e.anchor = tile_body, None
        row0, col0 = origin(tile_body.args[0])

    # the accumulator and the K loop
    acc_type = RegisterType((wtm, wtn), f32)
    zero = e.value(t.ZerosOp(acc_type), "zero")

    body = Block(arg_types=[IndexType(), acc_type])
    kv, acc_i = body.args
    kv.name_hint, acc_i.name_hint = "k", "acc_i"
    c0 = e.const(0)
    loop = scf.ForOp(c0, k, e.const(bk), [zero], body)
    e.emit(loop, "acc")
    outer_anchor = e.anchor
    outer_block = e.block
    e.block, e.anchor = body, None

    a_idx = [kv, row0] if ta else [row0, kv]
    b_idx = [col0, kv] if tb else [kv, col0]
    e.emit(t.CopyOp(a, a_idx, sa, (), plan.copy_a.thr, plan.copy_a.val))
    e.emit(t.CopyOp(b, b_idx, sb, (), plan.copy_b.thr, plan.copy_b.val))
    e.emit(t.BarrierOp())
    if plan.wgmma:  # the warpgroup's 64-row band of A times all of B, operands in shared memory
        d = e.value(t.WgmmaOp(sa, band, sb, c0, acc_i, transpose_b=tb), "d")
    else:
        ra_type = RegisterType((bk, wtm) if ta else (wtm, bk), elem)
        rb_type = RegisterType((wtn, bk) if tb else (bk, wtn), elem)
        ra = e.value(t.LoadOp(sa, [c0, wrow] if ta else [wrow, c0], ra_type), "ra")
        rb = e.value(t.LoadOp(sb, [wcol, c0] if tb else [c0, wcol], rb_type), "rb")
        mma = t.MmaOp(ra, rb, acc_i, transpose_a=ta, transpose_b=tb, atom=plan.atom)
        if plan.is_simt:
            mma.attributes[THREAD_TILE_ATTR] = _array(plan.thread_tile)
        d = e.value(mma, "d")
    e.emit(t.BarrierOp())
    e.emit(scf.YieldOp(d))
    e.block, e.anchor = outer_block, outer_anchor
    acc = loop.results[0]

    # 5. epilogue on this warp's window of C
    row = e.offset(row0, wrow, "row")
    col = e.offset(col0, wcol, "col")
    map_inputs = [acc]
    scalars: dict[int, SSAValue] = {}  # epilogue argument -> the number every element reads
    for i, view in enumerate(mm.inputs):
        vt: GlobalType = view.type
        et = vt.element_type
        tile_type = RegisterType((wtm, wtn), et)
        hint = view.name_hint or f"in{i}"
        if vt.rank == 1 and tuple(vt.dims) == (1,):  # one number for every element (broadcast)
            scalars[i + 1] = e.value(t.LoadScalarOp(view, [e.const(0)]), f"{hint}_s")
        elif vt.rank == 1:
            vec = e.value(t.LoadOp(view, [col], RegisterVectorType(wtn, et, "col")), f"{hint}_v")
            map_inputs.append(e.value(t.BroadcastOp(vec, tile_type), f"{hint}_t"))
        else:
            map_inputs.append(e.value(t.LoadOp(view, [row, col], tile_type), f"{hint}_t"))
    region = _map_body(mm.epilogue.block, scalars)
    out = e.value(t.MapOp(map_inputs, RegisterType((wtm, wtn), c.type.element_type), region), "out")
    e.emit(t.StoreOp(out, c, [row, col]))
    if persistent:
        e.emit(scf.YieldOp())

    e.place_constants()
    mm.detach()
    mm.erase()

    fn.attributes[LAUNCH_ATTR] = LaunchAttr((DYNAMIC, DYNAMIC if mm.batched else 1, 1), (plan.threads, 1, 1),
                                            plan.smem_bytes, (cluster_blocks, 1, 1))
    fn.attributes[TILING_ATTR] = _tiling_attr(plan, persistent, (cm, cn))


def _map_body(epilogue: Block, scalars: dict[int, SSAValue]) -> Region:
    """The matmul's epilogue as a ``tile.map`` body: a clone whose arguments in ``scalars`` (by position)
    are replaced by those values, defined before the map (numbers every element reads)."""
    old_args = list(epilogue.args)
    block = Block(arg_types=[a.type for i, a in enumerate(old_args) if i not in scalars])
    mapper: dict[SSAValue, SSAValue] = {}
    kept = iter(block.args)
    for i, arg in enumerate(old_args):
        mapper[arg] = scalars[i] if i in scalars else next(kept)
        if i not in scalars and arg.name_hint:
            mapper[arg].name_hint = arg.name_hint
    for op in epilogue.ops:
        block.add_op(op.clone(value_mapper=mapper))
    return Region(block)


def _tiling_attr(plan: TilingPlan, persistent: bool = False, cluster: tuple[int, int] = (1, 1)) -> DictionaryAttr:
    entries: dict[str, Attribute] = {
        "block": _array(plan.block),
        "warps": _array(plan.warps),
        "group": IntegerAttr(plan.group, i64),
        "warp_tile": _array(plan.warp_tile),
        "warp_layout": LayoutAttr(plan.warp_layout),
        "atom": MMAAtomAttr(plan.atom),
        "atoms": _array(plan.atoms),
    }
    if plan.is_simt:
        entries["thread_tile"] = _array(plan.thread_tile)
        entries["lane_layout"] = LayoutAttr(plan.lane_layout)
    if plan.wgmma:
        entries["wgmma"] = UnitAttr()
    if persistent:
        entries["persistent"] = UnitAttr()
    if cluster != (1, 1):
        entries["cluster"] = _array(cluster)
    return DictionaryAttr(entries)
