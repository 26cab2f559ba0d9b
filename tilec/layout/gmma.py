"""Shared-memory matrix descriptors of sm_90's warpgroup MMA (``wgmma.mma_async``).

A ``wgmma`` reads its A and B operands from shared memory through a 64-bit
*descriptor*: a start address, two byte strides and a swizzle mode. The
descriptor describes one of a few canonical layouts (PTX ISA, "Matrix
Descriptor Format"); an operand is ``MN x K`` (A: ``M x K``, B: ``N x K``),
stored either K-major (K contiguous) or MN-major (MN contiguous). With a
swizzle of ``W`` bytes (32, 64 or 128) the canonical layouts are, as byte
offsets from the start address before the swizzle, for an element of
``e`` bytes at ``(mn, k)``::

    K-major:   (mn % 8) * W  + (mn // 8) * SBO  + k * e                    (k * e < W)
    MN-major:  (mn * e) % W  + (mn * e // W) * LBO + (k % 8) * W + (k // 8) * SBO

and the swizzle then acts on the *absolute* shared address as a tensor
map's does (:func:`tilec.layout.bulk.swizzle_address`). These are exactly
the layouts a bulk tensor copy writes (:func:`tilec.layout.bulk.box_layout`)
when the tile starts at a multiple of the swizzle's period: A's
``Sw<3,3,3> o 0 o (128,64):(64,1)`` f16 tile is K-major with ``SBO = 1024``;
B's ``64 x 128`` row-major tile as two 64-column boxes is MN-major with
``SBO = 1024`` and ``LBO = 8192``. Stepping along K moves the start address
only (by the unswizzled offset of the step's first element).

:func:`describe` finds the descriptor of a window of a shared tile and proves
it, element by element, against the tile's layout; :func:`operand_offsets`
is what the hardware reads for a descriptor (the lane interpreter's
``wgmma``). Plain Python and numpy, no IR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tilec.layout.bulk import side_by_side, swizzle_address, tensor_map_swizzle
from tilec.layout.layout import Layout
from tilec.layout.swizzle import ComposedLayout

MODE_BITS = {0: 0, 128: 1, 64: 2, 32: 3}
"""The descriptor's 2-bit layout type (bits 62-63) by swizzle bytes (0: no swizzle, not supported here)."""

FIELD_MASK = (1 << 14) - 1
"""Start address, LBO and SBO are 14-bit fields counting 16-byte units."""

MAJORS = ("K", "MN")


class GmmaLayoutError(ValueError):
    """A shared tile (or window) that no wgmma descriptor describes; the message says why."""


@dataclass(frozen=True)
class GmmaDescriptor:
    """The strides and swizzle of a descriptor; the start address is added per use (:meth:`encode`)."""

    major: str
    swizzle: int
    lbo: int
    sbo: int

    def __post_init__(self):
        if self.major not in MAJORS:
            raise ValueError(f"wgmma descriptor: major must be one of {MAJORS}, got {self.major!r}")
        if self.swizzle not in (32, 64, 128):
            raise ValueError(f"wgmma descriptor: swizzle must be 32, 64 or 128 bytes, got {self.swizzle}")
        for name, v in (("lbo", self.lbo), ("sbo", self.sbo)):
            if v % 16 or not 0 <= v >> 4 <= FIELD_MASK:
                raise ValueError(f"wgmma descriptor: {name} must be a multiple of 16 below 2^18, got {v}")

    def high_bits(self) -> int:
        """Everything but the start address: ``(LBO >> 4) << 16 | (SBO >> 4) << 32 | mode << 62``."""
        return ((self.lbo >> 4) << 16) | ((self.sbo >> 4) << 32) | (MODE_BITS[self.swizzle] << 62)

    def encode(self, address: int) -> int:
        """The 64-bit descriptor for an operand starting at shared byte ``address`` (a multiple of 16)."""
        if address % 16 or not 0 <= address >> 4 <= FIELD_MASK:
            raise ValueError(f"wgmma descriptor: start address must be a multiple of 16 below 2^18, got {address}")
        return self.high_bits() | (address >> 4)


def decode(value: int, major: str) -> tuple[int, GmmaDescriptor]:
    """``(start address, descriptor)`` of a 64-bit descriptor value; ``major`` is the instruction's."""
    modes = {bits: w for w, bits in MODE_BITS.items()}
    swizzle = modes[(value >> 62) & 3]
    if not swizzle:
        raise GmmaLayoutError("wgmma descriptor: layout type 0 (no swizzle) is not supported")
    address = (value & FIELD_MASK) << 4
    lbo = ((value >> 16) & FIELD_MASK) << 4
    sbo = ((value >> 32) & FIELD_MASK) << 4
    return address, GmmaDescriptor(major, swizzle, lbo, sbo)


