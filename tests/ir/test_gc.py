"""tilec.ir.gc.fewer_gc_pauses: a high first threshold within, the thresholds as they were after."""

from __future__ import annotations

import gc

import pytest

from tilec.ir.gc import GC_THRESHOLD, fewer_gc_pauses


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_raises_the_first_threshold_within_and_restores_all_after(thresholds):
    with fewer_gc_pauses():
        assert gc.get_threshold() == (GC_THRESHOLD, 10, 10)
        with fewer_gc_pauses():  # nested (or concurrent): the outermost restores
            pass
        assert gc.get_threshold() == (GC_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_leaves_automatic_collection_off(thresholds):
    gc.set_threshold(0, 10, 10)
    with fewer_gc_pauses():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold() == (0, 10, 10)
