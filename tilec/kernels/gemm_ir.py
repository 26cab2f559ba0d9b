"""The GEMM kernel's IR: what one matmul kernel computes (:class:`MatmulSpec`) and its ``tile.matmul``.

:func:`build_module` makes ``func.func`` with one ``tile.matmul`` and its
epilogue built op by op with xDSL's builders (``arith.extf`` of the bias
element if it is not f32, ``arith.addf``, ``arith.maximumf`` with 0.0 for
ReLU, ``arith.truncf`` to the output type, ``tile.yield``); the arguments'
``tile.aligned_rows`` say which row alignments the kernel is specialised for.
"""

from __future__ import annotations

from dataclasses import dataclass

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DictionaryAttr,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from tilec.dialects.tile.attributes import DYNAMIC
from tilec.dialects.tile.ops import MatmulOp, YieldOp
from tilec.dialects.tile.types import GlobalType
from tilec.kernels.gemm_config import FLOAT_DTYPES, INPUT_DTYPES
from tilec.kernels.ir_build import aligned_rows_attrs

ACTIVATIONS = (None, "relu", "gelu", "silu")
"""The epilogue's activations, as torch's: ``relu``, ``gelu`` (the exact one, with erf), ``silu`` (x sigmoid(x))."""
ALIGN_BYTES = 16
"""The widest ``tile.aligned_rows`` a matmul kernel is specialised for: one cp.async / ldmatrix vector."""

_IR_TYPES: dict[str, type[Attribute]] = {"float16": Float16Type, "bfloat16": BFloat16Type, "float32": Float32Type,
                                         "float8_e4m3fn": Float8E4M3FNType, "float8_e5m2": Float8E5M2Type}
SHORT = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}
"""Short names of the dtypes, in kernel names and the autotuner's titles."""
ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "float8_e4m3fn": 1, "float8_e5m2": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8}


