"""The GPU's tensor-core and copy instructions as data: their TV layouts.

Each atom says which element of its tile every lane holds, in the column-major
coordinates CuTe uses: an MMA's ``A`` is ``M x K``, ``B`` is ``N x K``, ``C`` is
``M x N``. These are the facts register allocation builds fragments from; the
tests check each against the PTX ISA's fragment tables written as formulas.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.layout.parse import parse_layout
from tilec.layout.tv import TVLayout


@dataclass(frozen=True)
class MMAAtom:
    """One warp-wide (or one-thread) multiply-accumulate instruction."""

    name: str
    instruction: str
    shape_mnk: tuple[int, int, int]
    a_type: str
    b_type: str
    c_type: str
    a: TVLayout
    b: TVLayout
    c: TVLayout

    @property
    def threads(self) -> int:
        return self.c.num_threads


@dataclass(frozen=True)
class CopyAtom:
    """One data-movement instruction: how lanes map to the source and destination tile.

    ``elem_bits`` is the element width the layouts count in.
    """

    name: str
    instruction: str
    elem_bits: int
    src: TVLayout
    dst: TVLayout

    @property
    def threads(self) -> int:
        return self.dst.num_threads


def _tv(text: str, *tile: int) -> TVLayout:
    return TVLayout(parse_layout(text), tile)


def _mma(name, instruction, mnk, types, a, b, c) -> MMAAtom:
    m, n, k = mnk
    return MMAAtom(name, instruction, mnk, *types, _tv(a, m, k), _tv(b, n, k), _tv(c, m, n))


# Lane l = q + 4*g with q = l % 4 and g = l / 4 in all the sm80 fragments below.
_C_16x8 = "((4,8),(2,2)):((32,1),(16,8))"  # (g, 2q+{0,1}), (g+8, 2q+{0,1})

MMA_M16N8K16_F16 = _mma(
    "mma_m16n8k16_f16",
    "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
    (16, 8, 16),
    ("f16", "f16", "f32"),
    "((4,8),(2,2,2)):((32,1),(16,8,128))",
    "((4,8),(2,2)):((16,1),(8,64))",
    _C_16x8,
)

MMA_M16N8K16_BF16 = _mma(
    "mma_m16n8k16_bf16",
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
    (16, 8, 16),
    ("bf16", "bf16", "f32"),
    "((4,8),(2,2,2)):((32,1),(16,8,128))",
    "((4,8),(2,2)):((16,1),(8,64))",
    _C_16x8,
)

MMA_M16N8K8_TF32 = _mma(
    "mma_m16n8k8_tf32",
    "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
    (16, 8, 8),
    ("tf32", "tf32", "f32"),
    "((4,8),(2,2)):((16,1),(8,64))",
    "((4,8),2):((8,1),32)",
    _C_16x8,
)

# 8-bit integers: four a register along K (A value (k % 4, m / 8, k / 16); B value (k % 4, k / 16)), s32 sums.
MMA_M16N8K32_S8 = _mma(
    "mma_m16n8k32_s8",
    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
    (16, 8, 32),
    ("s8", "s8", "s32"),
    "((4,8),(4,2,2)):((64,1),(16,8,256))",
    "((4,8),(4,2)):((32,1),(8,128))",
    _C_16x8,
)


def _mma_m16n8k32_f8(a_type: str, b_type: str) -> MMAAtom:
    """8-bit floats (``e4m3``, ``e5m2``, sm_89 on; A and B may differ): the int8 atom's fragments, f32 sums."""
    suffix = a_type if a_type == b_type else f"{a_type}_{b_type}"
    return _mma(f"mma_m16n8k32_{suffix}", f"mma.sync.aligned.m16n8k32.row.col.f32.{a_type}.{b_type}.f32", (16, 8, 32),
                (a_type, b_type, "f32"), "((4,8),(4,2,2)):((64,1),(16,8,256))", "((4,8),(4,2)):((32,1),(8,128))", _C_16x8)


