"""The RMS norm and layer norm kernels' IR: one row per warp, its columns in chunks, two passes.

    rms_norm:   y = x / sqrt(mean(x^2) + eps) * w
    layer_norm: y = (x - mean) / sqrt(mean(x^2) - mean^2 + eps) * w + b

Pass 1 carries the row's sum of squares (and, for the layer norm, its sum) as register vectors in
f32; pass 2 writes the result. Built with the dialect's constructors and lowered by the general
passes, like the softmax (:mod:`tilec.kernels.softmax_ir`). The layer norm's variance comes from
the two sums, in f32: for rows whose mean is large against their spread this loses digits that
Welford's update keeps (the limit is named in the tests).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, math, scf
from xdsl.dialects.builtin import Float32Type, IndexType, ModuleOp, i64
from xdsl.ir import Block, Region, SSAValue

from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import DYNAMIC, LaunchAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, RegisterVectorType
from tilec.kernels.gemm_config import FLOAT_DTYPES
from tilec.kernels.gemm_ir import ir_type
from tilec.kernels.ir_build import OpAppender

@dataclass(frozen=True)
class NormSpec:
    """``kind`` (``rms`` or ``layer``) of ``dtype`` rows into ``dtype``; weight (and bias) of ``wdtype``."""

    kind: str
    dtype: str
    wdtype: str
    bias: bool = True
    chunk: int = 256
    warps: int = 4

    def __post_init__(self):
        if self.kind not in ("rms", "layer"):
            raise ValueError(f"NormSpec: kind={self.kind!r}; expected 'rms' or 'layer'")
        for what, d in (("dtype", self.dtype), ("wdtype", self.wdtype)):
            if d not in FLOAT_DTYPES:
                raise ValueError(f"NormSpec: {what}={d!r}; expected one of {', '.join(FLOAT_DTYPES)}")
        if self.chunk <= 0 or self.chunk % 32 or self.warps <= 0:
            raise ValueError(f"NormSpec: chunk={self.chunk} (a multiple of 32), warps={self.warps} (positive)")

    @property
    def kernel_name(self) -> str:
        bias = "_bias" if self.kind == "layer" and self.bias else ""
        return f"{self.kind}_norm_{self.dtype}_w{self.wdtype}{bias}_c{self.chunk}_w{self.warps}"

    @property
    def rows_per_block(self) -> int:
        return self.warps


def build_module(spec: NormSpec) -> ModuleOp:
    """``func.func @<name>(%x, %w[, %b], %y, %eps)``: the norm of each row of ``x`` (M x N) into ``y``."""
    f32 = Float32Type()
    elem, welem = ir_type(spec.dtype), ir_type(spec.wdtype)
    gl = GlobalType(elem, [DYNAMIC, DYNAMIC])
    gl_w = GlobalType(welem, [DYNAMIC])
    has_bias = spec.kind == "layer" and spec.bias
    tile_in = RegisterType([1, spec.chunk], elem)
    tile = RegisterType([1, spec.chunk], f32)
    vec = RegisterVectorType(1, f32, "row")
    wvec_in = RegisterVectorType(spec.chunk, welem, "col")
    wvec = RegisterVectorType(spec.chunk, f32, "col")

    arg_types = [gl, gl_w, *([gl_w] if has_bias else []), gl, f32]
    entry = Block(arg_types=arg_types)
    names = ["x", "w", *(["b"] if has_bias else []), "y", "eps"]
    for a, n in zip(entry.args, names):
        a.name_hint = n
    x, w = entry.args[0], entry.args[1]
    b = entry.args[2] if has_bias else None
    y, eps = entry.args[-2], entry.args[-1]
    e = OpAppender(entry)
    c0, chunk = e.index(0), e.index(spec.chunk)
    n = e(t.DimOp(x, 1), "n")
    row = e(arith.AddiOp(e(arith.MuliOp(e(t.BlockIdOp("x"), "block"), e.index(spec.warps))), e(t.WarpIdOp(), "warp")),
            "row")
    zeros = e(t.ZerosOp(vec), "zeros")

    def f32_of(body: OpAppender, value: SSAValue, ty) -> SSAValue:
        return value if value.type.element_type == f32 else body(t.ConvertOp(value, ty))

    # pass 1: the sums
    inits = [zeros, zeros] if spec.kind == "layer" else [zeros]
    step1 = Block(arg_types=[IndexType(), *[vec] * len(inits)])
    col, *sums = step1.args
    col.name_hint = "col"
    body = OpAppender(step1)
    xf = f32_of(body, body(t.LoadOp(x, [row, col], tile_in), "xt"), tile)
    sq = body(t.RowSumOp(body(t.MulOp(xf, xf), "x2"), sums[0]), "sq")
    new = [sq] + ([body(t.RowSumOp(xf, sums[1]), "sum")] if spec.kind == "layer" else [])
    body(scf.YieldOp(*new))
    loop1 = e(scf.ForOp(c0, n, chunk, inits, Region(step1)))
    totals = list(loop1.owner.results)

    # the row's scale (and shift): from the sums, as register vectors
    count = e(t.FillOp(e(arith.SIToFPOp(e(arith.IndexCastOp(n, i64)), f32), "count"), vec), "nv")
    mean_sq = e(t.DivOp(totals[0], count), "mean_sq")
    var = mean_sq
    mean = None
    if spec.kind == "layer":
        mean = e(t.DivOp(totals[1], count), "mean")
        var = e(t.SubOp(mean_sq, e(t.MulOp(mean, mean))), "var")
    rstd_block = Block(arg_types=[f32])
    rb = OpAppender(rstd_block)
    shifted = rb(arith.AddfOp(rstd_block.args[0], eps), "shifted")
    rb(t.YieldOp(rb(math.RsqrtOp(shifted), "r")))
    rstd = e(t.MapOp([var], vec, Region(rstd_block)), "rstd")

    # pass 2: the output
    step2 = Block(arg_types=[IndexType()])
    col2 = step2.args[0]
    col2.name_hint = "col"
    body = OpAppender(step2)
    xf = f32_of(body, body(t.LoadOp(x, [row, col2], tile_in), "xt"), tile)
    if mean is not None:
        xf = body(t.SubOp(xf, body(t.BroadcastOp(mean, tile))), "xc")
    z = body(t.MulOp(xf, body(t.BroadcastOp(rstd, tile))), "z")
    wv = f32_of(body, body(t.LoadOp(w, [col2], wvec_in), "wv"), wvec)
    out = body(t.MulOp(z, body(t.BroadcastOp(wv, tile))), "out")
    if b is not None:
        bv = f32_of(body, body(t.LoadOp(b, [col2], wvec_in), "bv"), wvec)
        out = body(t.AddOp(out, body(t.BroadcastOp(bv, tile))), "out")
    if elem != f32:
        out = body(t.ConvertOp(out, tile_in), "yo")
    body(t.StoreOp(out, y, [row, col2]))
    body(scf.YieldOp())
    e(scf.ForOp(c0, n, chunk, [], Region(step2)))
    e(func.ReturnOp())

    fn = func.FuncOp(spec.kernel_name, (arg_types, []), Region(entry))
    fn.attributes[LAUNCH_ATTR] = LaunchAttr([DYNAMIC, 1, 1], [32 * spec.warps, 1, 1], 0)
    module = ModuleOp([fn])
    module.verify()
    return module


__all__ = ["NormSpec", "build_module"]
