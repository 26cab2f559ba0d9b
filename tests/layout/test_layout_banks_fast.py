"""The bank model's two ways of counting agree: an AccessPattern's report (on whole arrays)
is ``analyze`` of the instructions its builder returns (lane by lane, phase by phase)."""

from __future__ import annotations

import pytest

from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.layout.banks import (
    AccessPattern,
    ConflictReport,
    Patterns,
    analyze,
    compact_layout,
    copy_stores,
    fragment_reads_32,
    ldmatrix_reads,
    offset_array,
    offset_table,
    report_of,
    swizzle_candidates,
    swizzled,
    warp_reads,
)

TILES = [(64, 32, 2, "row"), (32, 64, 2, "col"), (16, 128, 2, "row"), (32, 32, 4, "row"), (16, 64, 4, "col"),
         (64, 64, 1, "row"), (8, 32, 8, "row")]

THR_VAL = [
    (None, None),
    (Layout((16, 8), (8, 1)), Layout((1, 8), (0, 1))),
    (Layout((16, 8), (1, 16)), Layout((1, 8), (0, 1))),
    (Layout((8, 16), (16, 1)), Layout((1, 4), (0, 1))),
    (Layout((32, 4), (4, 1)), Layout((2, 2), (2, 1))),
    (Layout((4, 8), (8, 1)), Layout((8, 1), (1, 0))),
]


def _outcome(fn):
    try:
        return fn()
    except ValueError as e:
        return str(e)


def _layouts(rows, cols, e, order):
    base = compact_layout(rows, cols, order)
    layouts = [swizzled(sw, base) for sw in swizzle_candidates(rows, cols, e, order)]
    return layouts + [ComposedLayout(Swizzle(2, 1, 4), 8, base), ComposedLayout(Swizzle(3, 2, 3), 0, base)]


@pytest.mark.parametrize("rows, cols, e, order", TILES)
def test_reports_agree_with_analyze_on_every_candidate(rows, cols, e, order):
    axis = 1 if order == "row" else 0
    patterns = [AccessPattern(copy_stores, e, (rows, cols), thr=t, val=v, vector_bytes=b, axis=axis)
                for t, v in THR_VAL for b in (16, 8)]
    patterns += [AccessPattern(ldmatrix_reads, e, (rows, cols), axis=axis),
                 AccessPattern(fragment_reads_32, e, (rows, cols), axis=axis)]
    for layout in _layouts(rows, cols, e, order):
        assert offset_array(layout, (rows, cols)).tolist() == [list(r) for r in offset_table(layout, (rows, cols))]
        for pattern in patterns:
            slow = _outcome(lambda: analyze(pattern(layout)))
            fast = _outcome(lambda: pattern.report(layout))
            assert fast == slow, (layout, pattern.builder.__name__, pattern.kwargs)


def test_builders_return_the_addresses_the_layout_gives():
    layout = ComposedLayout(Swizzle(3, 3, 3), 0, compact_layout(32, 64))
    for access, line in zip(copy_stores(layout, 2), range(0, 32, 4)):
        expected = [layout((line + lane // 8, 8 * (lane % 8))) * 2 for lane in range(32)]
        assert list(access.addresses) == expected


def test_patterns_sum_and_plain_callables():
    layout = compact_layout(64, 64)
    a, b = AccessPattern(copy_stores, 2), AccessPattern(ldmatrix_reads, 2)
    both = Patterns([a, b])
    assert both(layout) == a(layout) + b(layout)
    assert both.report(layout) == analyze(a(layout) + b(layout)) == a.report(layout) + b.report(layout)
    reads = lambda L: warp_reads(L, 2, direction="col")  # noqa: E731 - a plain callable has no report
    assert report_of(reads, layout) == analyze(reads(layout))
    assert Patterns([]).report(layout) == ConflictReport()
    with pytest.raises(ValueError, match="not a pattern builder"):
        AccessPattern(warp_reads, 2)


def test_errors_are_the_builders_errors():
    split = ComposedLayout(Swizzle(3, 2, 3), 0, compact_layout(64, 64))
    pattern = AccessPattern(copy_stores, 2)
    with pytest.raises(ValueError, match="not one aligned 16-byte vector") as fast:
        pattern.report(split)
    with pytest.raises(ValueError) as slow:
        pattern(split)
    assert str(fast.value) == str(slow.value)
