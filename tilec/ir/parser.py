"""A Parser that locates every operation in its source, as mlir-opt does.

xDSL's Parser leaves operations without an explicit ``loc(...)`` at ``UnknownLoc``; tilec's
diagnostics (``tile-opt``, ``tilec.compile``, every pass) point at ``file:line:col``, so both
parse through this one class.
"""

from __future__ import annotations

import dataclasses
import re
import struct

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float80Type,
    Float128Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import AttributeInvT
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

class LocatingParser(Parser):
    """A Parser that gives every operation without an explicit ``loc(...)`` a
    ``FileLineColLoc`` of its name in the source (like mlir-opt).

    ``line_offset`` is added to the line numbers (for ``--split-input-file``)."""

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>", line_offset: int = 0):
        _check_string_literals(input if isinstance(input, str) else input.decode("utf-8", "replace"), name,
                               line_offset)
        super().__init__(ctx, input, name)
        self.line_offset = line_offset
        self._op_name_spans: list[Span[str]] = []
        self._first_uses: dict[str, Span[str]] = {}

    def resolve_operand(self, operand: UnresolvedOperand, type: AttributeInvT) -> SSAValue[AttributeInvT]:
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:  # pyright: ignore
            # Empty input (or an empty --split-input-file chunk): an empty
            # module, as in mlir-opt, not xDSL's "Could not parse entire input!".
            return ModuleOp([])
        try:
            module = super().parse_module(allow_implicit_module)
        except ParseError as e:
            raise self._undefined_first(e) from None
        except _CONSTRUCTION_ERRORS + (AssertionError,) as e:
            # outside any op (an attribute alias, the module itself): where the parser stopped
            raise ParseError(self._current_token.span, _construction_message(e)) from None  # pyright: ignore
        self._check_resolved(module)
        self._check_yields(module)
        return module

    def _check_yields(self, module: ModuleOp) -> None:
        """An ``scf.if``/``scf.for`` with results yields them from every region (xDSL 0.74 accepts an
        empty ``then`` block of an ``scf.if`` with results, which then lowers to IR LLVM rejects)."""
        for op in module.walk():
            if not isinstance(op, scf.IfOp | scf.ForOp) or not op.results:
                continue
            wanted = 2 if isinstance(op, scf.IfOp) else 1
            if len(op.regions) != wanted:  # the generic form can leave them out: the verifier's message, located
                raise ParseError(self._op_span(op), f"'{op.name}' expects {wanted} region(s), got {len(op.regions)}")
            regions = [("then", op.true_region), ("else", op.false_region)] if isinstance(op, scf.IfOp) else \
                [("body", op.body)]
            for which, region in regions:
                last = region.blocks.first.last_op if region.blocks else None
                if not isinstance(last, scf.YieldOp) or len(last.arguments) != len(op.results):
                    raise ParseError(self._op_span(op), f"'{op.name}' has {len(op.results)} result(s): its {which} "
                                                        "region must end with an 'scf.yield' of them")

    def _check_resolved(self, module: ModuleOp) -> None:
        """Every operand is a defined value: a use the parser could only resolve to a placeholder (an
        op's operand naming one of the op's own block arguments) is an error at that use."""
        for op in module.walk():
            for operand in op.operands:
                if isinstance(operand, ForwardDeclaredValue):
                    name = operand.name_hint
                    at = (self._first_uses.get(name) if name else None) or self._op_span(op)
                    what = f"value '%{name}'" if name else "a value"
                    raise ParseError(at, f"'{op.name}' uses {what} before it is defined (e.g. its own block argument)")

    def _op_span(self, op: Operation) -> Span[str]:
        loc = op.location
        if isinstance(loc, FileLineColLoc):
            lines = self.lexer.input.content.split("\n")  # pyright: ignore
            start = sum(len(line) + 1 for line in lines[: loc.line.data - 1 - self.line_offset]) + loc.column.data - 1
            return Span(start, start + len(op.name), self.lexer.input)  # pyright: ignore
        return self._current_token.span  # pyright: ignore

    def _undefined_first(self, e: ParseError) -> ParseError:
        try:
            raise e
        except ParseError as e:
            # xDSL reports values used but never defined at the end of the
            # input; point at the first use instead (as mlir-opt does).
            undefined = [n for n in self.forward_ssa_references if n in self._first_uses]
            if not e.msg.startswith("values used but not defined") or not undefined:
                return e
            first = min(undefined, key=lambda n: self._first_uses[n].start)
            others = [f"%{n}" for n in undefined if n != first]
            msg = f"use of undefined value '%{first}'"
            if others:
                msg += f" (also undefined: {', '.join(others)})"
            return ParseError(self._first_uses[first], msg)

    def _parse_op_result_list(self) -> list[tuple[Span[str], int]]:  # pyright: ignore
        results = super()._parse_op_result_list()  # pyright: ignore
        # Now at the operation name: that is where mlir-opt puts an op's location.
        self._op_name_spans.append(self._current_token.span)  # pyright: ignore
        return results  # pyright: ignore

    def parse_operation(self) -> Operation:
        depth = len(self._op_name_spans)
        try:
            op = super().parse_operation()
            span = self._op_name_spans[depth] if len(self._op_name_spans) > depth else None
            _check_printable(op, span or self._current_token.span)  # pyright: ignore
        except ParseError:
            raise
        except _CONSTRUCTION_ERRORS + (AssertionError,) as e:
            # xDSL checks attributes and types as it builds them, and raises without a place:
            # the op being parsed is the place (its name, or where the parser stopped).
            at = self._op_name_spans[depth] if len(self._op_name_spans) > depth else self._current_token.span  # pyright: ignore
            raise ParseError(at, _construction_message(e)) from None
        finally:
            del self._op_name_spans[depth:]
        if span is not None and isinstance(op.location, UnknownLoc):
            loc = dataclasses.replace(span, line_offset=self.line_offset).get_location()
            op.location = FileLineColLoc(StringAttr(loc.file), IntAttr(loc.line), IntAttr(loc.col))
        return op


