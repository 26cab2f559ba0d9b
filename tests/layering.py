"""The layering of the ``tilec`` package, checked from its source (no imports are run).

Every ``tilec/**/*.py`` is parsed with :mod:`ast`; each ``import``/``from ... import``
of a tilec module becomes an edge from the importing module to the imported one,
wherever the statement is (module level, inside functions, classes,
``if TYPE_CHECKING:``). Relative imports are resolved against the importing
module's package; ``from tilec.x import y`` is an edge to ``tilec.x.y`` when
that is a module, else to ``tilec.x``; ``importlib.import_module("tilec.x")``
with a constant name counts as an import too. An import of ``tilec.a.b`` is an
edge to ``tilec.a.b`` only, not to the packages above it (their
``__init__``s run too, but counting them would put every package in a circle
with the modules its ``__init__`` re-exports).

The checks (:func:`import_cycles` and :func:`upward_imports` must find nothing;
:func:`unexplained_in_function_imports` is the third, separate so that it can
be enforced or not on its own):

1. **No import cycles** between files outside ``tilec/layout/``: no strongly
   connected component of more than one module, unless all its modules are in
   ``tilec.layout`` (the layout algebra may be mutually recursive).
2. **Layers**, lowest first (:data:`LAYERS`): a module may import modules of
   its own layer and of lower ones, never of a higher one. ``tilec/__init__.py``
   is the top (it re-exports) and may import anything; no other module may
   import the package ``tilec`` itself (``import tilec``, ``from tilec import
   name`` where ``name`` is not a submodule): importing a submodule ``tilec.x``
   is fine. A module that is in no layer is a failure of this check too (it
   cannot be checked; give it a layer or move it into one), and so is an
   import of a tilec module that does not exist (left behind by a move).
3. **Imports inside functions** say why, in a comment on the same line or the
   line above (a run of consecutive imports shares the comment above its first
   line), tagged with one of :data:`REASONS`: ``# lazy: saves 30 ms of import
   time`` (a ``lazy`` reason quotes the time measured), or ``# optional: torch
   may not be installed``.

Run as a script, it prints the cycles, the upward imports and the imports
inside functions (file:line each), and exits with status 1 if check 1 or 2
fails (``--strict``: or 3)::

    python tests/layering.py [--strict] [PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "tilec"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("tilec.layout", "tilec.version"),
    ("tilec.ir",),
    ("tilec.dialects",),
    ("tilec.passes",),
    ("tilec.codegen",),
    ("tilec.runtime",),
    ("tilec.interp",),
    ("tilec.api", "tilec.compile_cache"),
    ("tilec.kernels", "tilec.lang"),
    ("tilec.tools",),
)
"""Lowest first; the modules named and everything under them (``tilec.ir`` holds ``tilec.ir.fast``)."""

CYCLES_ALLOWED_UNDER = "tilec.layout"
"""Modules under this package may import each other in circles (among themselves only)."""

REASONS: dict[str, str] = {
    "lazy": "the import is deferred to save import time; say how much was measured (e.g. '~30 ms')",
    "optional": "the module is an optional dependency that may not be installed",
    "cycle": f"the two modules import each other (allowed under {CYCLES_ALLOWED_UNDER} only)",
}
"""The reasons an import may sit inside a function, as the tag of its comment: ``# lazy: ...``."""

_REASON = re.compile(r"#\s*(?P<tag>[a-z]+)\s*:\s*(?P<text>.*)")
_MEASURED = re.compile(r"\d+(?:\.\d+)?\s*(?:ms|s|us|µs|milliseconds?|seconds?)\b")


# -- reading the package ---------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One import of a tilec module (or, for the in-function list, of any module)."""

    importer: str  # dotted name of the importing module
    path: str  # its file, relative to the package's parent directory
    line: int
    target: str  # the imported module, dotted (for a non-tilec import: the name as written)
    in_function: bool
    is_tilec: bool
    written: str  # the statement as written (first line), for messages
    reason: str | None = None  # the reason comment, for imports inside functions
    unresolved: bool = False  # no module of the package has the name ``target`` (moved or deleted?)

    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Package:
    name: str
    root: Path  # the package directory
    modules: dict[str, Path] = field(default_factory=dict)  # dotted name -> file
    imports: list[Import] = field(default_factory=list)  # every tilec import, and every import inside a function

    def edges(self) -> dict[str, set[str]]:
        graph: dict[str, set[str]] = {m: set() for m in self.modules}
        for imp in self.imports:
            if imp.is_tilec and imp.target != imp.importer and imp.target in graph:
                graph[imp.importer].add(imp.target)
        return graph


