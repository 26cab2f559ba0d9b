"""``tile-opt``: xdsl-opt with tilec's dialects, passes, pipelines and targets.

    tile-opt kernel.mlir -p 'tile-tiling{block=128,128,32},canonicalize' -t mlir
    python -m tilec.tools.tile_opt kernel.mlir --split-input-file --verify-diagnostics

Every flag of ``xdsl-opt`` is kept. What differs:

* every parsed operation gets a ``loc("file":line:col)`` (as in mlir-opt; it is
  printed only with ``--print-debuginfo``), so verifier errors point into the
  source;
* errors are diagnostics, never Python tracebacks: parse errors, verifier
  errors, pass failures, unknown passes or targets, bad pass options, missing
  files all print ``file:line:col: error: message`` (plus the source line) on
  stderr and exit with status 1. A bug (an unexpected exception) is reported as
  ``internal error`` with the place it was raised; ``--show-traceback`` prints
  the whole Python traceback instead;
* with ``--split-input-file`` every chunk is processed even after an error in
  an earlier one (as in mlir-opt); the exit status is 1 if any chunk failed;
  an empty input or chunk is an empty module (xDSL: "Could not parse entire
  input!"); a value used but never defined is reported at its first use (xDSL:
  at the end of the input);
* ``-t mlir{print-generic-format=true}`` keeps its options (xDSL 0.74
  overwrites them with the printing flags' defaults);
* ``--verify-diagnostics``: if the input contains ``expected-error``
  annotations (MLIR's syntax: ``// expected-error @+1 {{substring}}``, with
  ``@-N``, ``@above``, ``@below``, ``@unknown``, or none for the same line),
  the errors produced (parse and verifier errors alike) must match them one for
  one, as in mlir-opt; mismatches are reported on stderr and the exit status
  is 1. Without annotations it behaves as in xdsl-opt: the error is printed on
  stdout and the exit status is 0.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from io import BytesIO, StringIO
from itertools import accumulate
from typing import IO, ClassVar

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    ShrinkException,
    VerifyException,
)
from xdsl.universe import Universe
from xdsl.utils.lexer import Location
from xdsl.xdsl_opt_main import _empty_post_init  # pyright: ignore[reportPrivateUsage]
from xdsl.xdsl_opt_main import xDSLOptMain

from tilec.dialects import get_all_dialects as get_tilec_dialects
from tilec.ir.parser import LocatingParser
from tilec.ir.verify import verify as verify_op
from tilec.passes.registry import (
    PipelineSpecError,
    build_pipeline,
    format_arg_spec_error,
    get_all_passes,
    get_all_targets,
    repeated_options,
)
from tilec.version import __version__

PROG = "tile-opt"


# --------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------


class ToolError(Exception):
    """A command-line level error (bad flag value, unknown pass or target,
    unreadable file); its text is the complete diagnostic to print."""


@dataclass
class Diag:
    """One error: where, what, and notes (possibly multi-line, e.g. IR dumps)."""

    message: str
    kind: str
    """'parse' (a ParseError), 'diagnostic' (a DiagnosticException: verifier
    errors, failed passes) or 'internal' (any other exception: a bug)."""
    file: str
    """Name to print when there is no location."""
    location: Location | None = None
    length: int = 1
    """Number of characters to underline at the location."""
    notes: list[str] = field(default_factory=list[str])

    def format(self, source_lines: dict[str, list[str]]) -> str:
        where = str(self.location) if self.location is not None else self.file
        out = [f"{where}: error: {self.message}"]
        out += _source_context(self.location, self.length, source_lines)
        # One-line notes first, then IR dumps.
        for note in sorted(self.notes, key=lambda n: "\n" in n.strip()):
            note = note.rstrip("\n")
            if "\n" in note:
                out.append(f"{where}: note: IR at the point of failure:")
                out.append(note)
            else:
                out.append(f"{where}: note: {note}")
        return "\n".join(out) + "\n"


def _source_context(
    loc: Location | None, length: int, source_lines: dict[str, list[str]]
) -> list[str]:
    if loc is None:
        return []
    lines = source_lines.get(loc.file)
    if lines is None or not 1 <= loc.line <= len(lines):
        return []
    text = lines[loc.line - 1].rstrip("\r\n").expandtabs(1)
    col = max(loc.col, 1)
    width = max(1, min(length, len(text) - col + 1))
    return [text, " " * (col - 1) + "^" * width]


def _op_location(op: Operation) -> Location | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return Location(loc.filename.data, loc.line.data, loc.column.data)
    return None


def _internal_error_text(e: BaseException, context: str, show_traceback: bool) -> str:
    if show_traceback:
        return "".join(traceback.format_exception(e)) + f"{PROG}: internal error{context}\n"
    frames = traceback.extract_tb(e.__traceback__)
    where = f" (raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return (
        f"{PROG}: internal error{context}: {type(e).__name__}: {e}{where}\n"
        f"{PROG}: note: this is a bug in tilec or xDSL; rerun with --show-traceback "
        "for the Python traceback\n"
    )


# --------------------------------------------------------------------------
# expected-error annotations (--verify-diagnostics)
# --------------------------------------------------------------------------

_EXPECTED = re.compile(
    r"expected-(?P<kind>error|warning|remark|note)"
    r"(?:\s*@(?P<where>above|below|unknown|[+-]\d+))?"
    r"\s*\{\{(?P<msg>.*?)\}\}"
)


@dataclass
class Expectation:
    kind: str
    line: int | None
    """Absolute line the diagnostic must be on; None for @unknown."""
    message: str
    annotation_line: int
    annotation_col: int = 1
    annotation_length: int = 1
    matched: bool = False


def parse_expectations(lines: Sequence[str], first: int, last: int) -> list[Expectation]:
    """The expected-* annotations on lines first..last (1-based, inclusive)."""
    found: list[Expectation] = []
    for number in range(first, last + 1):
        for m in _EXPECTED.finditer(lines[number - 1]):
            where = m.group("where")
            target: int | None
            if where is None:
                target = number
            elif where == "unknown":
                target = None
            elif where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            else:
                target = number + int(where)
            found.append(
                Expectation(m.group("kind"), target, m.group("msg"), number, m.start() + 1, m.end() - m.start())
            )
    return found


# --------------------------------------------------------------------------
# The parser: attach file locations to operations
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# The tool
# --------------------------------------------------------------------------


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that raises ToolError (exit status 1 in main) instead of exiting 2."""

    def error(self, message: str):  # pyright: ignore[reportIncompatibleMethodOverride]
        raise ToolError(f"{self.format_usage()}{PROG}: error: {message}")


