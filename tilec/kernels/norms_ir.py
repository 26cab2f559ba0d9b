"""The RMS norm and layer norm kernels, written in tilec.lang: a block owns ``ROWS`` rows as one tile of the block.

    rms_norm:   y = x / sqrt(mean(x^2) + eps) * w
    layer_norm: y = (x - mean) / sqrt(mean((x - mean)^2) + eps) * w + b

Lowered by the general passes, like the softmax (:mod:`tilec.kernels.softmax_ir`); the tiling is
:mod:`tilec.kernels.row_tiling`'s.

- **One pass** (the row fits the tile): the row is read once, as ``SLICES`` column slices (each
  a tile of the block: sums over the slices are elementwise, then one reduction each; the output
  goes slice by slice, see ``RowTiling.slices``). The layer norm's variance is the mean of the
  squared deviations from the mean, both in registers (the columns past the row's end masked
  out), as accurate as two passes over memory.
- **Two passes** (longer rows): the sum of squares (rms), or each step's mean and squared
  deviations merged into the running ones (Chan et al.'s parallel form of Welford's update: the
  variance keeps its digits when the mean is large against the spread), carried through the
  columns as register vectors; then the output.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

import tilec.lang as tl
from tilec.kernels.gemm_config import FLOAT_DTYPES
from tilec.kernels.row_tiling import CHUNK, RowTiling
from tilec.lang.kernel import ArraySpec, Specialization


def _inside_columns(value, n, col):
    """``value`` (a tile at column ``col``) with 0 in the columns at or past ``n``."""
    rows, width = value.shape
    return tl.where(tl.iota((rows, width), 1, col - n) < 0, value, 0.0)


def _output(x, w, b, y, row, col, xc, rstd, width):
    """``xc * rstd * w (+ b)``, stored at column ``col``."""
    out = xc * rstd[:, None] * tl.load(w, (col,), shape=(width,)).to(tl.float32)[None, :]
    if b is not None:
        out = out + tl.load(b, (col,), shape=(width,)).to(tl.float32)[None, :]
    tl.store(y, (row, col), out.to(y.dtype))


@tl.kernel
def norm_rows(x, w, b, y, eps, KIND: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr,
              PASSES: tl.constexpr, SLICES: tl.constexpr):
    """``y`` = the ``KIND`` (``rms`` or ``layer``) norm of each row of ``x``; ``b`` is None without a bias."""
    n = x.shape[1]
    row = tl.block_id(0) * ROWS
    count = n.to(tl.float32)
    if PASSES == 1:
        width = COLS // SLICES
        cols = [k * width for k in range(SLICES)]
        xs = [tl.load(x, (row, c), shape=(ROWS, width)).to(tl.float32) for c in cols]
        if KIND == "layer":
            mean = tl.row_sum(sum(xs[1:], xs[0])) / count
            xs = [_inside_columns(xk - mean[:, None], n, c) for xk, c in zip(xs, cols)]
        squares = [xk * xk for xk in xs]
        rstd = tl.rsqrt(tl.row_sum(sum(squares[1:], squares[0])) / count + eps)
        for xk, c in zip(xs, cols):
            _output(x, w, b, y, row, c, xk, rstd, width)
        return
    zeros = tl.zeros((ROWS,), axis=0)
    mean, m2, seen = zeros, zeros, zeros
    for col in tl.range(0, n, COLS):  # pass 1: the sum of squares, or the merged moments
        xt = tl.load(x, (row, col), shape=(ROWS, COLS)).to(tl.float32)
        if KIND == "rms":
            m2 = m2 + tl.row_sum(xt * xt)
        else:
            # this step's mean and squared deviations, merged as Chan et al.: delta = mean_b - mean_a,
            # mean += delta n_b / n, m2 += m2_b + delta^2 n_a n_b / n
            count_b = tl.full((ROWS,), tl.minimum(n - col, COLS).to(tl.float32), axis=0)
            mean_b = tl.row_sum(xt) / count_b
            dev = _inside_columns(xt - mean_b[:, None], n, col)
            total = seen + count_b
            delta = mean_b - mean
            mean = mean + delta * (count_b / total)
            m2 = m2 + tl.row_sum(dev * dev) + delta * delta * (seen * count_b) / total
            seen = total
    rstd = tl.rsqrt(m2 / count + eps)
    for col in tl.range(0, n, COLS):  # pass 2: the output
        xt = tl.load(x, (row, col), shape=(ROWS, COLS)).to(tl.float32)
        if KIND == "layer":
            xt = xt - mean[:, None]
        _output(x, w, b, y, row, col, xt, rstd, COLS)


@dataclass(frozen=True)
class NormSpec:
    """``kind`` (``rms`` or ``layer``) of ``dtype`` rows into ``dtype``; weight (and bias) of ``wdtype``;
    the tiling, and the ``tile.aligned_rows`` (bytes, 0 for none) of ``x``, the weight, the bias (0
    without one) and the output."""

    kind: str
    dtype: str
    wdtype: str
    bias: bool = True
    tiling: RowTiling = RowTiling(1, CHUNK, 8, 2)
    align: tuple[int, int, int, int] = (0, 0, 0, 0)

    def __post_init__(self):
        if len(self.align) != 4:
            raise ValueError(f"NormSpec: align={self.align}; expected (x, weight, bias, out)")
        if self.kind not in ("rms", "layer"):
            raise ValueError(f"NormSpec: kind={self.kind!r}; expected 'rms' or 'layer'")
        for what, d in (("dtype", self.dtype), ("wdtype", self.wdtype)):
            if d not in FLOAT_DTYPES:
                raise ValueError(f"NormSpec: {what}={d!r}; expected one of {', '.join(FLOAT_DTYPES)}")

    @property
    def has_bias(self) -> bool:
        return self.kind == "layer" and self.bias

    @property
    def kernel_name(self) -> str:
        bias = "_bias" if self.has_bias else ""
        align = "_a" + "_".join(map(str, self.align)) if any(self.align) else ""
        return f"{self.kind}_norm_{self.dtype}_w{self.wdtype}{bias}_{self.tiling}{align}"

    @property
    def rows_per_block(self) -> int:
        return self.tiling.rows


def build_module(spec: NormSpec) -> ModuleOp:
    """``func.func @<name>(%x, %w[, %b], %y, %eps)``: the norm of each row of ``x`` (M x N) into ``y``."""
    t = spec.tiling
    x_align, w_align, b_align, y_align = spec.align
    params = (("x", ArraySpec(spec.dtype, 2, x_align)), ("w", ArraySpec(spec.wdtype, 1, w_align)),
              ("b", ArraySpec(spec.wdtype, 1, b_align) if spec.has_bias else None),
              ("y", ArraySpec(spec.dtype, 2, y_align)), ("eps", "f32"), ("KIND", spec.kind), ("ROWS", t.rows),
              ("COLS", t.cols), ("PASSES", t.passes), ("SLICES", t.slices if t.passes == 1 else 1))
    return norm_rows.module_for(Specialization(params, t.warps), spec.kernel_name)


__all__ = ["NormSpec", "build_module", "norm_rows"]
