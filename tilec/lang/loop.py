"""``tl.range``: a loop that stays a loop (``scf.for``), built by the rewritten ``for`` statement.

:mod:`tilec.lang.source_rewrite` turns the loop's body into a function of the induction variable
and the carried variables; :meth:`range.__tl_loop__` traces it once into the ``scf.for``'s block.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region

from tilec.lang.branch import NoValue
from tilec.lang.ops import index
from tilec.lang.tracing import current, error
from tilec.lang.values import Expanded, Scalar, Value, wrap


class Unbound:
    """What a carried name holds where its ``tl.range`` loop starts when it has no value there yet: a
    name assigned before the loop on one branch of a ``tl.constexpr`` ``if`` only. If the body assigns
    it before reading it (as Python would allow), it is the loop's own value, not carried, and has no
    value after the loop; if anything reads it, the error names it."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"'{self.name}', which has no value where its tl.range loop starts"


class range:  # noqa: N801 - used as tl.range, like Python's
    """``tl.range(stop)``, ``tl.range(start, stop[, step])``: ints or integer scalars (run-time bounds)."""

    def __init__(self, start: Any, stop: Any = None, step: Any = 1):
        if stop is None:
            start, stop = 0, start
        self.start, self.stop, self.step = start, stop, step

    def __iter__(self):
        raise error("a tl.range loop is read from the kernel's source: write it as 'for i in tl.range(...):' "
                    "directly in the @tl.kernel function (its source must be available)")

    def __tl_unbound__(self, name: str) -> Unbound:
        """The value the rewritten loop passes for carried name ``name`` where it has none yet."""
        return Unbound(name)

    def __tl_loop__(self, init: Sequence[Any], body: Callable[..., tuple], names: Sequence[str],
                    index_name: str = "i") -> tuple:
        """Trace ``body(i, *carried)`` once into an ``scf.for``; returns the carried values after the loop."""
        trace = current()
        if isinstance(self.step, int) and self.step <= 0:
            raise error(f"tl.range's step must be positive, got {self.step}")
        lo, hi, step = (index(v, f"tl.range's {w}") for v, w in
                        ((self.start, "start"), (self.stop, "stop"), (self.step, "step")))
        # a name an if gave no value (tilec.lang.branch) is one the loop starts without
        init = [Unbound(name) if isinstance(v, NoValue) else v for name, v in zip(names, init)]
        traced = [i for i, v in enumerate(init) if isinstance(v, Value)]
        for name, v in zip(names, init):
            if isinstance(v, Expanded):
                raise error(f"'{name}' (an expanded vector v[:, None]) cannot be carried through a loop: carry the vector")
        block = Block(arg_types=[IndexType(), *(init[i].value.type for i in traced)])
        block.args[0].name_hint = index_name
        args: list[Any] = list(init)
        for k, i in enumerate(traced):
            arg = block.args[1 + k]
            arg.name_hint = names[i]
            args[i] = wrap(arg)
        with trace.inside(block):
            results = body(Scalar(block.args[0]), *args)
            yielded = []
            for i, (name, before, after) in enumerate(zip(names, init, results)):
                if i in traced:
                    if not isinstance(after, Value) or after.value.type != before.value.type:
                        got = after.describe() if isinstance(after, Value) else repr(after)
                        raise error(f"'{name}' is a {before.describe()} before the loop and a {got} after its body: "
                                    "a carried value keeps its type")
                    yielded.append(after.value)
                elif isinstance(before, Unbound):
                    continue  # assigned in the body before any read there: this iteration's own value
                elif isinstance(after, Value) or (after is not before and after != before):
                    raise error(f"'{name}' is the Python value {before!r} before the loop and changes in its body: "
                                "give it a traced value before the loop (e.g. tl.zeros or tl.full)")
            trace.emit(scf.YieldOp(*yielded))
        loop = trace.emit(scf.ForOp(lo, hi, step, [init[i].value for i in traced], Region(block)))
        out = list(init)
        for k, i in enumerate(traced):
            loop.results[k].name_hint = names[i]
            out[i] = wrap(loop.results[k])
        return tuple(out)
