"""Which ops have no side effects: xDSL's ``Pure`` trait, and the ops our pinned xDSL declares without it.

Passes that move or duplicate index math (tile-stage's copies at a loop body's start, tile-pipeline's
copies computed iterations ahead, tile-tiling) ask :func:`is_pure` rather than xDSL's
``is_side_effect_free``, so a sign extension (``offs.to(tl.int64)``, an int64 tile of pointers) moves as
the zero extension and truncation beside it do.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Operation
from xdsl.traits import MemoryEffect, RecursiveMemoryEffect, is_side_effect_free

PURE_WITHOUT_TRAIT: tuple[type[Operation], ...] = (arith.ExtSIOp,)
"""Ops as pure as their neighbours that xDSL declares without ``Pure`` (``arith.extui`` and ``arith.trunci``
have it; ``arith.extsi`` does not): a gap to report upstream."""


def is_pure(op: Operation) -> bool:
    """Whether ``op`` has no side effects (its nested ops' included, as xDSL's check reads them)."""
    if isinstance(op, PURE_WITHOUT_TRAIT) or is_side_effect_free(op):
        return True
    traits = op.get_traits_of_type(MemoryEffect)  # an op whose only effects are its body's (scf.if)
    if not traits or not all(isinstance(t, RecursiveMemoryEffect) for t in traits):
        return False
    return all(is_pure(inner) for region in op.regions for block in region.blocks for inner in block.ops)
