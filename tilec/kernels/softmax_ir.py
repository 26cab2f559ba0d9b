"""The softmax kernel, written in tilec.lang: a block owns ``ROWS`` rows and holds them as one tile of the block.

The tile is the same in every warp (no warp id in it), so ``tile-layout`` spreads it over all of
the block's warps, and its row reductions end in shared memory (:mod:`tilec.kernels.row_tiling`).
Nothing here is special-cased below the language: its reductions, register vectors and exp are
the register algebra's.

- **One pass** (the row fits the tile): ``m = row_max(x)``, ``p = e^(x - m)``, ``y = p / row_sum(p)``:
  the input read once, the output written once.
- **Two passes** (longer rows, ``COLS`` columns a step): the online maximum and sum
  (``m' = max(m, row_max(x))``, ``s' = s e^(m - m') + row_sum(e^(x - m'))``) carried as register
  vectors, then ``e^(x - m) / s`` written: 1.5x the bytes of one pass.

Columns past the row's end read as ``-inf`` (they add nothing); rows past the view's end are
computed but never stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

import tilec.lang as tl
from tilec.kernels.gemm_config import FLOAT_DTYPES
from tilec.kernels.row_tiling import CHUNK, RowTiling
from tilec.lang.kernel import ArraySpec, Specialization


@tl.kernel
def softmax_rows(x, o, ROWS: tl.constexpr, COLS: tl.constexpr, PASSES: tl.constexpr):
    """``o`` = the softmax of each row of ``x``; block ``b`` owns rows ``b * ROWS ...``."""
    r = tl.block_id(0) * ROWS
    if PASSES == 1:
        xt = tl.load(x, (r, 0), shape=(ROWS, COLS), other=float("-inf")).to(tl.float32)
        p = tl.exp(xt - tl.row_max(xt)[:, None])
        inv = 1.0 / tl.row_sum(p)
        tl.store(o, (r, 0), (p * inv[:, None]).to(o.dtype))
        return
    m = tl.full((ROWS,), float("-inf"), axis=0)
    s = tl.zeros((ROWS,), axis=0)
    for col in tl.range(0, x.shape[1], COLS):  # pass 1: the online maximum and sum
        xt = tl.load(x, (r, col), shape=(ROWS, COLS), other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.row_max(xt))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row all -inf so far: e^(-inf - -inf) is NaN
        s = s * tl.exp(m - m_safe) + tl.row_sum(tl.exp(xt - m_safe[:, None]))
        m = m_new
    inv = 1.0 / s
    for col in tl.range(0, x.shape[1], COLS):  # pass 2: the normalised exponentials
        xt = tl.load(x, (r, col), shape=(ROWS, COLS), other=float("-inf")).to(tl.float32)
        tl.store(o, (r, col), (tl.exp(xt - m[:, None]) * inv[:, None]).to(o.dtype))


@dataclass(frozen=True)
class SoftmaxSpec:
    """What a softmax kernel computes: ``dtype`` in, ``out_dtype`` out, f32 inside; its tiling, and the
    ``tile.aligned_rows`` (bytes, 0 for none) of ``x`` and of the output."""

    dtype: str
    out_dtype: str
    tiling: RowTiling = RowTiling(1, CHUNK, 8, 2)
    align: tuple[int, int] = (0, 0)

    def __post_init__(self):
        for what, d in (("dtype", self.dtype), ("out_dtype", self.out_dtype)):
            if d not in FLOAT_DTYPES:
                raise ValueError(f"SoftmaxSpec: {what}={d!r}; expected one of {', '.join(FLOAT_DTYPES)}")

    @property
    def kernel_name(self) -> str:
        align = "_a" + "_".join(map(str, self.align)) if any(self.align) else ""
        return f"softmax_{self.dtype}_{self.out_dtype}_{self.tiling}{align}"

    @property
    def rows_per_block(self) -> int:
        return self.tiling.rows


def build_module(spec: SoftmaxSpec) -> ModuleOp:
    """``func.func @<name>(%x, %o)``: the softmax of each row of ``x`` into ``o`` (both M x N)."""
    t = spec.tiling
    params = (("x", ArraySpec(spec.dtype, 2, spec.align[0])), ("o", ArraySpec(spec.out_dtype, 2, spec.align[1])),
              ("ROWS", t.rows), ("COLS", t.cols), ("PASSES", t.passes))
    return softmax_rows.module_for(Specialization(params, t.warps), spec.kernel_name)


__all__ = ["SoftmaxSpec", "build_module", "softmax_rows"]
