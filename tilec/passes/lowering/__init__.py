"""Lowering patterns of ``tile-to-llvm``, one module per source dialect family.

- :mod:`~tilec.passes.lowering.types`: the type conversion (``index`` → ``i64``)
  and the in-place retyping of values;
- :mod:`~tilec.passes.lowering.arith`: ``arith``, ``math``, ``vector`` (1-D,
  static positions) and ``cf`` → ``llvm``;
- :mod:`~tilec.passes.lowering.gpu`: the tile dialect's structure ops and every
  ``frag`` op → the NVVM builders of :mod:`tilec.codegen.nvvm`.

Every pattern assumes the values it reads are already retyped (no ``index``
left): the pass retypes the whole module first, so each op is rewritten on
its own, in any order, into llvm ops whose types are final.
"""

from __future__ import annotations

from xdsl.ir import Operation


def walk_ops(op: Operation, *, reverse: bool = False) -> list[Operation]:
    """``list(op.walk(reverse=reverse))``: ``op``, then the ops of its regions, each before the
    ops nested in it (blocks and ops last first with ``reverse``). Built on the blocks' linked
    lists: xDSL's walk chains one generator per nesting level, about five times slower, and the
    pass walks the whole module six times."""
    out: list[Operation] = []
    stack = [op]
    while stack:
        current = stack.pop()
        out.append(current)
        children: list[Operation] = []
        for region in current.regions:
            block = region.first_block
            while block is not None:
                child = block.first_op
                while child is not None:
                    children.append(child)
                    child = child.next_op
                block = block.next_block
        # popped from the end: pushed so that the first to visit comes out first
        stack.extend(children if reverse else reversed(children))
    return out
