"""tile-swizzle: the chosen layouts, the report, and the meaning kept (interpreter before and after)."""

from __future__ import annotations

import os
import secrets

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr

from tilec.dialects.tile.ops import AllocOp
from tilec.interp import parse_module, run_text
from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.passes.registry import get_tilec_passes
from tilec.passes.tile_swizzle import REPORT_ATTR, TileSwizzlePass


@pytest.fixture
def rng():
    seed = int(os.environ["TILEC_SEED"]) if "TILEC_SEED" in os.environ else secrets.randbits(32)
    print(f"random seed: {seed} (replay with TILEC_SEED={seed})")
    return np.random.default_rng(seed)


def block_kernel(bm: int, bn: int, bk: int, dtype: str = "f16", a_order: str = "row", copy_a: str = "") -> str:
    """The interpreter tests' BLOCK kernel (C = relu(A B + bias)) with plain, unswizzled shared tiles.

    ``a_order="col"`` stores the A tile column-major; ``copy_a`` is extra syntax for A's copy (thr/val).
    """
    gl = f"!tile.gl<{dtype}, [?, ?]>"
    la = f"({bm},{bk}):({bk},1)" if a_order == "row" else f"({bm},{bk}):(1,{bm})"
    st_a = f"!tile.st<{bm}x{bk}x{dtype}, {la}>"
    st_b = f"!tile.st<{bk}x{bn}x{dtype}, ({bk},{bn}):({bn},1)>"
    e = 2 if dtype in ("f16", "bf16") else 4
    smem = (bm * bk + bk * bn) * e
    rt = f"!tile.rt<{bm}x{bn}xf32>"
    cast = f"%h = tile.convert %r : {rt} -> !tile.rt<{bm}x{bn}x{dtype}>" if dtype != "f32" else ""
    out = "%h" if dtype != "f32" else "%r"
    return f"""
func.func @mm_block(%a: {gl}, %b: {gl}, %c: {gl}, %bias: !tile.gl<f32, [1, ?]>, %K: index)
    attributes {{tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = {smem}>}} {{
  %bx = tile.block_id x
  %by = tile.block_id y
  %c0 = arith.constant 0 : index
  %cm = arith.constant {bm} : index
  %cn = arith.constant {bn} : index
  %ck = arith.constant {bk} : index
  %row = arith.muli %by, %cm : index
  %col = arith.muli %bx, %cn : index
  %sa = tile.alloc : {st_a}
  %sb = tile.alloc : {st_b}
  %zero = tile.zeros : {rt}
  %acc = scf.for %k = %c0 to %K step %ck iter_args(%acc_i = %zero) -> ({rt}) {{
    tile.copy %a[%row, %k] -> %sa {copy_a}: {gl} -> {st_a}
    tile.copy %b[%k, %col] -> %sb : {gl} -> {st_b}
    tile.barrier
    %ra = tile.load %sa : {st_a} -> !tile.rt<{bm}x{bk}x{dtype}>
    %rb = tile.load %sb : {st_b} -> !tile.rt<{bk}x{bn}x{dtype}>
    %d = tile.mma %ra, %rb, %acc_i : !tile.rt<{bm}x{bk}x{dtype}>, !tile.rt<{bk}x{bn}x{dtype}>, {rt} -> {rt}
    tile.barrier
    scf.yield %d : {rt}
  }}
  %bt = tile.load %bias[%c0, %col] : !tile.gl<f32, [1, ?]> -> !tile.rt<1x{bn}xf32>
  %bv = tile.col_sum %bt : !tile.rt<1x{bn}xf32> -> !tile.rv<{bn}xf32, col>
  %bb = tile.broadcast %bv : !tile.rv<{bn}xf32, col> -> {rt}
  %s = tile.add %acc, %bb : {rt}
  %r = tile.relu %s : {rt}
  {cast}
  tile.store {out}, %c[%row, %col] : !tile.rt<{bm}x{bn}x{dtype}> -> {gl}
  func.return
}}
"""


def swizzle(text: str, report: bool = True):
    module = parse_module(text)
    TileSwizzlePass(report=report).apply(None, module)
    module.verify()
    return module


def allocs(module) -> list[AllocOp]:
    return [op for op in module.walk() if isinstance(op, AllocOp)]


def run_both(text: str, m: int, n: int, k: int, grid, rng, dtype=np.float16) -> None:
    """Run the kernel before and after the pass on the same random inputs: bit-identical outputs."""
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    bias = rng.standard_normal((1, n)).astype(np.float32)
    after = str(swizzle(text, report=False))
    outs = []
    for program in (text, after):
        c = np.full((m, n), np.nan, dtype)
        run_text(program, "mm_block", a, b, c, bias, k, grid=grid)
        outs.append(c)
    assert not np.isnan(outs[0]).any()
    np.testing.assert_array_equal(outs[0], outs[1])
    ref = np.maximum(a.astype(np.float64) @ b + bias[0], 0)
    assert np.max(np.abs(outs[1] - ref)) <= 1e-2 * np.max(np.abs(ref))


