"""The bf16 rounding helper on known bit patterns, and run-time errors that name the op."""

from __future__ import annotations

import numpy as np
import pytest

from tilec.interp import TileInterpreterError, parse_module, round_bf16, run, run_text


def bits(x) -> int:
    return int(np.asarray(x, np.float32).view(np.uint32))


def f32(b: int) -> np.float32:
    return np.array([b], np.uint32).view(np.float32)[0]


@pytest.mark.parametrize(
    "src, want",
    [
        (0x3F800000, 0x3F800000),  # 1.0 is exact
        (0x3F808000, 0x3F800000),  # halfway, kept bit even: down
        (0x3F818000, 0x3F820000),  # halfway, kept bit odd: up
        (0x3F808001, 0x3F810000),  # just above halfway: up
        (0x3F807FFF, 0x3F800000),  # just below halfway: down
        (0xBF818000, 0xBF820000),  # negative, halfway, odd: away from zero
        (0x7F7FFFFF, 0x7F800000),  # largest f32 rounds past the largest bf16: inf
        (0x7F7F7FFF, 0x7F7F0000),  # just below: the largest bf16
        (0x7F800000, 0x7F800000),  # inf
        (0xFF800000, 0xFF800000),  # -inf
        (0x00000001, 0x00000000),  # smallest subnormal: 0
        (0x00008000, 0x00000000),  # halfway between 0 and the smallest bf16 subnormal: even (0)
        (0x00018000, 0x00020000),  # halfway, odd: up
        (0x80000000, 0x80000000),  # -0.0 keeps its sign
        (0x40490FDB, 0x40490000),  # pi -> 3.140625
    ],
)
def test_round_bf16_bit_patterns(src, want):
    assert bits(round_bf16(f32(src))) == want
    assert round_bf16(np.array([f32(src)])).view(np.uint32)[0] == want


def test_round_bf16_nan_and_shapes():
    nans = round_bf16(np.array([f32(0x7FFFFFFF), f32(0xFFC00001), f32(0x7F800001)], np.float32))
    assert np.isnan(nans).all(), "a NaN must not round to inf or -0"
    assert (nans.view(np.uint32) >> 31).tolist() == [0, 1, 0], "NaN keeps its sign"
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    r = round_bf16(x)
    assert r.shape == (3, 4) and r.dtype == np.float32 and isinstance(round_bf16(1.1), np.float32)
    assert np.all(np.abs(r - x) <= np.abs(x) * 2.0**-8)


# -- run-time errors --------------------------------------------------------------------

KERNEL = """
func.func @k(%x: !tile.gl<f16, [?, 64]>, %n: index) attributes {tile.launch = #tile.launch<grid = [?, 2, 1], block = [64, 1, 1], smem = 4096>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<32x64xf16>
  tile.copy %x[%c0, %c0] -> %s : !tile.gl<f16, [?, 64]> -> !tile.st<32x64xf16>
  func.return
}
"""


@pytest.fixture(scope="module")
def kernel():
    return parse_module(KERNEL)


def x16(rows=32, cols=64):
    return np.ones((rows, cols), np.float16)


@pytest.mark.parametrize(
    "args, grid, message",
    [
        ((x16(),), (1, 2, 1), r"'func.func' @k: takes 2 arguments \(!tile.gl<f16, \[\?, 64\]>, index\), got 1"),
        ((x16().astype(np.float32), 3), (1, 2, 1), r"argument 0 \(%x\) is !tile.gl<f16, \[\?, 64\]>: expected a numpy array of float16, got float32"),
        ((x16(32, 48), 3), (1, 2, 1), r"extent 1 must be 64, got shape \(32, 48\)"),
        ((np.ones(64, np.float16), 3), (1, 2, 1), r"expected a 2-D array, got shape \(64,\)"),
        ((x16(), 2.5), (1, 2, 1), r"argument 1 \(%n\) is index: expected an integer, got float"),
        ((x16(), 3), None, r"grid \[\?, 2, 1\] has dynamic extents: pass grid="),
        ((x16(), 3), (1, 3, 1), r"disagrees with the kernel's static grid \[\?, 2, 1\] on axis y"),
        ((x16(), 3), (1, 2, 1, 1), r"grid must be 1 to 3 positive integers"),
    ],
)
def test_call_errors_name_the_function(kernel, args, grid, message):
    with pytest.raises(TileInterpreterError, match=message):
        run(kernel, "k", *args, grid=grid)


