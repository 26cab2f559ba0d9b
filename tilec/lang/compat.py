"""Triton's spellings that are other names for what tilec.lang does, so a kernel ported from Triton
keeps its lines: shape helpers (``tl.expand_dims``, ``tl.broadcast_to``, ``tl.permute``; reshapes
are :mod:`tilec.lang.shapes`), ``tl.fma``, ``tl.softmax``, ``tl.swizzle2d``
(the grouped block order of Triton's GEMM tutorial), and the compiler hints ``tl.multiple_of``,
``tl.max_contiguous``, ``tl.max_constancy`` (tilec specialises each array argument on its row
alignment instead: they return their value), ``tl.static_assert``, ``tl.static_print``,
``tl.assume``, ``tl.device_assert`` (as Triton runs it without ``debug``: not checked) and
``tl.debug_barrier``; ``tl.umulhi``, ``tl.isnan``; and the namespaces ``tl.math`` and
``tl.extra.cuda.libdevice`` for the math functions the language has, under Triton's and libdevice's
names (``libdevice.tanh``, ``libdevice.fast_expf``, ``libdevice.rsqrt`` ...).
"""

from __future__ import annotations

import builtins
import functools
from types import SimpleNamespace
from typing import Any

from xdsl.dialects import math as xmath
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, Float32Type, i64

from tilec.lang import libm, ops, shapes
from tilec.lang.block_ptr import TensorDescriptor
from tilec.ir import fast
from tilec.lang.dtypes import DType, int32, int64, uint32
from tilec.lang.ops import barrier, exp, full, max, minimum, sum  # noqa: A004
from tilec.lang.tracing import LangError, current, error
from tilec.lang.values import (Expanded, Scalar, Tile, Value, Vector, _element_type, _expanded_like, _is_float,
                               _materialize, _result_shape, _Shape, broadcast_dims, map_values, wrap)


def multiple_of(x: Any, values: Any) -> Any:
    """Triton's hint that ``x`` is a multiple of ``values``: ``x`` (see the module docstring)."""
    return x


def max_contiguous(x: Any, values: Any) -> Any:
    """Triton's hint that runs of ``values`` elements of ``x`` are consecutive: ``x``."""
    return x


def max_constancy(x: Any, values: Any) -> Any:
    """Triton's hint that runs of ``values`` elements of ``x`` are equal: ``x``."""
    return x


def static_assert(cond: Any, msg: str = "") -> None:
    """An error at the line while tracing when ``cond`` (a Python value, e.g. of constexprs) is false."""
    if isinstance(cond, (Value, Expanded)):
        raise error("tl.static_assert tests a Python value (constexprs, shapes), not one known only when the "
                    "kernel runs")
    if not cond:
        raise error(f"tl.static_assert failed{': ' + msg if msg else ''}")


def static_print(*values: Any) -> None:
    """Triton's ``tl.static_print``: ``values`` printed while the kernel is traced (once a specialisation)."""
    print(*values)


def assume(cond: Any) -> None:
    """Triton's hint that ``cond`` holds: nothing (a Python ``False`` is an error at the line)."""
    if not isinstance(cond, (Value, Expanded)) and not cond:
        raise error("tl.assume of a condition that is false")


def device_assert(cond: Any, msg: str = "", mask: Any = None) -> None:
    """Triton's ``tl.device_assert``: checked by Triton only when compiled with ``debug``; tilec does not check
    a run-time condition (as Triton without ``debug``). A Python ``False`` is an error at the line."""
    if not isinstance(cond, (Value, Expanded)) and not cond:
        raise error(f"tl.device_assert failed{': ' + msg if msg else ''}")


def device_print(prefix: str, *values: Any, hex: bool = False) -> None:  # noqa: A002 - Triton's keyword
    """Triton's ``tl.device_print`` needs the GPU's printf, which tilec's kernels do not link: an error."""
    raise error("tl.device_print is not supported (tilec's kernels have no printf): store the values into an "
                "array, or run kernel.interpret(...) on the CPU and print there")


