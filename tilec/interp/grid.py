"""What the tile interpreter (:mod:`tilec.interp.launch`) and the lane interpreter
(:mod:`tilec.interp.lanes`) share: finding the function to run, walking the functions
it calls, checking the grid of a launch, grouping its blocks into thread-block
clusters, and running the warps of one cluster (of one block without clusters) together.

Both interpreters import this module; neither imports the other for it (``launch``
dispatches to ``lanes``, never the other way round).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import numpy as np
from xdsl.dialects import func as func_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.traits import SymbolTable

from tilec.dialects.tile.attributes import DYNAMIC, LaunchAttr
from tilec.interp.errors import OpError, TileInterpreterError, WarpAborted
from tilec.interp.tile_functions import BlockBarrier, WarpScheduler

DEFAULT_BARRIER_TIMEOUT = 30.0


def lookup_function(module: ModuleOp, name: str) -> func_dialect.FuncOp:
    """``@name`` of ``module``, or an error that lists the functions it has."""
    op = SymbolTable.lookup_symbol(module, name)
    if not isinstance(op, func_dialect.FuncOp):
        names = [f"@{f.sym_name.data}" for f in module.walk() if isinstance(f, func_dialect.FuncOp)]
        raise TileInterpreterError(None, f"no function @{name} in the module (it has {', '.join(names) or 'none'})")
    return op


def any_reachable_op(module: ModuleOp, fn: func_dialect.FuncOp, predicate) -> bool:
    """Whether ``fn`` or a function it calls (transitively) has an op satisfying ``predicate``."""
    seen: set[str] = set()
    todo = [fn]
    while todo:
        f = todo.pop()
        if f.sym_name.data in seen:
            continue
        seen.add(f.sym_name.data)
        for op in f.walk():
            if predicate(op):
                return True
            if isinstance(op, func_dialect.CallOp):
                callee = SymbolTable.lookup_symbol(module, op.callee)
                if isinstance(callee, func_dialect.FuncOp):
                    todo.append(callee)
    return False


def resolve_grid(fn: func_dialect.FuncOp, launch: LaunchAttr, grid) -> tuple[int, int, int]:
    """The grid a kernel runs over: ``grid`` (1 to 3 extents) checked against the launch's static extents."""
    static = launch.grid_dims
    if grid is None:
        if DYNAMIC in static:
            raise TileInterpreterError(
                fn, f"the kernel's grid {_dims(static)} has dynamic extents: pass grid=(gx, gy, gz) to run it"
            )
        return static
    g = (grid,) if isinstance(grid, int | np.integer) else tuple(grid)
    if not 1 <= len(g) <= 3 or not all(isinstance(x, int | np.integer) and x > 0 for x in g):
        raise TileInterpreterError(fn, f"grid must be 1 to 3 positive integers, got {grid!r}")
    g = tuple(int(x) for x in g) + (1,) * (3 - len(g))
    for axis, (s, d) in enumerate(zip(static, g)):
        if s != DYNAMIC and s != d:
            raise TileInterpreterError(
                fn, f"grid {list(g)} disagrees with the kernel's static grid {_dims(static)} on axis {'xyz'[axis]}"
            )
    for axis, (d, c) in enumerate(zip(g, launch.cluster_dims)):
        if d % c:
            raise TileInterpreterError(
                fn, f"grid {list(g)} is not whole thread-block clusters of {list(launch.cluster_dims)}: its extent {d} "
                f"on axis {'xyz'[axis]} is not a multiple of {c}"
            )
    return g


def clusters(grid: Sequence[int], cluster_dims: Sequence[int]) -> Iterator[list[tuple[int, int, int]]]:
    """The blocks of each thread-block cluster of ``grid`` by rank (x fastest), cluster after cluster
    (x fastest, then y, then z); without clusters (``(1, 1, 1)``) each block alone, in grid order."""
    (gx, gy, gz), (cx, cy, cz) = grid, cluster_dims
    for z in range(0, gz, cz):
        for y in range(0, gy, cy):
            for x in range(0, gx, cx):
                yield [(x + i, y + j, z + k) for k in range(cz) for j in range(cy) for i in range(cx)]


def describe_block(block_id: Sequence[int]) -> str:
    return f"block ({', '.join(map(str, block_id))})"


def _dims(dims) -> str:
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in dims) + "]"


def run_cluster_warps(blocks: Sequence[tuple[int, int, int]], warps: int, timeout: float, order: str, fn,
                      run_warp) -> None:
    """Run ``run_warp(rank, warp, barrier)`` for every warp of every block of one thread-block cluster
    (``blocks``, by rank; one block without clusters), each in its own thread.

    The warps share one :class:`~tilec.interp.tile_functions.WarpScheduler`
    (so ``tile.barrier`` really synchronises the warps of a block, and
    ``tile.cluster_barrier`` those of the cluster); ``barrier`` is the warp's
    block's view of it. A failing warp aborts the others, and the error
    reported is the root cause, not a warp that was stopped because of it.
    """
    names = [describe_block(b) for b in blocks]
    scheduler = WarpScheduler(warps, timeout, order, names)
    views = [BlockBarrier(scheduler, rank) for rank in range(len(blocks))]
    slots = len(blocks) * warps
    errors: list[BaseException | None] = [None] * slots

    def body(slot: int) -> None:
        rank, warp = divmod(slot, warps)
        barrier = views[rank]
        try:
            try:
                barrier.start(warp)
            except OpError as err:
                where = f"warp {warp}" if len(blocks) == 1 else f"{names[rank]}, warp {warp}"
                raise TileInterpreterError(fn, str(err), where) from err
            run_warp(rank, warp, barrier)
        except BaseException as err:  # noqa: BLE001 - handed to the caller below
            errors[slot] = err
            barrier.abort(warp)
        else:
            barrier.finish(warp)

    if slots == 1:
        body(0)
    else:
        threads = [threading.Thread(target=body, args=(s,), name=f"tilec-warp-{s}", daemon=True) for s in range(slots)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    failed = [e for e in errors if e is not None]
    if failed:
        primary = [e for e in failed if not isinstance(e, WarpAborted) and not isinstance(e.__cause__, WarpAborted)]
        raise (primary or failed)[0]


__all__ = [
    "DEFAULT_BARRIER_TIMEOUT",
    "any_reachable_op",
    "clusters",
    "describe_block",
    "lookup_function",
    "resolve_grid",
    "run_cluster_warps",
]
