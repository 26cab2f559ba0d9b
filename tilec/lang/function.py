"""``@tl.func``: a helper a kernel calls, traced as the kernel's own body is.

A plain Python function a kernel calls runs as Python while the kernel is traced: its ``for`` over
``tl.range`` would unroll and its ``if`` could test Python values only. Decorated, its source is
rewritten once, like a kernel's (:func:`~tilec.lang.source_rewrite.rewrite`): its ``tl.range``
loops are ``scf.for`` loops and an ``if`` on a run-time scalar is an ``scf.if`` (Triton's
``@triton.jit`` helper). A call inlines it into the calling kernel; outside a kernel a call is an
error. A ``@tl.kernel`` called from another kernel is inlined the same way.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from tilec.lang.loop import range as lang_range
from tilec.lang.source_rewrite import rewrite
from tilec.lang.tracing import error, is_tracing


class Function:
    """A ``@tl.func`` helper (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any]):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.name = fn.__name__
        self._traced: Callable[..., Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<tl.func {self.name}>"

    def traced(self) -> Callable[..., Any]:
        """The function with its loops and ``if``s rewritten for tracing (made on first use)."""
        with self._lock:
            if self._traced is None:
                self._traced = rewrite(self.fn, (lang_range,))
            return self._traced

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not is_tracing():
            raise error(f"{self.name}: a @tl.func helper runs inside a @tl.kernel function that calls it")
        return self.traced()(*args, **kwargs)


def func(fn: Callable[..., Any]) -> Function:
    """``@tl.func`` on a helper function a kernel calls (see the module docstring)."""
    if not callable(fn) or isinstance(fn, Function):
        raise TypeError(f"@tl.func decorates a Python function, got {fn!r}")
    return Function(fn)