def test_registered():
    assert get_tilec_passes()["tile-swizzle"]() is TileSwizzlePass


def test_block_kernel_32_wide_gets_sw233_and_keeps_its_meaning(rng):
    text = block_kernel(32, 32, 32)
    sa, sb = allocs(swizzle(text))
    for alloc in (sa, sb):
        assert alloc.result.type.layout == ComposedLayout(Swizzle(2, 3, 3), 0, Layout((32, 32), (32, 1)))
        assert alloc.attributes[REPORT_ATTR] == StringAttr("stores 1-way -> 1-way, ldmatrix 4-way -> 1-way")
    # every use now names the swizzled type
    assert str(swizzle(text)).count("Sw<2,3,3> o 0 o (32,32):(32,1)") == 2 + 2 + 2
    run_both(text, 64, 64, 64, (2, 2, 1), rng)


def test_block_kernel_64_wide_gets_sw333(rng):
    text = block_kernel(32, 64, 64)  # A: 32x64, B: 64x64, both with 64-element rows
    sa, sb = allocs(swizzle(text))
    assert str(sa.result.type.layout) == "Sw<3,3,3> o 0 o (32,64):(64,1)"
    assert str(sb.result.type.layout) == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    assert sa.attributes[REPORT_ATTR].data == "stores 1-way -> 1-way, ldmatrix 8-way -> 1-way"
    run_both(text, 64, 128, 128, (2, 2, 1), rng)


def test_column_major_bf16_and_128_wide(rng):
    text = block_kernel(32, 128, 32, dtype="bf16", a_order="col")
    sa, sb = allocs(swizzle(text))
    assert str(sa.result.type.layout) == "Sw<2,3,3> o 0 o (32,32):(1,32)"  # columns of 32 bf16
    assert str(sb.result.type.layout) == "Sw<3,3,4> o 0 o (32,128):(128,1)"  # rows of 256 bytes
    assert sb.attributes[REPORT_ATTR].data == "stores 1-way -> 1-way, ldmatrix 8-way -> 1-way"
    run_both(text, 32, 128, 64, (1, 1, 1), rng, dtype=np.float32)  # bf16 views are float32 arrays


def test_f32_tiles(rng):
    text = block_kernel(32, 32, 32, dtype="f32")
    sa, _ = allocs(swizzle(text))
    assert str(sa.result.type.layout) == "Sw<3,2,3> o 0 o (32,32):(32,1)"
    assert sa.attributes[REPORT_ATTR].data == "stores 1-way -> 1-way, ldmatrix 8-way -> 1-way, lds32 8-way -> 1-way"
    run_both(text, 32, 32, 64, (1, 1, 1), rng, dtype=np.float32)


def test_copy_with_column_ordered_threads_conflicts_before(rng):
    text = block_kernel(64, 32, 64, copy_a="thr <(16,8):(1,16)> val <(1,8):(0,1)> ")
    sa, _ = allocs(swizzle(text))
    assert str(sa.result.type.layout) == "Sw<3,3,3> o 0 o (64,64):(64,1)"
    assert sa.attributes[REPORT_ATTR].data == "stores 8-way -> 1-way, ldmatrix 8-way -> 1-way"
    run_both(text, 64, 32, 64, (1, 1, 1), rng)


KEPT = """
func.func private @use(!tile.st<32x64xf16, (32,64):(64,1)>)
func.func @k() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 12288>} {
  %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %r = tile.load %s : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<64x64xf16>
  %t = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  func.call @use(%t) : (!tile.st<32x64xf16, (32,64):(64,1)>) -> ()
  %u = tile.alloc : !tile.st<16x8xf16, (16,8):(8,1)>
  func.return
}
"""


def test_swizzled_escaping_and_narrow_tiles_are_kept():
    before = [str(a.result.type) for a in allocs(parse_module(KEPT))]
    module = swizzle(KEPT)
    s, t, u = allocs(module)
    assert [str(a.result.type) for a in (s, t, u)] == before
    assert s.attributes[REPORT_ATTR].data == "kept: ldmatrix 1-way"
    assert t.attributes[REPORT_ATTR].data == "kept: used by func.call"
    assert u.attributes[REPORT_ATTR].data == "stores 1-way -> 1-way, ldmatrix 1-way -> 1-way"
    assert REPORT_ATTR not in allocs(swizzle(KEPT, report=False))[0].attributes


def test_swizzling_twice_changes_nothing():
    once = str(swizzle(block_kernel(32, 64, 64), report=False))
    assert str(swizzle(once, report=False)) == once