def umulhi(a: Any, b: Any) -> Any:
    """The high 32 bits of the 64-bit product of two 32-bit integers read unsigned (Triton's ``tl.umulhi``;
    ``mul.wide.u32`` in PTX), in the first traced operand's type (int32 or uint32). One operand may be a
    Python int."""
    if not isinstance(a, (Value, Expanded)):
        a, b = b, a
    words = (int32, uint32)
    if not isinstance(a, (Value, Expanded)) or a.dtype not in words or not (
            (isinstance(b, (Value, Expanded)) and b.dtype in words) or (isinstance(b, int) and not isinstance(b, bool))):
        raise error(f"tl.umulhi multiplies int32 or uint32 tiles, vectors or scalars (or one Python int), got "
                    f"{_describe(a)} and {_describe(b)}")
    wide = b.to(uint32).to(int64) if isinstance(b, (Value, Expanded)) else (b & 0xFFFFFFFF)
    product = a.to(uint32).to(int64) * wide
    return (product >> 32).to(a.dtype)


def isnan(x: Any) -> Any:
    """Where ``x`` is NaN (a mask)."""
    return x != x


def _pow(x: Any, y: Any) -> Any:
    """``x ** y`` as libdevice's ``pow``: ``2^(y log2 |x|)``, negative for a negative ``x`` and an odd integer
    ``y``, NaN for a negative ``x`` and a fractional ``y``; ``pow(x, 0)`` is 1 (0 ** 0 too)."""
    number = (int, float)
    if isinstance(x, number) and isinstance(y, number):
        return float(x) ** float(y)
    if isinstance(y, number) and not isinstance(y, bool):  # the exponent known while tracing
        if y == 0:
            return ops.full_like(x, 1.0) if isinstance(x, (Tile, Vector)) else x * 0.0 + 1.0
        magnitude = ops.exp2(y * ops.log2(ops.abs(x)))
        if float(y).is_integer():
            return ops.where(x < 0.0, -magnitude, magnitude) if int(y) % 2 else magnitude
        return ops.where(x < 0.0, float("nan"), magnitude)
    magnitude = ops.exp2(y * ops.log2(ops.abs(x)))
    integral = ops.floor(y) == y
    odd = integral & (ops.floor(y * 0.5) * 2.0 != y)
    signed = ops.where(x < 0.0, ops.where(integral, ops.where(odd, -magnitude, magnitude), float("nan")), magnitude)
    return ops.where(y == 0.0, 1.0, signed)


def _fmax(a: Any, b: Any) -> Any:
    """C's ``fmax``: the larger, a NaN operand ignored (NaN only if both are)."""
    return ops.where(isnan(a), b, ops.where(isnan(b), a, ops.maximum(a, b)))


def _fmin(a: Any, b: Any) -> Any:
    """C's ``fmin``: the smaller, a NaN operand ignored."""
    return ops.where(isnan(a), b, ops.where(isnan(b), a, ops.minimum(a, b)))


def xor_sum(x: Any, axis: Any = None, keep_dims: bool = False) -> Any:
    """Triton's ``tl.xor_sum``: the exclusive or of the elements along ``axis`` (integers)."""
    return ops.reduce(x, axis, lambda p, q: p ^ q, keep_dims=keep_dims)


def reduce_or(input: Any, axis: Any = None, keep_dims: bool = False) -> Any:  # noqa: A002 - Triton's name
    """Triton's ``tl.reduce_or``: the bitwise or of the elements along ``axis`` (integers)."""
    if isinstance(input, (Value, Expanded)) and not input.dtype.is_int:
        raise error(f"tl.reduce_or takes integers, got {_describe(input)}")
    return ops.reduce(input, axis, lambda p, q: p | q, keep_dims=keep_dims)


