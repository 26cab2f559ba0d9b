"""``for i in tl.range(...)`` loops that stay loops: ``scf.for`` with the values the body changes carried.

A kernel runs once while it is traced, so a Python ``for`` over ``range`` unrolls (what
``tl.static_range`` means in Triton). A loop over ``tl.range`` must instead become one
``scf.for`` whose body is traced once; the Python variables the body reassigns are its
loop-carried values. Which those are is read from the function's source, the one thing tracing
cannot see: :func:`rewrite` turns::

    for i in tl.range(lo, hi, step):
        m = tl.maximum(m, tl.row_max(x))

into::

    def __tl_body_1(i, m):
        m = tl.maximum(m, tl.row_max(x))
        return (m,)
    __tl_range_1 = tl.range(lo, hi, step)
    try:
        __tl_init_1_0 = m
    except NameError:  # no value before the loop (see below)
        __tl_init_1_0 = __tl_range_1.__tl_unbound__('m')
    (m,) = __tl_range_1.__tl_loop__((__tl_init_1_0,), __tl_body_1, ('m',), 'i')

Carried: names the body assigns that are bound before the loop (parameters or earlier
assignments) and whose value matters: read in the body before it is assigned there, or read
after the loop (or after an enclosing ``tl.range`` loop). A name bound before the loop on one
branch of an ``if`` only may have no value where the loop starts (the branch is a
``tl.constexpr``'s): the rewritten code passes :class:`~tilec.lang.loop.Unbound` for it, and the
loop carries it only where it has a value. A name first assigned in the body and read after the
loop is an error (it would hold the last iteration's value in Python, and a loop has no such
value); so are ``break``, ``continue`` and ``return`` in the body. The rewritten function keeps the
file and line numbers of the original, so errors and op locations point at the user's lines.

Each ``if`` of the body becomes its two branches as functions of the names they assign, and a test
of its condition (:meth:`_Rewriter._if`)::

    __tl_cond_2 = <test>
    def __tl_body_2_then(t): ...; return (t,)
    def __tl_body_2_else(t): ...; return (t,)
    __tl_init_2_0 = t  # or a NoValue where t has none yet
    if hasattr(__tl_cond_2, '__tl_if__'):  # a traced scalar: both branches, into an scf.if
        (t,) = __tl_cond_2.__tl_if__((__tl_init_2_0,), __tl_body_2_then, __tl_body_2_else, ('t',))
    elif __tl_cond_2:  # a Python value: the branch it picks, as Python's if would run it
        (t,) = __tl_body_2_then(*(__tl_init_2_0,))
    else:
        (t,) = __tl_body_2_else(*(__tl_init_2_0,))

The names an ``if`` returns are those its branches assign that are read after it; the functions
also take those that have a value before it (:mod:`tilec.lang.branch`). A name that gets no value
(assigned only in the branch not taken, or only in one branch of a run-time if) holds a
:class:`~tilec.lang.branch.NoValue`: reading it is an error that names it, and a ``tl.range`` loop
takes it as a name with no value yet (which its body may assign first). A branch that leaves
(``return``, ``break``, ``continue``) keeps the plain ``if`` on Python values.
"""

from __future__ import annotations

import ast
import builtins
import copy
import inspect
import types
from collections.abc import Callable
from typing import Any

from tilec.lang.tracing import LangError

BODY_PREFIX = "__tl_body_"
NO_VALUE = "__tl_no_value"
"""The name the rewritten kernel binds :class:`tilec.lang.branch.NoValue` to (at its top)."""


def _assigned(nodes: list[ast.stmt]) -> list[str]:
    """Names bound by ``nodes`` (in order, once each), not looking into nested functions' bodies."""
    names: list[str] = []

    class Visitor(ast.NodeVisitor):
        def visit_Name(self, node: ast.Name) -> None:
            if isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            if node.name not in names and not node.name.startswith(BODY_PREFIX):
                names.append(node.name)

        def visit_Lambda(self, node: ast.Lambda) -> None:
            pass

    for n in nodes:
        Visitor().visit(n)
    return names


def _leaving(body: list[ast.stmt]) -> list[ast.stmt]:
    """The ``break``/``continue`` of this loop and the ``return`` of its function in ``body`` (not those
    of loops or functions nested in it)."""
    found: list[ast.stmt] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return
        if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            found.append(node)
        elif isinstance(node, ast.Return):
            found.append(node)
        loop = isinstance(node, (ast.For, ast.While, ast.AsyncFor))
        for child in ast.iter_child_nodes(node):
            # a loop's own body is its; its else: runs after it, so a break there is the enclosing loop's
            own = loop and not any(child is stmt for stmt in node.orelse)
            visit(child, in_loop or own)

    for stmt in body:
        visit(stmt, False)
    return found


