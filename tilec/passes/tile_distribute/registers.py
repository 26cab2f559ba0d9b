"""How tile-distribute holds each register tile in 32-bit registers (its *register form*).

A fragment says which lane holds which values; the form says how a lane keeps
them: 16-bit tiles that feed an mma as its A or B operand (8-bit ones: four to a register), or a wgmma as
its A operand from registers (or are sliced, ``tile.slice``, into such operands), are packed two
values per register (the
operand registers of ``mma.sync`` and ``wgmma``, what ``ldmatrix`` loads;
ThunderKittens' ``rt_base``); every other value takes a register of its
own. Values that must agree on their fragment (a loop's
carried values, elementwise operands, see
:func:`tilec.passes.tile_layout.agreeing_classes`) agree on their form too,
so a loop carries one kind of register.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import RegisterType, element_bits
from tilec.passes.tile_layout import agreeing_classes, mma_atom_of


class RegisterForms:
    """The packing (1, 2 or 4 values per 32-bit register) of every register value of a function."""

    def __init__(self, fn: Operation):
        self.classes = agreeing_classes(fn)
        self._packed = set()
        for op in fn.walk():
            if isinstance(op, t.MmaOp) and mma_atom_of(op).a_type in ("f16", "bf16", "s8", "e4m3", "e5m2"):
                self._packed.add(self.classes.find(op.a))
                self._packed.add(self.classes.find(op.b))
            elif isinstance(op, t.WgmmaOp) and isinstance(op.a.type, RegisterType):
                # a P tile carried across a loop to the next step's wgmma stays packed: no unpacking
                # and repacking of every pair each step
                self._packed.add(self.classes.find(op.a))
        for op in fn.walk():  # a tile sliced or transposed into packed operands is packed too: the op picks its pairs
            if isinstance(op, t.SliceOp | t.TransposeOp) and self.classes.find(op.results[0]) in self._packed:
                self._packed.add(self.classes.find(op.operands[0]))

    def packing(self, v: SSAValue) -> int:
        ty = v.type
        if isinstance(ty, RegisterType) and element_bits(ty.element_type) in (8, 16) and \
                self.classes.find(v) in self._packed:
            return 32 // element_bits(ty.element_type)
        return 1

    def root(self, v: SSAValue) -> SSAValue:
        """The representative of ``v``'s class (values that share fragment and form)."""
        return self.classes.find(v)
