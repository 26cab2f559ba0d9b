"""``tl.range``: a loop that stays a loop (``scf.for``), built by the rewritten ``for`` statement;
and a ``while`` on a run-time condition (``scf.while``).

:mod:`tilec.lang.source_rewrite` turns the loop's body into a function of the induction variable
and the carried variables; :meth:`range.__tl_loop__` traces it once into the ``scf.for``'s block.
A ``while`` becomes a test and a body, functions of the carried variables: :func:`while_loop`
traces them into an ``scf.while`` when the test is a traced scalar (:func:`python_test`), and
the rewritten code runs Python's loop when it is a Python value.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, RegisterVectorType
from tilec.ir.walk import defined_in
from tilec.lang import dtypes
from tilec.lang.block_ptr import any_block_ptr, carried_as_offsets, flatten_carried, offset_positions
from tilec.lang.branch import NUMBERS, NoValue, number_constant, number_type
from tilec.lang.ops import index
from tilec.lang.tracing import LangError, current, error
from tilec.lang.unsigned import keep_reading
from tilec.lang.values import (Expanded, OrientationConflict, Pointer, Scalar, Value, Vector, View, nonnegative, reoriented,
                               reoriented_or_none, where, wrap)


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
    """``tl.range(stop)``, ``tl.range(start, stop[, step])``: ints or integer scalars (run-time bounds).

    Triton's per-loop hints (``num_stages``, ``loop_unroll_factor``, ``warp_specialize``, ``flatten``,
    ``disallow_acc_multi_buffer``) are taken and change nothing: tilec pipelines a kernel's loops with
    the kernel's ``num_stages`` (and ``producer``), chosen at compile time."""

    HINTS = ("num_stages", "loop_unroll_factor", "warp_specialize", "flatten", "disallow_acc_multi_buffer")

    def __init__(self, start: Any, stop: Any = None, step: Any = 1, **hints: Any):
        unknown = sorted(set(hints) - set(self.HINTS))
        if unknown:
            raise error(f"tl.range takes start, stop, step and Triton's hints {', '.join(self.HINTS)}; got "
                        f"{', '.join(unknown)}")
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
                    index_name: str = "i", offsets: frozenset[int] = frozenset()) -> tuple:
        """Trace ``body(i, *carried)`` into an ``scf.for`` (twice when it changes a Python number, which is then
        carried as a scalar); returns the carried values after the loop. ``offsets``: the positions of
        ``init`` that are pointers' offsets (which may widen to i64: :data:`WIDENED`)."""
        init = _arrays_as_pointers(init)
        if any_block_ptr(init):  # carried as their offsets
            flat, flat_names, unpack, pack = flatten_carried(init, names)
            out = self.__tl_loop__(flat, lambda i, *c: tuple(pack(body(i, *unpack(c)))), flat_names, index_name,
                                   offset_positions(init))
            return tuple(unpack(out))
        trace = current()
        if any(_is_i64(v) for v in (self.start, self.stop, self.step)):  # Triton's counter has its bounds' type
            body = (lambda narrow: lambda i, *carried: narrow(i.to(dtypes.int64), *carried))(body)
        if isinstance(self.step, int) and self.step == 0:
            raise error("tl.range's step must not be 0")
        if isinstance(self.step, int) and self.step < 0:  # counting down: a loop over the count, i mirrored
            return self._down(init, body, names, index_name)
        lo, hi, step = (index(v, f"tl.range's {w}") for v, w in
                        ((self.start, "start"), (self.stop, "stop"), (self.step, "step")))
        if _constant(step) is None and not nonnegative(step):  # a run-time step of either sign
            return self._either_way(init, body, names, index_name)
        # a name an if gave no value (tilec.lang.branch) is one the loop starts without
        init = [Unbound(name) if isinstance(v, NoValue) else v for name, v in zip(names, init)]
        for name, v in zip(names, init):
            if isinstance(v, Expanded):
                raise error(f"'{name}' (an expanded vector v[:, None]) cannot be carried through a loop: carry the vector")
        counting_up = _constant(step) is not None and _constant(step) > 0 and nonnegative(lo)
        block, traced, yielded, changed = self._trace(init, body, names, index_name, counting_up, offsets)
        while changed:  # what the body needs of the carried values differs from what it got: traced again
            # Python numbers the body changes: carried as scalars from the start (each round makes at least
            # one more name a scalar, so this ends; b = a; a = a + 1 takes two). A vector the body uses in
            # the other orientation: made again in it before the loop, if it was made from nothing there
            block.drop_all_references()  # the discarded trace's ops no longer use the kernel's values
            for i, ty in changed.items():
                if isinstance(ty, OrientationConflict):
                    init[i] = _reoriented_init(init[i], ty)
                    continue
                if ty is WIDENED:
                    init[i] = init[i].to(dtypes.int64)
                    continue
                value = number_constant(init[i], ty)
                if value is None:
                    raise error(f"'{names[i]}' is the Python value {init[i]!r} before the loop and changes in its "
                                "body: give it a traced value before the loop (e.g. tl.zeros or tl.full)")
                init[i] = wrap(value)
            block, traced, yielded, changed = self._trace(init, body, names, index_name, counting_up, offsets)
        counted = _counted(block, traced, yielded, init, lo, step)
        with trace.inside(block):
            trace.emit(scf.YieldOp(*yielded))
        loop = trace.emit(scf.ForOp(lo, hi, step, [init[i].value for i in traced], Region(block)))
        out = list(init)
        for k, i in enumerate(traced):
            loop.results[k].name_hint = names[i]
            out[i] = wrap(loop.results[k])
        for i, increment in counted.items():  # after the loop: the start plus the trip count's increments
            out[i] = init[i] if increment is None else \
                init[i] + _trip_count(lo, hi, step, increment.type) * Scalar(increment)
        return tuple(out)

    def _down(self, init: Sequence[Any], body: Callable[..., tuple], names: Sequence[str], index_name: str) -> tuple:
        """A loop with a negative constant step, as Triton runs it: ``i = start, start - s, ...`` while
        ``i > stop`` is an ``scf.for`` over ``k < ceil((start - stop) / s)`` (none when that is not
        positive) with ``i = start - k * s`` computed at the body's start."""
        s = -self.step
        start = Scalar(index(self.start, "tl.range's start"))
        stop = Scalar(index(self.stop, "tl.range's stop"))
        count = Scalar(current().value(arith.DivSIOp((start - stop + (s - 1)).value, index(s, "tl.range's step"))))
        return range(0, count, 1).__tl_loop__(init, lambda k, *carried: body(start - k * s, *carried), names,
                                              f"{index_name}_count")

    def _either_way(self, init: Sequence[Any], body: Callable[..., tuple], names: Sequence[str],
                    index_name: str) -> tuple:
        """A loop whose step is a run-time value that may be negative (an ``scf.for``'s must be positive):
        Triton's ``i = start, start + step, ...`` while ``i`` is short of ``stop`` (below it counting up,
        above it counting down) is an ``scf.for`` over its trip count, ``ceil((stop - start) / step)`` (none
        when that is not positive), with ``i = start + k * step`` computed at the body's start. A zero step
        runs no iteration (Python raises; Triton's loop would not end)."""
        start = Scalar(index(self.start, "tl.range's start"))
        stop = Scalar(index(self.stop, "tl.range's stop"))
        step = Scalar(index(self.step, "tl.range's step"))
        up = (stop - start + step - 1) // where(step > 0, step, 1)  # no division by zero (UB in LLVM)
        down = (start - stop - step - 1) // where(step < 0, 0 - step, 1)
        count = where(step > 0, up, where(step < 0, down, 0))
        return range(0, count, 1).__tl_loop__(init, lambda k, *carried: body(start + k * step, *carried), names,
                                              f"{index_name}_count")

    @staticmethod
    def _trace(init: list, body: Callable[..., tuple], names: Sequence[str], index_name: str, counting_up: bool = False,
               offsets: frozenset[int] = frozenset()) -> tuple[Block, list[int], list, dict[int, Any]]:
        """Trace ``body`` into a new block: (block, the carried names' indices, the values they yield, and
        the Python numbers the body changes with the scalar type each is carried as). A name is carried
        when it holds a traced value before the loop; a Python number that the body changes (to another
        number or a traced scalar) is carried too, as Triton does, once traced again as that type: f32 for
        a float, index for an int, or the traced scalar's type."""
        trace = current()
        traced = [i for i, v in enumerate(init) if isinstance(v, Value)]
        block = Block(arg_types=[IndexType(), *(init[i].value.type for i in traced)])
        block.args[0].name_hint = index_name
        if counting_up:  # from a non-negative start by a positive step: nonnegative() knows it
            trace.nonnegative.add(block.args[0])
        args: list[Any] = list(init)
        for k, i in enumerate(traced):
            arg = block.args[1 + k]
            arg.name_hint = names[i]
            args[i] = wrap(keep_reading(arg, init[i].value))
        yielded, changed = [], {}
        with trace.inside(block):
            try:
                results = body(Scalar(block.args[0]), *args)
            except OrientationConflict as e:
                if e.value not in block.args[1:]:
                    raise  # an outer loop's carried vector, or none
                return block, traced, [], {traced[block.args.index(e.value) - 1]: e}
            except AttributeError as e:
                numbers = _numbers_used_as_values(e, init)
                if not numbers:
                    raise
                return block, traced, [], numbers
        for i, (name, before, after) in enumerate(zip(names, init, results)):
            if i in traced:
                if _other_orientation(before, after):  # acc = tl.zeros((n,)); ...: acc = tl.sum(t, axis=1)
                    changed[i] = OrientationConflict(error(f"'{name}' is a {before.describe()} before the loop "
                                                           f"and a {after.describe()} after its body: a carried "
                                                           "value keeps its type").args[0],
                                                     before.value, after.orientation)
                    continue
            kept, ty = _carried(name, before, after, "loop", i in offsets)
            if kept is not None:
                yielded.append(kept)
            elif ty is not None:
                changed[i] = ty
        return block, traced, yielded, changed


