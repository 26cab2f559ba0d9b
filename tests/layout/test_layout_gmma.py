"""wgmma shared-memory descriptors (`tilec.layout.gmma`) against the layouts bulk copies write."""

from __future__ import annotations

import numpy as np
import pytest

from tilec.layout.bulk import BulkBox, box_layout, swizzle_address
from tilec.layout.gmma import GmmaDescriptor, GmmaLayoutError, decode, describe, operand_offsets
from tilec.layout.parse import parse

TILE_BASE = 4096  # a shared address that is a multiple of every swizzle's period


def _physical(layout, rows: int, cols: int, elem_bytes: int) -> np.ndarray:
    """Byte address of every element of a ``rows x cols`` tile stored with ``layout`` at TILE_BASE."""
    return np.array([[TILE_BASE + layout((i, j)) * elem_bytes for j in range(cols)] for i in range(rows)])


def _check_window(layout, window, elem_bytes, major, mn_first, rows, cols):
    """The descriptor of ``window`` reads exactly the elements the tile's layout holds there."""
    d = describe(layout, window, elem_bytes, major, mn_first=mn_first)
    value = d.desc.encode(TILE_BASE + d.offset)
    r0, c0, r, c = window
    mn, k = (r, c) if mn_first else (c, r)
    read = operand_offsets(value, major, elem_bytes, mn, k)
    stored = _physical(layout, rows, cols, elem_bytes)[r0:r0 + r, c0:c0 + c]
    np.testing.assert_array_equal(read, stored if mn_first else stored.T)
    return d


@pytest.mark.parametrize("elem_bytes,swizzle", [(2, 128), (2, 64), (2, 32), (4, 128)])
def test_a_tiles_of_bulk_copies_are_k_major(elem_bytes, swizzle):
    inner = swizzle // elem_bytes
    layout = box_layout(BulkBox(128, inner, elem_bytes, swizzle), inner)
    k_step = 32 // elem_bytes  # one wgmma's K is 32 bytes
    for row in (0, 64):
        for k in range(0, inner, k_step):
            d = _check_window(layout, (row, k, 64, k_step), elem_bytes, "K", True, 128, inner)
            assert (d.desc.major, d.desc.swizzle, d.desc.sbo) == ("K", swizzle, 8 * swizzle)
            assert d.offset == (row * inner + k) * elem_bytes


@pytest.mark.parametrize("n", [64, 128, 256])
def test_b_tiles_of_bulk_copies_are_mn_major(n):
    layout = box_layout(BulkBox(64, 64, 2, 128), n)  # 64 x n f16, boxes of 64 columns
    for k in range(0, 64, 16):
        d = _check_window(layout, (k, 0, 16, n), 2, "MN", False, 64, n)
        assert (d.desc.sbo, d.offset) == (1024, k * 128)
        assert d.desc.lbo == (64 * 64 * 2 if n > 64 else 0)


def test_encode_decode_round_trip():
    desc = GmmaDescriptor("MN", 64, 8192, 512)
    value = desc.encode(2048 + 96)
    assert decode(value, "MN") == (2048 + 96, desc)
    assert value >> 62 == 2 and (value >> 16) & 0x3FFF == 8192 >> 4 and (value >> 32) & 0x3FFF == 512 >> 4


def test_k_major_descriptor_reads_the_swizzled_rows():
    # row r of a K-major 128-byte-swizzled operand: chunk c lands at chunk c ^ (r % 8)
    value = GmmaDescriptor("K", 128, 0, 1024).encode(0)
    got = operand_offsets(value, "K", 2, 16, 16)
    want = swizzle_address(np.arange(16)[:, None] * 128 + np.arange(16)[None, :] * 2, 128)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "layout,why",
    [
        ("(128,64):(64,1)", "no 32/64/128-byte swizzle"),
        ("Sw<3,3,3> o 0 o (128,64):(1,128)", "is not a K-major 128-byte wgmma layout"),
        ("Sw<2,3,3> o 0 o (128,64):(64,1)", "is not a K-major 64-byte wgmma layout"),
        ("Sw<3,4,3> o 0 o (128,64):(64,1)", "no 32/64/128-byte swizzle"),
    ],
)
def test_layouts_no_descriptor_describes(layout, why):
    with pytest.raises(GmmaLayoutError, match=why):
        describe(parse(layout), (0, 0, 64, 16), 2, "K")


def test_windows_that_start_off_a_16_byte_boundary_are_refused():
    layout = box_layout(BulkBox(128, 64, 2, 128), 64)
    with pytest.raises(GmmaLayoutError, match="not a multiple of 16"):
        describe(layout, (0, 4, 64, 16), 2, "K")


def test_k_major_windows_wider_than_the_swizzle_row_are_refused():
    layout = box_layout(BulkBox(128, 16, 2, 32), 16)
    with pytest.raises(GmmaLayoutError, match="exceed the 32-byte swizzle row"):
        describe(layout, (0, 0, 64, 32), 2, "K")


def test_descriptor_fields_are_checked():
    with pytest.raises(ValueError, match="swizzle must be 32, 64 or 128"):
        GmmaDescriptor("K", 16, 0, 1024)
    with pytest.raises(ValueError, match="lbo must be a multiple of 16"):
        GmmaDescriptor("MN", 128, 8, 1024)
    with pytest.raises(ValueError, match="start address"):
        GmmaDescriptor("K", 128, 0, 1024).encode(8)
