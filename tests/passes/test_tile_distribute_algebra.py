"""tile-distribute's register algebra: reductions, register vectors, fill values, math.

Each kernel runs in the tile interpreter before the passes and in the lane interpreter after
tile-layout + tile-distribute, on ragged windows with fresh random inputs and NaN-poisoned
outputs, against float64 references; a few go on to PTX that ptxas assembles for sm_80 and sm_90.
The reductions are checked for fragments of several shapes (m16n8k16's C atom, the SIMT lane
grid, one column per lane): the lowering is derived from the fragment, not written per atom.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.parser import Parser

from tilec.codegen.ptx import compile_module
from tilec.codegen.ptxas import assemble, find_ptxas
from tilec.dialects.context import make_context
from tilec.interp import run
from tilec.layout import Layout
from tilec.passes.fragments import fma_fragment
from tilec.passes.tile_distribute import TileDistributePass
from tilec.passes.tile_layout import TileLayoutPass
from tilec.passes.tile_to_llvm import TileToLLVMPass

LAUNCH = "attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>}"

FRAGMENTS = {
    # the default: m16n8k16's C atom tiled over the tile
    "mma_c": (32, 64, None),
    # the SIMT lane grid (4 x 8 lanes of 8 x 4 values)
    "simt_c": (32, 32, fma_fragment("C", (32, 32), (4, 8), (8, 4)).layout),
    # one column per lane, the rows in registers
    "columns": (8, 32, Layout((32, 8), (8, 1))),
}

REDUCE = {"sum": np.sum, "max": np.max, "min": np.min}
COMBINE = {"sum": np.add, "max": np.maximum, "min": np.minimum}


def _parse(text: str):
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _lower(text: str):
    module = _parse(text)
    TileLayoutPass().apply(make_context(), module)
    TileDistributePass().apply(make_context(), module)
    module.verify()
    return module


def _view(x: np.ndarray) -> list:
    return [x, *x.shape, *(s // x.itemsize for s in x.strides)]


def _both(text: str, name: str, inputs: list[np.ndarray], outputs: list[np.ndarray]) -> list[list[np.ndarray]]:
    """Each output after the tile interpreter and after the lane interpreter (fresh NaN copies)."""
    results = []
    for module, lowered in ((_parse(text), False), (_lower(text), True)):
        outs = [np.full_like(o, np.nan) for o in outputs]
        args = [a for x in (*inputs, *outs) for a in (_view(x) if lowered else [x])]
        run(module, name, *args)
        results.append(outs)
    return results


def _rel(got, ref) -> float:
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(got).any(), "an output was never written"
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


@pytest.mark.parametrize("fragment", sorted(FRAGMENTS))
@pytest.mark.parametrize("orientation", ["row", "col"])
@pytest.mark.parametrize("kind", sorted(REDUCE))
@pytest.mark.parametrize("accumulate", [False, True], ids=["plain", "into"])
def test_reductions(fragment, orientation, kind, accumulate):
    """``v = reduce(x)`` or ``v = combine(acc, reduce(x))`` stored as a vector, and broadcast back as
    ``x - v``, on a window that the view cuts (rows and columns past its edge read as ``other``)."""
    rows, cols, layout = FRAGMENTS[fragment]
    rt = f"!tile.rt<{rows}x{cols}xf32{', ' + str(layout) if layout is not None else ''}>"
    n = rows if orientation == "row" else cols
    rv = f"!tile.rv<{n}xf32, {orientation}>"
    other = {"sum": "0.0", "max": "0xFFF0000000000000", "min": "0x7FF0000000000000"}[kind]
    op = f"tile.{orientation}_{kind}"
    acc_line = f"  %a = tile.load %acc[%c0] : !tile.gl<f32, [?]> -> {rv}\n" if accumulate else ""
    into = " into %a" if accumulate else ""
    text = f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %acc: !tile.gl<f32, [?]>, %v: !tile.gl<f32, [?]>, %d: !tile.gl<f32, [?, ?]>) {LAUNCH} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] other({other} : f64) : !tile.gl<f32, [?, ?]> -> {rt}
{acc_line}  %r = {op} %t{into} : {rt} -> {rv}
  tile.store %r, %v[%c0] : {rv} -> !tile.gl<f32, [?]>
  %b = tile.broadcast %r : {rv} -> {rt}
  %y = tile.sub %t, %b : {rt}
  tile.store %y, %d[%c0, %c0] : {rt} -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    rng = np.random.default_rng()
    m, k = rows - 3, cols - 5  # ragged: the window reaches past the view
    x = rng.standard_normal((m, k)).astype(np.float32)
    acc, want, want_d = reduction_reference(rng, x, orientation, kind, accumulate)
    length = len(acc)
    v = np.zeros(length, np.float32)
    d = np.zeros((m, k), np.float32)
    for vout, dout in _both(text, "k", [x, acc], [v, d]):
        assert _rel(vout, want) < 1e-5
        assert _rel(dout, want_d) < 1e-5


def reduction_reference(rng, x: np.ndarray, orientation: str, kind: str, accumulate: bool):
    """(accumulator input, float64 ``v = reduce(x)`` or ``combine(acc, reduce(x))``, float64 ``x - v``
    broadcast back) for a row or column reduction of ``x``."""
    acc = rng.standard_normal(x.shape[0] if orientation == "row" else x.shape[1]).astype(np.float32)
    want = REDUCE[kind](x.astype(np.float64), axis=1 if orientation == "row" else 0)
    if accumulate:
        want = COMBINE[kind](acc.astype(np.float64), want)
    return acc, want, x - (want[:, None] if orientation == "row" else want[None, :])


MATH = {
    "math.exp": np.exp,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.tanh": np.tanh,
    "math.sqrt": np.sqrt,
}


@pytest.mark.parametrize("fn", sorted(MATH))
def test_math_in_map_bodies(fn):
    """The approximate PTX functions through tile.map, in the interpreters and assembled by ptxas."""
    text = f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>) {LAUNCH} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x16xf32>
  %u = tile.map %t : !tile.rt<16x16xf32> -> !tile.rt<16x16xf32> {{
  ^bb0(%a: f32):
    %b = {fn} %a : f32
    tile.yield %b : f32
  }}
  tile.store %u, %y[%c0, %c0] : !tile.rt<16x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    x = np.random.default_rng().uniform(0.1, 4.0, (16, 16)).astype(np.float32)
    for (y,) in _both(text, "k", [x], [np.zeros((16, 16), np.float32)]):
        assert _rel(y, MATH[fn](x.astype(np.float64))) < 1e-5
    _assembles(text)


def test_vector_load_store_and_fill():
    """A row vector loaded (spread over the lanes: it meets no tile), doubled, stored; a -inf fill."""
    text = f"""