def _counted(block: Block, traced: list[int], yielded: list[SSAValue], init: list[Any], lo: SSAValue,
             step: SSAValue) -> dict[int, SSAValue | None]:
    """Carried integer scalars that the body passes on unchanged or, with a constant positive ``step``,
    advances by a loop-invariant amount (a block pointer's offsets: ``tl.advance(p, (0, BK))``) become
    functions of the loop counter:
    ``start + (i - lo) / step * increment`` at the body's start, so a load at them is the affine window
    tile-stage stages and pipelines as it does ``tl.load(a, (r, k))``. Removes them from ``traced`` and
    ``yielded`` (and the block's arguments); returns each one's increment (None: unchanged)."""
    step_value = _constant(step)
    counted: dict[int, SSAValue | None] = {}
    for k in builtins.range(len(traced) - 1, -1, -1):  # (range is tl.range here)
        arg, after = block.args[1 + k], yielded[k]
        tile = isinstance(arg.type, RegisterType | RegisterVectorType)
        element = arg.type.element_type if tile else arg.type
        if not isinstance(element, IndexType) and not (isinstance(element, IntegerType) and element.width.data >= 32):
            continue  # an index or an i32 / i64 (offsets computed from kernel arguments; a tile of pointers')
        found = _tile_increment(arg, after, block) if tile else _increment(arg, after, block)
        if after is not arg and (found is None or step_value is None or step_value <= 0):
            continue
        increment = None
        if found is not None:  # BLOCK_K * stride_ak written in the body: computed before the loop
            increment = _hoisted(found[0], block)
            if found[1]:  # ptrs -= c: an increment of -c
                increment = current().value(arith.SubiOp(current().constant(0, increment.type), increment))
        i = traced[k]
        if after is arg:
            now = init[i].value
        else:
            start = init[i].value if not tile else current().constant(0, element)
            ops = _counter_value(block.args[0], lo, step_value, increment, start)
            if tile:  # the start tile plus the scalar: a map, whose steps index_steps reads through
                ops.append(_plus_scalar(init[i].value, ops[-1].results[0]))
            first = block.first_op
            for op in ops:
                block.insert_op_before(op, first) if first is not None else block.add_op(op)
            now = ops[-1].results[0]
        arg.replace_all_uses_with(now)
        yielded[:] = [now if y is arg else y for y in yielded]  # another name's next value may be this one
        block.erase_arg(arg)
        del traced[k], yielded[k]
        if after is not arg and not after.uses and after not in yielded:  # b = a; a = a + c: b's next is a's
            after.owner.detach()
            after.owner.erase()
        counted[i] = None if after is arg else increment
    return counted