@dataclass
class _Stage:
    what: str
    """'parse', 'verify', 'run', 'emit'."""
    pass_: ModulePass | None = None

    def note(self) -> str | None:
        if self.what == "verify" and self.pass_ is not None:
            return f"the IR produced by pass '{self.pass_.name}' does not verify"
        if self.what == "run" and self.pass_ is not None:
            return f"while running pass '{self.pass_.name}'"
        if self.what == "emit":
            return "while emitting the output"
        return None


class TileOptMain(xDSLOptMain):
    """xDSLOptMain with tilec's dialects, passes and targets, and clean errors."""

    version_format: ClassVar[str] = (
        f"{PROG} from tilec {__version__}, built on xdsl {{xdsl_version}}"
    )

    def __init__(
        self,
        description: str = "tilec modular optimizer driver",
        args: Sequence[str] | None = None,
    ):
        # Same steps as xDSLOptMain.__init__, but every failure is a ToolError
        # (no argparse exit 2, no traceback from pipeline or target parsing).
        self.available_frontends = {}
        self.available_passes = {}
        self.available_targets = {}
        self._source_lines: dict[str, list[str]] = {}
        self._stage = _Stage("parse")
        self._line_offset = 0
        self._keep_ir_dumps = False

        self.ctx = Context()
        self.register_all_dialects()
        self.register_all_frontends()
        self.register_all_passes()
        self.register_all_targets()

        arg_parser = _ArgumentParser(prog=PROG, description=description)
        self.register_all_arguments(arg_parser)
        self.args = arg_parser.parse_args(args=args)

        self._check_target()
        self.ctx.allow_unregistered = self.args.allow_unregistered_dialect
        if self.args.disable_verify:
            Attribute.__post_init__ = _empty_post_init
        if self.args.syntax_highlight:
            Diagnostic.colored = True
        self.setup_pipeline()

    # -- registration ------------------------------------------------------

    def register_all_dialects(self):
        # every dialect xdsl-opt loads, and tilec's, all lazily; tilec's llvm (xDSL's with the
        # ops xDSL lacks, so lowered IR parses back) replaces xDSL's
        dialects = {**Universe.get_multiverse().all_dialects, **get_tilec_dialects()}
        for name, factory in dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_frontends(self):
        def parse_mlir(io: IO[bytes]) -> ModuleOp:
            return LocatingParser(
                self.ctx, io.read(), self.get_input_name(), self._line_offset
            ).parse_module(not self.args.no_implicit_module)

        self.available_frontends["mlir"] = parse_mlir

    def register_all_passes(self):
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        self.available_targets.update(get_all_targets())

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        for action in arg_parser._actions:  # pyright: ignore[reportPrivateUsage]
            if action.dest == "verify_diagnostics":
                action.help = (
                    "Check the errors against the input's `expected-error @+N {{...}}` "
                    "annotations (as mlir-opt does); without annotations, print the "
                    "error on stdout and exit with code 0 (as xdsl-opt does)"
                )
        arg_parser.add_argument(
            "--show-traceback",
            default=False,
            action="store_true",
            help="On an internal error, print the Python traceback",
        )

    # -- command line checks -----------------------------------------------

    def _check_target(self) -> None:
        text = self.args.target
        try:
            spec = parse_spec(text)
        except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
            # located in the -t text, as the option errors below are
            located = format_arg_spec_error(e).replace("pass-pipeline:", "target:", 1)
            head, _, context = located.partition("\n")
            raise ToolError(f"{head.replace(': error: ', f': error: invalid target {text!r}: ', 1)}\n{context}"
                            if ": error: " in head else f"target:1:1: error: invalid target {text!r}: {located}") from None
        (repeated,) = repeated_options(text, 1)
        if repeated:
            col = text.find(repeated, text.find(repeated) + 1) + 1
            raise ToolError(f"target:1:{col}: error: target '{spec.name}' is given option '{repeated}' twice\n{text}\n"
                            f"{' ' * (col - 1)}^")
        if spec.name not in self.available_targets:
            raise ToolError(
                f"{PROG}: error: unknown target '{spec.name}' "
                f"(available: {', '.join(sorted(self.available_targets))})"
            )
        factory = self.available_targets[spec.name]
        if not inspect.signature(factory).parameters:  # new-style Target factory
            try:
                factory().from_spec(spec)  # pyright: ignore
            except (ValueError, TypeError) as e:
                # point into the -t text, as pipeline errors point into -p's: at the option named, else the target
                col = next((text.find(k) for k in spec.parameters if text.find(k) >= 0), 0) + 1
                raise ToolError(f"target:1:{col}: error: invalid options for target '{spec.name}': {e}\n{text}\n"
                                f"{' ' * (col - 1)}^") from None

    def setup_pipeline(self):
        start_timer = time.perf_counter()

        def callback(previous: ModulePass | None, module: ModuleOp, next_: ModulePass | None) -> None:
            nonlocal start_timer
            if self.args.time_passes and previous is not None:
                print(f"Pass {previous.name} took {time.perf_counter() - start_timer} seconds")
            if not self.args.disable_verify:
                self._stage = _Stage("verify", previous)
                verify_op(module)
            if previous and next_ and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            if next_ is not None:
                self._stage = _Stage("run", next_)
            if self.args.time_passes and next_ is not None:
                start_timer = time.perf_counter()

        try:
            self.pipeline = build_pipeline(self.args.passes, self.available_passes, callback)
        except PipelineSpecError as e:
            raise ToolError(str(e)) from None

    # -- input / output ----------------------------------------------------

    def prepare_input(self) -> tuple[list[tuple[IO[bytes], int]], str]:
        try:
            f, file_extension = self.get_input_stream()
            with f:
                data = f.read()
        except OSError as e:
            raise ToolError(
                f"{PROG}: error: cannot read input file '{self.args.input_file}': {e.strerror or e}"
            ) from None
        self._source_lines[self.get_input_name()] = data.decode("utf-8", "replace").split("\n")
        if self.args.split_input_file:
            pieces = data.split(b"// -----")
            offsets = accumulate([0, *[p.count(b"\n") for p in pieces[:-1]]])
            chunks = [(BytesIO(p), off) for p, off in zip(pieces, offsets, strict=True)]
        else:
            chunks = [(BytesIO(data), 0)]
        if self.args.frontend:
            file_extension = self.args.frontend
        if file_extension not in self.available_frontends:
            raise ToolError(
                f"{PROG}: error: unrecognized file extension '{file_extension}' of "
                f"'{self.get_input_name()}' (use -f {'/'.join(self.available_frontends)})"
            )
        return chunks, file_extension

    def prepare_output(self) -> IO[str]:
        try:
            return super().prepare_output()
        except OSError as e:
            raise ToolError(
                f"{PROG}: error: cannot open output file '{self.args.output_file}': {e.strerror or e}"
            ) from None

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        self._line_offset = start_offset
        return super().parse_chunk(chunk, file_extension, start_offset)

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """Print ``prog`` with the ``-t`` target.

        Unlike xDSLOptMain 0.74, the ``mlir`` target's own options
        (``-t mlir{print-generic-format=true}``) are kept: the printing flags
        (``--print-op-generic`` ...) are or-ed in instead of overwriting them."""
        spec = parse_spec(self.args.target)
        factory = self.available_targets[spec.name]
        if inspect.signature(factory).parameters:  # old-style (module, stream) target
            return super().output_resulting_program(prog)
        target = factory().from_spec(spec)  # pyright: ignore
        if spec.name == "mlir":
            flags = {
                "print_generic_format": self.args.print_op_generic,
                "print_properties_as_attributes": self.args.print_no_properties,
                "print_debuginfo": self.args.print_debuginfo,
                "syntax_highlight": self.args.syntax_highlight,
            }
            target = dataclasses.replace(
                target, **{k: v or getattr(target, k) for k, v in flags.items()}
            )
        output = StringIO()
        target.emit(self.ctx, prog, output)
        return output.getvalue()

    # -- running -----------------------------------------------------------

    def run(self) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Process the input; return the exit status (0 or 1).

        Raises ToolError for command-line level failures (unreadable files)."""
        chunks, file_extension = self.prepare_input()
        input_name = self.get_input_name()
        lines = self._source_lines[input_name]
        check_expected = self.args.verify_diagnostics and any(_EXPECTED.search(line) for line in lines)
        # xdsl-opt's --verify-diagnostics prints the error with xDSL's dump of
        # the IR (tests check "Operation does not verify: ..." in it): keep it.
        self._keep_ir_dumps = self.args.verify_diagnostics and not check_expected
        output = self.prepare_output()
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                n_lines = chunk.getvalue().count(b"\n") + 1  # pyright: ignore[reportAttributeAccessIssue]
                text, diag = self._process_chunk(chunk, file_extension, offset)
                if text is not None:
                    output.write(text)
                output.flush()
                if diag is not None and diag.kind == "internal":
                    sys.stderr.write(diag.message)
                    failed = True
                elif check_expected:
                    last = min(offset + n_lines, len(lines))
                    expected = parse_expectations(lines, offset + 1, last)
                    failed |= not self._check_expectations(expected, diag)
                elif diag is None:
                    pass
                elif (self.args.verify_diagnostics and diag.kind == "diagnostic") or (
                    self.args.parsing_diagnostics and diag.kind == "parse"
                ):
                    # xdsl-opt's behaviour: the error is the expected output.
                    print(diag.format(self._source_lines), end="")
                else:
                    sys.stderr.write(diag.format(self._source_lines))
                    failed = True
        except ShrinkException:
            assert self.args.shrink
            print("Success, can shrink")
            return 0
        finally:
            if output is not sys.stdout:
                output.close()
        if self.args.shrink:
            print("Failure, can't shrink")
            return 1
        return 1 if failed else 0

    def _process_chunk(
        self, chunk: IO[bytes], file_extension: str, offset: int
    ) -> tuple[str | None, Diag | None]:
        """Parse, run the pipeline and print one chunk: (output, None) or (None, error)."""
        self._stage = _Stage("parse")
        module: ModuleOp | None = None
        try:
            module = self.parse_chunk(chunk, file_extension, offset)
            if module is None:
                return "", None
            self.apply_passes(module)
            self._stage = _Stage("emit")
            return self.output_resulting_program(module), None
        except ShrinkException:
            raise
        except ParseError as e:
            return None, self._parse_diag(e, offset)
        except DiagnosticException as e:
            return None, self._diagnostic_diag(e, module)
        except (Exception, ArgSpecParseError) as e:
            note = self._stage.note()
            context = f" ({note})" if note else (" while parsing" if self._stage.what == "parse" else "")
            return None, Diag(
                _internal_error_text(e, context, self.args.show_traceback), "internal", self.get_input_name()
            )
        finally:
            chunk.close()

    def _parse_diag(self, e: ParseError, offset: int) -> Diag:
        span = dataclasses.replace(e.span, line_offset=offset)
        diag = Diag(e.msg, "parse", self.get_input_name(), span.get_location(), max(1, span.end - span.start))
        if isinstance(e, MultipleSpansParseError):
            if e.ref_text:
                diag.notes.append(e.ref_text.strip())
            for ref_span, ref_msg in e.refs:
                ref = dataclasses.replace(ref_span, line_offset=offset)
                diag.notes.append(f"{ref.get_location()}: {ref_msg or 'see here'}")
        return diag

    def _diagnostic_diag(self, e: DiagnosticException, module: ModuleOp | None) -> Diag:
        message = str(e)
        notes: list[str] = list(getattr(e, "__notes__", []))
        diag = Diag(message, "diagnostic", self.get_input_name(), notes=notes)
        stage_note = self._stage.note()
        # A pass that knows the failing op (e.g. tile-to-llvm's LoweringError) says so.
        op = getattr(e, "op", None)
        if not isinstance(op, Operation):
            op = None
        if op is None and isinstance(e, VerifyException) and module is not None:
            op = _find_invalid_op(module, message, fallback=self._stage.what == "verify")
        named = None
        if module is not None and (op is None or _op_location(op) is None):
            # an xDSL message that names the op another way (a symbol defined twice, an op printed in it,
            # an op with an empty block), or a pass that names the kernel it failed on (``@gemm``)
            found = _op_named_in(module, message) or _named_function(module, message)
            if found is not None:
                op = named = found
        if op is not None:
            if op is not named and not message.startswith(f"'{op.name}'"):  # name the op, as mlir-opt does
                diag.message = f"'{op.name}' op {message}"
            located = op
            while located is not None and _op_location(located) is None:
                located = located.parent_op()
            if located is not None:
                diag.location = _op_location(located)
                diag.length = len(op.name) if located is op else 1
                if located is not op:
                    notes.insert(0, f"the failing '{op.name}' op has no source location; "
                                    f"showing its closest located ancestor '{located.name}'")
            if located is op and not self._keep_ir_dumps:
                # The source line says where; drop xDSL's dump of the whole module.
                diag.notes = [n for n in notes if "\n" not in n.strip()]
        if diag.location is None:
            # a pass that wrote the op's place into its message ("... at FILE:LINE:COL: ...") is located there
            m = re.search(r" at (\S+?):(\d+):(\d+):", message)
            if m:
                diag.location = Location(m.group(1), int(m.group(2)), int(m.group(3)))
        if stage_note is not None:
            diag.notes.insert(0, stage_note)
        return diag

    def _check_expectations(self, expected: list[Expectation], diag: Diag | None) -> bool:
        """MLIR-style --verify-diagnostics for one chunk; report mismatches on
        stderr. True if the produced diagnostics are exactly the expected ones."""
        ok = True
        name = self.get_input_name()
        if diag is not None:
            line = diag.location.line if diag.location is not None else None
            for exp in expected:
                if not exp.matched and exp.kind == "error" and exp.line == line and exp.message in diag.message:
                    exp.matched = True
                    break
            else:
                ok = False
                unexpected = dataclasses.replace(diag, message=f"unexpected error: {diag.message}")
                sys.stderr.write(unexpected.format(self._source_lines))
        for exp in expected:
            if not exp.matched:
                ok = False
                at = f"line {exp.line}" if exp.line is not None else "an unknown location"
                sys.stderr.write(
                    Diag(
                        f"expected {exp.kind} \"{exp.message}\" at {at} was not produced",
                        "diagnostic",
                        name,
                        Location(name, exp.annotation_line, exp.annotation_col),
                        length=exp.annotation_length,
                    ).format(self._source_lines)
                )
        return ok


def _find_invalid_op(module: ModuleOp, message: str, *, fallback: bool) -> Operation | None:
    """The op whose own verifier raises ``message`` (innermost first); with
    ``fallback``, else the first op that does not verify."""
    first: Operation | None = None
    try:
        for op in module.walk(region_first=True):
            try:
                op.verify(verify_nested_ops=False)
            except VerifyException as err:
                if str(err) == message:
                    return op
                first = first or op
    except Exception:  # half-rewritten IR: give up locating, report anyway
        return None
    return first if fallback else None


def _op_named_in(module: ModuleOp, message: str) -> Operation | None:
    """The op an xDSL verifier message points at without a location: the second definition of a
    symbol, the op it prints (``... parent: AddfOp(%s = arith.addf ...)``), or the first op of the
    named kind with an empty block."""
    ops = list(module.walk())
    m = re.search(r'Redefinition of symbol "([^"]+)"', message)
    if m:
        defs = [o for o in ops if getattr(getattr(o, "sym_name", None), "data", None) == m.group(1)]
        return defs[1] if len(defs) > 1 else None
    m = re.search(r"parent: \w+\((.*)\)$", message.strip().splitlines()[0])
    if m:
        text = m.group(1)
        return next((o for o in ops if str(o).split("\n")[0].strip() == text.strip()), None)
    m = re.search(r"Operation (\S+) contains empty block", message)
    if m:
        return next((o for o in ops if o.name == m.group(1)
                     and any(not b.ops for r in o.regions for b in r.blocks)), None)
    return None


def _named_function(module: ModuleOp, message: str) -> Operation | None:
    """The function a diagnostic names as ``@name`` (the first that exists), or None."""
    names = re.findall(r"@([A-Za-z_][\w$.-]*)", message)
    if not names:
        return None
    functions = {op.sym_name.data: op for op in module.walk() if isinstance(op, func.FuncOp)}
    return next((functions[n] for n in names if n in functions), None)


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the ``tile-opt`` console script and ``python -m``."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        status = TileOptMain(args=args).run()
    except ToolError as e:
        sys.stderr.write(str(e).rstrip("\n") + "\n")
        status = 1
    except KeyboardInterrupt:
        status = 130
    except (Exception, ArgSpecParseError) as e:
        sys.stderr.write(_internal_error_text(e, "", "--show-traceback" in args))
        status = 1
    sys.stdout.flush()
    sys.exit(status)


if __name__ == "__main__":
    main()
