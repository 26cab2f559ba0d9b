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
    assert layouts is not None  # every tile here has a default copy
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
    ("!tile.rt<64x32xi1>", "tile.async_copy %a[%i, %i] -> %s prefix : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16>",
     r"'prefix' says how the rows of a mask fall: it needs a mask"),
])
def test_mask_errors(mask, op, message):
    with pytest.raises(VerifyException, match=message):
        Parser(make_context(), HEAD.format(mask=mask, op=op)).parse_module().verify()


# ---------------------------------------------------------------- masks whose rows fall (``prefix``)

TREND = ('func.func @k(%n: i32, %r: !tile.rv<16xi1, row>) attributes {{tile.launch = '
         '#tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>}} {{\n'
         '  %c0 = arith.constant 0 : index\n'
         '  %cols = tile.iota %c0 dim 1 : !tile.rt<16x16xi32>\n'
         '  %rows = tile.broadcast %r : !tile.rv<16xi1, row> -> !tile.rt<16x16xi1>\n'
         '  %m = tile.map %cols, %rows : !tile.rt<16x16xi32>, !tile.rt<16x16xi1> -> !tile.rt<16x16xi1> {{\n'
         '  ^bb0(%c: i32, %ok: i1):\n{body}\n  }}\n  func.return\n}}\n')


@pytest.mark.parametrize("body, falls", [
    ("%t = arith.cmpi slt, %c, %n : i32\n tile.yield %t : i1", True),  # cols < n
    ("%t = arith.cmpi sgt, %n, %c : i32\n tile.yield %t : i1", True),  # n > cols
    ("%t = arith.cmpi sgt, %c, %n : i32\n tile.yield %t : i1", False),  # cols > n: false, then true
    ("%three = arith.constant 3 : i32\n %x = arith.muli %c, %three : i32\n %y = arith.subi %n, %x : i32\n"
     " %zero = arith.constant 0 : i32\n %t = arith.cmpi sge, %y, %zero : i32\n tile.yield %t : i1", True),  # n - 3c >= 0
    ("%t = arith.cmpi slt, %c, %n : i32\n %u = arith.andi %ok, %t : i1\n tile.yield %u : i1", True),  # row & col
    ("%t = arith.cmpi slt, %c, %n : i32\n %one = arith.constant true\n %u = arith.xori %t, %one : i1\n"
     " tile.yield %u : i1", False),  # not (cols < n)
    ("%t = arith.cmpi sge, %c, %n : i32\n %one = arith.constant true\n %u = arith.xori %t, %one : i1\n"
     " tile.yield %u : i1", True),  # not (cols >= n)
    ("%three = arith.constant 3 : i32\n %x = arith.remsi %c, %three : i32\n %zero = arith.constant 0 : i32\n"
     " %t = arith.cmpi ne, %x, %zero : i32\n tile.yield %t : i1", False),  # cols % 3 != 0
    ("%m1 = arith.constant -1 : i32\n %x = arith.muli %c, %m1 : i32\n %t = arith.cmpi slt, %x, %n : i32\n"
     " tile.yield %t : i1", False),  # a negative factor: not proved
])
def test_which_masks_fall_along_their_rows(body, falls):
    from tilec.passes.trends import falls_along_rows

    module = Parser(make_context(), TREND.format(body=body)).parse_module()
    mask = next(op for op in module.walk() if op.name == "tile.map").results[0]
    assert falls_along_rows(mask) is falls


def test_the_interpreter_checks_a_prefix_promise():
    """A copy marked ``prefix`` whose mask has a rising row is an error at the copy (the GPU would copy
    that run wrong), not a silent pass."""
    import numpy as np

    from tilec.interp import run
    from tilec.interp.errors import TileInterpreterError

    text = ('func.func @k(%a: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %n: i32) attributes {tile.launch = '
            '#tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 1024>} {\n'
            '  %c0 = arith.constant 0 : index\n'
            '  %s = tile.alloc : !tile.st<16x16xf32>\n'
            '  %cols = tile.iota %c0 dim 1 : !tile.rt<16x16xi32>\n'
            '  %m = tile.map %cols : !tile.rt<16x16xi32> -> !tile.rt<16x16xi1> {\n'
            '  ^bb0(%c: i32):\n    %t = arith.cmpi sgt, %c, %n : i32\n    tile.yield %t : i1\n  }\n'
            '  tile.copy %a[%c0, %c0] -> %s mask %m prefix : !tile.gl<f32, [?, ?]> -> !tile.st<16x16xf32>, '
            '!tile.rt<16x16xi1>\n'
            '  tile.barrier\n'
            '  %v = tile.load %s : !tile.st<16x16xf32> -> !tile.rt<16x16xf32>\n'
            '  tile.store %v, %o[%c0, %c0] : !tile.rt<16x16xf32> -> !tile.gl<f32, [?, ?]>\n'
            '  func.return\n}\n')
    module = Parser(make_context(), text).parse_module()
    a, o = np.ones((16, 16), np.float32), np.zeros((16, 16), np.float32)
    with pytest.raises(TileInterpreterError, match="marked 'prefix' but row 0 rises"):
        run(module, "k", a, o, 5, grid=(1,))
    run(Parser(make_context(), text.replace(" prefix :", " :")).parse_module(), "k", a, o, 5, grid=(1,))
    assert (o == (np.arange(16) > 5)).all()
