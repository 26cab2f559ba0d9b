"""The lazily compiled assembly formats (tilec/ir/lazy_formats.py) are xDSL's, compiled later.

Every format of tilec's dialects and of the xDSL dialects tilec parses compiles (a malformed
one fails here, since the lazy path no longer fails at import); ops round-trip through the
lazy parse/print; a user's op keeps xDSL's eager check.
"""

from __future__ import annotations

import pytest

import tilec.ir  # noqa: F401  installs the lazy formats
from tilec.dialects import get_all_dialects as tilec_dialects
from tilec.dialects.context import make_context
from tilec.ir import lazy_formats
from xdsl.dialects import arith, builtin, func, llvm, math, scf, vector
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def
from xdsl.irdl.operations import PyRDLOpDefinitionError


def _dialects():
    ours = [factory() for factory in tilec_dialects().values()]
    return [*ours, builtin.Builtin, arith.Arith, func.Func, llvm.LLVM, math.Math, scf.Scf, vector.Vector]


def test_every_format_compiles():
    ops = [op for dialect in _dialects() for op in dialect.operations]
    compiled = lazy_formats.compile_all(ops)
    # the formats really are lazy (else this would count none) and all of them compile
    assert compiled >= 100
    assert all(op.__dict__.get("_lazy_format") is None or op._lazy_format._program is not None for op in ops)


ROUND_TRIP = """\
builtin.module {
  func.func @f(%a : i32, %p : !llvm.ptr) -> i32 {
    %b = arith.addi %a, %a : i32
    %c = arith.constant 3 : i32
    %d = arith.muli %b, %c overflow<nsw> : i32
    %v = llvm.load %p : !llvm.ptr -> i32
    %e = arith.select %x, %d, %v : i32
    func.return %e : i32
  }
}
"""


def test_lazy_ops_round_trip():
    from xdsl.parser import Parser

    text = ROUND_TRIP.replace("%x", "%t").replace("%e = ", "%t = arith.cmpi slt, %d, %v : i32\n    %e = ")
    module = Parser(make_context(), text).parse_module()
    module.verify()
    printed = str(module)
    again = Parser(make_context(), printed).parse_module()
    assert str(again) == printed
    assert "arith.addi %a, %a : i32" in printed and "llvm.load %p : !llvm.ptr -> i32" in printed
    assert type(module.body.block.first_op.body.block.first_op).__dict__.get("_lazy_format") is not None


def test_a_users_op_keeps_the_eager_check():
    with pytest.raises(PyRDLOpDefinitionError, match="assembly format"):

        @irdl_op_definition
        class Broken(IRDLOperation):  # defined in tests.*: not one of LAZY_MODULES
            name = "user.broken"
            x = operand_def()
            assembly_format = "$x $nonsense attr-dict"



def test_a_lazy_format_reports_its_error_on_first_use():
    class Late(IRDLOperation):
        name = "tilec_test.late"
        x = operand_def()
        assembly_format = "$x $nonsense attr-dict"

    Late.__module__ = "tilec.test_only"
    lazy_formats.irdl_op_definition(Late)  # no error yet: the format is not compiled
    with pytest.raises(PyRDLOpDefinitionError, match="assembly format"):
        lazy_formats.compile_all([Late])
