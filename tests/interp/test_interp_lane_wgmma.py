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
from tilec.interp.lane_frag import mma_tables
from tilec.interp.lane_wgmma import WgmmaTracker, accumulator_table, register_a_table
from tilec.layout.gmma import GmmaDescriptor, decode, operand_offsets

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


# -- register A (frag.wgmma_rs) ----------------------------------------------------------------
#
# A hand-written warpgroup (128 threads) at fragment level: each thread copies 16 bytes of B's shared
# image, loads its 4 A registers and n/2 accumulators from global memory, and after a fence one
# frag.wgmma_rs multiplies. The register layouts are written out here as the PTX ISA gives them
# (lane l of warp w, g = l/4, t = l%4), independently of the interpreter's tables.

RS_SMEM = 2048
RS_B = {False: GmmaDescriptor("K", 32, 0, 256), True: GmmaDescriptor("MN", 32, 512, 256)}
"""B's descriptor (without the start address) by trans_b: 32-byte swizzle, both within 2048 bytes for n <= 64."""


def _signed64(bits: int) -> int:
    return bits - (1 << 64) if bits >> 63 else bits


def _rs_loads(name: str, ptr: str, base: str, count: int, t: str) -> str:
    """``count`` consecutive loads of type ``t`` from ``ptr`` at ``base + i``, as ``%{name}{i}``."""
    return "\n".join(f"""  %{name}o{i} = arith.addi %{base}, %c{i} : i32
  %{name}p{i} = llvm.getelementptr %{ptr}[%{name}o{i}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}
  %{name}{i} = frag.load %{name}p{i} : !llvm.ptr<1> -> {t}""" for i in range(count))


def rs_kernel(n: int, dtype: str, trans_b: bool) -> str:
    """``@rs(a_regs, b_image, c_regs, d_regs)``: d_regs[t, v] of D = A·B + C, lane registers in thread order."""
    half = n // 2
    consts = "\n".join(f"  %c{i} = arith.constant {i} : i32" for i in range(max(half, 5)))
    acc = ", ".join(f"%x{i}" for i in range(half))
    types = ", ".join(["f32"] * half)
    stores = "\n".join(f"""  %do{i} = arith.addi %dbase, %c{i} : i32
  %dp{i} = llvm.getelementptr %d[%do{i}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  frag.store %w#{i}, %dp{i} : f32, !llvm.ptr<1>""" for i in range(half))
    return f"""
func.func @rs(%a: !llvm.ptr<1> {{tile.dtype = i32}}, %b: !llvm.ptr<1> {{tile.dtype = i32}},
              %c: !llvm.ptr<1> {{tile.dtype = f32}}, %d: !llvm.ptr<1> {{tile.dtype = f32, tile.output}}) \
attributes {{tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = {RS_SMEM}>}} {{
  %s = frag.shared "b", {RS_SMEM}, align 1024 : !llvm.ptr<3>
  %ti = tile.thread_id x
  %t = arith.index_cast %ti : index to i32
{consts}
  %gb = llvm.getelementptr %b[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
  %vb = frag.load %gb : !llvm.ptr<1> -> vector<4xi32>
  %sb = llvm.getelementptr %s[%t] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
  frag.store %vb, %sb : vector<4xi32>, !llvm.ptr<3>
  tile.barrier
  %chalf = arith.constant {half} : i32
  %cbase = arith.muli %t, %chalf : i32
{_rs_loads("x", "c", "cbase", half, "f32")}
  %abase = arith.muli %t, %c4 : i32
{_rs_loads("r", "a", "abase", 4, "i32")}
  %db = frag.wgmma_desc %s, {_signed64(RS_B[trans_b].high_bits())} : !llvm.ptr<3>
  frag.wgmma_fence
  %y:{half} = frag.wgmma_rs "{dtype}" n {n} (%r0, %r1, %r2, %r3), %db{" trans_b" if trans_b else ""} ({acc}) : {types}
  frag.wgmma_commit
  %w:{half} = frag.wgmma_wait 0({", ".join(f"%y#{i}" for i in range(half))}) : {types}
  %dbase = arith.muli %t, %chalf : i32
{stores}
  func.return
}}"""


