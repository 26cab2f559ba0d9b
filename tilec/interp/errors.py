"""Run-time errors of the interpreter: each names the op (its location and text) and what was expected."""

from __future__ import annotations

from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError


class OpError(Exception):
    """Raised inside an op implementation; the interpreter adds which op it was."""


def _enclosing_function(op: Operation) -> str | None:
    parent = op.parent_op()
    while parent is not None:
        sym = parent.properties.get("sym_name") or parent.attributes.get("sym_name")
        if sym is not None and parent.name == "func.func":
            return sym.data
        parent = parent.parent_op()
    return None


def op_heading(op: Operation) -> str:
    """``'tile.load' at loc(...) in @fn``."""
    parts = [f"'{op.name}'"]
    loc = getattr(op, "location", None)
    if loc is not None and not isinstance(loc, UnknownLoc):
        parts.append(f"at {loc}")
    if op.name == "func.func":
        sym = op.properties.get("sym_name") or op.attributes.get("sym_name")
        if sym is not None:
            parts.append(f"@{sym.data}")
    else:
        fn = _enclosing_function(op)
        if fn is not None:
            parts.append(f"in @{fn}")
    return " ".join(parts)


def op_text(op: Operation) -> str:
    """The op's first printed line (``...`` for its regions)."""
    try:
        text = str(op).strip().splitlines()[0]
        if len(op.regions) and any(r.blocks for r in op.regions):
            text = text.rstrip().removesuffix("{").rstrip() + " {...}"
    except Exception:  # printing must never hide the real error
        text = "<unprintable>"
    return text


def describe_op(op: Operation) -> str:
    """``'tile.load' in @fn: %r = tile.load ...``."""
    return f"{op_heading(op)}: {op_text(op)}"


class TileInterpreterError(InterpretationError):
    """A run-time error of a tile program.

    ``op`` is the operation that failed (None for errors about the call itself),
    ``detail`` what went wrong and what was expected, ``where`` the block and
    warp that was running (None outside a grid).
    """

    def __init__(self, op: Operation | None, detail: str, where: str | None = None):
        self.op = op
        self.detail = detail
        self.where = where
        self.op_text = op_text(op) if op is not None else None
        self.heading = op_heading(op) if op is not None else None
        super().__init__(self._message())

    def _message(self) -> str:
        where = f" [{self.where}]" if self.where else ""
        if self.heading is None:
            return f"{self.detail}{where}"
        return f"{self.heading}{where}: {self.detail}\n    {self.op_text}"

    def at(self, where: str) -> TileInterpreterError:
        """Record the block/warp that was running (the first one given wins)."""
        if self.where is None:
            self.where = where
            self.args = (self._message(),)
        return self

    def __str__(self) -> str:
        return self._message()


class BarrierError(OpError):
    """Warps that deadlock or diverge on ``tile.barrier``."""


class WarpAborted(OpError):
    """A warp stopped because another warp of its block failed (not the root cause)."""
