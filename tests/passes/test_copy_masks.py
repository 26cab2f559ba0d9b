"""Masked copies (``tile.copy ... mask %m``): the mask's fragment is the copy's partition of the tile, so
each copied run finds its bits in its own thread's registers.

The fragment is checked element by element against the partition tile-distribute copies by (CuTe's
``make_tiled_copy``: thread ``thr((a, b))`` moves the ``val`` block at ``(a, b)`` of each repeat of the
thread grid), for the block's default copies of many tiles, and for explicit layouts; the verifier's
errors name the op and what it expected.
"""

from __future__ import annotations

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from tilec.dialects.context import make_context
from tilec.layout import Layout
from tilec.passes.fragments import copy_fragment, default_copy_layouts


def _partition(dims, thr: Layout, val: Layout) -> dict[int, set[tuple[int, int]]]:
    """The elements each thread moves in a copy of a ``dims`` tile with layouts ``thr`` / ``val``."""
    tm_n, tn_n, vm_n, vn_n = thr[0].size(), thr[1].size(), val[0].size(), val[1].size()
    out: dict[int, set[tuple[int, int]]] = {}
    for a in range(tm_n):
        for b in range(tn_n):
            held = out.setdefault(thr((a, b)), set())
            for rm in range(dims[0] // (tm_n * vm_n)):
                for rn in range(dims[1] // (tn_n * vn_n)):
                    for vm in range(vm_n):
                        for e in range(vn_n):
                            held.add((rm * tm_n * vm_n + a * vm_n + vm, rn * tn_n * vn_n + b * vn_n + e))
    return out


@pytest.mark.parametrize("threads", [32, 64, 128, 256])
@pytest.mark.parametrize("element_bytes", [1, 2, 4])
@pytest.mark.parametrize("dims", [(16, 16), (64, 32), (32, 64), (128, 32), (32, 128), (128, 64), (64, 256), (8, 512)])
def test_a_mask_fragment_holds_what_each_thread_copies(dims, element_bytes, threads):
    layouts = default_copy_layouts(dims, element_bytes, threads)
    if layouts is None:
        pytest.skip(f"no default copy of {dims} over {threads} threads")
    frag = copy_fragment(dims, *layouts, threads)
    moved = _partition(dims, *layouts)
    if frag is None:  # only a thread grid that is no power of two (idle threads) has none
        tm_n, tn_n = layouts[0][0].size(), layouts[0][1].size()
        assert (tm_n * tn_n) & (tm_n * tn_n - 1)
        return
    assert frag.is_additive and frag.tv.num_threads == threads
    size = len(moved)
    for t in range(threads):
        held = {frag.coord(t, v) for v in range(frag.num_values)}
        assert held == moved[t % size], t  # threads past the grid hold a copying thread's bits


def test_explicit_copy_layouts():
    """A copy with its own thread layout (column-major threads, two values a row): the same check."""
    thr, val = Layout((8, 4), (1, 8)), Layout((1, 2), (1, 1))
    frag = copy_fragment((16, 16), thr, val, 32)
    moved = _partition((16, 16), thr, val)
    assert frag is not None
    for t in range(32):
        assert {frag.coord(t, v) for v in range(frag.num_values)} == moved[t]


def test_no_fragment_for_a_grid_of_twelve_threads():
    """96 f16 columns are 12 vectors of 16 bytes: threads 12 apart are no bit field of the thread id."""
    layouts = default_copy_layouts((64, 96), 2, 128)
    assert copy_fragment((64, 96), *layouts, 128) is None


HEAD = ('func.func @k(%a: !tile.gl<f16, [?, ?]>, %m: {mask}, %i: index) attributes {{tile.launch = '
        '#tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>}} {{\n'
        '  %s = tile.alloc : !tile.st<64x32xf16>\n  {op}\n  func.return\n}}\n')


@pytest.mark.parametrize("mask, op, message", [
    ("!tile.rt<64x16xi1>", "tile.copy %a[%i, %i] -> %s mask %m : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16>, "
     "!tile.rt<64x16xi1>", r"mask must be !tile.rt<64x32xi1> \(i1 in the copied tile's shape\), got"),
    ("!tile.rt<64x32xf16>", "tile.async_copy %a[%i, %i] -> %s mask %m : !tile.gl<f16, [?, ?]> -> "
     "!tile.st<64x32xf16>, !tile.rt<64x32xf16>", r"mask must be !tile.rt<64x32xi1>"),
    ("!tile.rt<64x32xi1>", "tile.copy %s -> %a[%i, %i] mask %m : !tile.st<64x32xf16> -> !tile.gl<f16, [?, ?]>, "
     "!tile.rt<64x32xi1>", r"masks copies from a global window into a whole shared tile only"),
])
def test_mask_errors(mask, op, message):
    with pytest.raises(VerifyException, match=message):
        Parser(make_context(), HEAD.format(mask=mask, op=op)).parse_module().verify()