def _bits16(x: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values (already f16/bf16 values) as their uint16 patterns."""
    if dtype == "f16":
        return x.astype(np.float16).view(np.uint16)
    return (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def _values16(rng, shape, dtype: str) -> np.ndarray:
    x = rng.standard_normal(shape).astype(np.float32)
    return x.astype(np.float16).astype(np.float32) if dtype == "f16" else round_bf16(x)


def _thread_grid(count: int):
    """``(warp, g, t, v)`` broadcast over ``[thread, v]`` for ``count`` registers per thread."""
    thread = np.arange(128)[:, None]
    lane = thread % 32
    return thread // 32, lane // 4, lane % 4, np.arange(count)[None, :]


def a_registers(a: np.ndarray, dtype: str) -> np.ndarray:
    """``[thread, r]``: register r = row g (+8 for odd r), columns 2t (+8 for r >= 2) and the next, low half first."""
    warp, g, t, r = _thread_grid(4)
    rows, cols = 16 * warp + g + 8 * (r % 2), 2 * t + 8 * (r // 2)
    bits = _bits16(a, dtype).astype(np.uint32)
    return (bits[rows, cols] | (bits[rows, cols + 1] << np.uint32(16))).view(np.int32)


def accumulator_cells(n: int):
    """``rows, cols [thread, v]``: accumulator v = row g (+8 for v%4 >= 2), column 8(v/4) + 2t (+1 for odd v)."""
    warp, g, t, v = _thread_grid(n // 2)
    return 16 * warp + g + 8 * ((v % 4) // 2), 8 * (v // 4) + 2 * t + v % 2


def b_image(b: np.ndarray, dtype: str, trans_b: bool, rng) -> np.ndarray:
    """The 2048 shared bytes (as i32) holding ``b`` (n x 16) where B's descriptor reads it (random elsewhere)."""
    image = rng.integers(0, 1 << 16, RS_SMEM // 2, dtype=np.uint32).astype(np.uint16)
    offsets = operand_offsets(RS_B[trans_b].encode(0), "MN" if trans_b else "K", 2, b.shape[0], 16)
    image[offsets // 2] = _bits16(b, dtype)
    return image.view(np.int32)


def run_rs(text: str, a: np.ndarray, b: np.ndarray, c: np.ndarray, dtype: str, trans_b: bool, rng) -> np.ndarray:
    n = b.shape[0]
    rows, cols = accumulator_cells(n)
    d = np.full((128, n // 2), np.nan, np.float32)
    run_text(text, "rs", a_registers(a, dtype).ravel(), b_image(b, dtype, trans_b, rng), c[rows, cols].ravel(), d)
    out = np.full((64, n), np.nan, np.float32)
    out[rows, cols] = d
    return out


@pytest.mark.parametrize("trans_b", [False, True], ids=["b_k_major", "b_mn_major"])
@pytest.mark.parametrize("n", [8, 64])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_wgmma_rs_multiplies_register_a(dtype, n, trans_b, rng):
    a, b = _values16(rng, (64, 16), dtype), _values16(rng, (n, 16), dtype)
    c = rng.standard_normal((64, n)).astype(np.float32)
    got = run_rs(rs_kernel(n, dtype, trans_b), a, b, c, dtype, trans_b, rng)
    ref = a.astype(np.float64) @ b.astype(np.float64).T + c
    assert not np.isnan(got).any(), f"seed {rng.seed}"
    np.testing.assert_allclose(got, ref, rtol=2.0**-22, atol=1e-6, err_msg=f"seed {rng.seed}")


def test_register_a_is_the_m16n8k16_a_fragment():
    """Per warp, wgmma's register A is mma.sync m16n8k16's A (value v = half v%2 of register v/2)."""
    _, (rows, cols), _, _ = mma_tables("mma_m16n8k16_f16")
    got_rows, got_cols = register_a_table()
    assert np.array_equal(got_rows.reshape(8, 32), rows) and np.array_equal(got_cols.reshape(8, 32), cols)


def test_wgmma_rs_without_fence_is_an_error(rng):
    text = rs_kernel(8, "bf16", False).replace("  frag.wgmma_fence\n", "")
    a, b, c = _values16(rng, (64, 16), "bf16"), _values16(rng, (8, 16), "bf16"), np.zeros((64, 8), np.float32)
    with pytest.raises(TileInterpreterError, match="A register 0 was written by .* and no frag.wgmma_fence has run"):
        run_rs(text, a, b, c, "bf16", False, rng)


def test_wgmma_rs_a_written_after_the_fence_is_an_error(rng):
    """The accumulators are loaded before the fence, the A registers after it: A needs a fence of its own."""
    text = rs_kernel(8, "f16", False).replace("  frag.wgmma_fence\n", "")
    text = text.replace("  %abase =", "  frag.wgmma_fence\n  %abase =")
    a, b, c = _values16(rng, (64, 16), "f16"), _values16(rng, (8, 16), "f16"), np.zeros((64, 8), np.float32)
    with pytest.raises(TileInterpreterError,
                       match="A register 0 was written by 'frag.load' after the last frag.wgmma_fence"):
        run_rs(text, a, b, c, "f16", False, rng)


def test_wgmma_rs_chains_pending_accumulators(rng):
    """A second frag.wgmma_rs takes the first one's results, still pending, as its accumulators (no fence, no wait)."""
    text = rs_kernel(8, "bf16", True)
    once = '  %y:4 = frag.wgmma_rs "bf16" n 8 (%r0, %r1, %r2, %r3), %db trans_b (%x0, %x1, %x2, %x3) : f32, f32, f32, f32\n'
    assert once in text
    twice = once.replace("%y:4", "%y0:4") + once.replace("%x0, %x1, %x2, %x3", "%y0#0, %y0#1, %y0#2, %y0#3")
    a, b = _values16(rng, (64, 16), "bf16"), _values16(rng, (8, 16), "bf16")
    c = rng.standard_normal((64, 8)).astype(np.float32)
    got = run_rs(text.replace(once, twice), a, b, c, "bf16", True, rng)
    once_ref = (a.astype(np.float64) @ b.astype(np.float64).T + c).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64).T + once_ref
    np.testing.assert_allclose(got, ref, rtol=2.0**-22, atol=1e-6, err_msg=f"seed {rng.seed}")