func.func @k(%x: !tile.gl<f32, [?]>, %y: !tile.gl<f32, [?]>) {LAUNCH} {{
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : !tile.gl<f32, [?]> -> !tile.rv<64xf32, row>
  %w = tile.add %v, %v : !tile.rv<64xf32, row>
  %n = tile.load %x[%c0] other(0xFFF0000000000000 : f64) : !tile.gl<f32, [?]> -> !tile.rv<64xf32, row>
  %m = tile.max %w, %n : !tile.rv<64xf32, row>
  tile.store %m, %y[%c0] : !tile.rv<64xf32, row> -> !tile.gl<f32, [?]>
  func.return
}}"""
    x = np.random.default_rng().standard_normal(50).astype(np.float32)
    for (y,) in _both(text, "k", [x], [np.zeros(50, np.float32)]):
        np.testing.assert_array_equal(y, np.maximum(2 * x, x))
    _assembles(text)


def _assembles(text: str) -> None:
    module = _lower(text)
    TileToLLVMPass().apply(make_context(), module)
    for arch in ("sm_80", "sm_90"):
        ptx = compile_module(module, arch=arch).ptx
        assert ".entry k(" in ptx
        if find_ptxas() is not None:  # the test extra installs it; tests/conftest.py reports a missing one
            assemble(ptx, arch)


LIT = Path(__file__).resolve().parents[1] / "lit" / "passes"


@pytest.mark.parametrize("path, name", [
    ("tile-distribute/convert.mlir", "permute"),   # a renumbering within each lane
    ("tile-distribute/convert.mlir", "chain"),     # tf32 C -> A, through shared memory
    ("tile-layout/convert.mlir", "both"),          # one f16 tile as A and (converted) B
])
def test_layout_conversions(path, name):
    """Each conversion path against the tile interpreter (where the conversion is the identity)."""
    text = next(chunk for chunk in (LIT / path).read_text().split("// -----") if f"@{name}(" in chunk)
    rng = np.random.default_rng()
    g = rng.standard_normal((16, 16)).astype(np.float16 if name == "both" else np.float32)
    if name != "both":
        g = g[:16, :8].copy()
    out_shape = (16, 16) if name == "both" else (16, 8)
    before, after = _both(text, name, [g], [np.zeros(out_shape, np.float32)])
    # tf32 rounds the mma operands in the lane interpreter only (as the tensor cores do)
    assert _rel(after[0], before[0]) < (2e-3 if name == "chain" else 1e-6)


@pytest.mark.parametrize("thr, val", [("(8,3):(3,1)", "(2,3):(1,2)"), ("(16,3):(1,16)", "(1,3):(1,1)")])
def test_copies_with_three_values_per_thread(thr, val):
    """MoYe's tiled copy with 3 values a thread along a row (seed note 004, on a 16 x 9 tile): element
    copies (no vector of 3), and the tile arrives whole."""
    text = f"""
