"""The ``frag`` dialect on lane values: the PTX instructions of a warp, per the PTX ISA.

- ``frag.ldmatrix`` (``ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16``):
  lanes ``8i .. 8i+7`` give the (16-byte aligned) addresses of rows 0..7 of
  matrix ``i``; the other lanes' addresses are ignored. Register ``i`` of lane
  ``l`` (g = l/4, q = l%4) holds matrix ``i``'s row ``g``, columns ``2q`` (low
  half) and ``2q+1`` (high half); with ``trans`` rows ``2q``, ``2q+1`` of
  column ``g``. Needs all 32 lanes (``.sync.aligned``).
- ``frag.mma``: the A/B/C register → matrix element maps are the TV layouts of
  :data:`tilec.layout.MMA_ATOMS` (value ``v`` of a 16-bit operand is half
  ``v % 2`` of register ``v // 2``, low half first). f16/bf16 values are exact
  in float64, a tf32 register is read as its f32 bits with the low 13 bits
  dropped (the tensor core truncates; ``frag.tf32`` is where rounding
  happens); ``D = A·B + C`` is computed in float64 and rounded once to f32.
  ``fma_f32`` is one fused multiply-add per lane (float64, then f32). Needs all
  32 lanes.
- ``frag.cp_async``: reads ``src_bytes`` (default: all) bytes of the source at
  issue, zero-fills the rest, and writes the destination when a
  ``frag.cp_async_wait`` completes its group (``async_mode="deferred"``) or at
  once (``"eager"``). Lanes with ``src_bytes = 0`` or a true ``ignore_src``
  read nothing (their source address may point anywhere) and write zeros. Both addresses must be aligned to the copy size.
- ``frag.load``/``frag.store``: aligned to their size; a false predicate (or an
  inactive lane) loads zero / stores nothing.
- ``frag.shfl``: ``idx`` reads lane ``b & 31``, ``bfly`` lane ``l ^ (b & 31)``
  (the clamp ``0x1f`` tile-to-llvm emits); needs all 32 lanes.
- ``frag.pack``: ``cvt.rn.{f16x2,bf16x2}.f32``, round to nearest even, ``lo`` in
  bits 0..15; NaN becomes the canonical ``0x7fff``.
- ``frag.tf32``: ``cvt.rna.tf32.f32``, round to nearest with ties away from zero
  to 10 mantissa bits (low 13 bits cleared); NaN becomes ``0x7fffffff``.
- ``frag.ex2``: ``2**x`` in float64 rounded to f32 (the GPU's ``ex2.approx``
  is within 2 ulp of this); ``frag.fmax``/``fmin``: a NaN operand is ignored,
  ``+0 > -0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32 as _F32
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from tilec.dialects import frag
from tilec.interp.dtypes import f8_values, round_bf16, round_tf32
from tilec.interp.errors import OpError
from tilec.interp.lane_memory import GLOBAL, SHARED, Ptr, check_write, read, write
from tilec.interp.lane_values import LANE_IDS, from_bytes, from_u32, round_to, signed, sizeof, to_bytes, u32
from tilec.layout import MMA_ATOMS
from tilec.layout.atoms import MMAAtom
from tilec.layout.tv import TVLayout

_G, _Q = LANE_IDS // 4, LANE_IDS % 4
_PER_REGISTER = {"f16": 2, "bf16": 2, "tf32": 1, "f32": 1}


# -- mma tables --------------------------------------------------------------------


def _table(tv: TVLayout) -> tuple[np.ndarray, np.ndarray]:
    """``rows[v, t], cols[v, t]``: the tile coordinate of thread ``t``'s value ``v``."""
    rows = np.zeros((tv.num_values, tv.num_threads), dtype=np.int64)
    cols = np.zeros_like(rows)
    for t in range(tv.num_threads):
        for v in range(tv.num_values):
            r, c = tv.coord(t, v)
            rows[v, t], cols[v, t] = r, c
    return rows, cols


@lru_cache(maxsize=None)
def mma_tables(name: str) -> tuple[MMAAtom, tuple, tuple, tuple]:
    """The atom and its A (m, k), B (n, k) and C (m, n) tables."""
    atom = MMA_ATOMS[name]
    return atom, _table(atom.a), _table(atom.b), _table(atom.c)


