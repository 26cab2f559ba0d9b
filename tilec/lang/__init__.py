"""``import tilec.lang as tl``: tile kernels written in Python.

    @tl.kernel
    def softmax(x, o, BM: tl.constexpr, N: tl.constexpr):
        r = tl.block_id(0) * BM
        t = tl.load(x, (r, 0), shape=(BM, N), other=float("-inf")).to(tl.float32)
        e = tl.exp(t - tl.row_max(t)[:, None])
        tl.store(o, (r, 0), (e / tl.row_sum(e)[:, None]).to(o.dtype))

    softmax.compile(x, o, BM=16, N=1024, arch="sm_90")   # the CompiledKernel, no GPU needed
    softmax.interpret(x, o, grid=(19,), BM=16, N=1024)    # the CPU interpreter, o written in place
    softmax[(19,)](x, o, BM=16, N=1024)                   # launched on the GPU

The function runs once per specialisation with traced values (:mod:`tilec.lang.values`) and
builds the tile dialect's ops (:mod:`tilec.lang.ops`); ``for i in tl.range(...)`` loops become
``scf.for`` (:mod:`tilec.lang.source_rewrite`, :mod:`tilec.lang.loop`). Everything below is
the compiler every tile kernel goes through: tiles of the block are distributed over its warps
by ``tile-layout``, reductions and broadcasts lowered by ``tile-distribute``.
"""

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from tilec.lang import branch, loop  # noqa: F401  branch: a traced scalar's run-time if
from tilec.lang.dtypes import (DType, bfloat16, float8_e4m3fn, float8_e5m2, float8e4nv, float8e5, float16, float32, float64,
                               index, int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64)
from tilec.lang.block_ptr import advance, make_block_ptr, make_tensor_descriptor
from tilec.lang.compat import missing as _missing
from tilec.lang.compat import (add, assume, broadcast, broadcast_to, cast, const, debug_barrier, device_assert, device_print,
                               div_rn, expand_dims, extra, fdiv, fma, histogram, inline_asm_elementwise, isnan,
                               load_tensor_descriptor,
                               map_elementwise, math, max_constancy, max_contiguous, mul, multiple_of,
                               pair_uniform_to_normal, permute, reduce_or, softmax, sqrt_rn, squeeze, static_assert,
                               static_print, store_tensor_descriptor, sub, swizzle2d, tensor, uint_to_uniform_float,
                               umulhi, unsqueeze, xor_sum)
from tilec.lang.function import Function, func
from tilec.lang.shapes import cat, interleave, join, ravel, reshape, split, view
from tilec.lang.sorting import bitonic_merge, flip, sort, topk
from tilec.lang.take import gather
from tilec.lang.random import philox, rand, rand4x, randint, randint4x, randn, randn4x
from tilec.lang.kernel import Kernel, Specialization, constexpr, kernel
from tilec.lang.loop import range  # noqa: A004 - tl.range, as Triton names it
from tilec.lang.ops import (
    PropagateNan,
    abs,  # noqa: A004
    alloc,
    arange,
    argmax,
    argmin,
    associative_scan,
    async_commit,
    async_copy,
    async_wait,
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
    barrier,
    block_id,
    block_rank,
    cluster_barrier,
    cluster_id,
    num_blocks,
    num_warps,
    num_clusters,
    num_programs,
    col_max,
    col_min,
    col_sum,
    copy,
    cdiv,
    ceil,
    clamp,
    cos,
    cummax,
    cummin,
    cumprod,
    cumsum,
    dot,
    erf,
    exp,
    exp2,
    floor,
    rint,
    trunc,
    full,
    full_like,
    iota,
    lane_id,
    load,
    load_scalar,
    log,
    log2,
    map,  # noqa: A004
    max,  # noqa: A004
    maximum,
    min,  # noqa: A004
    minimum,
    mma,
    program_id,
    reduce,
    row_max,
    row_min,
    row_sum,
    rsqrt,
    sigmoid,
    sin,
    sqrt,
    static_range,
    store,
    sum,  # noqa: A004
    tanh,
    thread_id,
    trans,
    turns,
    warp_id,
    wgmma,
    wgmma_wait,
    where,
    zeros,
    zeros_like,
)
from tilec.lang.tracing import LangError
from tilec.lang.tracing import error as _error

