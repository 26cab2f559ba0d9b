"""tilec.lang: every construct built, run on the CPU interpreter against numpy, and compiled to PTX.

Inputs are fresh random numbers, outputs are poisoned with NaN first; the PTX each compile makes is
assembled by ptxas at the end of the session (tests/conftest.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import tilec
import tilec.lang as tl

RNG = np.random.default_rng(20261125)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def nan_like(x):
    return np.full_like(x, np.nan)


def rel_err(got, ref):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    assert not np.isnan(got).any(), "an output was not written"
    return np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30)


# ---------------------------------------------------------------- the issue's kernel, as written


@tl.kernel
def softmax(x, o, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N), other=float("-inf")).to(tl.float32)
    e = tl.exp(t - tl.row_max(t)[:, None])
    tl.store(o, (r, 0), (e / tl.row_sum(e)[:, None]).to(o.dtype))


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_the_issue_softmax_compiles_and_interprets():
    x = np.random.randn(300, 1000).astype(np.float16)
    o = np.empty_like(x)
    k = softmax.compile(x, o, BM=16, N=1024, arch="sm_90")  # no GPU needed
    assert k.arch == "sm_90" and ".target sm_90" in k.asm["ptx"] and "tile.row_max" in k.asm["tile"]
    o[:] = np.nan
    assert softmax.interpret(x, o, grid=(19,), BM=16, N=1024) is None  # fills o
    assert rel_err(o, softmax_ref(x)) < 2e-3


def test_ir_is_the_tile_dialect_with_python_locations():
    x = rand(8, 64, dtype=np.float16)
    module = softmax.ir(x, nan_like(x), BM=8, N=64)
    text = str(module)
    for op in ("tile.block_id", "tile.load", "tile.convert", "tile.row_max", "tile.broadcast", "tile.exp",
               "tile.row_sum", "tile.div", "tile.store"):
        assert op in text
    assert "tile.convert" not in text.split("tile.load")[0]
    fn = module.body.block.first_op
    load = next(op for op in fn.walk() if op.name == "tile.load")
    assert load.location.filename.data == __file__
    # the line of `t = tl.load(...)` in softmax above
    assert "tl.load(x, (r, 0)" in open(__file__).read().splitlines()[load.location.line.data - 1]
    assert load.location.column.data > 1


def test_variants_are_cached_per_specialisation():
    x = rand(8, 64)
    o = nan_like(x)
    a = softmax._module(softmax.specialize(x, o, BM=8, N=64))
    again = softmax.specialize(rand(16, 64), nan_like(rand(16, 64)), BM=8, N=64)
    assert softmax._module(again) is a  # shapes are not in the key
    assert softmax._module(softmax.specialize(x, o, BM=4, N=64)) is not a
    assert softmax.ir(x, o, BM=8, N=64) is not a and str(softmax.ir(x, o, BM=8, N=64)) == str(a)  # ir(): a copy
    assert softmax.ir(x.astype(np.float16), o.astype(np.float16), BM=8, N=64) is not a
    assert softmax.ir(x, o, BM=8, N=64, num_warps=8) is not a
    assert softmax.compile(x, o, BM=8, N=64, arch="sm_80") is softmax.compile(x, o, BM=8, N=64, arch="sm_80")


# ---------------------------------------------------------------- elementwise algebra


@tl.kernel
def binary_ops(x, y, o, WHICH: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    r, c = tl.block_id(0) * BM, tl.block_id(1) * BN
    a = tl.load(x, (r, c), shape=(BM, BN))
    b = tl.load(y, (r, c), shape=(BM, BN))
    out = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / (tl.abs(b) + 1.0),
        "max": lambda: tl.maximum(a, b), "min": lambda: tl.minimum(a, b), "neg": lambda: -a,
        "radd": lambda: 2.0 + a, "rsub": lambda: 1.0 - a, "rmul": lambda: 0.5 * a, "rdiv": lambda: 1.0 / (a * a + 1.0),
        "where": lambda: tl.where(a > b, a, b * 2.0), "cmp": lambda: tl.where((a <= b) & (b >= 0.0), 1.0, 0.0),
        "exp": lambda: tl.exp(a), "exp2": lambda: tl.exp2(a), "log": lambda: tl.log(tl.abs(a) + 1.0),
        "log2": lambda: tl.log2(tl.abs(a) + 1.0), "sqrt": lambda: tl.sqrt(tl.abs(a)), "tanh": lambda: tl.tanh(a),
        "rsqrt": lambda: tl.rsqrt(tl.abs(a) + 1.0), "sigmoid": lambda: tl.sigmoid(a), "abs": lambda: abs(a),
        "map": lambda: tl.map(lambda u, v: u * v + tl.exp(-u * u), a, b),
    }[WHICH]()
    tl.store(o, (r, c), out)


REFS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (abs(b) + 1), "max": np.maximum, "min": np.minimum, "neg": lambda a, b: -a,
    "radd": lambda a, b: 2 + a, "rsub": lambda a, b: 1 - a, "rmul": lambda a, b: 0.5 * a,
    "rdiv": lambda a, b: 1 / (a * a + 1), "where": lambda a, b: np.where(a > b, a, 2 * b),
    "cmp": lambda a, b: np.where((a <= b) & (b >= 0), 1.0, 0.0), "exp": np.exp, "exp2": np.exp2,
    "log": lambda a, b: np.log(abs(a) + 1), "log2": lambda a, b: np.log2(abs(a) + 1),
    "sqrt": lambda a, b: np.sqrt(abs(a)), "tanh": lambda a, b: np.tanh(a), "rsqrt": lambda a, b: 1 / np.sqrt(abs(a) + 1),
    "sigmoid": lambda a, b: 1 / (1 + np.exp(-a)), "abs": lambda a, b: abs(a),
    "map": lambda a, b: a * b + np.exp(-a * a),
}


@pytest.mark.parametrize("which", sorted(REFS))
def test_elementwise(which):
    x, y = rand(20, 24), rand(20, 24)
    o = nan_like(x)
    binary_ops.interpret(x, y, o, grid=(3, 2), WHICH=which, BM=8, BN=16)
    ref = REFS[which](x.astype(np.float64), y.astype(np.float64)) if which not in ("exp", "exp2") else \
        REFS[which](x.astype(np.float64))
    assert rel_err(o, ref) < 1e-5, which


def test_elementwise_compiles_through_ptxas():
    x = rand(20, 24)
    for which in ("where", "sigmoid", "map", "rsqrt", "cmp"):
        assert "tile.map" in binary_ops.compile(x, x, x, WHICH=which, BM=16, BN=32, arch="sm_80").asm["tile"]


@tl.kernel
def broadcasts(x, v, w, o, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N))
    rows = tl.load(v, (r,), shape=(BM,), axis=0)  # one value per row
    cols = tl.load(w, (0,), shape=(N,))  # one value per column
    tl.store(o, (r, 0), t * rows[:, None] + cols[None, :] - cols + rows[:, None] * cols[None, :] + tl.row_max(t)[:, None])


def test_broadcasting_like_numpy():
    x, v, w = rand(12, 16), rand(12), rand(16)
    o = nan_like(x)
    broadcasts.interpret(x, v, w, o, grid=(3,), BM=4, N=16)
    x64, v64, w64 = (a.astype(np.float64) for a in (x, v, w))
    ref = x64 * v64[:, None] + w64[None, :] - w64 + v64[:, None] * w64[None, :] + x64.max(1, keepdims=True)
    assert rel_err(o, ref) < 1e-6


@tl.kernel
def reoriented(x, w, o, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    wv = tl.load(w, (0,), shape=(N,))  # along the columns, used below along the rows too
    idx = tl.arange(BM)  # int32, along the columns, used along the rows
    t = tl.load(x, (r, 0), shape=(BM, N))
    tl.store(o, (r, 0), t * wv[None, :] + idx.to(tl.float32)[:, None])


def test_a_vector_made_one_way_is_remade_the_other():
    x, w = rand(8, 8), rand(8)
    o = nan_like(x)
    reoriented.interpret(x, w, o, grid=(2,), BM=4, N=8)
    ref = x.astype(np.float64) * w + np.tile(np.arange(4), 2)[:, None]
    assert rel_err(o, ref) < 1e-6
    text = str(reoriented.ir(x, w, o, BM=4, N=8))
    assert "tile.iota" in text and "!tile.rv<4xi32, row>" in text


@tl.kernel
def reductions(x, o, KIND: tl.constexpr, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N))
    if KIND == "rows":
        v = tl.row_sum(t) + tl.row_max(t) * 2.0 - tl.row_min(t) + tl.sum(t, axis=1) + tl.max(t, 1) - tl.min(t, 1)
        tl.store(o, (r,), v)
    else:
        v = tl.col_sum(t) + tl.col_max(t) * 2.0 - tl.col_min(t) + tl.sum(t, axis=0)
        tl.store(o, (r * 0,), v)


def test_reductions():
    x = rand(4, 32)
    o = nan_like(rand(4))
    reductions.interpret(x, o, grid=(1,), KIND="rows", BM=4, N=32)
    x64 = x.astype(np.float64)
    assert rel_err(o, 2 * x64.sum(1) + 3 * x64.max(1) - 2 * x64.min(1)) < 1e-5
    o = nan_like(rand(32))
    reductions.interpret(x, o, grid=(1,), KIND="cols", BM=4, N=32)
    assert rel_err(o, 2 * x64.sum(0) + 2 * x64.max(0) - x64.min(0)) < 1e-5


@tl.kernel
def centred_columns(x, o, BM: tl.constexpr, BN: tl.constexpr):
    t = tl.load(x, (0, 0), shape=(BM, BN))
    tl.store(o, (0, 0), t - tl.col_max(t)[None, :] + tl.row_sum(t)[:, None])


@pytest.mark.parametrize("bm, bn, warps", [(5, 40, 2), (6, 40, 2), (5, 48, 2), (6, 100, 1), (3, 24, 1), (1, 192, 1),
                                            (2, 1000, 4)])
def test_block_tiles_of_odd_shapes_after_tile_distribute(bm, bn, warps):
    """Tiles whose rows no power of two of lanes divides: one warp's lanes hold them like a block's
    threads (6 x 100 on one warp had no fragment), a lane's columns in runs repeated a number of
    times no power of two (2 columns every 64, three times: 1 x 192 on one warp) make a column
    vector's layout, and rows of 1000 spread over 8 threads each, not 2."""
    x = rand(bm, bn)
    o = nan_like(x)
    centred_columns.interpret(x, o, grid=(1,), BM=bm, BN=bn, num_warps=warps, after="tile-distribute")
    x64 = x.astype(np.float64)
    assert rel_err(o, x64 - x64.max(0)[None, :] + x64.sum(1)[:, None]) < 1e-5


def test_copies_out_of_shared_memory_are_refused_at_the_line():
    @tl.kernel
    def copy_out(x, o):
        s = tl.alloc((16, 16), x.dtype)
        tl.copy(x, (0, 0), s)
        tl.copy(s, (), o, (0, 0))

    @tl.kernel
    def swapped(x, o):
        s = tl.alloc((16, 16), x.dtype)
        tl.copy(s, x, (0, 0))

    x = rand(16, 16)
    with pytest.raises(tl.LangError, match=r"test_lang.py:\d+:\d+: error: tl.copy from shared tile .* out to 'o': "
                                           r"copies from shared memory to an array are not compiled yet"):
        copy_out.compile(x, nan_like(x), arch="sm_80")
    with pytest.raises(tl.LangError, match=r"tl.copy\(src, src_offsets, dst\) copies a window of an array argument "
                                           r"into a shared tile, got src shared tile !tile.st<16x16xf32.*and dst"):
        swapped.compile(x, nan_like(x), arch="sm_80")