def module_name(path: Path, root: Path) -> str:
    """``tilec/a/b.py`` -> ``tilec.a.b``; ``tilec/a/__init__.py`` -> ``tilec.a``."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on that line."""
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return out


def _reason_of(comment: str | None) -> str | None:
    if comment is None:
        return None
    found = []
    for part in comment.split("#")[1:]:  # "# noqa: X  # lazy: ..." has two
        m = _REASON.match("#" + part)
        if m:
            found.append((m["tag"] not in REASONS, f"{m['tag']}: {m['text'].strip()}"))
    return min(found)[1] if found else None  # a reason first


class _Collector:
    """Walks one module's AST, statement lists in order, knowing when it is inside a function."""

    def __init__(self, package: Package, name: str, path: Path, source: str):
        self.package = package
        self.name = name
        self.rel = path.relative_to(package.root.parent).as_posix()
        self.is_init = path.name == "__init__.py"
        self.lines = source.splitlines()
        self.comments = _comments(source)
        self.found: list[Import] = []

    # -- resolving names

    def _base(self, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return node.module
        package = self.name if self.is_init else self.name.rpartition(".")[0]
        parts = package.split(".")
        if node.level - 1 > len(parts) - 1:
            return None  # beyond the top package
        parts = parts[: len(parts) - (node.level - 1)]
        return ".".join(parts + ([node.module] if node.module else []))

    def _resolve(self, dotted: str) -> tuple[str, bool]:
        """``dotted``, and whether no module of the package has that name."""
        return dotted, dotted not in self.package.modules

    def _is_ours(self, dotted: str | None) -> bool:
        top = self.package.name
        return dotted is not None and (dotted == top or dotted.startswith(top + "."))

    # -- the walk

    def _reason(self, stmt: ast.stmt, body: list[ast.stmt], index: int) -> str | None:
        for line in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1):
            if line in self.comments:  # a comment of its own, a reason or not, is what it says
                return _reason_of(self.comments[line]) or self.comments[line].lstrip("# ")
        # a run of consecutive imports without comments of their own shares the comment above its first line
        first = index
        while (
            first > 0
            and isinstance(body[first - 1], ast.Import | ast.ImportFrom)
            and (body[first - 1].end_lineno or 0) + 1 == body[first].lineno
            and not any(line in self.comments
                        for line in range(body[first - 1].lineno, (body[first - 1].end_lineno or 0) + 1))
        ):
            first -= 1
        above = body[first].lineno - 1
        if above >= 1 and self.lines[above - 1].lstrip().startswith("#"):
            return _reason_of(self.comments.get(above))
        return None

    def _add(self, stmt: ast.stmt, target: str, in_function: bool, ours: bool, reason: str | None,
             unresolved: bool = False) -> None:
        written = self.lines[stmt.lineno - 1].strip() if stmt.lineno <= len(self.lines) else ""
        self.found.append(
            Import(self.name, self.rel, stmt.lineno, target, in_function, ours, written,
                   reason if in_function else None, unresolved)
        )

    def _import(self, stmt: ast.Import | ast.ImportFrom, in_function: bool, reason: str | None) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if self._is_ours(alias.name):
                    target, unresolved = self._resolve(alias.name)
                    self._add(stmt, target, in_function, True, reason, unresolved)
                elif in_function:
                    self._add(stmt, alias.name, in_function, False, reason)
            return
        base = self._base(stmt)
        if not self._is_ours(base):
            if in_function:
                self._add(stmt, ("." * stmt.level) + (stmt.module or ""), in_function, False, reason)
            return
        assert base is not None
        targets: dict[str, bool] = {}
        for alias in stmt.names:
            sub = f"{base}.{alias.name}"
            if alias.name != "*" and sub in self.package.modules:
                targets.setdefault(sub, False)
            else:
                target, unresolved = self._resolve(base)
                targets[target] = targets.get(target, False) or unresolved
        for target, unresolved in targets.items():
            self._add(stmt, target, in_function, True, reason, unresolved)

    def _dynamic(self, stmt: ast.stmt, in_function: bool, reason: str | None) -> None:
        """``importlib.import_module("tilec.x")`` (and ``__import__``) with a constant name."""
        for node in ast.walk(stmt):
            if not (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)):
                continue
            func = node.func
            named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
                isinstance(func, ast.Name) and func.id in ("import_module", "__import__")
            )
            arg = node.args[0].value
            if named and isinstance(arg, str) and self._is_ours(arg):
                target, unresolved = self._resolve(arg)
                self._add(stmt, target, in_function, True, reason, unresolved)

    def walk(self, body: list[ast.stmt], in_function: bool) -> None:
        for index, stmt in enumerate(body):
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                self._import(stmt, in_function, self._reason(stmt, body, index) if in_function else None)
                continue
            inner = in_function or isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
            children = [getattr(stmt, f) for f in ("body", "orelse", "finalbody")
                        if isinstance(getattr(stmt, f, None), list)]
            children += [h.body for h in getattr(stmt, "handlers", [])]
            children += [c.body for c in getattr(stmt, "cases", [])]
            if children:
                # the statement's own expressions (a decorator, an `if` test) run in the enclosing scope
                for expr_field in ("test", "iter", "items", "subject", "decorator_list"):
                    value = getattr(stmt, expr_field, None)
                    for part in value if isinstance(value, list) else [value]:
                        if isinstance(part, ast.AST):
                            self._dynamic(part, in_function, None)  # type: ignore[arg-type]
                for child in children:
                    self.walk(child, inner)
            else:
                self._dynamic(stmt, in_function, self._reason(stmt, body, index) if in_function else None)