def _operand_values(regs: tuple, kind: str) -> np.ndarray:
    """Registers (each ``(32,)``) → values ``(num_values, 32)`` in float64, value ``v`` = half ``v % 2`` of ``v // 2``."""
    if kind == "f32":
        return np.stack([np.asarray(r, dtype=np.float64) for r in regs])
    if kind == "s32":
        return np.stack([np.asarray(r).astype(np.int64) for r in regs])
    bits = np.stack([u32(r) for r in regs])  # (regs, 32)
    if kind in ("s8", "e4m3", "e5m2"):  # value v = byte v % 4 of register v // 4
        quads = np.stack([(bits >> np.uint32(8 * j)) & np.uint32(0xFF) for j in range(4)], axis=1)
        quads = quads.reshape(-1, bits.shape[1]).astype(np.uint8)
        if kind != "s8":  # 8-bit floats, exact in float64
            return f8_values(quads, "f8E4M3FN" if kind == "e4m3" else "f8E5M2")
        return quads.view(np.int8).astype(np.int64)
    if kind == "tf32":
        return (bits & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    halves = np.stack([bits & np.uint32(0xFFFF), bits >> np.uint32(16)], axis=1).reshape(-1, bits.shape[1])
    if kind == "f16":
        return halves.astype(np.uint16).view(np.float16).astype(np.float64)
    return (halves << np.uint32(16)).view(np.float32).astype(np.float64)  # bf16


def mma(name: str, a: tuple, b: tuple, c: tuple) -> tuple[np.ndarray, ...]:
    """One warp's ``frag.mma`` on its lane registers: the D registers, each ``(32,)`` f32."""
    atom, (am, ak), (bn, bk), (cm, cn) = mma_tables(name)
    if atom.threads == 1:  # fma_f32: every lane on its own
        (x,), (y,), (z,) = (_operand_values(v, "f32") for v in (a, b, c))
        return (round_to(x * y + z, _F32),)
    m, n, k = atom.shape_mnk
    if atom.c_type == "s32":  # exact integer products, the i32 sums wrapping
        A, B, C = np.zeros((m, k), np.int64), np.zeros((n, k), np.int64), np.zeros((m, n), np.int64)
        A[am, ak] = _operand_values(a, atom.a_type)
        B[bn, bk] = _operand_values(b, atom.b_type)
        C[cm, cn] = _operand_values(c, "s32")
        D = (A @ B.T + C + (1 << 31)) % (1 << 32) - (1 << 31)
        return tuple(D[cm[v], cn[v]].astype(np.int32) for v in range(cm.shape[0]))
    A = np.zeros((m, k))
    B = np.zeros((n, k))
    C = np.zeros((m, n))
    A[am, ak] = _operand_values(a, atom.a_type)
    B[bn, bk] = _operand_values(b, atom.b_type)
    C[cm, cn] = _operand_values(c, "f32")
    D = A @ B.T + C
    return tuple(round_to(D[cm[v], cn[v]], _F32) for v in range(cm.shape[0]))


# -- conversions ---------------------------------------------------------------------


def pack_halves(lo: np.ndarray, hi: np.ndarray, kind: str) -> np.ndarray:
    """``cvt.rn.{f16x2,bf16x2}.f32``: the i32 lane value with ``lo`` in bits 0..15."""

    def half(x):
        x = np.asarray(x, dtype=np.float32)
        if kind == "f16x2":
            bits = x.astype(np.float16).view(np.uint16).astype(np.uint32)
        else:
            bits = round_bf16(x).view(np.uint32) >> np.uint32(16)
        return np.where(np.isnan(x), np.uint32(0x7FFF), bits).astype(np.uint32)

    return from_u32(half(lo) | (half(hi) << np.uint32(16)))


def tf32_bits(x: np.ndarray) -> np.ndarray:
    """``cvt.rna.tf32.f32``: the i32 lane value of ``x`` rounded to tf32 (ties away from zero, NaN as
    0x7FFFFFFF)."""
    x = np.asarray(x, dtype=np.float32)
    return from_u32(np.where(np.isnan(x), 0x7FFFFFFF, round_tf32(x).view(np.uint32).astype(np.uint64)))


def _fmax(x, y, largest: bool):
    x, y = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
    out = np.fmax(x, y) if largest else np.fmin(x, y)
    zeros = (x == 0) & (y == 0)
    if np.any(zeros):
        neg = (np.signbit(x) & np.signbit(y)) if largest else (np.signbit(x) | np.signbit(y))
        out = np.where(zeros, np.where(neg, np.float32(-0.0), np.float32(0.0)), out)
    return out.astype(np.float32)


# -- the ops ---------------------------------------------------------------------------


def expect_space(ptr: Any, space: int, what: str) -> Ptr:
    """``ptr`` if it points into memory of ``space`` (GLOBAL or SHARED), else an OpError naming ``what``."""
    if not isinstance(ptr, Ptr):
        raise OpError(f"{what} is not a pointer: {type(ptr).__name__}")
    if ptr.memory.space != space:
        name = {GLOBAL: "global", SHARED: "shared"}[space]
        raise OpError(f"{what} must point into {name} memory, but points into {ptr.memory.name}")
    return ptr


@register_impls
@dataclass
class FragFunctions(InterpreterFunctions):
    """``frag`` ops for one warp; ``state`` is its :class:`~tilec.interp.lanes.LaneState`."""

    state: Any = field(default=None)

    @impl(frag.SharedOp)
    def run_shared(self, interpreter: Interpreter, op: frag.SharedOp, args: PythonValues):
        return (Ptr.base(self.state.shared.get(op)),)

    @impl(frag.LdMatrixOp)
    def run_ldmatrix(self, interpreter, op: frag.LdMatrixOp, args):
        self.state.require_all_lanes()
        num, trans = op.num.value.data, op.trans is not None
        ptr = expect_space(args[0], SHARED, "the address")
        rows = read(ptr, 16, LANE_IDS < 8 * num, align=16)[: 8 * num]
        m = rows.view(np.uint16).reshape(num, 8, 8).astype(np.uint32)  # [matrix, row, column]
        if trans:
            lo, hi = m[:, 2 * _Q, _G], m[:, 2 * _Q + 1, _G]
        else:
            lo, hi = m[:, _G, 2 * _Q], m[:, _G, 2 * _Q + 1]
        regs = lo | (hi << np.uint32(16))
        return tuple(from_u32(r) for r in regs)

    @impl(frag.MmaOp)
    def run_mma(self, interpreter, op: frag.MmaOp, args):
        atom = op.atom.data
        if atom.name not in MMA_ATOMS:
            raise OpError(f"no semantics for the MMA atom {atom.name}")
        if atom.threads > 1:
            self.state.require_all_lanes()
        na, nb = len(op.a), len(op.b)
        return mma(atom.name, tuple(args[:na]), tuple(args[na : na + nb]), tuple(args[na + nb :]))

    @impl(frag.CpAsyncOp)
    def run_cp_async(self, interpreter, op: frag.CpAsyncOp, args):
        n = op.bytes.value.data
        dst = expect_space(args[0], SHARED, "the destination")
        src = expect_space(args[1], GLOBAL, "the source")
        lanes = self.state.mask.copy()
        counts = None
        if op.ignore_src is not None:
            counts = np.where(np.asarray(args[2]).astype(bool), 0, n)
        elif op.src_bytes is not None:
            counts = signed(np.asarray(args[2]), 32)
            bad = lanes & ((counts < 0) | (counts > n))
            if bad.any():
                lane = int(np.flatnonzero(bad)[0])
                raise OpError(f"lane {lane}: src_bytes = {int(counts[lane])} must be between 0 and the copy size {n}")
        data = read(src, n, lanes, align=n, counts=counts)
        check_write(dst, n, lanes, align=n)
        dst = Ptr(dst.memory, dst.offsets.copy())
        self.state.async_groups.issue(lambda: write(dst, data, lanes, align=n))
        return ()

    @impl(frag.CpAsyncCommitOp)
    def run_cp_async_commit(self, interpreter, op, args):
        self.state.require_converged()
        self.state.async_groups.commit()
        return ()

    @impl(frag.CpAsyncWaitOp)
    def run_cp_async_wait(self, interpreter, op: frag.CpAsyncWaitOp, args):
        self.state.require_converged()
        self.state.async_groups.wait(op.pending.value.data)
        return ()

    def _lanes(self, args, first_pred: int) -> np.ndarray:
        lanes = self.state.mask
        if len(args) > first_pred:
            lanes = lanes & np.asarray(args[first_pred], dtype=bool)
        return lanes

    @impl(frag.LoadOp)
    def run_load(self, interpreter, op: frag.LoadOp, args):
        t = op.result.type
        n = sizeof(t)
        data = read(args[0], n, self._lanes(args, 1), align=n)
        return (from_bytes(data, t),)

    @impl(frag.StoreOp)
    def run_store(self, interpreter, op: frag.StoreOp, args):
        t = op.value.type
        n = sizeof(t)
        write(args[1], to_bytes(args[0], t), self._lanes(args, 2), align=n)
        return ()

    @impl(frag.RedOp)
    def run_red(self, interpreter, op: frag.RedOp, args):
        """Lane by lane, in lane order, each active lane's element read, combined and written back:
        lanes that name one address all count, as the GPU's atomic reductions do."""
        t = op.value.type
        n = sizeof(t)
        lanes = self._lanes(args, 2)
        check_write(args[1], n, lanes, align=n)
        value = np.asarray(args[0])
        unsigned = op.kind.data in ("umax", "umin")
        signed_t, unsigned_t = (np.int32, np.uint32) if n == 4 else (np.int64, np.uint64)
        if unsigned:  # the integer's bits read unsigned
            value = value.astype(signed_t).view(unsigned_t)
        combine = {"add": np.add, "max": np.maximum, "min": np.minimum, "umax": np.maximum,
                   "umin": np.minimum, "and": np.bitwise_and, "or": np.bitwise_or,
                   "xor": np.bitwise_xor}[op.kind.data]
        for lane in np.flatnonzero(lanes):
            one = np.zeros_like(lanes)
            one[lane] = True
            old = from_bytes(read(args[1], n, one, align=n), t)
            if unsigned:
                old = np.asarray(old).astype(signed_t).view(unsigned_t)
                new = combine(old, value).view(signed_t)
            else:
                with np.errstate(over="ignore"):
                    new = combine(old, value).astype(old.dtype)  # f32 in f32; integers wrap
            write(args[1], to_bytes(new, t), one, align=n)
        return ()

    @impl(frag.AtomOp)
    def run_atom(self, interpreter, op: frag.AtomOp, args):
        """Lane by lane, in lane order, as :meth:`run_red`, each active lane getting the element's value
        from before its own operation (0 where inactive); f32 ``cas`` compares the bits."""
        t = op.value.type
        n = sizeof(t)
        kind = op.kind.data
        cmp = np.asarray(args[2]) if op.cmp is not None else None
        lanes = self._lanes(args, 3 if op.cmp is not None else 2)
        check_write(args[1], n, lanes, align=n)
        value = np.asarray(args[0])
        result = np.zeros_like(value)
        for lane in np.flatnonzero(lanes):
            one = np.zeros_like(lanes)
            one[lane] = True
            old = np.asarray(from_bytes(read(args[1], n, one, align=n), t))
            result[lane] = old[lane]
            new = old.copy()
            new[lane] = _atom_value(kind, old[lane], value[lane], None if cmp is None else cmp[lane])
            write(args[1], to_bytes(new, t), one, align=n)
        return (result,)

    @impl(frag.ShflOp)
    def run_shfl(self, interpreter, op: frag.ShflOp, args):
        self.state.require_all_lanes()
        value, b = np.asarray(args[0]), np.asarray(args[1], dtype=np.int64) & 31
        src = b if op.kind.data == "idx" else LANE_IDS ^ b
        return (value[src],)

    @impl(frag.PackOp)
    def run_pack(self, interpreter, op: frag.PackOp, args):
        return (pack_halves(args[0], args[1], op.kind.data),)

    @impl(frag.ToTF32Op)
    def run_tf32(self, interpreter, op, args):
        return (tf32_bits(args[0]),)

    @impl(frag.Ex2Op)
    def run_ex2(self, interpreter, op, args):
        return (round_to(np.exp2(np.asarray(args[0], dtype=np.float64)), _F32),)

    @impl(frag.FMaxOp)
    def run_fmax(self, interpreter, op, args):
        return (_fmax(args[0], args[1], True),)

    @impl(frag.FMinOp)
    def run_fmin(self, interpreter, op, args):
        return (_fmax(args[0], args[1], False),)


def _atom_value(kind: str, old, value, cmp):
    """What ``frag.atom`` of ``kind`` leaves in an element holding ``old`` (one lane's numpy scalars)."""
    dtype = np.asarray(old).dtype
    width = 8 * dtype.itemsize  # 32 or 64 bits
    if kind == "cas":
        return value if _bits(old) == _bits(cmp) else old
    if kind == "exch":
        return value
    if kind in ("umax", "umin"):  # the bits read unsigned, the result as the signed integer of its bits
        r = (max if kind == "umax" else min)(_bits(old), _bits(value))
        return np.asarray(r - (1 << width) if r >= 1 << (width - 1) else r).astype(dtype)
    if dtype.kind == "f":
        combine = {"add": np.add, "max": np.maximum, "min": np.minimum}[kind]
        return combine(old, value).astype(dtype)
    a, b = int(old), int(value)  # Python integers: no overflow before the wrap
    r = {"add": a + b, "max": max(a, b), "min": min(a, b), "and": a & b, "or": a | b, "xor": a ^ b}[kind]
    r &= (1 << width) - 1  # wraps in its width
    return np.asarray(r - (1 << width) if r >= 1 << (width - 1) else r).astype(dtype)


def _bits(x) -> int:
    """The bits of an f32, i32, f64 or i64 lane value, as an unsigned int."""
    a = np.asarray(x)
    if a.dtype.kind == "f":
        return int(a.view(np.uint32 if a.dtype.itemsize == 4 else np.uint64))
    return int(a) & ((1 << (8 * a.dtype.itemsize)) - 1)