def canonical_offsets(desc: GmmaDescriptor, elem_bytes: int, mn: int, k: int) -> np.ndarray:
    """Unswizzled byte offsets of an ``mn x k`` operand from its start address (``[mn, k]`` array)."""
    w = desc.swizzle
    i = np.arange(mn, dtype=np.int64)[:, None]
    j = np.arange(k, dtype=np.int64)[None, :]
    if desc.major == "K":
        if k * elem_bytes > w:
            raise GmmaLayoutError(f"a K-major operand's {k} elements of K ({k * elem_bytes} bytes) exceed the {w}-byte swizzle row")
        return (i % 8) * w + (i // 8) * desc.sbo + j * elem_bytes
    return (i * elem_bytes) % w + (i * elem_bytes // w) * desc.lbo + (j % 8) * w + (j // 8) * desc.sbo


def operand_offsets(value: int, major: str, elem_bytes: int, mn: int, k: int) -> np.ndarray:
    """The shared byte addresses a wgmma reads for an ``mn x k`` operand through descriptor ``value``."""
    address, desc = decode(value, major)
    return swizzle_address(address + canonical_offsets(desc, elem_bytes, mn, k), desc.swizzle)


def canonical_layout(rows: int, cols: int, elem_bytes: int) -> Layout | ComposedLayout | None:
    """A layout of a row-major ``rows x cols`` shared tile that wgmma descriptors read, whichever way
    the tile is an operand (A ``M x K`` or B ``N x K``: K-major; B ``K x N``: MN-major): the columns
    cut into blocks of one swizzle row (128, else 64, else 32 bytes) stored one after the other,
    each block's rows under the tensor-map swizzle. What a bulk copy of such boxes writes; None
    when no swizzle row divides a row."""
    for swizzle in (128, 64, 32):
        inner = swizzle // elem_bytes
        if inner and swizzle % elem_bytes == 0 and cols % inner == 0:
            return side_by_side(rows, inner, cols, tensor_map_swizzle(swizzle, elem_bytes))
    return None


@dataclass(frozen=True)
class Described:
    """A window of a shared tile as a wgmma operand: ``address = base + offset`` bytes, then ``desc``."""

    desc: GmmaDescriptor
    offset: int
    """Bytes from the tile's start to the window's start address (before the swizzle)."""


def _split(layout) -> tuple[Layout, int]:
    """The layout under the swizzle and the offset between them (0 for the layouts bulk copies write)."""
    if isinstance(layout, ComposedLayout):
        return layout.layout, layout.offset
    return layout, 0


def _swizzle_bytes(layout, elem_bytes: int) -> int:
    if not isinstance(layout, ComposedLayout):
        return 0
    sw = layout.inner
    # Sw<B, M, 3> on element offsets is Sw<B, M + log2(e), 3> on bytes; a tensor map's W-byte mode is Sw<log2(W/16), 4, 3>
    if sw.shift != 3 or sw.base + (elem_bytes.bit_length() - 1) != 4 or sw.bits not in (1, 2, 3):
        return -1
    return 16 << sw.bits


def describe(layout, window: tuple[int, int, int, int], elem_bytes: int, major: str, mn_first: bool = True) -> Described:
    """The descriptor of a window of a shared tile, checked against every element.

    ``layout`` maps the tile's ``(row, col)`` to element offsets; ``window`` is
    ``(row0, col0, rows, cols)``. With ``mn_first`` the rows are the operand's
    MN (A: ``M x K`` tiles), else its K (B stored ``K x N``). The tile must
    start at a multiple of its swizzle's period in shared memory (the bulk
    pipeline's buffers do). Raises :class:`GmmaLayoutError` naming what does
    not fit.
    """
    row0, col0, rows, cols = window
    mn, k = (rows, cols) if mn_first else (cols, rows)
    w = _swizzle_bytes(layout, elem_bytes)
    if w <= 0:
        raise GmmaLayoutError(f"layout {layout} has no 32/64/128-byte swizzle of the tensor-map kind a wgmma descriptor needs")
    base, offset = _split(layout)
    if offset:
        raise GmmaLayoutError(f"layout {layout} has an offset after its swizzle")

    def at(i: int, j: int) -> int:
        return base((row0 + i, col0 + j) if mn_first else (row0 + j, col0 + i)) * elem_bytes

    start = at(0, 0)
    if start % 16:
        raise GmmaLayoutError(f"the window at ({row0}, {col0}) of {layout} starts at byte {start}, not a multiple of 16")
    if major == "K":
        lbo, sbo = 0, (at(8, 0) - start if mn > 8 else 8 * w)
    else:
        per_row = w // elem_bytes
        lbo = at(per_row, 0) - start if mn > per_row else 0
        sbo = at(0, 8) - start if k > 8 else 8 * w
    try:
        desc = GmmaDescriptor(major, w, lbo, sbo)
    except ValueError as e:
        raise GmmaLayoutError(f"the window at ({row0}, {col0}) of {layout}: {e}") from None
    expected = np.array([[at(i, j) for j in range(k)] for i in range(mn)], dtype=np.int64)
    got = start + canonical_offsets(desc, elem_bytes, mn, k)
    # both sides before the swizzle: equal offsets stay equal after it, since the tile starts at a period
    if not np.array_equal(expected, got):
        i, j = np.argwhere(expected != got)[0]
        raise GmmaLayoutError(
            f"layout {layout} is not a {major}-major {w}-byte wgmma layout: element (mn={i}, k={j}) of the window "
            f"at ({row0}, {col0}) is at byte {expected[i, j]}, the descriptor would read byte {got[i, j]}"
        )
    return Described(desc, start)