def _container_store(body: list[ast.stmt]) -> ast.expr | None:
    """The first subscript or attribute a statement of ``body`` assigns (``accs[0] = ...``,
    ``self.m += ...``; not inside nested functions), or None."""
    found: list[ast.expr] = []

    class Visitor(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            pass

        def visit_Lambda(self, node: ast.Lambda) -> None:
            pass

        def visit_Subscript(self, node: ast.Subscript) -> None:
            if isinstance(node.ctx, ast.Store) and not found:
                found.append(node)
            self.generic_visit(node)

        def visit_Attribute(self, node: ast.Attribute) -> None:
            if isinstance(node.ctx, ast.Store) and not found:
                found.append(node)
            self.generic_visit(node)

    for stmt in body:
        Visitor().visit(stmt)
    return found[0] if found else None


def _loads(node: ast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _first_use(name: str, stmts: list[ast.stmt]) -> str | None:
    """Whether ``stmts``, run in order, read ``name`` ("load") or bind it ("store") first; None: neither."""
    for stmt in stmts:
        use = _statement_use(name, stmt)
        if use is not None:
            return use
    return None


def _statement_use(name: str, stmt: ast.stmt) -> str | None:
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If)):
        header = stmt.iter if isinstance(stmt, (ast.For, ast.AsyncFor)) else stmt.test
        if name in _loads(header):
            return "load"
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and name in _assigned([ast.Expr(value=stmt.target)]):
            body = "store"
        else:
            body = _first_use(name, stmt.body)
        other = _first_use(name, stmt.orelse)
        if "load" in (body, other):
            return "load"
        # a loop may run no iteration, so its stores are not definite; an if's are when both branches store
        return "store" if isinstance(stmt, ast.If) and body == other == "store" else None
    if isinstance(stmt, ast.With):
        if any(name in _loads(item.context_expr) for item in stmt.items):
            return "load"
        return _first_use(name, stmt.body)
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return "load" if name in _loads(stmt) else ("store" if stmt.name == name else None)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
        return "load"
    if name in _loads(stmt):
        return "load"
    return "store" if name in _assigned([stmt]) else None


LOOPS = "__tl_loops"
"""The name the rewritten function reads :mod:`tilec.lang.loop` by, for its ``while`` loops."""

LOGIC = "__tl_logic"
EXTREMES = "__tl_extremes"
"""The name the rewritten ``min`` / ``max`` calls go to (:func:`tilec.lang.compat.python_min`)."""
"""The name the rewritten function reads :mod:`tilec.lang.branch` by, for its ``and``/``or``/``not``."""


class _LogicalOperators(ast.NodeTransformer):
    """``a and b``, ``a or b``, ``not a`` and ``a if c else b`` as calls that are Python's on Python values
    and trace a run-time condition's conjunction, disjunction, negation or choice on traced scalars
    (Triton's ``and`` in ``if pid < n and x > 0:``); ``b`` stays lazy (a lambda), as Python's."""

    def __init__(self, builtin_extremes: bool = False) -> None:
        self.count = 0
        self.extremes = 0
        self.builtin_extremes = builtin_extremes
        """Whether ``min`` / ``max`` are Python's here (no global or local of those names)."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """``min(a, b)`` / ``max(a, b)``: Python's on Python values, ``tl.minimum`` / ``tl.maximum`` on traced
        ones (as Triton maps them: ``min(num_pid_m - first_pid_m, GROUP_SIZE_M)`` in its matmul tutorial)."""
        self.generic_visit(node)
        if not (self.builtin_extremes and isinstance(node.func, ast.Name) and node.func.id in ("min", "max")
                and not node.keywords and len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args)):
            return node
        self.extremes += 1
        call = ast.Call(func=ast.Attribute(value=ast.Name(id=EXTREMES, ctx=ast.Load()), attr=f"python_{node.func.id}",
                                           ctx=ast.Load()), args=node.args, keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, node))

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if any(isinstance(n, ast.NamedExpr) for v in node.values[1:] for n in ast.walk(v)):
            return node  # a walrus binds in the function's scope, not a lambda's: left as Python's
        self.count += 1
        name = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        result = node.values[0]
        for right in node.values[1:]:
            lazy = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                              body=right)
            result = ast.Call(func=ast.Attribute(value=ast.Name(id=LOGIC, ctx=ast.Load()), attr=name, ctx=ast.Load()),
                              args=[result, lazy], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(result, node))

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        """``a < b < c`` as ``(a < b) and (b < c)`` (Python's meaning), so that it traces on run-time scalars."""
        self.generic_visit(node)
        if len(node.ops) < 2:
            return node
        lefts = [node.left, *(copy.deepcopy(c) for c in node.comparators[:-1])]  # each node once in the tree
        parts = [ast.Compare(left=left, ops=[op], comparators=[right]) for left, op, right in
                 zip(lefts, node.ops, node.comparators)]
        return self.visit_BoolOp(ast.copy_location(ast.BoolOp(op=ast.And(), values=parts), node))

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        """``a if c else b`` as a call: Python's (one side evaluated) on a Python ``c``; on a traced scalar
        an ``scf.if`` yielding the side taken (:func:`tilec.lang.branch.if_expression`), as Triton's."""
        self.generic_visit(node)
        if any(isinstance(n, ast.NamedExpr) for side in (node.body, node.orelse) for n in ast.walk(side)):
            return node
        self.count += 1
        no_args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
        call = ast.Call(func=ast.Attribute(value=ast.Name(id=LOGIC, ctx=ast.Load()), attr="if_expression",
                                           ctx=ast.Load()),
                        args=[node.test, ast.Lambda(args=no_args, body=node.body),
                              ast.Lambda(args=copy.deepcopy(no_args), body=node.orelse)], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, node))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.count += 1
        call = ast.Call(func=ast.Attribute(value=ast.Name(id=LOGIC, ctx=ast.Load()), attr="logical_not",
                                           ctx=ast.Load()), args=[node.operand], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, node))


