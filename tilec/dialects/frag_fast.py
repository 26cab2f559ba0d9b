"""Direct constructors of the `frag` ops that tile-distribute makes by the thousand.

Each makes, through `tilec.ir.fast.create`, the very op that the named
`__init__` of `tilec.dialects.frag` makes (same arguments, operands, result
types and properties in the same order); `tests/ir/test_fast.py` checks each
one against it. Why that is faster, and what neither way checks: see
`tilec.ir.fast`. They sit here, with the dialects, because `tilec.ir` is
below them and does not import them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type, StringAttr, UnitAttr, i32, i64
from xdsl.ir import Attribute, SSAValue

from tilec.dialects import frag
from tilec.ir.fast import create, index_attr, segments
from tilec.layout import MMAAtom

_F32 = Float32Type()


@functools.cache
def _mma_atom(atom: MMAAtom) -> frag.MMAAtomAttr:
    return frag.MMAAtomAttr(atom)


@functools.cache
def _string(text: str) -> StringAttr:
    return StringAttr(text)


def frag_mma(atom: MMAAtom, a: Sequence[SSAValue], b: Sequence[SSAValue], c: Sequence[SSAValue]) -> frag.MmaOp:
    """`frag.MmaOp(atom, a, b, c)`."""
    return create(
        frag.MmaOp,
        operands=(*a, *b, *c),
        result_types=(_F32,) * len(c),
        properties={"atom": _mma_atom(atom), "operandSegmentSizes": segments((len(a), len(b), len(c)))},
    )


def frag_cp_async(dst: SSAValue, src: SSAValue, nbytes: int = 16, src_bytes: SSAValue | None = None,
                  cache: str | None = None, ignore_src: SSAValue | None = None) -> frag.CpAsyncOp:
    """`frag.CpAsyncOp(dst, src, nbytes, src_bytes, cache, ignore_src)`."""
    optional = [v for v in (src_bytes, ignore_src) if v is not None]
    sizes = (1, 1, int(src_bytes is not None), int(ignore_src is not None))
    return create(
        frag.CpAsyncOp,
        operands=(dst, src, *optional),
        properties={"bytes": index_attr(nbytes, i64), "cache": _string(cache or ("cg" if nbytes == 16 else "ca")),
                    "operandSegmentSizes": segments(sizes)},
    )


def frag_ldmatrix(address: SSAValue, num: int = 4, trans: bool = False) -> frag.LdMatrixOp:
    """`frag.LdMatrixOp(address, num, trans)`."""
    properties: dict[str, Attribute] = {"num": index_attr(num, i64)}
    if trans:
        properties["trans"] = UnitAttr()
    return create(frag.LdMatrixOp, operands=(address,), result_types=(i32,) * num, properties=properties)


def frag_load(address: SSAValue, result_type: Attribute, pred: SSAValue | None = None) -> frag.LoadOp:
    """`frag.LoadOp(address, result_type, pred)`."""
    return create(frag.LoadOp, operands=(address,) if pred is None else (address, pred), result_types=(result_type,))


def frag_store(value: SSAValue, address: SSAValue, pred: SSAValue | None = None) -> frag.StoreOp:
    """`frag.StoreOp(value, address, pred)`."""
    return create(frag.StoreOp, operands=(value, address) if pred is None else (value, address, pred))


def frag_pack(kind: str, lo: SSAValue, hi: SSAValue) -> frag.PackOp:
    """`frag.PackOp(kind, lo, hi)`."""
    return create(frag.PackOp, operands=(lo, hi), result_types=(i32,), properties={"kind": _string(kind)})


__all__ = [
    "frag_cp_async",
    "frag_ldmatrix",
    "frag_load",
    "frag_mma",
    "frag_pack",
    "frag_store",
]
