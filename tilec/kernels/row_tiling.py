"""How the row kernels (softmax, the norms) tile their rows: a tile of the block per step.

A block owns ``rows`` consecutive rows and holds a ``rows x cols`` register tile of the whole
block (``tile-layout`` spreads it over all the block's warps: runs of 16 bytes a thread,
consecutive threads along the row). A row that fits (``cols``, a power of two, at least the row
length, and at most :data:`MAX_VALUES` f32 values a thread at :data:`MAX_THREADS`) is read once
and written once: one pass, the bytes of a copy. A longer row is walked ``cols`` columns at a time,
twice (the statistics, then the output): 1.5x the bytes of a copy.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_THREADS = 1024
MAX_VALUES = 32
"""f32 values of the tile a thread holds at most (its registers: 64 at 1024 threads a block)."""
TARGET_BYTES = 64
"""Bytes of a row a thread loads where the block need not be full: four 16-byte loads in flight
(16 f32 values, 32 of a 16-bit type)."""
SLICE_VALUES = 8
"""Values a thread holds of one column slice (:attr:`RowTiling.slices`)."""
BLOCK_ELEMENTS = 2048
"""Elements a block takes at least when rows are short (several rows a block)."""
CHUNK = 4096
"""Columns a step of the two-pass walk takes (rows longer than one pass holds)."""


@dataclass(frozen=True)
class RowTiling:
    rows: int
    """Rows a block owns."""
    cols: int
    """Columns of the block's tile: the whole (padded) row in one pass, else a step of the walk."""
    warps: int
    passes: int
    """1: the row is held in registers; 2: it is read twice, ``cols`` at a time."""

    def __post_init__(self):
        for what, v in (("rows", self.rows), ("cols", self.cols), ("warps", self.warps)):
            if v <= 0 or v & (v - 1):
                raise ValueError(f"RowTiling: {what}={v}; expected a power of two")
        if self.passes not in (1, 2) or 32 * self.warps > MAX_THREADS:
            raise ValueError(f"RowTiling: passes={self.passes} (1 or 2), warps={self.warps} (at most "
                             f"{MAX_THREADS // 32})")

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def values(self) -> int:
        """Values of the tile a thread holds."""
        return max(1, self.rows * self.cols // self.threads)

    @property
    def slices(self) -> int:
        """Column slices a one-pass kernel may hold its tile as: :data:`SLICE_VALUES` values a thread each.
        A sweep that loads more per column (a norm's weight and bias) then goes slice by slice, and
        its loads cannot move above the previous slice's stores (they may alias): few registers live."""
        return max(1, min(self.values // SLICE_VALUES, self.cols // 32))

    def __str__(self) -> str:
        return f"r{self.rows}_c{self.cols}_w{self.warps}_p{self.passes}"


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2}


def row_tiling(n: int, dtype: str = "float32") -> RowTiling:
    """The tiling for rows of ``n`` elements of ``dtype`` (see the module docstring)."""
    if n <= 0:
        raise ValueError(f"row_tiling: a row of {n} elements")
    if dtype not in ITEMSIZE:
        raise ValueError(f"row_tiling: dtype={dtype!r}; expected one of {', '.join(ITEMSIZE)}")
    values = min(MAX_VALUES, TARGET_BYTES // ITEMSIZE[dtype])
    cols = max(32, _next_pow2(n))
    if cols > MAX_THREADS * MAX_VALUES:
        return RowTiling(1, CHUNK, CHUNK // values // 32, 2)
    rows = max(1, BLOCK_ELEMENTS // cols)
    threads = min(MAX_THREADS, max(64, rows * cols // values))
    return RowTiling(rows, cols, threads // 32, 1)


__all__ = ["CHUNK", "MAX_THREADS", "MAX_VALUES", "RowTiling", "row_tiling"]