def _increment(arg: SSAValue, after: SSAValue, block: Block) -> tuple[SSAValue, bool] | None:
    """``(c, False)`` where ``after`` is ``arg + c`` (or ``c + arg``), ``(c, True)`` where it is ``arg - c``,
    with ``c`` computed from values outside ``block`` (:func:`_invariant_ops`)."""
    op = after.owner if isinstance(after, OpResult) else None
    if not isinstance(op, arith.AddiOp | arith.SubiOp) or op.parent_block() is not block:
        return None
    other = _other_term(op, arg)
    if other is None:
        return None
    return (other, isinstance(op, arith.SubiOp)) if _invariant_ops(other, block) is not None else None


def _other_term(op: arith.AddiOp | arith.SubiOp, x: SSAValue) -> SSAValue | None:
    """``c`` of ``x + c``, ``c + x`` or ``x - c`` (``c`` not ``x``), else None."""
    if isinstance(op, arith.SubiOp):
        other = op.rhs if op.lhs is x else None
    else:
        other = op.rhs if op.lhs is x else op.lhs if op.rhs is x else None
    return None if other is None or other is x else other


def _tile_increment(arg: SSAValue, after: SSAValue, block: Block) -> tuple[SSAValue, bool] | None:
    """:func:`_increment` of an integer tile: ``after`` is ``arg + c`` or ``arg - c`` (a ``tile.map`` adding a
    scalar ``c`` from outside ``block``, or a constant, to each element: Triton's ``ptrs += BLOCK * stride``
    on a tile of pointers); a constant made in the map's body is the kernel's constant of that value."""
    op = after.owner if isinstance(after, OpResult) else None
    if not isinstance(op, t.MapOp) or op.parent_block() is not block or list(op.inputs) != [arg]:
        return None
    body = op.body.block
    if len(body.ops) < 2:
        return None
    *consts, add, end = list(body.ops)
    if not isinstance(add, arith.AddiOp | arith.SubiOp) or end.operands[0] is not add.result or \
            not all(isinstance(c, arith.ConstantOp) for c in consts):
        return None
    (elem,) = body.args
    other = _other_term(add, elem)
    if other is None:
        return None
    negated = isinstance(add, arith.SubiOp)
    if isinstance(other.owner, arith.ConstantOp) and other.owner.parent_block() is body:
        return current().constant(other.owner.value.value.data, other.type), negated  # at the kernel's top
    return (other, negated) if _invariant_ops(other, block) is not None else None


