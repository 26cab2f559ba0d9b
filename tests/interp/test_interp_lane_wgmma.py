"""sm_90a warpgroup MMA in the lane interpreter (tilec.interp.lane_wgmma).

examples/kernels/wgmma_f16.mlir (and its bf16 twin) after ``tile-regalloc``
runs lane by lane: the bulk copies land A and B swizzled, ``frag.wgmma_desc``
encodes their shared addresses, each ``frag.wgmma`` reads what its
descriptors say and the warps store their accumulators. The result agrees
with float64 numpy, with the tile interpreter on the un-allocated kernel, and
bit for bit with a model of four k16 steps each rounded to f32. Mutations
show the checks: a wrong descriptor reads the wrong elements, a missing
commit/wait or fence is an error.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from interp_util import rel_error
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, ModuleOp, f32, i64
from xdsl.printer import Printer

from tilec.dialects import frag
from tilec.dialects.abi import gl_params
from tilec.runtime.gl_views import expand
from tilec.interp import OpError, TileInterpreterError, parse_module, round_bf16, run, run_text
from tilec.interp.lane_wgmma import WgmmaTracker, accumulator_table
from tilec.layout.gmma import GmmaDescriptor, decode

from tests.passes.test_pipeline import transformed

KERNEL_F16 = (Path(__file__).resolve().parents[2] / "examples" / "kernels" / "wgmma_f16.mlir").read_text()
_ONCE = """\
  %acc = tile.wgmma %sa[%row], %sb[%c0], %zero : !tile.st<128x64xf16, Sw<3,3,3> o 0 o (128,64):(64,1)>, \
