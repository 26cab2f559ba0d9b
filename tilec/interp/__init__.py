"""CPU reference execution of tile IR on numpy data, with xDSL's interpreter.

The semantics of every tile op live in :class:`TileFunctions` (an xDSL
``InterpreterFunctions``); ``arith``/``math`` run on numpy scalars and arrays
(:mod:`tilec.interp.numeric`), ``func``/``scf`` are xDSL's. Passes are checked
for meaning by running a kernel before and after them and comparing::

    from tilec.interp import run_text
    run_text(MLIR, "kernel", a, b, c, grid=(4, 4, 1))

Fragment-level kernels (after ``tile-distribute``) go through the same ``run``:
they execute lane by lane, vectorised over each warp's 32 lanes
(:mod:`tilec.interp.lanes`).
"""

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from tilec.interp.dtypes import numpy_dtype, round_bf16, to_element
from tilec.interp.errors import BarrierError, OpError, TileInterpreterError
from tilec.interp.lanes import LaneState, Ptr, is_fragment_level, make_lane_interpreter, run_fragment
from tilec.interp.launch import parse_module, run, run_text, uses_per_warp_execution
from tilec.interp.memory import GlobalView, SharedTile, copy_owner_mask, copy_thread_map, shared_offsets
from tilec.interp.numeric import NumpyArithFunctions, NumpyMathFunctions
from tilec.interp.tile_functions import (
    ASYNC_MODES,
    WARP_SIZE,
    AsyncGroups,
    BlockBarrier,
    BlockShared,
    ExecContext,
    TileFunctions,
    WarpScheduler,
    make_interpreter,
)
from tilec.dialects.context import make_context

__all__ = [
    "ASYNC_MODES",
    "WARP_SIZE",
    "AsyncGroups",
    "BarrierError",
    "BlockBarrier",
    "BlockShared",
    "ExecContext",
    "GlobalView",
    "LaneState",
    "NumpyArithFunctions",
    "NumpyMathFunctions",
    "OpError",
    "Ptr",
    "SharedTile",
    "TileFunctions",
    "TileInterpreterError",
    "WarpScheduler",
    "copy_owner_mask",
    "copy_thread_map",
    "is_fragment_level",
    "make_lane_interpreter",
    "make_context",
    "make_interpreter",
    "numpy_dtype",
    "parse_module",
    "round_bf16",
    "run",
    "run_fragment",
    "run_text",
    "shared_offsets",
    "to_element",
    "uses_per_warp_execution",
]
