"""tile-pipeline: multi-stage cp.async pipelining of the K loop (and register double-buffering).

Meaning: the contract kernel (examples/levels/gemm_warp_level.mlir) before and
after the pass runs in the CPU interpreter on ragged shapes and agrees with
float64 numpy; without register double-buffering the pipelined kernel is
bit-identical to the synchronous one. The interpreter lands an async copy only
at the tile.async_wait that completes its group (or, in ``eager`` mode, at
issue) and starts shared memory as NaN, so the tests also show that the waits
and the barrier are load-bearing: taking one out, or waiting one group short,
or issuing the next copy before the barrier, gives NaN or wrong numbers.
Form: stage counts, commit/wait arithmetic, smem, the tile.stage op.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.exceptions import PassFailedException, VerifyException

from tilec.dialects.tile import ops as t
from tilec.interp import parse_module, run
from tilec.layout import ComposedLayout, Layout, Swizzle
from tilec.passes.tile_pipeline import TilePipelineError, TilePipelinePass, staged_layout
from tilec.passes.registry import PASSES, PipelineSpecError, build_pipeline
from tilec.api import make_context

REPO = Path(__file__).resolve().parents[2]
KERNEL = (REPO / "examples" / "levels" / "gemm_warp_level.mlir").read_text()

SHAPES = [(64, 64, 32), (100, 70, 45), (17, 33, 65), (64, 64, 200), (40, 50, 8), (20, 30, 0)]
SPECS = [
    "tile-pipeline{stages=2}",
    "tile-pipeline{stages=3}",
    "tile-pipeline{stages=3 reg-double-buffer=false}",
    "tile-pipeline{stages=4 reg-double-buffer=false}",
    "tile-swizzle,tile-pipeline{stages=2}",
    "tile-swizzle,tile-pipeline{stages=3}",
]


def _text(module: ModuleOp) -> str:
    out = io.StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def transformed(spec: str, text: str = KERNEL) -> ModuleOp:
    if "tile-swizzle" in spec and "tile-swizzle" not in PASSES:
        pytest.skip("tile-swizzle is not registered yet")
    module = parse_module(text)
    build_pipeline(spec).apply(make_context(), module)
    module.verify()
    return parse_module(_text(module))  # and it prints and parses back


_CACHE: dict[str, ModuleOp] = {}


def cached(spec: str) -> ModuleOp:
    if spec not in _CACHE:
        _CACHE[spec] = transformed(spec)
    return _CACHE[spec]


def gemm(module: ModuleOp | str, m: int, n: int, k: int, **options) -> tuple[np.ndarray, np.ndarray]:
    """Run the kernel on seeded random data: (C as computed, float64 reference)."""
    if isinstance(module, str):
        module = parse_module(module)
    rng = np.random.default_rng(m * 10007 + n * 101 + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    c = np.full((m, n), np.nan, np.float16)
    run(module, "gemm", a, b, c, bias, grid=(-(-m // 64) * -(-n // 64), 1, 1), **options)
    ref = np.maximum(a.astype(np.float64) @ b.astype(np.float64) + bias, 0)
    return c, ref


def rel_err(c: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(c.astype(np.float64) - ref).max() / max(np.abs(ref).max(), 1e-12))


_BEFORE: dict[tuple, np.ndarray] = {}


def before(shape) -> np.ndarray:
    if shape not in _BEFORE:
        _BEFORE[shape] = gemm(KERNEL, *shape)[0]
    return _BEFORE[shape]


def loop_of(module: ModuleOp) -> scf.ForOp:
    (loop,) = [o for o in module.walk() if isinstance(o, scf.ForOp)]
    return loop


# -- meaning --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("spec", SPECS)
def test_meaning_preserved(spec, shape):
    c, ref = gemm(cached(spec), *shape)
    assert not np.isnan(c).any(), "NaN in the output: a stage was read before its copy landed"
    assert rel_err(c, ref) < 2e-3
    if "reg-double-buffer=false" in spec:
        # Pipelining moves copies, not arithmetic: bit for bit the synchronous kernel's answer.
        np.testing.assert_array_equal(c, before(shape))
    else:
        # Atom-K steps sum in f32 per step: f32 rounding apart, the same.
        np.testing.assert_allclose(c.astype(np.float32), before(shape).astype(np.float32), rtol=2e-3, atol=2e-3)


ODD_ROWS = KERNEL.replace(
    "func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>,",
    "func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 2 : i64}, "
    "%b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 2 : i64},",
)


@pytest.mark.parametrize("shape", [(17, 33, 65), (64, 64, 200)], ids=lambda s: "x".join(map(str, s)))
def test_element_copies_get_two_stages(shape):
    """Copies of 2-byte rows (tests/lit/passes/tile-pipeline/element_copies.mlir): stages=4 gives their
    loop two, and the kernel means what the synchronous one does (the whole pipeline on such rows:
    tests/test_matmul.py::test_odd_rows_kernel_means_the_same_in_the_interpreter)."""
    assert ODD_ROWS != KERNEL
    module = transformed("tile-pipeline{stages=4 reg-double-buffer=false}", ODD_ROWS)
    staged = [o.result.type for o in module.walk() if isinstance(o, t.AllocOp)]
    assert [ty.dims[0] for ty in staged[:2]] == [2, 2]
    m, n, k = shape
    c, ref = gemm(module, *shape)
    np.testing.assert_array_equal(c, before(shape))
    assert rel_err(c, ref) < 2e-3


SWIZZLED = KERNEL.replace("(64,32):(32,1)", "Sw<3,3,3> o 0 o (64,32):(32,1)").replace(
    "(32,64):(64,1)", "Sw<3,3,3> o 0 o (32,64):(64,1)"
)


@pytest.mark.parametrize("stages", [2, 3])
def test_swizzled_by_hand(stages):
    """Swizzled tiles (independent of tile-swizzle's choice) keep their swizzle in every stage."""
    module = transformed(f"tile-pipeline{{stages={stages} reg-double-buffer=false}}", SWIZZLED)
    allocs = [o.result.type for o in module.walk() if isinstance(o, t.AllocOp)]
    assert [str(a.layout) for a in allocs] == [
        f"Sw<3,3,3> o 0 o ({stages},64,32):(2048,32,1)",
        f"Sw<3,3,3> o 0 o ({stages},32,64):(2048,64,1)",
    ]
    for shape in [(100, 70, 45), (64, 64, 200)]:
        c, _ = gemm(module, *shape)
        np.testing.assert_array_equal(c, gemm(SWIZZLED, *shape)[0])
        np.testing.assert_array_equal(c, before(shape))


@pytest.mark.parametrize("spec", ["tile-pipeline{stages=2}", "tile-pipeline{stages=3}"])
@pytest.mark.parametrize("options", [{"async_mode": "eager"}, {"warp_order": "descending"}])
def test_other_schedules(spec, options):
    """Copies landing at issue (a write into a stage still being read would show) and the warps in
    the other order give the same answer."""
    for shape in [(100, 70, 45), (64, 64, 200)]:
        c, _ = gemm(cached(spec), *shape, **options)
        d, _ = gemm(cached(spec), *shape)
        np.testing.assert_array_equal(c, d)


def test_tiled_then_pipelined_transposes():
    """tile-tiling's output for A^T B^T (loads of K x M and N x K windows) pipelines too."""
    if "tile-tiling" not in PASSES:
        pytest.skip("tile-tiling is not registered yet")
    text = """
func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) {
  tile.matmul %a, %b -> %c transpose_a transpose_b : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f32, [?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}"""
    module = transformed("tile-tiling{block=64,64,32 warps=2,2},tile-pipeline{stages=3}", text)
    assert len([o for o in module.walk() if isinstance(o, t.MmaOp)]) == 2
    m, n, k = 70, 45, 77
    rng = np.random.default_rng(7)
    a = rng.standard_normal((k, m)).astype(np.float16)
    b = rng.standard_normal((n, k)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float32)
    run(module, "gemm", a, b, c, grid=(-(-m // 64) * -(-n // 64), 1, 1))
    ref = a.T.astype(np.float64) @ b.T.astype(np.float64)
    assert rel_err(c, ref) < 1e-5


# -- the waits and the barrier are load-bearing ---------------------------------------


def _loop_ops(module: ModuleOp, kind):
    return [o for o in loop_of(module).body.block.ops if isinstance(o, kind)]


@pytest.mark.parametrize("stages", [2, 3])
def test_removing_the_wait_gives_nan(stages):
    module = transformed(f"tile-pipeline{{stages={stages}}}")
    (wait,) = _loop_ops(module, t.AsyncWaitOp)
    wait.detach()
    wait.erase()
    c, _ = gemm(module, 100, 70, 45)
    assert np.isnan(c).any()


@pytest.mark.parametrize("stages", [2, 3])
def test_waiting_one_group_short_gives_nan(stages):
    module = transformed(f"tile-pipeline{{stages={stages}}}")
    (wait,) = _loop_ops(module, t.AsyncWaitOp)
    assert wait.pending.value.data == stages - 2
    new = t.AsyncWaitOp(stages - 1)
    wait.parent_block().insert_op_before(new, wait)
    wait.detach()
    wait.erase()
    c, _ = gemm(module, 100, 70, 45)
    assert np.isnan(c).any()
    c, _ = gemm(module, 64, 64, 200, async_mode="eager")  # landing at issue: fine then
    assert not np.isnan(c).any()


def test_removing_the_barrier_gives_nan():
    module = transformed("tile-pipeline{stages=3}")
    (barrier,) = _loop_ops(module, t.BarrierOp)
    barrier.detach()
    barrier.erase()
    c, _ = gemm(module, 100, 70, 45)
    assert np.isnan(c).any()


def test_reading_this_tile_after_the_barrier_is_wrong():
    """Stage i%N is written again by the copies at the top of iteration i+1, before that
    iteration's barrier: every read of tile i must come before the barrier of iteration i."""
    module = transformed("tile-pipeline{stages=3}")
    (barrier,) = _loop_ops(module, t.BarrierOp)
    body = barrier.parent_block()
    ops = list(body.ops)
    early = [o for o in ops[: ops.index(barrier)] if isinstance(o, t.LoadOp)]
    assert len(early) == 2  # the second K step's A and B fragments of tile i
    for o in reversed(early):
        o.detach()
        body.insert_op_after(o, barrier)
    c, ref = gemm(module, 64, 64, 200, async_mode="eager")  # 7 K tiles: issues in the loop
    assert np.isnan(c).any() or rel_err(c, ref) > 1e-2


# -- form --------------------------------------------------------------------------------


@pytest.mark.parametrize("stages", [2, 3, 4])
def test_structure(stages):
    module = transformed(f"tile-pipeline{{stages={stages}}}")
    allocs = [o for o in module.walk() if isinstance(o, t.AllocOp)]
    assert [a.result.type.dims for a in allocs] == [(stages, 64, 32), (stages, 32, 64)]
    assert not [o for o in module.walk() if isinstance(o, t.CopyOp)]

    loop = loop_of(module)
    fn = loop.parent_op()
    top = list(loop.parent_block().ops)
    at = top.index(loop)
    pre, post = top[:at], top[at + 1 :]
    # prologue: N-1 guarded issues, each closed by a commit
    assert len([o for o in pre if isinstance(o, scf.IfOp)]) == stages - 1
    assert len([o for o in pre if isinstance(o, t.AsyncCommitOp)]) == stages - 1
    for guard in [o for o in pre if isinstance(o, scf.IfOp)]:
        assert len([o for o in guard.walk() if isinstance(o, t.AsyncCopyOp)]) == 2
    # before the loop: the first tile's wait and barrier, then its first-step fragments
    assert [type(o) for o in pre[-6:]] == [t.AsyncWaitOp, t.BarrierOp, t.StageOp, t.LoadOp, t.StageOp, t.LoadOp]
    assert pre[-6].pending.value.data == stages - 2
    # steady state: guarded issue, commit, mma of step 0 (carried fragments), then the wait N-2 and
    # barrier for the next tile, its first-step loads, and the last mma
    body = list(loop.body.block.ops)
    kinds = [type(o) for o in body if isinstance(o, (t.AsyncWaitOp, t.BarrierOp, scf.IfOp, t.AsyncCommitOp, t.MmaOp))]
    assert kinds == [t.AsyncCommitOp, t.MmaOp, t.AsyncWaitOp, t.BarrierOp, t.MmaOp]
    # the copies of K tile i+N-1 are issued unguarded (past the end they read zeros)
    copies = [o for o in body if isinstance(o, t.AsyncCopyOp)]
    first_mma = next(o for o in body if isinstance(o, t.MmaOp))
    assert len(copies) == 2 and max(body.index(c) for c in copies) < body.index(first_mma)
    assert not [o for o in body if isinstance(o, scf.IfOp)]
    wait = next(o for o in body if isinstance(o, t.AsyncWaitOp))
    assert wait.pending.value.data == stages - 2
    assert len(loop.results) == 5  # the accumulator, the read and write stages, the carried A and B fragments
    # epilogue: drain, then a barrier
    assert isinstance(post[0], t.AsyncWaitOp) and post[0].pending.value.data == 0
    assert isinstance(post[1], t.BarrierOp)
    assert fn.attributes["tile.launch"].smem.data == stages * 8192
    # register double-buffering: step 1's loads come before the first mma, the next tile's step 0
    # loads after the barrier and before the last mma, and they are yielded
    mmas = [o for o in body if isinstance(o, t.MmaOp)]
    loads = [o for o in body if isinstance(o, t.LoadOp)]
    barrier = body.index(next(o for o in body if isinstance(o, t.BarrierOp)))
    assert [m.a.type.dims for m in mmas] == [(32, 16), (32, 16)]
    assert mmas[0].a is loop.body.block.args[-2] and mmas[0].b is loop.body.block.args[-1]
    early, late = loads[:2], loads[2:]
    assert max(body.index(ld) for ld in early) < body.index(mmas[0])
    assert len(late) == 2 and all(barrier < body.index(ld) < body.index(mmas[1]) for ld in late)
    assert list(body[-1].operands[-2:]) == [ld.result for ld in late]


def test_carry_fragments_off_keeps_the_barrier_on_top():
    module = transformed("tile-pipeline{stages=3 carry-fragments=false}")
    body = list(loop_of(module).body.block.ops)
    assert isinstance(body[0], t.AsyncWaitOp) and isinstance(body[1], t.BarrierOp)
    assert len(loop_of(module).results) == 3
    c, ref = gemm(module, 100, 70, 45)
    assert rel_err(c, ref) < 2e-3


def test_loading_the_next_tile_before_the_barrier_gives_nan():
    """The carried fragments of tile i+1 may be loaded only once every thread's copies of it landed."""
    module = transformed("tile-pipeline{stages=3}")
    (barrier,) = _loop_ops(module, t.BarrierOp)
    (wait,) = _loop_ops(module, t.AsyncWaitOp)
    last_mma = _loop_ops(module, t.MmaOp)[-1]
    for o in (wait, barrier):
        o.detach()
        last_mma.parent_block().insert_op_before(o, last_mma)
    c, _ = gemm(module, 100, 70, 45)
    assert np.isnan(c).any()


def test_stages_1_leaves_the_loop_synchronous():
    assert _text(transformed("tile-pipeline{stages=1 reg-double-buffer=false}")) == _text(parse_module(KERNEL))
    split = transformed("tile-pipeline{stages=1}")
    assert [o for o in split.walk() if isinstance(o, t.CopyOp)]
    assert len([o for o in split.walk() if isinstance(o, t.MmaOp)]) == 2
    c, ref = gemm(split, 17, 33, 65)
    assert rel_err(c, ref) < 2e-3


def test_idempotent():
    once = _text(cached("tile-pipeline{stages=3}"))
    twice = transformed("tile-pipeline{stages=3}", once)
    assert _text(twice) == once


def test_registered_with_defaults():
    (p,) = build_pipeline("tile-pipeline").passes
    assert p == TilePipelinePass(stages=3, reg_double_buffer=True)
    (p,) = build_pipeline("tile-pipeline{stages=2 reg-double-buffer=false}").passes
    assert p == TilePipelinePass(stages=2, reg_double_buffer=False)


@pytest.mark.parametrize("stages", [0, 10])
def test_bad_stage_counts(stages):
    """Refused when the pipeline is built, pointing at the pass in the pipeline text."""
    with pytest.raises(PipelineSpecError, match=r"invalid options for pass 'tile-pipeline': stages must be 1 \.\. 9"):
        transformed(f"tile-pipeline{{stages={stages}}}")


SUM_KERNEL = """
func.func @colsum(%a: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 65536>} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %K = tile.dim %a, 0 : !tile.gl<f32, [?, ?]>
  %s = tile.alloc : !tile.st<128x128xf32>
  %zero = tile.zeros : !tile.rt<128x128xf32>
  %r = scf.for %k = %c0 to %K step %c128 iter_args(%acc = %zero) -> (!tile.rt<128x128xf32>) {
    %row = arith.addi %k, %c0 : index
    tile.copy %a[%row, %c0] -> %s : !tile.gl<f32, [?, ?]> -> !tile.st<128x128xf32>
    tile.barrier
    %v = tile.load %s : !tile.st<128x128xf32> -> !tile.rt<128x128xf32>
    %n = tile.add %acc, %v : !tile.rt<128x128xf32>
    tile.barrier
    scf.yield %n : !tile.rt<128x128xf32>
  }
  tile.store %r, %o[%c0, %c0] : !tile.rt<128x128xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}"""


@pytest.mark.parametrize("stages", [2, 3])
def test_other_loops(stages):
    """A K loop that is no GEMM (block-level, whole-tile loads, index math before the copy), K ragged."""
    module = transformed(f"tile-pipeline{{stages={stages}}}", SUM_KERNEL)
    a = np.random.default_rng(3).standard_normal((300, 100)).astype(np.float32)
    o = np.full((128, 128), np.nan, np.float32)
    run(module, "colsum", a, o)
    ref = np.zeros((384, 128))
    ref[:300, :100] = a
    np.testing.assert_allclose(o, ref.reshape(3, 128, 128).sum(0), rtol=1e-6, atol=1e-6)


def test_shared_memory_limit():
    module = transformed("tile-pipeline{stages=3}", SUM_KERNEL)  # 3 x 64 KB: fits
    assert [o for o in module.walk() if isinstance(o, t.AllocOp)][0].result.type.dims == (3, 128, 128)
    with pytest.raises(TilePipelineError, match=r"4 stages need 262144 bytes of shared memory \(65536 \+ 196608 for the extra stages\), more than the device limit of 232448"):
        transformed("tile-pipeline{stages=4}", SUM_KERNEL)


def test_tile_used_after_the_loop_is_an_error():
    text = KERNEL.replace(
        "  tile.store %out, %c[%row, %col]",
        "  %again = tile.load %sa[%c0, %c0] : !tile.st<64x32xf16, (64,32):(32,1)> -> !tile.rt<32x32xf16>\n  tile.store %out, %c[%row, %col]",
    )
    with pytest.raises(TilePipelineError, match="is used outside the K loop") as err:
        transformed("tile-pipeline{stages=2}", text)
    assert isinstance(err.value.op, t.LoadOp)


# -- layouts and tile.stage --------------------------------------------------------------


def test_staged_layout():
    assert staged_layout(Layout((64, 32), (32, 1)), 3, 2) == (Layout((3, 64, 32), (2048, 32, 1)), 2048)
    sw = Swizzle(3, 3, 3)
    layout, stride = staged_layout(ComposedLayout(sw, 0, Layout((16, 16), (16, 1))), 2, 2)
    assert stride == 512  # 256 elements, padded to the swizzle's period
    assert str(layout) == "Sw<3,3,3> o 0 o (2,16,16):(512,16,1)"
    # every stage is the tile's swizzled layout moved by i * stride
    tile = ComposedLayout(sw, 0, Layout((16, 16), (16, 1)))
    for i in range(2):
        for r in range(16):
            for c in range(16):
                assert layout((i, r, c)) == i * stride + tile((r, c))
    with pytest.raises(ValueError):
        staged_layout(ComposedLayout(sw, 8, Layout((16, 16), (16, 1))), 2, 2)


STAGE_FN = """
func.func @f(%i: index) {{
  %buf = tile.alloc : !tile.st<{buf}>
  %s = tile.stage %buf[%i] : !tile.st<{buf}> -> !tile.st<{stage}>
  func.return
}}"""


@pytest.mark.parametrize(
    "buf,stage,message",
    [
        ("2x16x16xf16, Sw<3,3,3> o 0 o (2,16,16):(256,16,1)", "16x16xf16, Sw<3,3,3> o 0 o (16,16):(16,1)", "not a multiple of the period 512"),
        ("2x16x16xf16, (2,16,16):(256,16,1)", "16x16xf16, (16,16):(1,16)", "has layout (16,16):(16,1)"),
        ("2x16x16xf16, (2,16,16):(128,16,1)", "16x16xf16, (16,16):(16,1)", "overlap"),
        ("2x16x16xf16, (2,16,16):(256,16,1)", "16x8xf16, (16,8):(8,1)", "a stage of 2x16x16 is 16x16"),
    ],
)
def test_stage_verifier(buf, stage, message):
    with pytest.raises(VerifyException, match=re.escape(message)):
        parse_module(STAGE_FN.format(buf=buf, stage=stage))


def test_stage_views_share_the_buffer():
    """A write through stage 1 is seen through stage 1 again, not through stage 0 (still NaN)."""
    text = """
func.func @f(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>, %z: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = tile.alloc : !tile.st<3x16x8xf32, Sw<2,2,3> o 0 o (3,16,8):(128,8,1)>
  %w = tile.stage %buf[%c1] : !tile.st<3x16x8xf32, Sw<2,2,3> o 0 o (3,16,8):(128,8,1)> -> !tile.st<16x8xf32, Sw<2,2,3> o 0 o (16,8):(8,1)>
  tile.copy %x[%c0, %c0] -> %w : !tile.gl<f32, [?, ?]> -> !tile.st<16x8xf32, Sw<2,2,3> o 0 o (16,8):(8,1)>
  %r = tile.stage %buf[%c1] : !tile.st<3x16x8xf32, Sw<2,2,3> o 0 o (3,16,8):(128,8,1)> -> !tile.st<16x8xf32, Sw<2,2,3> o 0 o (16,8):(8,1)>
  %v = tile.load %r : !tile.st<16x8xf32, Sw<2,2,3> o 0 o (16,8):(8,1)> -> !tile.rt<16x8xf32>
  tile.store %v, %y[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  %o = tile.stage %buf[%c0] : !tile.st<3x16x8xf32, Sw<2,2,3> o 0 o (3,16,8):(128,8,1)> -> !tile.st<16x8xf32, Sw<2,2,3> o 0 o (16,8):(8,1)>
  %u = tile.load %o : !tile.st<16x8xf32, Sw<2,2,3> o 0 o (16,8):(8,1)> -> !tile.rt<16x8xf32>
  tile.store %u, %z[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}"""
    x = np.arange(128, dtype=np.float32).reshape(16, 8)
    y = np.zeros_like(x)
    z = np.zeros_like(x)
    run(parse_module(text), "f", x, y, z)
    np.testing.assert_array_equal(y, x)
    assert np.isnan(z).all()