@dataclass(frozen=True)
class MatmulSpec:
    """What a matmul kernel computes (everything but the shapes and strides, which are arguments).

    ``dtype`` is a canonical name among :data:`INPUT_DTYPES` (``float16``,
    ``bfloat16``, ``float32``, ``float8_e4m3fn``, ``float8_e5m2``);
    ``out_dtype``/``bias_dtype`` among ``float16``, ``bfloat16``,
    ``float32``; ``transpose_a``/``transpose_b`` are the kernel's (A given
    K x M, B given N x K); ``activation`` one of :data:`ACTIVATIONS`.
    ``scale_a``/``scale_b``: the kernel takes a per-tensor f32 scale of A
    (of B), an epilogue input ``!tile.gl<f32, [1]>`` (one number for every
    element, read in the kernel: the host need not synchronise to read it):
    C = act(scale_a · scale_b · (op(A) @ op(B)) + bias), what FP8 GEMMs
    (``torch._scaled_mm``) compute.

    ``align``: per kernel argument (a, b, c[, bias]; one int for all) the ``tile.aligned_rows``
    the kernel is specialised for, in bytes: its rows are contiguous, start at
    multiples of that many bytes and are whole multiples of it long (the
    launcher checks), so the kernel moves them in vectors of up to that size
    and has no run-time alignment tests or other paths; 0 (or an empty tuple,
    for every argument) compiles the generic kernel, which takes any strides
    and alignment and picks its paths at run time. This is Triton's
    specialisation on divisibility, with 2/4/8/16-byte steps.
    """

    dtype: str
    out_dtype: str
    transpose_a: bool = False
    transpose_b: bool = False
    bias_dtype: str | None = None
    activation: str | None = None
    align: tuple[int, ...] = ()
    scale_a: bool = False
    scale_b: bool = False
    batched: bool = False
    """A, B and C are 3-D views, a batch of matmuls (split-K's slices of K, ``tilec.kernels.splitk``)."""

    def __post_init__(self):
        for what, d in (("dtype", self.dtype), ("out_dtype", self.out_dtype), ("bias_dtype", self.bias_dtype)):
            if d is None and what == "bias_dtype":
                continue
            allowed = INPUT_DTYPES if what == "dtype" else FLOAT_DTYPES
            if d not in allowed:
                raise ValueError(f"MatmulSpec: {what}={d!r}; expected one of {', '.join(allowed)}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"MatmulSpec: activation={self.activation!r}; expected one of {ACTIVATIONS}")
        names = self.argument_names()
        if isinstance(self.align, int):  # one alignment for every argument (the scales, single numbers: none)
            one = self.align
            object.__setattr__(self, "align", tuple(0 if x.startswith("scale") else one for x in names) if one else ())
        if not self.align:
            return
        of = {"a": self.dtype, "b": self.dtype, "c": self.out_dtype, "bias": self.bias_dtype}
        dtypes = [of.get(x, "float32") for x in names]
        if len(self.align) != len(names):
            raise ValueError(f"MatmulSpec: align={self.align!r} has {len(self.align)} entries; expected one per "
                             f"argument ({', '.join(names)})")
        for name, dt, a in zip(names, dtypes, self.align):
            size = ITEMSIZE[dt]
            if a and (a < size or a > ALIGN_BYTES or a & (a - 1)):
                raise ValueError(f"MatmulSpec: align of '{name}' is {a!r}; expected 0 or a power of two from its "
                                 f"element size ({size}) to {ALIGN_BYTES}")

    def argument_names(self) -> tuple[str, ...]:
        """The kernel's arguments: ``a``, ``b``, ``c``, then ``bias``, ``scale_a``, ``scale_b`` if it takes them."""
        extra = (("bias", self.bias_dtype is not None), ("scale_a", self.scale_a), ("scale_b", self.scale_b))
        return ("a", "b", "c", *(name for name, present in extra if present))

    @property
    def row_align(self) -> int:
        """The smallest ``tile.aligned_rows`` of the matrices and the bias (the scales are single numbers, never
        vectors): what the configuration depends on."""
        names = self.argument_names()
        return min((a for a, x in zip(self.align, names) if not x.startswith("scale")), default=0)

    @property
    def aligned(self) -> bool:
        """Every argument is specialised for 16-byte aligned rows (the kernels of ``ALIGNED_CONFIGS``)."""
        return bool(self.align) and self.row_align >= ALIGN_BYTES

    @property
    def kernel_name(self) -> str:
        layout = ("t" if self.transpose_a else "n") + ("t" if self.transpose_b else "n")
        parts = ["matmul", SHORT[self.dtype], layout, SHORT[self.out_dtype]]
        if self.bias_dtype is not None:
            parts += ["bias", SHORT[self.bias_dtype]]
        if self.activation is not None:
            parts.append(self.activation)
        if self.scale_a or self.scale_b:
            parts.append("scaled" if self.scale_a and self.scale_b else "scale_" + ("a" if self.scale_a else "b"))
        if self.batched:
            parts.append("batched")
        if any(self.align):
            parts.append(self.rows)
        return "_".join(parts)

    @property
    def rows(self) -> str:
        """The row alignments in a name: ``a16`` (all 16 bytes), ``a8_16_16`` (per argument), ``any``."""
        if self.aligned:
            return f"a{ALIGN_BYTES}"
        return "a" + "_".join(str(a) for a in self.align) if any(self.align) else "any"


def ir_type(dtype: str) -> Attribute:
    """The IR element type of a canonical dtype name (``float16`` → ``f16``)."""
    return _IR_TYPES[dtype]()


def _activation(block: Block, name: str, x: SSAValue) -> SSAValue:
    """``relu``: max(x, 0); ``gelu``: x (1 + erf(x / sqrt 2)) / 2; ``silu``: x / (1 + e^-x): f32 ops appended
    to ``block``."""
    f32 = Float32Type()

    def add(op: Operation) -> SSAValue:
        block.add_op(op)
        return op.results[0]

    def const(v: float) -> SSAValue:
        return add(arith.ConstantOp(FloatAttr(v, f32)))

    if name == "relu":
        return add(arith.MaximumfOp(x, const(0.0)))
    if name == "gelu":
        erf = add(math.ErfOp(add(arith.MulfOp(x, const(0.7071067811865476)))))
        return add(arith.MulfOp(add(arith.MulfOp(x, const(0.5))), add(arith.AddfOp(erf, const(1.0)))))
    if name == "silu":
        decay = add(math.ExpOp(add(arith.NegfOp(x))))
        return add(arith.DivfOp(x, add(arith.AddfOp(decay, const(1.0)))))
    raise ValueError(f"activation {name!r}: expected one of {ACTIVATIONS}")


def build_epilogue(spec: MatmulSpec) -> Region:
    """``^bb0(%acc: f32[, %bias: T][, %sa: f32][, %sb: f32]): [mulf sa] [mulf sb] [extf] [addf] [activation]
    [truncf]; tile.yield``."""
    f32 = Float32Type()
    arg_types: list[Attribute] = [f32]
    if spec.bias_dtype is not None:
        arg_types.append(ir_type(spec.bias_dtype))
    arg_types += [f32] * (spec.scale_a + spec.scale_b)
    block = Block(arg_types=arg_types)
    block.args[0].name_hint = "acc"
    value: SSAValue = block.args[0]
    scales = block.args[1 + (spec.bias_dtype is not None):]
    for scale, name in zip(scales, [x for x, on in (("sa", spec.scale_a), ("sb", spec.scale_b)) if on]):
        scale.name_hint = name
        mul = arith.MulfOp(value, scale)
        block.add_op(mul)
        value = mul.result
    if spec.bias_dtype is not None:
        bias: SSAValue = block.args[1]
        bias.name_hint = "bv"
        if spec.bias_dtype != "float32":
            ext = arith.ExtFOp(bias, f32)
            block.add_op(ext)
            bias = ext.result
        add = arith.AddfOp(value, bias)
        block.add_op(add)
        value = add.result
    if spec.activation is not None:
        value = _activation(block, spec.activation, value)
    if spec.out_dtype != "float32":
        trunc = arith.TruncFOp(value, ir_type(spec.out_dtype))
        block.add_op(trunc)
        value = trunc.result
    block.add_op(YieldOp(value))
    return Region(block)


def build_module(spec: MatmulSpec) -> ModuleOp:
    """The whole-problem kernel: ``func.func @<name>(%a, %b, %c[, %bias][, %scale_a][, %scale_b])`` with one
    ``tile.matmul``."""
    matrix = [DYNAMIC] * (3 if spec.batched else 2)
    gl_in = GlobalType(ir_type(spec.dtype), matrix)
    gl_out = GlobalType(ir_type(spec.out_dtype), matrix)
    arg_types: list[Attribute] = [gl_in, gl_in, gl_out]
    names = list(spec.argument_names())
    if spec.bias_dtype is not None:
        arg_types.append(GlobalType(ir_type(spec.bias_dtype), [DYNAMIC]))
    arg_types += [GlobalType(Float32Type(), [1])] * (spec.scale_a + spec.scale_b)  # one number each
    body = Block(arg_types=arg_types)
    for arg, name in zip(body.args, names):
        arg.name_hint = name
    a, b, c, *inputs = body.args
    body.add_op(MatmulOp(a, b, c, tuple(inputs), build_epilogue(spec),
                         transpose_a=spec.transpose_a, transpose_b=spec.transpose_b))
    body.add_op(func.ReturnOp())
    fn = func.FuncOp(spec.kernel_name, (arg_types, []), Region(body), arg_attrs=aligned_rows_attrs(spec.align))
    module = ModuleOp([fn])
    module.verify()
    return module


__all__ = ["ACTIVATIONS", "ALIGN_BYTES", "ITEMSIZE", "SHORT", "MatmulSpec", "build_epilogue", "build_module"]