_INVARIANT_ARITH = (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.IndexCastOp, arith.ExtSIOp,
                    arith.ExtUIOp, arith.TruncIOp)
"""Integer ops an increment computed in the body may be made of (``BLOCK_K * stride_ak``): pure, defined
for every operand (no shift past the width, no division), so they can run before the loop even when it
runs no iteration."""


def _invariant_ops(v: SSAValue, block: Block) -> list[Operation] | None:
    """The ops of ``block`` (in its order) that compute ``v`` from values defined outside it, each one of
    :data:`_INVARIANT_ARITH`; None if ``v`` needs anything else (a carried value, the counter, a load)."""
    needed: set[Operation] = set()
    work = [v]
    while work:
        x = work.pop()
        if not defined_in(x, block):
            continue
        op = x.owner
        if not isinstance(op, _INVARIANT_ARITH) or op.parent_block() is not block:
            return None
        if op not in needed:
            needed.add(op)
            work.extend(op.operands)
    return [op for op in block.ops if op in needed]


def _hoisted(v: SSAValue, block: Block) -> SSAValue:
    """``v`` (an increment :func:`_invariant_ops` accepts) computed before the loop: its ops in ``block``
    move to the trace's current block, where the loop is about to be emitted."""
    for op in _invariant_ops(v, block) or []:
        op.detach()
        current().emit(op)
    return v


