"""Where a bulk tensor copy (sm_90's TMA, ``cp.async.bulk.tensor``) puts a tile.

A tensor map copies a *box* of a row-major global tensor into shared memory:
``rows x inner`` elements, the inner (contiguous) dimension first, each row
``inner * e`` bytes after the last. With a swizzle of ``W`` bytes (32, 64 or
128) the 16-byte chunk ``c`` of a ``W``-byte row segment is stored at chunk
``c XOR (row mod W/16)``, i.e. bits 4.. of the byte address are XORed with
bits 7..: in CuTe's notation ``Sw<log2(W/16), 4, 3>`` on byte offsets, which
is ``Sw<log2(W/16), 4 - log2(e), 3>`` on offsets in elements (the swizzle
only reads bits from the 128-byte line up, so the shared buffer must start
at a multiple of the swizzle's period, 1024 bytes for ``W = 128``). A tile
wider than the box is several boxes side by side, one after the other in
shared memory::

    rows x cols tile, box rows x inner:  Sw o 0 o (rows, (inner, cols/inner)):(inner, (1, rows*inner))

This module computes that layout (:func:`box_layout`), finds the box of a
tile whose layout is one of them (:func:`bulk_box`), and picks the box for a
tile (:func:`choose_box`). Plain Python, no IR.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from functools import lru_cache

from tilec.layout.layout import Layout
from tilec.layout.swizzle import ComposedLayout, Swizzle

SWIZZLE_BYTES = (0, 32, 64, 128)
"""The tensor map's swizzle modes (0: none), by the bytes of the row segment they permute."""

MAX_BOX = 256
"""A box has at most this many elements along each dimension."""

MBARRIER_BYTES = 8
"""Shared memory of one transaction barrier (an ``mbarrier`` object is 64 bits)."""


@dataclass(frozen=True)
class BulkBox:
    """The box a tensor map copies: ``rows x inner`` elements of ``elem_bytes``, swizzled over ``swizzle`` bytes."""

    rows: int
    inner: int
    elem_bytes: int
    swizzle: int

    def __post_init__(self):
        if self.swizzle not in SWIZZLE_BYTES:
            raise ValueError(f"bulk copy: swizzle must be one of {SWIZZLE_BYTES} bytes, got {self.swizzle}")
        if not (1 <= self.rows <= MAX_BOX and 1 <= self.inner <= MAX_BOX):
            raise ValueError(f"bulk copy: a box is at most {MAX_BOX}x{MAX_BOX} elements, got {self.rows}x{self.inner}")
        row_bytes = self.inner * self.elem_bytes
        if row_bytes % 16:
            raise ValueError(f"bulk copy: a box row of {self.inner} elements is {row_bytes} bytes, not a multiple of 16")
        if self.swizzle and row_bytes != self.swizzle:
            raise ValueError(f"bulk copy: a {self.swizzle}-byte swizzle needs {self.swizzle}-byte box rows, got {row_bytes}")

    @property
    def nbytes(self) -> int:
        return self.rows * self.inner * self.elem_bytes

    def swizzle_function(self) -> Swizzle | None:
        """The swizzle on element offsets, or None without one."""
        return tensor_map_swizzle(self.swizzle, self.elem_bytes) if self.swizzle else None

    def alignment(self) -> int:
        """Bytes the shared buffer's address must be a multiple of: the swizzle's period (128 at least)."""
        sw = self.swizzle_function()
        return max(128, sw.size() * self.elem_bytes) if sw is not None else 128


def swizzle_address(address, swizzle: int):
    """The shared byte address a tensor map with a ``swizzle``-byte swizzle (0, 32, 64, 128)
    writes for ``address`` (an int or numpy array): the 16-byte chunk index (bits 4..) XORed
    with as many bits from bit 7 on (the 128-byte line), per the PTX ISA's tensor-map swizzle
    modes. A wgmma descriptor's swizzle reads shared memory the same way."""
    if not swizzle:
        return address
    chunks = swizzle // 16 - 1  # 1, 3 or 7: the chunk bits a W-byte span has
    return address ^ (((address >> 7) & chunks) << 4)


def box_layout(box: BulkBox, cols: int) -> Layout | ComposedLayout:
    """The layout of a ``box.rows x cols`` tile written as ``cols / box.inner`` boxes side by side."""
    if cols % box.inner:
        raise ValueError(f"bulk copy: {cols} columns are not a whole number of {box.inner}-element boxes")
    return side_by_side(box.rows, box.inner, cols, box.swizzle_function())


def tensor_map_swizzle(swizzle: int, elem_bytes: int) -> Swizzle:
    """A tensor map's ``swizzle``-byte mode (32, 64, 128) as a swizzle on element offsets: ``Sw<3,4,3>``
    on bytes for 128, i.e. ``Sw<3,3,3>`` on 2-byte elements."""
    return Swizzle((swizzle // 16).bit_length() - 1, 4 - (elem_bytes.bit_length() - 1), 3)


def side_by_side(rows: int, inner: int, cols: int, sw: Swizzle | None) -> Layout | ComposedLayout:
    """A ``rows x cols`` tile stored as blocks of ``inner`` columns one after the other, each block
    row-major under ``sw``: what boxes side by side write (and wgmma descriptors read)."""
    count = cols // inner
    if count == 1:
        base = Layout((rows, inner), (inner, 1))
    else:
        base = Layout((rows, (inner, count)), (inner, (1, rows * inner)))
    return base if sw is None else ComposedLayout(sw, 0, base)


@lru_cache(maxsize=256)
def _offsets(layout, dims: tuple[int, int]) -> bytes:
    r, c = dims
    return array("q", [layout((i, j)) for i in range(r) for j in range(c)]).tobytes()


def same_placement(a, b, dims: tuple[int, int]) -> bool:
    """Whether two layouts put every element of a ``dims`` tile at the same offset."""
    return str(a) == str(b) or _offsets(a, dims) == _offsets(b, dims)


def bulk_box(layout, dims: tuple[int, int], elem_bytes: int) -> BulkBox | None:
    """The box whose bulk copies lay out a ``dims`` tile exactly as ``layout`` does, or None."""
    rows, cols = dims
    for swizzle in (128, 64, 32):
        inner = swizzle // elem_bytes
        if cols % inner == 0 and rows <= MAX_BOX:
            box = BulkBox(rows, inner, elem_bytes, swizzle)
            if same_placement(layout, box_layout(box, cols), dims):
                return box
    if rows <= MAX_BOX and cols <= MAX_BOX and (cols * elem_bytes) % 16 == 0:
        box = BulkBox(rows, cols, elem_bytes, 0)
        if same_placement(layout, box_layout(box, cols), dims):
            return box
    return None


def choose_box(dims: tuple[int, int], elem_bytes: int) -> BulkBox | None:
    """The box for a ``dims`` tile: the widest swizzle its rows allow (128-byte segments when they fit).

    A row segment of 128 bytes with the 128-byte swizzle is what CUTLASS
    and cuBLAS use on sm_90: the eight 16-byte rows an ``ldmatrix`` reads
    fall in eight different bank groups. None when no box fits (more than
    256 rows, or rows not a whole number of 32-byte segments).
    """
    rows, cols = dims
    if rows > MAX_BOX:
        return None
    for swizzle in (128, 64, 32):
        inner = swizzle // elem_bytes
        if cols % inner == 0:
            return BulkBox(rows, inner, elem_bytes, swizzle)
    return None
