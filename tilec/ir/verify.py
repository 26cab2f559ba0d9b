"""Verification at xDSL's verdicts, faster; each work-around says why.

Quadratic verification of multi-block regions (xDSL 0.74)
---------------------------------------------------------

``Operation.verify`` asks ``len(parent_region.blocks)`` for the last op of
every block (twice when the region has several blocks), and
``RegionBlocks.__len__`` counts by walking the region's linked list of
blocks. Verifying a region of n blocks therefore walks n² blocks: the
final ``llvm.func`` of a 128x128x32 GEMM has about 520 blocks, which
made ``module.verify()`` spend 0.1-0.3 s just counting.

:func:`verify` runs ``op.verify()`` unchanged, with one difference: within
it, the calling thread counts each region's blocks once and reuses the
count. Verification does not add or remove blocks, so the counts, and with
them every check and diagnostic of xDSL's verifier, are exactly those of
a plain ``op.verify()``. Outside :func:`verify` (and in other threads)
``len(region.blocks)`` walks the list as before.

For that, while some thread is inside :func:`counting_blocks_once` (and only
then), ``RegionBlocks.__len__`` is :func:`_counted_len`, which returns the
same number: it only reuses a count in a thread that counts. The first
thread to enter puts it in place, the last to leave puts xDSL's back, so no
xDSL class is changed between verifications. It is the one place where
tilec changes an xDSL class; with an xDSL whose ``__len__`` is cheap it can
go. Doing without it would mean either the n² walks (about 20 ms of the
verification of that GEMM kernel) or a copy of ``Operation.verify``'s checks
(some ops override ``verify`` itself), which xDSL could change under us.

Verifying thousands of alike ops (the final IR) is :mod:`tilec.ir.verify_lowered`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.ir import Operation, Region
from xdsl.ir.core import RegionBlocks
from xdsl.utils.exceptions import VerifyException

_walking_len = RegionBlocks.__len__
"""xDSL's ``len(region.blocks)``, which walks the blocks (what the class has between verifications)."""
_state = threading.local()
_install_lock = threading.Lock()
_counting_threads = 0
"""How many threads are inside :func:`counting_blocks_once` (under ``_install_lock``)."""


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


def _enter() -> None:
    global _counting_threads
    with _install_lock:
        if _counting_threads == 0:
            RegionBlocks.__len__ = _counted_len  # type: ignore[method-assign]
        _counting_threads += 1


def _leave() -> None:
    global _counting_threads
    with _install_lock:
        _counting_threads -= 1
        if _counting_threads == 0:
            RegionBlocks.__len__ = _walking_len  # type: ignore[method-assign]


@contextmanager
def counting_blocks_once() -> Iterator[None]:
    """Within the block, this thread counts each region's blocks once.

    Only for code that does not add or remove blocks (verification);
    reentrant: a nested use shares the outer counts. ``RegionBlocks.__len__``
    is xDSL's again once no thread is inside.
    """
    if getattr(_state, "counts", None) is not None:
        yield
        return
    _state.counts = {}
    _enter()
    try:
        yield
    finally:
        _state.counts = None
        _leave()


def verify(op: Operation) -> None:
    """``op.verify()``, in linear rather than quadratic time in the blocks per region; a verifier that
    raises something else than a VerifyException (:func:`as_verify_error`) raises one."""
    with counting_blocks_once():
        try:
            op.verify()
        except VerifyException:
            raise
        except Exception as e:  # noqa: BLE001 - an xDSL verifier's bare Exception becomes a diagnostic
            raise as_verify_error(op, e) from None


def as_verify_error(root: Operation, error: Exception) -> VerifyException:
    """A VerifyException with the message of ``error``, which an op's verifier raised instead of one
    (xDSL 0.74's ``scf.while`` raises a bare ``Exception`` for block arguments of the wrong type),
    carrying the op whose own verifier raises it as ``.op`` (the diagnostic points at it)."""
    out = VerifyException(str(error))
    for inner in root.walk():
        try:
            inner.verify(verify_nested_ops=False)
        except Exception as e:  # noqa: BLE001 - looking for the op that raises the same message
            if str(e) == str(error):
                out.op = inner  # type: ignore[attr-defined]
                break
    return out


__all__ = ["as_verify_error", "counting_blocks_once", "verify"]