# ---------------------------------------------------------------- if on run-time values


@tl.kernel
def branchy(x, o, n, BM: tl.constexpr, N: tl.constexpr, SHIFT: tl.constexpr):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N))
    s = tl.row_sum(t)
    m = n
    if tl.block_id(0) % 2 == 0:  # run-time: an scf.if whose results are t, s and m
        t = t * 2.0
        s = s + 1.0
        m = m + 1
    elif n > 100:  # a run-time if in the else branch
        t = t - 1.0
    else:
        t = -t
    if SHIFT:  # a constexpr: a Python if, as written
        t = t + 3.0
    tl.store(o, (r, 0), t + s[:, None] + m.to(tl.float32))


@tl.kernel
def branch_in_loop(x, o, n, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    acc = tl.zeros((BM, N))
    hits = tl.zeros((BM,), axis=0)
    for i in tl.range(0, n):
        t = tl.load(x, (r, i * N), shape=(BM, N))
        if i % 3 == 1:
            acc = acc + t
            hits = hits + 1.0
        else:
            acc = acc - 0.5 * t
    tl.store(o, (r, 0), acc + hits[:, None])


def branchy_reference(x: np.ndarray, n: int) -> np.ndarray:
    """What :data:`branchy` computes (SHIFT=True, blocks of 16 rows), in float64."""
    want = np.empty(x.shape)
    for b in range(x.shape[0] // 16):
        t = x[b * 16:(b + 1) * 16].astype(np.float64)
        s, m = t.sum(1), n
        if b % 2 == 0:
            t, s, m = t * 2, s + 1, m + 1
        else:
            t = t - 1 if n > 100 else -t
        want[b * 16:(b + 1) * 16] = t + 3 + s[:, None] + m
    return want


def branch_in_loop_reference(x: np.ndarray, steps: int) -> np.ndarray:
    """What :data:`branch_in_loop` computes (N = 16), in float64."""
    x64, want, hits = x.astype(np.float64), np.zeros((x.shape[0], 16)), 0
    for i in range(steps):
        t = x64[:, i * 16:(i + 1) * 16]
        want, hits = (want + t, hits + 1) if i % 3 == 1 else (want - 0.5 * t, hits)
    return want + hits


@pytest.mark.parametrize("after", [None, "tile-distribute"], ids=["tile", "lanes"])
def test_if_on_run_time_values(after):
    """An if on a scalar known only when the kernel runs is an scf.if whose results are the names its
    branches assign (a tile, a row vector and an integer scalar here; elif nests a second one); an if
    on a tl.constexpr stays Python's. Against float64 in both interpreters, and compiled: the PTX
    branches."""
    x = rand(64, 32)
    for n in (50, 200):
        o = nan_like(x)
        branchy.interpret(x, o, n, grid=(4,), BM=16, N=32, SHIFT=True, after=after)
        assert rel_err(o, branchy_reference(x, n)) < 1e-5
    x = rand(32, 5 * 16)
    o = nan_like(rand(32, 16))
    branch_in_loop.interpret(x, o, 5, grid=(2,), BM=16, N=16, after=after)
    assert rel_err(o, branch_in_loop_reference(x, 5)) < 1e-5
    if after is None:
        k = branchy.compile(x, x, 5, BM=16, N=32, SHIFT=False, arch="sm_80")
        assert k.asm["tile"].count("scf.if") == 2 and "@%p" in k.asm["ptx"]


@tl.kernel
def promoted(x, o, s, n):
    t = tl.load(x, (0, 0), shape=(16, 16))
    k = 1.0
    m = 3
    if tl.block_id(0) == 0:
        k = 2.0  # the number 2.0 against the traced f32 s of the other branch: an f32 result
        m = n  # a traced i32 against the number 3 (the else branch leaves m as it was)
    else:
        k = s
    tl.store(o, (tl.block_id(0) * 16, 0), t * k + m.to(tl.float32))


def test_run_time_if_promotes_python_numbers():
    """Python numbers meeting a traced scalar, or each other, leave a run-time if as scalars of one
    type (as Triton promotes them): block 0 takes 2.0 and n, block 1 s and 3."""
    x = rand(16, 16)
    o = nan_like(rand(32, 16))
    promoted.interpret(x, o, 0.25, 7, grid=(2,), after="tile-distribute")
    x64 = x.astype(np.float64)
    assert rel_err(o[:16], x64 * 2 + 7) < 1e-6 and rel_err(o[16:], x64 * 0.25 + 3) < 1e-6


def test_run_time_if_errors_point_at_the_if():
    @tl.kernel
    def types_differ(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        if tl.block_id(0) == 0:
            t = t.to(tl.float16)
        tl.store(o, (0, 0), t.to(tl.float32))

    @tl.kernel
    def python_differs(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        k = 1.0
        if tl.block_id(0) == 0:
            k = True
        tl.store(o, (0, 0), t * k)

    @tl.kernel
    def one_branch(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        if tl.block_id(0) == 0:
            u = t * 2.0
        tl.store(o, (0, 0), u)

    @tl.kernel
    def not_a_comparison(x, o, n):
        t = tl.load(x, (0, 0), shape=(16, 16))
        if n:
            t = t * 2.0
        tl.store(o, (0, 0), t)

    @tl.kernel
    def leaves(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        for j in tl.range(0, 4):
            if tl.block_id(0) == j:
                break
        tl.store(o, (0, 0), t)

    x = rand(16, 16)
    line = r"test_lang.py:\d+:\d+: error: "
    for kernel, args, match in (
            (types_differ, (), "'t' is a tile !tile.rt<16x16xf16> after the if branch and a tile !tile.rt<16x16xf32> "
                               "after the else branch"),
            (python_differs, (), "'k' is the Python value True after the if branch and 1.0 after the else branch"),
            (one_branch, (), "tl.store writes a tile, a vector or a scalar, got NoValue 'u', which has no value after a "
                             "run-time if that assigns it in one branch only"),
            (not_a_comparison, (3,), r"an if's condition known only when the kernel runs must be a comparison \(i1\), "
                                     "got a scalar i32"),
            (leaves, (), "'break' inside a tl.range loop")):
        with pytest.raises(tl.LangError, match=line + match):
            kernel.compile(x, nan_like(x), *args, arch="sm_80")


def _scaled_kernel(scale):
    @tl.kernel
    def scaled(x, o, n, S: tl.constexpr = scale):  # a default from the enclosing function
        t = tl.load(x, (0, 0), shape=(16, 16))
        for j in range(2):  # a Python loop's variable, reused in a branch and dead after it
            t = t + 1.0
        if n > 0:
            for j in range(3):
                t = t * S
            u = tl.load(x, (0, 0), shape=(16, 8))  # a name the branch alone uses
            tl.store(o, (0, 0), t)
            t = u  # another shape, dead after the if
        else:
            tl.store(o, (0, 0), -t)
    return scaled


def test_run_time_ifs_keep_pythons_rules():
    """What Python allows stays allowed around a run-time if: a kernel's default taken from the
    function that made it, a name reassigned in a branch but dead after the if (a Python loop's
    variable, a tile of another shape), a name only a branch uses; a 24-arm constexpr elif chain traces
    in well under a second per arm (each branch is written once, not once per enclosing if)."""
    x = rand(16, 16)
    for n, want in ((1, (x + 2) * 8), (0, -(x + 2))):
        o = nan_like(x)
        _scaled_kernel(2.0).interpret(x, o, n, grid=(1,), after="tile-distribute")
        assert rel_err(o, want) < 1e-6
    arms = "\n".join(f"    {'if' if i == 0 else 'elif'} K == {i}:\n        t = t + {i}.0" for i in range(24))
    source = (f"def chain(x, o, K: tl.constexpr):\n    t = tl.load(x, (0, 0), shape=(16, 16))\n{arms}\n"
              "    tl.store(o, (0, 0), t)\n")
    import linecache
    import time

    name = "<elif chain>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    scope = {"tl": tl}
    exec(compile(source, name, "exec"), scope)
    chain = tl.kernel(scope["chain"])
    start = time.perf_counter()
    o = nan_like(x)
    chain.interpret(x, o, grid=(1,), K=23)
    assert rel_err(o, x + 23) < 1e-6 and time.perf_counter() - start < 20
    assert chain._traced_fn is not chain.fn  # the chain was rewritten (its source was found)


def test_a_barrier_under_an_if_that_differs_between_warps_is_refused():
    """A block barrier that only some warps reach hangs the block: refused at the barrier's line; the
    same barrier under an if on the block index (alike in every warp) compiles."""

    @tl.kernel
    def some_warps(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16))
        if tl.warp_id() == 0:
            t = t * 2.0
            tl.barrier()
        tl.store(o, (0, 0), t)

    @tl.kernel
    def every_warp(x, o, n):
        t = tl.load(x, (0, 0), shape=(16, 16))
        if tl.block_id(0) < n:
            t = t * 2.0
            tl.barrier()
        tl.store(o, (0, 0), t)

    x = rand(16, 16)
    with pytest.raises(tilec.CompilationError, match=r"test_lang.py:\d+:\d+: error: tile-distribute: 'tile.barrier': a "
                                                     r"block barrier inside an if or while loop whose condition differs between the "
                                                     r"block's warps \('scf.if' at .*test_lang.py:\d+:\d+\)"):
        some_warps.compile(x, nan_like(x), arch="sm_80")
    assert "bar.sync" in every_warp.compile(x, nan_like(x), 3, arch="sm_80").asm["ptx"]


def test_a_block_value_under_an_if_that_differs_between_warps_is_refused():
    """"Reduce, then warp 0 stores" on a vector spread over the block's warps: each warp holds a part,
    so only warp 0's part would be stored (the lane interpreter wrote 16 of 64 rows while the tile
    interpreter wrote all). A reduction across warps in such a branch would wait at a barrier the
    others never reach. Both are refused at the op's line; a value computed inside the branch is that
    warp's own, and runs alike in both interpreters."""

    @tl.kernel(num_warps=4)
    def store_from_warp0(x, v, BM: tl.constexpr, BN: tl.constexpr):
        s = tl.row_sum(tl.load(x, (0, 0), shape=(BM, BN)))
        if tl.warp_id() == 0:
            tl.store(v, (0,), s)

    @tl.kernel(num_warps=4)
    def reduce_in_warp0(x, v, BN: tl.constexpr):
        t = tl.load(x, (0, 0), shape=(1, BN))
        if tl.warp_id() == 0:
            tl.store(v, (0,), tl.row_sum(t))

    @tl.kernel(num_warps=4)
    def warp0_own(x, v, BM: tl.constexpr, BN: tl.constexpr):
        if tl.warp_id() == 0:
            s = tl.row_sum(tl.load(x, (0, 0), shape=(BM, BN)))
            tl.store(v, (0,), s)

    x = rand(50, 33)
    spread = r"test_lang.py:\d+:\d+: error: tile-distribute: '%s': .* is a register (tile|vector) spread over the block's warps, inside a region that only some warps run \('scf.if' at .*test_lang.py:\d+:\d+\)"
    with pytest.raises(tilec.CompilationError, match=spread % "tile.store"):
        store_from_warp0.compile(x, nan_like(x[:, 0]), BM=64, BN=40, arch="sm_80")
    with pytest.raises(tilec.CompilationError, match=spread % "tile.row_sum"):
        reduce_in_warp0.compile(x, nan_like(x[:1, 0]), BN=2048, arch="sm_80")
    want = np.zeros(64)
    want[:50] = x.astype(np.float64).sum(1)
    for after in (None, "tile-distribute"):
        v = np.full(64, np.nan, np.float32)
        warp0_own.interpret(x, v, grid=(1,), after=after, BM=64, BN=40)
        assert rel_err(v, want) < 1e-6, after
    assert "bar.sync" not in warp0_own.compile(x, v, BM=64, BN=40, arch="sm_80").asm["ptx"]


def test_python_numbers_that_do_not_fit_the_values_they_meet():
    """An int past the type it meets is an error at the line naming it (it would wrap); a float past
    the type's range is ±inf, as IEEE rounding (numpy, Triton) gives, in both interpreters and in the
    constant a load's ``other=`` fills with."""

    @tl.kernel
    def big_int(x, o, n):
        tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(16, 16)) + (n + 2**40).to(tl.float32))

    @tl.kernel
    def big_offset(o):
        tl.store(o, (0, 0), tl.iota((16, 16), 1, 2**40).to(tl.float32))

    @tl.kernel
    def big_float(x, o):
        t = tl.load(x, (0, 0), shape=(16, 16), other=-1e300)
        tl.store(o, (0, 0), t * 1e300)

    x = rand(10, 10)
    with pytest.raises(tl.LangError, match=r"test_lang.py:\d+:\d+: error: the integer 1099511627776 does not fit tl.int32"):
        big_int.compile(x, nan_like(x), 3, arch="sm_80")
    with pytest.raises(tl.LangError, match=r"tl.iota's offset 1099511627776 makes coordinates past tl.int32"):
        big_offset.compile(nan_like(x), arch="sm_80")

    @tl.kernel
    def edge(o, OFF: tl.constexpr, C: tl.constexpr):
        tl.store(o, (0, 0), (tl.iota((1, 16), 1, OFF) - OFF + C).to(tl.float32))

    o = np.full((1, 16), np.nan, np.float32)
    edge.interpret(o, grid=(1,), OFF=2**31 - 16, C=0)  # the last coordinate is 2**31 - 1: it fits
    assert (o == np.arange(16)).all()
    with pytest.raises(tl.LangError, match=r"the integer 3000000000 does not fit tl.int32"):  # no silent wrap
        edge.interpret(o, grid=(1,), OFF=0, C=3_000_000_000)

    @tl.kernel
    def constants(o):
        t = tl.full((16, 16), 1 + 2**-8 + 2**-30, tl.bfloat16).to(tl.float32)  # one rounding to bf16: up
        tl.store(o, (0, 0), t + tl.full((16, 16), 0.0, tl.float32) * 10**400)  # 10**400: inf, 0 * inf: nan

    o = np.full((16, 16), 0.0, np.float32)
    constants.interpret(o, grid=(1,))
    assert np.isnan(o).all()

    @tl.kernel
    def bf16_constant(o):
        tl.store(o, (0, 0), tl.full((16, 16), 1 + 2**-8 + 2**-30, tl.bfloat16).to(tl.float32))

    bf16_constant.interpret(o, grid=(1,))
    assert (o == 1.0078125).all()  # 1 + 2**-7, not 1.0 (rounded through f32 first, then to even)
    want = np.full((16, 16), -np.inf)  # -1e300 * 1e300 outside the array
    want[:10, :10] = np.where(x > 0, np.inf, -np.inf)
    for after in (None, "tile-distribute"):
        o = np.full((16, 16), np.nan, np.float32)
        big_float.interpret(x, o, grid=(1,), after=after)
        assert np.array_equal(o, want), after


@tl.kernel
def conversions(x, o, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N)).to(tl.float32)
    cols = tl.iota((BM, N), 1)  # int32 coordinates
    trunc = (t * 4.0).to(tl.int32).to(tl.float32)  # toward zero
    mask = (cols % 2 == 0).to(tl.float32)
    tl.store(o, (r, 0), (trunc + mask + cols.to(tl.float32) * 0.125).to(o.dtype))


def test_conversions_and_integer_tiles():
    x = rand(8, 16, dtype=np.float16)
    o = nan_like(x)
    conversions.interpret(x, o, grid=(2,), BM=4, N=16)
    cols = np.arange(16)[None, :]
    ref = np.trunc(x.astype(np.float64) * 4) + (cols % 2 == 0) + cols * 0.125
    assert rel_err(o, ref) < 2e-3


@tl.kernel
def scalars(x, o, alpha, shift, BM: tl.constexpr, N: tl.constexpr):
    r = tl.block_id(0) * BM
    n = x.shape[1]
    t = tl.load(x, (r, 0), shape=(BM, N))
    tl.store(o, (r, 0), t * alpha + shift.to(tl.float32) + n.to(tl.float32) + tl.full((BM, N), 0.5))


def test_number_arguments_and_extents():
    x = rand(8, 10)
    o = nan_like(x)
    scalars.interpret(x, o, 1.5, 3, grid=(2,), BM=4, N=16)
    assert rel_err(o, x.astype(np.float64) * 1.5 + 3 + 10 + 0.5) < 1e-6
    text = str(scalars.ir(x, o, 1.5, 3, BM=4, N=16))
    assert "%alpha: f32" in text and "%shift: i32" in text and "tile.dim %x, 1" in text


# ---------------------------------------------------------------- loops


@tl.kernel
def row_sums_looped(x, o, BM: tl.constexpr, BN: tl.constexpr, STEPS: tl.constexpr):
    r = tl.block_id(0) * BM
    acc = tl.zeros((BM,), axis=0)
    biggest = tl.full((BM,), float("-inf"), axis=0)
    for c in tl.range(0, x.shape[1], BN):
        t = tl.load(x, (r, c), shape=(BM, BN), other=0.0)
        for k in range(STEPS):  # a Python loop over a constexpr: unrolled
            acc = acc + tl.row_sum(t) * (1.0 / STEPS)
        biggest = tl.maximum(biggest, tl.row_max(tl.load(x, (r, c), shape=(BM, BN), other=float("-inf"))))
    tl.store(o, (r,), acc + biggest)


def test_range_loops_carry_values_and_python_loops_unroll():
    x = rand(8, 100)
    o = nan_like(rand(8))
    row_sums_looped.interpret(x, o, grid=(2,), BM=4, BN=32, STEPS=3)
    assert rel_err(o, x.astype(np.float64).sum(1) + x.max(1)) < 1e-5
    text = str(row_sums_looped.ir(x, o, BM=4, BN=32, STEPS=3))
    assert text.count("scf.for") == 1 and text.count("tile.row_sum") == 3
    assert "scf.for %c = " in text and "iter_args(%acc_1 = " in text


@tl.kernel
def nested(x, o, BM: tl.constexpr, BN: tl.constexpr):
    total = tl.zeros((BM,), axis=0)
    for r in tl.range(0, x.shape[0], BM):
        for c in tl.range(0, x.shape[1], BN):
            total = total + tl.row_sum(tl.load(x, (r, c), shape=(BM, BN)))
    tl.store(o, (0,), total)


def test_nested_range_loops():
    x = rand(8, 48)
    o = nan_like(rand(4))
    nested.interpret(x, o, grid=(1,), BM=4, BN=16)
    assert rel_err(o, x.astype(np.float64).reshape(2, 4, 48).sum(axis=(0, 2))) < 1e-5
    assert str(nested.ir(x, o, BM=4, BN=16)).count("scf.for") == 2


def test_kernels_compile_for_both_targets():
    x = rand(8, 100)
    for arch in ("sm_80", "sm_90"):
        k = row_sums_looped.compile(x, rand(8), BM=4, BN=32, STEPS=1, arch=arch)
        assert f".target {arch}" in k.asm["ptx"]
        k = broadcasts.compile(x, rand(8), rand(100), x, BM=4, N=128, arch=arch)
        assert "ld.global" in k.asm["ptx"]


# ---------------------------------------------------------------- errors point at the user's line


def _line_of(text: str) -> int:
    lines = open(__file__).read().splitlines()
    return next(i + 1 for i, line in enumerate(lines) if text in line)


def _raises_at(fn, marker: str, match: str):
    with pytest.raises(tl.LangError) as info:
        fn()
    message = str(info.value)
    assert message.startswith(f"{__file__}:{_line_of(marker)}:"), message
    assert ": error: " in message and match in message, message
    return message


@tl.kernel
def mismatched(x, o, N: tl.constexpr):
    a = tl.load(x, (0, 0), shape=(4, N))
    tl.store(o, (0, 0), a + tl.load(x, (0, 0), shape=(8, N)))  # MARK-shape


@tl.kernel
def branches(x, o, N: tl.constexpr):
    a = tl.load(x, (0, 0), shape=(4, N))
    if tl.row_max(a) > 0.0:  # MARK-bool
        tl.store(o, (0, 0), a)


@tl.kernel
def too_big(x, o):
    tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(1024, 1024)))  # MARK-big