def _has_return(stmts: list[ast.stmt]) -> bool:
    """Whether a ``return`` is reached in ``stmts`` through ``if``s (not loops, not nested functions)."""
    return any(isinstance(s, ast.Return) or (isinstance(s, ast.If) and (_has_return(s.body) or _has_return(s.orelse)))
               for s in stmts)


def _ends_with_return(stmts: list[ast.stmt]) -> bool:
    """Whether every way through ``stmts`` ends with a ``return``."""
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.If):
        return _ends_with_return(last.body) and _ends_with_return(last.orelse)
    return isinstance(last, ast.Return)


def _absorbed(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``stmts`` with the statements after an ``if`` that returns moved into its branches that do not
    (Triton's early exit ``if pid >= n: return``): every ``return`` is then the last statement of
    its way through the function, so both branches of a run-time ``if`` can be traced."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.If) and (_has_return(stmt.body) or _has_return(stmt.orelse)):
            rest = stmts[i + 1:]
            falls = [not _ends_with_return(b) for b in (stmt.body, stmt.orelse)]
            copies = iter([rest, copy.deepcopy(rest)])
            stmt.body = _absorbed([*stmt.body, *next(copies)] if falls[0] else stmt.body)
            stmt.orelse = _absorbed([*stmt.orelse, *next(copies)] if falls[1] else stmt.orelse)
            return [*stmts[:i], stmt]
    return stmts


def _tail_returns(stmts: list[ast.stmt]) -> list[tuple[list[ast.stmt], ast.Return]]:
    """The ``return``s ending the ways through ``stmts`` (after :func:`_absorbed`), with their lists."""
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.Return):
        return [(stmts, last)]
    if isinstance(last, ast.If):
        return _tail_returns(last.body) + _tail_returns(last.orelse)
    return []


def _structured_returns(fdef: ast.FunctionDef) -> None:
    """A function that returns from inside ``if``s returns once, at its end: ``if c: return a`` ...
    ``return b`` assigns the result on each way (``_tl_result_k``, a name a run-time if carries) and
    the function ends with ``return _tl_result_0, ...``; bare ``return``s (a kernel's early exit)
    go. Returns inside loops are left as written (a tl.range loop refuses them)."""
    if not any(isinstance(s, ast.If) and (_has_return(s.body) or _has_return(s.orelse)) for s in fdef.body):
        return
    fdef.body = _absorbed(fdef.body)
    tails = _tail_returns(fdef.body)
    if not _ends_with_return(fdef.body) and any(r.value is not None for _, r in tails):
        return  # a way that falls off the end returns None: left as written
    values = [r.value for _, r in tails if r.value is not None and not
              (isinstance(r.value, ast.Constant) and r.value.value is None)]
    if not values:  # bare returns: each is the end of its way through the function
        for block, ret in tails:
            block.remove(ret)
            if not block:
                block.append(ast.copy_location(ast.Pass(), ret))
        return
    arity = {len(v.elts) if isinstance(v, ast.Tuple) else None for v in values}
    if len(values) != len(tails) or len(arity) != 1:
        return  # some ways return nothing, or tuples of other lengths: left as written (Python's if)
    count = arity.pop()
    names = [f"_tl_result_{k}" for k in range(count or 1)]
    for block, ret in tails:
        target = ast.Tuple(elts=[ast.Name(id=x, ctx=ast.Store()) for x in names], ctx=ast.Store()) \
            if count is not None else ast.Name(id=names[0], ctx=ast.Store())
        block[block.index(ret)] = ast.fix_missing_locations(
            ast.copy_location(ast.Assign(targets=[target], value=ret.value), ret))
    result = ast.Tuple(elts=[ast.Name(id=x, ctx=ast.Load()) for x in names], ctx=ast.Load()) \
        if count is not None else ast.Name(id=names[0], ctx=ast.Load())
    fdef.body.append(ast.fix_missing_locations(ast.copy_location(ast.Return(value=result), tails[-1][1])))


class _Rewriter(ast.NodeTransformer):
    def __init__(self, is_range: Callable[[ast.expr], bool], filename: str, params: list[str],
                 is_python_range: Callable[[ast.expr], bool] = lambda node: False):
        self.is_range = is_range
        self.is_python_range = is_python_range
        self.filename = filename
        self.params = params
        self.count = 0
        self.uses_no_value = False
        self.uses_loops = False
        self.function: ast.FunctionDef | None = None
        self.live: set[str] = set()  # names live after the loops being rewritten (enclosing ones)

    def _fail(self, node: ast.AST, message: str) -> LangError:
        return LangError(f"{self.filename}:{node.lineno}:{node.col_offset + 1}: error: {message}")

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if self.function is None:
            self.function = node
        node.body = self._statements(node.body, set(self.params), [])
        return node

    def _statements(self, body: list[ast.stmt], bound: set[str], then: list[ast.stmt]) -> list[ast.stmt]:
        """``body`` with its loops and ifs rewritten. ``bound``: the names bound before it (enclosing
        blocks too); ``then``: what may run after it (the rest of the enclosing blocks, an enclosing loop's next
        iteration), for the liveness of what a loop assigns."""
        out: list[ast.stmt] = []
        known = set(bound)
        for i, stmt in enumerate(body):
            after = [*body[i + 1:], *then]
            if isinstance(stmt, ast.For) and self.is_range(stmt.iter):
                out.extend(self._loop(stmt, known, after))
            elif isinstance(stmt, ast.For) and self.is_python_range(stmt.iter):
                out.extend(self._python_range(stmt, known, after))
            elif isinstance(stmt, ast.If):
                out.extend(self._if(stmt, known, after))
            elif isinstance(stmt, ast.While) and not stmt.orelse and not _leaving(stmt.body) and \
                    not any(isinstance(x, ast.NamedExpr) for x in ast.walk(stmt.test)):
                out.extend(self._while(stmt, known, after))
            else:
                out.append(self._nested(stmt, known, after))
            known |= set(_assigned([stmt]))
        return out

    def _nested(self, stmt: ast.stmt, bound: set[str], after: list[ast.stmt]) -> ast.stmt:
        """Loops and ifs inside with/for/while bodies of plain Python are rewritten too."""
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return stmt
        inner = bound | set(_assigned([ast.Expr(value=stmt.target)])) if isinstance(stmt, ast.For) else bound
        repeats = isinstance(stmt, (ast.For, ast.While))
        for field in ("body", "orelse", "finalbody"):
            block = getattr(stmt, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                # a Python loop's body may run again: its start follows its end
                then = [*stmt.body, *after] if repeats and field == "body" else after
                setattr(stmt, field, self._statements(block, inner, then))
        return stmt

    def _if(self, node: ast.If, bound: set[str], after: list[ast.stmt]) -> list[ast.stmt]:
        """``if`` as a test of its condition, its branches made into functions of the names they assign
        (each written once, so nested ifs grow the code linearly): a traced scalar (which has
        ``__tl_if__``) traces both into an ``scf.if`` (:func:`tilec.lang.branch.trace_if`); a Python
        value calls the one it picks, as Python's if would run it. Branches that leave
        (return/break/continue) stay a plain ``if`` on Python values."""
        self.count += 1
        n = self.count
        cond = f"__tl_cond_{n}"
        made: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=cond, ctx=ast.Store())], value=node.test)]
        assigned = [x for x in _assigned([*node.body, *node.orelse]) if not x.startswith("__tl_")]
        # results: what is read after the if (or live after an enclosing loop); the branch functions
        # also take what they assign that has a value before (a branch may read it first)
        live_after = {x for x in assigned if _first_use(x, after) == "load" or x in self.live}
        params = [x for x in assigned if x in bound or x in live_after]
        results = [x for x in params if x in live_after]
        outer_live, self.live = self.live, self.live | live_after
        try:
            branches = [self._statements(b, bound, after) if b else [] for b in (node.body, node.orelse)]
        finally:
            self.live = outer_live
        if _leaving(node.body) or _leaving(node.orelse):
            python = ast.If(test=ast.Name(id=cond, ctx=ast.Load()), body=branches[0], orelse=branches[1])
            return _on_header(node, node.test, [*made, python])
        names = [f"{BODY_PREFIX}{n}_then", f"{BODY_PREFIX}{n}_else"]
        for name, body in zip(names, branches):
            ret = ast.Return(value=ast.Tuple(elts=[ast.Name(id=x, ctx=ast.Load()) for x in results], ctx=ast.Load()))
            fn = ast.FunctionDef(
                name=name, args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=x) for x in params], kwonlyargs=[],
                                              kw_defaults=[], defaults=[]),
                body=[*body, ret], decorator_list=[], returns=None, lineno=node.lineno, col_offset=node.col_offset)
            _no_type_params(fn)
            made.append(fn)
        inits = []
        for k, x in enumerate(params):
            init = f"__tl_init_{n}_{k}"
            inits.append(ast.Name(id=init, ctx=ast.Load()))
            novalue = ast.Call(func=ast.Name(id=NO_VALUE, ctx=ast.Load()),
                               args=[ast.Constant(value=x), ast.Constant(value="before the if that reads it")],
                               keywords=[])
            made.append(_value_or(init, x, novalue))

        def assign(value: ast.expr) -> ast.stmt:
            target = ast.Tuple(elts=[ast.Name(id=x, ctx=ast.Store()) for x in results], ctx=ast.Store())
            return ast.Assign(targets=[target], value=value)

        def call(name: str) -> ast.expr:
            return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[ast.Starred(
                value=ast.Tuple(elts=inits, ctx=ast.Load()), ctx=ast.Load())], keywords=[])

        traced = ast.Call(
            func=ast.Attribute(value=ast.Name(id=cond, ctx=ast.Load()), attr="__tl_if__", ctx=ast.Load()),
            args=[ast.Tuple(elts=inits, ctx=ast.Load()), *(ast.Name(id=x, ctx=ast.Load()) for x in names),
                  ast.Tuple(elts=[ast.Constant(value=x) for x in results], ctx=ast.Load())],
            keywords=[])
        has = ast.Call(func=ast.Name(id="hasattr", ctx=ast.Load()),
                       args=[ast.Name(id=cond, ctx=ast.Load()), ast.Constant(value="__tl_if__")], keywords=[])
        python = ast.If(test=ast.Name(id=cond, ctx=ast.Load()), body=[assign(call(names[0]))],
                        orelse=[assign(call(names[1]))])
        made.append(ast.If(test=has, body=[assign(traced)], orelse=[python]))
        self.uses_no_value = True
        return _on_header(node, node.test, made)

    def _while(self, loop: ast.While, bound: set[str], after: list[ast.stmt]) -> list[ast.stmt]:
        """``while test: body`` as Python's loop for as long as its test is a Python value, and from the
        first time it is a traced scalar on, an ``scf.while`` (:func:`tilec.lang.loop.while_loop`: the
        test and the body as functions of the carried names, as a ``tl.range`` loop's)::

            while True:
                __tl_test_value_3 = __tl_loops.python_test(lambda: <test>)  # evaluated once an iteration
                if __tl_test_value_3 is __tl_loops.TRACED:
                    def __tl_test_3(n): return <test>
                    def __tl_body_3(n): ...; return (n,)
                    (n,) = __tl_loops.while_loop((n,), __tl_test_3, __tl_body_3, ('n',), ())
                    break
                if not __tl_test_value_3:
                    break
                <body>

        So ``lo = 0; hi = N; while lo < hi: ... if a[mid] < t: lo = mid + 1 ...`` runs its first
        iteration as traced code and the rest on the GPU. A loop with an ``else:`` or a
        ``break``/``continue``/``return`` stays Python's."""
        self.count += 1
        n = self.count
        pos = {"lineno": loop.lineno, "col_offset": loop.col_offset}
        assigned = [x for x in _assigned(loop.body) if not x.startswith("__tl_")]
        live_after = {x for x in assigned if _first_use(x, after) == "load"} | self.live
        carried = [x for x in assigned if x in bound and (x in _loads(loop.test) or _first_use(x, loop.body) == "load"
                                                          or x in live_after)]
        leaked = [x for x in assigned if x not in bound and _first_use(x, after) == "load"]
        outer_live, self.live = self.live, live_after | set(carried)
        try:
            body = self._statements(loop.body, bound, [*loop.body, *after])
            python = self._statements(copy.deepcopy(loop.body), bound | set(assigned), [*loop.body, *after])
        finally:
            self.live = outer_live
        names = [f"__tl_test_{n}", f"{BODY_PREFIX}{n}"]
        args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=x) for x in carried], kwonlyargs=[], kw_defaults=[],
                             defaults=[])
        test_fn = ast.FunctionDef(name=names[0], args=copy.deepcopy(args), body=[ast.Return(value=loop.test)],
                                  decorator_list=[], returns=None, **pos)
        ret = ast.Return(value=ast.Tuple(elts=[ast.Name(id=x, ctx=ast.Load()) for x in carried], ctx=ast.Load()))
        body_fn = ast.FunctionDef(name=names[1], args=args, body=[*body, ret], decorator_list=[], returns=None, **pos)
        for fn in (test_fn, body_fn):
            _no_type_params(fn)
        traced: list[ast.stmt] = [test_fn, body_fn]
        inits = []
        for k, x in enumerate(carried):
            init = f"__tl_init_{n}_{k}"
            inits.append(ast.Name(id=init, ctx=ast.Load()))
            unbound = ast.Call(func=ast.Attribute(value=ast.Name(id=LOOPS, ctx=ast.Load()), attr="Unbound",
                                                  ctx=ast.Load()), args=[ast.Constant(value=x)], keywords=[])
            traced.append(_value_or(init, x, unbound))
        call = ast.Call(
            func=ast.Attribute(value=ast.Name(id=LOOPS, ctx=ast.Load()), attr="while_loop", ctx=ast.Load()),
            args=[ast.Tuple(elts=inits, ctx=ast.Load()), *(ast.Name(id=x, ctx=ast.Load()) for x in names),
                  ast.Tuple(elts=[ast.Constant(value=x) for x in carried], ctx=ast.Load()),
                  ast.Tuple(elts=[ast.Constant(value=x) for x in leaked], ctx=ast.Load())],
            keywords=[])
        target = ast.Tuple(elts=[ast.Name(id=x, ctx=ast.Store()) for x in carried], ctx=ast.Store())
        traced += [ast.Assign(targets=[target], value=call, **pos), ast.Break()]
        lazy = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                          body=copy.deepcopy(loop.test))
        value = f"__tl_test_value_{n}"
        evaluate = ast.Assign(targets=[ast.Name(id=value, ctx=ast.Store())],
                              value=ast.Call(func=ast.Attribute(value=ast.Name(id=LOOPS, ctx=ast.Load()),
                                                                attr="python_test", ctx=ast.Load()),
                                             args=[lazy], keywords=[]))
        is_traced = ast.Compare(left=ast.Name(id=value, ctx=ast.Load()), ops=[ast.Is()],
                                comparators=[ast.Attribute(value=ast.Name(id=LOOPS, ctx=ast.Load()), attr="TRACED",
                                                           ctx=ast.Load())])
        done = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=ast.Name(id=value, ctx=ast.Load())), body=[ast.Break()],
                      orelse=[])
        self.uses_loops = True
        made = ast.While(test=ast.Constant(value=True),
                         body=[evaluate, ast.If(test=is_traced, body=traced, orelse=[]), done, *python], orelse=[])
        return _on_header(loop, loop.test, [made])

    def _python_range(self, loop: ast.For, bound: set[str], after: list[ast.stmt]) -> list[ast.stmt]:
        """``for i in range(...)`` as Triton reads it: a ``tl.range`` loop (an ``scf.for``) when a bound is a
        traced scalar (``range(0, tl.cdiv(K, BK))``, Triton's tutorials), Python's loop (unrolled while
        tracing) when all are Python ints. The loop is written once, as a ``tl.range`` loop over
        ``__tl_loops.python_range(*__tl_range_args_4)`` (the arguments evaluated once before it), which runs
        Python's loop itself where the bounds are ints. A body a ``tl.range`` loop cannot be (a ``break``, a
        name first assigned in it and read after) stays Python's loop, and the error is raised at the user's
        line only where the bounds are traced::

            __tl_range_args_4 = (0, n)
            if __tl_loops.traced_bounds(__tl_range_args_4):
                __tl_loops.refuse("...: 'break' inside a tl.range loop ...")
            else:
                for i in range(*__tl_range_args_4): <body>"""
        call = loop.iter
        assert isinstance(call, ast.Call)
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return [self._nested(loop, bound, after)]
        self.count += 1
        args = f"__tl_range_args_{self.count}"
        made: list[ast.stmt] = [ast.Assign(targets=[ast.Name(id=args, ctx=ast.Store())],
                                           value=ast.Tuple(elts=call.args, ctx=ast.Load()))]

        def over(func: ast.expr) -> ast.For:
            made_loop = copy.deepcopy(loop)
            made_loop.iter = ast.Call(func=func, args=[ast.Starred(value=ast.Name(id=args, ctx=ast.Load()),
                                                                   ctx=ast.Load())], keywords=[])
            return made_loop

        loops = ast.Name(id=LOOPS, ctx=ast.Load())
        self.uses_loops = True
        count = self.count
        try:
            either = self._loop(over(ast.Attribute(value=loops, attr="python_range", ctx=ast.Load())), bound, after)
            return _on_header(loop, loop.iter, [*made, *either])
        except LangError as e:  # what a tl.range loop refuses is an error only where it is one
            self.count = count
            refuse = ast.Call(func=ast.Attribute(value=loops, attr="refuse", ctx=ast.Load()),
                              args=[ast.Constant(value=f"{e} (range() of a run-time bound is a tl.range loop)")],
                              keywords=[])
            traced = [ast.Expr(value=refuse)]
        python = self._nested(over(ast.Name(id="range", ctx=ast.Load())), bound, after)
        test = ast.Call(func=ast.Attribute(value=loops, attr="traced_bounds", ctx=ast.Load()),
                        args=[ast.Name(id=args, ctx=ast.Load())], keywords=[])
        made.append(ast.If(test=test, body=traced, orelse=[python]))
        return _on_header(loop, loop.iter, made)

    def _loop(self, loop: ast.For, bound_before: set[str], after: list[ast.stmt]) -> list[ast.stmt]:
        if loop.orelse:
            raise self._fail(loop, "a tl.range loop has no else: branch")
        if not isinstance(loop.target, ast.Name):
            raise self._fail(loop.target, "a tl.range loop variable is one name")
        for node in _leaving(loop.body):
            kind = type(node).__name__.lower()
            raise self._fail(node, f"'{kind}' inside a tl.range loop: the loop runs on the GPU, "
                                   "its trip count is fixed when it starts")
        stored = _container_store(loop.body)
        if stored is not None:
            raise self._fail(stored, f"'{ast.unparse(stored)}' is assigned inside a tl.range loop: a loop carries "
                                     "names only (the loop runs on the GPU, not in Python), so give the value a "
                                     "name before the loop and assign that name")
        if _first_use(loop.target.id, after) == "load":
            raise self._fail(loop, f"the loop variable '{loop.target.id}' is read after this tl.range loop, where "
                                   "it has no value (compute what you need from the loop's bounds)")
        # carried: bound before the loop, assigned in it, and live: read in the body before it is
        # assigned there, read after the loop, or live after an enclosing loop
        assigned = [n for n in _assigned(loop.body) if n != loop.target.id]
        live_after = {n for n in assigned if _first_use(n, after) == "load"} | self.live
        carried = [n for n in assigned if n in bound_before
                   and (_first_use(n, loop.body) == "load" or n in live_after)]
        outer_live, self.live = self.live, live_after | set(carried)
        try:
            # the body's next iteration follows its end; then what follows the loop
            body = self._statements(loop.body, bound_before | {loop.target.id}, [*loop.body, *after])
        finally:
            self.live = outer_live
        leaked = [n for n in assigned if n not in bound_before and _first_use(n, after) == "load"]
        if leaked:
            raise self._fail(loop, f"'{leaked[0]}' is first assigned inside this tl.range loop and used after it: "
                                   "give it a value before the loop (it is then carried through the loop)")
        self.count += 1
        name = f"{BODY_PREFIX}{self.count}"
        pos = {"lineno": loop.lineno, "col_offset": loop.col_offset}
        ret = ast.Return(value=ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Load()) for n in carried], ctx=ast.Load()))
        fn = ast.FunctionDef(
            name=name,
            args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in [loop.target.id, *carried]],
                               kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[*body, ret], decorator_list=[], returns=None, **pos)
        _no_type_params(fn)
        # the range first, then each carried name's value, or the range's Unbound where it has none
        # (bound before the loop on one branch of an if only): the body may give it its first value
        rng = f"__tl_range_{self.count}"
        made: list[ast.stmt] = [fn, ast.Assign(targets=[ast.Name(id=rng, ctx=ast.Store())], value=loop.iter, **pos)]
        inits = []
        for k, n in enumerate(carried):
            init = f"__tl_init_{self.count}_{k}"
            inits.append(ast.Name(id=init, ctx=ast.Load()))
            if n in self.params:
                made.append(ast.Assign(targets=[ast.Name(id=init, ctx=ast.Store())],
                                       value=ast.Name(id=n, ctx=ast.Load()), **pos))
                continue
            unbound = ast.Call(func=ast.Attribute(value=ast.Name(id=rng, ctx=ast.Load()), attr="__tl_unbound__",
                                                  ctx=ast.Load()), args=[ast.Constant(value=n)], keywords=[])
            made.append(_value_or(init, n, unbound))
        call = ast.Call(
            func=ast.Attribute(value=ast.Name(id=rng, ctx=ast.Load()), attr="__tl_loop__", ctx=ast.Load()),
            args=[ast.Tuple(elts=inits, ctx=ast.Load()),
                  ast.Name(id=name, ctx=ast.Load()),
                  ast.Tuple(elts=[ast.Constant(value=n) for n in carried], ctx=ast.Load()),
                  ast.Constant(value=loop.target.id)],
            keywords=[])
        target = ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in carried], ctx=ast.Store())
        made.append(ast.Assign(targets=[target], value=call, **pos))
        return _on_header(loop, loop.iter, made)


