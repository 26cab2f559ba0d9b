"""Split-K's reduction kernel, written in tilec.lang (see :mod:`tilec.kernels.splitk`)."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

import tilec.lang as tl
from tilec.kernels.splitk import REDUCE_TILE, REDUCE_WARPS, ReduceSpec
from tilec.lang.kernel import ArraySpec, Specialization


@tl.kernel(num_warps=REDUCE_WARPS)
def splitk_reduce(ws, c, bias, scale_a, scale_b, BM: tl.constexpr, BN: tl.constexpr, ACT: tl.constexpr):
    """``c = act(scale_a * scale_b * sum_s ws[s] + bias)`` on block ``b``'s ``BM x BN`` tile of C; the
    slices are added in order ``s = 0, 1, ...`` (deterministic)."""
    tiles_n = (c.shape[1] + BN - 1) // BN
    r, col = tl.block_id(0) // tiles_n * BM, tl.block_id(0) % tiles_n * BN
    acc = tl.load(ws[0], (r, col), shape=(BM, BN))
    for s in tl.range(1, ws.shape[0]):
        acc = acc + tl.load(ws[s], (r, col), shape=(BM, BN))
    if scale_a is not None:
        acc = acc * tl.load_scalar(scale_a, (0,))
    if scale_b is not None:
        acc = acc * tl.load_scalar(scale_b, (0,))
    if bias is not None:
        acc = acc + tl.load(bias, (col,), shape=(BN,)).to(tl.float32)[None, :]
    if ACT == "relu":
        acc = tl.maximum(acc, 0.0)
    elif ACT == "gelu":
        acc = acc * 0.5 * (1.0 + tl.erf(acc * 0.7071067811865476))
    elif ACT == "silu":
        acc = acc / (1.0 + tl.exp(-acc))
    tl.store(c, (r, col), acc.to(c.dtype))


def build_reduce_module(spec: ReduceSpec) -> ModuleOp:
    """The reduction kernel of ``spec`` (one module per output type, epilogue and alignment)."""
    scale = ArraySpec("float32", 1, 0)
    params = (("ws", ArraySpec("float32", 3, spec.align[0])), ("c", ArraySpec(spec.out_dtype, 2, spec.align[1])),
              ("bias", None if spec.bias_dtype is None else ArraySpec(spec.bias_dtype, 1, spec.align[2])),
              ("scale_a", scale if spec.scale_a else None), ("scale_b", scale if spec.scale_b else None),
              ("BM", REDUCE_TILE[0]), ("BN", REDUCE_TILE[1]), ("ACT", spec.activation))
    return splitk_reduce.module_for(Specialization(params, REDUCE_WARPS), spec.kernel_name)


__all__ = ["build_reduce_module", "splitk_reduce"]
