"""tile.take (numpy's take_along_axis, Triton's tl.gather) through tile-layout and tile-distribute.

The index and the result share a fragment; the source keeps its own, and tile-distribute moves it
through shared memory: each lane stores its elements, the block synchronises, each lane loads the
element each of its indices names. Each case runs on fresh random values with a NaN-poisoned output,
on the tile interpreter (before the passes) and the lane interpreter (after); indices past either end
of the axis read 0.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from tests.passes.test_tile_distribute_algebra import _both, _lower, _parse
from tilec.dialects.tile import ops as t
from tilec.layout import MMA_M16N8K16_F16
from tilec.passes.fragments import mma_fragment

_NP = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32, "i8": np.int8, "i64": np.int64}


def _type(dims: tuple[int, ...], elem: str, layout: str = "") -> str:
    layout = f", {layout}" if layout else ""
    if len(dims) == 1:
        return f"!tile.rv<{dims[0]}x{elem}, col{layout}>"
    return f"!tile.rt<{dims[0]}x{dims[1]}x{elem}{layout}>"


def _gl(rank: int, elem: str) -> str:
    return f"!tile.gl<{elem}, [{', '.join('?' * rank)}]>"


def _kernel(src: tuple[int, ...], index: tuple[int, ...], axis: int, elem: str = "f32", kind: str = "i32",
            threads: int = 32, src_layout: str = "") -> str:
    s, i, r = _type(src, elem, src_layout), _type(index, kind), _type(index, elem)
    gs, gi, go = _gl(len(src), elem), _gl(len(index), kind), _gl(len(index), elem)
    at = ", ".join("%c0" for _ in src)
    return f"""
func.func @k(%g: {gs}, %n: {gi}, %o: {go})
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [{threads}, 1, 1], smem = 0>}} {{
  %c0 = arith.constant 0 : index
  %x = tile.load %g[{at}] : {gs} -> {s}
  %i = tile.load %n[{at}] : {gi} -> {i}
  %y = tile.take %x[%i] axis {axis} : {s}[{i}] -> {r}
  tile.store %y, %o[{at}] : {r} -> {go}
  func.return
}}"""


def _reference(x: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    inside = (idx >= 0) & (idx < x.shape[axis])
    return np.where(inside, np.take_along_axis(x, np.where(inside, idx, 0), axis), 0).astype(x.dtype)


def _check(src, index, axis, elem="f32", kind="i32", threads=32, src_layout="", outside=True) -> None:
    rng = np.random.default_rng()
    if elem.startswith("f"):
        x = rng.standard_normal(src).astype(_NP[elem])
    else:
        x = rng.integers(-100, 100, src).astype(_NP[elem])
    low, high = (-3, src[axis] + 3) if outside else (0, src[axis])
    idx = rng.integers(low, high, index).astype(_NP[kind])
    poison = np.full(index, np.nan, x.dtype) if elem.startswith("f") else np.full(index, 77, x.dtype)
    text = _kernel(src, index, axis, elem, kind, threads, src_layout)
    before, after = _both(text, "k", [x, idx], [poison])
    want = _reference(x, idx, axis)
    np.testing.assert_array_equal(before[0], want)
    np.testing.assert_array_equal(after[0], want)


@pytest.mark.parametrize("src, index, axis", [
    ((16, 64), (16, 8), 1), ((16, 64), (16, 64), 1), ((16, 32), (16, 128), 1),
    ((64, 16), (8, 16), 0), ((32, 32), (32, 32), 0), ((8, 8), (64, 8), 0),
    ((256,), (256,), 0), ((64,), (512,), 0), ((1024,), (32,), 0),
])
def test_take_along_either_axis(src, index, axis):
    """Fewer, as many or more indices than the axis holds; indices past either end read 0."""
    _check(src, index, axis)


@pytest.mark.parametrize("threads", [64, 128])
def test_a_tile_of_the_block(threads):
    """Tiles the same in every warp are spread over the block: each warp stores its part of the source."""
    _check((64, 32), (64, 32), 1, threads=threads)
    _check((64, 32), (16, 32), 0, threads=threads)


@pytest.mark.parametrize("elem", ["f16", "i32", "i8"])
@pytest.mark.parametrize("kind", ["i32", "i64"])
def test_element_and_index_types(elem, kind):
    _check((16, 32), (16, 16), 1, elem, kind)


def test_a_source_in_an_mma_fragment():
    """The source's fragment decided apart (an mma accumulator's): the take reads it all the same."""
    acc = mma_fragment(MMA_M16N8K16_F16, "C", (16, 32)).layout
    _check((16, 32), (16, 32), 1, src_layout=str(acc), outside=False)


def test_lowering_goes_through_shared_memory():
    """A source each thread holds 32 values of: stored to shared memory, each pick a load."""
    ops = [op.name for op in _lower(_kernel((16, 64), (16, 8), 1)).walk()]
    assert "tile.take" not in ops and "frag.shared" in ops and "tile.barrier" in ops


@pytest.mark.parametrize("table, picks, threads", [(16, 256, 32), (16, 1024, 128), (64, 512, 128), (128, 256, 32)])
@pytest.mark.parametrize("elem", ["f32", "f16", "i8"])
def test_small_tables_are_shuffled(table, picks, threads, elem):
    """A table every warp holds whole, a few values a thread (``take_shuffles``): each pick one shuffle of
    each value a thread holds and a select; no shared memory, no barrier."""
    _check((table,), (picks,), 0, elem, threads=threads)
    ops = [op.name for op in _lower(_kernel((table,), (picks,), 0, elem, threads=threads)).walk()]
    assert "frag.shfl" in ops and "frag.shared" not in ops and "tile.barrier" not in ops


@pytest.mark.parametrize("src, index, axis, message", [
    ("!tile.rt<16x64xf32>", "!tile.rt<8x8xi32>", 1, "must have the extents of"),
    ("!tile.rt<16x64xf32>", "!tile.rt<16x8xi16>", 1, "must hold i32 or i64"),
    ("!tile.rt<16x64xf32>", "!tile.rt<16x8xi32>", 2, "axis 2 is not an axis"),
    ("!tile.rv<64xf32, col>", "!tile.rt<16x8xi32>", 0, "both register tiles or both register vectors"),
])
def test_verifier(src, index, axis, message):
    elem = "f32"
    r = index.replace("i32", elem).replace("i16", elem)
    text = f"""
func.func @k(%x: {src}, %i: {index}) -> {r} {{
  %y = tile.take %x[%i] axis {axis} : {src}[{index}] -> {r}
  func.return %y : {r}
}}"""
    with pytest.raises(VerifyException, match=message):
        _parse(text)


def test_op_is_registered():
    assert t.TakeOp.name == "tile.take"


@pytest.mark.parametrize("elem", ["f64", "i64"])
def test_small_tables_of_64_bit_values_are_shuffled(elem):
    """64-bit values shuffle as their two 32-bit halves."""
    _check((16,), (256,), 0, elem, threads=64)
    ops = [op.name for op in _lower(_kernel((16,), (256,), 0, elem, threads=64)).walk()]
    assert "frag.shfl" in ops and "frag.shared" not in ops and "tile.barrier" not in ops
