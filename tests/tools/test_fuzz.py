"""The tile-opt fuzzer (tilec/tools/fuzz.py, bench/fuzz.py): mutators,
classifier, runner, worker pool, and a small fixed-seed campaign that must
find no internal error and no hang."""

from __future__ import annotations

import importlib.util
import os
import random
import re
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import xdsl

import tilec
from tilec.tools import fuzz

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
func.func @f(%a: i32) -> i32 {
  %c = arith.constant 0 : i32
  %r = arith.addi %a, %c : i32
  func.return %r : i32
}
"""

# A bit of everything the mutators look for.
SAMPLE = """\
func.func @k(%g: !tile.gl<f16, [?, ?]>, %i: index) attributes {l = #tile.layout<Sw<3,3,3> o 0 o (8,64):(64,1)>} {
  %s = tile.alloc : !tile.st<16x16xf16, ((2,8),16):((8,1),16)>
  %t = tile.load %g[%i, %i] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x16xf32, (4,8):(1,4)>
  %m = tile.row_max %t : !tile.rt<16x16xf32, (4,8):(1,4)> -> !tile.rv<16xf32>
  func.return
}
"""


@pytest.fixture(scope="module")
def seeds() -> list[fuzz.Seed]:
    return fuzz.collect_seeds(ROOT)


def apply(name: str, seed: int, text: str = SAMPLE, donor: str = GOOD) -> str | None:
    return fuzz.MUTATORS[name](random.Random(seed), text, donor)


def outputs(name: str, n: int = 200, text: str = SAMPLE) -> list[str]:
    """What mutator ``name`` makes of ``text`` for rng seeds 0..n-1 (where it applies)."""
    return [out for s in range(n) if (out := apply(name, s, text)) is not None]


# -- seeds --------------------------------------------------------------------


def test_seeds_are_split_chunks_without_comment_lines(seeds: list[fuzz.Seed]) -> None:
    assert len(seeds) > 100
    assert any(s.name.startswith("examples/") for s in seeds)
    assert any(s.name.endswith("#3") for s in seeds)  # a lit file cut at `// -----`
    for s in seeds:
        assert fuzz.SPLIT_MARKER not in s.text and "// RUN:" not in s.text and "// CHECK" not in s.text
    assert len({s.text for s in seeds}) == len(seeds)


def test_split_and_strip() -> None:
    assert fuzz.split_chunks("a\n// -----\nb\n") == ["a\n", "\nb\n"]
    assert fuzz.strip_comment_lines("// RUN: x\nfunc.func @f() // keep\n  // CHECK: y\n") == "func.func @f() // keep\n"


# -- mutators -----------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(fuzz.MUTATORS))
def test_mutator_is_deterministic_and_changes_the_text(name: str) -> None:
    assert [apply(name, s) for s in range(20)] == [apply(name, s) for s in range(20)]
    assert any(out != SAMPLE for out in outputs(name, 20))


def test_mutators_that_do_not_apply_say_so() -> None:
    assert apply("corrupt_swizzle", 0, GOOD) is None
    assert apply("corrupt_layout", 0, GOOD) is None
    assert apply("truncate", 0, "") is None


def test_change_integer_reaches_the_limits() -> None:
    numbers = {int(n) for out in outputs("change_integer", 600) for n in re.findall(r"-?\d+", out)}
    for value in (0, -1, 1, 2**31, 2**63, 10**30):
        assert value in numbers


def test_change_integer_leaves_names_alone() -> None:
    text = "%c16 = arith.constant 7 : i32\n"
    for out in outputs("change_integer", 50, text):
        assert out.startswith("%c16 = arith.constant ") and out.endswith(" : i32\n")


def test_change_integer_changes_shape_dimensions() -> None:
    dims = {m for out in outputs("change_integer", 600) for m in re.findall(r"!tile\.st<(-?\d+x-?\d+)x", out)}
    assert len(dims - {"16x16"}) > 3


def test_change_element_type_changes_types_not_names() -> None:
    text = "func.func @f32(%f16: f16) -> vector<4xf16>\n"
    outs = outputs("change_element_type", 100, text)
    assert all(out.startswith("func.func @f32(%f16: ") for out in outs)
    assert any("f80" in out for out in outs) and any("xbf16>" in out for out in outs)


def test_corrupt_swizzle() -> None:
    outs = outputs("corrupt_swizzle", 200)
    assert sum("Sw<3,3,3>" not in out for out in outs) > 0.9 * len(outs)
    firsts = {int(m) for out in outs for m in re.findall(r"Sw<(-?\d+),3,3>", out)}
    assert {0, -1, 2**31} & firsts and max(firsts) >= 2**63
    assert any(re.search(r"Sw<\d+,\d+>", out) for out in outs)  # wrong arity


def test_layout_spans_find_nested_layouts() -> None:
    spans = [SAMPLE[a:b] for a, _, b in fuzz.layout_spans(SAMPLE)]
    assert "((2,8),16):((8,1),16)" in spans and "(4,8):(1,4)" in spans and "(8,64):(64,1)" in spans


def test_corrupt_layout_nests_deeply_and_mismatches_ranks() -> None:
    outs = outputs("corrupt_layout", 300)
    assert any("(" * 100 in out for out in outs)
    assert any("(4):(1,4)" in out or "((2,8)):((8,1),16)" in out for out in outs)


def test_near_miss_op_names() -> None:
    outs = outputs("near_miss_op_name", 300)
    names = {m for out in outs for m in re.findall(r"tile\.\w*|frag\.\w*", out)}
    assert "tile.lod" in names and "tile.row_maxx" in names and "frag.load" in names


def test_mutate_text_records_what_it_applied() -> None:
    text, applied = fuzz.mutate_text(random.Random(3), SAMPLE, GOOD, 3)
    assert len(applied) == 3 and set(applied) <= set(fuzz.MUTATORS) and text != SAMPLE


def test_bad_pass_options() -> None:
    rng = random.Random(0)
    ptx = [fuzz.mutate_ptx_args(rng) for _ in range(400)]
    assert all(args[0] == "-p" and args[2] == "-t" for args in ptx)
    passes = " ".join(args[1] for args in ptx)
    for text in ("block=0,0,0", "stages=0", "stages=1000", "warps=3,1", "thread_tile=-1,4",
                 "max_bits=-1", "stages=2 stages=3"):  # fmt: skip
        assert text in passes
    assert fuzz.mode_args(rng, "parse", True) == ()
    assert fuzz.mode_args(rng, "ptx", False) == fuzz.MODES["ptx"]
    assert all("tile-to-llvm" in fuzz.mutate_llvm_args(rng)[1] for _ in range(50))


def test_make_case_is_deterministic(seeds: list[fuzz.Seed]) -> None:
    cases = [fuzz.make_case(seeds, 7, i, "ptx") for i in range(30)]
    assert cases == [fuzz.make_case(seeds, 7, i, "ptx") for i in range(30)]
    assert cases != [fuzz.make_case(seeds, 8, i, "ptx") for i in range(30)]
    assert any("pass_options" in c.mutations for c in cases)
    plain = [
        (fuzz.make_case(seeds, 7, i, "parse"), c) for i, c in enumerate(cases) if "pass_options" not in c.mutations
    ]
    assert plain and all(p.text == c.text and p.origin == c.origin for p, c in plain)


# -- classifier -----------------------------------------------------------------

TILEC_DIR = Path(tilec.__file__).parent
XDSL_DIR = Path(xdsl.__file__).parent

TRACEBACK = f"""\
Traceback (most recent call last):
  File "{XDSL_DIR}/parser/core.py", line 10, in parse_op
    return self.parse_attr()
  File "{XDSL_DIR}/parser/core.py", line 20, in parse_attr
    raise KeyError("x")
