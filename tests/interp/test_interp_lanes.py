"""Fragment-level IR on the CPU, lane by lane (tilec.interp.lanes).

The PTX facts are written out here as formulas (g = lane / 4, q = lane % 4),
independently of the interpreter, which builds its mma maps from the TV
layouts of ``tilec.layout.MMA_ATOMS``; ldmatrix is checked against the
``tilec.layout.atoms.ldmatrix`` copy atoms.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from interp_util import assert_close

from tilec.interp import TileInterpreterError, is_fragment_level, parse_module, round_bf16, run, run_fragment, run_text
from tilec.layout.atoms import ldmatrix as ldmatrix_atom

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kernels"
LANES = np.arange(32)
G, Q = LANES // 4, LANES % 4


def launch(smem: int, block: int = 32, grid: str = "1, 1, 1") -> str:
    return f"attributes {{tile.launch = #tile.launch<grid = [{grid}], block = [{block}, 1, 1], smem = {smem}>}}"


LANE = """
  %lane_index = tile.lane_id
  %lane = arith.index_cast %lane_index : index to i32"""


def run_lanes(text: str, name: str, *args, **options):
    """Run lane by lane even without frag/llvm ops (run() gives such functions to the tile interpreter)."""
    return run_fragment(parse_module(text), name, args, **options)


def bits_f32(bits) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


def u32(x) -> np.ndarray:
    return np.asarray(x).astype(np.int64).astype(np.uint32)


# ------------------------------------------------------------------ the sample kernels


def _bf16_bits(x: np.ndarray) -> np.ndarray:
    return (round_bf16(x.astype(np.float32)).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("case", ["f16", "bf16_bits", "bf16_f32", "tf32"])
def test_sample_kernel_computes_the_product(case: str, rng) -> None:
    kernel = {"f16": "mma_f16", "bf16_bits": "mma_bf16", "bf16_f32": "mma_bf16", "tf32": "mma_tf32"}[case]
    module = parse_module((EXAMPLES / f"{kernel}.mlir").read_text())
    assert is_fragment_level(module, module.ops.first)
    d = np.full((16, 8), np.nan, np.float32)  # poisoned
    if case == "f16":
        a = rng.standard_normal((16, 16)).astype(np.float16)
        b = rng.standard_normal((16, 8)).astype(np.float16)
        run(module, kernel, a, np.ascontiguousarray(b.T), d)  # B given column-major
        ref, tol = a.astype(np.float64) @ b.astype(np.float64), 1e-3
    elif case == "bf16_bits":
        a, b = _bf16_bits(rng.standard_normal((16, 16))), _bf16_bits(rng.standard_normal((16, 8)))
        run(module, kernel, a, b, d)  # uint16 arrays of bf16 bits
        wide = lambda x: (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
        ref, tol = wide(a) @ wide(b), 1e-3
    elif case == "bf16_f32":
        a, b = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)
        a0, b0 = a.copy(), b.copy()
        run(module, kernel, a, b, d)  # float32 values, rounded to bf16 on the way in
        assert np.array_equal(a, a0) and np.array_equal(b, b0), "inputs the kernel only reads stay as given"
        ref, tol = round_bf16(a).astype(np.float64) @ round_bf16(b).astype(np.float64), 1e-3
    else:
        a, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
        run(module, kernel, a, b, d)
        ref, tol = a.astype(np.float64) @ b.astype(np.float64), 1e-2
        tf32 = lambda x: bits_f32((x.view(np.uint32).astype(np.uint64) + 0x1000) & 0xFFFFE000)  # noqa: E731
        exact = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64)
        assert_close(d, exact, 1e-6, rng, "tf32 product of rounded inputs")
    assert_close(d, ref, tol, rng, kernel)
    assert_close(d, ref, 1e-6 if case != "tf32" else tol, rng, f"{kernel} (float64 accumulation)")


def test_bf16_float32_output_is_copied_back(rng) -> None:
    text = f"""
