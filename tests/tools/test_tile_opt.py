"""tile-opt: entry points, clean errors, and the pass/target registry."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tilec
from tilec.passes import registry
from tilec.tools.tile_opt import TileOptMain, ToolError, main

VALID = """\
func.func @f(%a: i32) -> i32 {
  %c = arith.constant 0 : i32
  %r = arith.addi %a, %c : i32
  func.return %r : i32
}
"""

PARSE_ERROR = """\
func.func @f(%a: i32) -> i32 {
  %r = arith.addi %a, %nowhere : i32
  func.return %r : i32
}
"""

VERIFY_ERROR = """\
func.func @f(%a: i32) -> i64 {
  func.return %a : i32
}
"""


def tile_opt(*args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m tilec.tools.tile_opt`` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "tilec.tools.tile_opt", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
    )


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def assert_clean_failure(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""
    return proc.stderr


# -- subprocess: entry points and errors ---------------------------------------


def test_roundtrip_and_canonicalize(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    proc = tile_opt(path, "-p", "canonicalize,cse")
    assert proc.returncode == 0, proc.stderr
    assert "func.return %a : i32" in proc.stdout
    assert "arith.addi" not in proc.stdout


def test_stdin_input() -> None:
    proc = tile_opt(input=VALID)
    assert proc.returncode == 0, proc.stderr
    assert "%r = arith.addi %a, %c : i32" in proc.stdout


def test_version() -> None:
    proc = tile_opt("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"tile-opt from tilec {tilec.__version__}, built on xdsl 0.74")


def test_parse_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.mlir", PARSE_ERROR)
    err = assert_clean_failure(tile_opt(path))
    assert err.startswith(f"{path}:2:23: error: use of undefined value '%nowhere'\n")
    assert "  %r = arith.addi %a, %nowhere : i32\n" + " " * 22 + "^" * 8 in err


def test_verifier_error(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.mlir", VERIFY_ERROR)
    err = assert_clean_failure(tile_opt(path))
    assert err.startswith(
        f"{path}:2:3: error: 'func.return' op Expected arguments to have the same types "
        "as the function output types: expected [i64], got [i32]\n"
    )


def test_unknown_pass_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    err = assert_clean_failure(tile_opt(path, "-p", "canonicalize,tile-no-such-pass"))
    assert "pass-pipeline:1:14: error: unknown pass 'tile-no-such-pass'" in err


def test_unknown_pass_suggests(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    err = assert_clean_failure(tile_opt(path, "-p", "canonicalise"))
    assert "did you mean 'canonicalize'" in err


def test_bad_pass_option(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    err = assert_clean_failure(tile_opt(path, "-p", "canonicalize{bogus=1}"))
    assert "error: invalid options for pass 'canonicalize'" in err
    assert "bogus" in err


def test_pipeline_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    err = assert_clean_failure(tile_opt(path, "-p", "cse{"))
    assert err.startswith("pass-pipeline:1:5: error: Expected argument name here\ncse{\n")


def test_unknown_target(tmp_path: Path) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    err = assert_clean_failure(tile_opt(path, "-t", "no-such-target"))
    assert "tile-opt: error: unknown target 'no-such-target'" in err


def test_bad_flag_and_missing_file(tmp_path: Path) -> None:
    err = assert_clean_failure(tile_opt("--no-such-flag"))
    assert "tile-opt: error: unrecognized arguments: --no-such-flag" in err
    err = assert_clean_failure(tile_opt(str(tmp_path / "missing.mlir")))
    assert "cannot read input file" in err


def test_console_script(tmp_path: Path) -> None:
    script = shutil.which("tile-opt", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("the tile-opt console script is not installed next to this Python")
    proc = subprocess.run([script, write(tmp_path, "ok.mlir", VALID)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "func.func @f" in proc.stdout


def test_tile_dialect_is_registered() -> None:
    proc = tile_opt(input="func.func @k() {\n  tile.barrier\n  func.return\n}\n")
    assert proc.returncode == 0, proc.stderr
    assert "tile.barrier" in proc.stdout


# -- in process: the registry ---------------------------------------------------

TEST_PASSES = '''
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from tilec.passes.registry import PipelinePass


@dataclass(frozen=True)
class TagPass(ModulePass):
    name = "test-tag"
    tag: str = "none"
    sizes: tuple[int, ...] = (1,)

    def apply(self, ctx, op):
        old = op.attributes.get("test.tags")
        text = (old.data + ";" if old else "") + f"{self.tag}:{'x'.join(map(str, self.sizes))}"
        op.attributes["test.tags"] = StringAttr(text)


@dataclass(frozen=True)
class TagTwice(PipelinePass):
    name = "test-tag-twice"
    tag: str = "t"

    def pipeline(self):
        return f"test-tag{{tag={self.tag}1}},test-tag{{tag={self.tag}2}}"


@dataclass(frozen=True)
class BoomPass(ModulePass):
    name = "test-boom"

    def apply(self, ctx, op):
        raise RuntimeError("boom")


@dataclass(frozen=True)
class FailPass(ModulePass):
    name = "test-fail"

    def apply(self, ctx, op):
        raise PassFailedException("cannot tile a 7x7 problem")


@dataclass(frozen=True)
class BreakPass(ModulePass):
    """Leaves invalid IR: every func.return loses its operands."""

    name = "test-break"

    def apply(self, ctx, op):
        for ret in list(op.walk()):
            if isinstance(ret, func.ReturnOp) and ret.operands:
                ret.parent_block().insert_op_before(func.ReturnOp(), ret)
                ret.parent_block().erase_op(ret)


@dataclass(frozen=True)
class WrongName(ModulePass):
    name = "test-something-else"

    def apply(self, ctx, op):
        pass
'''


@pytest.fixture
def test_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Registers the passes above (one line each, as real passes are)."""
    (tmp_path / "tilec_test_passes.py").write_text(TEST_PASSES)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name, cls in [
        ("test-tag", "TagPass"),
        ("test-tag-twice", "TagTwice"),
        ("test-boom", "BoomPass"),
        ("test-fail", "FailPass"),
        ("test-break", "BreakPass"),
        ("test-wrong-name", "WrongName"),
    ]:
        monkeypatch.setitem(registry.PASSES, name, f"tilec_test_passes:{cls}")
    monkeypatch.setitem(registry.PIPELINES, "test-tag-pipeline", "test-tag{tag=a},canonicalize,test-tag{tag=b sizes=2,3}")
    return tmp_path


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_registry_has_xdsl_and_tilec_passes(test_registry: Path) -> None:
    passes = registry.get_all_passes()
    for name in ["canonicalize", "cse", "test-tag", "test-tag-pipeline"]:
        assert name in passes
    assert "mlir" in registry.get_all_targets()