KeyError: 'x'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "{TILEC_DIR}/tools/tile_opt.py", line 5, in main
    status = TileOptMain(args=args).run()
  File "{TILEC_DIR}/layout/swizzle.py", line 32, in __init__
    self.mask = int(text)
  File "/usr/lib/python3.11/functools.py", line 99, in helper
    return f()
ValueError: too many digits
second line of the message
tile-opt: internal error: ValueError: too many digits
"""


def test_classify() -> None:
    assert fuzz.classify(0, "") == "accepted"
    assert fuzz.classify(1, "in.mlir:3:7: error: 'tile.lod' is not registered\n") == "located"
    assert fuzz.classify(1, "pass-pipeline:1:14: error: unknown pass 'x'\n") == "located"
    assert fuzz.classify(1, "in.mlir: error: 'tile.row_sum' at in.mlir:5:8: no\n") == "unlocated"
    assert fuzz.classify(1, "tile-opt: error: invalid options for target 'ptx'\n") == "unlocated"
    assert fuzz.classify(1, "tile-opt: internal error while parsing: OverflowError: x\n") == "internal"
    assert fuzz.classify(1, TRACEBACK) == "internal"
    assert fuzz.classify(0, TRACEBACK) == "internal"
    assert fuzz.classify(2, "") == "internal"
    assert fuzz.classify(None, "") == "internal"
    assert fuzz.classify(0, "", timed_out=True) == "hang"


def test_signature_is_the_last_exception_and_its_innermost_project_frame() -> None:
    outcome = fuzz.describe("internal", 1, 0.1, TRACEBACK, "in.mlir")
    assert outcome.signature == "ValueError @ tilec/layout/swizzle.py:32 in __init__"
    assert outcome.message == "ValueError: too many digits"
    assert outcome.frame == "functools.py:99 in helper: return f()"


def frame(name: str, package_dir: Path = TILEC_DIR) -> fuzz.Frame:
    return fuzz.Frame(f"{package_dir}/layout/{name}.py", 1, name, "")


def test_a_hang_is_named_by_the_deepest_function_every_sample_is_in() -> None:
    outer, loop = frame("outer"), frame("loop")
    stacks = [[outer, loop, frame("a")], [outer, loop, loop, frame("b")], [outer, loop]]
    assert fuzz.stuck_frame(stacks) == loop
    timeout = fuzz.FuzzTimeout("no result after 1 s", stacks)
    assert fuzz.describe_hang(timeout, 1.0).signature == "Hang @ tilec/layout/loop.py in loop"


def test_a_recursion_is_named_by_the_recursing_function() -> None:
    text = (
        "Traceback (most recent call last):\n"
        f'  File "{TILEC_DIR}/ir/parser.py", line 3, in parse\n'
        f'  File "{XDSL_DIR}/parser/core.py", line 9, in parse_type\n'
        "  [Previous line repeated 900 more times]\n"
        f'  File "{XDSL_DIR}/utils/lexer.py", line 5, in lex\n'
        "RecursionError: maximum recursion depth exceeded\n"
    )
    assert fuzz.describe("internal", 1, 0, text, "x").signature == "RecursionError @ xdsl/parser/core.py in parse_type"


def test_unlocated_messages_are_grouped_by_pattern() -> None:
    a_err = "/t/a.mlir: error: tile-distribute: 'tile.row_sum' at /t/a.mlir:5:8: f64\n"
    b_err = "/t/b.mlir: error: tile-distribute: 'tile.row_max' at /t/b.mlir:9:2: f16\n"
    a = fuzz.describe("unlocated", 1, 0, a_err, "/t/a.mlir")
    b = fuzz.describe("unlocated", 1, 0, b_err, "/t/b.mlir")
    assert a.signature == b.signature == "unlocated: FILE: error: tile-distribute: '…' at FILE:N:N: fN"


# -- running cases -----------------------------------------------------------------


def run(text: str, mode: str = "parse", args: tuple[str, ...] | None = None, timeout: float = 20.0) -> fuzz.Outcome:
    return fuzz.run_case(fuzz.Case(text, fuzz.MODES[mode] if args is None else args, mode), timeout)


def test_good_input_is_accepted() -> None:
    assert run(GOOD).kind == "accepted"


def test_misspelt_op_is_located() -> None:
    outcome = run(GOOD.replace("arith.addi", "tile.lod"))
    assert outcome.kind == "located", outcome.stderr
    assert "tile.lod" in outcome.message and outcome.signature == ""


def test_bad_target_option_is_located_in_the_target_text() -> None:
    outcome = run(GOOD, "ptx", ("-t", "ptx{arch=sm_1}"))
    assert outcome.kind == "located" and "sm_1" in outcome.message and "target:1:5:" in outcome.stderr


def test_internal_error_is_caught_and_signed(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilec.tools.tile_opt import TileOptMain

    def boom(self: TileOptMain) -> int:
        raise IndexError("boom")

    monkeypatch.setattr(TileOptMain, "run", boom)
    outcome = run(GOOD)
    assert outcome.kind == "internal"
    assert outcome.signature.startswith("IndexError @ tilec/tools/tile_opt.py:")
    assert outcome.message == "IndexError: boom"


def test_a_loop_is_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    def spin(argv: object) -> None:
        while True:
            pass

    monkeypatch.setattr(fuzz, "call_main", spin)
    start = time.monotonic()
    outcome = run(GOOD, timeout=0.3)
    assert outcome.kind == "hang" and time.monotonic() - start < 5
    assert outcome.signature == "Hang" and "spin" in outcome.stderr  # the test's frames are not tilec's
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


# -- worker pool ---------------------------------------------------------------------


def _misbehave(argv: list[str]) -> tuple[int | None, str, str]:
    """call_main, except for the inputs 'abort' (the process dies) and 'block'
    (SIGALRM blocked: only the parent can stop it)."""
    text = Path(argv[0]).read_text()
    if text == "abort":
        os.write(2, b"LLVM ERROR: pretend\n")
        os.abort()
    if text == "block":
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])
        time.sleep(60)
    return _original_call_main(argv)


_original_call_main = fuzz.call_main


def test_pool_survives_dead_and_stuck_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz, "call_main", _misbehave)  # inherited by the forked workers
    cases = [fuzz.Case(t, (), "parse") for t in ("abort", GOOD, "block", GOOD)]
    with fuzz.WorkerPool(workers=2, timeout=0.5, grace=1.0) as pool:
        results = {n: o for n, _, o in pool.run(cases)}
    assert results[0].kind == "internal"
    assert results[0].signature == "worker died (signal 6): LLVM ERROR: pretend"  # no tilec frame: a test's
    assert results[2].kind == "hang" and "worker killed" in results[2].signature
    assert results[1].kind == results[3].kind == "accepted"


def test_minimize_keeps_the_failure() -> None:
    text = GOOD.replace("arith.addi", "tile.lod")
    small = fuzz.minimize(text, lambda t: "tile.lod" in t and "func.return" in t, budget=10)
    assert "tile.lod" in small and len(small) < len(text) / 2


def test_campaign_script_writes_a_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = importlib.util.spec_from_file_location("bench_fuzz", ROOT / "bench" / "fuzz.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_fuzz", bench)  # its dataclasses look themselves up there
    spec.loader.exec_module(bench)
    assert bench.main(["--inputs", "4", "--modes", "parse", "--out", str(tmp_path), "--minimize", "0"]) == 0
    summary = (tmp_path / "summary.md").read_text()
    assert re.search(r"\| parse +\| 4 +\|", summary)


# -- the fixed-seed campaign ------------------------------------------------------

CORPUS_SEED = 2024
CORPUS_RUNS = {"parse": 300, "ptx": 40}


def test_fixed_seed_corpus_has_no_internal_errors_or_hangs(seeds: list[fuzz.Seed]) -> None:
    """300 mutants in parse mode and 40 in ptx mode: every one must end in a
    diagnostic or be accepted. Failing groups are listed with a way to rerun them."""
    cases = [fuzz.make_case(seeds, CORPUS_SEED, i, mode) for mode, n in CORPUS_RUNS.items() for i in range(n)]
    numbers = [i for n in CORPUS_RUNS.values() for i in range(n)]
    fuzz.warm_up()
    bad: dict[str, list[str]] = {}
    kinds: Counter[str] = Counter()
    with fuzz.WorkerPool(workers=2, timeout=5.0) as pool:
        for n, case, outcome in pool.run(cases):
            kinds[outcome.kind] += 1
            if outcome.kind in ("internal", "hang"):
                bad.setdefault(outcome.signature, []).append(
                    f"make_case(seeds, {CORPUS_SEED}, {numbers[n]}, {case.mode!r}) "
                    f"from {case.origin} via {'+'.join(case.mutations)}: {outcome.message[:120]}"
                )
    assert kinds["accepted"] > 0 and kinds["located"] > 0
    report = "\n".join(f"{sig} ({len(ex)} runs)\n    e.g. {ex[0]}" for sig, ex in sorted(bad.items()))
    assert not bad, f"{sum(map(len, bad.values()))} internal errors / hangs in {len(bad)} groups:\n{report}"