def fdiv(x: Any, y: Any, ieee_rounding: bool = False, approx: bool = False) -> Any:
    """Triton's ``tl.fdiv``: ``x / y`` (tilec divides rounded to nearest whatever is asked: ``approx`` allows
    a less accurate quotient, which this one is not)."""
    return x / y


def add(x: Any, y: Any, sanitize_overflow: bool = True) -> Any:
    """Triton's ``tl.add``: ``x + y``."""
    return x + y


def sub(x: Any, y: Any, sanitize_overflow: bool = True) -> Any:
    """Triton's ``tl.sub``: ``x - y``."""
    return x - y


def mul(x: Any, y: Any, sanitize_overflow: bool = True) -> Any:
    """Triton's ``tl.mul``: ``x * y``."""
    return x * y


def broadcast(input: Any, other: Any) -> tuple[Any, Any]:  # noqa: A002 - Triton's name
    """Triton's ``tl.broadcast``: both values in the shape the operators would give them (numpy's
    broadcasting), each keeping its element type."""
    shape = _result_shape((input, other))
    if shape.kind == "scalar":
        return input, other
    out = []
    for x in (input, other):
        if isinstance(x, (Value, Expanded)) and not isinstance(x, Scalar) and x.shape == shape.dims[:len(x.shape)] \
                and (shape.kind == "tile") == isinstance(x, Tile):
            out.append(x)
            continue
        element = x.type.element_type if isinstance(x, (Tile, Vector)) else x.vector.type.element_type \
            if isinstance(x, Expanded) else x.type if isinstance(x, Scalar) else \
            (Float32Type() if isinstance(x, float) else int32.ir)
        out.append(wrap(_materialize(x, shape, element)))
    return out[0], out[1]


def squeeze(x: Any, dim: Any) -> Any:
    """Triton's ``tl.squeeze``: ``x`` without its axis ``dim`` of extent 1 (a tile of one row or column
    becomes a vector)."""
    rank = len(getattr(x, "shape", ()))
    if isinstance(dim, bool) or not isinstance(dim, int) or dim not in range(-rank, rank) or x.shape[dim] != 1:
        raise error(f"tl.squeeze of {_describe(x)}: dim must name an axis of extent 1, got {dim!r}")
    return shapes.reshape(x, tuple(d for i, d in enumerate(x.shape) if i != dim % rank))


def unsqueeze(x: Any, dim: Any) -> Any:
    """Triton's ``tl.unsqueeze``: ``x`` with an axis of extent 1 at ``dim`` (``tl.expand_dims``)."""
    return expand_dims(x, dim)


def uint_to_uniform_float(x: Any) -> Any:
    """Triton's ``tl.uint_to_uniform_float``: a random 32-bit or 64-bit word as a float32 in [0, 1)."""
    if not isinstance(x, (Value, Expanded)) or not x.dtype.is_int or x.dtype.bits not in (32, 64):
        raise error(f"tl.uint_to_uniform_float takes 32-bit or 64-bit integer words, got {_describe(x)}")
    if x.dtype.bits == 32:
        x = x.to(int32, bitcast=True)
        return ops.where(x < 0, -x - 1, x).to("float32") * 4.6566127342e-10
    x = x.to(int64, bitcast=True)
    return ops.where(x < 0, -x - 1, x).to("float32") * 1.0842020432385337e-19


def pair_uniform_to_normal(u1: Any, u2: Any) -> tuple[Any, Any]:
    """Triton's ``tl.pair_uniform_to_normal``: two uniforms in [0, 1) as two standard normals (Box-Muller)."""
    u1 = ops.maximum(u1, 1.0e-7)
    theta = 6.283185307179586 * u2
    r = ops.sqrt(-2.0 * ops.log(u1))
    return r * ops.cos(theta), r * ops.sin(theta)


