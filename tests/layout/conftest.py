"""Every layout, swizzle and composed layout a ``test_layout_*`` test builds must print
in CuTe's notation and parse back to itself.

An autouse fixture records each value constructed while such a test runs (the
constructors are wrapped for the duration of the test) and, when the test
has passed, checks ``parse(str(x)) == x`` for every distinct one.
"""

from __future__ import annotations

import pytest

from tilec.layout import ComposedLayout, Layout, Swizzle, parse


def _recording(cls, seen: set):
    original = cls.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        seen.add(self)

    return __init__


@pytest.fixture(autouse=True)
def every_built_value_round_trips(request, monkeypatch):
    if not request.node.path.name.startswith("test_layout_"):
        yield
        return
    seen: set = set()
    for cls in (Layout, Swizzle, ComposedLayout):
        monkeypatch.setattr(cls, "__init__", _recording(cls, seen))
    yield
    monkeypatch.undo()
    bad = []
    for value in seen:
        text = str(value)
        try:
            back = parse(text)
        except ValueError as err:
            bad.append(f"{text!r}: {err}")
            continue
        if back != value or type(back) is not type(value):
            bad.append(f"{text!r} parsed as {back!r}")
    assert not bad, "values built by this test do not round-trip through parse(str(x)):\n" + "\n".join(bad[:20])