def test_unknown_function_and_grid_on_a_plain_function(kernel):
    with pytest.raises(TileInterpreterError, match=r"no function @nope in the module \(it has @k\)"):
        run(kernel, "nope")
    plain = parse_module("func.func @f() {\n  func.return\n}")
    with pytest.raises(TileInterpreterError, match="runs once"):
        run(plain, "f", grid=(2, 1, 1))
    assert run(plain, "f") == ()


def test_shared_memory_beyond_smem_is_out_of_range():
    text = KERNEL.replace("smem = 4096", "smem = 2048")
    with pytest.raises(TileInterpreterError) as info:
        run_text(text, "k", x16(), 3, grid=(1, 2, 1))
    msg = str(info.value)
    assert "'tile.alloc' in @k [block (0, 0, 0)]" in msg
    assert "4096 bytes, but the kernel's tile.launch declares smem = 2048" in msg
    assert "tile.alloc : !tile.st<32x64xf16" in msg, "the op's text is part of the message"
    run_text(text, "k", x16(), 3, grid=(1, 2, 1), check_smem=False)


def test_negative_layout_strides_are_rejected_before_running():
    text = """
    func.func @f() {
      %s = tile.alloc : !tile.st<4x4xf32, (4,4):(4,-1)>
      func.return
    }
    """
    with pytest.raises(Exception, match=r"negative stride; shared offsets must be non-negative"):
        run_text(text, "f")


def test_errors_carry_the_op_location():
    text = """
    func.func @f(%x: !tile.gl<f32, [?, ?]>, %y: !tile.gl<f32, [?, ?]>) {
      tile.matmul %x, %x -> %y : !tile.gl<f32, [?, ?]>, !tile.gl<f32, [?, ?]> -> !tile.gl<f32, [?, ?]> {
      ^bb0(%acc: f32):
        tile.yield %acc : f32
      } loc("gemm.mlir":7:3)
      func.return
    }
    """
    x = np.ones((4, 5), np.float32)
    with pytest.raises(TileInterpreterError, match=r'\'tile.matmul\' at loc\("gemm.mlir":7:3\) in @f: K of a and b differ') as info:
        run_text(text, "f", x, np.zeros((4, 5), np.float32))
    assert info.value.op.name == "tile.matmul"


def test_bad_options_are_rejected_before_running(kernel):
    with pytest.raises(ValueError, match="async mode"):
        run(kernel, "k", x16(), 3, grid=(1, 2, 1), async_mode="later")
    with pytest.raises(ValueError, match="warp order"):
        run(kernel, "k", x16(), 3, grid=(1, 2, 1), warp_order="random")


def test_thread_layout_beyond_the_block_is_an_error():
    text = """
    func.func @k(%x: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 16384>} {
      %c0 = arith.constant 0 : index
      %w = tile.warp_id
      %s = tile.alloc : !tile.st<64x64xf32>
      tile.copy %x[%c0, %c0] -> %s thr <(4,32):(32,1)> val <(16,2):(2,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<64x64xf32>
      func.return
    }
    """
    with pytest.raises(TileInterpreterError, match=r"'tile.copy'.*uses thread 127, but the block has 64 threads"):
        run_text(text, "k", np.ones((64, 64), np.float32))


def test_read_only_destination_is_an_error():
    text = """
    func.func @f(%x: !tile.gl<f32, [?, ?]>) {
      %c0 = arith.constant 0 : index
      %z = tile.zeros : !tile.rt<2x2xf32>
      tile.store %z, %x[%c0, %c0] : !tile.rt<2x2xf32> -> !tile.gl<f32, [?, ?]>
      func.return
    }
    """
    x = np.ones((2, 2), np.float32)
    x.setflags(write=False)
    with pytest.raises(TileInterpreterError, match=r"'tile.store' in @f: the global array is read-only"):
        run_text(text, "f", x)


def test_run_text_verifies_first():
    bad = """
    func.func @f(%x: !tile.rt<4x4xf32>) {
      %y = tile.convert %x : !tile.rt<4x4xf32> -> !tile.rt<4x8xf16>
      func.return
    }
    """
    with pytest.raises(Exception, match="shapes differ"):
        run_text(bad, "f", np.zeros((4, 4), np.float32))
