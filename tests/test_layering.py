"""The package's layering (``tests/layering.py``): no import cycles, no upward imports, and
imports inside functions say why. The first tests check the real ``tilec``; the rest check
the checker on small made-up packages."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from layering import (
    LAYERS,
    import_cycles,
    in_function_imports,
    layer_of,
    main,
    report,
    scan,
    unexplained_in_function_imports,
    upward_imports,
)

SCRIPT = Path(__file__).with_name("layering.py")

ENFORCE_IN_FUNCTION_REASONS = True
"""Check 3 (imports inside functions carry a ``# lazy: ...`` or ``# optional: ...`` comment):
the lead may turn it off."""


# -- the real package ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tilec_package():
    return scan()


def test_no_import_cycles(tilec_package):
    cycles = import_cycles(tilec_package)
    lines = []
    for cycle in cycles:
        lines.append(", ".join(cycle.modules))
        lines.extend(f"  {i.where()}: {i.importer} -> {i.target}{' [in function]' * i.in_function}"
                     for i in cycle.imports)
    if cycles:
        pytest.fail("import cycles outside tilec/layout:\n" + "\n".join(lines), pytrace=False)


def test_no_upward_imports(tilec_package):
    violations = upward_imports(tilec_package)
    layers = " -> ".join(" & ".join(p) for p in LAYERS)
    if violations:
        pytest.fail(f"layers (lowest first): {layers}\n" + "\n".join(str(v) for v in violations), pytrace=False)


def test_in_function_imports_say_why(tilec_package):
    if not ENFORCE_IN_FUNCTION_REASONS:
        pytest.skip("check 3 is not enforced (ENFORCE_IN_FUNCTION_REASONS)")
    missing = unexplained_in_function_imports(tilec_package)
    if missing:
        pytest.fail(
            f"{len(missing)} imports inside functions without a reason ('# lazy: saves N ms of import time' or "
            "'# optional: ...', on the line or the line above):\n"
            + "\n".join(f"{i.where()}: {i.target}: {problem}" for i, problem in missing),
            pytrace=False,
        )


def test_every_source_file_is_read(tilec_package):
    files = {p for p in Path(tilec_package.root).rglob("*.py") if "__pycache__" not in p.parts}
    assert set(tilec_package.modules.values()) == files
    assert "tilec" in tilec_package.modules and "tilec.interp.lanes" in tilec_package.modules


# -- the checker, on made-up packages ----------------------------------------------------------


def _package(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "tilec"
    for rel, text in {"__init__.py": "", **files}.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(pkg).parents:
            init = pkg / parent / "__init__.py"
            if not init.exists():
                init.write_text("")
        path.write_text(textwrap.dedent(text))
    return pkg


def _edges(pkg: Path) -> set[tuple[str, str, bool]]:
    return {(i.importer, i.target, i.in_function) for i in scan(pkg).imports if i.is_tilec}


def test_resolves_relative_and_submodule_imports(tmp_path):
    pkg = _package(tmp_path, {
        "runtime/__init__.py": "from .a import f\n",
        "runtime/a.py": "from . import b\nfrom .b import g\nfrom .. import api\nfrom ..dialects import tile, NAME\n",
        "runtime/b.py": (
            "import tilec.layout.atoms\nfrom tilec.layout import atoms as at, Layout\nfrom tilec.ir.context import x\n"
        ),
        "dialects/__init__.py": "NAME = 1\n",
        "dialects/tile.py": "",
        "layout/__init__.py": "Layout = 1\n",
        "layout/atoms.py": "",
        "ir/context.py": "",
        "api.py": "",
    })
    assert _edges(pkg) == {
        ("tilec.runtime", "tilec.runtime.a", False),
        ("tilec.runtime.a", "tilec.runtime.b", False),
        ("tilec.runtime.a", "tilec.api", False),
        ("tilec.runtime.a", "tilec.dialects.tile", False),
        ("tilec.runtime.a", "tilec.dialects", False),
        ("tilec.runtime.b", "tilec.layout.atoms", False),
        ("tilec.runtime.b", "tilec.layout", False),
        ("tilec.runtime.b", "tilec.ir.context", False),
    }


def test_finds_cycles_through_imports_inside_functions(tmp_path):
    pkg = _package(tmp_path, {
        "api.py": "import tilec.compile_cache\n",
        "compile_cache.py": "def f():\n    from tilec.api import compile  # lazy: 1 ms\n",
        "layout/a.py": "from tilec.layout import b\n",
        "layout/b.py": "from tilec.layout.a import x\n",
        "runtime/x.py": "from tilec.runtime import x\n",  # a module importing itself is no cycle
    })
    cycles = import_cycles(scan(pkg))
    assert [c.modules for c in cycles] == [["tilec.api", "tilec.compile_cache"]]
    assert [(i.where(), i.in_function) for i in cycles[0].imports] == [
        ("tilec/api.py:1", False), ("tilec/compile_cache.py:2", True),
    ]


def test_a_cycle_reaching_out_of_layout_is_reported(tmp_path):
    pkg = _package(tmp_path, {
        "layout/a.py": "from tilec.ir import c\n",
        "ir/c.py": "from tilec.layout import a\n",
    })
    assert [c.modules for c in import_cycles(scan(pkg))] == [["tilec.ir.c", "tilec.layout.a"]]


def test_upward_imports_and_imports_of_the_package(tmp_path):
    pkg = _package(tmp_path, {
        "__init__.py": "from tilec.tools import cli\nimport tilec.api\n",  # the top may import anything
        "ir/fast.py": "def f():\n    from tilec.passes import p  # lazy: 3 ms\n",
        "passes/p.py": "from tilec.ir import fast\nfrom tilec.layout import x\n",
        "api.py": "from tilec import compile_cache\n",  # same layer, and a submodule of tilec: fine
        "compile_cache.py": "from tilec.api import compile\n",
        "tools/cli.py": "import tilec\nfrom tilec import __version__\nfrom tilec.gone import x\n",
        "layout/x.py": "",
        "loose.py": "",
    })
    found = sorted((v.kind, str(v)) for v in upward_imports(scan(pkg)))
    assert found == [
        ("missing", "tilec/tools/cli.py:3: tilec.tools.cli imports tilec.gone, which is no module of the package "
                    "(moved or deleted?)"),
        ("package", "tilec/tools/cli.py:1: tilec.tools.cli imports the package tilec itself: "
                    "import the submodule that defines the name"),
        ("package", "tilec/tools/cli.py:2: tilec.tools.cli imports the package tilec itself: "
                    "import the submodule that defines the name"),
        ("unplaced", "tilec/loose.py: tilec.loose is in no layer"),
        ("upward", "tilec/ir/fast.py:2: tilec.ir.fast (tilec.ir) imports tilec.passes.p (tilec.passes) "
                   "(inside a function)"),
    ]


def test_layers_are_in_the_agreed_order():
    order = ["tilec.layout", "tilec.ir", "tilec.dialects", "tilec.passes", "tilec.codegen", "tilec.runtime",
             "tilec.interp", "tilec.api", "tilec.kernels", "tilec.tools"]
    assert [layer_of(m) for m in order] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert layer_of("tilec.compile_cache") == layer_of("tilec.api")
    assert layer_of("tilec.ir.context") == 1 and layer_of("tilec.irx") is None
    assert layer_of("tilec") == len(LAYERS)


def test_in_function_imports_and_their_reasons(tmp_path):
    pkg = _package(tmp_path, {
        "runtime/a.py": '''\
            from typing import TYPE_CHECKING

            if TYPE_CHECKING:
                from tilec.runtime import b


            class K:
                import json  # class bodies run at import: not inside a function


            def f():
                import numpy  # lazy: saves 80 ms of import time
                # lazy: matplotlib takes ~0.7 s
                import matplotlib
                from matplotlib import colors

                from tilec.runtime import b
                import torch  # optional: torch may not be installed
                import os  # noqa: PLC0415
                import sys  # noqa: PLC0415  # lazy: 1 ms
                # lazy: it is faster
                import re

                def g():
                    import importlib

                    return importlib.import_module("tilec.runtime.b")  # lazy: 2 ms
            ''',
        "runtime/b.py": "",
    })
    package = scan(pkg)
    inner = [(i.line, i.target) for i in in_function_imports(package)]
    assert inner == [(12, "numpy"), (14, "matplotlib"), (15, "matplotlib"), (17, "tilec.runtime.b"), (18, "torch"),
                     (19, "os"), (20, "sys"), (22, "re"), (25, "importlib"), (27, "tilec.runtime.b")]
    problems = {i.line: p for i, p in unexplained_in_function_imports(package)}
    assert set(problems) == {17, 19, 22, 25}
    assert "no '# <reason>: ...' comment" in problems[17]  # a blank line ends a run of imports under one comment
    assert "'noqa:' is not a reason" in problems[19]  # and a comment of its own ends it too (line 20 has a reason)
    assert "measured" in problems[22]
    reasons = {i.line: i.reason for i in in_function_imports(package)}
    assert reasons[15] == "lazy: matplotlib takes ~0.7 s" and reasons[18].startswith("optional:")
    assert reasons[20] == "lazy: 1 ms" and reasons[27] == "lazy: 2 ms"
    assert {(i.line, i.in_function) for i in package.imports if i.is_tilec} == {(4, False), (17, True), (27, True)}


def test_the_script_prints_and_fails_on_cycles_and_upward_imports(tmp_path):
    bad = _package(tmp_path / "bad", {
        "ir/a.py": "from tilec.passes import b\n",
        "passes/b.py": "def f():\n    import tilec.ir.a\n",
    })
    done = subprocess.run([sys.executable, str(SCRIPT), str(bad)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "== 1. import cycles outside tilec.layout: 1" in out
    assert "tilec/ir/a.py:1: tilec.ir.a -> tilec.passes.b" in out
    assert "tilec/passes/b.py:2: tilec.passes.b -> tilec.ir.a  [in function]" in out
    assert "== 2. layering: 1 upward imports, 0 imports of the package itself, 0 modules in no layer, 0 imports" in out
    assert "== 3. imports inside functions: 1 (1 of tilec modules, 0 of others); 1 without a reason" in out
    assert "tilec/passes/b.py:2: tilec.ir.a  -- MISSING REASON" in out
    assert out.rstrip().endswith("FAILED")


def test_the_script_passes_a_clean_package_unless_strict(tmp_path, capsys):
    good = _package(tmp_path, {
        "ir/a.py": "",
        "passes/b.py": "def f():\n    import tilec.ir.a\n",
    })
    assert main([str(good)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("OK")
    assert main(["--strict", str(good)]) == 1
    assert report(scan(good), strict=True)[1] == 1
    assert main(["--bogus"]) == 2