dtype = DType
"""``tl.dtype``: the class of the element types (``tl.float16`` ...), for annotations and ``isinstance``."""
from tilec.lang.values import Expanded, Scalar, Shared, Tile, Vector, View

__all__ = [
    "advance", "make_block_ptr", "make_tensor_descriptor", "PropagateNan",
    "assume", "broadcast_to", "cast", "debug_barrier", "device_assert", "device_print", "expand_dims", "extra", "fma", "isnan",
    "math", "max_constancy", "max_contiguous", "multiple_of", "permute", "reshape", "rint", "softmax", "static_assert",
    "static_print", "swizzle2d", "trunc", "umulhi", "div_rn", "sqrt_rn", "xor_sum",
    "add", "sub", "mul", "fdiv", "broadcast", "const", "tensor", "dtype", "reduce_or", "squeeze", "unsqueeze",
    "map_elementwise", "inline_asm_elementwise", "load_tensor_descriptor", "store_tensor_descriptor", "uint_to_uniform_float",
    "pair_uniform_to_normal",
    "philox", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x",
    "DType", "Expanded", "Function", "Kernel", "LangError", "Scalar", "Shared", "Specialization", "Tile", "Vector", "View",
    "abs", "alloc", "arange", "argmax", "argmin", "associative_scan", "async_commit", "async_copy", "async_wait", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor", "barrier", "copy", "mma", "bfloat16", "block_id", "block_rank", "cluster_barrier", "cluster_id",
    "num_blocks", "num_clusters", "num_programs", "num_warps", "col_max", "col_min", "col_sum", "constexpr", "cdiv", "ceil", "clamp", "cos", "cummax", "cummin", "cumprod", "cumsum", "dot", "erf", "exp", "exp2", "floor",
    "func", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8e4nv", "float8e5", "full", "full_like", "index", "int1", "int8", "int16", "int32", "int64", "iota", "kernel",
    "uint8", "uint16", "uint32", "uint64", "cat", "join", "split", "interleave", "histogram", "ravel", "view", "flip", "sort", "gather", "topk", "bitonic_merge",
    "lane_id", "load", "load_scalar", "log", "log2",
    "loop", "map", "max", "maximum", "min", "minimum", "program_id", "reduce", "range", "row_max", "row_min", "row_sum",
    "rsqrt", "sigmoid", "sin", "sqrt", "static_range", "store", "sum", "tanh", "thread_id", "trans", "turns", "warp_id", "wgmma", "wgmma_wait", "where", "zeros", "zeros_like",
]


def _tensor_methods() -> None:
    """Triton's tensor methods (``x.exp()``, ``x.cast(tl.float16)``, ``x.reduce_or(0)`` ...) on the language's
    values: each the function of its name with the value first (one that a value already has stays)."""
    def method(fn):
        def call(self, *args, **kwargs):
            return fn(self, *args, **kwargs)
        call.__doc__ = fn.__doc__
        return call

    def logical(name, combine):
        def call(self, other):
            if self.dtype != int1 or getattr(other, "dtype", int1) != int1:
                raise _error(f"x.{name}(y) takes two masks (tl.int1 values), got {self.describe()}")
            return combine(self, other)
        return call

    functions = {"abs": abs, "cdiv": cdiv, "ceil": ceil, "cos": cos, "erf": erf, "exp": exp, "exp2": exp2,
                 "floor": floor, "log": log, "log2": log2, "rsqrt": rsqrt, "sigmoid": sigmoid, "sin": sin,
                 "sqrt": sqrt, "sqrt_rn": sqrt_rn, "softmax": softmax, "broadcast_to": broadcast_to, "cast": cast,
                 "expand_dims": expand_dims, "histogram": histogram, "reduce": reduce, "reduce_or": reduce_or,
                 "xor_sum": xor_sum, "associative_scan": associative_scan, "split": split}
    for cls in (Tile, Vector, Expanded):
        for name, fn in functions.items():
            if not hasattr(cls, name):
                setattr(cls, name, method(fn))
        cls.logical_and = logical("logical_and", lambda a, b: a & b)
        cls.logical_or = logical("logical_or", lambda a, b: a | b)


_tensor_methods()


def __getattr__(name: str):
    """``tl.<name>`` of a Triton name tilec.lang lacks: an error at the user's line, not a bare AttributeError."""
    if name.startswith("__"):
        raise AttributeError(f"module 'tilec.lang' has no attribute {name!r}")
    raise _missing(name)