@tl.kernel
def changes_type(x, o, N: tl.constexpr):
    acc = tl.zeros((4,), axis=0)
    for c in tl.range(0, 64, N):  # MARK-carried
        acc = tl.load(x, (0, c), shape=(4, N)).to(tl.float32)
    tl.store(o, (0, 0), acc)


def test_errors_name_the_python_line():
    x16, x32 = rand(4, 8, dtype=np.float16), rand(4, 8)
    _raises_at(lambda: mismatched.ir(x32, x32, N=8), "# MARK-shape", "do not broadcast")
    _raises_at(lambda: branches.ir(x32, x32, N=8), "# MARK-bool", "use tl.where")
    _raises_at(lambda: too_big.ir(x32, x32), "# MARK-big", "registers hold at most")
    _raises_at(lambda: changes_type.ir(x16, x16, N=8), "# MARK-carried", "a carried value keeps its type")


def test_loop_errors_point_at_the_loop():
    def leaks(x, o):
        for c in tl.range(0, 4):  # MARK-leak
            t = tl.load(x, (0, c), shape=(4, 4))
        tl.store(o, (0, 0), t)

    def breaks(x, o):
        for c in tl.range(0, 4):
            break  # MARK-break

    x = rand(4, 8)
    _raises_at(lambda: tl.kernel(leaks).ir(x, x), "# MARK-leak", "'t' is first assigned inside this tl.range loop")
    _raises_at(lambda: tl.kernel(breaks).ir(x, x), "# MARK-break", "'break' inside a tl.range loop")


def test_outside_a_kernel_and_bad_arguments():
    with pytest.raises(tl.LangError, match="inside a @tl.kernel function"):
        tl.block_id(0)
    with pytest.raises(TypeError, match="softmax: missing a required argument: 'N'"):
        softmax.ir(rand(4, 4), rand(4, 4), BM=4)
    with pytest.raises(TypeError, match="softmax: x has dtype complex64"):
        softmax.ir(np.zeros((4, 4), np.complex64), rand(4, 4), BM=4, N=4)
    with pytest.raises(ValueError, match="num_warps must be an int from 1 to 32"):
        softmax.ir(rand(4, 4), rand(4, 4), BM=4, N=4, num_warps=0)
    with pytest.raises(ValueError, match="grid must be 1 to 3"):
        softmax[(1, 1, 1, 1)]


