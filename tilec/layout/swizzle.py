"""Swizzles and composed layouts: the bank-conflict-free shared-memory layouts.

``Swizzle(B, M, S)`` XORs ``B`` bits taken from position ``M+S`` of an offset
into position ``M``: ``o ^ ((o & yyy) >> S)`` with ``yyy = ((1<<B)-1) << (M+S)``.
``ComposedLayout(inner, offset, layout)`` is the function ``inner(offset +
layout(c))``, CuTe's ``inner o offset o layout``; with a swizzle as ``inner`` it
is how a swizzled shared tile is described.
"""

from __future__ import annotations

import numbers

from functools import lru_cache

from tilec.layout.algebra import composition
from tilec.layout.int_tuple import has_none
from tilec.layout.layout import Layout, _tabulate, as_layout


MAX_SWIZZLE_BITS = 32
"""The offset bits a swizzle may read or write: shared-memory offsets are 32-bit."""


class Swizzle:
    """CuTe's ``Swizzle<B, M, S>`` (bits, base, shift) as a function on offsets."""

    __slots__ = ("bits", "base", "shift", "_yyy")

    def __init__(self, bits: int, base: int, shift: int):
        if any(type(x) is bool or not isinstance(x, numbers.Integral) for x in (bits, base, shift)):
            raise TypeError(f"Sw<{bits!r},{base!r},{shift!r}>: bits, base and shift are integers")
        bits, base, shift = int(bits), int(base), int(shift)
        if bits < 0 or base < 0:
            raise ValueError(f"Sw<{bits},{base},{shift}>: bits and base must be non-negative")
        if bits + base + abs(shift) > MAX_SWIZZLE_BITS:
            raise ValueError(f"Sw<{bits},{base},{shift}>: bits + base + |shift| must be at most {MAX_SWIZZLE_BITS} "
                             "(a swizzle acts on the bits of a 32-bit offset)")
        if abs(shift) < bits:
            raise ValueError(f"Sw<{bits},{base},{shift}>: |shift| must be at least bits so the masks do not overlap")
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "shift", shift)
        object.__setattr__(self, "_yyy", ((1 << bits) - 1) << (base + max(0, shift)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Swizzle is immutable")

    @property
    def yyy_mask(self) -> int:
        """The bits that are read (the source of the XOR)."""
        return ((1 << self.bits) - 1) << (self.base + max(0, self.shift))

    @property
    def zzz_mask(self) -> int:
        """The bits that are flipped."""
        return ((1 << self.bits) - 1) << (self.base - min(0, self.shift))

    def __call__(self, offset: int) -> int:
        moved = offset & self._yyy
        shift = self.shift
        return offset ^ (moved >> shift if shift >= 0 else moved << -shift)

    def size(self) -> int:
        """The period of the swizzle pattern."""
        return 1 << (self.bits + self.base + abs(self.shift))

    def cosize(self) -> int:
        return self.size()

    def compose(self, b) -> "ComposedLayout":
        """``Sw o B``: a swizzled view of layout ``B``."""
        if not isinstance(b, (Layout, int)):
            raise ValueError(f"composition: {self} can only be composed with a layout, got {b!r}")
        return ComposedLayout(self, 0, as_layout(b))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Swizzle) and (self.bits, self.base, self.shift) == (other.bits, other.base, other.shift)

    def __hash__(self) -> int:
        return hash(("Sw", self.bits, self.base, self.shift))

    def __str__(self) -> str:
        return f"Sw<{self.bits},{self.base},{self.shift}>"

    def __repr__(self) -> str:
        return f"Swizzle({self.bits}, {self.base}, {self.shift})"


@lru_cache(maxsize=1024)
def _composed_cosize(layout: "ComposedLayout") -> int:
    inner, base = layout.inner, layout.offset
    outer = layout.layout
    # the outer layout's values, not kept (this cache would hold them)
    values = _tabulate(outer.shape, outer.stride) or [outer(i) for i in range(outer.size())]
    if isinstance(inner, Swizzle):
        # the same maximum, the swizzle inlined
        mask, shift = inner.yyy_mask, inner.shift
        if shift >= 0:
            return max((base + o) ^ (((base + o) & mask) >> shift) for o in values) + 1
        return max((base + o) ^ (((base + o) & mask) << -shift) for o in values) + 1
    return max(inner(base + o) for o in values) + 1


class ComposedLayout:
    """``inner o offset o layout``: the coordinate function of ``layout``, shifted, then ``inner``."""

    __slots__ = ("inner", "offset", "layout")

    def __init__(self, inner, offset: int, layout):
        if not isinstance(inner, (Swizzle, Layout)):
            raise ValueError(f"composed layout: inner function must be a swizzle or a layout, got {inner!r}")
        if not isinstance(layout, Layout):
            raise ValueError(f"composed layout: outer part must be a layout, got {layout!r}")
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "layout", layout)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("ComposedLayout is immutable")

    # The coordinate side is the outer layout's.
    @property
    def shape(self):
        return self.layout.shape

    @property
    def swizzle(self) -> Swizzle | None:
        return self.inner if isinstance(self.inner, Swizzle) else None

    def __call__(self, *coord):
        crd = coord[0] if len(coord) == 1 else coord
        if type(crd) is not int and has_none(crd):
            return self.slice(crd)
        return self.inner(self.offset + self.layout(crd))

    def slice_and_offset(self, crd) -> tuple["ComposedLayout", int]:
        """Slicing keeps the swizzle: the fixed part moves into the composed offset."""
        sub, off = self.layout.slice_and_offset(crd)
        return ComposedLayout(self.inner, self.offset + off, sub), 0

    def slice(self, crd) -> "ComposedLayout":
        return self.slice_and_offset(crd)[0]

    def with_layout(self, layout) -> "ComposedLayout":
        return ComposedLayout(self.inner, self.offset, layout)

    def compose(self, b) -> "ComposedLayout":
        return self.with_layout(composition(self.layout, b))

    def __len__(self) -> int:
        return len(self.layout)

    def __getitem__(self, i: int) -> "ComposedLayout":
        return self.with_layout(self.layout[i])

    def size(self) -> int:
        return self.layout.size()

    def cosize(self) -> int:
        """One past the largest offset reached (the swizzle permutes within its period)."""
        return _composed_cosize(self)

    def rank(self) -> int:
        return self.layout.rank()

    def depth(self) -> int:
        return self.layout.depth()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComposedLayout) and (self.inner, self.offset, self.layout) == (
            other.inner,
            other.offset,
            other.layout,
        )

    def __hash__(self) -> int:
        return hash((self.inner, self.offset, self.layout))

    def __str__(self) -> str:
        return f"{self.inner} o {self.offset} o {self.layout}"

    def __repr__(self) -> str:
        return f"ComposedLayout.parse({str(self)!r})"

    @staticmethod
    def parse(text: str) -> "ComposedLayout":
        from tilec.layout.parse import parse  # cycle: the parser builds swizzles

        value = parse(text)
        if not isinstance(value, ComposedLayout):
            raise ValueError(f"{text!r} is not a composed layout 'inner o offset o layout'")
        return value