def _value_or(target: str, name: str, fallback: ast.expr) -> ast.stmt:
    """``target = name``, or ``target = fallback`` where ``name`` has no value (NameError)."""
    def assign(value: ast.expr) -> ast.stmt:
        return ast.Assign(targets=[ast.Name(id=target, ctx=ast.Store())], value=value)

    return ast.Try(body=[assign(ast.Name(id=name, ctx=ast.Load()))],
                   handlers=[ast.ExceptHandler(type=ast.Name(id="NameError", ctx=ast.Load()), name=None,
                                               body=[assign(fallback)])],
                   orelse=[], finalbody=[])


def _on_header(stmt: ast.stmt, end: ast.expr, made: list[ast.stmt]) -> list[ast.stmt]:
    """``made`` located on ``stmt``'s header (from its first line to ``end``: where errors about the
    loop or the if point): the new statements and every node in them without a place of its own (the
    user's statements inside keep theirs)."""
    header = {"lineno": stmt.lineno, "col_offset": stmt.col_offset, "end_lineno": end.end_lineno,
              "end_col_offset": end.end_col_offset}
    for top in made:
        for child in ast.walk(top):
            if "lineno" in child._attributes and (child is top or not hasattr(child, "lineno")):
                for k, v in header.items():
                    setattr(child, k, v)
    return made


