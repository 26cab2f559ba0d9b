"""Element types of the kernel language: a name users write (``tl.float16``), its IR type and its numpy name."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
)
from xdsl.ir import Attribute


@dataclass(frozen=True)
class DType:
    """``tl.float16`` etc.: what ``.to(...)`` takes and ``x.dtype`` gives."""

    name: str

    @property
    def ir(self) -> Attribute:
        return _IR[self.name]()

    @property
    def is_float(self) -> bool:
        """A float the language computes in (FP8 is computed in f32: :attr:`is_fp8`)."""
        return self.name in ("float16", "bfloat16", "float32", "float64")

    @property
    def is_fp8(self) -> bool:
        return self.name in ("float8_e4m3fn", "float8_e5m2")

    @property
    def element_ty(self) -> DType:
        """The type itself: Triton's ``x_ptr.dtype.element_ty`` (a pointer's element type) reads the same."""
        return self

    def __repr__(self) -> str:
        return f"tl.{self.name}"


float16, bfloat16, float32, float64 = DType("float16"), DType("bfloat16"), DType("float32"), DType("float64")
float8_e4m3fn, float8_e5m2 = DType("float8_e4m3fn"), DType("float8_e5m2")
"""FP8: loaded, stored, converted (saturating into FP8) and multiplied by ``tl.dot`` / ``tl.wgmma``;
arithmetic on it is computed in f32 (typed as Triton types it)."""
float8e4nv, float8e5 = float8_e4m3fn, float8_e5m2
"""Triton's names of the same types."""
int8, int16 = DType("int8"), DType("int16")
int32, int64, int1, index = DType("int32"), DType("int64"), DType("int1"), DType("index")

_IR = {
    "float16": Float16Type,
    "bfloat16": BFloat16Type,
    "float32": Float32Type,
    "float64": Float64Type,
    "float8_e4m3fn": Float8E4M3FNType,
    "float8_e5m2": Float8E5M2Type,
    "int8": lambda: IntegerType(8),
    "int16": lambda: IntegerType(16),
    "int32": lambda: IntegerType(32),
    "int64": lambda: IntegerType(64),
    "int1": lambda: IntegerType(1),
    "index": IndexType,
}

ARRAY_DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "int16", "int32", "int64")
"""Element types a kernel's array arguments may have."""


def dtype_of(ir: Attribute) -> DType:
    """The language's name of an IR element type."""
    for name, make in _IR.items():
        if make() == ir:
            return DType(name)
    raise TypeError(f"no tilec.lang dtype for {ir}")


def as_dtype(value: object) -> DType:
    """``tl.float16``, ``"float16"``, a numpy or torch dtype (or scalar type) → :class:`DType`; TypeError
    otherwise (:func:`tilec.lang.tracing.element_type` makes it an error at the user's line)."""
    if isinstance(value, DType):
        return value
    name = value.__name__ if isinstance(value, type) else str(getattr(value, "name", value))  # np.float16 too
    name = name.removeprefix("torch.")
    if name in _IR:
        return DType(name)
    raise TypeError(f"expected an element type (tl.float16, tl.bfloat16, tl.float32, tl.float64, tl.int8, tl.int16, "
                    f"tl.int32, tl.int64), got {value!r}")