def scan(root: Path = PACKAGE_DIR) -> Package:
    """Read every module of the package at ``root`` and collect its imports."""
    root = Path(root)
    package = Package(root.name, root)
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    for path in files:
        package.modules[module_name(path, root)] = path
    for path in files:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        collector = _Collector(package, module_name(path, root), path, source)
        collector.walk(tree.body, in_function=False)
        package.imports.extend(collector.found)
    return package


# -- check 1: cycles -------------------------------------------------------------------------


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components of the graph, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    out.append(sorted(component))
    return out


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


@dataclass
class Cycle:
    modules: list[str]
    imports: list[Import]  # the imports between the cycle's modules


def import_cycles(package: Package) -> list[Cycle]:
    """Check 1: the groups of modules that import each other in a circle (outside ``tilec/layout``)."""
    allowed = CYCLES_ALLOWED_UNDER.replace("tilec", package.name, 1)
    cycles = []
    for component in strongly_connected_components(package.edges()):
        if len(component) < 2 or all(_under(m, allowed) for m in component):
            continue
        members = set(component)
        inside = [i for i in package.imports if i.is_tilec and i.importer in members and i.target in members
                  and i.target != i.importer]
        cycles.append(Cycle(component, sorted(inside, key=lambda i: (i.path, i.line))))
    return sorted(cycles, key=lambda c: c.modules)


# -- check 2: layers -------------------------------------------------------------------------


def layer_of(module: str, package_name: str = "tilec") -> int | None:
    """The index of ``module``'s layer in :data:`LAYERS`, ``len(LAYERS)`` for the package itself, or None."""
    if module == package_name:
        return len(LAYERS)
    for level, prefixes in enumerate(LAYERS):
        if any(_under(module, p.replace("tilec", package_name, 1)) for p in prefixes):
            return level
    return None


def layer_name(level: int | None) -> str:
    if level is None:
        return "no layer"
    if level == len(LAYERS):
        return "the package itself"
    return " / ".join(LAYERS[level])


@dataclass
class LayerViolation:
    kind: str  # "upward", "package" (imports tilec itself), "unplaced" (a module in no layer) or "missing"
    message: str
    imp: Import | None = None

    def __str__(self) -> str:
        return f"{self.imp.where()}: {self.message}" if self.imp else self.message


def upward_imports(package: Package) -> list[LayerViolation]:
    """Check 2: imports of a higher layer, imports of the package itself, and modules in no layer."""
    top = package.name
    out: list[LayerViolation] = []
    for module in sorted(package.modules):
        if module != top and layer_of(module, top) is None:
            path = package.modules[module].relative_to(package.root.parent).as_posix()
            out.append(LayerViolation("unplaced", f"{path}: {module} is in no layer"))
    for imp in sorted(package.imports, key=lambda i: (i.path, i.line)):
        if not imp.is_tilec or imp.importer == top or imp.target == imp.importer:
            continue
        where = " (inside a function)" if imp.in_function else ""
        if imp.unresolved:
            out.append(LayerViolation("missing", f"{imp.importer} imports {imp.target}{where}, which is no module "
                                                 f"of the package (moved or deleted?)", imp))
            continue
        if imp.target == top:
            out.append(LayerViolation("package", f"{imp.importer} imports the package {top} itself{where}: "
                                                 f"import the submodule that defines the name", imp))
            continue
        have, want = layer_of(imp.importer, top), layer_of(imp.target, top)
        if have is not None and want is not None and want > have:
            out.append(LayerViolation(
                "upward", f"{imp.importer} ({layer_name(have)}) imports {imp.target} ({layer_name(want)}){where}", imp))
    return out