def map_elementwise(scalar_fn: Any, *args: Any, pack: int = 1) -> Any:
    """Triton's ``tl.map_elementwise``: ``scalar_fn`` on each element of ``args`` (``tl.map``); one element a
    call (``pack=1``)."""
    if pack != 1:
        raise error(f"tl.map_elementwise with pack={pack!r}: tilec maps one element a call (pack=1)")
    return ops.map(scalar_fn, *args)


def inline_asm_elementwise(asm: str, constraints: str, args: Any, dtype: Any, is_pure: bool, pack: int) -> Any:
    """Triton's ``tl.inline_asm_elementwise``: the PTX ``asm`` run on each element of ``args`` (broadcast like
    the operators): ``$0`` .. the outputs (one per element type of ``dtype``, a tuple for several), then the
    inputs, registers as ``constraints`` says (``"=r,r"``). One ``llvm.inline_asm`` in a ``tile.map``, so
    tile-distribute runs it on each element a thread holds; one element a call (``pack=1``). The CPU
    interpreters cannot run PTX: such a kernel runs on the GPU only."""
    if not isinstance(asm, str) or not isinstance(constraints, str):
        raise error(f"tl.inline_asm_elementwise takes the PTX and its constraints as strings, got {asm!r}, "
                    f"{constraints!r}")
    if pack != 1:
        raise error(f"tl.inline_asm_elementwise with pack={pack!r}: tilec runs the asm on one element a call (pack=1)")
    many = isinstance(dtype, (tuple, list))
    dtypes = tuple(DType(d) if isinstance(d, str) else d for d in (dtype if many else (dtype,)))
    if not dtypes or not all(isinstance(d, DType) for d in dtypes):
        raise error(f"tl.inline_asm_elementwise's dtype is an element type (tl.float32 ...) or a tuple of them, "
                    f"got {dtype!r}")
    if many and not is_pure:
        raise error("tl.inline_asm_elementwise with several outputs runs once an output: it must be pure (is_pure=True)")
    args = list(args) if isinstance(args, (tuple, list)) else [args]
    outputs = builtins.sum(1 for c in constraints.split(",") if c.strip().startswith("="))
    inputs = builtins.sum(1 for c in constraints.split(",") if c.strip() and not c.strip().startswith(("=", "~")))
    if outputs != len(dtypes) or inputs != len(args):
        raise error(f"tl.inline_asm_elementwise: constraints {constraints!r} name {outputs} outputs and {inputs} "
                    f"inputs, but dtype gives {len(dtypes)} and args {len(args)}")
    types = [d.ir for d in dtypes]
    result_type = types[0] if not many else llvm.LLVMStructType.from_type_list(types)

    def one_output(k: int):
        def body(*xs: Any) -> Scalar:
            trace = current()
            operands = [x.value if isinstance(x, Scalar) else trace.constant(x, types[0]) for x in xs]
            value = trace.value(fast.inline_asm_op(asm, constraints, operands, [result_type],
                                                   has_side_effects=not is_pure))
            if many:
                value = trace.value(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [k]), value, types[k]))
            return Scalar(value)
        return body

    results = tuple(ops.map(one_output(k), *args) for k in range(len(dtypes)))
    return results if many else results[0]


def load_tensor_descriptor(desc: Any, offsets: Any) -> Any:
    """Triton's ``tl.load_tensor_descriptor(desc, offsets)``: ``desc.load(offsets)``."""
    return _descriptor(desc, "tl.load_tensor_descriptor").load(offsets)


def store_tensor_descriptor(desc: Any, offsets: Any, value: Any) -> None:
    """Triton's ``tl.store_tensor_descriptor(desc, offsets, value)``: ``desc.store(offsets, value)``."""
    _descriptor(desc, "tl.store_tensor_descriptor").store(offsets, value)


def _descriptor(desc: Any, what: str) -> Any:
    if not isinstance(desc, TensorDescriptor):
        raise error(f"{what} takes a tl.make_tensor_descriptor, got {_describe(desc)}")
    return desc


