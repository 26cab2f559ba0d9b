"""Declarative assembly formats compiled on first use instead of at import.

xDSL's ``irdl_op_definition`` compiles each op's ``assembly_format`` string
into a ``FormatProgram`` when the class is defined. ``import tilec.api``
defines 221 such ops (xDSL's llvm, arith, vector, scf ... and tilec's own),
while a compile parses and prints only a few of them: the format work was
25 ms of a 270 ms import on the 2-core VM and about 60 ms on the H100 host
(``bench/cold_profile.py``). Here an op of xDSL's dialects or of tilec gets
``parse``/``print`` methods that compile its format the first time either
is called; the class, its ``OpDef`` and every accessor are what xDSL makes.

Ops defined elsewhere (a user's dialect) keep xDSL's eager compile, so a
malformed format of theirs is still reported at class definition. Ours are
all compiled by ``tests/ir/test_lazy_formats.py``, which is where a
malformed one is caught. :func:`install` is idempotent and must run before
the dialect modules are imported (``tilec.ir`` runs it; the entry points
import ``tilec.ir`` first).
"""

from __future__ import annotations

from typing import Any

import xdsl.irdl
import xdsl.irdl.operations as operations
from xdsl.irdl.declarative_assembly_format import FormatProgram
from xdsl.irdl.operations import IRDLOperation, OpDef, PyRDLOpDefinitionError
from xdsl.utils.exceptions import ParseError

LAZY_MODULES = ("xdsl.dialects.", "tilec.")
"""Op classes defined in modules with these prefixes compile their format lazily."""

_eager = operations.irdl_op_definition


class LazyFormat:
    """An op's format text, compiled into xDSL's ``FormatProgram`` on first use."""

    __slots__ = ("text", "op_def", "_program")

    def __init__(self, text: str, op_def: OpDef) -> None:
        self.text = text
        self.op_def = op_def
        self._program: Any = None

    def program(self) -> Any:
        if self._program is None:
            try:
                self._program = FormatProgram.from_str(self.text, self.op_def)
            except ParseError as e:  # what xDSL raises at class definition
                raise PyRDLOpDefinitionError("Error during the parsing of the assembly format: ", e.args) from e
        return self._program


def irdl_op_definition(cls: type[IRDLOperation]) -> type[IRDLOperation]:
    """xDSL's decorator, with the assembly format of our and xDSL's ops compiled lazily."""
    if not cls.__module__.startswith(LAZY_MODULES):
        return _eager(cls)
    op_def = OpDef.from_pyrdl(cls)
    text = op_def.assembly_format
    op_def.assembly_format = None  # accessors without the eager FormatProgram ...
    new_attrs = operations.get_accessors_from_op_def(op_def, getattr(cls, "verify_", None))
    op_def.assembly_format = text  # ... and the definition as xDSL keeps it
    if text is not None:
        fmt = LazyFormat(text, op_def)

        def parse(op_cls: type[IRDLOperation], parser: Any) -> IRDLOperation:
            return fmt.program().parse(parser, op_cls)

        def print_(self: IRDLOperation, printer: Any) -> None:
            return fmt.program().print(printer, self)

        new_attrs["parse"] = classmethod(parse)
        new_attrs["print"] = print_
        new_attrs["_lazy_format"] = fmt
    for name, value in new_attrs.items():
        setattr(cls, name, value)
    return cls


def install() -> None:
    """Make ``xdsl.irdl.irdl_op_definition`` the lazy one (once per process)."""
    operations.irdl_op_definition = irdl_op_definition  # type: ignore[assignment]
    xdsl.irdl.irdl_op_definition = irdl_op_definition  # type: ignore[attr-defined]


def compile_all(op_classes: list[type[IRDLOperation]]) -> int:
    """Compile the lazy formats among ``op_classes`` now (tests); returns how many."""
    count = 0
    for cls in op_classes:
        fmt = cls.__dict__.get("_lazy_format")
        if fmt is not None:
            fmt.program()
            count += 1
    return count
