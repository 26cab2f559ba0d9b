"""Verifying the final IR's thousands of alike ops once per signature.

A lowered GEMM kernel has about 2,100 ops, 1,900 of them plain llvm ops
(``llvm.add``, ``llvm.icmp``, ``llvm.getelementptr``, ...) with only about
a hundred distinct operand types, result types, properties and attributes
among them; xDSL verifies each from scratch (irdl's operand, result and
property constraints, 20-45 µs an op). :func:`verify_memoized` verifies an
op of :data:`LOCALLY_VERIFIED` once per such signature: their verifiers
read nothing else (no regions, no successors, no traits that look at
parents or symbols; each ``verify_`` reviewed). Everything else, and every
op that ends a block (where xDSL checks terminators), is verified by xDSL
as usual. It gives the same verdict as :func:`tilec.ir.verify.verify`, and the same first error
but in one case: an op with regions whose own operands, successors or
place as a terminator are wrong while an op inside it is invalid too
(xDSL checks those before the ops inside, this after them).
"""

from __future__ import annotations

from typing import TypeVar

from xdsl.dialects import llvm
from xdsl.ir import Block, ErasedSSAValue, Operation, Region
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import VerifyException

from tilec.ir.verify import as_verify_error, counting_blocks_once

LOCALLY_VERIFIED: set[type[Operation]] = {
    llvm.AddOp, llvm.SubOp, llvm.MulOp, llvm.UDivOp, llvm.SDivOp, llvm.URemOp, llvm.SRemOp,
    llvm.AndOp, llvm.OrOp, llvm.XOrOp, llvm.ShlOp, llvm.LShrOp, llvm.AShrOp,
    llvm.FAddOp, llvm.FSubOp, llvm.FMulOp, llvm.FDivOp, llvm.FNegOp,
    llvm.ICmpOp, llvm.FCmpOp, llvm.SelectOp,
    llvm.SExtOp, llvm.ZExtOp, llvm.TruncOp, llvm.FPExtOp, llvm.FPTruncOp, llvm.BitcastOp,
    llvm.SIToFPOp, llvm.PtrToIntOp, llvm.IntToPtrOp,
    llvm.ConstantOp, llvm.UndefOp, llvm.ZeroOp, llvm.AddressOfOp,
    llvm.LoadOp, llvm.StoreOp, llvm.GEPOp,
    llvm.ExtractValueOp, llvm.InsertValueOp, llvm.InsertElementOp,
    llvm.CallIntrinsicOp, llvm.InlineAsmOp,
}
"""Ops whose verification reads only their operand and result types, properties and attributes
(``tests/ir/test_verify.py`` checks that none has regions, successors or other traits than
memory effects); their own ``verify_`` methods (icmp, gep, call_intrinsic, extractelement,
addrspacecast) check only those. xDSL's are listed here; tilec's own (uitofp, fptosi, fptoui,
addrspacecast, extractelement of :mod:`tilec.dialects.llvm_ext`) join with :func:`locally_verified`
where they are defined, which is above this package (an op exists only once its class is defined,
so none is missed)."""

OpT = TypeVar("OpT", bound=type[Operation])


def locally_verified(op_type: OpT) -> OpT:
    """Class decorator: add ``op_type`` to :data:`LOCALLY_VERIFIED` (its verifier must read only
    the op's operand and result types, properties and attributes)."""
    LOCALLY_VERIFIED.add(op_type)
    return op_type


def verify_memoized(op: Operation) -> None:
    """:func:`verify`, verifying each signature of the ops of :data:`LOCALLY_VERIFIED` once."""
    with counting_blocks_once():
        try:
            _verify_op(op, _Passed())
        except VerifyException:
            raise
        except Exception as e:  # noqa: BLE001 - as verify() does
            raise as_verify_error(op, e) from None


class _Passed:
    """The signatures verified so far: by the identity of their attributes (cheap to hash, and
    never wrong: the attributes live as long as the IR), else by their values (hashing nested
    attributes costs more than most verifications, so it is done once per identity)."""

    def __init__(self) -> None:
        self.ids: set[tuple] = set()
        self.values: set[tuple] = set()

    def check(self, op: Operation) -> None:
        """Verify ``op`` (of :data:`LOCALLY_VERIFIED`) unless an op of its signature passed."""
        ids = _identities(op)
        if ids in self.ids and not any(isinstance(v, ErasedSSAValue) for v in op.operands):
            return
        key = _signature(op)
        if key is None or key not in self.values or any(isinstance(v, ErasedSSAValue) for v in op.operands):
            op.verify()
            if key is not None:
                self.values.add(key)
        self.ids.add(ids)


def _verify_op(op: Operation, passed: _Passed) -> None:
    if type(op) in LOCALLY_VERIFIED and not op.regions and not op.successors:
        block = op.parent
        if block is None or block.last_op is not op:  # a block's last op: xDSL's terminator checks
            passed.check(op)
            return
    for region in op.regions:  # as xDSL: the nested ops before the op's own verify_ (and traits)
        _verify_region(region, passed)
    op.verify(verify_nested_ops=False)


def _identities(op: Operation) -> tuple:
    return (type(op), *[id(v.type) for v in op.operands], None, *[id(r.type) for r in op.results], None,
            *[(k, id(v)) for k, v in op.properties.items()], None, *[(k, id(v)) for k, v in op.attributes.items()])


def _signature(op: Operation) -> tuple | None:
    """What the verifier of an op of :data:`LOCALLY_VERIFIED` reads (None: not hashable)."""
    key = (type(op), tuple(v.type for v in op.operands), tuple(r.type for r in op.results),
           tuple(op.properties.items()), tuple(op.attributes.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _verify_region(region: Region, passed: _Passed) -> None:
    """xDSL's ``Region.verify`` and ``Block.verify``, each op checked by :func:`_verify_op` (blocks
    and ops followed through their linked lists, which xDSL's iterators walk more slowly)."""
    block = region.first_block
    while block is not None:
        _verify_block(block, passed)
        if block.parent != region:
            raise ValueError("Parent pointer of block does not refer to containing region")
        block = block.next_block


def _verify_block(block: Block, passed: _Passed) -> None:
    child = block.first_op
    while child is not None:
        if child.parent != block:
            raise ValueError("Parent pointer of operation does not refer to containing region")
        _verify_op(child, passed)
        child = child.next_op
    if block.first_op is None and (region := block.parent) is not None and (parent := region.parent) is not None:
        if len(region.blocks) == 1 and not parent.has_trait(NoTerminator):
            raise VerifyException(
                f"Operation {parent.name} contains empty block in single-block region that expects at least a "
                "terminator"
            )


__all__ = ["LOCALLY_VERIFIED", "locally_verified", "verify_memoized"]