!tile.st<64x128xf16, Sw<3,3,3> o 0 o (64,(64,2)):(64,(1,4096))>, !tile.rt<16x128xf32> -> !tile.rt<16x128xf32>"""
_LOOP = """\
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%x = %zero) -> (!tile.rt<16x128xf32>) {
    %y = tile.wgmma %sa[%row], %sb[%c0], %x : !tile.st<128x64xf16, Sw<3,3,3> o 0 o (128,64):(64,1)>, \
!tile.st<64x128xf16, Sw<3,3,3> o 0 o (64,(64,2)):(64,(1,4096))>, !tile.rt<16x128xf32> -> !tile.rt<16x128xf32>
    scf.yield %y : !tile.rt<16x128xf32>
  }"""
KERNELS = {"f16": KERNEL_F16, "bf16": KERNEL_F16.replace("f16", "bf16"),
           "loop": KERNEL_F16.replace(_ONCE, _LOOP)}
"""The kernel, its bf16 twin, and the f16 one accumulating A·B three times in an scf.for."""
assert KERNELS["loop"] != KERNEL_F16
_LOWERED: dict[str, str] = {}


def lowered_text(dtype: str) -> str:
    """The kernel after tile-regalloc, printed (each test parses its own copy)."""
    if dtype not in _LOWERED:
        out = io.StringIO()
        Printer(stream=out).print_op(transformed("tile-regalloc", KERNELS[dtype]))
        _LOWERED[dtype] = out.getvalue()
    return _LOWERED[dtype]


def lowered(dtype: str, edit=None) -> ModuleOp:
    text = lowered_text(dtype)
    if isinstance(edit, tuple):
        old, new = edit
        assert old in text, old
        text = text.replace(old, new)
    return parse_module(text)


def kernel_of(module) -> func.FuncOp:
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return fn


def inputs(rng, dtype: str):  # "loop" is f16
    """A (128x64), B (64x128) as the kernel takes them, and their values as float64."""
    a = rng.standard_normal((128, 64)).astype(np.float32)
    b = rng.standard_normal((64, 128)).astype(np.float32)
    if dtype != "bf16":
        a, b = a.astype(np.float16), b.astype(np.float16)
        return a, b, a.astype(np.float64), b.astype(np.float64)
    a, b = round_bf16(a), round_bf16(b)
    bits = [(x.view(np.uint32) >> np.uint32(16)).astype(np.uint16) for x in (a, b)]  # bf16 as uint16 bits
    return *bits, a.astype(np.float64), b.astype(np.float64)


def run_lanes(module, a, b, **options) -> np.ndarray:
    fn = kernel_of(module)
    c = np.full((128, 128), np.nan, np.float32)
    run(module, fn.sym_name.data, *expand(gl_params(fn), a, b, c, signature_length=len(fn.args)), **options)
    return c


def k16_steps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Four wgmma k16 steps, each in float64 (k in order) rounded once to f32."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for s in range(0, a.shape[1], 16):
        step = acc.astype(np.float64)
        for k in range(s, s + 16):
            step += a[:, k, None] * b[None, k, :]
        acc = step.astype(np.float32)
    return acc


# -- meaning ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_wgmma_kernel_after_regalloc(dtype, rng):
    module = lowered(dtype)
    assert [op for op in module.walk() if isinstance(op, frag.WgmmaOp)]
    a, b, a64, b64 = inputs(rng, dtype)
    c = run_lanes(module, a, b)
    ref = a64 @ b64
    assert not np.isnan(c).any(), f"seed {rng.seed}"
    assert rel_error(c, ref) < 1e-5, f"seed {rng.seed}"
    np.testing.assert_array_equal(c, k16_steps(a64, b64), err_msg=f"seed {rng.seed}")


@pytest.mark.parametrize("options", [{"async_mode": "eager"}, {"warp_order": "descending"}])
def test_other_schedules(options, rng):
    a, b, a64, b64 = inputs(rng, "f16")
    np.testing.assert_array_equal(run_lanes(lowered("f16"), a, b, **options), k16_steps(a64, b64))


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_lane_and_tile_interpreters_agree(dtype, rng):
    a, b, a64, b64 = inputs(rng, dtype)
    lanes = run_lanes(lowered(dtype), a, b)
    tile = np.full((128, 128), np.nan, np.float32)
    given = (a, b) if dtype == "f16" else (a64.astype(np.float32), b64.astype(np.float32))
    run_text(KERNELS[dtype], f"wgmma_{dtype}", *given, tile)
    ref = a64 @ b64
    assert rel_error(tile, ref) < 1e-5 and rel_error(lanes, ref) < 1e-5, f"seed {rng.seed}"
    assert rel_error(lanes, tile) < 1e-6, f"seed {rng.seed}"


def test_accumulators_carried_by_a_loop(rng):
    """tile-regalloc puts fence, wgmmas, commit and wait in the loop body; the accumulators are loop-carried."""
    a, b, a64, b64 = inputs(rng, "loop")
    c = run_lanes(lowered("loop"), a, b)
    assert rel_error(c, 3 * a64 @ b64) < 1e-5, f"seed {rng.seed}"


def test_a_fence_before_the_loop_is_enough(rng):
    """Only the zeros come from ordinary instructions; later iterations chain wgmma results (no fence needed)."""
    text = lowered_text("loop")
    fence = "      frag.wgmma_fence\n"
    assert text.count(fence) == 1
    head, loop = text.replace(fence, "").split("    %acc, ", 1)
    a, b, a64, b64 = inputs(rng, "loop")
    c = run_lanes(parse_module(head + fence[2:] + "    %acc, " + loop), a, b)
    assert rel_error(c, 3 * a64 @ b64) < 1e-5, f"seed {rng.seed}"


def test_pending_results_are_followed_through_the_loop(rng):
    """With wait 7 in the body nothing completes: the loop carries the pending accumulators, and
    the stores after it read the third iteration's results while three groups run."""
    module = lowered("loop", ("frag.wgmma_wait 0(", "frag.wgmma_wait 7("))
    a, b, *_ = inputs(rng, "loop")
    with pytest.raises(TileInterpreterError, match=r"still running \(3 committed group"):
        run_lanes(module, a, b)


def test_accumulator_registers():
    """Lane l's register 4j+i: row l/4 (+8 for i >= 2), column 8j + 2(l%4) (+1 for odd i)."""
    rows, cols = accumulator_table(16)
    assert (rows[:, 5].tolist(), cols[:, 5].tolist()) == ([1, 1, 9, 9] * 2, [2, 3, 2, 3, 10, 11, 10, 11])
    cells = set(zip(rows.ravel().tolist(), cols.ravel().tolist()))
    assert len(cells) == 16 * 16 == rows.size


DESC = """
func.func @desc() -> (i64, i64) {
  %t = frag.shared "t", 256, align 128 : !llvm.ptr<3>
  %s = frag.shared "s", 4096, align 1024 : !llvm.ptr<3>
  %off = arith.constant OFFSET : i32
  %p = llvm.getelementptr %s[%off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  %d = frag.wgmma_desc %p, HIGH_K : !llvm.ptr<3>
  %e = frag.wgmma_desc %t, HIGH_MN : !llvm.ptr<3>
  func.return %d, %e : i64, i64
}
"""


def _desc_text(offset: int) -> str:
    high_k = GmmaDescriptor("K", 128, 0, 1024).high_bits()
    high_mn = GmmaDescriptor("MN", 32, 256, 512).high_bits()  # mode 3: bit 63 set
    return (DESC.replace("OFFSET", str(offset)).replace("HIGH_K", str(high_k))
            .replace("HIGH_MN", str(high_mn - (1 << 64))))


