"""tile.reshape through tile-layout and tile-distribute, in both interpreters.

A reshape keeps the elements in row-major order. tile-layout gives the result the input's fragment
reread in the new shape where a layout expresses it (:func:`reshaped_fragment`), so the registers are
renumbered and nothing moves; otherwise (a vector on either side, fragments decided apart)
tile-distribute goes through shared memory. Each case runs on fresh random values with a
NaN-poisoned output, on the tile interpreter (before the passes) and the lane interpreter (after).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.passes.test_tile_distribute_algebra import _both, _lower, _parse, _view
from tilec.interp import run
from tilec.dialects.context import make_context
from tilec.dialects.tile import ops as t
from tilec.passes.tile_layout import TileLayoutPass
from tilec.layout import MMA_M16N8K16_F16
from tilec.layout import TVLayout
from tilec.passes.fragments import (Fragment, FragmentError, block_fragment, default_fragment, join_plan, mma_fragment,
                                    reshaped_fragment, row_major_index)
from tilec.passes.tile_distribute.convert import needs_scratch
from tilec.passes.tile_distribute.moves import flat_index, reshape_permutation


def _type(dims: tuple[int, ...], elem: str, layout: str = "") -> str:
    layout = f", {layout}" if layout else ""
    if len(dims) == 1:
        return f"!tile.rv<{dims[0]}x{elem}, col{layout}>"
    return f"!tile.rt<{dims[0]}x{dims[1]}x{elem}{layout}>"


def _view_type(rank: int, elem: str) -> str:
    return f"!tile.gl<{elem}, [{', '.join('?' * rank)}]>"


def _kernel(src: tuple[int, ...], dst: tuple[int, ...], elem: str = "f32", threads: int = 32,
            src_layout: str = "", dst_layout: str = "") -> str:
    a, b = _type(src, elem, src_layout), _type(dst, elem, dst_layout)
    g, o = _view_type(len(src), elem), _view_type(len(dst), elem)
    at = ", ".join("%c0" for _ in src)
    to = ", ".join("%c0" for _ in dst)
    return f"""
func.func @k(%g: {g}, %o: {o})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{threads}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %x = tile.load %g[{at}] : {g} -> {a}
  %y = tile.reshape %x : {a} -> {b}
  tile.store %y, %o[{to}] : {b} -> {o}
  func.return
}}"""


def _values(dims: tuple[int, ...], elem: str) -> np.ndarray:
    rng = np.random.default_rng()
    if elem == "f32":
        return rng.standard_normal(dims).astype(np.float32)
    return rng.integers(-100, 100, dims).astype({"i32": np.int32, "i8": np.int8}[elem])


def _check(text: str, src, dst, elem: str = "f32") -> str:
    x = _values(src, elem)
    poison = np.full(dst, np.nan, np.float32) if elem == "f32" else np.full(dst, 77, x.dtype)
    before, after = _both(text, "k", [x], [poison])
    np.testing.assert_array_equal(before[0], x.reshape(dst))
    np.testing.assert_array_equal(after[0], x.reshape(dst))
    names = [op.name for op in _lower(text).walk()]
    return "shared" if any(n.startswith("frag.") and "shared" in n for n in names) or "frag.barrier" in names \
        else "registers"


SHAPES = [(16, 64), (32, 32), (64, 16), (8, 128), (1, 1024), (1024, 1)]


@pytest.mark.parametrize("src, dst", [p for p in itertools.permutations(SHAPES, 2) if p[0] in ((16, 64), (8, 128))])
def test_tile_to_tile_moves_no_data(src, dst):
    """A loaded tile's fragment reread in the new shape: the lanes keep their registers."""
    assert _check(_kernel(src, dst), src, dst) == "registers"