MMA_M16N8K32_F8 = tuple(_mma_m16n8k32_f8(a, b) for a in ("e4m3", "e5m2") for b in ("e4m3", "e5m2"))
"""The four FP8 atoms (e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3, e5m2 x e5m2)."""

# The SIMT atom: one thread, one fused multiply-add.
FMA_F32 = _mma("fma_f32", "fma.rn.f32", (1, 1, 1), ("f32", "f32", "f32"), "(1,1):(0,0)", "(1,1):(0,0)", "(1,1):(0,0)")


def ldmatrix(num: int, trans: bool = False) -> CopyAtom:
    """``ldmatrix.sync.aligned.m8n8.x{num}[.trans].shared.b16``.

    The tile is ``num`` 8x8 b16 matrices side by side (8 rows, 8*num columns).
    Lane ``8*i + r`` gives the address of row ``r`` of matrix ``i``; lanes past
    ``8*num`` give none (stride 0). Register ``i`` of lane ``l`` receives matrix
    ``i``'s row ``l/4``, columns ``2(l%4)`` and ``+1`` (with ``.trans``: column
    ``l/4``, rows ``2(l%4)`` and ``+1``).
    """
    if num not in (1, 2, 4):
        raise ValueError(f"ldmatrix: .x{num} does not exist; expected x1, x2 or x4")
    idle = 4 // num
    thr = "(8,4)" if num == 4 else f"(8,{num},{idle})"
    thr_stride = "(1,64)" if num == 4 else "(1,64,0)"
    src = f"({thr},8):({thr_stride},8)"
    dst = "((4,8),(2,{n})):((2,8),(1,64))" if trans else "((4,8),(2,{n})):((16,1),(8,64))"
    suffix = ".trans" if trans else ""
    return CopyAtom(
        f"ldmatrix_x{num}{'_trans' if trans else ''}",
        f"ldmatrix.sync.aligned.m8n8.x{num}{suffix}.shared.b16",
        16,
        _tv(src, 8, 8 * num),
        _tv(dst.format(n=num), 8, 8 * num),
    )


def cp_async(nbytes: int, elem_bits: int = 16) -> CopyAtom:
    """``cp.async`` of ``nbytes`` (4, 8 or 16) by one thread: contiguous elements."""
    if nbytes not in (4, 8, 16):
        raise ValueError(f"cp.async: copies 4, 8 or 16 bytes, not {nbytes}")
    if (8 * nbytes) % elem_bits:
        raise ValueError(f"cp.async: {nbytes} bytes is not a whole number of {elem_bits}-bit elements")
    n = 8 * nbytes // elem_bits
    layout = f"(1,{n}):(0,1)"
    kind = "cg" if nbytes == 16 else "ca"
    return CopyAtom(
        f"cp_async_{nbytes}_b{elem_bits}",
        f"cp.async.{kind}.shared.global",
        elem_bits,
        _tv(layout, n),
        _tv(layout, n),
    )


MMA_ATOMS: dict[str, MMAAtom] = {
    atom.name: atom for atom in (MMA_M16N8K16_F16, MMA_M16N8K16_BF16, MMA_M16N8K8_TF32, MMA_M16N8K32_S8,
                                 *MMA_M16N8K32_F8, FMA_F32)
}

COPY_ATOMS: dict[str, CopyAtom] = {
    atom.name: atom
    for atom in (
        *(ldmatrix(n, t) for n in (1, 2, 4) for t in (False, True)),
        *(cp_async(b, e) for b in (4, 8, 16) for e in (16, 32) if (8 * b) % e == 0),
    )
}


def mma_atom(name: str) -> MMAAtom:
    try:
        return MMA_ATOMS[name]
    except KeyError:
        raise ValueError(f"unknown MMA atom {name!r}; known: {', '.join(sorted(MMA_ATOMS))}") from None


def copy_atom(name: str) -> CopyAtom:
    try:
        return COPY_ATOMS[name]
    except KeyError:
        raise ValueError(f"unknown copy atom {name!r}; known: {', '.join(sorted(COPY_ATOMS))}") from None
