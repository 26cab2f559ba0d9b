"""The one xDSL context tilec parses with: xDSL's dialects, tilec's, and our llvm extensions.

``tile-opt``, ``tilec.compile`` and the interpreter all parse through :func:`make_context`, so a
dialect registered here is known everywhere.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import get_all_dialects as get_xdsl_dialects

from tilec.dialects import get_all_dialects as get_tilec_dialects


def make_context(*, allow_unregistered: bool = False) -> Context:
    """A context that parses every dialect tilec knows.

    Dialects are registered lazily (xDSL loads one on first use), so this costs microseconds.
    """
    ctx = Context(allow_unregistered=allow_unregistered)
    for name, factory in {**get_xdsl_dialects(), **get_tilec_dialects()}.items():
        ctx.register_dialect(name, factory)  # tilec's llvm (with our extensions) replaces xDSL's
    return ctx
