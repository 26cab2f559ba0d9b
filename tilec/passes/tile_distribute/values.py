"""What tile-level values become in ``tile-distribute``'s output.

- a global view ``!tile.gl<T, [d0, d1]>`` → :class:`GlobalArg`: a
  ``!llvm.ptr<1>`` and ``i64`` extents and strides (kernel arguments);
- a shared tile ``!tile.st`` → :class:`SharedBuf`: a ``!llvm.ptr<3>`` and
  the tile's type (layout, swizzle);
- a register tile or vector → :class:`Regs`: its fragment and the lane's
  registers (32-bit ``i32`` pairs for 16-bit mma operands, else one scalar of
  the element type per value).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import i64
from xdsl.ir import Attribute, SSAValue

from tilec.dialects.tile.attributes import DYNAMIC
from tilec.dialects.tile.types import SharedType, element_bits
from tilec.passes.fragments import Fragment, VectorFragment
from tilec.passes.tile_distribute.emit import Int


@dataclass(eq=False)
class GlobalArg:
    name: str
    ptr: SSAValue
    element_type: Attribute
    static_dims: tuple[int, ...]
    dims: list[SSAValue]
    strides: list[SSAValue]
    written: bool = False
    aligned_rows: int = 0
    """Bytes every row is known to be contiguous and aligned to (``tile.aligned_rows``), 0 if unknown."""

    @property
    def rank(self) -> int:
        return len(self.static_dims)

    @property
    def element_bytes(self) -> int:
        return element_bits(self.element_type) // 8

    def extent(self, i: int) -> Int:
        """Extent ``i`` (i64): the static value where the type has one, else the argument."""
        d = self.static_dims[i]
        return self.dims[i] if d == DYNAMIC else d


@dataclass(eq=False)
class SharedBuf:
    """A shared tile: its address and type; ``align`` is what is known of the address's alignment (bytes)."""

    ptr: SSAValue
    type: SharedType
    align: int = 16

    @property
    def element_type(self) -> Attribute:
        return self.type.element_type


@dataclass(eq=False)
class Regs:
    """A register tile or vector of one lane: its fragment and its registers (``frag.packing``
    values per register: 2 for 16-bit values packed in pairs)."""

    frag: Fragment | VectorFragment
    element_type: Attribute
    values: list[SSAValue]
    cache: dict = field(default_factory=dict)

    @property
    def packing(self) -> int:
        return self.frag.packing


class ValueMapper(dict):
    """A clone's value map that falls back to the lowering's map of old values to new ones."""

    def __init__(self, lookup):
        super().__init__()
        self.lookup = lookup

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        found = self.lookup(key)
        return default if found is None else found

    def __contains__(self, key):
        return dict.__contains__(self, key) or self.lookup(key) is not None

    def __getitem__(self, key):
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        found = self.lookup(key)
        if found is None:
            raise KeyError(key)
        return found


__all__ = ["GlobalArg", "Regs", "SharedBuf", "ValueMapper", "i64"]
