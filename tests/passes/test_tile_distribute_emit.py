"""tile-distribute's Emitter: constant folding and value numbering within a block."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import i64
from xdsl.ir import Block
from xdsl.rewriter import InsertPoint

from tilec.passes.tile_distribute.emit import Emitter


def _ops(block: Block) -> list[str]:
    return [op.name for op in block.ops]


def test_the_same_op_twice_in_a_block_is_built_once() -> None:
    entry = Block(arg_types=[i64, i64])
    em = Emitter(entry)
    x, y = entry.args
    s = em.add(x, y, i64)
    assert em.add(x, y, i64) is s
    assert em.add(y, x, i64) is not s  # operands in another order: another op
    assert em.cmp("ult", s, 8, i64) is em.cmp("ult", s, 8, i64)
    assert em.cmp("ult", s, 8, i64) is not em.cmp("slt", s, 8, i64)
    assert em.mul(x, 4, i64) is em.mul(x, 4, i64)  # a shift, once
    assert em.add(3, 4, i64) == 7  # folded, no op
    assert _ops(entry).count("arith.addi") == 2 and _ops(entry).count("arith.cmpi") == 2
    assert _ops(entry).count("arith.shli") == 1


def test_values_of_another_block_are_not_reused() -> None:
    """A value built in a nested block does not dominate the code after its region, nor the
    prologue (hoisted values come before the body)."""
    entry = Block(arg_types=[i64, i64])
    em = Emitter(entry)
    x, y = entry.args
    inner = Block()
    with em.at(InsertPoint.at_end(inner)):
        nested = em.add(x, y, i64)
    outer = em.add(x, y, i64)
    assert outer is not nested and nested.owner.parent is inner and outer.owner.parent is entry
    hoisted = em.hoisted("sum", lambda: em.add(x, y, i64))
    assert hoisted is not outer and hoisted.owner.parent is em.prologue
    assert em.hoisted("again", lambda: em.add(x, y, i64)) is hoisted  # found again in the prologue


def test_the_emitter_only_appends() -> None:
    entry = Block(arg_types=[i64])
    em = Emitter(entry)
    first = em.insert(arith.AddiOp(entry.args[0], entry.args[0]))
    with pytest.raises(ValueError, match="appends to blocks"):
        em.at(InsertPoint.before(first))