def _plus_scalar(tile: SSAValue, scalar: SSAValue) -> t.MapOp:
    """``tile + scalar`` elementwise (a ``tile.map`` whose body adds the scalar from outside)."""
    body = Block(arg_types=[tile.type.element_type])
    add = arith.AddiOp(body.args[0], scalar)
    body.add_ops([add, t.YieldOp(add.result)])
    return t.MapOp([tile], tile.type, Region(body))


def _constant(v: SSAValue) -> int | None:
    """The value of an integer constant, through casts (a step of 1 a specialised argument gives as
    ``index_cast`` of its constant)."""
    op = v.owner if isinstance(v, OpResult) else None
    while isinstance(op, arith.ExtSIOp) or isinstance(op, arith.IndexCastOp) and isinstance(op.result.type, IndexType):
        if not isinstance(op.input, OpResult):  # (widening casts only: a narrowing one changes the value)
            return None
        op = op.input.owner
    return op.value.value.data if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr) else None


def _counter_value(iv: SSAValue, lo: SSAValue, step: int, increment: SSAValue, start: SSAValue) -> list[Operation]:
    """``start + (iv - lo) / step * increment`` (the division exact: ``iv`` is ``lo`` plus steps), in the
    carried value's type (an index, or the i32 / i64 an offset computed from kernel arguments has)."""
    ty = start.type
    ops: list[Operation] = [arith.SubiOp(iv, lo)]
    constant = _constant(increment)
    factor = constant // step if constant is not None and constant % step == 0 else None
    if factor is None and step != 1:
        ops += [arith.ConstantOp(IntegerAttr(step, IndexType()))]
        ops += [arith.DivUIOp(ops[0].results[0], ops[-1].results[0])]
    if not isinstance(ty, IndexType):
        ops += [arith.IndexCastOp(ops[-1].results[0], ty)]
    if factor is None:
        ops += [arith.MuliOp(ops[-1].results[0], increment)]
    elif factor != 1:  # i - lo times increment / step, no division
        ops += [arith.ConstantOp(IntegerAttr(factor, ty))]
        ops += [arith.MuliOp(ops[-2].results[0], ops[-1].results[0])]
    ops += [arith.AddiOp(start, ops[-1].results[0])]
    return ops


def _trip_count(lo: SSAValue, hi: SSAValue, step: SSAValue, ty: Attribute) -> Scalar:
    """How many times an ``scf.for`` from ``lo`` to ``hi`` by ``step`` (> 0) runs: ceil((hi - lo) / step), at
    least 0, as a ``ty`` (the counted value's type)."""
    trace = current()
    n = (Scalar(hi) - Scalar(lo) + Scalar(step) - 1) // Scalar(step)
    n = trace.value(arith.MaxSIOp(n.value, trace.constant(0, IndexType())))
    return Scalar(n if isinstance(ty, IndexType) else trace.value(arith.IndexCastOp(n, ty)))