def test_descriptor_encodes_the_shared_address():
    """"s" lies at shared address 1024 (after "t", at its alignment): the start field is (1024 + 64) / 16."""
    d, e = run_text(_desc_text(64), "desc")
    assert np.all(d == GmmaDescriptor("K", 128, 0, 1024).encode(1024 + 64))
    bits = int(e[0]) & ((1 << 64) - 1)
    assert bits == GmmaDescriptor("MN", 32, 256, 512).encode(0)
    assert decode(bits, "MN") == (0, GmmaDescriptor("MN", 32, 256, 512))


def test_a_descriptor_base_off_16_bytes_is_an_error():
    with pytest.raises(TileInterpreterError, match=r"shared address 0x408\), is not a multiple of 16"):
        run_text(_desc_text(8), "desc")


# -- the checks ------------------------------------------------------------------------------


def test_wrong_descriptor_strides_read_the_wrong_elements(rng):
    """A's SBO halved: rows 8.. of each band come from the wrong place, and the product is wrong."""
    module = lowered("f16")
    desc_a = next(op for op in module.walk() if isinstance(op, frag.WgmmaDescOp))
    _, d = decode(desc_a.high.value.data & ((1 << 64) - 1), "K")
    wrong = GmmaDescriptor(d.major, d.swizzle, d.lbo, d.sbo // 2).high_bits()
    desc_a.properties["high"] = IntegerAttr(wrong, i64)
    a, b, a64, b64 = inputs(rng, "f16")
    c = run_lanes(module, a, b)
    assert rel_error(c, a64 @ b64) > 0.1, f"seed {rng.seed}"


def test_reading_results_without_commit_is_an_error(rng):
    module = lowered("f16", ("    frag.wgmma_commit\n", ""))
    a, b, *_ = inputs(rng, "f16")
    with pytest.raises(TileInterpreterError, match="a frag.wgmma that no frag.wgmma_commit has put in a group"):
        run_lanes(module, a, b)


def test_reading_results_of_a_running_group_is_an_error(rng):
    module = lowered("f16", ("frag.wgmma_wait 0(", "frag.wgmma_wait 1("))
    a, b, *_ = inputs(rng, "f16")
    with pytest.raises(TileInterpreterError, match=r"whose group is still running \(1 committed group"):
        run_lanes(module, a, b)


def test_a_wgmma_without_fence_is_an_error(rng):
    module = lowered("f16", ("    frag.wgmma_fence\n", ""))
    a, b, *_ = inputs(rng, "f16")
    with pytest.raises(TileInterpreterError, match="accumulator 0 was written by .* and no frag.wgmma_fence has run"):
        run_lanes(module, a, b)


def test_accumulators_written_after_the_fence_are_an_error(rng):
    """The zero accumulators made after the fence (not before it) need another fence."""
    module = lowered("f16")
    first = next(op for op in module.walk() if isinstance(op, frag.WgmmaOp))
    zero = first.c[0].owner
    zero.detach()
    first.parent_block().insert_op_before(zero, first)
    a, b, *_ = inputs(rng, "f16")
    with pytest.raises(TileInterpreterError, match="'arith.constant' after the last frag.wgmma_fence"):
        run_lanes(module, a, b)


def test_a_partial_warpgroup_is_an_error(rng):
    text = KERNEL_F16.replace("block = [256, 1, 1]", "block = [160, 1, 1]")
    module = transformed("tile-regalloc", text)
    a, b, *_ = inputs(rng, "f16")
    with pytest.raises(TileInterpreterError, match=r"warpgroup-collective: warp 4 belongs to warpgroup 1 .* only 160"):
        run_lanes(module, a, b)


def test_wait_counts_pending_groups():
    """wait p completes the oldest committed groups until p remain; uncommitted results stay pending."""
    tracker = WgmmaTracker()
    tracker.fence()
    x, y, z = (np.zeros(32, np.float32) for _ in range(3))
    tracker.issue((x,))
    tracker.commit()
    tracker.issue((y,))
    tracker.commit()
    tracker.issue((z,))
    tracker.wait(1)
    assert set(tracker.pending) == {id(y), id(z)}
    tracker.wait(0)
    assert set(tracker.pending) == {id(z)}
    tracker.check_fenced((x, y, z))  # chained accumulators need no fence
    w = np.ones(32, np.float32)
    tracker.did_interpret_op(arith.ConstantOp(FloatAttr(1.0, f32)), (w,))
    with pytest.raises(OpError, match="accumulator 1 was written by 'arith.constant' after the last"):
        tracker.check_fenced((x, w))
    tracker.fence()
    tracker.check_fenced((x, w))