func.func @k(%x: !llvm.ptr<1> {{tile.dtype = bf16}}, %y: !llvm.ptr<1> {{tile.dtype = bf16, tile.output}}) {launch(0)} {{{LANE}
  %px = llvm.getelementptr %x[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16
  %v = frag.load %px : !llvm.ptr<1> -> bf16
  %w = arith.addf %v, %v : bf16
  %py = llvm.getelementptr %y[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, bf16
  frag.store %w, %py : bf16, !llvm.ptr<1>
  func.return
}}"""
    x = rng.standard_normal(32).astype(np.float32)
    # 1e30 is no bf16 value, and far from any 2x of a normal sample (0.1 was not: x = 0.05008 doubled
    # is its bf16 rounding, and such an element read as untouched): elements left alone stay as given
    y = np.full(40, 1e30, np.float32)
    run_text(text, "k", x, y)
    assert np.array_equal(y[:32], 2 * round_bf16(x)) and np.all(y[32:] == np.float32(1e30))


# ------------------------------------------------------------------ ldmatrix


def ldmatrix_kernel(num: int, trans: bool) -> str:
    regs = ", ".join(f"%r{i}" for i in range(num))
    types = ", ".join(["i32"] * num)
    stores = "\n".join(
        f"""  %c{i} = arith.constant {i} : i32
  %o{i} = arith.addi %ob, %c{i} : i32
  %q{i} = llvm.getelementptr %out[%o{i}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  frag.store %r{i}, %q{i} : i32, !llvm.ptr<1>"""
        for i in range(num)
    )
    return f"""
func.func @ld(%src: !llvm.ptr<1> {{tile.dtype = i32}}, %offs: !llvm.ptr<1> {{tile.dtype = i32}},
              %out: !llvm.ptr<1> {{tile.dtype = i32, tile.output}}) {launch(1024)} {{
  %s = frag.shared "s", 1024, align 128 : !llvm.ptr<3>{LANE}
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i2 = arith.constant 2 : index
  %c32 = arith.constant 32 : i32
  scf.for %i = %i0 to %i2 step %i1 {{
    %ii = arith.index_cast %i : index to i32
    %base = arith.muli %ii, %c32 : i32
    %chunk = arith.addi %base, %lane : i32
    %g = llvm.getelementptr %src[%chunk] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
    %v = frag.load %g : !llvm.ptr<1> -> vector<4xi32>
    %sp = llvm.getelementptr %s[%chunk] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
    frag.store %v, %sp : vector<4xi32>, !llvm.ptr<3>
  }}
  tile.barrier
  %op = llvm.getelementptr %offs[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %o = frag.load %op : !llvm.ptr<1> -> i32
  %p = llvm.getelementptr %s[%o] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  {regs} = frag.ldmatrix %p x {num}{" trans" if trans else ""} : !llvm.ptr<3> -> {types}
  %cn = arith.constant {num} : i32
  %ob = arith.muli %lane, %cn : i32
{stores}
  func.return
}}"""


@pytest.mark.parametrize("trans", [False, True], ids=["plain", "trans"])
@pytest.mark.parametrize("num", [1, 2, 4])
def test_ldmatrix_matches_the_copy_atom(num: int, trans: bool, rng) -> None:
    src = rng.integers(0, 1 << 16, 512, dtype=np.uint32).astype(np.uint16).view(np.int16).copy()
    src32 = src.view(np.int32)
    offs = (rng.choice(64, 32, replace=False) * 16).astype(np.int32)
    offs[8 * num :] = 1 << 20  # lanes past 8 * num give no address: never read
    out = np.zeros(32 * num, np.int32)
    run_text(ldmatrix_kernel(num, trans), "ld", src32, offs, out)
    halves = src.view(np.uint16)
    atom = ldmatrix_atom(num, trans)
    want = np.zeros((32, num), np.uint32)
    for lane in range(32):
        for i in range(num):
            word = 0
            for h in range(2):
                row, col = atom.dst.coord(lane, h + 2 * i)
                t, v = min(atom.src.owners((row, col)))  # the lane that gave this row's address
                word |= int(halves[(offs[t] + 2 * v) // 2]) << (16 * h)
            want[lane, i] = word
    assert np.array_equal(out.view(np.uint32).reshape(32, num), want)


# ------------------------------------------------------------------ mma.sync, lane registers from PTX formulas

MMA = """
func.func @m({params}) -> ({results}) {{
  {outs} = frag.mma <{atom}> ({a}) ({b}) ({c}) : ({at}) ({bt}) -> {results}
  func.return {outs} : {results}
}}"""


def mma_text(atom: str, na: int, nb: int, nc: int, reg: str = "i32") -> str:
    a = [f"%a{i}" for i in range(na)]
    b = [f"%b{i}" for i in range(nb)]
    c = [f"%c{i}" for i in range(nc)]
    params = ", ".join([f"{x}: {reg}" for x in a + b] + [f"{x}: f32" for x in c])
    return MMA.format(
        params=params, results=", ".join(["f32"] * nc), outs=", ".join(f"%d{i}" for i in range(nc)), atom=atom,
        a=", ".join(a), b=", ".join(b), c=", ".join(c), at=", ".join([reg] * na), bt=", ".join([reg] * nb),
    )


def c_fragment(C: np.ndarray) -> list[np.ndarray]:
    """c0..c3 = (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1)."""
    return [C[G + 8 * (r >> 1), 2 * Q + (r & 1)].astype(np.float32) for r in range(4)]


def d_matrix(d: tuple) -> np.ndarray:
    D = np.zeros((16, 8))
    for r in range(4):
        D[G + 8 * (r >> 1), 2 * Q + (r & 1)] = d[r]
    return D


@pytest.mark.parametrize("kind", ["f16", "bf16"])
def test_mma_m16n8k16_fragments(kind: str, rng) -> None:
    A, B = rng.standard_normal((16, 16)), rng.standard_normal((16, 8))
    C = rng.standard_normal((16, 8)).astype(np.float32)
    if kind == "f16":
        A, B = A.astype(np.float16), B.astype(np.float16)
        bits = lambda x: x.view(np.uint16).astype(np.uint32)  # noqa: E731
    else:
        A, B = round_bf16(A.astype(np.float32)), round_bf16(B.astype(np.float32))
        bits = lambda x: x.view(np.uint32) >> 16  # noqa: E731
    pair = lambda lo, hi: bits(lo) | (bits(hi) << 16)  # noqa: E731
    # a_r: rows g + 8 (r & 1), columns 2q + h + 8 (r >> 1); b_r: k = 2q + h + 8 r, n = g
    a = [pair(A[G + 8 * (r & 1), 2 * Q + 8 * (r >> 1)], A[G + 8 * (r & 1), 2 * Q + 1 + 8 * (r >> 1)]) for r in range(4)]
    b = [pair(B[2 * Q + 8 * r, G], B[2 * Q + 1 + 8 * r, G]) for r in range(2)]
    d = run_text(mma_text(f"mma_m16n8k16_{kind}", 4, 2, 4), "m", *a, *b, *c_fragment(C))
    ref = A.astype(np.float64) @ B.astype(np.float64) + C
    assert_close(d_matrix(d), ref, 1e-6, rng, f"mma {kind}")


def test_mma_m16n8k8_tf32_truncates_the_low_bits(rng) -> None:
    A = rng.standard_normal((16, 8)).astype(np.float32)  # full f32 bits: the tensor core drops the low 13
    B = rng.standard_normal((8, 8)).astype(np.float32)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    a = [A[G + 8 * (r & 1), Q + 4 * (r >> 1)].view(np.uint32) for r in range(4)]
    b = [B[Q + 4 * r, G].view(np.uint32) for r in range(2)]
    d = run_text(mma_text("mma_m16n8k8_tf32", 4, 2, 4), "m", *a, *b, *c_fragment(C))
    trunc = lambda x: bits_f32(x.view(np.uint32) & 0xFFFFE000).astype(np.float64)  # noqa: E731
    assert_close(d_matrix(d), trunc(A) @ trunc(B) + C, 1e-6, rng, "mma tf32")


def test_fma_f32_atom(rng) -> None:
    x, y, z = (rng.standard_normal(32).astype(np.float32) for _ in range(3))
    (d,) = run_text(mma_text("fma_f32", 1, 1, 1, reg="f32"), "m", x, y, z)
    assert np.array_equal(d, (x.astype(np.float64) * y + z).astype(np.float32))


# ------------------------------------------------------------------ per-lane ops

UNARY = """
func.func @f(%x: f32, %y: f32) -> (i32, i32, i32, f32, f32, f32) {
  %t = frag.tf32 %x
  %h = frag.pack "f16x2" %x, %y
  %b = frag.pack "bf16x2" %x, %y
  %e = frag.ex2 %x
  %mx = frag.fmax %x, %y
  %mn = frag.fmin %x, %y
  func.return %t, %h, %b, %e, %mx, %mn : i32, i32, i32, f32, f32, f32
}"""


def _run_unary(x_bits, y=None):
    x = bits_f32(np.resize(np.asarray(x_bits, np.uint32), 32))
    y = np.ones(32, np.float32) if y is None else np.resize(np.asarray(y, np.float32), 32)
    return x, y, run_text(UNARY, "f", x, y)


def test_tf32_rounds_to_nearest_ties_away() -> None:
    cases = {
        0x3F800000: 0x3F800000,  # 1.0
        0x3F801000: 0x3F802000,  # 1 + 2^-11: a tie, away from zero (nearest-even would keep 1.0)
        0x3F800FFF: 0x3F800000,  # just below the tie
        0x3F803000: 0x3F804000,  # a tie with an odd kept bit
        0xBF801000: 0xBF802000,  # negative tie: away from zero
        0x7F7FFFFF: 0x7F800000,  # the largest f32 rounds up to infinity
        0x7F800000: 0x7F800000,  # inf
        0xFF800000: 0xFF800000,  # -inf
        0x7FC00001: 0x7FFFFFFF,  # NaN: canonical
        0x00001000: 0x00002000,  # subnormal tie
        0x00000FFF: 0x00000000,
        0x80000000: 0x80000000,  # -0
    }
    _, _, (t, *_) = _run_unary(list(cases))
    assert [hex(v) for v in u32(t)[: len(cases)]] == [hex(v) for v in cases.values()]


def test_pack_bit_patterns() -> None:
    lo = bits_f32([0x3F800000, 0x3F801000, 0x3F803000, 0x477FF000, 0x322BCC77, 0x7FC00000, 0x3F808000, 0x3F818000])
    hi = np.float32([-2.0, 0.5, 65504.0, 1.0, -0.0, 3.0, 1.0, 1.0])
    _, _, (_, h, b, *_) = _run_unary(lo.view(np.uint32), hi)
    f16_lo = [0x3C00, 0x3C00, 0x3C02, 0x7C00, 0x0000, 0x7FFF, 0x3C04, 0x3C0C]  # ties to even; 65520 → inf; 1e-8 → 0
    f16_hi = [0xC000, 0x3800, 0x7BFF, 0x3C00, 0x8000, 0x4200, 0x3C00, 0x3C00]
    bf_lo = [0x3F80, 0x3F80, 0x3F80, 0x4780, 0x322C, 0x7FFF, 0x3F80, 0x3F82]  # 0x3F808000 tie → even 0x3F80
    bf_hi = [0xC000, 0x3F00, 0x4780, 0x3F80, 0x8000, 0x4040, 0x3F80, 0x3F80]
    assert [hex(v) for v in u32(h)[:8]] == [hex(lo_ | hi_ << 16) for lo_, hi_ in zip(f16_lo, f16_hi)]
    assert [hex(v) for v in u32(b)[:8]] == [hex(lo_ | hi_ << 16) for lo_, hi_ in zip(bf_lo, bf_hi)]


def test_ex2_fmax_fmin(rng) -> None:
    x = rng.standard_normal(32).astype(np.float32) * 10
    y = rng.standard_normal(32).astype(np.float32)
    x[0], y[0] = np.nan, 1.0
    x[1], y[1] = -0.0, 0.0
    x[2], y[2] = np.nan, np.nan
    _, _, _, e, mx, mn = run_text(UNARY, "f", x, y)
    assert np.array_equal(e[3:], np.exp2(x[3:].astype(np.float64)).astype(np.float32))
    assert mx[0] == 1.0 and mn[0] == 1.0, "a NaN operand is ignored"
    assert np.isnan(mx[2]) and np.isnan(mn[2])
    assert not np.signbit(mx[1]) and np.signbit(mn[1]), "+0 > -0"
    assert np.array_equal(mx[3:], np.maximum(x[3:], y[3:])) and np.array_equal(mn[3:], np.minimum(x[3:], y[3:]))


SHFL = """
func.func @s(%v: i32, %f: f32, %b: i32) -> (i32, i32, f32) {
  %x = frag.shfl "idx" %v, %b : i32
  %y = frag.shfl "bfly" %v, %b : i32
  %z = frag.shfl "bfly" %f, %b : f32
  func.return %x, %y, %z : i32, i32, f32
}"""


def test_shfl_idx_and_bfly(rng) -> None:
    v = rng.integers(-(1 << 31), 1 << 31, 32)
    f = rng.standard_normal(32).astype(np.float32)
    b = rng.integers(0, 64, 32)  # the lane operand is taken modulo 32
    x, y, z = run_text(SHFL, "s", v, f, b)
    assert np.array_equal(x, v[b % 32])
    assert np.array_equal(y, v[LANES ^ (b % 32)])
    assert np.array_equal(z, f[LANES ^ (b % 32)])


INTS = """
func.func @ints(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i32, i32, i1, i1, i64, i64, i8) {
  %c3 = arith.constant 3 : i32
  %mul = arith.muli %a, %b : i32
  %add = arith.addi %a, %b : i32
  %shru = arith.shrui %a, %c3 : i32
  %shrs = arith.shrsi %a, %c3 : i32
  %div = arith.divsi %a, %b : i32
  %rem = arith.remsi %a, %b : i32
  %divu = arith.divui %a, %b : i32
  %ult = arith.cmpi ult, %a, %b : i32
  %slt = arith.cmpi slt, %a, %b : i32
  %sx = arith.extsi %a : i32 to i64
  %zx = arith.extui %a : i32 to i64
  %tr = arith.trunci %a : i32 to i8
  func.return %mul, %add, %shru, %shrs, %div, %rem, %divu, %ult, %slt, %sx, %zx, %tr
      : i32, i32, i32, i32, i32, i32, i32, i1, i1, i64, i64, i8
}"""


def test_integer_arith_wraps_like_the_gpu(rng) -> None:
    a = rng.integers(-(1 << 31), 1 << 31, 32)
    b = rng.integers(-(1 << 31), 1 << 31, 32)
    b[:8] = rng.integers(-9, 10, 8)
    b[b == 0] = 7
    got = run_lanes(INTS, "ints", a, b)
    s32 = lambda x: ((int(x) + (1 << 31)) % (1 << 32)) - (1 << 31)  # noqa: E731
    u = lambda x: int(x) % (1 << 32)  # noqa: E731
    trunc_div = lambda x, y: abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # noqa: E731
    for lane in range(32):
        x, y = int(a[lane]), int(b[lane])
        want = [
            s32(x * y), s32(x + y), s32(u(x) >> 3), x >> 3, s32(trunc_div(x, y)), s32(x - y * trunc_div(x, y)),
            s32(u(x) // u(y)), u(x) < u(y), x < y, x, u(x), ((x + 128) % 256) - 128,
        ]
        assert [int(g[lane]) for g in got] == [int(w) for w in want], f"lane {lane}: a={x} b={y}"


# ------------------------------------------------------------------ control flow and masks

DIVERGE = f"""
func.func @d(%a: i32, %b: i32) -> i32 {{{LANE}
  %c10 = arith.constant 10 : i32
  %lt = arith.cmpi slt, %lane, %c10 : i32
  %r = scf.if %lt -> (i32) {{
    %x = arith.addi %a, %b : i32
    scf.yield %x : i32
  }} else {{
    %y = arith.muli %a, %b : i32
    scf.yield %y : i32
  }}
  func.return %r : i32
}}"""


def test_divergent_if_merges_results(rng) -> None:
    a, b = rng.integers(-1000, 1000, 32), rng.integers(-1000, 1000, 32)
    (r,) = run_lanes(DIVERGE, "d", a, b)
    assert np.array_equal(r, np.where(LANES < 10, a + b, a * b))


MASKED_STORES = f"""
func.func @k(%out: !llvm.ptr<1> {{tile.dtype = i32}}) {launch(0)} {{{LANE}
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c16 = arith.constant 16 : i32
  %p = llvm.getelementptr %out[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %low = arith.cmpi ult, %lane, %c16 : i32
  scf.if %low {{
    %bit = arith.andi %lane, %c1 : i32
    %even = arith.cmpi ne, %bit, %c1 : i32
    scf.if %even {{
      frag.store %c2, %p : i32, !llvm.ptr<1>
    }} else {{
      frag.store %c1, %p : i32, !llvm.ptr<1>
    }}
  }}
  func.return
}}"""


def test_stores_under_a_lane_mask() -> None:
    out = np.full(32, -5, np.int32)
    run_text(MASKED_STORES, "k", out)
    assert np.array_equal(out, np.where(LANES < 16, np.where(LANES % 2 == 1, 1, 2), -5))


PREDICATED = f"""
func.func @k(%x: !llvm.ptr<1> {{tile.dtype = f32}}, %y: !llvm.ptr<1> {{tile.dtype = f32}}) {launch(0)} {{{LANE}
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c20 = arith.constant 20 : i32
  %in = arith.cmpi ult, %lane, %c20 : i32
  %px = llvm.getelementptr %x[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %v = frag.load %px if %in : !llvm.ptr<1> -> f32
  %bit = arith.andi %lane, %c1 : i32
  %even = arith.cmpi eq, %bit, %c0 : i32
  %py = llvm.getelementptr %y[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  frag.store %v, %py if %even : f32, !llvm.ptr<1>
  func.return
}}"""


def test_predicated_load_and_store(rng) -> None:
    x = rng.standard_normal(20).astype(np.float32)  # lanes 20.. would be out of bounds: predicated off
    y = np.full(32, np.nan, np.float32)
    run_text(PREDICATED, "k", x, y)
    want = np.where(LANES % 2 == 0, np.concatenate([x, np.zeros(12, np.float32)]), np.nan)
    assert np.array_equal(y, want, equal_nan=True)


def test_lane_varying_loop_bound_is_an_error() -> None:
    text = f"""
func.func @k(%out: !llvm.ptr<1>) {launch(0)} {{
  %n = tile.lane_id
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {{
  }}
  func.return
}}"""
    with pytest.raises(TileInterpreterError, match=r"(?s)'scf.for'.*upper bound differs between lanes.*warp-uniform"):
        run_text(text, "k", np.zeros(1, np.int32))


def test_collective_op_under_a_lane_mask_is_an_error() -> None:
    text = f"""
func.func @k(%v: i32) -> i32 {{{LANE}
  %c8 = arith.constant 8 : i32
  %lt = arith.cmpi ult, %lane, %c8 : i32
  %r = scf.if %lt -> (i32) {{
    %s = frag.shfl "bfly" %v, %c8 : i32
    scf.yield %s : i32
  }} else {{
    scf.yield %v : i32
  }}
  func.return %r : i32
}}"""
    with pytest.raises(TileInterpreterError, match=r"(?s)'frag.shfl'.*needs all 32 lanes.*lane\(s\) 8, 9"):
        run_text(text, "k", 1)


# ------------------------------------------------------------------ cp.async

CP_ASYNC = f"""
func.func @k(%src: !llvm.ptr<1> {{tile.dtype = i32}}, %n: !llvm.ptr<1> {{tile.dtype = i32}},
             %before: !llvm.ptr<1> {{tile.dtype = i32}}, %after: !llvm.ptr<1> {{tile.dtype = i32}}) {launch(512)} {{
  %s = frag.shared "s", 512, align 16 : !llvm.ptr<3>{LANE}
  %c16 = arith.constant 16 : i32
  %chunk = arith.muli %lane, %c16 : i32
  %pn = llvm.getelementptr %n[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %nb = frag.load %pn : !llvm.ptr<1> -> i32
  %gs = llvm.getelementptr %src[%chunk] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
  %sd = llvm.getelementptr %s[%chunk] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  frag.cp_async "cg" %sd, %gs, 16, %nb : !llvm.ptr<3>, !llvm.ptr<1>
  frag.cp_async_commit
  %v0 = frag.load %sd : !llvm.ptr<3> -> vector<4xi32>
  %pb = llvm.getelementptr %before[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
  frag.store %v0, %pb : vector<4xi32>, !llvm.ptr<1>
  frag.cp_async_wait 0
  %v1 = frag.load %sd : !llvm.ptr<3> -> vector<4xi32>
  %pa = llvm.getelementptr %after[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
  frag.store %v1, %pa : vector<4xi32>, !llvm.ptr<1>
  func.return
}}"""


@pytest.mark.parametrize("mode", ["deferred", "eager"])
def test_cp_async_zero_fill_and_deferral(mode: str, rng) -> None:
    src = rng.integers(-(1 << 31), 1 << 31, 31 * 4).astype(np.int32)  # lane 31's chunk lies past the end
    n = rng.choice([0, 4, 8, 12, 16], 32).astype(np.int32)
    n[31] = 0  # ... and reads nothing
    before, after = np.zeros((32, 4), np.int32), np.zeros((32, 4), np.int32)
    run_text(CP_ASYNC, "k", src, n, before, after, async_mode=mode)
    padded = np.concatenate([src, np.zeros(4, np.int32)]).reshape(32, 4)
    want = np.where(np.arange(4)[None, :] < (n // 4)[:, None], padded, 0)
    assert np.array_equal(after, want)
    assert np.array_equal(before, np.full((32, 4), -1) if mode == "deferred" else want), "deferred: lands at the wait"


def test_cp_async_src_bytes_out_of_range_is_an_error() -> None:
    n = np.full(32, 16, np.int32)
    n[5] = 17
    with pytest.raises(TileInterpreterError, match=r"(?s)'frag.cp_async'.*lane 5: src_bytes = 17"):
        run_text(CP_ASYNC, "k", np.zeros(128, np.int32), n, np.zeros(128, np.int32), np.zeros(128, np.int32))



CP_ASYNC_IGNORE = CP_ASYNC.replace(
    "frag.cp_async \"cg\" %sd, %gs, 16, %nb",
    "%c0 = arith.constant 0 : i32\n  %out = arith.cmpi eq, %nb, %c0 : i32\n"
    "  frag.cp_async \"cg\" %sd, %gs, 16 ignore_src %out",
)


def test_cp_async_ignore_src_writes_zeros_and_reads_nothing(rng) -> None:
    """Lanes whose ignore_src is true write 16 zero bytes and may point past the end (lane 31)."""
    src = rng.integers(1, 1 << 31, 31 * 4).astype(np.int32)
    n = rng.choice([0, 16], 32).astype(np.int32)
    n[31] = 0
    n[0] = 16
    before, after = np.zeros((32, 4), np.int32), np.zeros((32, 4), np.int32)
    run_text(CP_ASYNC_IGNORE, "k", src, n, before, after)
    padded = np.concatenate([src, np.zeros(4, np.int32)]).reshape(32, 4)
    assert np.array_equal(after, np.where((n > 0)[:, None], padded, 0))

# ------------------------------------------------------------------ memory errors

STORE_LANE = f"""
func.func @k(%y: !llvm.ptr<1> {{tile.dtype = i32}}, %step: i32) {launch(0)} {{{LANE}
  %i = arith.muli %lane, %step : i32
  %p = llvm.getelementptr %y[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
  frag.store %lane, %p : i32, !llvm.ptr<1>
  func.return
}}"""


def test_out_of_bounds_store_names_op_lane_and_address() -> None:
    pattern = r"(?s)'frag.store' in @k \[block \(0, 0, 0\), warp 0\]: lane 31: a write of 4 bytes at byte offset 124 of global argument 0 \(%y\) is out of bounds \(it has 124 bytes\)"
    with pytest.raises(TileInterpreterError, match=pattern):
        run_text(STORE_LANE, "k", np.zeros(31, np.int32), 4)


def test_views_address_their_allocation() -> None:
    base = np.zeros(72, np.int32)
    run_text(STORE_LANE, "k", base[4::2], 8)  # a strided view: lane l writes element 2 l of the view's memory
    assert np.array_equal(base[4:68:2], np.arange(32)) and not base[5::2].any() and not base[:4].any()
    pattern = r"lane 31: a write of 4 bytes at byte offset 124 of global argument 0 \(%y\) is out of bounds \(its allocation spans byte offsets -16 to 124\)"
    with pytest.raises(TileInterpreterError, match=pattern):
        run_text(STORE_LANE, "k", np.zeros(35, np.int32)[4:], 4)


def test_misaligned_access_is_an_error() -> None:
    with pytest.raises(TileInterpreterError, match=r"lane 1: a write at byte offset 2 of .* is not 4-byte aligned"):
        run_text(STORE_LANE, "k", np.zeros(64, np.int32), 2)


def test_argument_checks() -> None:
    module = parse_module((EXAMPLES / "mma_f16.mlir").read_text())
    a, d = np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float32)
    with pytest.raises(TileInterpreterError, match=r"argument 0 \(%a\) is tile.dtype = f16: expected a numpy array of float16"):
        run(module, "mma_f16", a.astype(np.float32), a[:8], d)
    with pytest.raises(TileInterpreterError, match=r"argument 1 \(%step\) is i32: .* does not fit in 32 bits"):
        run_text(STORE_LANE, "k", np.zeros(64, np.int32), 1 << 40)


def test_static_shared_memory_must_fit_smem() -> None:
    text = (EXAMPLES / "mma_f16.mlir").read_text().replace("smem = 768", "smem = 700")
    with pytest.raises(TileInterpreterError, match=r"static shared buffers take 768 bytes .* smem = 700"):
        run_text(text, "mma_f16", np.zeros((16, 16), np.float16), np.zeros((8, 16), np.float16), np.zeros((16, 8), np.float32))


# ------------------------------------------------------------------ warps and blocks


def exchange(barrier: bool) -> str:
    return f"""
func.func @x(%out: !llvm.ptr<1> {{tile.dtype = i32, tile.output}}) {launch(256, block=64, grid="2, 1, 1")} {{
  %s = frag.shared "x", 256, align 16 : !llvm.ptr<3>
  %ti = tile.thread_id x
  %tid = arith.index_cast %ti : index to i32
  %bi = tile.block_id x
  %bid = arith.index_cast %bi : index to i32
  %c10 = arith.constant 10 : i32
  %c32 = arith.constant 32 : i32
  %c63 = arith.constant 63 : i32
  %c64 = arith.constant 64 : i32
  %c1000 = arith.constant 1000 : i32
  %t10 = arith.muli %tid, %c10 : i32
  %b1000 = arith.muli %bid, %c1000 : i32
  %val = arith.addi %t10, %b1000 : i32
  %p = llvm.getelementptr %s[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  frag.store %val, %p : i32, !llvm.ptr<3>
  {"tile.barrier" if barrier else ""}
  %t32 = arith.addi %tid, %c32 : i32
  %other = arith.andi %t32, %c63 : i32
  %q = llvm.getelementptr %s[%other] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  %v = frag.load %q : !llvm.ptr<3> -> i32
  %b64 = arith.muli %bid, %c64 : i32
  %o = arith.addi %b64, %tid : i32
  %po = llvm.getelementptr %out[%o] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  frag.store %v, %po : i32, !llvm.ptr<1>
  func.return
}}"""


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_two_warps_exchange_through_shared_memory(order: str) -> None:
    t = np.arange(64)
    want = np.concatenate([((t + 32) % 64) * 10 + 1000 * blk for blk in range(2)])
    out = np.zeros(128, np.int32)
    run_text(exchange(True), "x", out, warp_order=order)
    assert np.array_equal(out, want)
    out = np.zeros(128, np.int32)
    run_text(exchange(False), "x", out, warp_order=order)  # no barrier: the warp that runs first reads 0xFF bytes
    first = slice(0, 32) if order == "ascending" else slice(32, 64)
    assert np.all(out.reshape(2, 64)[:, first] == -1) and not np.array_equal(out, want)


def test_partial_warp_and_dynamic_shared_memory() -> None:
    text = f"""
func.func @k(%out: !llvm.ptr<1> {{tile.dtype = i32}}) {launch(192, block=48)} {{
  %d = frag.shared "dyn", 0, align 16 : !llvm.ptr<3>
  %e = frag.shared "other", 0, align 16 : !llvm.ptr<3>
  %ti = tile.thread_id x
  %tid = arith.index_cast %ti : index to i32
  %p = llvm.getelementptr %d[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  frag.store %tid, %p : i32, !llvm.ptr<3>
  tile.barrier
  %c47 = arith.constant 47 : i32
  %r = arith.subi %c47, %tid : i32
  %q = llvm.getelementptr %e[%r] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  %v = frag.load %q : !llvm.ptr<3> -> i32
  %po = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  frag.store %v, %po : i32, !llvm.ptr<1>
  func.return
}}"""
    out = np.zeros(48, np.int32)  # lanes 48..63 of warp 1 do not exist: they store nothing
    run_text(text, "k", out)
    assert np.array_equal(out, 47 - np.arange(48)), "dynamic shared symbols alias one buffer"


MISC = """
func.func @f(%p: !llvm.ptr<1> {tile.dtype = f32}, %n: i32) -> (i32, f32, vector<2xf16>, i32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%i = %c0, %acc = %c0) : (i32, i32) -> (i32, i32) {
    %go = arith.cmpi slt, %i, %n : i32
    scf.condition(%go) %i, %acc : i32, i32
  } do {
  ^bb0(%i2: i32, %a2: i32):
    %i3 = arith.addi %i2, %c1 : i32
    %a3 = arith.addi %a2, %i2 : i32
    scf.yield %i3, %a3 : i32, i32
  }
  cf.br ^bb1(%r#1 : i32)
^bb1(%sum: i32):
  %lane_index = tile.lane_id
  %lane = arith.index_cast %lane_index : index to i32
  %q = llvm.getelementptr %p[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %v = llvm.load %q : !llvm.ptr<1> -> f32
  %v2 = arith.mulf %v, %v : f32
  llvm.store %v2, %q : f32, !llvm.ptr<1>
  %h = arith.truncf %v : f32 to f16
  %e = arith.constant dense<0.0> : vector<2xf16>
  %vv = vector.insert %h, %e [1] : f16 into vector<2xf16>
  %bits = llvm.bitcast %vv : vector<2xf16> to i32
  %w = tile.warp_id
  %wi = arith.index_cast %w : index to i32
  func.return %sum, %v2, %vv, %bits, %wi : i32, f32, vector<2xf16>, i32, i32
}"""


def test_while_branches_llvm_memory_and_vectors(rng) -> None:
    x = rng.standard_normal(32).astype(np.float32)
    x0 = x.copy()
    total, sq, vv, bits, warp = run_text(MISC, "f", x, 5)
    assert np.all(total == 10) and np.all(warp == 0)
    assert np.array_equal(sq, x0 * x0) and np.array_equal(x, x0 * x0), "llvm.store writes the caller's array"
    assert vv.shape == (32, 2) and np.array_equal(vv[:, 1], x0.astype(np.float16)) and np.all(vv[:, 0] == 0)
    assert np.array_equal(u32(bits), x0.astype(np.float16).view(np.uint16).astype(np.uint32) << 16)


def test_integer_division_by_zero_gives_all_bits_set() -> None:
    """PTX leaves it unspecified; a Triton kernel divides by the zeros of a window's padded lanes and
    drops those results, so it is a value, not an error: -1 (a remainder: the dividend), as the tile
    interpreter gives."""
    text = f"""
func.func @g(%a: i32) -> (i32, i32, i32) {{{LANE}
  %c5 = arith.constant 5 : i32
  %d = arith.subi %lane, %c5 : i32
  %r = arith.divsi %a, %d : i32
  %m = arith.remsi %a, %d : i32
  %u = arith.divui %a, %d : i32
  func.return %r, %m, %u : i32, i32, i32
}}"""
    q, m, u = run_lanes(text, "g", 7)
    lanes = np.arange(32)
    d = lanes - 5
    assert q[5] == -1 and m[5] == 7 and u32(u)[5] == 0xFFFFFFFF
    others = lanes != 5
    assert np.array_equal(q[others], np.trunc(7 / d[others]).astype(int))
    assert np.array_equal(m[others], 7 - d[others] * np.trunc(7 / d[others]).astype(int))


def test_ptrtoint_gives_aligned_made_up_addresses() -> None:
    text = f"""
func.func @f(%p: !llvm.ptr<1> {{tile.dtype = f16}}) -> i64 {{{LANE}
  %q = llvm.getelementptr %p[%lane] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
  %a = llvm.ptrtoint %q : !llvm.ptr<1> to i64
  func.return %a : i64
}}"""
    base = np.zeros(64, np.float16)
    (a,) = run_text(text, "f", base)
    assert a[0] % 256 == 0 and np.array_equal(a - a[0], 2 * LANES)
    (b,) = run_text(text, "f", base[3:])  # a view starts 6 bytes into its allocation
    assert np.array_equal(b % 256, 6 + 2 * LANES)


def test_unsigned_division_by_zero_matches_the_lane_interpreter() -> None:
    """The tile interpreter's divui / remui / ceildivui by zero: all bits set, the dividend, all bits set;
    and a negative operand read as the unsigned number of its bits (as the GPU reads it)."""
    from xdsl.dialects import arith as xarith
    from xdsl.dialects.builtin import IndexType
    from xdsl.utils.test_value import create_ssa_value

    from tilec.interp.numeric import NumpyIntegerFunctions

    impl = NumpyIntegerFunctions()
    x, y = create_ssa_value(IndexType()), create_ssa_value(IndexType())
    for op_class, want in ((xarith.DivUIOp, [-1, 3]), (xarith.RemUIOp, [7, 1]), (xarith.CeilDivUIOp, [-1, 4])):
        a, b = np.array([7, 7]), np.array([0, 2])
        got = getattr(impl, {xarith.DivUIOp: "run_divui", xarith.RemUIOp: "run_remui",
                             xarith.CeilDivUIOp: "run_ceildivui"}[op_class])(None, op_class(x, y), (a, b))
        assert np.asarray(got.values[0]).tolist() == want
    got = impl.run_divui(None, xarith.DivUIOp(x, y), (np.array([-2]), np.array([2])))
    assert np.asarray(got.values[0]).tolist() == [(2**64 - 2) // 2]
