"""The one list of tilec's passes, named pipelines and output targets.

``tile-opt``, the Python API and the tests all look passes and targets up here,
so a pass is registered once and reachable everywhere.

Adding a pass (the pass class lives in its own file ``tilec/passes/<name>.py``,
is a ``@dataclass(frozen=True)`` ``ModulePass`` whose ``name`` ClassVar equals the
key)::

    PASSES = {
        "tile-tiling": "tilec.passes.tile_tiling:TileTilingPass",
        ...
    }

Adding a named pipeline without options (any ``-p`` text: passes with options,
other pipelines)::

    PIPELINES = {
        "tile-to-ptx": "tile-tiling,tile-swizzle,tile-pipeline{stages=3},...",
    }

A pipeline that takes options of its own is a :class:`PipelinePass` subclass
(dataclass fields are its options, :meth:`PipelinePass.pipeline` builds the
text from them) and is registered in ``PASSES`` like any other pass.

Adding a target (a ``@dataclass(frozen=True)`` ``xdsl.utils.target.Target``
whose ``name`` equals the key; ``-t ptx{arch=sm_90}`` fills its fields)::

    TARGETS = {
        "ptx": "tilec.codegen.ptx:PTXTarget",
    }

Everything is imported lazily: naming a module here costs nothing until the
pass or target is used, so ``tile-opt`` starts fast however many passes exist.
xDSL's own passes (``canonicalize``, ``cse``, ...) and targets (``mlir``,
...) are included; a tilec name may not shadow one of them, except the
targets listed in ``REPLACED_XDSL_TARGETS`` (``llvm``), which tilec replaces.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.targets import get_all_targets as xdsl_targets
from xdsl.transforms import get_all_passes as xdsl_passes
from xdsl.utils.arg_spec import PipelineLexer, SpecTokenKind, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.utils.lexer import Span
from xdsl.utils.target import Target

from tilec.ir.verify import verify as verify_op

# --------------------------------------------------------------------------
# The registry: one line per pass / pipeline / target.
# --------------------------------------------------------------------------

PASSES: dict[str, str] = {
    "tile-tiling": "tilec.passes.tile_tiling:TileTilingPass",
    "tile-to-llvm": "tilec.passes.tile_to_llvm:TileToLLVMPass",
    "tile-layout": "tilec.passes.tile_layout:TileLayoutPass",
    "tile-distribute": "tilec.passes.tile_distribute:TileDistributePass",
    "tile-bulk-store": "tilec.passes.tile_bulk_store:TileBulkStorePass",
    "tile-pipeline": "tilec.passes.tile_pipeline:TilePipelinePass",
    "tile-swizzle": "tilec.passes.tile_swizzle:TileSwizzlePass",
    "tile-stage": "tilec.passes.tile_stage:TileStagePass",
    "tile-to-ptx": "tilec.passes.tile_to_ptx:TileToPTX",
}
"""tilec passes: name -> ``"module:ClassName"`` of a ``ModulePass`` subclass."""

PIPELINES: dict[str, str] = {
    "tile-regalloc": "tile-layout,tile-distribute",
}
"""Named pipelines without options: name -> pass-pipeline text."""

TARGETS: dict[str, str] = {
    "llvm": "tilec.codegen.targets:LLVMIRTarget",
    "ptx": "tilec.codegen.targets:PTXTarget",
}
"""tilec output targets: name -> ``"module:ClassName"`` of a ``Target`` subclass."""

REPLACED_XDSL_TARGETS: frozenset[str] = frozenset({"llvm"})
"""xDSL targets that tilec replaces on purpose (any other clash is an error).

