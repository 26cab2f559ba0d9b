"""What a kernel argument promises of its rows (``tile.aligned_rows``), for the passes that plan copies.

The promise is checked at launch (:func:`tilec.runtime.gl_views.check_aligned_rows`);
``tile-distribute`` reads it from the lowered parameters, the passes before it
from the tile-level function's argument attributes, through here.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, SSAValue

from tilec.dialects.abi import ALIGNED_ROWS_ATTR
from tilec.dialects.tile.ops import AllocOp, StageOp, SubviewOp

CP_ASYNC_MIN_BYTES = 4
"""The smallest ``cp.async`` (4, 8 or 16 bytes): rows promised less are copied element by element."""


def leading_coordinates(view: SSAValue) -> tuple[SSAValue, list[SSAValue]]:
    """The kernel argument a view is a ``tile.subview`` of (through any chain of them, or ``view``) and
    the coordinates the chain fixes in its leading dimensions, dimension 0 first (none for the argument
    itself): a tensor map of that argument reaches the view's boxes through them."""
    lead: list[SSAValue] = []
    while isinstance(view.owner, SubviewOp):
        lead[:0] = view.owner.indices
        view = view.owner.source
    return view, lead


def root_view(view: SSAValue) -> SSAValue:
    """The kernel argument a view is a ``tile.subview`` of (through any chain of them), or ``view``."""
    return leading_coordinates(view)[0]


def root_alloc(tile: SSAValue) -> AllocOp | None:
    """The ``tile.alloc`` a shared tile is (or is a pipeline stage of, through ``tile.stage``), or None
    (a block argument, say): the shared counterpart of :func:`root_view`."""
    while isinstance(tile.owner, StageOp):
        tile = tile.owner.buffer
    return tile.owner if isinstance(tile.owner, AllocOp) else None


def aligned_rows_of(view: SSAValue) -> int:
    """``tile.aligned_rows`` of a kernel argument, or of the argument a subview views (its rows are as
    aligned: the promise covers every outer stride); 0 for anything else, or no promise."""
    view = root_view(view)
    owner = view.owner
    if not isinstance(owner, Block) or not isinstance(fn := owner.parent_op(), func.FuncOp) or fn.arg_attrs is None:
        return 0
    attr = fn.arg_attrs.data[view.index].data.get(ALIGNED_ROWS_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 0


def element_rows(view: SSAValue) -> bool:
    """Whether ``view`` promises rows too narrowly aligned for any ``cp.async`` (``0 < A < 4``)."""
    return 0 < aligned_rows_of(view) < CP_ASYNC_MIN_BYTES


__all__ = ["ALIGNED_ROWS_ATTR", "CP_ASYNC_MIN_BYTES", "aligned_rows_of", "element_rows", "leading_coordinates", "root_view"]
