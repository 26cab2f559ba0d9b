"""The one xDSL context tilec parses with: xDSL's dialects, tilec's, and our llvm extensions."""

from __future__ import annotations

from xdsl.context import Context


def make_context(*, allow_unregistered: bool = False) -> Context:
    """A context that parses every dialect tilec knows (``tile-opt``, the API and the interpreter share it).

    Dialects are registered lazily (xDSL loads one on first use), so this costs microseconds.
    """
    # lazy: importing xDSL's and tilec's dialects takes ~120 ms, for importers that never make a context
    from xdsl.dialects import get_all_dialects as get_xdsl_dialects

    # lazy: (the same ~120 ms, above)
    from tilec.dialects import get_all_dialects as get_tilec_dialects
    from tilec.dialects.llvm_ext import load_llvm_extensions

    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in {**get_xdsl_dialects(), **get_tilec_dialects()}.items():
        ctx.register_dialect(name, factory)
    load_llvm_extensions(ctx)
    return ctx