class const:  # noqa: N801 - the annotation Triton's kernels write on read-only pointers
    """``x_ptr: tl.const``: Triton's mark of a pointer the kernel only reads (nothing for tilec to do)."""


tensor = Value
"""``tl.tensor``: the class of the language's traced values (annotations, ``isinstance``)."""


class _Namespace(SimpleNamespace):
    """A namespace of Triton's names (``tl.math``, ``libdevice``) whose missing names are an error that says so."""

    def __init__(self, label: str, **names: Any):
        super().__init__(**names)
        object.__setattr__(self, "_label", label)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        names = sorted(k for k in vars(self) if not k.startswith("_"))
        raise error(f"{self._label}.{name} is not in tilec.lang (it has {', '.join(names)})")


math = _Namespace("tl.math",
    abs=ops.abs, ceil=ops.ceil, cos=ops.cos, erf=ops.erf, exp=ops.exp, exp2=ops.exp2, floor=ops.floor,
    log=ops.log, log2=ops.log2, rsqrt=ops.rsqrt, sin=ops.sin, sqrt=ops.sqrt, tanh=ops.tanh, trunc=ops.trunc,
    rint=ops.rint, umulhi=umulhi, cdiv=ops.cdiv, maximum=ops.maximum, minimum=ops.minimum, isnan=isnan,
    fma=lambda a, b, c: fma(a, b, c), div_rn=lambda a, b: a / b, fdiv=lambda a, b, **_: a / b,
    sqrt_rn=ops.sqrt, pow=_pow, **libm.FUNCTIONS)
"""Triton's ``tl.math``: the functions the language has, by Triton's names (libdevice's others that PTX has no
instruction for are :mod:`tilec.lang.libm`'s)."""

libdevice = _Namespace(
    "libdevice", **{k: v for k, v in vars(math).items() if not k.startswith("_")}, fabs=ops.abs, fast_expf=ops.exp, fast_logf=ops.log, fast_powf=_pow, expf=ops.exp,
    exp2f=ops.exp2, logf=ops.log, log2f=ops.log2, sqrtf=ops.sqrt, rsqrtf=ops.rsqrt, tanhf=ops.tanh,
    sinf=ops.sin, cosf=ops.cos, erff=ops.erf, floorf=ops.floor, ceilf=ops.ceil, truncf=ops.trunc,
    rintf=ops.rint, fmaxf=_fmax, fminf=_fmin, fmax=_fmax, fmin=_fmin, powf=_pow,
    llrint=lambda x: ops.rint(x).to(int64), lrint=lambda x: ops.rint(x).to(int64),
    llrintf=lambda x: ops.rint(x).to(int64), lrintf=lambda x: ops.rint(x).to(int64),
    **{f"{name}f": f for name, f in libm.FUNCTIONS.items()})
"""``libdevice``'s names (``tl.extra.cuda.libdevice`` in Triton) for the functions the language has."""

extra = SimpleNamespace(cuda=SimpleNamespace(libdevice=libdevice), libdevice=libdevice)
"""Triton's ``tl.extra``: ``tl.extra.cuda.libdevice`` (and the older ``tl.extra.libdevice``)."""


def cast(x: Any, dtype: Any, fp_downcast_rounding: str | None = None, bitcast: bool = False) -> Any:
    """Triton's ``tl.cast(x, dtype)``: ``x.to(dtype)`` (``bitcast=True``: the same bits read as ``dtype``)."""
    if not isinstance(x, (Value, Expanded)):
        raise error(f"tl.cast converts a traced value (a tile, vector or scalar), got {_describe(x)}")
    if isinstance(x, Expanded):  # v[:, None]: the vector converted, still expanded
        return Expanded(cast(x.vector, dtype, fp_downcast_rounding, bitcast), x.axis)
    return x.to(dtype, fp_downcast_rounding=fp_downcast_rounding, bitcast=bitcast)


