"""The softmax kernel's IR: a block owns ``rows`` rows and holds them as one tile of the block.

Built with the tile dialect's constructors (no text), and lowered by the general passes: its
reductions, register vectors and exp are the register algebra's, nothing here is special-cased.
The tile is the same in every warp (no warp id in it), so ``tile-layout`` spreads it over all of
the block's warps, and its row reductions end in shared memory (:mod:`tilec.kernels.row_tiling`).

- **One pass** (the row fits the tile): ``m = row_max(x)``, ``p = e^(x - m)``, ``y = p / row_sum(p)``:
  the input read once, the output written once.
- **Two passes** (longer rows, ``cols`` columns a step): the online maximum and sum
  (``m' = max(m, row_max(x))``, ``s' = s e^(m - m') + row_sum(e^(x - m'))``) carried as register
  vectors, then ``e^(x - m) / s`` written: 1.5x the bytes of one pass.

Columns past the row's end read as ``-inf`` (they add nothing); rows past the view's end are
computed but never stored.
"""

from __future__ import annotations

from dataclasses import dataclass

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import Float32Type, IndexType, ModuleOp
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
    f32 = Float32Type()
    tiling = spec.tiling
    elem, out_elem = ir_type(spec.dtype), ir_type(spec.out_dtype)
    gl_in, gl_out = GlobalType(elem, [DYNAMIC, DYNAMIC]), GlobalType(out_elem, [DYNAMIC, DYNAMIC])
    shape = [tiling.rows, tiling.cols]
    tile_in, tile, tile_out = RegisterType(shape, elem), RegisterType(shape, f32), RegisterType(shape, out_elem)
    vec = RegisterVectorType(tiling.rows, f32, "row")

    entry = Block(arg_types=[gl_in, gl_out])
    x, o = entry.args
    x.name_hint, o.name_hint = "x", "o"
    e = OpAppender(entry)
    c0 = e.index(0)
    r0 = e(arith.MuliOp(e(t.BlockIdOp("x"), "block"), e.index(tiling.rows)), "r0")

    def load_f32(body: OpAppender, col: SSAValue) -> SSAValue:
        raw = body(t.LoadOp(x, [r0, col], tile_in, other=float("-inf")), "xt")
        return raw if elem == f32 else body(t.ConvertOp(raw, tile), "xf")

    def store(body: OpAppender, p: SSAValue, inv: SSAValue, col: SSAValue) -> None:
        y = body(t.MulOp(p, body(t.BroadcastOp(inv, tile))), "y")
        if out_elem != f32:
            y = body(t.ConvertOp(y, tile_out), "yo")
        body(t.StoreOp(y, o, [r0, col]))

    def reciprocal(body: OpAppender, s: SSAValue) -> SSAValue:
        return body(t.DivOp(body(t.FillOp(body.f32(1.0, "one"), vec)), s), "inv")

    if tiling.passes == 1:
        xf = load_f32(e, c0)
        m = e(t.RowMaxOp(xf), "m")
        p = e(t.ExpOp(e(t.SubOp(xf, e(t.BroadcastOp(m, tile))))), "p")
        store(e, p, reciprocal(e, e(t.RowSumOp(p), "s")), c0)
    else:
        n = e(t.DimOp(x, 1), "n")
        chunk = e.index(tiling.cols)
        m0 = e(t.FillOp(e.f32(float("-inf"), "neg_inf"), vec), "m0")
        s0 = e(t.ZerosOp(vec), "s0")
        # pass 1: the online maximum and sum
        step1 = Block(arg_types=[IndexType(), vec, vec])
        col, m, s = step1.args
        col.name_hint, m.name_hint, s.name_hint = "col", "m", "s"
        b = OpAppender(step1)
        xf = load_f32(b, col)
        m_new = b(t.RowMaxOp(xf, m), "m_new")
        alpha = b(t.ExpOp(b(t.SubOp(m, m_new))), "alpha")
        p = b(t.ExpOp(b(t.SubOp(xf, b(t.BroadcastOp(m_new, tile))))), "p")
        s_new = b(t.AddOp(b(t.MulOp(s, alpha)), b(t.RowSumOp(p))), "s_new")
        b(scf.YieldOp(m_new, s_new))
        loop1 = e(scf.ForOp(c0, n, chunk, [m0, s0], Region(step1)))
        m_final, s_final = loop1.owner.results
        m_final.name_hint, s_final.name_hint = "m", "s"
        inv = reciprocal(e, s_final)
        # pass 2: the normalised exponentials
        step2 = Block(arg_types=[IndexType()])
        col2 = step2.args[0]
        col2.name_hint = "col"
        b = OpAppender(step2)
        xf = load_f32(b, col2)
        store(b, b(t.ExpOp(b(t.SubOp(xf, b(t.BroadcastOp(m_final, tile))))), "p"), inv, col2)
        b(scf.YieldOp())
        e(scf.ForOp(c0, n, chunk, [], Region(step2)))
    e(func.ReturnOp())

    fn = func.FuncOp(spec.kernel_name, ([gl_in, gl_out], []), Region(entry), arg_attrs=aligned_rows_attrs(spec.align))
    fn.attributes[LAUNCH_ATTR] = LaunchAttr([DYNAMIC, 1, 1], [tiling.threads, 1, 1], 0)
    module = ModuleOp([fn])
    module.verify()
    return module


__all__ = ["SoftmaxSpec", "build_module"]
