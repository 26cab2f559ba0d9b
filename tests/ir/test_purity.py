"""tilec/ir/purity.py: side-effect-free ops, with the sign extension xDSL declares without its trait."""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, i1, i32, i64
from xdsl.ir import Block, Region
from xdsl.traits import is_side_effect_free

from tilec.dialects.tile import ops as t
from tilec.ir.purity import PURE_WITHOUT_TRAIT, is_pure


def test_a_sign_extension_is_pure_where_xdsl_says_unknown():
    x = arith.ConstantOp(IntegerAttr(5, i32))
    ext = arith.ExtSIOp(x.result, i64)
    assert arith.ExtSIOp in PURE_WITHOUT_TRAIT and not is_side_effect_free(ext) and is_pure(ext)
    assert is_pure(arith.ExtUIOp(x.result, i64)) and is_pure(x)


def test_an_op_whose_effects_are_its_body_s_is_pure_when_they_are():
    cond = arith.ConstantOp(IntegerAttr(1, i1))
    x = arith.ConstantOp(IntegerAttr(5, i32))

    def branch(with_barrier: bool) -> scf.IfOp:
        ext = arith.ExtSIOp(x.result, i64)
        ops = [ext, *([t.BarrierOp()] if with_barrier else []), scf.YieldOp(ext.result)]
        other = arith.ConstantOp(IntegerAttr(0, i64))
        return scf.IfOp(cond.result, [i64], Region(Block(ops)), Region(Block([other, scf.YieldOp(other.result)])))

    assert is_pure(branch(False)) and not is_side_effect_free(branch(False))
    assert not is_pure(branch(True))  # a barrier is an effect
