"""``if`` on a value known only when the kernel runs: an ``scf.if`` whose results are the names its
branches assign.

:mod:`tilec.lang.source_rewrite` turns each ``if`` of a ``@tl.kernel`` function's body into its
two branches, as functions of the names they assign, and a test of the condition: a Python value (a
``tl.constexpr``, a shape) calls the branch it picks, as Python's ``if`` would run it; a traced
scalar calls :func:`trace_if`. Both branches are traced, each into its region; a name whose value
is traced in both leaves the ``if`` as one of its results (the two values of one type); a Python
number meeting a traced scalar, or another number, becomes a constant of that type (f32 for floats,
index for ints), as Triton promotes them; any other Python value must be the same in both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects import scf
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType
from xdsl.ir import Attribute, Block, Region, SSAValue

from tilec.lang.block_ptr import any_block_ptr, carried_as_offsets, flatten_carried
from tilec.lang.tracing import Unusable, current, error
from tilec.lang.values import Expanded, Scalar, Value, Vector, View, can_reorient, reoriented, wrap


class NoValue(Unusable):
    """What a name holds after an ``if`` that gave it a value in one branch only (and none before),
    and what a branch reading such a name sees: using it is an error that names it."""

    def __init__(self, name: str, where: str):
        self.name = name
        self.where = where

    def __repr__(self) -> str:
        return f"'{self.name}', which has no value {self.where}"

    def _used(self, *_: Any) -> Any:
        raise error(f"{self!r}: give it a value in both branches (or before the if) to use it")


class _Result:
    """The ``index``-th result of the ``scf.if`` being built."""

    def __init__(self, index: int):
        self.index = index


NUMBERS = (int, float, bool)


def _same_python_value(a: Any, b: Any) -> bool:
    if a is b:
        return True
    return isinstance(a, NUMBERS) and isinstance(b, NUMBERS) and type(a) is type(b) and a == b


def number_type(a: Any, b: Any) -> Attribute | None:
    """The scalar type two different Python numbers leave a run-time if as: f32 if either is a float,
    index for ints, i1 for two bools; None for a bool and a number."""
    if isinstance(a, bool) != isinstance(b, bool):
        return None
    if isinstance(a, bool):
        return IntegerType(1)
    return Float32Type() if isinstance(a, float) or isinstance(b, float) else IndexType()


def number_constant(number: Any, ty: Attribute) -> SSAValue | None:
    """``number`` as a constant of the scalar type ``ty``, or None where it does not fit (a float for an
    integer, a bool for a number)."""
    if not isinstance(number, NUMBERS):
        return None
    integer = isinstance(ty, (IntegerType, IndexType))
    if isinstance(number, bool) != (ty == IntegerType(1)) or (isinstance(number, float) and integer):
        return None
    return current().constant(number, ty)


def _yield(yields: tuple[list, list], types: list, out: list, pair: tuple[SSAValue, SSAValue]) -> None:
    """One more result of the if: ``pair`` yielded by its two branches."""
    yields[0].append(pair[0])
    yields[1].append(pair[1])
    types.append(pair[0].type)
    out.append(_Result(len(types) - 1))


def _other_orientations(a: Value, b: Value) -> bool:
    """Whether ``a`` and ``b`` are one vector's shape and type in the two orientations."""
    return (isinstance(a, Vector) and isinstance(b, Vector) and a.shape == b.shape and a.dtype == b.dtype
            and a.orientation != b.orientation)