# ---------------------------------------------------------------- shared tiles, copies, tensor cores


@tl.kernel
def small_matmul(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, WM: tl.constexpr,
                 WN: tl.constexpr):
    row0, col0 = tl.block_id(0) * BM, tl.block_id(1) * BN
    warp = tl.warp_id()
    wrow, wcol = warp // (BN // WN) * WM, warp % (BN // WN) * WN
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    acc = tl.zeros((WM, WN))
    for k in tl.range(0, a.shape[1], BK):
        tl.copy(a, (row0, k), sa)
        tl.copy(b, (k, col0), sb)
        tl.barrier()
        acc = tl.mma(tl.load(sa, (wrow, 0), shape=(WM, BK)), tl.load(sb, (0, wcol), shape=(BK, WN)), acc)
        tl.barrier()
    tl.store(c, (row0 + wrow, col0 + wcol), acc.to(c.dtype))


MM = dict(BM=32, BN=32, BK=16, WM=16, WN=16)


@pytest.mark.parametrize("after", [None, "tile-layout", "tile-distribute"])
def test_a_matmul_through_shared_memory_and_the_tensor_cores(after):
    a, b = rand(40, 48, dtype=np.float16), rand(48, 36, dtype=np.float16)
    c = nan_like(np.zeros((40, 36), np.float16))
    small_matmul.interpret(a, b, c, grid=(2, 2), after=after, num_stages=2, **MM)
    assert rel_err(c, a.astype(np.float64) @ b.astype(np.float64)) < 2e-3


def test_the_matmul_ir_and_its_pipelined_ptx():
    a, b = rand(64, 64, dtype=np.float16), rand(64, 64, dtype=np.float16)
    text = str(small_matmul.ir(a, b, a, **MM))
    assert "tile.alloc : !tile.st<32x16xf16" in text and "tile.mma" in text
    assert "thr <(32,2):(2,1)> val <(1,8):(1,1)>" in text  # 16-byte vectors, threads row-major
    assert "arith.divui" in text and "arith.divsi" not in text  # index math is unsigned
    k = small_matmul.compile(a, b, a, arch="sm_80", num_stages=3, **MM)
    assert "mma.sync" in k.asm["ptx"] and "cp.async" in k.asm["ptx"]
    assert k.launch_defaults.smem >= 3 * (32 * 16 + 16 * 32) * 2  # three stages of both tiles
    with pytest.raises(ValueError, match="give num_stages/bulk or pipeline, not both"):
        small_matmul.compile(a, b, a, num_stages=3, pipeline="tile-to-llvm", **MM)
    with pytest.raises(ValueError, match="after='tile-to-llvm'"):
        small_matmul.interpret(a, b, a, grid=(2, 2), after="tile-to-llvm", **MM)


@tl.kernel
def copies_with(a, o, THR: tl.constexpr, VAL: tl.constexpr):
    s = tl.alloc((8, 16), a.dtype)
    tl.copy(a, (0, 0), s, tiled=tl_tiled_copy(THR, VAL))  # MARK-tiled
    tl.barrier()
    tl.store(o, (0, 0), tl.load(s))


def tl_tiled_copy(thr, val):
    from tilec.layout import Layout, copy_atom_universal, make_tiled_copy

    return make_tiled_copy(copy_atom_universal(16, 16), Layout(*thr), Layout(*val))


def test_a_tiled_copy_fixes_who_moves_what_and_a_bad_one_names_both_layouts():
    a = rand(8, 16)
    o = nan_like(a)
    copies_with.interpret(a, o, grid=(1,), THR=((8, 16), (16, 1)), VAL=((1, 1), (0, 0)))
    assert rel_err(o, a) == 0
    assert "thr <(8,16):(16,1)> val <(1,1):(0,0)>" in str(copies_with.ir(a, o, THR=((8, 16), (16, 1)), VAL=((1, 1), (0, 0))))
    message = _raises_at(lambda: copies_with.ir(a, o, THR=((3, 16), (16, 1)), VAL=((1, 1), (0, 0))),
                         "# MARK-tiled", "does not tile 8x16")
    assert "(3,16):(16,1)" in message and "(1,1):(0,0)" in message


def test_absent_arguments_and_explicit_specialisations():
    @tl.kernel
    def maybe_bias(x, b, y, N: tl.constexpr):
        t = tl.load(x, (0, 0), shape=(4, N))
        if b is not None:
            t = t + tl.load(b, (0,), shape=(N,))
        tl.store(y, (0, 0), t)

    x, b = rand(4, 8), rand(8)
    y = nan_like(x)
    maybe_bias.interpret(x, None, y, grid=(1,), N=8)
    assert rel_err(y, x) == 0
    maybe_bias.interpret(x, b, y, grid=(1,), N=8)
    assert rel_err(y, x + b) < 1e-6
    assert "%b" not in str(maybe_bias.ir(x, None, y, N=8)).split("{")[0]
    spec = maybe_bias.specialize(x, b, y, N=8)
    assert maybe_bias.module_for(spec, "renamed").body.block.first_op.sym_name.data == "renamed"
    with pytest.raises(ValueError, match="expected one of each parameter"):
        maybe_bias.module_for(tl.Specialization((("x", spec.params[0][1]),), 4))


