"""Modules that are also functions: ``tilec.matmul(a, b)`` next to ``tilec.matmul.plan_matmul``.

A package attribute and its submodule share a name, so ``import tilec.matmul``
would replace a ``matmul`` function on the package by the module (or the
other way round, depending on import order). Making the module itself
callable keeps both working in any order.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable
from typing import Any


def make_module_callable(name: str, fn: Callable[..., Any]) -> None:
    """Calling the (already imported) module ``name`` calls ``fn``, with ``fn``'s signature."""
    module = sys.modules[name]
    cls = type(f"Callable{fn.__name__.title()}Module", (types.ModuleType,), {
        "__call__": staticmethod(fn),  # no extra frame per call
        "__doc__": f"The module {name}; calling it calls {fn.__qualname__}.",
    })
    module.__class__ = cls
    module.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
