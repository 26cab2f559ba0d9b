"""Work-arounds for xDSL behaviour that costs tilec real time; each says why.

Quadratic verification of multi-block regions (xDSL 0.74)
---------------------------------------------------------

``Operation.verify`` asks ``len(parent_region.blocks)`` for the last op of
every block (twice when the region has several blocks), and
``RegionBlocks.__len__`` counts by walking the region's linked list of
blocks. Verifying a region of n blocks therefore walks n² blocks: the
final ``llvm.func`` of a 128x128x32 GEMM has about 520 blocks, which made
``module.verify()`` spend 0.1-0.3 s just counting.

:func:`verify` runs ``op.verify()`` unchanged, with one difference: within
it, the calling thread counts each region's blocks once and reuses the
count. Verification does not add or remove blocks, so the counts, and with
them every check and diagnostic of xDSL's verifier, are exactly those of
a plain ``op.verify()``. Outside :func:`verify` (and in other threads)
``len(region.blocks)`` walks the list as before.

For that, importing this module replaces ``RegionBlocks.__len__`` (for the
whole process) by :func:`_counted_len`, which returns the same number: it
only reuses a count inside :func:`counting_blocks_once`. It is the one
place where tilec changes an xDSL class; with an xDSL whose ``__len__`` is
cheap it can go.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Operation, Region
from xdsl.ir.core import RegionBlocks

_walking_len = getattr(RegionBlocks.__len__, "__wrapped__", RegionBlocks.__len__)  # xDSL's, even on reload
_state = threading.local()


def _counted_len(self: RegionBlocks) -> int:
    """``len(region.blocks)``: from this thread's counts while :func:`counting_blocks_once` is active."""
    counts: dict[Region, int] | None = getattr(_state, "counts", None)
    if counts is None:
        return _walking_len(self)
    region = self._region
    n = counts.get(region)
    if n is None:
        n = counts[region] = _walking_len(self)
    return n


@contextmanager
def counting_blocks_once() -> Iterator[None]:
    """Within the block, this thread counts each region's blocks once.

    Only for code that does not add or remove blocks (verification);
    reentrant: a nested use shares the outer counts.
    """
    if getattr(_state, "counts", None) is not None:
        yield
        return
    _state.counts = {}
    try:
        yield
    finally:
        _state.counts = None


def verify(op: Operation) -> None:
    """``op.verify()``, in linear rather than quadratic time in the blocks per region."""
    with counting_blocks_once():
        op.verify()


_counted_len.__wrapped__ = _walking_len  # type: ignore[attr-defined]
RegionBlocks.__len__ = _counted_len  # type: ignore[method-assign]