def test_unsigned_index_math_and_signed_integers():
    @tl.kernel
    def divides(o, D: tl.constexpr):
        i = tl.block_id(0)
        cols = tl.iota((1, 8), 1, 0) - 4  # int32: -4 .. 3
        q = (cols // D).to(tl.float32) * 10.0 + (cols % D).to(tl.float32)
        tl.store(o, (i // 2 + i % 2 * 0, 0), q + tl.full((1, 8), (i // 2).to(tl.float32)))

    o = nan_like(np.zeros((2, 8), np.float32))
    divides.interpret(o, grid=(4,), D=3)
    cols = np.arange(8) - 4
    trunc_q = np.trunc(cols / 3)
    ref = trunc_q * 10 + (cols - 3 * trunc_q)  # integers divide as C does: toward zero
    assert rel_err(o, np.stack([ref, ref + 1])) < 1e-6


def test_a_pass_error_leads_with_the_python_line():
    from tilec.api import CompilationError

    @tl.kernel(num_warps=4)
    def wgmma_on_narrow_rows(a, b, c):
        sa, sb = tl.alloc((64, 64), a.dtype), tl.alloc((64, 8), b.dtype)
        tl.copy(a, (0, 0), sa)
        tl.copy(b, (0, 0), sb)
        tl.barrier()
        acc = tl.wgmma(sa, 0, sb, 0, tl.zeros((16, 8)))  # MARK-wgmma
        tl.store(c, (tl.warp_id() * 16, 0), acc.to(c.dtype))

    a = rand(64, 64, dtype=np.float16)
    with pytest.raises(CompilationError) as info:  # B's 16-byte rows: no wgmma descriptor layout
        wgmma_on_narrow_rows.compile(a, a[:, :8], a[:, :8], arch="sm_90a")
    first = str(info.value).splitlines()[0]
    assert first.startswith(f"{__file__}:{_line_of('# MARK-wgmma')}:"), first
    assert ": error: tile-distribute: 'tile.wgmma': " in first
    assert "@tl.kernel wgmma_on_narrow_rows" in str(info.value)
    with pytest.raises(ValueError, match="bulk=True makes the loops' copies sm_90's bulk tensor copies"):
        tl.Kernel(wgmma_on_narrow_rows.fn, bulk=True).compile(a, a, a, arch="sm_80")
    with pytest.raises(CompilationError) as info:  # the interpreter after the pass: the same error
        wgmma_on_narrow_rows.interpret(a, a[:, :8], a[:, :8], grid=(1,), arch="sm_90a", after="tile-distribute")
    assert str(info.value).splitlines()[0] == first


@tl.kernel
def double_buffered(x, o, BM: tl.constexpr, BK: tl.constexpr):
    """Row sums with a hand-staged two-buffer cp.async pipeline (what num_stages does by itself)."""
    r = tl.block_id(0) * BM
    bufs = [tl.alloc((BM, BK), x.dtype), tl.alloc((BM, BK), x.dtype)]
    acc = tl.zeros((BM,), axis=0)
    steps = 4
    tl.async_copy(x, (r, 0), bufs[0])
    tl.async_commit()
    for s in range(steps):  # unrolled: each step's buffer is known while tracing
        if s + 1 < steps:
            tl.async_copy(x, (r, (s + 1) * BK), bufs[(s + 1) % 2])
        tl.async_commit()
        tl.async_wait(1)
        tl.barrier()
        acc = acc + tl.row_sum(tl.load(bufs[s % 2]).to(tl.float32))
        tl.barrier()
    tl.store(o, (r,), acc)


def test_hand_staged_async_copies():
    x = rand(16, 64)
    o = nan_like(rand(16))
    double_buffered.interpret(x, o, grid=(2,), BM=8, BK=16)
    assert rel_err(o, x.astype(np.float64).sum(1)) < 1e-5
    text = str(double_buffered.ir(x, o, BM=8, BK=16))
    assert text.count("tile.async_copy") == 4 and text.count("tile.async_wait 1") == 4
    assert "cp.async" in double_buffered.compile(x, o, BM=8, BK=16, arch="sm_80").asm["ptx"]
    with pytest.raises(tl.LangError, match="tl.async_wait's pending is an int from 0 to 7"):
        tl.kernel(lambda x: tl.async_wait(9)).ir(x)


# ---------------------------------------------------------------- found in review (each failed before its fix)


def test_where_map_and_sigmoid_keep_the_expanded_axis():
    @tl.kernel
    def gate(x, g, o, KIND: tl.constexpr):
        t = tl.load(x, (0, 0), shape=(16, 8))
        gv = tl.load(g, (0,), shape=(16,), axis=0)[:, None]
        w = {"sigmoid": lambda: tl.sigmoid(gv), "where": lambda: tl.where(gv > 0.0, 2.0, 0.5),
             "map": lambda: tl.map(lambda u: u * u, gv), "pow": lambda: gv ** 2}[KIND]()
        tl.store(o, (0, 0), t * w)

    x, g = rand(16, 8), rand(16)
    g64 = g.astype(np.float64)[:, None]
    refs = {"sigmoid": 1 / (1 + np.exp(-g64)), "where": np.where(g64 > 0, 2.0, 0.5), "map": g64 * g64, "pow": g64 ** 2}
    for kind, w in refs.items():
        o = nan_like(x)
        gate.interpret(x, g, o, grid=(1,), KIND=kind)
        assert rel_err(o, x * w) < 1e-6, kind


def test_loops_inside_python_blocks_carry_what_is_read_after_them():
    @tl.kernel
    def last_tile(x, o, WHERE: tl.constexpr):
        last = tl.zeros((4, 16))
        if WHERE == "if":
            for c in tl.range(0, 64, 16):
                last = tl.load(x, (0, c), shape=(4, 16))
        else:
            for _ in range(1):  # an unrolled Python loop around it
                for c in tl.range(0, 64, 16):
                    last = tl.load(x, (0, c), shape=(4, 16))
        for c in tl.range(0, 0, 16):  # runs no iteration: last keeps the first loop's value
            last = tl.zeros((4, 16))
        tl.store(o, (0, 0), last)

    x = rand(4, 64)
    for where in ("if", "for"):
        o = nan_like(rand(4, 16))
        last_tile.interpret(x, o, grid=(1,), WHERE=where)
        assert rel_err(o, x[:, 48:]) == 0, where


def test_a_name_given_its_value_on_one_branch_before_the_loop():
    """A name bound before a tl.range loop on one branch of a constexpr if only, and assigned in the
    body before it is read there, is that iteration's own value on the other branch (as in Python),
    carried on the first; read in the body before any value, the error names it."""

    @tl.kernel
    def once_or_each(x, o, FIRST: tl.constexpr):
        if FIRST:
            t = tl.load(x, (0, 0), shape=(4, 16))
        acc = tl.zeros((4, 16))
        for c in tl.range(0, 64, 16):
            if not FIRST:
                t = tl.load(x, (0, c), shape=(4, 16))
            acc = acc + t
        tl.store(o, (0, 0), acc)

    x = rand(4, 64)
    for first, want in ((True, 4 * x[:, :16]), (False, x.reshape(4, 4, 16).sum(1))):
        o = nan_like(rand(4, 16))
        once_or_each.interpret(x, o, grid=(1,), FIRST=first)
        assert rel_err(o, want) < 1e-6, first
        text = str(once_or_each.ir(x, o, FIRST=first))
        assert "%acc_1 = " in text and ("%t_1 = " in text) == first  # t carried only where it has a value

    def read_first(x, o, FIRST: tl.constexpr):
        if FIRST:
            t = tl.load(x, (0, 0), shape=(4, 16))
        acc = tl.zeros((4, 16))
        for c in tl.range(0, 64, 16):
            acc = acc + t  # MARK-unbound
            t = tl.load(x, (0, c), shape=(4, 16))
        tl.store(o, (0, 0), acc)

    _raises_at(lambda: tl.kernel(read_first).ir(x, x, FIRST=False), "# MARK-unbound",
               "'t', which has no value where its tl.range loop starts")
    o = nan_like(rand(4, 16))
    tl.kernel(read_first).interpret(x, o, grid=(1,), FIRST=True)  # carried from the value before the loop
    assert rel_err(o, x[:, :16] + x[:, :48].reshape(4, 3, 16).sum(1)) < 1e-6


def test_num_warps_is_a_python_int_while_tracing():
    @tl.kernel
    def warps_kernel(o):
        tl.store(o, (0,), tl.full((4,), float(tl.num_warps()), axis=1))

    for warps in (1, 4, 8):
        o = nan_like(rand(4))
        warps_kernel.interpret(o, grid=(1,), num_warps=warps)
        assert (o == warps).all(), warps


def test_the_loop_variable_after_the_loop_is_an_error():
    def uses_c(x, o):
        c = 0
        for c in tl.range(0, 64, 16):  # MARK-after
            t = tl.load(x, (0, c), shape=(4, 16))  # noqa: F841
        tl.store(o, (0, c), tl.zeros((4, 16)))

    x = rand(4, 64)
    _raises_at(lambda: tl.kernel(uses_c).ir(x, x), "# MARK-after", "the loop variable 'c' is read after")


def test_break_and_return_of_nested_python_code_are_allowed():
    @tl.kernel
    def nested_python(x, o):
        acc = tl.zeros((4, 16))
        for c in tl.range(0, 64, 16):
            def twice(v):
                return v * 2.0
            for k in range(4):
                if k == 1:
                    break
                acc = acc + twice(tl.load(x, (0, c), shape=(4, 16)))
        tl.store(o, (0, 0), acc)

    x = rand(4, 64)
    o = nan_like(rand(4, 16))
    nested_python.interpret(x, o, grid=(1,))
    assert rel_err(o, 2 * x.reshape(4, 4, 16).sum(1)) < 1e-5


def test_a_closure_kernel_with_a_loop():
    def make(w):
        @tl.kernel
        def summed(x, o):
            acc = tl.zeros((4, w))
            for c in tl.range(0, x.shape[1], w):
                acc = acc + tl.load(x, (0, c), shape=(4, w))
            tl.store(o, (0, 0), acc)
        return summed

    x = rand(4, 64)
    for w in (16, 32):
        o = nan_like(rand(4, w))
        make(w).interpret(x, o, grid=(1,))
        assert rel_err(o, x.reshape(4, 64 // w, w).sum(1)) < 1e-5


def test_signed_clamps_masks_as_integers_and_constant_tiles():
    @tl.kernel
    def window(x, o, W: tl.constexpr):
        start = tl.maximum(tl.block_id(0) * 4 - W, 0)  # below zero before the clamp
        t = tl.load(x, (start, 0), shape=(4, 8))
        count = (t > 0.0) + (t > 1.0)  # masks add as integers: 0, 1 or 2
        const = tl.full((4, 8), 5, tl.int32) * 2
        nonzero = count.to(tl.int1).to(tl.float32)
        tl.store(o, (tl.block_id(0) * 4, 0), count.to(tl.float32) * 100.0 + const.to(tl.float32) + nonzero)

    x = rand(8, 8) * 2
    o = nan_like(x)
    window.interpret(x, o, grid=(2,), W=6)
    count = (x > 0).astype(np.float64) + (x > 1)
    want = count * 100 + 10 + (count != 0)
    assert rel_err(o[:4], want[:4]) == 0  # block 0's start clamped to 0
    assert rel_err(o[4:], want[:4]) == 0  # block 1: 4 - 6 clamped to 0 as well


def test_constexprs_of_different_types_are_different_variants():
    @tl.kernel
    def flag(x, o, F: tl.constexpr):
        t = tl.load(x, (0, 0), shape=(4, 8))
        tl.store(o, (0, 0), t * 2.0 if F is True else t)

    x = rand(4, 8)
    o = nan_like(x)
    flag.interpret(x, o, grid=(1,), F=1)
    assert rel_err(o, x) == 0
    flag.interpret(x, o, grid=(1,), F=True)
    assert rel_err(o, 2 * x) == 0


def test_number_arguments_numpy_scalars_and_their_range():
    x = rand(8, 10)
    o = nan_like(x)
    scalars.interpret(x, o, np.float32(1.5), np.int64(3), grid=(2,), BM=4, N=16)
    assert rel_err(o, x.astype(np.float64) * 1.5 + 3 + 10 + 0.5) < 1e-6
    with pytest.raises(ValueError, match="does not fit an i64"):
        scalars.ir(x, o, 1.5, 2**64, BM=4, N=16)


def test_an_indented_kernels_error_column_and_a_verifier_reason():
    @tl.kernel
    def indented(x, o):
        """A docstring line at column 0 follows.
stays parseable."""
        t = tl.load(x, (0, 0), shape=(4, 8))
        tl.store(o, (0, 0), t + tl.load(x, (0, 0), shape=(8, 4)).to(tl.float16))  # MARK-indent

    x = rand(4, 8)
    message = _raises_at(lambda: indented.ir(x, x), "# MARK-indent", "tiles of shapes (4, 8) and (8, 4) do not broadcast")
    line = open(__file__).read().splitlines()[_line_of("# MARK-indent") - 1]
    assert f":{line.index('t + tl.load') + 1}: error" in message


@tl.kernel(num_warps=4)
def two_products(a, b, c, d, WAIT_FIRST: tl.constexpr):
    """c = a @ b.T and d = a @ b (A from registers), both wgmmas left running; WAIT_FIRST waits for
    the first group (pending=1) and stores c while d's may still run, else (wrongly) stores d after a
    wait that leaves d's group, the newest, running."""
    sa, sb = tl.alloc((64, 64), a.dtype), tl.alloc((64, 64), b.dtype)
    tl.copy(a, (0, 0), sa)
    tl.copy(b, (0, 0), sb)
    tl.barrier()
    rows = tl.warp_id() * 16
    s = tl.wgmma(sa, 0, sb, 0, tl.zeros((16, 64)), trans_b=True, wait=False)
    t = tl.wgmma(tl.load(a, (rows, 0), shape=(16, 64)), None, sb, 0, tl.zeros((16, 64)), wait=False)
    if WAIT_FIRST:
        s = tl.wgmma_wait(s, 1)
        tl.store(c, (rows, 0), s)
        t = tl.wgmma_wait(t, 0)
        tl.store(d, (rows, 0), t)
    else:
        t = tl.wgmma_wait(t, 1)  # t is the newest group: with one group pending, it may still run
        tl.store(d, (rows, 0), t)
        s = tl.wgmma_wait(s, 0)
        tl.store(c, (rows, 0), s)


def test_async_wgmma_waits_in_order():
    """Two async wgmmas (one with A from registers) waited for oldest first: right at tile level and in
    the lane interpreter, which tracks each group; waiting for the newest with one group left pending
    is an error there (its result is read while it may still run)."""
    a, b = rand(64, 64, dtype=np.float16), rand(64, 64, dtype=np.float16)
    want_c = a.astype(np.float64) @ b.astype(np.float64).T
    want_d = a.astype(np.float64) @ b.astype(np.float64)
    for after in (None, "tile-distribute"):
        c, d = np.full((64, 64), np.nan, np.float32), np.full((64, 64), np.nan, np.float32)
        two_products.interpret(a, b, c, d, WAIT_FIRST=True, grid=(1,), after=after)
        assert np.abs(c - want_c).max() / np.abs(want_c).max() < 1e-5
        assert np.abs(d - want_d).max() / np.abs(want_d).max() < 1e-5
    from tilec.interp import TileInterpreterError

    c, d = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    with pytest.raises(TileInterpreterError, match="frag.wgmma_wait completes its group"):
        two_products.interpret(a, b, c, d, WAIT_FIRST=False, grid=(1,), after="tile-distribute")
    ptx = two_products.compile(a, b, c, d, WAIT_FIRST=True, arch="sm_90a").asm["ptx"]
    assert ptx.count("wgmma.wait_group.sync.aligned 1;") == 1 and ptx.count("wgmma.wait_group.sync.aligned 0;") == 1


@tl.kernel(num_warps=4)
def carried_operand(a, b, d, STEPS: tl.constexpr):
    """d = sum over steps of P_{i-1} @ b, P_i = (a @ b.T) * (i + 1) rounded to a's type: the A operand
    from registers is made in one step and multiplied in the next (attention's P carried to the next
    tile's P @ V)."""
    sa, sb = tl.alloc((64, 64), a.dtype), tl.alloc((64, 64), b.dtype)
    tl.copy(a, (0, 0), sa)
    tl.copy(b, (0, 0), sb)
    tl.barrier()
    rows = tl.warp_id() * 16
    p = tl.zeros((16, 64), a.dtype)
    acc = tl.zeros((16, 64))
    for i in tl.range(0, STEPS, 1):
        acc = tl.wgmma(p, None, sb, 0, acc)
        s = tl.wgmma(sa, 0, sb, 0, tl.zeros((16, 64)), trans_b=True)
        p = (s * (i + 1).to(tl.float32)).to(a.dtype)
    tl.store(d, (rows, 0), acc)


def test_a_register_operand_carried_across_a_loop_stays_packed():
    """The A operand of a wgmma from registers, carried by a loop to the next step, is held as the
    wgmma reads it (two 16-bit values a register) all the way: the loop carries 32-bit pairs, and no
    pair is unpacked to f32 and packed again each step."""
    a, b = rand(64, 64, dtype=np.float16) * 0.25, rand(64, 64, dtype=np.float16) * 0.25
    s = (a.astype(np.float64) @ b.astype(np.float64).T)
    want = sum((s * i).astype(np.float16).astype(np.float64) @ b.astype(np.float64) for i in range(1, 3))
    for after in (None, "tile-distribute"):
        d = np.full((64, 64), np.nan, np.float32)
        carried_operand.interpret(a, b, d, STEPS=3, grid=(1,), after=after)
        assert np.abs(d - want).max() / np.abs(want).max() < 1e-3
    ptx = carried_operand.compile(a, b, d, STEPS=3, arch="sm_90a").asm["ptx"]
    assert "cvt.f32.f16" not in ptx  # no pair unpacked


def test_an_async_wgmma_result_is_read_only_after_a_wait():
    @tl.kernel(num_warps=4)
    def unwaited(a, b, c):
        sa, sb = tl.alloc((64, 64), a.dtype), tl.alloc((64, 64), b.dtype)
        tl.copy(a, (0, 0), sa)
        tl.copy(b, (0, 0), sb)
        tl.barrier()
        s = tl.wgmma(sa, 0, sb, 0, tl.zeros((16, 64)), wait=False)
        tl.store(c, (tl.warp_id() * 16, 0), s * 2.0)  # MARK-unwaited

    a = rand(64, 64, dtype=np.float16)
    with pytest.raises(Exception, match="still being written: 'tile.mul' may not use it before a tile.wgmma_wait"):
        unwaited.compile(a, a, rand(64, 64), arch="sm_90a")


# ---------------------------------------------------------------- warp groups taking turns


@tl.kernel(num_warps=8)
def rows_in_turns(x, o, STEPS: tl.constexpr):
    """Each warp scales its 16 rows, in a range loop, the two warpgroups taking turns."""
    r = tl.warp_id() * 16
    t = tl.load(x, (r, 0), shape=(16, 32))
    for i in tl.range(0, STEPS, 1):
        with tl.turns(2):
            t = t * 2.0
        t = t + 1.0
    tl.store(o, (r, 0), t)


@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_turns_change_the_schedule_never_a_value(after):
    """``with tl.turns(2)``: tile.turn_begin/end around the body; after tile-distribute the lane
    interpreter runs its named barriers (every group takes 3 turns, so none waits forever)."""
    x = rand(128, 32)
    o = nan_like(x)
    rows_in_turns.interpret(x, o, grid=(1,), STEPS=3, after=after)
    want = x
    for _ in range(3):
        want = want * 2 + 1
    assert rel_err(o, want) < 1e-6
    ir = str(rows_in_turns.ir(x, o, STEPS=3))
    assert "tile.turn_begin 2" in ir and "tile.turn_end 2" in ir


def test_turns_refuse_a_bad_group_count():
    @tl.kernel(num_warps=8)
    def bad(x, G: tl.constexpr):
        with tl.turns(G):
            tl.barrier()

    for g in (1, 16, 2.0):
        with pytest.raises(tl.LangError, match="tl.turns: groups must be an int from 2 to 15"):
            bad.ir(rand(4, 4), G=g)


def test_a_group_that_takes_fewer_turns_never_ends():
    """Group 1 skips the turn group 0 takes: on the GPU group 0's next bar.sync never completes; the
    lane interpreter says so (named barrier 1 lacks group 1's hand-over)."""
    from tilec.dialects.abi import gl_params
    from tilec.dialects.context import make_context
    from tilec.runtime.gl_views import expand
    from tilec.interp import TileInterpreterError, parse_module, run
    from tilec.passes.registry import build_pipeline

    module = parse_module('''
      func.func @k(%o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [256, 1, 1], smem = 0>} {
        %c4 = arith.constant 4 : index
        %w = tile.warp_id
        %first = arith.cmpi ult, %w, %c4 : index
        scf.if %first {
          tile.turn_begin 2
          tile.turn_end 2
        }
        tile.turn_begin 2
        tile.turn_end 2
        func.return
      }''')
    build_pipeline("tile-layout,tile-distribute").apply(make_context(), module)
    with pytest.raises(TileInterpreterError, match="named barrier 1: waits for phase .* never ends"):
        run(module, "k", *expand(gl_params(module.body.block.first_op), np.zeros((1, 1), np.float32),
                                 signature_length=5), grid=(1, 1, 1))


# ---------------------------------------------------------------- a producer warpgroup (warp specialisation)


def _matmul_wgmma(producer: bool):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "lang" / "matmul.py"
    spec = importlib.util.spec_from_file_location("lang_example_matmul_ws", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, tl.Kernel(module.matmul_wgmma.fn, num_warps=8, num_stages=3, bulk=True, producer=producer)


@pytest.mark.parametrize("after", ["tile-pipeline", "tile-distribute"])
@pytest.mark.parametrize("mnk, cfg, stages", [((150, 72, 200), dict(BM=128, BN=64, BK=64), 3),
                                              ((130, 136, 96), dict(BM=128, BN=128, BK=32), 4),
                                              ((64, 128, 0), dict(BM=128, BN=128, BK=32), 2)], ids=str)
def test_a_producer_warpgroup_feeds_the_wgmma_gemm(after, mnk, cfg, stages):
    """examples/lang/matmul.py's sm_90a GEMM with ``producer=True``: a third warpgroup issues the bulk
    copies of every K step ahead of the two that multiply, whose wgmmas stay in flight across K
    steps; ragged M, N and K (and K = 0), in the tile interpreter after tile-pipeline and the lane
    interpreter after tile-distribute."""
    module, kernel = _matmul_wgmma(True)
    m, n, k = mnk
    a, b = rand(m, k, dtype=np.float16), rand(k, n, dtype=np.float16)
    c = np.full((m, n), np.nan, np.float16)
    kernel.interpret(a, b, c, grid=module.grid(m, n, **cfg), after=after, num_stages=stages, **cfg)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert (rel_err(c, ref) if k else np.abs(c).max()) < 2e-3
    ptx = kernel.compile(a, b, c, arch="sm_90a", num_stages=stages, **cfg).asm["ptx"]
    if not k:  # empty rows promise no alignment: no tensor map, so cp.async and no producer
        assert ".maxntid 256, 1, 1" in ptx and "setmaxnreg" not in ptx
        return
    assert ".maxntid 384, 1, 1" in ptx and "setmaxnreg.inc.sync.aligned.u32 240" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx
    assert "bar.sync \t0, 256" not in ptx  # the stages are all the consumers share: no consumer barrier
    assert "wgmma.wait_group.sync.aligned 1" in ptx  # the wgmmas stay in flight across K steps


@tl.kernel(num_warps=8, num_stages=2, bulk=True, producer=True)
def matmul_in_turns(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A one-block GEMM fed by a producer warpgroup whose two consumer warpgroups issue their wgmmas
    in turns (FlashAttention-3's ping-pong)."""
    warp = tl.warp_id()
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    acc = tl.zeros((16, BN))
    for k in tl.range(0, a.shape[1], BK):
        tl.copy(a, (0, k), sa)
        tl.copy(b, (k, 0), sb)
        tl.barrier()
        with tl.turns(2):
            acc = tl.wgmma(sa, warp // 4 * 64, sb, 0, acc, wait=False)
        acc = tl.wgmma_wait(acc, 0)
        tl.barrier()
    tl.store(c, (warp * 16, 0), acc.to(c.dtype))


def test_consumer_warpgroups_take_turns_beside_a_producer():
    """``tl.turns`` in a warp-specialised kernel: the turns are the consumer warpgroups' (named
    barriers counting their 256 threads, the producer warpgroup never waiting at them)."""
    a, b = rand(128, 96, dtype=np.float16), rand(96, 64, dtype=np.float16)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    cfg = dict(BM=128, BN=64, BK=32)
    for after in ("tile-pipeline", "tile-distribute"):
        c = np.full((128, 64), np.nan, np.float16)
        matmul_in_turns.interpret(a, b, c, grid=(1,), after=after, **cfg)
        assert rel_err(c, ref) < 2e-3
    ptx = matmul_in_turns.compile(a, b, c, arch="sm_90a", **cfg).asm["ptx"]
    assert ".maxntid 384, 1, 1" in ptx and "setmaxnreg.inc.sync.aligned.u32 240" in ptx
    assert "bar.arrive \t1, 256" in ptx and "bar.sync \t1, 256" in ptx


@pytest.mark.parametrize("producer, bulk_store", [(True, True), (True, False), (False, False)],
                         ids=["producer-tma-store", "producer", "no-producer"])
@pytest.mark.parametrize("after", ["tile-pipeline", "tile-distribute"])
@pytest.mark.parametrize("mnk, blocks", [((300, 200, 160), 3), ((64, 128, 0), 2)], ids=str)
def test_a_persistent_gemm_loops_over_its_tiles(producer, bulk_store, after, mnk, blocks):
    """examples/lang/matmul.py's ``matmul_persistent``: fewer blocks than tiles, each looping over
    several (ragged M, N and K, and K = 0). With a producer both roles run the tile loop and the
    stage ring runs on from tile to tile; without one the K loop's barriers start afresh each
    tile (before, the lane interpreter found the second tile's wait never ending). As the example
    is written (``bulk_store=True``) each warp stores its C tile by bulk tensor stores."""
    module, _ = _matmul_wgmma(producer)
    kernel = tl.Kernel(module.matmul_persistent.fn, num_warps=8, num_stages=3, bulk=True, producer=producer,
                       bulk_store=bulk_store)
    m, n, k = mnk
    cfg = dict(BM=128, BN=64, BK=32)
    a, b = rand(m, k, dtype=np.float16), rand(k, n, dtype=np.float16)
    c = np.full((m, n), np.nan, np.float16)
    kernel.interpret(a, b, c, grid=(blocks,), after=after, **cfg)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    assert (rel_err(c, ref) if k else np.abs(c).max()) < 2e-3
    if k and after == "tile-distribute":
        ptx = kernel.compile(a, b, c, arch="sm_90a", **cfg).asm["ptx"]
        assert (".maxntid 384, 1, 1" in ptx) == producer and ("setmaxnreg" in ptx) == producer
        assert "%nctaid.x" in ptx  # the stride over the tiles: tl.num_blocks(0)
        assert ("cp.async.bulk.tensor.2d.global.shared::cta" in ptx) == bulk_store


@pytest.mark.parametrize("after", [None, "tile-pipeline", "tile-distribute"])
def test_an_fp8_gemm_with_scales_read_in_the_kernel(after):
    """examples/lang/matmul.py's ``matmul_fp8``: e4m3 A (M x K) and W (N x K) read K-major by K = 32
    wgmmas, ``tl.load_scalar`` scales multiplying the accumulator inside the epilogue's map (no tile of
    copies), bulk tensor stores; K steps of 64 bytes (the 64-byte swizzle). The arrays are described
    for the specialisation (numpy has no FP8) and the interpreters run on float32 arrays of FP8 values."""
    from test_matmul import FakeCudaArray
    from xdsl.dialects import func

    from tilec.dialects.abi import gl_params
    from tilec.interp import run
    from tilec.interp.dtypes import round_f8
    from tilec.runtime.gl_views import expand

    module, _ = _matmul_wgmma(True)
    kernel = module.matmul_fp8
    m, n, k, cfg = 300, 136, 160, dict(BM=128, BN=64, BK=64)
    at = [0x7E0000000000 + (i << 32) for i in range(5)]
    described = (FakeCudaArray((m, k), "float8_e4m3fn", address=at[0]),
                 FakeCudaArray((n, k), "float8_e4m3fn", address=at[1]), FakeCudaArray((m, n), "float32", address=at[2]),
                 FakeCudaArray((1,), "float32", address=at[3]), FakeCudaArray((1,), "float32", address=at[4]))
    ir = kernel.ir(*described, **cfg)
    assert "tile.load_scalar" in str(ir) and "tile.fill" not in str(ir)
    a, w = round_f8(rand(m, k) * 3, "f8E4M3FN"), round_f8(rand(n, k), "f8E4M3FN")
    sa, sb = np.array([0.5], np.float32), np.array([1.25], np.float32)
    c = np.full((m, n), np.nan, np.float32)
    lowered = ir if after is None else kernel._lowered(ir, kernel._pipeline(None, None, None), after)
    fn = next(op for op in lowered.body.block.ops if isinstance(op, func.FuncOp))
    args = (a, w, c, sa, sb)
    if after == "tile-distribute":
        args = expand(gl_params(fn), *args, signature_length=len(fn.function_type.inputs.data))
    run(lowered, fn.sym_name.data, *args, grid=(3,))
    assert rel_err(c, a.astype(np.float64) @ w.astype(np.float64).T * 0.625) < 1e-5
    if after == "tile-distribute":
        ptx = kernel.compile(*described, arch="sm_90a", **cfg).asm["ptx"]
        assert "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3" in ptx and ptx.count("ld.global") == 2
        assert "cp.async.bulk.tensor.2d.global.shared::cta" in ptx


@tl.kernel(num_warps=1)
def shifted_by_the_grid(x, o):
    """Each block adds the launch's block counts to its 32 values (``tl.num_blocks``)."""
    i = tl.block_id(0)
    v = tl.load(x, (i * 32,), shape=(32,))
    tl.store(o, (i * 32,), v + (tl.num_blocks(0) * 10 + tl.num_programs(1)).to(tl.float32))


@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_num_blocks_is_the_launch_grid(after):
    """``tl.num_blocks(axis)`` (``tile.grid_dim``, ``%nctaid``) in both interpreters and the PTX."""
    x = rand(96)
    o = np.full_like(x, np.nan)
    shifted_by_the_grid.interpret(x, o, grid=(3, 2), after=after)
    assert np.array_equal(o, x + 32.0)
    ptx = shifted_by_the_grid.compile(x, o, arch="sm_80").asm["ptx"]
    assert "%nctaid.x" in ptx and "%nctaid.y" in ptx


@tl.kernel(num_warps=1, cluster=2)
def shifted_by_the_cluster(x, o):
    """Each block adds its cluster, its rank in it and the number of clusters to its 32 values, after
    meeting the other block of its cluster."""
    i = tl.block_id(0)
    v = tl.load(x, (i * 32,), shape=(32,))
    tl.cluster_barrier()
    tl.store(o, (i * 32,), v + (tl.cluster_id(0) * 100 + tl.block_rank() * 10 + tl.num_clusters(0)).to(tl.float32))


@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_cluster_ids_in_the_language(after):
    """``cluster=2``: blocks 0-1 are cluster 0 (ranks 0, 1), blocks 2-3 cluster 1; both interpreters run
    a cluster's blocks together (the cluster barrier); the PTX asks for the cluster. A grid that is not
    whole clusters is refused, as is a cluster past 8 blocks."""
    x = rand(128)
    o = np.full_like(x, np.nan)
    shifted_by_the_cluster.interpret(x, o, grid=(4,), after=after)
    want = np.repeat([2.0, 12.0, 102.0, 112.0], 32).astype(np.float32)
    assert np.array_equal(o, x + want)
    ptx = shifted_by_the_cluster.compile(x, o, arch="sm_90a").asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx and "%cluster_ctarank" in ptx and "barrier.cluster.wait" in ptx
    with pytest.raises(Exception, match="is not whole thread-block clusters of \\[2, 1, 1\\]"):
        shifted_by_the_cluster.interpret(x, o, grid=(3,), after=after)
    with pytest.raises(ValueError, match=r"cluster \[4, 4, 1\] has more than 8 blocks"):
        tl.kernel(shifted_by_the_cluster.fn, cluster=(4, 4))


def test_the_producer_needs_bulk_copies():
    module, _ = _matmul_wgmma(True)
    with pytest.raises(ValueError, match="producer=True feeds the K loops' bulk copies: give bulk=True too"):
        tl.Kernel(module.matmul_wgmma.fn, num_warps=8, producer=True)


def test_a_kernel_with_other_options():
    """``with_options``: the same function under other compile defaults, checked as ``tl.kernel`` checks
    them; the original keeps its own."""
    module, kernel = _matmul_wgmma(True)
    stored = kernel.with_options(bulk_store=True, num_stages=4)
    assert (stored.fn, stored.bulk_store, stored.num_stages, stored.producer) == (kernel.fn, True, 4, True)
    assert (kernel.bulk_store, kernel.num_stages) == (False, 3)
    with pytest.raises(TypeError, match="with_options takes num_warps, .*; got stages"):
        kernel.with_options(stages=4)
    with pytest.raises(ValueError, match="producer=True feeds the K loops' bulk copies"):
        kernel.with_options(bulk=False)


def test_element_types_and_exponents_are_checked_at_the_line():
    """A numpy scalar type is an element type (``np.float16``); an unknown one, or a traced exponent
    of ``**``, is an error at the user's line that names it."""

    @tl.kernel
    def cast(x, o, DT: tl.constexpr):
        tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(16, 16)).to(DT).to(tl.float32))

    @tl.kernel
    def power(x, o, n):
        tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(16, 16)) ** n)

    x = rand(16, 16)
    o = nan_like(x)
    cast.interpret(x, o, grid=(1,), DT=np.float16)
    assert rel_err(o, x.astype(np.float16).astype(np.float64)) == 0
    with pytest.raises(tl.LangError, match=r"test_lang.py:\d+:\d+: error: expected an element type .* got 'complex64'"):
        cast.interpret(x, o, grid=(1,), DT="complex64")
    with pytest.raises(tl.LangError, match=r"test_lang.py:\d+:\d+: error: x \*\* y: the exponent is a Python number"):
        power.interpret(x, o, 2, grid=(1,))


def test_python_numbers_changed_in_a_loop_are_carried_as_scalars():
    """``acc = 0.0; cnt = 0`` before a ``tl.range`` loop that adds to them (Triton's idiom): carried as an f32
    and an index scalar; both interpreters agree with float64 and the PTX assembles. A Python value
    that is not a number still has to be traced before the loop."""

    @tl.kernel
    def running(x, o, n):
        acc = 0.0
        cnt = 0
        for i in tl.range(n):
            acc = acc + tl.load_scalar(x, (i * 16, 3))
            cnt = cnt + 1
        tl.store(o, (0, 0), tl.full((16, 16), 1.0, tl.float32) * acc + cnt.to(tl.float32))

    @tl.kernel
    def not_a_number(x, o, n):
        shape = (16, 16)
        for i in tl.range(n):
            shape = tl.load(x, (0, 0), shape=(16, 16))
        tl.store(o, (0, 0), shape)

    @tl.kernel
    def chained(o, n):
        a = 0
        b = 0
        for i in tl.range(n):
            b = a  # b changes only once a is a scalar: a third trace
            a = a + 1
        tl.store(o, (0, 0), tl.full((16, 16), 1.0, tl.float32) * b.to(tl.float32))

    x = rand(64, 16)
    want = np.full((16, 16), x[[0, 16, 32, 48], 3].astype(np.float64).sum() + 4)
    for after in (None, "tile-distribute"):
        o = np.full((16, 16), np.nan, np.float32)
        running.interpret(x, o, 4, grid=(1,), after=after)
        assert rel_err(o, want) < 1e-6, after
        o = np.full((16, 16), np.nan, np.float32)
        chained.interpret(o, 4, grid=(1,), after=after)
        assert (o == 3.0).all(), after  # Python's (and Triton's) b after the loop: n - 1
    assert ".target" in running.compile(x, o, 4, arch="sm_80").asm["ptx"]
    with pytest.raises(tl.LangError, match=r"test_lang.py:\d+:\d+: error: 'shape' is the Python value \(16, 16\) before "
                                           r"the loop and changes in its body"):
        not_a_number.interpret(x, o, 2, grid=(1,))


def test_triton_style_helpers():
    """``tl.dot`` (an f32 accumulator of zeros when none is given), ``tl.cdiv``, ``tl.static_range`` (a
    Python range: unrolled), ``tl.clamp``, ``tl.floor``/``ceil`` (exact) and ``tl.sin``/``cos`` (PTX's
    approximate instructions on the GPU): both interpreters against float64, and the PTX assembles."""

    @tl.kernel
    def helpers(a, b, o, K: tl.constexpr):
        acc = tl.dot(tl.load(a, (0, 0), shape=(16, 32)), tl.load(b, (0, 0), shape=(32, 16)))
        for j in tl.static_range(tl.cdiv(K, 16)):  # K = 20: two more products, unrolled
            acc = tl.dot(tl.load(a, (0, 32 + 16 * j), shape=(16, 16)), tl.load(b, (32 + 16 * j, 0), shape=(16, 16)),
                         acc)
        waves = tl.sin(acc) * tl.cos(acc) + tl.floor(acc) - tl.ceil(acc * 0.5)
        tl.store(o, (0, 0), tl.clamp(waves, -3.0, 3.0))

    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 64)).astype(np.float16)
    b = rng.standard_normal((64, 16)).astype(np.float16)
    p = a.astype(np.float64) @ b.astype(np.float64)
    want = np.clip(np.sin(p) * np.cos(p) + np.floor(p) - np.ceil(p * 0.5), -3, 3)
    for after in (None, "tile-distribute"):
        o = np.full((16, 16), np.nan, np.float32)
        helpers.interpret(a, b, o, grid=(1,), after=after, K=20)
        near_integer = np.abs(p - np.round(p)) < 1e-3  # f32 sums that land on the other side of an integer
        assert np.abs(o - want)[~near_integer].max() < 1e-4, after
    assert "sin.approx.f32" in helpers.compile(a, b, o, arch="sm_80", K=20).asm["ptx"]
    assert tl.cdiv(65, 16) == 5


def test_an_f32_mma_reads_tf32_in_both_interpreters():
    """``tl.mma`` of f32 tiles runs on the tf32 atom: the tile interpreter rounds the operands to tf32 as the
    lane interpreter (and the GPU) does, so the two agree to f32 summation order, not to tf32's 1e-3."""

    @tl.kernel
    def product(a, b, o):
        acc = tl.mma(tl.load(a, (0, 0), shape=(16, 32)), tl.load(b, (0, 0), shape=(32, 16)), tl.zeros((16, 16)))
        tl.store(o, (0, 0), acc)

    a, b = rand(16, 32), rand(32, 16)
    a[0, 0] = 1.0 + 2.0**-12  # not a tf32 value: rounds to 1.0
    outs = []
    for after in (None, "tile-distribute"):
        o = np.full((16, 16), np.nan, np.float32)
        product.interpret(a, b, o, grid=(1,), after=after)
        outs.append(o)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert rel_err(outs[0], exact) > 1e-5  # tf32, not f32
    assert np.abs(outs[0] - outs[1]).max() / np.abs(exact).max() < 1e-6


def test_f16_to_bf16_compiles_through_f32():
    """``.to(tl.bfloat16)`` of an f16 tile: LLVM has no cast between the two 16-bit types (it rejected the
    IR), so the conversion goes through f32, which rounds exactly as a direct one would."""

    @tl.kernel(num_warps=1)
    def f16_to_bf16(x, o):
        tl.store(o, (0, 0), tl.load(x, (0, 0), shape=(16, 16)).to(tl.bfloat16).to(tl.float32))

    x = (np.arange(256, dtype=np.float32).reshape(16, 16) / 7).astype(np.float16)
    outs = []
    for after in (None, "tile-distribute"):
        o = np.full((16, 16), np.nan, np.float32)
        f16_to_bf16.interpret(x, o, grid=(1,), after=after)
        outs.append(o)
    assert np.array_equal(outs[0], outs[1]) and 0 < np.abs(outs[0] - x).max() < 0.1
    assert "cvt.rn.bf16.f32" in f16_to_bf16.compile(x, o, arch="sm_80").asm["ptx"]


# ---------------------------------------------------------------- session 28's hunt: integers, vectors, loops


@tl.kernel
def int_bits(a, o, N: tl.constexpr):
    x = tl.load(a, (0,), shape=(N,))
    y = tl.load(a, (N,), shape=(N,))
    tl.store(o, (0,), x & y)
    tl.store(o, (N,), (x | y) ^ ~x)
    tl.store(o, (2 * N,), x << 3)
    tl.store(o, (3 * N,), x >> 2)  # arithmetic: the sign comes in
    tl.store(o, (4 * N,), 1 << (x & 7))
    tl.store(o, (5 * N,), tl.sum(x > 0) + x * 0)  # a mask sums as int32


@pytest.mark.parametrize("after", [None, "tile-layout", "tile-distribute"])
def test_int32_bit_operations_with_negative_values(after):
    a = RNG.integers(-2**31, 2**31, 128, dtype=np.int64).astype(np.int32)
    a[:4] = [-1, 0, 2**31 - 1, -2**31]
    x, y = a[:64], a[64:]
    o = np.full(6 * 64, 12345, np.int32)
    int_bits.interpret(a, o, grid=(1,), N=64, after=after)
    want = [x & y, (x | y) ^ ~x, (x.astype(np.int64) << 3).astype(np.int32), x >> 2, (1 << (x & 7)).astype(np.int32),
            np.full(64, (x > 0).sum(), np.int32)]
    for k, w in enumerate(want):
        assert (o[64 * k:64 * (k + 1)] == w).all(), k


@tl.kernel
def row_vectors_from_nothing(x, o, BM: tl.constexpr, BN: tl.constexpr):
    """Triton's accumulators: 1-D vectors made before a loop (no axis), added to row reductions in it."""
    acc = tl.zeros((BM,))
    m = tl.full((BM,), float("-inf"))
    last = tl.zeros((BM,))
    for c in tl.range(0, x.shape[1], BN):
        t = tl.load(x, (0, c), shape=(BM, BN), other=float("-inf"))
        acc = acc + tl.sum(tl.where(t == float("-inf"), 0.0, t), axis=1)
        m = tl.maximum(m, tl.max(t, axis=1))
        last = tl.sum(tl.where(t == float("-inf"), 0.0, t), axis=1)  # assigned, not combined
    total = tl.zeros((BM,))
    for r in tl.range(0, 2):  # nested: the inner loop's need reaches the outer loop's initial value
        for c in tl.range(0, x.shape[1], BN):
            total = total + tl.sum(tl.load(x, (0, c), shape=(BM, BN)), axis=1)
    tl.store(o, (0, 0), acc[:, None])
    tl.store(o, (0, 1), m[:, None])
    tl.store(o, (0, 2), last[:, None])
    tl.store(o, (0, 3), total[:, None])
    tl.store(o, (BM, 0), tl.sum(tl.load(x, (0, 0), shape=(BM, 4)), axis=0)[None, :])  # a row of a 2-D array


@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_vectors_made_from_nothing_take_the_orientation_they_meet(after):
    x = rand(8, 40)
    o = np.full((9, 4), np.nan, np.float32)
    row_vectors_from_nothing.interpret(x, o, grid=(1,), BM=8, BN=16, after=after)
    x64 = x.astype(np.float64)
    assert rel_err(o[:8, 0], x64.sum(1)) < 1e-6 and rel_err(o[:8, 1], x64.max(1)) == 0
    assert rel_err(o[:8, 2], x64[:, 32:].sum(1)) < 1e-6 and rel_err(o[:8, 3], 2 * x64.sum(1)) < 1e-6
    assert rel_err(o[8], x64[:, :4].sum(0)) < 1e-6


@tl.kernel(num_warps=2)
def both_orientations(x, o, N: tl.constexpr):
    """numpy's 1-D arrays: a row reduction's vector meets a column reduction's (one of them turned,
    through a tile of one row, transposed), and a column maximum expanded down the rows."""
    t = tl.load(x, (0, 0), shape=(N, N))
    tl.store(o, (0, 0), (tl.sum(t, axis=1) + tl.sum(t, axis=0))[None, :])
    tl.store(o, (1, 0), t - tl.max(t, axis=0)[:, None])


@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_vectors_of_both_orientations_meet_as_numpy_arrays(after):
    x = rand(16, 16)
    o = np.full((17, 16), np.nan, np.float32)
    both_orientations.interpret(x, o, grid=(1,), N=16, after=after)
    x64 = x.astype(np.float64)
    assert rel_err(o[0], x64.sum(1) + x64.sum(0)) < 1e-6
    assert rel_err(o[1:], x64 - x64.max(0)[:, None]) < 1e-6


@tl.kernel
def list_in_loop(x, o, N: tl.constexpr):
    accs = [tl.zeros((N,)), tl.zeros((N,))]
    for i in tl.range(0, 3):
        accs[0] = accs[0] + tl.load(x, (i * N,), shape=(N,))  # MARK-list
    tl.store(o, (0,), accs[0])


@tl.kernel
def int_other(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.load(x, (0,), shape=(N,), other=float("-inf")))  # MARK-other


def test_errors_of_the_hunt_point_at_the_line():
    x = rand(16, 16)
    _raises_at(lambda: list_in_loop.ir(x[0], x[0], N=8), "MARK-list",
               "'accs[0]' is assigned inside a tl.range loop: a loop carries names only")
    xi = x.astype(np.int32)
    _raises_at(lambda: int_other.ir(xi[0], xi[0], N=16), "MARK-other",
               "other=-inf is not an int32 value for 'x' of tl.int32")


@tl.kernel
def run_time_step(x, s, o, N: tl.constexpr):
    acc = tl.zeros((N,))
    for i in tl.range(0, 4, tl.load_scalar(s, (0,))):
        acc = acc + tl.load(x, (i * N,), shape=(N,))
    tl.store(o, (0,), acc)


@pytest.mark.parametrize("after", [None, "tile-distribute"])
@pytest.mark.parametrize("step", [0, -1])
def test_a_run_time_step_that_never_reaches_the_stop_runs_no_iteration(after, step):
    """range(0, 4, -1) is empty in Python; a zero step (Python raises, Triton's loop would not end) runs
    no iteration either: the trip count of a run-time step of either sign (tilec.lang.loop)."""
    o = np.full(8, np.nan, np.float32)
    run_time_step.interpret(rand(32), np.array([step], np.int32), o, grid=(1,), N=8, after=after)
    assert (o == 0).all()


@tl.kernel
def int_scalars_meet_floats(x, o, n, N: tl.constexpr):
    """An int argument, a program id and an extent (integer scalars) meeting float tiles are converted,
    as in Triton; a Python int takes the tile's type."""
    t = tl.load(x, (0,), shape=(N,))
    tl.store(o, (0,), t * n + tl.program_id(0) + x.shape[0] - 1)


@pytest.mark.parametrize("after", [None, "tile-distribute"])
def test_integer_scalars_meeting_floats_are_converted(after):
    x = rand(64)
    o = np.full(64, np.nan, np.float32)
    int_scalars_meet_floats.interpret(x, o, -3, grid=(1,), N=64, after=after)
    assert rel_err(o, x.astype(np.float64) * -3 + 63) < 1e-6


@tl.kernel(num_warps=1)
def strided_copy(x, o, stride, n, B: tl.constexpr):
    i = tl.arange(0, B)
    tl.store(o + i, tl.load(x + i * stride, mask=i < n, other=0.0), mask=i < n)


def test_integer_arguments_equal_to_one_are_specialised():
    """Triton's rule: an int argument equal to 1 is the constant 1 in a variant of its own (a stride of 1
    makes the offsets consecutive), still passed at the launch; do_not_specialize keeps one variant."""
    x = RNG.standard_normal(64).astype(np.float32)
    o = np.full(32, np.nan, np.float32)
    one, three = strided_copy.ir(x, o, 1, 32, B=32), strided_copy.ir(x, o, 3, 32, B=32)
    spec = strided_copy.specialize
    assert spec(x, o, 1, 32, B=32) != spec(x, o, 3, 32, B=32) == spec(x, o, 2, 32, B=32)
    fn = one.body.block.first_op
    stride = fn.body.block.args[2]
    assert stride.name_hint == "stride" and not list(stride.uses)  # read as the constant
    assert list(three.body.block.first_op.body.block.args[2].uses)
    for s in (1, 2):
        o[:] = np.nan
        strided_copy.interpret(x, o, s, 32, grid=(1,), B=32, after="tile-distribute")
        np.testing.assert_array_equal(o, x[::s][:32])
    kept = strided_copy.with_options(do_not_specialize=("stride",))
    assert kept.specialize(x, o, 1, 32, B=32) == kept.specialize(x, o, 3, 32, B=32)
    assert tl.kernel(strided_copy.fn, do_not_specialize=[2]).do_not_specialize == {"stride"}
    with pytest.raises(ValueError, match="do_not_specialize names a parameter"):
        tl.kernel(strided_copy.fn, do_not_specialize=["strides"])


@tl.kernel
def pointer_type_habit(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.load(x, (0,), shape=(N,)).to(o.type.element_ty))  # Triton's pointer type, vLLM's habit


@tl.kernel
def attribute_habit(x, o, N: tl.constexpr):
    tl.store(o, (0,), tl.load(x, (0,), shape=(N,)).to(o.element_ty))  # MARK-element-ty


def test_an_attribute_a_value_lacks_is_an_error_at_the_line():
    """Triton's ``ptr.type.element_ty`` and ``ptr.dtype.element_ty`` both name the element type; an attribute
    a value lacks is an error at the user's line, with a hint for the element type."""
    x, o = rand(8), np.full(8, np.nan, np.float16)
    pointer_type_habit.interpret(x, o, N=8, grid=(1,))
    assert np.array_equal(o, x.astype(np.float16))
    _raises_at(lambda: attribute_habit.ir(x, x, N=8), "# MARK-element-ty", "x.dtype.element_ty")


def test_ir_returns_a_copy_the_variant_keeps_its_own():
    """``ir()`` gave the cached module itself: passes run on it changed what later ``interpret`` and
    ``compile`` calls of the variant ran (hunt 2 of session 38)."""
    from tilec.dialects.context import make_context
    from tilec.passes.registry import build_pipeline

    x, o = rand(16, 32), nan_like(rand(16, 32))
    first = softmax.ir(x, o, BM=16, N=32)
    for p in build_pipeline("tile-layout,tile-distribute").passes:
        p.apply(make_context(), first)
    assert str(softmax.ir(x, o, BM=16, N=32)) != str(first)
    softmax.interpret(x, o, grid=(1,), BM=16, N=32)
    e = np.exp(x - x.max(1, keepdims=True))
    assert rel_err(o, e / e.sum(1, keepdims=True)) < 1e-5