func.func @k(%g: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>)
    attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 576>}} {{
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<16x9xf32>
  tile.copy %g[%c0, %c0] -> %s thr <{thr}> val <{val}> : !tile.gl<f32, [?, ?]> -> !tile.st<16x9xf32>
  tile.barrier
  %r = tile.load %s[%c0, %c0] : !tile.st<16x9xf32> -> !tile.rt<16x8xf32>
  tile.store %r, %o[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    g = np.random.default_rng().standard_normal((16, 9)).astype(np.float32)
    for (o,) in _both(text, "k", [g], [np.zeros((16, 8), np.float32)]):
        np.testing.assert_array_equal(o, g[:, :8])
    _assembles(text)


@pytest.mark.parametrize("r0, c0, shape", [(20, 10, (40, 70)), (0, 0, (16, 64)), (5, 3, (9, 30))])
def test_causal_mask_from_coordinates(r0, c0, shape):
    """tile.iota gives each value its row and column in the view; a tile.map compares them (column
    <= row) and selects -inf: the causal softmax of ``masks.mlir`` at window (r0, c0)."""
    text = (LIT / "tile-distribute" / "masks.mlir").read_text()
    rng = np.random.default_rng()
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    rows = min(16, shape[0] - r0)
    cols = min(64, shape[1] - c0)
    w = x[r0:r0 + rows, c0:c0 + cols].astype(np.float64)
    keep = np.arange(c0, c0 + cols)[None, :] <= np.arange(r0, r0 + rows)[:, None]
    w = np.where(keep, w, -np.inf)
    ref = np.exp(w - w.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    for module, lowered in ((_parse(text), False), (_lower(text), True)):
        o = np.full(shape, np.nan, np.float32)
        args = [*_view(x), *_view(o)] if lowered else [x, o]
        run(module, "causal", *args, r0, c0)
        assert _rel(o[r0:r0 + rows, c0:c0 + cols], ref) < 1e-5
        outside = np.ones(shape, bool)
        outside[r0:r0 + rows, c0:c0 + cols] = False
        assert np.isnan(o[outside]).all(), "wrote outside the window"


def test_map_on_register_vectors():
    """tile.map computes on register vectors too (here rsqrt(v + eps), as a norm's scale)."""
    text = f"""
func.func @k(%x: !tile.gl<f32, [?]>, %y: !tile.gl<f32, [?]>) {LAUNCH} {{
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : !tile.gl<f32, [?]> -> !tile.rv<64xf32, row>
  %w = tile.map %v : !tile.rv<64xf32, row> -> !tile.rv<64xf32, row> {{
  ^bb0(%a: f32):
    %eps = arith.constant 1.0e-05 : f32
    %b = arith.addf %a, %eps : f32
    %r = math.rsqrt %b : f32
    tile.yield %r : f32
  }}
  tile.store %w, %y[%c0] : !tile.rv<64xf32, row> -> !tile.gl<f32, [?]>
  func.return
}}"""
    x = np.random.default_rng().uniform(0.5, 3.0, 61).astype(np.float32)
    for (y,) in _both(text, "k", [x], [np.zeros(61, np.float32)]):
        assert _rel(y, 1 / np.sqrt(x.astype(np.float64) + 1e-5)) < 1e-5
    _assembles(text)


@pytest.mark.parametrize("warps", [1, 4])
def test_vectors_through_shared_memory(warps):
    """A register vector stored to a rank-1 shared tile (once per element, by its leader thread), read
    back after a barrier into another fragment (the row vector of a tile, or of a tile of the block),
    and broadcast over that tile."""
    launch = LAUNCH.replace("block = [32, 1, 1]", f"block = [{32 * warps}, 1, 1]").replace("smem = 0", "smem = 64")
    text = f"""
func.func @k(%x: !tile.gl<f32, [?]>, %t: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>) {launch} {{
  %c0 = arith.constant 0 : index
  %v = tile.load %x[%c0] : !tile.gl<f32, [?]> -> !tile.rv<16xf32, row>
  %s = tile.alloc : !tile.st<16xf32>
  tile.store %v, %s[%c0] : !tile.rv<16xf32, row> -> !tile.st<16xf32>
  tile.barrier
  %w = tile.load %s[%c0] : !tile.st<16xf32> -> !tile.rv<16xf32, row>
  %a = tile.load %t[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x128xf32>
  %b = tile.broadcast %w : !tile.rv<16xf32, row> -> !tile.rt<16x128xf32>
  %d = tile.add %a, %b : !tile.rt<16x128xf32>
  tile.store %d, %y[%c0, %c0] : !tile.rt<16x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}}"""
    rng = np.random.default_rng()
    x = rng.standard_normal(16).astype(np.float32)
    t = rng.standard_normal((16, 128)).astype(np.float32)
    for (y,) in _both(text, "k", [x, t], [np.zeros((16, 128), np.float32)]):
        np.testing.assert_array_equal(y, t + x[:, None])
    _assembles(text)


EPILOGUES = {
    # the activations of the epilogue zoo, written in a tile.map body from the ops that lower
    "sigmoid": ("""
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %b = arith.divf %one, %d : f32""", lambda x: 1 / (1 + np.exp(-x))),
    "silu": ("""
    %one = arith.constant 1.0 : f32
    %n = arith.negf %a : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %b = arith.divf %a, %d : f32""", lambda x: x / (1 + np.exp(-x))),
    "gelu_tanh": ("""
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %k = arith.constant 0.7978845608 : f32
    %c = arith.constant 0.044715 : f32
    %x2 = arith.mulf %a, %a : f32
    %x3 = arith.mulf %x2, %a : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %in = arith.addf %a, %cx3 : f32
    %arg = arith.mulf %k, %in : f32
    %th = math.tanh %arg : f32
    %s = arith.addf %one, %th : f32
    %hx = arith.mulf %half, %a : f32
    %b = arith.mulf %hx, %s : f32""",
                  lambda x: 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))),
    "abs_min_max_select": ("""
    %lo = arith.constant -0.5 : f32
    %hi = arith.constant 0.75 : f32
    %m = math.absf %a : f32
    %c = arith.minimumf %m, %hi : f32
    %neg = arith.cmpf olt, %a, %lo : f32
    %mx = arith.maximumf %a, %lo : f32
    %b = arith.select %neg, %mx, %c : f32""", lambda x: np.where(x < -0.5, np.maximum(x, -0.5), np.minimum(np.abs(x), 0.75))),
}


@pytest.mark.parametrize("name", sorted(EPILOGUES))
def test_epilogue_math_in_map_bodies(name):
    """sigmoid, silu, gelu (tanh) and abs/min/max/select in a tile.map body: both interpreters, f32 in
    and f16 out (the conversion), and PTX that ptxas assembles."""
    body, ref = EPILOGUES[name]
    text = f"""
func.func @k(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f16, [?, ?]>) {LAUNCH} {{
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x32xf32>
  %u = tile.map %t : !tile.rt<16x32xf32> -> !tile.rt<16x32xf32> {{
  ^bb0(%a: f32):{body}
    tile.yield %b : f32
  }}
  %v = tile.convert %u : !tile.rt<16x32xf32> -> !tile.rt<16x32xf16>
  tile.store %v, %y[%c0, %c0] : !tile.rt<16x32xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}}"""
    x = (np.random.default_rng().standard_normal((16, 32)) * 2).astype(np.float32)
    want = ref(x.astype(np.float64))
    for (y,) in _both(text, "k", [x], [np.zeros((16, 32), np.float16)]):
        got = y.astype(np.float64)
        assert np.abs(got - want).max() <= 2e-3 * max(1.0, np.abs(want).max())
    _assembles(text)
