"""Fewer pauses of Python's cyclic garbage collector while xDSL IR is built and rewritten."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_gc_lock = threading.Lock()
_gc_users = 0
_gc_saved: tuple[int, ...] = (0,)
GC_THRESHOLD = 100_000
"""The cyclic garbage collector's first threshold while :func:`tilec.compile` runs (default 700)."""


@contextmanager
def fewer_gc_pauses() -> Iterator[None]:
    """Let Python's cyclic garbage collector run rarely within the block.

    A compile creates far more objects (IR, attributes, layouts) than it
    leaves in garbage cycles. With the default first threshold (a collection
    per 700 new container objects) a cold compile of the 128x128x32 GEMM
    collects about 150 times, 14 of them in the older generations, which
    walk every object of the process (xDSL, numpy, llvmlite): 0.25-0.35 s of
    a 1.3 s compile. With 100,000 it collects about once, at the same peak
    memory. The thresholds are restored when the last of the (possibly
    concurrent) compiles leaves; a first threshold of 0 (automatic
    collection off) is left alone.
    """
    global _gc_users, _gc_saved
    with _gc_lock:
        if _gc_users == 0:
            _gc_saved = gc.get_threshold()
            if 0 < _gc_saved[0] < GC_THRESHOLD:
                gc.set_threshold(GC_THRESHOLD, *_gc_saved[1:])
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0:
                gc.set_threshold(*_gc_saved)


__all__ = ["GC_THRESHOLD", "fewer_gc_pauses"]
