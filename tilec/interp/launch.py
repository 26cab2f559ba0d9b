"""Running a tile function on numpy data: once, or over a whole grid of blocks and warps.

``run(module, "name", *args, grid=(gx, gy, gz))``:

- ``!tile.gl`` parameters take numpy arrays of the element's dtype (bf16: float32
  arrays), written in place; scalar parameters take Python/numpy scalars;
  ``!tile.rt``/``!tile.rv``/``!tile.st`` parameters take numpy arrays of the tile's shape.
- A function without ``tile.launch`` runs once and its results are returned.
- A kernel (``tile.launch = #tile.launch<grid = [...], block = [...], smem = ...>``)
  runs for every block of the grid, x fastest, then y, then z, one block (or
  cluster of blocks, below) after the other. Dynamic grid extents come from
  ``grid``; static ones must agree.
  Each block gets fresh shared memory (NaN), at most ``smem`` bytes of it.
- If the kernel (or a function it calls) uses ``tile.warp_id``, ``tile.lane_id``
  or ``tile.thread_id``, each block runs once per warp (``ceil(threads / 32)``),
  each warp in its own Python thread with its own interpreter, and
  ``tile.barrier`` synchronises them for real (:class:`WarpScheduler`: the warps
  take turns between barriers in a fixed order, so runs are deterministic and a
  missing barrier shows on every run). A per-warp execution stands for its
  warp's first lane: ``tile.lane_id`` is 0 and ``tile.thread_id`` gives the
  coordinates of thread ``32 * warp``. A ``tile.copy``/``tile.async_copy`` with
  ``thr``/``val`` layouts then moves only the elements of that warp's threads;
  without them every warp moves the whole tile. Otherwise (no per-warp ids) the
  body runs once per block, ``tile.barrier`` is a no-op and copies move whole tiles.
- Thread-block clusters (``#tile.launch<..., cluster = [cx, cy, cz]>``): block
  ``(x, y, z)`` is in cluster ``(x // cx, y // cy, z // cz)`` with rank
  ``x % cx + (y % cy) cx + (z % cz) cx cy`` (``tile.cluster_id``,
  ``tile.cluster_count`` = grid extent // cluster extent, ``tile.block_rank``,
  0 without clusters); the grid must be whole clusters. The blocks of a cluster
  run together, cluster after cluster: all their warps (or, without per-warp
  ids, each block once) under one scheduler (:class:`WarpScheduler`, rank 0's
  warps first in ascending order; a block runs on until it waits for another),
  where ``tile.barrier`` meets the warps of a block, ``tile.cluster_barrier``
  every warp of the cluster, and a warp waiting on an mbarrier lets any other
  warp of the cluster run. Each block has its own shared memory and barriers,
  which the others reach: ``!tile.mbar<N, cluster_warps>`` counts one arrival
  per consumer warp of every block, and ``tile.mbar_arrive`` on it arrives on
  that barrier of every block; ``tile.bulk_copy ... multicast`` in block rank
  ``r`` of ``c`` copies rows ``[r R/c, (r+1) R/c)`` of the window into the same
  tile of every block, completing (those bytes) on the same barrier of each (in
  deferred mode landing when that block's phase completes; a phase short of
  bytes waits for the other blocks' parts). Blocks multicasting different
  windows into one phase, and using a block's barriers before it initialised
  them (a ``tile.cluster_barrier`` after ``tile.mbar_init`` is missing), are errors.
- Indices of a global window are the element coordinates of the tile's origin
  (its top-left element), not tile numbers.
- Fragment-level functions (``frag``/``llvm`` ops, ``!llvm.ptr`` arguments) run
  lane by lane instead: see :mod:`tilec.interp.lanes` for their arguments and semantics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func as func_dialect
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp
from xdsl.ir import Attribute
from xdsl.parser import Parser

from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, RegisterVectorType, SharedType
from tilec.interp import lanes
from tilec.interp.dtypes import is_float_type, to_element
from tilec.interp.errors import OpError, TileInterpreterError
from tilec.interp.grid import (
    DEFAULT_BARRIER_TIMEOUT,
    any_reachable_op,
    clusters,
    lookup_function,
    resolve_grid,
    run_cluster_warps,
)
from tilec.interp.memory import GlobalView, SharedTile
from tilec.interp.tile_functions import AsyncGroups, BlockBarrier, BlockShared, ExecContext, WarpScheduler, make_interpreter
from tilec.dialects.context import make_context

_PER_WARP_OPS = (t.WarpIdOp, t.LaneIdOp, t.ThreadIdOp)


def parse_module(text: str, verify: bool = True) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    if verify:
        module.verify()
    return module


# -- arguments -----------------------------------------------------------------------


def _bind(value: Any, typ: Attribute, what: str) -> Any:
    if isinstance(typ, GlobalType):
        return GlobalView.bind(value, typ, what)
    if isinstance(typ, IndexType | IntegerType):
        if isinstance(value, bool | np.bool_) and not (isinstance(typ, IntegerType) and typ.width.data == 1):
            raise OpError(f"{what} is {typ}: expected an integer, got {value!r}")
        if not isinstance(value, int | np.integer):
            raise OpError(f"{what} is {typ}: expected an integer, got {type(value).__name__}")
        return int(value)
    if is_float_type(typ):
        if not isinstance(value, int | float | np.integer | np.floating):
            raise OpError(f"{what} is {typ}: expected a number, got {type(value).__name__}")
        return to_element(value, typ)
    if isinstance(typ, RegisterType | RegisterVectorType | SharedType):
        shape = (typ.length.data,) if isinstance(typ, RegisterVectorType) else typ.dims
        if not isinstance(value, np.ndarray) or value.shape != tuple(shape):
            got = value.shape if isinstance(value, np.ndarray) else type(value).__name__
            raise OpError(f"{what} is {typ}: expected a numpy array of shape {tuple(shape)}, got {got}")
        data = to_element(value, typ.element_type)
        return SharedTile.from_logical(data, typ) if isinstance(typ, SharedType) else data
    return value


def _unbind(value: Any) -> Any:
    if isinstance(value, SharedTile):
        return value.read()
    if isinstance(value, GlobalView):
        return value.array
    return value


def _uses_per_warp_ids(module: ModuleOp, fn: func_dialect.FuncOp) -> bool:
    return any_reachable_op(module, fn, lambda op: isinstance(op, _PER_WARP_OPS))


# -- executions ----------------------------------------------------------------------


def _execute(module: ModuleOp, fn: func_dialect.FuncOp, args: tuple, ctx: ExecContext) -> tuple:
    interpreter = make_interpreter(module, ctx)
    with np.errstate(all="ignore"):
        try:
            results = interpreter.call_op(fn, args)
            ctx.async_groups.drain()
        except TileInterpreterError as err:
            where = ctx.describe()
            raise (err.at(where) if where else err) from err.__cause__
    return results


def _run_cluster(module, fn, args, blocks, grid, launch, limit, per_warp, async_mode, timeout, order) -> None:
    """The blocks of one thread-block cluster (one block without clusters) together: every warp of
    each (a per-warp program), or each block once (a block-level one), under one scheduler."""
    clustered = len(blocks) > 1
    shared = tuple(BlockShared(limit, clustered) for _ in blocks)
    block_dims, cluster_dims = launch.block_dims, launch.cluster_dims
    if not per_warp and not clustered:  # a block alone, once: nothing to schedule
        ctx = ExecContext(blocks[0], grid, block_dims, None, shared[0], None, AsyncGroups(async_mode), launched=True)
        _execute(module, fn, args, ctx)
        return

    def run_warp(rank: int, warp: int, barrier: BlockBarrier) -> None:
        ctx = ExecContext(
            blocks[rank], grid, block_dims, warp if per_warp else None, shared[rank], barrier,
            AsyncGroups(async_mode), launched=True, cluster_dims=cluster_dims, cluster=shared if clustered else (),
        )
        _execute(module, fn, args, ctx)

    warps = ExecContext(block_dims=block_dims).warps if per_warp else 1
    run_cluster_warps(blocks, warps, timeout, order, fn, run_warp)


def run(
    module: ModuleOp,
    func_name: str,
    *args: Any,
    grid: int | Sequence[int] | None = None,
    async_mode: str = "deferred",
    barrier_timeout: float = DEFAULT_BARRIER_TIMEOUT,
    check_smem: bool = True,
    warp_order: str = "ascending",
) -> tuple:
    """Run ``@func_name`` of ``module`` on ``args``; see the module docstring.

    ``async_mode``: ``"deferred"`` (default) lands each ``tile.async_copy`` in
    shared memory at the ``tile.async_wait`` that completes its group, so a
    missing wait reads stale (NaN) data; ``"eager"`` lands it at issue.
    ``check_smem``: a kernel's shared tiles must fit its ``smem``.
    ``warp_order``: ``"ascending"`` or ``"descending"``, the order in which the
    warps of a block (of a cluster: block rank 0's first, or last) take turns
    between barriers (runs are deterministic; try both to shake out assumptions
    about which warp or block runs first).
    ``barrier_timeout``: seconds a warp may wait for its turn before the run is
    reported as deadlocked.
    Returns the function's results (numpy values) for a plain function, ``()``
    for a kernel. Errors are :class:`TileInterpreterError`\\ s naming the op.
    """
    fn = lookup_function(module, func_name)
    # Fragment-level functions (after tile-distribute: frag/llvm ops, !llvm.ptr arguments)
    # run lane by lane in tilec.interp.lanes, with the same options.
    if lanes.is_fragment_level(module, fn):
        return lanes.run_fragment(
            module, fn, args, grid=grid, async_mode=async_mode, barrier_timeout=barrier_timeout,
            check_smem=check_smem, warp_order=warp_order,
        )
    params = fn.function_type.inputs.data
    if len(args) != len(params):
        expected = ", ".join(str(p) for p in params)
        raise TileInterpreterError(fn, f"takes {len(params)} arguments ({expected}), got {len(args)}")
    try:
        bound = tuple(_bind(a, p, f"argument {i} (%{fn.body.block.args[i].name_hint or i})") for i, (a, p) in enumerate(zip(args, params)))
    except OpError as err:
        raise TileInterpreterError(fn, str(err)) from err
    AsyncGroups(async_mode)  # validates the options before anything runs
    WarpScheduler(1, barrier_timeout, warp_order)

    launch = fn.attributes.get(LAUNCH_ATTR)
    if launch is None:
        if grid is not None and tuple(grid if not isinstance(grid, int) else (grid,)) not in ((1,), (1, 1), (1, 1, 1)):
            raise TileInterpreterError(fn, f"has no tile.launch attribute, so it runs once; got grid={grid!r}")
        ctx = ExecContext(async_groups=AsyncGroups(async_mode))
        return tuple(_unbind(r) for r in _execute(module, fn, bound, ctx))

    if not isinstance(launch, LaunchAttr):
        raise TileInterpreterError(fn, f"tile.launch must be a #tile.launch<...>, got {launch}")
    if fn.function_type.outputs.data:
        raise TileInterpreterError(fn, "a kernel (with tile.launch) cannot return values")
    grid = resolve_grid(fn, launch, grid)
    per_warp = _uses_per_warp_ids(module, fn)
    limit = launch.smem.data if check_smem else None
    for blocks in clusters(grid, launch.cluster_dims):
        _run_cluster(module, fn, bound, blocks, grid, launch, limit, per_warp, async_mode, barrier_timeout, warp_order)
    return ()


def run_text(text: str, func_name: str, *args: Any, grid=None, **options: Any) -> tuple:
    """Parse and verify ``text``, then :func:`run` it."""
    return run(parse_module(text), func_name, *args, grid=grid, **options)


def uses_per_warp_execution(module: ModuleOp, func_name: str) -> bool:
    """Whether ``@func_name`` runs once per warp (it uses warp, lane or thread ids)."""
    return _uses_per_warp_ids(module, lookup_function(module, func_name))

