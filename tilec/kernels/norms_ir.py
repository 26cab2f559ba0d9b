"""The RMS norm and layer norm kernels' IR: a block owns ``rows`` rows as one tile of the block.

    rms_norm:   y = x / sqrt(mean(x^2) + eps) * w
    layer_norm: y = (x - mean) / sqrt(mean((x - mean)^2) + eps) * w + b

Built with the dialect's constructors and lowered by the general passes, like the softmax
(:mod:`tilec.kernels.softmax_ir`); the tiling is :mod:`tilec.kernels.row_tiling`'s.

- **One pass** (the row fits the tile): the row is read once; the layer norm's variance is the
  mean of the squared deviations from the mean, both in registers (the columns past the row's end
  masked out with ``tile.iota`` + ``arith.select`` in a ``tile.map``), as accurate as two passes
  over memory.
- **Two passes** (longer rows): the sum of squares (rms), or each step's mean and squared
  deviations merged into the running ones (Chan et al.'s parallel form of Welford's update: the
  variance keeps its digits when the mean is large against the spread), carried through the
  columns as register vectors; then the output.
"""

from __future__ import annotations

from dataclasses import dataclass

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.builtin import Float32Type, FloatAttr, IndexType, IntegerType, ModuleOp, i64
from xdsl.ir import Block, Region, SSAValue

from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import DYNAMIC, LaunchAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, RegisterVectorType
from tilec.kernels.gemm_config import FLOAT_DTYPES
from tilec.kernels.gemm_ir import ir_type
from tilec.kernels.ir_build import OpAppender, aligned_rows_attrs
from tilec.kernels.row_tiling import CHUNK, RowTiling


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
    f32 = Float32Type()
    tiling = spec.tiling
    elem, welem = ir_type(spec.dtype), ir_type(spec.wdtype)
    gl = GlobalType(elem, [DYNAMIC, DYNAMIC])
    gl_w = GlobalType(welem, [DYNAMIC])
    vec = RegisterVectorType(tiling.rows, f32, "row")
    slices = tiling.slices if tiling.passes == 1 else 1
    width = tiling.cols // slices
    tile_in, tile = RegisterType([tiling.rows, width], elem), RegisterType([tiling.rows, width], f32)
    wvec_in, wvec = RegisterVectorType(width, welem, "col"), RegisterVectorType(width, f32, "col")

    arg_types = [gl, gl_w, *([gl_w] if spec.has_bias else []), gl, f32]
    entry = Block(arg_types=arg_types)
    names = ["x", "w", *(["b"] if spec.has_bias else []), "y", "eps"]
    for a, n in zip(entry.args, names):
        a.name_hint = n
    x, w = entry.args[0], entry.args[1]
    b = entry.args[2] if spec.has_bias else None
    y, eps = entry.args[-2], entry.args[-1]
    e = OpAppender(entry)
    c0 = e.index(0)
    n = e(t.DimOp(x, 1), "n")
    row = e(arith.MuliOp(e(t.BlockIdOp("x"), "block"), e.index(tiling.rows)), "row")
    count = e(t.FillOp(e(arith.SIToFPOp(e(arith.IndexCastOp(n, i64)), f32), "count"), vec), "nv")

    def f32_of(body: OpAppender, value: SSAValue, ty) -> SSAValue:
        return value if value.type.element_type == f32 else body(t.ConvertOp(value, ty))

    def load_x(body: OpAppender, col: SSAValue) -> SSAValue:
        return f32_of(body, body(t.LoadOp(x, [row, col], tile_in), "xt"), tile)

    def output(body: OpAppender, xc: SSAValue, rstd: SSAValue, col: SSAValue) -> None:
        """``xc * rstd * w (+ b)``, stored at column ``col``."""
        z = body(t.MulOp(xc, body(t.BroadcastOp(rstd, tile))), "z")
        wv = f32_of(body, body(t.LoadOp(w, [col], wvec_in), "wv"), wvec)
        out = body(t.MulOp(z, body(t.BroadcastOp(wv, tile))), "out")
        if b is not None:
            bv = f32_of(body, body(t.LoadOp(b, [col], wvec_in), "bv"), wvec)
            out = body(t.AddOp(out, body(t.BroadcastOp(bv, tile))), "out")
        if elem != f32:
            out = body(t.ConvertOp(out, tile_in), "yo")
        body(t.StoreOp(out, y, [row, col]))

    def rsqrt_of(variance: SSAValue) -> SSAValue:
        rstd_block = Block(arg_types=[f32])
        rb = OpAppender(rstd_block)
        rb(t.YieldOp(rb(math.RsqrtOp(rb(arith.AddfOp(rstd_block.args[0], eps), "shifted")), "r")))
        return e(t.MapOp([variance], vec, Region(rstd_block)), "rstd")

    if tiling.passes == 1:
        # the row as `slices` column slices (each a tile of the block): sums over the slices are
        # elementwise, then one reduction each; the output goes slice by slice (see RowTiling.slices)
        cols = [c0] + [e.index(k * width) for k in range(1, slices)]
        xs = [load_x(e, c) for c in cols]
        if spec.kind == "layer":
            mean = e(t.DivOp(e(t.RowSumOp(_total(e, xs)), "sum"), count), "mean")
            xs = [_inside_columns(e, e(t.SubOp(x, e(t.BroadcastOp(mean, tile))), "xc"), n, c) for x, c in zip(xs, cols)]
        var = e(t.DivOp(e(t.RowSumOp(_total(e, [e(t.MulOp(x, x), "x2") for x in xs])), "sq"), count), "var")
        rstd = rsqrt_of(var)
        for x, c in zip(xs, cols):
            output(e, x, rstd, c)
    else:
        chunk = e.index(tiling.cols)
        zeros = e(t.ZerosOp(vec), "zeros")
        # pass 1: the sum of squares (rms), or the mean and the sum of squared deviations of each
        # step, merged into the running ones as Chan et al.'s parallel update (layer): no digits
        # lost to a large mean, as Welford's update keeps them
        inits = [zeros] * (3 if spec.kind == "layer" else 1)
        step1 = Block(arg_types=[IndexType(), *[vec] * len(inits)])
        col, *carried = step1.args
        col.name_hint = "col"
        body = OpAppender(step1)
        xf = load_x(body, col)
        if spec.kind == "rms":
            new = [body(t.RowSumOp(body(t.MulOp(xf, xf), "x2"), carried[0]), "sq")]
        else:
            new = _merge_moments(body, xf, col, n, chunk, carried, tile, vec)
        body(scf.YieldOp(*new))
        totals = list(e(scf.ForOp(c0, n, chunk, inits, Region(step1))).owner.results)
        # the row's scale (and shift), as register vectors
        if spec.kind == "rms":
            var = e(t.DivOp(totals[0], count), "mean_sq")
        else:
            mean, m2 = totals[0], totals[1]
            var = e(t.DivOp(m2, count), "var")
        rstd = rsqrt_of(var)
        # pass 2: the output
        step2 = Block(arg_types=[IndexType()])
        col2 = step2.args[0]
        col2.name_hint = "col"
        body = OpAppender(step2)
        xf = load_x(body, col2)
        if spec.kind == "layer":
            xf = body(t.SubOp(xf, body(t.BroadcastOp(mean, tile))), "xc")
        output(body, xf, rstd, col2)
        body(scf.YieldOp())
        e(scf.ForOp(c0, n, chunk, [], Region(step2)))
    e(func.ReturnOp())

    x_align, w_align, b_align, y_align = spec.align
    align = (x_align, w_align, *([b_align] if spec.has_bias else []), y_align, 0)
    fn = func.FuncOp(spec.kernel_name, (arg_types, []), Region(entry), arg_attrs=aligned_rows_attrs(align))
    fn.attributes[LAUNCH_ATTR] = LaunchAttr([DYNAMIC, 1, 1], [tiling.threads, 1, 1], 0)
    module = ModuleOp([fn])
    module.verify()
    return module


