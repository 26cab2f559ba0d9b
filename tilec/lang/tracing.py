"""The kernel being built: where ops go, and the user's source line each one comes from.

A ``@tl.kernel`` function runs once per specialisation with traced values in place of its
arguments; every ``tl.*`` call and operator appends ops to the innermost open block (the
function's body, or a loop's). Each op records the line of the user's code that made it (the
first frame outside this package), so a verifier or pass error on the kernel reads
``file.py:LINE:COL: error: ...``.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, FloatAttr, IndexType, IntAttr, IntegerAttr, IntegerType, StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tilec.dialects.tile.ops import DimOp
from tilec.dialects.tile.types import rounded_float
from tilec.lang.dtypes import DType, as_dtype, dtype_of

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


class LangError(Exception):
    """A kernel that cannot be built: the message starts with ``file:line:col: error:`` of the user's code."""


def user_frame() -> FrameType | None:
    """The innermost frame outside tilec.lang: the user's line that called into the language."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
    return frame


def frame_position(frame: FrameType | None) -> tuple[str, int, int]:
    """(file, line, column counted from 1) of the instruction ``frame`` is at."""
    if frame is None:
        return "<unknown>", 0, 0
    code = frame.f_code
    line, col = frame.f_lineno, 0
    positions = list(code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions):
        start_line, _, start_col, _ = positions[index]
        if start_line is not None:
            line, col = start_line, start_col or 0
    return code.co_filename, line, col + 1


class Unusable:
    """A placeholder the language hands back where there is no value (a name a branch left without
    one, an atomic's result): any use is an error at the user's line, from the subclass's ``_used``."""

    def _used(self, *_: Any) -> Any:
        raise NotImplementedError

    def _use(self, *args: Any) -> Any:
        return self._used(*args)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _use
    __neg__ = __getitem__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __float__ = __int__ = _use

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._used()


def located_type_error(e: TypeError | AttributeError) -> LangError | None:
    """A TypeError or AttributeError raised in the user's own line (a call of a ``tl`` function with a
    keyword it does not take, a missing argument: Python raises those before entering the function; an
    attribute a value does not have, such as Triton's ``x_ptr.type.element_ty``) as a LangError at that
    line; None when it came from inside tilec (then it is not the user's call's fault)."""
    tb, last = e.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    if last is None or last.tb_frame.f_code.co_filename.startswith(_PACKAGE):
        return None
    code, line, col = last.tb_frame.f_code, last.tb_lineno, 0
    positions = list(code.co_positions())
    if 0 <= last.tb_lasti // 2 < len(positions) and positions[last.tb_lasti // 2][0] is not None:
        line, col = positions[last.tb_lasti // 2][0], positions[last.tb_lasti // 2][2] or 0
    hint = " (an array's element type is x.dtype, or Triton's x.dtype.element_ty)" \
        if isinstance(e, AttributeError) and "element_ty" in str(e) else ""
    return LangError(f"{code.co_filename}:{line}:{col + 1}: error: {e}{hint}")


def error(message: str) -> LangError:
    """A :class:`LangError` located at the user's current line."""
    file, line, col = frame_position(user_frame())
    return LangError(f"{file}:{line}:{col}: error: {message}")


def element_type(value: object) -> DType:
    """:func:`~tilec.lang.dtypes.as_dtype` of a kernel's argument, its TypeError an error at the user's line."""
    try:
        return as_dtype(value)
    except TypeError as e:
        raise error(str(e)) from None


def _fitting_int(value: int, ty: Attribute, unsigned: bool = False) -> int:
    """``value`` if ``ty`` holds it as a signed number (i1: 0 or 1; index as 64-bit), or, ``unsigned``, as
    an unsigned one, 0 to 2^bits - 1 (then its bits as the signed number the signless IR holds); else a
    :class:`LangError` at the user's line naming the number and the type: Python ints do not wrap silently."""
    bits = ty.width.data if isinstance(ty, IntegerType) else 64
    low, high = (0, 1) if bits == 1 else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if unsigned and bits > 1:  # a negative number meeting unsigned values is an error, as in Triton
        low, high = 0, (1 << bits) - 1
    if low <= value <= high:
        return value - (1 << bits) if unsigned and bits > 1 and value >= 1 << (bits - 1) else value
    name = dtype_of(ty).unsigned if unsigned and bits > 1 else dtype_of(ty)
    if unsigned and value < 0:
        raise error(f"the integer {value} does not fit {name!r} (the type of the values it meets): a negative number "
                    "and unsigned values do not meet (Triton refuses it too); convert them with .to(...) to a signed type")
    raise error(f"the integer {value} does not fit {name!r} (the type of the values it meets): "
                f"use a smaller number, or convert the values with .to(...) to a wider type")


def _as_float(value: int | float | bool) -> float:
    """``float(value)``, an int past the double range (``10**400``) as ±inf (what rounding gives)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


class Trace:
    """One kernel under construction: its entry block and the stack of blocks being filled."""

    def __init__(self, entry: Block, num_threads: int = 128):
        self.entry = entry
        self.num_threads = num_threads
        self.blocks: list[Block] = [entry]
        self.isolated: set[Block] = set()  # bodies of tile.map: their constants stay inside
        self._constants: dict[tuple, SSAValue] = {}  # constants and extents, made once
        self._last_constant: Operation | None = None
        self.nonnegative: set[SSAValue] = set()  # loop counters known >= 0 (their loop is not built yet)
        self.unsigned: set[SSAValue] = set()  # integers the language reads as unsigned (tilec.lang.unsigned)
        self.booleans: set[SSAValue] = set()  # bool arrays (a byte an element, read as masks)

    def emit(self, op: Operation, name: str | None = None) -> Operation:
        """Append ``op`` to the innermost block, located at the user's line."""
        op.location = self._location()
        self.blocks[-1].add_op(op)
        if name and op.results:
            op.results[0].name_hint = name
        return op

    @staticmethod
    def _location() -> FileLineColLoc:
        file, line, col = frame_position(user_frame())
        return FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(col))

    def value(self, op: Operation, name: str | None = None) -> SSAValue:
        return self.emit(op, name).results[0]

    def constant(self, value: int | float | bool, ty: Attribute, unsigned: bool = False) -> SSAValue:
        """An ``arith.constant`` of ``ty`` (index, integer or float), made once per kernel at the top
        of its body (a ``tile.map`` body gets its own); ``unsigned``: an integer up to 2^bits - 1 fits."""
        if isinstance(ty, IndexType) or isinstance(ty, IntegerType):
            attr = IntegerAttr(_fitting_int(int(value), ty, unsigned), ty)
        else:
            attr = FloatAttr(rounded_float(_as_float(value), ty), ty)
        if self.blocks[-1] in self.isolated:
            return self.value(arith.ConstantOp(attr, ty))
        key = (ty, repr(attr))
        known = self._constants.get(key)
        if known is None:
            known = self._constants[key] = self._hoist(arith.ConstantOp(attr, ty))
        return known

    def dim(self, view: SSAValue, axis: int, name: str) -> SSAValue:
        """The run-time extent ``axis`` of a view: one ``tile.dim`` per kernel argument and axis, after the
        constants; of a subview, where it is asked for."""
        if view.owner is not self.entry:  # a subview: its extent is read where it is asked for
            op = DimOp(view, axis)
            return self.value(op, name)
        key = ("dim", view, axis)
        known = self._constants.get(key)  # type: ignore[arg-type]
        if known is None:
            op = DimOp(view, axis)
            op.results[0].name_hint = name
            known = self._constants[key] = self._hoist(op)  # type: ignore[index]
        return known

    def _hoist(self, op: Operation) -> SSAValue:
        """Put ``op`` (whose operands are the kernel's arguments) with the constants at the top of the body."""
        op.location = self._location()
        if self._last_constant is None and self.entry.first_op is not None:
            self.entry.insert_op_before(op, self.entry.first_op)
        elif self._last_constant is None:
            self.entry.add_op(op)
        else:
            self.entry.insert_op_after(op, self._last_constant)
        self._last_constant = op
        return op.results[0]

    @contextmanager
    def inside(self, block: Block, isolated: bool = False) -> Iterator[Block]:
        """Ops emitted within go into ``block`` (a loop body; ``isolated``: a ``tile.map`` body)."""
        if isolated:
            self.isolated.add(block)
        self.blocks.append(block)
        try:
            yield block
        finally:
            self.blocks.pop()


_STATE = threading.local()


def current() -> Trace:
    """The trace of the kernel being built in this thread; a LangError outside a ``@tl.kernel``."""
    trace = getattr(_STATE, "trace", None)
    if trace is None:
        raise error("tilec.lang operations build a kernel: call them inside a @tl.kernel function")
    return trace


def is_tracing() -> bool:
    """Whether a kernel is being traced in this thread."""
    return getattr(_STATE, "trace", None) is not None


@contextmanager
def tracing(trace: Trace) -> Iterator[Trace]:
    """Make ``trace`` current for this thread within the block (nesting is an error)."""
    if getattr(_STATE, "trace", None) is not None:
        raise error("a @tl.kernel function cannot build another kernel while it is being built")
    _STATE.trace = trace
    try:
        yield trace
    finally:
        _STATE.trace = None
