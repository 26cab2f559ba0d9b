"""IR building for ``tile-distribute``: integer math with constant folding, layouts and swizzles as code.

An :class:`Emitter` writes the new kernel body. Integer values are either a
Python ``int`` (known at compile time: folded) or an ``SSAValue`` of a given
integer type, so address arithmetic written once works for static and dynamic
parts alike and only what is really dynamic reaches the IR. Constants go to
the top of the entry block (one per value and type), and values that depend
only on the lane id and the kernel arguments can be computed once in the
*prologue* (:meth:`Emitter.hoisted`), right after the constants. Integer
and predicate ops are numbered by value within their block: asking for the
same op on the same operands again in that block returns the first result
(address arithmetic is written per access and repeats itself: a quarter of
a GEMM's ops).

Every op of the new body is made by a constructor of :mod:`tilec.ir.fast`
(xDSL's ops) or :mod:`tilec.dialects.frag_fast` (the ``frag`` ops and the few
``tile`` ops the pass keeps) and goes in through the emitter (:meth:`Emitter.insert`,
:meth:`Emitter.const`): one way to build, at the cost of the op itself rather
than irdl's generic ``__init__`` (thousands of ops per kernel). The exceptions
are the new ``func.func`` (xDSL's constructor, once per kernel) and ops copied
unchanged (cloned); the rule and its reasons are in :mod:`tilec.ir.fast`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Union

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tilec.dialects.tile.types import rounded_float
from tilec.ir import fast
from tilec.layout import Layout, Swizzle
from tilec.layout.int_tuple import flatten, is_tuple

Int = Union[int, SSAValue]
Bool = Union[bool, SSAValue]


class Emitter:
    """Builds ops at ``builder``'s point; constants and hoisted values go to the entry block's top.

    The emitter only appends to blocks (:meth:`at` takes block ends), so an op
    built earlier in the current block dominates the point: :meth:`_pure`
    reuses it.
    """

    def __init__(self, entry: Block):
        self.entry = entry
        self.builder = Builder(InsertPoint.at_end(entry))
        self.prologue = Block()
        self._pro_builder = Builder(InsertPoint.at_end(self.prologue))
        self.constants = Block()
        self._consts: dict[tuple, SSAValue] = {}
        self._hoisted: dict[Hashable, object] = {}
        self._in_prologue = False
        self._numbered: dict[tuple, SSAValue] = {}

    # ------------------------------------------------------------ placement

    def insert(self, op: Operation) -> Operation:
        if self._in_prologue:
            return self._pro_builder.insert(op)
        return self.builder.insert(op)

    def at(self, point: InsertPoint) -> "_At":
        """Temporarily build at ``point``, the end of a block (a context manager)."""
        if point.insert_before is not None:
            raise ValueError("the emitter appends to blocks: build at InsertPoint.at_end(block)")
        return _At(self, point)

    def _pure(self, key: tuple, make: Callable[[], Operation]) -> SSAValue:
        """The result of ``make()``, an op without side effects whose operands and attributes
        ``key`` names: built once per block, found again by later requests in that block."""
        block = self.prologue if self._in_prologue else self.builder.insertion_point.block
        numbered = (block, *key)
        value = self._numbered.get(numbered)
        if value is None:
            value = self._numbered[numbered] = self.insert(make()).results[0]
        return value

    def block_list(self, key: Hashable) -> list:
        """A list kept for ``key`` in the current block: what an earlier request in this block put
        there (values built in this block, which dominate the point), else a new empty list."""
        block = self.prologue if self._in_prologue else self.builder.insertion_point.block
        return self._numbered.setdefault((block, "list", key), [])

    def hoisted(self, key: Hashable, make: Callable[[], object]) -> object:
        """``make()`` built once in the prologue (it may use only arguments, constants and hoisted values)."""
        if key not in self._hoisted:
            was = self._in_prologue
            self._in_prologue = True
            try:
                self._hoisted[key] = make()
            finally:
                self._in_prologue = was
        return self._hoisted[key]

    def finish(self) -> None:
        """Move the constants and the prologue to the top of the entry block."""
        first = self.entry.first_op
        for block in (self.constants, self.prologue):
            for op in list(block.ops):
                op.detach()
                if first is None:
                    self.entry.add_op(op)
                else:
                    self.entry.insert_op_before(op, first)

    # ------------------------------------------------------------ constants

    def const(self, value: int | float, t: Attribute) -> SSAValue:
        if isinstance(t, IntegerType | IndexType):  # a known value in the type's bits, as a cast would leave it
            bits = t.width.data if isinstance(t, IntegerType) else 64
            value = int(value) & 1 if bits == 1 else (int(value) + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))
        key = (value, t)
        if key not in self._consts:
            if isinstance(t, IntegerType | IndexType):
                op = fast.arith_constant_op(fast.index_attr(int(value), t))
            else:
                op = fast.arith_constant_op(FloatAttr(rounded_float(float(value), t), t))
            self.constants.add_op(op)
            self._consts[key] = op.result
        return self._consts[key]

    def zero_vector(self, t: Attribute) -> SSAValue:
        """A ``dense<0>`` vector constant (cached)."""
        key = ("dense0", t)
        if key not in self._consts:
            n = t.element_count()
            zeros = [0] * n if isinstance(t.element_type, IntegerType) else [0.0] * n
            op = fast.arith_constant_op(DenseIntOrFPElementsAttr.from_list(t, zeros))
            self.constants.add_op(op)
            self._consts[key] = op.result
        return self._consts[key]

    @staticmethod
    def known(x: Int) -> Int:
        """``x`` as an ``int`` when it is an integer ``arith.constant``."""
        if isinstance(x, SSAValue) and isinstance(x.owner, arith.ConstantOp):
            v = x.owner.value
            wide = isinstance(x.type, IndexType) or (isinstance(x.type, IntegerType) and x.type.width.data > 1)
            if isinstance(v, IntegerAttr) and wide:
                return v.value.data
        return x

    def value(self, x: Int, t: Attribute) -> SSAValue:
        return self.const(x, t) if isinstance(x, int) else x

    def boolean(self, x: Bool) -> SSAValue:
        return self.const(int(x), i1) if isinstance(x, bool) else x

    # ------------------------------------------------------------ integers

    def _bin(self, cls, a: SSAValue, b: SSAValue) -> SSAValue:
        return self._pure((cls, a, b), lambda: fast.arith_binary_op(cls, a, b))

    def add(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(a, int) and a == 0:
            return b
        if isinstance(b, int) and b == 0:
            return a
        return self._bin(arith.AddiOp, self.value(a, t), self.value(b, t))

    def sum(self, terms, t: Attribute) -> Int:
        """Static terms are added first (one constant), then the dynamic ones."""
        static = sum(x for x in terms if isinstance(x, int))
        total: Int = 0
        for x in terms:
            if not isinstance(x, int):
                total = self.add(total, x, t)
        return self.add(total, static, t)

    def sub(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return a - b
        if isinstance(b, int) and b == 0:
            return a
        return self._bin(arith.SubiOp, self.value(a, t), self.value(b, t))

    def mul(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if isinstance(a, int):
            a, b = b, a
        if isinstance(b, int):
            if b == 0:
                return 0
            if b == 1:
                return a
            if b > 0 and b & (b - 1) == 0:
                return self._bin(arith.ShLIOp, a, self.const(b.bit_length() - 1, t))
        return self._bin(arith.MuliOp, self.value(a, t), self.value(b, t))

    def udiv(self, a: Int, b: int, t: Attribute) -> Int:
        a = self.known(a)
        if isinstance(a, int):
            return a // b
        if b == 1:
            return a
        if b & (b - 1) == 0:
            return self._bin(arith.ShRUIOp, a, self.const(b.bit_length() - 1, t))
        return self._bin(arith.DivUIOp, a, self.const(b, t))

    def urem(self, a: Int, b: int, t: Attribute) -> Int:
        a = self.known(a)
        if isinstance(a, int):
            return a % b
        if b == 1:
            return 0
        if b & (b - 1) == 0:
            return self._bin(arith.AndIOp, a, self.const(b - 1, t))
        return self._bin(arith.RemUIOp, a, self.const(b, t))

    def and_(self, a: Int, b: int, t: Attribute) -> Int:
        if isinstance(a, int):
            return a & b
        return self._bin(arith.AndIOp, a, self.const(b, t))

    def shr(self, a: Int, b: int, t: Attribute) -> Int:
        if isinstance(a, int):
            return a >> b
        return a if b == 0 else self._bin(arith.ShRUIOp, a, self.const(b, t))

    def xor(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return a ^ b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        return self._bin(arith.XOrIOp, self.value(a, t), self.value(b, t))

    def umin(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self._bin(arith.MinUIOp, self.value(a, t), self.value(b, t))

    def smin(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return min(a, b)
        return self._bin(arith.MinSIOp, self.value(a, t), self.value(b, t))

    def smax(self, a: Int, b: Int, t: Attribute) -> Int:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b)
        return self._bin(arith.MaxSIOp, self.value(a, t), self.value(b, t))

    def cast(self, a: Int, t: Attribute) -> Int:
        """``arith.index_cast`` (index <-> integer); ints pass through."""
        a = self.known(a)
        if isinstance(a, int) or a.type == t:
            return a
        if isinstance(a.type, IntegerType) and isinstance(t, IntegerType):
            cls = arith.TruncIOp if a.type.width.data > t.width.data else arith.ExtSIOp
        else:
            cls = arith.IndexCastOp
        return self._pure((cls, a, t), lambda: fast.arith_cast_op(cls, a, t))

    # ------------------------------------------------------------ predicates

    def cmp(self, pred: str, a: Int, b: Int, t: Attribute) -> Bool:
        a, b = self.known(a), self.known(b)
        if isinstance(a, int) and isinstance(b, int):
            return {
                "ult": lambda: (a % (1 << 64)) < (b % (1 << 64)),
                "slt": lambda: a < b,
                "ule": lambda: (a % (1 << 64)) <= (b % (1 << 64)),
                "sle": lambda: a <= b,
                "eq": lambda: a == b,
                "ne": lambda: a != b,
            }[pred]()
        a, b = self.value(a, t), self.value(b, t)
        return self._pure(("cmpi", pred, a, b), lambda: fast.cmpi_op(pred, a, b))

    def land(self, a: Bool, b: Bool) -> Bool:
        if isinstance(a, bool):
            return b if a else False
        if isinstance(b, bool):
            return a if b else False
        if a is b:
            return a
        return self._bin(arith.AndIOp, a, b)

    def lor(self, a: Bool, b: Bool) -> Bool:
        if isinstance(a, bool):
            return True if a else b
        if isinstance(b, bool):
            return True if b else a
        if a is b:
            return a
        return self._bin(arith.OrIOp, a, b)

    def lnot(self, a: Bool) -> Bool:
        if isinstance(a, bool):
            return not a
        return self._bin(arith.XOrIOp, a, self.const(1, a.type))

    def all(self, preds) -> Bool:
        out: Bool = True
        for p in preds:
            out = self.land(out, p)
        return out

    def select(self, c: Bool, a: Int, b: Int, t: Attribute) -> Int:
        if isinstance(c, bool):
            return a if c else b
        if isinstance(a, int) and isinstance(b, int) and a == b:
            return a
        a, b = self.value(a, t), self.value(b, t)
        return self._pure(("select", c, a, b), lambda: fast.arith_select_op(c, a, b))

    # ------------------------------------------------------------ layouts

    def layout_apply(self, layout: Layout, x: Int, t: Attribute) -> Int:
        """``layout(x)`` for a 1-D index ``x`` into a (possibly hierarchical) mode, as code.

        As in CuTe, the last leaf takes whatever is left of ``x`` (no modulo).
        """
        leaves = list(zip(flatten(layout.shape), flatten(layout.stride))) if is_tuple(layout.shape) else [
            (layout.shape, layout.stride)
        ]
        terms: list[Int] = []
        prefix = 1
        for i, (s, d) in enumerate(leaves):
            part = self.udiv(x, prefix, t)
            last = i == len(leaves) - 1
            if not last:
                part = self.urem(part, s, t)
            terms.append(self.mul(part, d, t))
            prefix *= s
        return self.sum(terms, t)

    def swizzle(self, sw: Swizzle | None, offset: Int, t: Attribute) -> Int:
        """``offset ^ ((offset & yyy) >> S)`` (CuTe's Swizzle<B,M,S>)."""
        if sw is None or sw.bits == 0:
            return offset
        if isinstance(offset, int):
            return sw(offset)
        moved = self.and_(offset, sw.yyy_mask, t)
        if sw.shift >= 0:
            moved = self.shr(moved, sw.shift, t)
        else:
            moved = self._bin(arith.ShLIOp, moved, self.const(-sw.shift, t))
        return self.xor(offset, moved, t)

    # ------------------------------------------------------------ addresses

    def gep(self, ptr: SSAValue, index: Int, elem: Attribute, t: Attribute = i64) -> SSAValue:
        """``ptr + index * sizeof(elem)``."""
        if isinstance(index, int) and index == 0:
            return ptr
        index = self.value(index, t)
        return self._pure(("gep", ptr, index, elem), lambda: fast.gep_op(ptr, index, elem, ptr.type))


class _At:
    def __init__(self, em: Emitter, point: InsertPoint):
        self.em, self.point = em, point

    def __enter__(self):
        self.saved = self.em.builder
        self.em.builder = Builder(self.point)
        return self.em

    def __exit__(self, *exc):
        self.em.builder = self.saved
        return False


__all__ = ["Bool", "Emitter", "Int", "i1", "i32", "i64"]