# -- check 3: imports inside functions ---------------------------------------------------------


def in_function_imports(package: Package) -> list[Import]:
    """Every import statement placed inside a function (of any module, tilec's or not), one per imported module."""
    return sorted((i for i in package.imports if i.in_function), key=lambda i: (i.path, i.line, i.target))


def reason_problem(imp: Import) -> str | None:
    """Why ``imp``'s comment does not justify it, or None when it does."""
    if imp.reason is None:
        return "no '# <reason>: ...' comment on its line or the line above"
    tag, _, text = imp.reason.partition(":")
    if tag not in REASONS:
        return f"'{tag}:' is not a reason ({', '.join(REASONS)})"
    if tag == "lazy" and not _MEASURED.search(text):
        return "a 'lazy:' reason says how much import time it saves, measured (e.g. '~30 ms')"
    if tag == "cycle" and not imp.importer.startswith(CYCLES_ALLOWED_UNDER + "."):
        return f"'cycle:' is a reason under {CYCLES_ALLOWED_UNDER} only: break the cycle instead"
    return None


def unexplained_in_function_imports(package: Package) -> list[tuple[Import, str]]:
    """Check 3 (separate: enforce it or not): the imports inside functions without a reason."""
    out = []
    for imp in in_function_imports(package):
        problem = reason_problem(imp)
        if problem:
            out.append((imp, problem))
    return out


# -- the script --------------------------------------------------------------------------------


def report(package: Package, strict: bool = False) -> tuple[str, int]:
    """The printed report and the exit status."""
    lines: list[str] = []
    cycles = import_cycles(package)
    violations = upward_imports(package)
    inner = in_function_imports(package)
    unexplained = unexplained_in_function_imports(package)

    lines.append(f"== 1. import cycles outside {CYCLES_ALLOWED_UNDER}: {len(cycles)}")
    for n, cycle in enumerate(cycles, 1):
        lines.append(f"  cycle {n} ({len(cycle.modules)} modules): {', '.join(cycle.modules)}")
        for imp in cycle.imports:
            where = "  [in function]" if imp.in_function else ""
            lines.append(f"    {imp.where()}: {imp.importer} -> {imp.target}{where}")

    kinds = {k: [v for v in violations if v.kind == k] for k in ("upward", "package", "unplaced", "missing")}
    lines.append(f"== 2. layering: {len(kinds['upward'])} upward imports, {len(kinds['package'])} imports of the "
                 f"package itself, {len(kinds['unplaced'])} modules in no layer, {len(kinds['missing'])} imports of "
                 f"modules that do not exist")
    lines.append("  layers, lowest first: " + " -> ".join(" & ".join(p) for p in LAYERS) + " -> tilec/__init__.py")
    for kind, title in (("upward", "upward imports"), ("package", "imports of the package itself"),
                        ("unplaced", "modules in no layer"), ("missing", "imports of modules that do not exist")):
        if kinds[kind]:
            lines.append(f"  {title} ({len(kinds[kind])}):")
            lines.extend(f"    {v}" for v in kinds[kind])

    ours = sum(1 for i in inner if i.is_tilec)
    enforced = " (enforced: --strict)" if strict else " (not enforced)"
    lines.append(f"== 3. imports inside functions: {len(inner)} ({ours} of tilec modules, {len(inner) - ours} of "
                 f"others); {len(unexplained)} without a reason{enforced}")
    problems = {id(i): p for i, p in unexplained}
    for imp in inner:
        note = f"MISSING REASON: {problems[id(imp)]}" if id(imp) in problems else imp.reason
        lines.append(f"  {imp.where()}: {imp.target}  -- {note}")

    failed = bool(cycles or violations or (strict and unexplained))
    lines.append("FAILED" if failed else "OK")
    return "\n".join(lines), int(failed)


def main(argv: Iterable[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    strict = "--strict" in args
    rest = [a for a in args if a != "--strict"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        print("usage: python tests/layering.py [--strict] [PACKAGE_DIR]", file=sys.stderr)
        return 2
    text, status = report(scan(Path(rest[0]) if rest else PACKAGE_DIR), strict)
    print(text)
    return status


if __name__ == "__main__":
    sys.exit(main())
