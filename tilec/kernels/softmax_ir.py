"""The softmax kernel's IR: rows of a view, one band of ``rows`` rows per warp, columns in chunks.

Built with the tile dialect's constructors (no text), and lowered by the general passes: its
reductions, register vectors and exp are the register algebra's, nothing here is special-cased.
Each warp owns ``rows`` consecutive rows and walks their columns ``chunk`` at a time, twice:

1. the online maximum and sum (``m' = max(m, row_max(x))``, ``s' = s e^(m - m') + row_sum(e^(x - m'))``),
   carried through the loop as register vectors;
2. ``e^(x - m) / s``, written in the output's element type.

Columns past the row's end read as ``-inf`` (they add nothing); rows past the view's end are
computed but never stored. The input is read twice and the output written once: 3 bytes moved
for each 2 a single pass would move, the cost of holding no row in registers (rows of any length).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import Float32Type, IndexType, ModuleOp
from xdsl.ir import Block, Region, SSAValue

from tilec.dialects.abi import LAUNCH_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import DYNAMIC, LaunchAttr
from tilec.dialects.tile.types import GlobalType, RegisterType, RegisterVectorType
from tilec.kernels.gemm_config import FLOAT_DTYPES
from tilec.kernels.gemm_ir import ir_type
from tilec.kernels.ir_build import OpAppender

@dataclass(frozen=True)
class SoftmaxSpec:
    """What a softmax kernel computes: ``dtype`` in, ``out_dtype`` out, f32 inside; its tiling."""

    dtype: str
    out_dtype: str
    rows: int = 1
    """Rows a warp owns: a multiple of 16 (the tile's fragment is m16n8k16's C atom), or fewer with
    the lanes along the row (:func:`~tilec.passes.fragments.row_major_fragment`)."""
    chunk: int = 256
    """Columns a warp takes per step (a multiple of 8; of 32 for fewer than 16 rows)."""
    warps: int = 4

    def __post_init__(self):
        for what, d in (("dtype", self.dtype), ("out_dtype", self.out_dtype)):
            if d not in FLOAT_DTYPES:
                raise ValueError(f"SoftmaxSpec: {what}={d!r}; expected one of {', '.join(FLOAT_DTYPES)}")
        lanes_along_rows = 0 < self.rows < 16 and self.chunk % 32 == 0
        if not (lanes_along_rows or (self.rows % 16 == 0 and self.chunk % 8 == 0)) or self.chunk <= 0 \
                or self.warps <= 0:
            raise ValueError(f"SoftmaxSpec: rows={self.rows}, chunk={self.chunk}, warps={self.warps}: rows a multiple "
                             "of 16 with a chunk a multiple of 8, or fewer rows with a chunk a multiple of 32")

    @property
    def kernel_name(self) -> str:
        return f"softmax_{self.dtype}_{self.out_dtype}_r{self.rows}_c{self.chunk}_w{self.warps}"

    @property
    def rows_per_block(self) -> int:
        return self.rows * self.warps


def build_module(spec: SoftmaxSpec) -> ModuleOp:
    """``func.func @<name>(%x, %o)``: the softmax of each row of ``x`` into ``o`` (both M x N)."""
    f32 = Float32Type()
    elem, out_elem = ir_type(spec.dtype), ir_type(spec.out_dtype)
    gl_in, gl_out = GlobalType(elem, [DYNAMIC, DYNAMIC]), GlobalType(out_elem, [DYNAMIC, DYNAMIC])
    tile_in = RegisterType([spec.rows, spec.chunk], elem)
    tile = RegisterType([spec.rows, spec.chunk], f32)
    tile_out = RegisterType([spec.rows, spec.chunk], out_elem)
    vec = RegisterVectorType(spec.rows, f32, "row")

    entry = Block(arg_types=[gl_in, gl_out])
    x, o = entry.args
    x.name_hint, o.name_hint = "x", "o"
    e = OpAppender(entry)
    c0 = e.index(0)
    chunk = e.index(spec.chunk)
    n = e(t.DimOp(x, 1), "n")
    block_id = e(t.BlockIdOp("x"), "block")
    warp = e(t.WarpIdOp(), "warp")
    band = e(arith.AddiOp(e(arith.MuliOp(block_id, e.index(spec.warps))), warp), "band")
    r0 = e(arith.MuliOp(band, e.index(spec.rows)), "r0")
    neg_inf = e.f32(float("-inf"), "neg_inf")
    m0 = e(t.FillOp(neg_inf, vec), "m0")
    s0 = e(t.ZerosOp(vec), "s0")

    def load_f32(body: OpAppender, col: SSAValue) -> SSAValue:
        raw = body(t.LoadOp(x, [r0, col], tile_in, other=float("-inf")), "xt")
        return raw if elem == f32 else body(t.ConvertOp(raw, tile), "xf")

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
    inv = e(t.DivOp(e(t.FillOp(e.f32(1.0, "one"), vec)), s_final), "inv")

    # pass 2: the normalised exponentials
    step2 = Block(arg_types=[IndexType()])
    col2 = step2.args[0]
    col2.name_hint = "col"
    b = OpAppender(step2)
    xf = load_f32(b, col2)
    y = b(t.MulOp(b(t.ExpOp(b(t.SubOp(xf, b(t.BroadcastOp(m_final, tile)))))), b(t.BroadcastOp(inv, tile))), "y")
    if out_elem != f32:
        y = b(t.ConvertOp(y, tile_out), "yo")
    b(t.StoreOp(y, o, [r0, col2]))
    b(scf.YieldOp())
    e(scf.ForOp(c0, n, chunk, [], Region(step2)))
    e(func.ReturnOp())

    fn = func.FuncOp(spec.kernel_name, ([gl_in, gl_out], []), Region(entry))
    fn.attributes[LAUNCH_ATTR] = LaunchAttr([DYNAMIC, 1, 1], [32 * spec.warps, 1, 1], 0)
    module = ModuleOp([fn])
    module.verify()
    return module


__all__ = ["SoftmaxSpec", "build_module"]