def rewrite(fn: Callable[..., Any], range_objects: tuple[Any, ...]) -> Callable[..., Any]:
    """``fn`` with its ``for ... in tl.range(...)`` loops made into traced ``scf.for`` builders and its
    ``if`` statements into tests that trace an ``scf.if`` on a run-time condition.

    ``range_objects``: what ``tl.range`` may be bound to (the function and the module); a loop
    over anything else stays a Python loop. ``fn`` is returned as is when it has no such loop and
    no ``if``, or its source cannot be read.
    """
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError):
        return fn
    source = "".join(lines)
    indented = lines[0][:1] in (" ", "\t")
    # an indented def (a method, a kernel made in a function) parses as the body of `if 1:`: the
    # columns stay the file's, whatever the indentation of its other lines (a docstring's, say)
    tree = ast.parse("if 1:\n" + source if indented else source)
    ast.increment_lineno(tree, first - (2 if indented else 1))  # the file's line numbers
    fdef = tree.body[0].body[0] if indented else tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        return fn
    tree.body = [fdef]
    fdef.decorator_list = []
    scope = {**fn.__globals__, **_closure(fn)}

    def is_range(node: ast.expr) -> bool:
        if not isinstance(node, ast.Call):
            return False
        try:
            target = eval(compile(ast.Expression(body=node.func), filename, "eval"), scope)  # noqa: S307
        except Exception:  # e.g. a name local to the kernel: not resolvable here, so a Python loop; if it
            return False  # is tl.range after all, tl.range.__iter__ says at that line how to write it
        return any(target is r for r in range_objects)

    params = [a.arg for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs)]
    _structured_returns(fdef)
    local = set(params)  # every name the kernel binds anywhere (a nested def, an import, a handler, an argument)
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            local.add(n.id)
        elif isinstance(n, ast.arg):
            local.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not fdef:
            local.add(n.name)
        elif isinstance(n, ast.alias):
            local.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            local.add(n.name)
    builtin_extremes = all(name not in local and scope.get(name, getattr(builtins, name)) is getattr(builtins, name)
                           for name in ("min", "max"))
    logic = _LogicalOperators(builtin_extremes)
    fdef.body = [logic.visit(stmt) for stmt in fdef.body]
    def is_python_range(node: ast.expr) -> bool:  # Python's own range, not a name the kernel rebinds
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" and \
            "range" not in local and scope.get("range", builtins.range) is builtins.range

    rewriter = _Rewriter(is_range, filename, params, is_python_range)
    rewriter.visit(fdef)
    if rewriter.count == 0 and logic.count == 0 and logic.extremes == 0:
        return fn
    if logic.count:  # the module the and/or/not calls go to
        _prepend(fdef, f"{LOGIC} = __import__('tilec.lang.branch', fromlist=['logical_and'])")
    if logic.extremes:  # the module the min/max calls go to
        _prepend(fdef, f"{EXTREMES} = __import__('tilec.lang.compat', fromlist=['python_min'])")
    if rewriter.uses_loops:  # the module a rewritten while loop calls
        _prepend(fdef, f"{LOOPS} = __import__('tilec.lang.loop', fromlist=['while_loop'])")
    if rewriter.uses_no_value:  # what a rewritten if gives a name that has no value before it
        _prepend(fdef, f"{NO_VALUE} = __import__('tilec.lang.branch', fromlist=['NoValue']).NoValue")
    # defaults and annotations were evaluated where the kernel was defined (perhaps inside a function):
    # the re-read function takes the original's defaults and needs no annotations
    fdef.args.defaults, fdef.args.kw_defaults = [], [None] * len(fdef.args.kwonlyargs)
    for a in (*fdef.args.posonlyargs, *fdef.args.args, *fdef.args.kwonlyargs, fdef.args.vararg, fdef.args.kwarg):
        if a is not None:
            a.annotation = None
    fdef.returns = None
    free = fn.__code__.co_freevars
    if free:  # a closure: compiled inside a function of its free variables, then given the original cells
        outer = ast.FunctionDef(
            name="__tl_closure", args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=v) for v in free],
                                                     kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))], decorator_list=[],
            returns=None, lineno=fdef.lineno, col_offset=0, end_lineno=fdef.end_lineno, end_col_offset=0)
        _no_type_params(outer)
        tree.body = [ast.fix_missing_locations(outer)]
    code = compile(tree, filename, "exec")
    if free:
        outer_code = _code_named(code, "__tl_closure")
        inner = _code_named(outer_code, fdef.name)
        cells = dict(zip(free, fn.__closure__ or ()))
        made = types.FunctionType(inner, fn.__globals__, fdef.name, fn.__defaults__,
                                  tuple(cells[name] for name in inner.co_freevars))
        made.__kwdefaults__ = fn.__kwdefaults__
        return made
    namespace: dict[str, Any] = {}
    exec(code, fn.__globals__, namespace)  # noqa: S102 - the user's own function, re-read
    made = namespace[fdef.name]
    made.__defaults__, made.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return made


def _prepend(fdef: ast.FunctionDef, statement: str) -> None:
    """``statement`` first in ``fdef``'s body, located at the ``def`` line."""
    load = ast.parse(statement).body[0]
    for node in ast.walk(load):
        if "lineno" in node._attributes:
            node.lineno, node.col_offset = fdef.lineno, 0
            node.end_lineno, node.end_col_offset = fdef.lineno, 0
    fdef.body.insert(0, load)


def _code_named(code: types.CodeType, name: str) -> types.CodeType:
    return next(c for c in code.co_consts if isinstance(c, types.CodeType) and c.co_name == name)


def _no_type_params(node: ast.FunctionDef) -> None:
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        node.type_params = []


def _closure(fn: Callable[..., Any]) -> dict[str, Any]:
    cells = fn.__closure__ or ()
    out = {}
    for name, cell in zip(fn.__code__.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out