def _is_i64(bound: Any) -> bool:
    """A bound of 64 bits: an int64 scalar, or a Python int past i32 (Triton types the loop's counter so)."""
    if isinstance(bound, Scalar):
        return bound.type == IntegerType(64)
    return isinstance(bound, int) and not isinstance(bound, bool) and not -(2**31) <= bound < 2**31


def traced_bounds(bounds: Sequence[Any]) -> bool:
    """Whether Python's ``range(*bounds)`` in a kernel is a ``tl.range`` loop: a bound is a traced value (as
    Triton reads ``range(0, tl.cdiv(K, BK))``); with Python ints only it unrolls while tracing."""
    return any(isinstance(b, (Value, Expanded)) for b in bounds)


class python_range(range):  # noqa: N801 - Python's range as a kernel reads it
    """Python's ``range(...)`` in a kernel (:func:`tilec.lang.source_rewrite.rewrite`): a ``tl.range`` loop
    where a bound is a traced value, else Python's loop, which calls the body once an iteration (unrolled
    while tracing, as the loop written inline would be)."""

    def __tl_loop__(self, init: Sequence[Any], body: Callable[..., tuple], names: Sequence[str],
                    index_name: str = "i", offsets: frozenset[int] = frozenset()) -> tuple:
        if traced_bounds((self.start, self.stop, self.step)):
            return super().__tl_loop__(init, body, names, index_name, offsets)
        values = tuple(init)
        for i in builtins.range(self.start, self.stop, self.step):
            values = tuple(body(i, *values))
        return values


def refuse(message: str) -> None:
    """Raise what the rewrite of a ``range`` loop found a ``tl.range`` loop cannot do, once its bounds are
    traced (with Python ints the loop is Python's, which can)."""
    raise LangError(message)

TRACED = object()
"""What :func:`python_test` gives for a test that is a traced value: the loop runs on the GPU from here."""


def python_test(test: Callable[[], Any]) -> Any:
    """A ``while`` loop's test evaluated once for this iteration: its Python value (what the evaluation
    traced, if anything, stays where it is), or :data:`TRACED` when it is a traced value. Then the loop is
    an ``scf.while`` from here, which traces the test again in its own region, so what this evaluation
    traced (an atomic, say) is dropped."""
    trace = current()
    probe = Block()
    with trace.inside(probe):
        value = test()
    if isinstance(value, (Value, Expanded)):
        probe.drop_all_references()
        return TRACED
    for op in list(probe.ops):  # a Python value: the test's ops (if any) run here, once
        op.detach()
        trace.blocks[-1].add_op(op)
    return value


def while_loop(init: Sequence[Any], test: Callable[..., Any], body: Callable[..., tuple], names: Sequence[str],
               leaked: Sequence[str] = (), offsets: frozenset[int] = frozenset()) -> tuple:
    """Trace ``while test(*carried): carried = body(*carried)`` into an ``scf.while``: the test in its
    first region (ending in ``scf.condition``), the body in its second; returns the carried values after
    the loop. A Python number the body changes is carried as a scalar (traced again, as
    :meth:`range.__tl_loop__` does)."""
    if leaked:
        raise error(f"'{leaked[0]}' is first assigned inside this while loop, which runs on the GPU, and used "
                    "after it: give it a value before the loop (it is then carried through the loop)")
    init = _arrays_as_pointers(init)
    if any_block_ptr(init):  # carried as their offsets
        flat, flat_names, unpack, pack = flatten_carried(init, names)
        out = while_loop(flat, lambda *c: test(*unpack(c)), lambda *c: tuple(pack(body(*unpack(c)))), flat_names,
                         offsets=offset_positions(init))
        return tuple(unpack(out))
    trace = current()
    init = [Unbound(name) if isinstance(v, NoValue) else v for name, v in zip(names, init)]
    for name, v in zip(names, init):
        if isinstance(v, Expanded):
            raise error(f"'{name}' (an expanded vector v[:, None]) cannot be carried through a loop: carry the vector")
    while True:
        before, after, traced, yielded, changed = _trace_while(init, test, body, names, offsets)
        if not changed:
            break
        for b in (before, after):
            b.drop_all_references()
        for i, ty in changed.items():
            if ty is WIDENED:
                init[i] = init[i].to(dtypes.int64)
                continue
            value = number_constant(init[i], ty)
            if value is None:
                raise error(f"'{names[i]}' is the Python value {init[i]!r} before the loop and changes in its "
                            "body: give it a traced value before the loop (e.g. tl.zeros or tl.full)")
            init[i] = wrap(value)
    with trace.inside(after):
        trace.emit(scf.YieldOp(*yielded))
    loop = trace.emit(scf.WhileOp([init[i].value for i in traced], [init[i].value.type for i in traced],
                                  Region(before), Region(after)))
    out = list(init)
    for k, i in enumerate(traced):
        loop.results[k].name_hint = names[i]
        out[i] = wrap(loop.results[k])
    return tuple(out)


