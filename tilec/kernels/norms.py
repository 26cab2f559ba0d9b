"""``tilec.rms_norm`` and ``tilec.layer_norm`` over the last dimension, on torch / cupy / numpy arrays.

    y = tilec.rms_norm(x, weight, eps=1e-6)             # x / sqrt(mean(x^2) + eps) * weight
    y = tilec.layer_norm(x, weight, bias, eps=1e-5)     # like F.layer_norm(x, x.shape[-1:], weight, bias, eps)
    k = tilec.rms_norm_kernel(x, weight)                # the compiled kernel, without a GPU

``x`` is f32, f16 or bf16, 1-D or 2-D, rows of any length and any strides; ``weight`` (and
``bias``) have one value per column, f32 or ``x``'s dtype. The result has ``x``'s dtype; the math is
f32. The kernels (:mod:`tilec.kernels.norms_ir`) hold a block's rows in registers (one pass) up
to 32k elements a row and read longer rows twice (:mod:`tilec.kernels.row_tiling`); they are
specialised on the tiling and the rows' alignment, like ``tilec.matmul``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from tilec.kernels.gemm_plan import Operand, check_output_memory, describe_operand
from tilec.kernels.norms_ir import NormSpec, build_module
from tilec.kernels.fast_path import FastCache
from tilec.kernels.row_kernels import (
    DTYPES,
    allocate_like,
    check_allocatable,
    compile_once,
    launch,
    replay,
    row_alignment_of,
    row_call_key,
    row_view,
)
from tilec.kernels.row_tiling import row_tiling
from tilec.runtime import NoDeviceError, has_device, no_device_reason
from tilec.runtime.gl_views import GlView


def _vector(owner: str, name: str, value: Any, n: int) -> Operand:
    op = describe_operand(name, value, owner)
    if tuple(op.info.shape) != (n,):
        raise ValueError(f"{owner}: {name} has shape {tuple(op.info.shape)}; expected ({n},), one value per column")
    if op.info.dtype not in DTYPES:
        raise TypeError(f"{owner}: {name} has dtype {op.info.dtype}; expected one of {', '.join(DTYPES)}")
    return op


def _plan(kind: str, x: Any, weight: Any, bias: Any, out: Any = None):
    """What a norm call runs: (owner, spec, x's operand, rows, n, x's strides, weight, bias, out's strides).
    Without ``out``: the output :func:`allocate_like` makes (what the ``*_kernel`` twins compile for)."""
    owner = f"tilec.{kind}_norm"
    op, rows, n, strides = row_view(owner, "x", x)
    w = _vector(owner, "weight", weight, n)
    b = _vector(owner, "bias", bias, n) if bias is not None else None
    if b is not None and b.info.dtype != w.info.dtype:
        raise TypeError(f"{owner}: weight is {w.info.dtype} but bias is {b.info.dtype}; give both one dtype")
    o_strides = None
    if out is not None:
        o, _, _, o_strides = row_view(owner, "out", out)
        if tuple(o.info.shape) != tuple(op.info.shape) or o.info.dtype != op.info.dtype:
            raise ValueError(f"{owner}: out has shape {tuple(o.info.shape)} and dtype {o.info.dtype}; expected "
                             f"{tuple(op.info.shape)} and {op.info.dtype}")
        check_output_memory(o, [op, w, b], owner, in_place=op)  # out=x: each block writes the rows it read
        out_align = row_alignment_of(o, rows, n, o_strides)
    else:
        out_align = row_alignment_of(None, rows, n, None, op.info.dtype)
    vector_align = [0 if v is None else row_alignment_of(v, 1, n, (0, v.strides[0])) for v in (w, b)]
    align = (row_alignment_of(op, rows, n, strides), *vector_align, out_align)
    spec = NormSpec(kind, op.info.dtype, w.info.dtype, bias=b is not None, tiling=row_tiling(n, op.info.dtype), align=align)
    return owner, spec, op, rows, n, strides, w, b, o_strides


_FAST = FastCache()
"""Prepared calls of the norms (:mod:`tilec.kernels.fast_path`)."""


def _run(kind: str, x: Any, weight: Any, bias: Any, eps: float, out: Any, stream: Any) -> Any:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise TypeError(f"tilec.{kind}_norm: eps must be a real number, got {eps!r}")
    try:
        eps = float(eps)
    except OverflowError:
        eps = math.inf
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"tilec.{kind}_norm: eps must be finite and >= 0, got {eps!r}")
    key = row_call_key(kind, (x, weight, bias, out), eps)  # the launch holds eps: part of the key
    result = replay(_FAST, key, (x, weight, bias), out, stream)
    if result is not None:
        return result
    owner, spec, op, rows, n, strides, w, b, o_strides = _plan(kind, x, weight, bias, out)
    if out is None:
        check_allocatable(x, op.info.dtype, owner)
    if not has_device():
        raise NoDeviceError(f"{no_device_reason() or 'none found'} ({owner} checked its arguments; "
                            f"{owner}_kernel(...) gives the compiled kernel without a GPU)")
    if out is None:  # the spec assumed this fresh array's alignment; the launcher checks it
        out = allocate_like(x, tuple(op.info.shape), op.info.dtype, owner)
        o_strides = row_view(owner, "out", out)[3]
    kernel = compile_once(build_module, spec, None)
    views = [GlView(x, (rows, n), strides), GlView(weight, (n,), w.strides)]
    if b is not None:
        views.append(GlView(bias, (n,), b.strides))
    views += [GlView(out, (rows, n), o_strides), np.float32(eps)]
    launch(kernel, views, -(-rows // spec.rows_per_block), stream, x, _FAST, key)
    return out


def rms_norm(x: Any, weight: Any, eps: float = 1e-6, *, out: Any = None, stream: Any = None) -> Any:
    """``x / sqrt(mean(x^2) + eps) * weight`` over each row."""
    return _run("rms", x, weight, None, eps, out, stream)


def layer_norm(x: Any, weight: Any, bias: Any = None, eps: float = 1e-5, *, out: Any = None, stream: Any = None) -> Any:
    """``(x - mean) / sqrt(var + eps) * weight (+ bias)`` over each row (the biased variance, as torch)."""
    return _run("layer", x, weight, bias, eps, out, stream)


def rms_norm_kernel(x: Any, weight: Any, *, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` :func:`rms_norm` runs for these arguments."""
    return compile_once(build_module, _plan("rms", x, weight, None)[1], arch)


def layer_norm_kernel(x: Any, weight: Any, bias: Any = None, *, arch: str | None = None) -> Any:
    """The :class:`~tilec.api.CompiledKernel` :func:`layer_norm` runs for these arguments."""
    return compile_once(build_module, _plan("layer", x, weight, bias)[1], arch)


__all__ = ["layer_norm", "layer_norm_kernel", "rms_norm", "rms_norm_kernel"]