_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|"')
"""String literals and comments in one linear scan; a lone ``"`` is a string that never closes."""


def _check_string_literals(text: str, name: str, line_offset: int) -> None:
    """A string literal left open before the end of its line is an error at its quote. xDSL's lexer
    finds it too, but its pattern backtracks exponentially over what follows (30 characters take
    20 s): this scan is linear."""
    for m in _STRINGS.finditer(text):
        if m.group() == '"':
            span = Span(m.start(), m.start() + 1, Input(text, name))
            raise ParseError(dataclasses.replace(span, line_offset=line_offset),
                             "string literal is not closed before the end of its line")


_CONSTRUCTION_ERRORS = (VerifyException, ValueError, OverflowError, struct.error, RecursionError, MemoryError,
                        NotImplementedError)
"""What building an attribute, type or op raises on bad input (xDSL's checks, its packing of dense
data with ``struct``, ours): a diagnostic at the op, never an internal error."""

_INT64 = (-(1 << 63), 1 << 63)


def _construction_message(e: BaseException) -> str:
    if isinstance(e, struct.error):
        return f"a value does not fit its element type ({e})"
    if isinstance(e, RecursionError):
        return "nested too deeply to parse"
    if isinstance(e, MemoryError):
        return "too large to build (out of memory)"
    if isinstance(e, AssertionError):
        return "malformed attribute, type or value (xDSL could not read it)"
    if isinstance(e, NotImplementedError):
        return f"not supported by xDSL: {e}" if str(e) else "not supported by xDSL (an f80/f128 or complex value?)"
    return str(e) or type(e).__name__


def _nested_attributes(attrs):
    """``attrs`` and every attribute inside an array or dictionary of them."""
    stack = list(attrs)
    while stack:
        attr = stack.pop()
        yield attr
        if isinstance(attr, ArrayAttr):
            stack.extend(attr.data)
        elif isinstance(attr, DictionaryAttr):
            stack.extend(attr.data.values())


def _check_printable(op: Operation, span: Span[str]) -> None:
    """Refuse what xDSL 0.74 accepts but cannot print or lower (an f80/f128 float attribute) or
    lets through unchecked (an ``index`` integer outside 64 bits), at the op that holds it."""
    for attr in _nested_attributes([*op.attributes.values(), *op.properties.values()]):
        float_type = attr.type if isinstance(attr, FloatAttr) else \
            attr.get_element_type() if isinstance(attr, DenseIntOrFPElementsAttr) else None
        if isinstance(float_type, Float80Type | Float128Type):
            raise ParseError(span, f"'{op.name}': {float_type} float values in attributes are not supported (f16, "
                                   "bf16, f32, f64 are)")
        if isinstance(attr, IntegerAttr) and isinstance(attr.type, IndexType) \
                and not _INT64[0] <= attr.value.data < _INT64[1]:
            raise ParseError(span, f"'{op.name}': integer value {attr.value.data} is out of range for type index "
                                   f"(64-bit: [{_INT64[0]}, {_INT64[1]}))")


def location_text(op: Operation) -> str | None:
    """``file:line:col`` of ``op`` (or of its closest located ancestor), for diagnostics."""
    current: Operation | None = op
    while current is not None:
        loc = current.location
        if isinstance(loc, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        current = current.parent_op()
    return None