def test_real_registry_loads() -> None:
    """Every registered tilec pass and target imports and has the right name."""
    for name, factory in registry.get_tilec_passes().items():
        assert factory().name == name
    for name, factory in registry.get_tilec_targets().items():
        assert factory().name == name


def test_name_clash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.PASSES, "cse", "tilec_test_passes:TagPass")
    with pytest.raises(registry.RegistryError, match="'cse' is registered twice"):
        registry.get_all_passes()


def test_pass_options(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "test-tag{tag=hello sizes=128,128,32}")
    assert status == 0, err
    assert 'test.tags = "hello:128x128x32"' in out


def test_named_pipeline(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "test-tag-pipeline")
    assert status == 0, err
    assert 'test.tags = "a:1;b:2x3"' in out
    assert "arith.addi" not in out  # canonicalize ran in between


def test_pipeline_pass_with_options(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "test-tag-twice{tag=z},test-tag-pipeline")
    assert status == 0, err
    assert 'test.tags = "z1:1;z2:1;a:1;b:2x3"' in out
    passes = registry.build_pipeline("test-tag-twice{tag=q}").passes
    assert [p.name for p in passes[0].passes()] == ["test-tag", "test-tag"]  # pyright: ignore


def test_pass_failure_is_clean(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "test-fail")
    assert status == 1
    assert err.startswith(f"{path}: error: cannot tile a 7x7 problem\n")
    assert "note: while running pass 'test-fail'" in err
    assert "Traceback" not in err