def _merge_moments(body: OpAppender, x: SSAValue, col: SSAValue, n: SSAValue, chunk: SSAValue, carried, tile,
                   vec) -> list[SSAValue]:
    """(mean, m2, count) of the columns so far merged with this step's ``x`` at ``col``: the step's
    mean and sum of squared deviations in registers (columns past ``n`` masked out), then
    ``delta = mean_b - mean_a``, ``mean += delta n_b / n``, ``m2 += m2_b + delta^2 n_a n_b / n``."""
    f32 = Float32Type()
    mean_a, m2_a, count_a = carried
    left = body(arith.MinSIOp(body(arith.SubiOp(n, col)), chunk), "left")
    count_b = body(t.FillOp(body(arith.SIToFPOp(body(arith.IndexCastOp(left, i64)), f32)), vec), "count_b")
    mean_b = body(t.DivOp(body(t.RowSumOp(x), "sum_b"), count_b), "mean_b")
    dev = _inside_columns(body, body(t.SubOp(x, body(t.BroadcastOp(mean_b, tile))), "dev"), n, col)
    m2_b = body(t.RowSumOp(body(t.MulOp(dev, dev))), "m2_b")
    count = body(t.AddOp(count_a, count_b), "count")
    delta = body(t.SubOp(mean_b, mean_a), "delta")
    mean = body(t.AddOp(mean_a, body(t.MulOp(delta, body(t.DivOp(count_b, count))))), "mean")
    cross = body(t.DivOp(body(t.MulOp(body(t.MulOp(delta, delta)), body(t.MulOp(count_a, count_b)))), count))
    m2 = body(t.AddOp(body(t.AddOp(m2_a, m2_b)), cross), "m2")
    return [mean, m2, count]


def _total(e: OpAppender, tiles: list[SSAValue]) -> SSAValue:
    """The elementwise sum of ``tiles``."""
    total = tiles[0]
    for x in tiles[1:]:
        total = e(t.AddOp(total, x))
    return total


def _inside_columns(e: OpAppender, value: SSAValue, n: SSAValue, col: SSAValue) -> SSAValue:
    """``value`` (a tile at column ``col``) with 0 in the columns at or past ``n`` (the tile's column
    ``j`` is inside when ``col + j - n < 0``: ``tile.iota`` from ``col - n``, compared in a ``tile.map``)."""
    i32 = IntegerType(32)
    ty = value.type
    cols = e(t.IotaOp(e(arith.SubiOp(col, n), "past_end"), 1, RegisterType(ty.dims, i32)), "from_end")
    body = Block(arg_types=[i32, ty.element_type])
    mb = OpAppender(body)
    j, v = body.args
    inside = mb(arith.CmpiOp(j, mb(arith.ConstantOp.from_int_and_width(0, 32)), "slt"), "inside")
    mb(t.YieldOp(mb(arith.SelectOp(inside, v, mb(arith.ConstantOp(FloatAttr(0.0, ty.element_type)))))))
    return e(t.MapOp([cols, value], ty, Region(body)), "xc_inside")


__all__ = ["NormSpec", "build_module"]