xDSL's ``llvm`` target cannot translate GPU kernels (address-space GEPs,
bf16, kernels' calling convention: see :mod:`tilec.codegen.llvm_translate`);
ours (:class:`tilec.codegen.targets.LLVMIRTarget`) prints NVPTX LLVM IR."""


# --------------------------------------------------------------------------
# Verification between passes.
# --------------------------------------------------------------------------

VERIFY_EACH_ENV = "TILEC_VERIFY_EACH"
"""Environment variable: ``1`` makes :func:`tilec.compile` verify the IR after every pass
(``0`` or unset: once, at the end of the pipeline). The test suite sets it."""


def verify_each_requested() -> bool:
    """Whether ``$TILEC_VERIFY_EACH`` asks to verify after every pass (read at each call)."""
    return os.environ.get(VERIFY_EACH_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


_verify_inner: ContextVar[bool] = ContextVar("tilec_verify_inner_passes", default=True)


@contextmanager
def verifying_inner_passes(enabled: bool) -> Iterator[None]:
    """Within the block, :class:`PipelinePass` verifies after each inner pass only if ``enabled``.

    Outside any such block it does (``tile-opt``); :func:`tilec.compile` turns it
    off unless ``$TILEC_VERIFY_EACH`` is set, and verifies the pipeline's output once.
    """
    token = _verify_inner.set(enabled)
    try:
        yield
    finally:
        _verify_inner.reset(token)


def verifies_inner_passes() -> bool:
    """Whether a :class:`PipelinePass` run now verifies after each of its passes."""
    return _verify_inner.get()


# --------------------------------------------------------------------------
# Named pipelines as passes.
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class PipelinePass(ModulePass):
    """A named pipeline: a pass that runs other passes in order.

    Subclasses set ``name`` and either the class attribute ``text`` (fixed
    pipeline text) or override :meth:`pipeline` to build the text from their
    own dataclass fields, e.g.::

        @dataclass(frozen=True)
        class TileToPTX(PipelinePass):
            name = "tile-to-ptx"
            stages: int = 3

            def pipeline(self) -> str:
                return f"tile-tiling,tile-swizzle,tile-pipeline{{stages={self.stages}}}"

    The IR is verified after every inner pass (unless inside
    ``verifying_inner_passes(False)``, as :func:`tilec.compile` runs it by
    default); a failure names the inner pass (as a note on the exception) so
    that errors point at the culprit.
    """

    text: ClassVar[str] = ""
    """The fixed pipeline text (named ``text``, not ``spec``: xDSL's ``ModulePass.spec()`` prints a pass)."""

    def pipeline(self) -> str:
        """The pass-pipeline text this pass stands for."""
        return self.text

    def passes(self) -> tuple[ModulePass, ...]:
        """The inner passes, parsed against the full registry."""
        return build_pipeline(self.pipeline()).passes

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify = verifies_inner_passes()
        for inner in self.passes():
            stage = f"in pass '{inner.name}'"
            try:
                inner.apply(ctx, op)
                if verify:
                    stage = f"after pass '{inner.name}'"
                    verify_op(op)
            except Exception as e:
                e.add_note(f"{stage} of pipeline '{self.name}'")
                raise


def pipeline_pass(name: str, spec: str, doc: str | None = None) -> type[PipelinePass]:
    """Make a :class:`PipelinePass` subclass named ``name`` running ``spec``."""
    class_name = "".join(part.capitalize() for part in name.replace("_", "-").split("-"))
    cls = type(
        f"{class_name}Pipeline",
        (PipelinePass,),
        {
            "name": name,
            "text": spec,
            "__doc__": doc or f"Named pipeline `{name}`: {spec}",
            "__module__": __name__,
        },
    )
    return dataclass(frozen=True)(cls)


# --------------------------------------------------------------------------
# Lookup.
# --------------------------------------------------------------------------


class RegistryError(Exception):
    """A registry entry is broken (wrong name, not a pass, clash with xDSL)."""


def _load(ref: str, kind: str, name: str, base: type) -> Any:
    module_name, _, attr = ref.partition(":")
    if not attr:
        raise RegistryError(f"{kind} '{name}': '{ref}' is not of the form 'module:Class'")
    obj = getattr(importlib.import_module(module_name), attr)
    if not (isinstance(obj, type) and issubclass(obj, base)):
        raise RegistryError(f"{kind} '{name}': {ref} is not a {base.__name__} subclass")
    if getattr(obj, "name", None) != name:
        raise RegistryError(
            f"{kind} '{name}': {ref}.name is {getattr(obj, 'name', None)!r}, "
            f"expected {name!r}"
        )
    return obj


def _pass_factory(name: str, ref: str) -> Callable[[], type[ModulePass]]:
    return lambda: _load(ref, "pass", name, ModulePass)


def _pipeline_factory(name: str, spec: str) -> Callable[[], type[ModulePass]]:
    return lambda: pipeline_pass(name, spec)


def _target_factory(name: str, ref: str) -> Callable[[], type[Target]]:
    return lambda: _load(ref, "target", name, Target)


def _merge(kind: str, *sources: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for source in sources:
        for name, factory in source.items():
            if name in merged:
                raise RegistryError(f"{kind} name '{name}' is registered twice")
            merged[name] = factory
    return merged


def get_tilec_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """tilec's own passes and named pipelines (no xDSL passes)."""
    return _merge(
        "pass",
        {name: _pass_factory(name, ref) for name, ref in PASSES.items()},
        {name: _pipeline_factory(name, spec) for name, spec in PIPELINES.items()},
    )


def get_tilec_targets() -> dict[str, Callable[[], type[Target]]]:
    """tilec's own targets (no xDSL targets)."""
    return {name: _target_factory(name, ref) for name, ref in TARGETS.items()}


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass ``tile-opt -p`` accepts: xDSL's, then tilec's and its pipelines."""
    return _merge("pass", xdsl_passes(), get_tilec_passes())


def get_all_targets() -> dict[str, Callable[[], type[Target]]]:
    """Every target ``tile-opt -t`` accepts: xDSL's, then tilec's."""
    kept = {k: v for k, v in xdsl_targets().items() if k not in REPLACED_XDSL_TARGETS}
    return _merge("target", kept, get_tilec_targets())


# --------------------------------------------------------------------------
# Pipeline text -> PassPipeline, with diagnostics that point into the text.
# --------------------------------------------------------------------------


class PipelineSpecError(DiagnosticException):
    """The pass-pipeline text is malformed, names an unknown pass, or gives a
    pass options it does not accept. The message points into the text."""


def _pass_name_spans(spec: str) -> Iterator[Span[str]]:
    """Spans of the top-level pass names in ``spec`` (in order)."""
    depth = 0
    expect_name = True
    lexer = PipelineLexer(spec)
    while True:
        token = lexer.lex()
        kind = token.kind
        if kind is SpecTokenKind.EOF:
            return
        if kind is SpecTokenKind.L_BRACE:
            depth += 1
        elif kind is SpecTokenKind.R_BRACE:
            depth -= 1
        elif depth == 0 and kind is SpecTokenKind.COMMA:
            expect_name = True
        elif depth == 0 and kind is SpecTokenKind.IDENT and expect_name:
            expect_name = False
            yield token.span


def format_arg_spec_error(e: ArgSpecParseError) -> str:
    """xDSL's ``ArgSpecParseError`` text as ``loc: error: msg`` + context lines."""
    text = str(e).removeprefix("Error parsing pass pipeline specification:\n")
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 4:
        return f"error: {text}"
    loc, context, msg = lines[0], lines[1:-1], lines[-1].strip()
    return "\n".join([f"{loc}: error: {msg}", *context])


def _point(span: Span[str] | None, msg: str) -> str:
    if span is None:
        return f"error: {msg}"
    loc = span.get_location()
    lines = span.print_with_context().splitlines()[1:]  # drop the bare location line
    return "\n".join([f"{loc}: error: {msg}", *lines])


def repeated_options(spec: str, count: int) -> list[str | None]:
    """For each top-level pass of ``spec``, an option it is given twice (xDSL keeps the last), or None."""
    tokens = []
    lexer = PipelineLexer(spec)
    while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
        if token.kind is not SpecTokenKind.SPACE:
            tokens.append(token)
    found: list[str | None] = []
    depth = 0
    for i, token in enumerate(tokens):
        if token.kind is SpecTokenKind.L_BRACE:
            depth += 1
        elif token.kind is SpecTokenKind.R_BRACE:
            depth -= 1
        elif depth == 0 and token.kind is SpecTokenKind.IDENT and (i == 0 or tokens[i - 1].kind is SpecTokenKind.COMMA):
            found.append(None)
            seen: set[str] = set()
        elif depth == 1 and token.kind is SpecTokenKind.IDENT and found and i + 1 < len(tokens) \
                and tokens[i + 1].kind is SpecTokenKind.EQUALS:
            key = token.span.text
            if key in seen and found[-1] is None:
                found[-1] = key
            seen.add(key)
    return found if len(found) == count else [None] * count


def build_pipeline(
    spec: str,
    available: Mapping[str, Callable[[], type[ModulePass]]] | None = None,
    callback: PassPipelineCallbackType | None = None,
) -> PassPipeline:
    """Parse ``-p`` text (``a{x=1 y=2,3},b``) into a ``PassPipeline``.

    ``available`` defaults to :func:`get_all_passes`. Raises
    :class:`PipelineSpecError` with a message pointing at the offending pass.
    """
    if available is None:
        available = get_all_passes()
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
        raise PipelineSpecError(format_arg_spec_error(e)) from None
    spans: list[Span[str] | None] = list(_pass_name_spans(spec))
    if len(spans) != len(specs):  # e.g. mlir-opt[...] elements: no span, still fine
        spans = [None] * len(specs)

    passes: list[ModulePass] = []
    for arg_spec, span, repeated in zip(specs, spans, repeated_options(spec, len(specs)), strict=True):
        name = arg_spec.name
        if repeated:
            raise PipelineSpecError(_point(span, f"pass '{name}' is given option '{repeated}' twice"))
        if name not in available:
            msg = f"unknown pass '{name}'"
            close = difflib.get_close_matches(name, list(available), n=3)
            if close:
                msg += "; did you mean " + " or ".join(f"'{c}'" for c in close) + "?"
            raise PipelineSpecError(_point(span, msg))
        try:
            passes.append(available[name]().from_pass_spec(arg_spec))
        except (ValueError, TypeError, DiagnosticException) as e:  # a pass's own check of its options
            raise PipelineSpecError(_point(span, f"invalid options for pass '{name}': {e}")) from None
    return PassPipeline(tuple(passes), callback)