@pytest.mark.parametrize("src, dst", [((16, 64), (1024,)), ((1024,), (32, 32)), ((64,), (8, 8)), ((256,), (1024 // 8, 2)),
                                      ((32, 8), (256,))])
def test_vectors_take_the_tiles_registers(src, dst):
    """A vector reshaped from or to a tile takes the tile's fragment reread as a vector
    (:func:`reshaped_vector_fragment`): the lanes keep their registers."""
    assert _check(_kernel(src, dst), src, dst) == "registers"


def test_a_vector_of_a_reduction_moves():
    """A row sum's vector holds the reduced tile's rows: read as a 4 x 4 tile (whose own fragment tile-layout
    chose) its values go through shared memory."""
    g, o = _view_type(2, "f32"), _view_type(2, "f32")
    text = f"""
func.func @k(%g: {g}, %o: {o})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : {g} -> !tile.rt<16x32xf32>
  %s = tile.row_sum %x : !tile.rt<16x32xf32> -> !tile.rv<16xf32, row>
  %t = tile.reshape %s : !tile.rv<16xf32, row> -> !tile.rt<4x4xf32>
  tile.store %t, %o[%c0, %c0] : !tile.rt<4x4xf32> -> {o}
  func.return
}}"""
    x = np.random.default_rng().integers(-8, 8, (16, 32)).astype(np.float32)  # exact sums in any order
    before, after = _both(text, "k", [x], [np.full((4, 4), np.nan, np.float32)])
    np.testing.assert_array_equal(before[0], x.sum(1).reshape(4, 4))
    np.testing.assert_array_equal(after[0], x.sum(1).reshape(4, 4))
    _path_agrees(text)


@pytest.mark.parametrize("elem", ["i32", "i8"])
def test_integers_and_bytes(elem):
    """Narrow integers travel through shared memory as i32 (as a layout conversion's do)."""
    _check(_kernel((16, 32), (512,), elem), (16, 32), (512,), elem)
    _check(_kernel((16, 32), (8, 64), elem), (16, 32), (8, 64), elem)


def test_fragments_decided_apart_go_through_shared_memory():
    """Both fragments in the types (an mma accumulator's and a row-major one), which no renumbering
    relates: shared memory."""
    acc = mma_fragment(MMA_M16N8K16_F16, "C", (16, 32)).layout
    rows = default_fragment((32, 16)).layout
    text = _kernel((16, 32), (32, 16), src_layout=str(acc), dst_layout=str(rows))
    assert _check(text, (16, 32), (32, 16)) == "shared"


@pytest.mark.parametrize("dst", [(32, 64), (128, 16), (2048,)])
def test_a_tile_of_the_block(dst):
    """Four warps, a tile the same in every warp: spread over the block (a block fragment), reshaped."""
    path = _check(_kernel((64, 32), dst, threads=128), (64, 32), dst)
    if len(dst) == 2:
        assert path == "registers"


def test_reshaped_fragment_keeps_each_element_in_its_register():
    """For the fragments tile-layout gives (mma operands, row-major, the block's), each (thread, value)
    holds the element of the same row-major index in both shapes."""
    for frag in (mma_fragment(MMA_M16N8K16_F16, "A", (32, 32)), mma_fragment(MMA_M16N8K16_F16, "C", (16, 64)),
                 default_fragment((16, 64)), block_fragment((64, 32), 128, 4)):
        count = frag.dims[0] * frag.dims[1]
        for rows in (1, 2, 8, 32, count // 4, count):
            new = reshaped_fragment(frag, (rows, count // rows))
            assert reshape_permutation(frag, new) == tuple(range(frag.num_values))
            for t in range(frag.tv.num_threads):
                for v in range(frag.num_values):
                    assert row_major_index(frag.tv.coord(t, v), frag.dims) == flat_index(new, t, v)


def test_reshaped_fragment_refuses_what_no_layout_expresses():
    """24 values a lane (a 24 x 32 tile, a column a lane): no bit-linear layout rereads it; tile-distribute
    then moves the values through shared memory."""
    with pytest.raises(FragmentError, match="not powers of two"):
        reshaped_fragment(default_fragment((24, 32)), (32, 24))
    assert _check(_kernel((24, 32), (32, 24)), (24, 32), (32, 24)) == "shared"


@pytest.mark.parametrize("src, dst, message", [
    ("!tile.rt<16x64xf32>", "!tile.rt<16x32xf32>", "keeps the number of elements"),
    ("!tile.rt<16x64xf32>", "!tile.rt<32x32xf16>", "keeps the element type"),
    ("!tile.rv<64xf32, col>", "!tile.rt<8x16xf32>", "keeps the number of elements"),
])
def test_verifier(src, dst, message):
    from xdsl.utils.exceptions import VerifyException

    text = f"""
func.func @k(%x: {src}) -> {dst} {{
  %y = tile.reshape %x : {src} -> {dst}
  func.return %y : {dst}
}}"""
    with pytest.raises(VerifyException, match=message):
        _parse(text).verify()


def _join_kernel(dims: tuple[int, int], dim: int, interleaved: bool, elem: str = "f32", threads: int = 32,
                 part_layout: str = "", result_layout: str = "") -> str:
    a = _type(dims, elem, part_layout)
    out = (2 * dims[0], dims[1]) if dim == 0 else (dims[0], 2 * dims[1])
    r = _type(out, elem, result_layout)
    g = _view_type(2, elem)
    flag = " interleaved" if interleaved else ""
    return f"""
func.func @k(%g: {g}, %h: {g}, %o: {g})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{threads}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %a = tile.load %g[%c0, %c0] : {g} -> {a}
  %b = tile.load %h[%c0, %c0] : {g} -> {a}
  %y = tile.join %a, %b dim {dim}{flag} : {a}, {a} -> {r}
  tile.store %y, %o[%c0, %c0] : {r} -> {g}
  func.return
}}"""


def _joined(a: np.ndarray, b: np.ndarray, dim: int, interleaved: bool) -> np.ndarray:
    if not interleaved:
        return np.concatenate([a, b], axis=dim)
    out = np.stack([a, b], axis=dim + 1)
    return out.reshape((2 * a.shape[0], a.shape[1]) if dim == 0 else (a.shape[0], 2 * a.shape[1]))


@pytest.mark.parametrize("dim, interleaved", [(0, False), (0, True), (1, False), (1, True)])
@pytest.mark.parametrize("elem, threads, layouts", [("f32", 32, None), ("i8", 32, None), ("f32", 128, None),
                                                    ("f32", 32, "apart")])
def test_join(dim, interleaved, elem, threads, layouts):
    """Both parts in the result's registers (a fragment each thread holds of both parts), or, with the
    parts' and the result's fragments given apart, through shared memory; both interpreters."""
    dims = (32, 64) if threads == 128 else (16, 32)
    part_layout = result_layout = ""
    if layouts == "apart":
        out = (2 * dims[0], dims[1]) if dim == 0 else (dims[0], 2 * dims[1])
        part_layout = str(mma_fragment(MMA_M16N8K16_F16, "C", dims).layout)
        result_layout = str(default_fragment(out).layout)
    text = _join_kernel(dims, dim, interleaved, elem, threads, part_layout, result_layout)
    a, b = _values(dims, elem), _values(dims, elem)
    out = _joined(a, b, dim, interleaved)
    poison = np.full(out.shape, np.nan, np.float32) if elem == "f32" else np.full(out.shape, 77, a.dtype)
    before, after = _both(text, "k", [a, b], [poison])
    np.testing.assert_array_equal(before[0], out)
    np.testing.assert_array_equal(after[0], out)
    names = [op.name for op in _lower(text).walk()]
    if layouts is None:  # tile-layout chose the result from the parts: the registers hold it
        assert "tile.barrier" not in names
    else:  # the path the fragments allow
        parts = Fragment(dims, TVLayout(mma_fragment(MMA_M16N8K16_F16, "C", dims).layout, dims))
        whole = default_fragment(out.shape)
        assert ("tile.barrier" in names) == (join_plan((parts, parts), whole, dim, interleaved) is None)


def _split_kernel(dims: tuple[int, int], dim: int, interleaved: bool, elem: str = "f32", threads: int = 32,
                  whole_layout: str = "", part_layout: str = "") -> str:
    x = _type(dims, elem, whole_layout)
    half = (dims[0] // 2, dims[1]) if dim == 0 else (dims[0], dims[1] // 2)
    p = _type(half, elem, part_layout)
    g = _view_type(2, elem)
    flag = " interleaved" if interleaved else ""
    return f"""
func.func @k(%g: {g}, %o: {g}, %q: {g})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{threads}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : {g} -> {x}
  %a, %b = tile.split %x dim {dim}{flag} : {x} -> {p}, {p}
  tile.store %a, %o[%c0, %c0] : {p} -> {g}
  tile.store %b, %q[%c0, %c0] : {p} -> {g}
  func.return
}}"""


@pytest.mark.parametrize("dim, interleaved", [(0, False), (0, True), (1, False), (1, True)])
@pytest.mark.parametrize("elem, threads, layouts", [("f32", 32, None), ("i8", 32, None), ("f32", 128, None),
                                                    ("f32", 32, "apart")])
def test_split(dim, interleaved, elem, threads, layouts):
    """The inverse of tile.join: the parts in the input's registers, or (fragments given apart) through
    shared memory; both interpreters."""
    dims = (64, 64) if threads == 128 else (32, 32)
    whole_layout = part_layout = ""
    half = (dims[0] // 2, dims[1]) if dim == 0 else (dims[0], dims[1] // 2)
    if layouts == "apart":
        whole_layout = str(default_fragment(dims).layout)
        part_layout = str(mma_fragment(MMA_M16N8K16_F16, "C", half).layout)
    text = _split_kernel(dims, dim, interleaved, elem, threads, whole_layout, part_layout)
    x = _values(dims, elem)
    pick = (slice(None),) * dim
    want = (x[(*pick, slice(0, None, 2))], x[(*pick, slice(1, None, 2))]) if interleaved else np.split(x, 2, axis=dim)
    poison = np.full(half, np.nan, np.float32) if elem == "f32" else np.full(half, 77, x.dtype)
    before, after = _both(text, "k", [x], [poison, poison])
    for got in (before, after):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    _path_agrees(text)


def _path_agrees(text: str) -> str:
    """The path tile-distribute took (shared memory, shuffles of a conversion tile-layout put before the
    op, or registers), checked against what the fragments tile-layout chose allow (:func:`needs_scratch`)."""
    module = _parse(text)
    TileLayoutPass().apply(make_context(), module)
    moves = [op for op in module.walk() if isinstance(op, t.JoinOp | t.SplitOp | t.ReshapeOp | t.ConvertLayoutOp)]
    names = [o.name for o in _lower(text).walk()]
    shared = any(needs_scratch(op) for op in moves)
    assert ("tile.barrier" in names) == shared
    if shared:
        return "shared"
    return "shuffles" if "frag.shfl" in names else "registers"


@pytest.mark.parametrize("dims, dim, interleaved, path", [
    ((32, 32), 1, True, "registers"),  # the default 32 x 32 fragment holds column pairs in each thread
    ((32, 32), 0, False, "registers"),  # and rows r, r + 8, r + 16, r + 24: the halves' rows r and r + 16
    ((32, 32), 0, True, "shuffles"),  # but not rows of both parities: lanes exchange them first (paired_fragment)
])
def test_split_paths(dims, dim, interleaved, path):
    assert _path_agrees(_split_kernel(dims, dim, interleaved)) == path


def test_moves_share_one_scratch():
    """Each move through shared memory is done with its scratch when it ends (a barrier after its loads), so
    every reshape, join, split and layout conversion of a kernel uses one scratch, the largest they need:
    a sort's dozens of steps fit in a block's shared memory."""
    from tilec.passes.tile_distribute.kernel import plan_shared_memory

    acc16, acc8 = (mma_fragment(MMA_M16N8K16_F16, "C", d).layout for d in ((16, 64), (16, 32)))
    rows16, rows8 = default_fragment((32, 32)).layout, default_fragment((32, 16)).layout
    text = f"""
func.func @k(%g: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %p: !tile.gl<f32, [?, ?]>)
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32, {acc16}>
  %v = tile.reshape %t : !tile.rt<16x64xf32, {acc16}> -> !tile.rt<32x32xf32, {rows16}>
  %u = tile.load %g[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x32xf32, {acc8}>
  %w = tile.reshape %u : !tile.rt<16x32xf32, {acc8}> -> !tile.rt<32x16xf32, {rows8}>
  tile.store %v, %o[%c0, %c0] : !tile.rt<32x32xf32, {rows16}> -> !tile.gl<f32, [?, ?]>
  tile.store %w, %p[%c0, %c0] : !tile.rt<32x16xf32, {rows8}> -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    module = _parse(text)
    TileLayoutPass().apply(make_context(), module)
    fn = next(op for op in module.walk() if op.name == "func.func")
    layout = plan_shared_memory(fn, 32)
    assert [(offset, size) for _, offset, size in layout.entries] == [(0, 4096), (0, 4096)] and layout.total == 4096
    lowered = _lower(text)
    assert {op.sym_name.data for op in lowered.walk() if op.name == "frag.shared"} == {"k_v_reshape"}
    g = np.random.default_rng().standard_normal((16, 64)).astype(np.float32)
    outs = [np.full((32, 32), np.nan, np.float32), np.full((32, 16), np.nan, np.float32)]
    run(lowered, "k", *_view(g), *_view(outs[0]), *_view(outs[1]))
    np.testing.assert_array_equal(outs[0], g.reshape(32, 32))
    np.testing.assert_array_equal(outs[1], g[:, :32].reshape(32, 16))


def test_a_join_of_a_warps_part_and_a_blocks():
    """Parts held apart (a warp's mma accumulator, a block fragment; IR only, the language gives both parts
    one fragment): the scratch is the block's, so every warp reads both parts whole (a hunt found each warp
    reading three quarters of the block's part unwritten)."""
    c = mma_fragment(MMA_M16N8K16_F16, "C", (16, 32)).layout
    b = block_fragment((16, 32), 128, 4).layout
    r = default_fragment((32, 32)).layout
    g = _view_type(2, "f32")
    text = f"""
func.func @k(%g: {g}, %h: {g}, %o: {g})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %x = tile.load %g[%c0, %c0] : {g} -> !tile.rt<16x32xf32, {c}>
  %y = tile.load %h[%c0, %c0] : {g} -> !tile.rt<16x32xf32, {b}>
  %z = tile.join %x, %y dim 0 : !tile.rt<16x32xf32, {c}>, !tile.rt<16x32xf32, {b}> -> !tile.rt<32x32xf32, {r}>
  tile.store %z, %o[%c0, %c0] : !tile.rt<32x32xf32, {r}> -> {g}
  func.return
}}"""
    x, y = _values((16, 32), "f32"), _values((16, 32), "f32")
    before, after = _both(text, "k", [x, y], [np.full((32, 32), np.nan, np.float32)])
    np.testing.assert_array_equal(before[0], np.concatenate([x, y]))
    np.testing.assert_array_equal(after[0], np.concatenate([x, y]))


@pytest.mark.parametrize("interleaved", [False, True], ids=["after", "interleaved"])
@pytest.mark.parametrize("threads", [32, 128])
def test_vectors_join(interleaved, threads):
    """Two vectors joined into one of twice the length (``tl.interleave`` / ``tl.cat`` of vectors): the
    result takes both parts' registers side by side (:func:`joined_vector_fragment`), nothing moves."""
    v, w = "!tile.rv<256xf32, col>", "!tile.rv<512xf32, col>"
    g = _view_type(1, "f32")
    text = f"""
func.func @k(%g: {g}, %h: {g}, %o: {g})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{threads}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %a = tile.load %g[%c0] : {g} -> {v}
  %b = tile.load %h[%c0] : {g} -> {v}
  %j = tile.join %a, %b dim 0{' interleaved' if interleaved else ''} : {v}, {v} -> {w}
  tile.store %j, %o[%c0] : {w} -> {g}
  func.return
}}"""
    rng = np.random.default_rng()
    a, b = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    before, after = _both(text, "k", [a, b], [np.full(512, np.nan, np.float32)])
    want = np.stack([a, b], 1).reshape(-1) if interleaved else np.concatenate([a, b])
    np.testing.assert_array_equal(before[0], want)
    np.testing.assert_array_equal(after[0], want)
    names = [op.name for op in _lower(text).walk()]
    assert "tile.barrier" not in names and "frag.shared" not in names