def test_pass_breaking_ir_is_located(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "canonicalize,test-break")
    assert status == 1
    # The new func.return has no location: its closest located ancestor is shown.
    assert err.startswith(f"{path}:1:1: error: 'func.return' op Expected arguments")
    assert "note: the IR produced by pass 'test-break' does not verify" in err
    assert "Traceback" not in err


def test_pipeline_names_inner_pass(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(registry.PIPELINES, "test-broken-pipeline", "canonicalize,test-break,cse")
        status, out, err = run_main(capsys, path, "-p", "test-broken-pipeline")
    assert status == 1
    assert "after pass 'test-break' of pipeline 'test-broken-pipeline'" in err


def test_internal_error(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "test-boom")
    assert status == 1
    assert "tile-opt: internal error (while running pass 'test-boom'): RuntimeError: boom" in err
    assert "tilec_test_passes.py" in err  # where it was raised
    assert "Traceback" not in err
    status, out, err = run_main(capsys, path, "-p", "test-boom", "--show-traceback")
    assert status == 1
    assert "Traceback (most recent call last)" in err


def test_broken_registry_entry(test_registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(test_registry, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-p", "test-wrong-name")
    assert status == 1
    assert "RegistryError" in err and "expected 'test-wrong-name'" in err


def test_split_input_file_continues(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "split.mlir", VALID + "// -----\n" + VERIFY_ERROR + "// -----\n" + PARSE_ERROR)
    status, out, err = run_main(capsys, path, "--split-input-file")
    assert status == 1
    assert out.count("// -----") == 2 and "func.func @f(%a: i32) -> i32" in out
    # Locations are lines of the whole file.
    assert f"{path}:8:3: error: 'func.return' op" in err
    assert f"{path}:12:23: error: use of undefined value '%nowhere'" in err


def test_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "ok.mlir", VALID)
    status, out, err = run_main(capsys, path, "-o", str(tmp_path / "out.mlir"))
    assert status == 0 and out == ""
    assert "func.func @f" in (tmp_path / "out.mlir").read_text()


def test_command_line_errors_raise_in_process() -> None:
    with pytest.raises(ToolError, match="unknown target 'nope'"):
        TileOptMain(args=["-t", "nope"])


def test_verify_diagnostics_expected_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = textwrap.dedent(
        """\
        func.func @f(%a: i32) -> i64 {
          // expected-error @+1 {{expected [i64], got [i32]}}
          func.return %a : i32
        }
        """
    )
    path = write(tmp_path, "vd.mlir", text)
    status, out, err = run_main(capsys, path, "--verify-diagnostics")
    assert (status, err) == (0, "")
    path = write(tmp_path, "vd2.mlir", text.replace("[i32]}}", "[i8]}}"))
    status, out, err = run_main(capsys, path, "--verify-diagnostics")
    assert status == 1
    assert f"{path}:3:3: error: unexpected error: 'func.return' op" in err
    assert f"{path}:2:6: error: expected error \"expected [i64], got [i8]\" at line 3 was not produced" in err


def test_empty_chunks_are_empty_modules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "empty.mlir", "// nothing here\n// -----\n" + VALID + "// -----\n")
    status, out, err = run_main(capsys, path, "--split-input-file")
    assert (status, err) == (0, "")
    assert out.count("builtin.module {\n}\n") == 2 and "func.func @f" in out


def test_parsing_diagnostics_like_xdsl_opt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "bad.mlir", PARSE_ERROR)
    status, out, err = run_main(capsys, path, "--parsing-diagnostics")
    assert (status, err) == (0, "")
    assert f"{path}:2:23: error: use of undefined value '%nowhere'" in out
