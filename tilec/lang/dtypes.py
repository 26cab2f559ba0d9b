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
    def is_unsigned(self) -> bool:
        """``tl.uint8`` ... ``tl.uint64``: the IR's signless integer of that width, which the language
        computes with the unsigned ops (:mod:`tilec.lang.unsigned`)."""
        return self.name.startswith("uint")

    @property
    def is_int(self) -> bool:
        """A signed or unsigned integer of 8 to 64 bits (not a mask, not an index)."""
        return self.name.startswith(("int", "uint")) and self.name != "int1"

    @property
    def bits(self) -> int | None:
        """The width of an integer type (1 for a mask), None for the others."""
        digits = self.name.removeprefix("u").removeprefix("int")
        return int(digits) if self.name.startswith(("int", "uint")) and digits.isdigit() else None

    @property
    def signed(self) -> DType:
        """An unsigned type's signed twin of the same width (the IR type they share); else the type itself."""
        return DType(self.name[1:]) if self.is_unsigned else self

    @property
    def unsigned(self) -> DType:
        """A signed integer type's unsigned twin (``tl.int32.unsigned`` is ``tl.uint32``)."""
        return DType("u" + self.name) if self.is_int and not self.is_unsigned else self

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
uint8, uint16, uint32, uint64 = DType("uint8"), DType("uint16"), DType("uint32"), DType("uint64")
"""Unsigned integers: the IR's signless integers, divided, shifted, compared, widened and converted to and
from floats as unsigned numbers (Triton's types of the same names)."""

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
    "uint8": lambda: IntegerType(8),
    "uint16": lambda: IntegerType(16),
    "uint32": lambda: IntegerType(32),
    "uint64": lambda: IntegerType(64),
    "int1": lambda: IntegerType(1),
    "index": IndexType,
}

ARRAY_DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "int8", "int16", "int32", "int64",
                "uint8", "uint16", "uint32", "uint64", "bool")
"""Element types a kernel's array arguments may have (a ``bool`` array holds a byte an element, read as a
mask: nonzero is true, and a mask stored as 0 or 1)."""


def array_element(name: str) -> Attribute:
    """The IR element type of an array of the runtime's dtype ``name`` (:data:`ARRAY_DTYPES`): a ``bool``
    array's is ``i8``, a byte an element."""
    return IntegerType(8) if name == "bool" else DType(name).ir


def dtype_of(ir: Attribute) -> DType:
    """The language's name of an IR element type (an integer's signed name: the IR's integers are signless)."""
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
    if name == "bool":  # numpy's and torch's booleans: masks
        return int1
    if name in _IR:
        return DType(name)
    raise TypeError(f"expected an element type (tl.float16, tl.bfloat16, tl.float32, tl.float64, tl.int8, tl.int16, "
                    f"tl.int32, tl.int64, tl.uint8 ... tl.uint64, tl.int1), got {value!r}")