def trace_if(cond: Scalar, init: Sequence[Any], then: Callable[..., tuple], otherwise: Callable[..., tuple],
             names: Sequence[str]) -> tuple:
    """Trace ``then(*init)`` and ``otherwise(*init)`` into the regions of an ``scf.if`` on ``cond``;
    returns each name's value after it."""
    if cond.type != IntegerType(1):
        raise error(f"an if's condition known only when the kernel runs must be a comparison (i1), got a "
                    f"{cond.describe()}: write e.g. 'if n > 0:'")
    trace = current()
    blocks = Block(), Block()
    results = []
    for block, branch in zip(blocks, (then, otherwise)):
        with trace.inside(block):
            results.append(branch(*init))
    unpack = None
    if any_block_ptr(results[0]) or any_block_ptr(results[1]):  # a block pointer leaves as its offsets
        templates = [a if carried_as_offsets(a) else b for a, b in zip(*results)]
        _, flat_names, unpack, pack = flatten_carried(templates, names)
        results = [tuple(pack(r)) for r in results]
        names = flat_names
    yields: tuple[list, list] = ([], [])
    types = []
    out: list[Any] = []
    for name, a, b in zip(names, *results, strict=True):
        if isinstance(a, Expanded) or isinstance(b, Expanded):
            raise error(f"'{name}' (an expanded vector v[:, None]) cannot leave a run-time if: assign the vector")
        if isinstance(a, Value) and isinstance(b, Value) and a.value is b.value:
            out.append(a)  # neither branch changed it: defined before the if, no result needed
        elif isinstance(a, Value) and isinstance(b, Value):
            if _other_orientations(a, b):  # a vector as numpy's 1-D arrays: one orientation after the if
                keep = 0 if not can_reorient(a) or can_reorient(b) else 1
                turned = 1 - keep
                with trace.inside(blocks[turned]):
                    made = reoriented((a, b)[turned], (a, b)[keep].orientation)
                a, b = (a, made) if turned else (made, b)
            if a.value.type != b.value.type or a.dtype != b.dtype:
                raise error(f"'{name}' is a {a.describe()} after the if branch and a {b.describe()} after the else "
                            "branch: a name a run-time if assigns keeps one type")
            _yield(yields, types, out, (a.value, b.value))
        elif isinstance(a, NoValue) or isinstance(b, NoValue):
            out.append(NoValue(name, "after a run-time if that assigns it in one branch only"))  # unbound after
        elif isinstance(a, Value) or isinstance(b, Value):
            traced, python = (a, b) if isinstance(a, Value) else (b, a)
            number = number_constant(python, traced.value.type) if isinstance(traced, Scalar) else None
            if number is None:
                raise error(f"'{name}' is traced in one branch of a run-time if and the Python value {python!r} in "
                            "the other: give it a traced value in both (e.g. tl.full or tl.zeros)")
            pair = (traced.value, number) if traced is a else (number, traced.value)
            _yield(yields, types, out, pair)
        elif _same_python_value(a, b):
            out.append(a)
        elif isinstance(a, NUMBERS) and isinstance(b, NUMBERS) and (ty := number_type(a, b)) is not None:
            _yield(yields, types, out, (number_constant(a, ty), number_constant(b, ty)))  # numbers become scalars
        else:
            raise error(f"'{name}' is the Python value {a!r} after the if branch and {b!r} after the else branch of "
                        "a run-time if: give it a traced value in both (e.g. tl.full), or branch on a tl.constexpr")
    for block, values in zip(blocks, yields):
        with trace.inside(block):
            trace.emit(scf.YieldOp(*values))
    op = trace.emit(scf.IfOp(cond.value, types, Region(blocks[0]), Region(blocks[1])))
    made = []
    for name, x in zip(names, out):
        if isinstance(x, _Result):
            op.results[x.index].name_hint = name
            x = wrap(op.results[x.index])
        made.append(x)
    return tuple(made if unpack is None else unpack(made))


def _scalar_if(self: Scalar, init: tuple, then: Callable[..., tuple], otherwise: Callable[..., tuple],
               names: tuple) -> tuple:
    """The rewritten ``if`` of a kernel's body on this (i1) scalar: :func:`trace_if`."""
    return trace_if(self, init, then, otherwise, names)


# a traced scalar is what the rewritten if asks for this (values.py cannot import this module)
Scalar.__tl_if__ = _scalar_if  # type: ignore[attr-defined]


def _truth(x: Value, word: str) -> Scalar:
    """A traced scalar as the i1 ``and``/``or``/``not`` take (a number: nonzero); a tile or vector is an
    error (Python's operators test one truth value; ``&``, ``|``, ``~`` work elementwise)."""
    if not isinstance(x, Scalar):
        raise error(f"'{word}' on a {x.describe()}: Python's {word} tests one truth value; use "
                    f"{ {'and': '&', 'or': '|', 'not': '~'}[word] } for elementwise masks")
    return x if x.type == IntegerType(1) else x != 0


def logical_and(a: Any, b: Callable[[], Any]) -> Any:
    """``a and b``: Python's (``b`` evaluated only if needed) on Python values; on a traced scalar
    both are traced and the result is their conjunction (i1), as Triton's ``and`` in a condition."""
    if not isinstance(a, Value):
        return a and b()
    right = b()
    return _truth(a, "and") & (_truth(right, "and") if isinstance(right, Value) else bool(right))


def logical_or(a: Any, b: Callable[[], Any]) -> Any:
    """``a or b`` (see :func:`logical_and`)."""
    if not isinstance(a, Value):
        return a or b()
    right = b()
    return _truth(a, "or") | (_truth(right, "or") if isinstance(right, Value) else bool(right))


def if_expression(cond: Any, then: Callable[[], Any], otherwise: Callable[[], Any]) -> Any:
    """``then() if cond else otherwise()``: Python's on a Python ``cond`` (one side evaluated); on a
    traced scalar an ``scf.if`` with one result, each side traced into its branch (Triton's), so only
    the side taken runs when the kernel does."""
    if not isinstance(cond, Value):
        return then() if cond else otherwise()
    if not isinstance(cond, Scalar):
        raise error(f"'a if c else b' with c a {cond.describe()}: it tests one truth value; use tl.where(c, a, b) "
                    "to choose element by element")

    def side(fn: Callable[[], Any]) -> Callable[[], tuple]:
        def traced() -> tuple:
            value = fn()
            if isinstance(value, View):
                raise error(f"'a if c else b' chooses the array {value.name!r} when the kernel runs: arrays are "
                            "chosen while tracing (make c a tl.constexpr, or branch with an if around the accesses)")
            return (value,)
        return traced

    # an scf.if with one result (Triton's): only the side taken runs (a guard, an atomic)
    (value,) = trace_if(cond if cond.type == IntegerType(1) else cond != 0, (), side(then), side(otherwise),
                        ("if_expression",))
    return value


def logical_not(a: Any) -> Any:
    """``not a``: Python's on Python values; the negation (i1) of a traced scalar."""
    return ~_truth(a, "not") if isinstance(a, Value) else not a