class MissingName(LangError, AttributeError):
    """A name Triton's ``tl`` has and tilec.lang does not: an error at the user's line (an AttributeError
    too, so ``hasattr(tl, name)`` stays False)."""


def missing(name: str) -> MissingName:
    """The error for ``tl.<name>``, which tilec.lang does not have."""
    return MissingName(str(error(f"tl.{name} is not in tilec.lang (see tilec.lang.__all__ for the names it has; "
                                 "docs/tutorial.md shows the window-based loads and stores)")))


def _traced(x: Any) -> bool:
    return isinstance(x, (Value, Expanded))


def python_min(*args: Any) -> Any:
    """Python's ``min`` in a kernel: ``tl.minimum`` of traced values (Triton's mapping), else Python's."""
    if any(_traced(a) for a in args):
        return functools.reduce(minimum, args)
    return builtins.min(*args)


def python_max(*args: Any) -> Any:
    """Python's ``max`` in a kernel: ``tl.maximum`` of traced values (Triton's mapping), else Python's."""
    if any(_traced(a) for a in args):
        return functools.reduce(ops.maximum, args)
    return builtins.max(*args)


def sqrt_rn(x: Any) -> Any:
    """Triton's ``tl.sqrt_rn``: the square root rounded to nearest (tilec's ``tl.sqrt`` is ``sqrt.rn``)."""
    return ops.sqrt(x)


def div_rn(a: Any, b: Any) -> Any:
    """Triton's ``tl.div_rn``: ``a / b`` rounded to nearest (tilec's division is ``div.rn``)."""
    return a / b


def debug_barrier() -> None:
    """Triton's ``tl.debug_barrier``: the block's barrier (``tl.barrier``)."""
    barrier()


def expand_dims(x: Any, axis: int) -> Any:
    """A vector with an axis of one added: ``axis=1`` is ``v[:, None]``, ``axis=0`` is ``v[None, :]``."""
    if not isinstance(x, Vector):
        raise error(f"tl.expand_dims adds an axis to a vector (tiles are 2-D at most), got {_describe(x)}")
    if axis in (1, -1):
        return x[:, None]
    if axis in (0, -2):
        return x[None, :]
    raise error(f"tl.expand_dims of a vector takes axis 0 or 1, got {axis!r}")


def broadcast_to(x: Any, shape: Any) -> Any:
    """``x`` (a number, a scalar, a vector expanded with ``[:, None]``/``[None, :]``, a vector along the
    last axis, or a tile of that shape) as a tile of ``shape``."""
    dims = tuple(shape)
    if isinstance(x, Tile):
        if x.shape == dims:
            return x
        if len(dims) != 2 or broadcast_dims(x.shape, dims) != dims:
            raise error(f"tl.broadcast_to: a tile of shape {x.shape} is not broadcast to {dims}")
        return Tile(_materialize(x, _Shape("tile", dims), x.type.element_type))  # its extents of 1 stretched
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return full(dims, x, "float32" if isinstance(x, float) else "int32")
    if isinstance(x, Scalar):
        return full(dims, x, x.dtype)
    if len(dims) == 1 and isinstance(x, Vector):
        if x.shape != dims:
            raise error(f"tl.broadcast_to: a vector of {x.shape[0]} values is not broadcast to {dims}")
        return x
    if len(dims) != 2 or not isinstance(x, (Vector, Expanded)):
        raise error(f"tl.broadcast_to makes a 2-D tile of a vector, a scalar or a number, got {_describe(x)} "
                    f"to {dims}")
    element = (x.vector if isinstance(x, Expanded) else x).type.element_type
    return wrap(_materialize(x, _Shape("tile", dims), element))