def _trace_while(init: list, test: Callable[..., Any], body: Callable[..., tuple], names: Sequence[str],
                 offsets: frozenset[int] = frozenset()):
    """The test and the body traced into the two blocks of an ``scf.while`` (the test's ending in its
    ``scf.condition``): (before, after, the carried names' indices, the values the body yields, the Python
    numbers the body changes with the scalar type each is carried as)."""
    trace = current()
    traced = [i for i, v in enumerate(init) if isinstance(v, Value)]
    types = [init[i].value.type for i in traced]
    blocks = []
    for _ in "test", "body":  # (this module's `range` is tl.range)
        block = Block(arg_types=types)
        args = list(init)
        for k, i in enumerate(traced):
            block.args[k].name_hint = names[i]
            args[i] = wrap(keep_reading(block.args[k], init[i].value))
        blocks.append((block, args))
    (before, test_args), (after, body_args) = blocks
    try:
        with trace.inside(before):
            cond = test(*test_args)
            if not isinstance(cond, Scalar):
                got = cond.describe() if isinstance(cond, Value) else f"the Python value {cond!r}"
                raise error(f"a while loop's test must stay a traced scalar in every iteration, got {got}")
            if cond.value.type != IntegerType(1):
                cond = cond != 0
            trace.emit(scf.ConditionOp(cond.value, *before.args))
        with trace.inside(after):
            results = body(*body_args)
    except AttributeError as e:
        numbers = _numbers_used_as_values(e, init)
        if not numbers:
            raise
        return before, after, traced, [], numbers
    yielded, changed = [], {}
    for i, (name, before_value, after_value) in enumerate(zip(names, init, results)):
        kept, ty = _carried(name, before_value, after_value, "while loop", i in offsets)
        if kept is not None:
            yielded.append(kept)
        elif ty is not None:
            changed[i] = ty
    return before, after, traced, yielded, changed


def _arrays_as_pointers(init: Sequence[Any]) -> list[Any]:
    """A loop's carried names that hold an array argument are the body's to move: Triton's ``x_ptr +=
    BLOCK`` on the argument itself. They enter the loop as pointers to the array's first element."""
    return [Pointer(v, 0) if isinstance(v, View) else v for v in init]


def _numbers_used_as_values(e: AttributeError, init: Sequence[Any]) -> dict[int, Attribute]:
    """The carried Python numbers to trace again as scalars (index for an int, f32 for a float) after a
    body used one as a traced value (``i.to(tl.float32)`` on a counter ``i = 0`` the body increments, as
    Triton's loop-carried values are tensors); empty where the error is not about a Python number."""
    if not isinstance(getattr(e, "obj", None), NUMBERS):
        return {}
    return {i: number_type(v, v) for i, v in enumerate(init) if isinstance(v, NUMBERS)}