def permute(x: Any, *dims: Any) -> Any:
    """A 2-D tile's axes in the order ``dims``: ``(1, 0)`` is ``tl.trans``."""
    order = tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else tuple(dims)
    if hasattr(x, "permute") and not isinstance(x, Value):  # tl.join's (m, n, 2) value (tilec.lang.shapes.Joined)
        return x.permute(order)
    if not isinstance(x, Tile) or order not in ((0, 1), (1, 0)):
        raise error(f"tl.permute takes a 2-D register tile and (0, 1) or (1, 0), got {_describe(x)} and {order}")
    return x if order == (0, 1) else x.T


def histogram(input: Any, num_bins: int, mask: Any = None) -> Vector:  # noqa: A002 - Triton's name
    """Triton's ``tl.histogram``: how many elements of the integer vector ``input`` (where ``mask`` holds) equal
    each of 0 .. ``num_bins`` - 1, an int32 vector (values outside are counted nowhere). One comparison of
    every element with every bin (an n x num_bins tile of masks) summed down its columns: for the block
    sizes of a histogram kernel's bins (tens to a few hundred); larger tiles are refused by their size."""
    if not isinstance(input, Vector) or input.dtype.is_float or input.dtype.is_fp8:
        raise error(f"tl.histogram counts an integer vector's values, got {_describe(input)}")
    if isinstance(num_bins, bool) or not isinstance(num_bins, int) or num_bins < 1:
        raise error(f"tl.histogram's num_bins is a positive Python int (a tl.constexpr), got {num_bins!r}")
    hit = input[:, None] == ops.arange(0, num_bins)[None, :]
    if mask is not None:
        hit = hit & (mask[:, None] if isinstance(mask, Vector) else mask)
    return sum(hit.to(int32), axis=0)


def fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once (``math.fma``), broadcast and promoted like the operators."""
    operands = (a, b, c)
    shape, element = _result_shape(operands), _element_type(operands, "fma")
    if element is None:
        raise error("tl.fma needs at least one traced value")
    if not _is_float(element):  # integers meet in f32, as they do meeting a float
        element = Float32Type()
    values = [_materialize(o, shape, element) for o in operands]
    if shape.kind == "scalar":
        return Scalar(current().value(xmath.FmaOp(*values)))
    result = wrap(map_values(lambda x, y, z: current().value(xmath.FmaOp(x, y, z)), values,
                             shape.register_type(element)))
    return _expanded_like(operands, shape, result)


def softmax(x: Any, dim: int = -1, keep_dims: bool = False, ieee_rounding: bool = False) -> Any:
    """Triton's ``tl.softmax``: ``exp(x - max) / sum`` along the last axis (a tile's rows, or a vector)."""
    if dim not in (-1, 1 if isinstance(x, Tile) else 0):
        raise error(f"tl.softmax normalises along the last axis (dim=-1), got dim={dim!r}")
    if isinstance(x, Tile):
        e = exp(x - max(x, axis=1)[:, None])
        return e / sum(e, axis=1)[:, None]
    if isinstance(x, Vector):
        e = exp(x - max(x))
        return e / sum(e)
    raise error(f"tl.softmax takes a tile or a vector, got {_describe(x)}")


def swizzle2d(i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any) -> tuple[Any, Any]:
    """Triton's ``tl.swizzle2d``: block ``(i, j)`` of a ``size_i x size_j`` grid renumbered so that
    groups of ``size_g`` rows go column by column (the GEMM tutorial's L2-friendly order)."""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    rest = size_i - off_i
    size_g = min(rest, size_g) if isinstance(rest, int) and isinstance(size_g, int) else minimum(rest, size_g)
    ij = ij % size_gj
    return off_i + ij % size_g, ij // size_g


def _describe(x: Any) -> str:
    return x.describe() if isinstance(x, Value) else f"{type(x).__name__} {x!r}"


__all__ = ["broadcast_to", "debug_barrier", "expand_dims", "fma", "max_constancy", "max_contiguous", "multiple_of",
           "permute", "softmax", "static_assert", "swizzle2d"]