def _carried(name: str, before: Any, after: Any, loop: str, offsets: bool = False
             ) -> tuple[SSAValue | None, Attribute | None]:
    """What a loop does with one name its body traced from ``before`` to ``after``: (the value its body
    yields, None) for a carried value, which keeps its type; (None, the scalar type to carry it as) for a
    Python number the body changes (traced again); (None, None) for a name the loop does not carry."""
    if isinstance(before, Value):
        after = _as_carried(after, before)
        if offsets and _widened(before, after):
            return None, WIDENED
        if not isinstance(after, Value) or after.value.type != before.value.type or after.dtype != before.dtype:
            got = after.describe() if isinstance(after, Value) else repr(after)
            raise error(f"'{name}' is a {before.describe()} before the {loop} and a {got} after its body: "
                        "a carried value keeps its type")
        return after.value, None
    if isinstance(before, Unbound) or not (isinstance(after, Value) or (after is not before and after != before)):
        return None, None  # unchanged, or assigned in the body before any read there: that iteration's own
    ty = None
    if isinstance(before, NUMBERS) and isinstance(after, Scalar):
        ty = after.value.type
    elif isinstance(before, NUMBERS) and isinstance(after, NUMBERS):
        ty = number_type(before, after)
    if ty is None and carried_as_offsets(after):
        raise error(f"'{name}' becomes a {after.describe()} in the {loop}'s body and is {before!r} before: make it "
                    "before the loop (moving it inside is fine)")
    if ty is None:
        raise error(f"'{name}' is the Python value {before!r} before the loop and changes in its body: "
                    "give it a traced value before the loop (e.g. tl.zeros or tl.full)")
    return None, ty


WIDENED = object()
"""What :func:`_carried` gives for a pointer's i32 offsets the body makes i64 (``p += s`` with an i64 ``s``:
Triton's pointer keeps its type whatever it adds): traced again from the offsets made i64 before the loop.
Other carried values keep their type, as Triton's do."""


def _widened(before: Value, after: Any) -> bool:
    """Whether ``after`` is ``before``'s kind of value (shape, orientation) in i64 where ``before`` is i32."""
    if not isinstance(after, Value) or type(after) is not type(before):
        return False
    ea, eb = (getattr(v.value.type, "element_type", v.value.type) for v in (before, after))
    same = all(getattr(before, k, None) == getattr(after, k, None) for k in ("shape", "orientation"))
    return same and ea == IntegerType(32) and eb == IntegerType(64)


def _as_carried(after: Any, before: Value) -> Any:
    """A Python number the body leaves in a name carried as a traced scalar (``a, b = b, a + b`` with ``b``
    still a number in this trace): the constant of the carried type; anything else as it is."""
    if isinstance(before, Scalar) and isinstance(after, NUMBERS):
        value = number_constant(after, before.value.type)
        if value is not None:
            return wrap(value)
    return after


def _other_orientation(before: Any, after: Any) -> bool:
    """Whether a carried vector comes out of the body as the same vector in the other orientation."""
    return (isinstance(before, Vector) and isinstance(after, Vector) and before.shape == after.shape
            and before.dtype == after.dtype and before.orientation != after.orientation)


def _reoriented_init(value: Value, conflict: OrientationConflict) -> Value:
    """A carried vector's initial value made again in the orientation its loop's body needs: possible when
    it was made from nothing (tl.zeros ...) before the loop; a value an outer loop carries is that loop's
    to make again (the conflict goes up to it); anything else is the conflict's error."""
    twin = reoriented_or_none(value, conflict.orientation)
    if twin is not None:
        return twin
    if isinstance(value.value, BlockArgument) and isinstance(value.value.owner.parent_op(), scf.ForOp):
        raise OrientationConflict(conflict.args[0], value.value, conflict.orientation)
    return reoriented(value, conflict.orientation)  # turned once, before the loop
