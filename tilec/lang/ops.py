"""The ``tl.*`` functions: ids, loads and stores, tiles made from scratch, reductions, math.

Each builds tile-dialect ops through the current trace (:mod:`tilec.lang.tracing`); none lowers
anything itself: the passes that compile hand-written tile IR compile these kernels.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Block, Operation, Region, SSAValue

from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import FLOAT8_TYPES, FLOAT_TYPES, RegisterType, RegisterVectorType, SharedType, element_bits
from tilec.layout import Layout
from tilec.layout.atoms import MMA_ATOMS
from tilec.lang import pointers
from tilec.lang.dtypes import (dtype_of, float8_e4m3fn, float8_e5m2, float32, int1, int8, int16, int32, int64, uint8,
                               uint16, uint32, uint64)
from tilec.lang.tracing import current, element_type, error
from tilec.lang.unsigned import holds_booleans, mark
from tilec.lang.values import (
    Expanded,
    Scalar,
    Shared,
    Tile,
    Value,
    Vector,
    View,
    Pointer,
    describe as _describe,
    mask_bits,
    fill_number,
    as_loaded,
    stored_as,
    checked_type,
    elementwise,
    index,
    reoriented,
    tile_map,
    where,
    wrap,
)

# ---------------------------------------------------------------- where am I


def _axis_scalar(op: type, axis: int, name: str) -> Scalar:
    """The scalar of an id or count along launch axis 0, 1 or 2 (``name`` + x, y or z)."""
    _check_axis(axis)
    return Scalar(current().value(op(axis), f"{name}{'xyz'[axis]}"))


def block_id(axis: int = 0) -> Scalar:
    """This block's index along launch axis 0, 1 or 2 (Triton's ``program_id``)."""
    return _axis_scalar(t.BlockIdOp, axis, "block")


program_id = block_id


def num_blocks(axis: int = 0) -> Scalar:
    """The launch's number of blocks along axis 0, 1 or 2 (Triton's ``num_programs``): a persistent
    kernel's stride over its tiles."""
    return _axis_scalar(t.GridDimOp, axis, "blocks")


num_programs = num_blocks


def cluster_id(axis: int = 0) -> Scalar:
    """This block's thread-block cluster along axis 0, 1 or 2 (a kernel with ``cluster=``): the same in
    every block of a cluster, so a window computed from it is one every block shares (multicast)."""
    return _axis_scalar(t.ClusterIdOp, axis, "cluster")


def num_clusters(axis: int = 0) -> Scalar:
    """The launch's number of clusters along axis 0, 1 or 2."""
    return _axis_scalar(t.ClusterCountOp, axis, "clusters")


def block_rank() -> Scalar:
    """This block's rank in its cluster (0 .. blocks a cluster - 1, x fastest; 0 without clusters)."""
    return Scalar(current().value(t.BlockRankOp(), "rank"))


def cluster_barrier() -> None:
    """Every thread of every block of the cluster waits here."""
    current().emit(t.ClusterBarrierOp())


def thread_id(axis: int = 0) -> Scalar:
    """This thread's index in the block along ``axis`` (for experts: tiles are the block's)."""
    return _axis_scalar(t.ThreadIdOp, axis, "tid")


def num_warps() -> int:
    """The block's warps, the ``num_warps`` the kernel is compiled with: a Python int while tracing
    (like a ``tl.constexpr``), so a kernel can check that its warps cover its tile."""
    return current().num_threads // 32


def warp_id() -> Scalar:
    """This warp's index in the block (per-warp tiles, as ThunderKittens writes them)."""
    return Scalar(current().value(t.WarpIdOp(), "warp"))


def lane_id() -> Scalar:
    """This thread's lane in its warp."""
    return Scalar(current().value(t.LaneIdOp(), "lane"))


def barrier() -> None:
    """Every thread of the block waits here."""
    current().emit(t.BarrierOp())


class turns:
    """``with tl.turns(G):`` the block's warps, as ``G`` equal groups of consecutive warps (with 8
    warps and ``G = 2``: its two warpgroups), run the body one group at a time, group 0 first, then
    1, .., G-1, 0 again (``tile.turn_begin``/``tile.turn_end``: named barriers). Only the schedule
    changes: FlashAttention-3's ping-pong puts a warpgroup's MMAs in a turn, so they run while the
    other group computes its softmax outside its own. Every group must go through the turns equally
    often (as every thread must reach :func:`barrier`)."""

    def __init__(self, groups: int):
        if not isinstance(groups, int) or isinstance(groups, bool) or not 2 <= groups <= t.MAX_TURN_GROUPS:
            raise error(f"tl.turns: groups must be an int from 2 to {t.MAX_TURN_GROUPS}, got {groups!r}")
        self.groups = groups

    def __enter__(self) -> "turns":
        current().emit(t.TurnBeginOp(self.groups))
        return self

    def __exit__(self, kind, value, tb) -> bool:
        if kind is None:
            current().emit(t.TurnEndOp(self.groups))
        return False


def _check_axis(axis: Any) -> None:
    if axis not in (0, 1, 2):
        raise error(f"axis must be 0, 1 or 2, got {axis!r}")


# ---------------------------------------------------------------- indices


def _static_shape(shape: Any, what: str) -> tuple[int, ...]:
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not shape or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in shape):
        raise error(f"{what} must be a tuple of Python ints (tl.constexpr values), got {shape!r}")
    if any(d <= 0 for d in shape):
        raise error(f"{what} {tuple(shape)} must be positive")
    return tuple(shape)


# ---------------------------------------------------------------- memory


def load(view: Any, offsets: Sequence[Any] = (), shape: Any = None, *, mask: Any = None,
         other: float = 0.0, axis: int = 1, cache_modifier: str = "", eviction_policy: str = "",
         volatile: bool = False, boundary_check: Any = (), padding_option: str = "") -> Tile | Vector:
    """The ``shape`` window of ``view`` at ``offsets`` (its first element's coordinates).

    Elements outside the array read as ``other`` (``float("-inf")`` keeps them out of a maximum), and
    so do those where ``mask`` (a boolean tile, vector or scalar broadcast to the window, Triton's
    ``mask=``) is false; with a mask, ``other`` may also be a tile, vector or scalar. A rank-2 window gives a tile; a rank-1 window a vector with one value per
    column (``axis=1``, for ``v[None, :]``) or per row (``axis=0``, for ``v[:, None]``). From a shared
    tile: the whole tile (no offsets, no shape) or a window of it (a warp's part, e.g. an mma operand).
    Triton's ``cache_modifier`` and ``eviction_policy`` are hints tilec takes and leaves to the compiler.
    A block pointer (``tl.make_block_ptr``) is its window: ``tl.load(ptr, boundary_check=(0, 1),
    padding_option="zero")`` (every dimension is checked; ``"nan"`` pads with NaN).
    """
    _memory_hints("tl.load", cache_modifier, eviction_policy)
    if isinstance(view, View) and shape is None and _no_offsets(offsets):  # tl.load(x_ptr): its first element
        view = Pointer(view, 0)
    if isinstance(view, Pointer):  # Triton's tl.load(x_ptr + offsets, mask, other)
        if volatile:
            raise error("tl.load(volatile=True) is not in tilec.lang: a value another program writes while this one "
                        "runs is read by an atomic, e.g. tl.atomic_add(x + offsets, 0)")
        if boundary_check or padding_option:
            raise error("tl.load of pointers (x + offsets) takes mask= and other=; boundary_check and padding_option "
                        "belong to block pointers (tl.make_block_ptr)")
        if not _no_offsets(offsets):  # tl.load(ptr, mask, other), positionally
            if mask is not None:
                raise error("tl.load(ptr, ...) got mask= twice (positionally and by name)")
            mask, other = offsets, (shape if shape is not None else other)
        elif shape is not None:
            raise error("tl.load of pointers (x + offsets) takes no shape=: the offsets give it")
        return pointers.load(view, mask, other)
    if isinstance(view, View) and pointers.has_index_tiles(offsets):  # numpy's x[rows, cols] with index tiles
        return pointers.gather(view, offsets, shape, mask=mask, other=other)
    if hasattr(view, "__tl_window__"):  # a block pointer (tilec.lang.block_ptr)
        if not _no_offsets(offsets) or shape is not None or mask is not None:
            raise error("tl.load of a block pointer takes no mask, offsets or shape: the pointer is the window "
                        "(tl.advance moves it)")
        source, origin, dims, fill, transposed = view.__tl_window__(None, "tl.load", padding_option)
        tile = load(source, origin, dims, other=fill, volatile=volatile)
        return trans(tile) if transposed else tile
    if volatile:
        raise error("tl.load(volatile=True) is not in tilec.lang: to read a value another block writes while "
                    "this one runs (a flag), use an atomic, e.g. tl.atomic_add(view, offsets, 0), which returns "
                    "the current value")
    if mask is not None:
        number = isinstance(other, (int, float)) and not isinstance(other, bool)
        loaded = load(view, offsets, shape, other=other if number else 0.0, axis=axis)
        bits = mask_bits(mask, loaded, "tl.load")
        if bits is True:
            return loaded
        if not number and bits is not False:  # outside the array reads other too: the window's own bounds
            bits = bits & _inside_window(view, offsets, loaded)
        # other in the loaded element type, as Triton converts it (an int32 load stays int32)
        fill = (other if loaded.dtype.is_float or loaded.dtype.is_fp8 else int(other)) if number else other.to(loaded.dtype)
        return where(bits, loaded, fill) if bits is not False else \
            (full_like(loaded, fill) if number else where(False, loaded, fill))
    if isinstance(other, (Value, Expanded)):
        raise error("tl.load's other= is a tile, vector or scalar only with mask= (it fills where the mask is "
                    "false); without one, elements outside the array read as a number")
    if isinstance(view, Shared):
        return _load_shared(view, offsets, shape)
    if not isinstance(view, View):
        raise error(f"tl.load reads an array argument of the kernel or a shared tile, got {_describe(view)}")
    if shape is None:
        raise error(f"tl.load of {view.name!r} needs shape=(...): the window's extents")
    dims = _static_shape(shape, "tl.load's shape")
    offsets = _offsets(view, offsets, "tl.load")
    if len(dims) != view.ndim:
        raise error(f"tl.load of {view.name!r} ({view.ndim}-D): the shape {dims} has {len(dims)} dimensions")
    if not isinstance(other, (int, float)) or isinstance(other, bool) and not holds_booleans(view.value):
        raise error(f"other= must be a number, got {other!r}")
    element = view.type.element_type
    fill = fill_number(other, view, "tl.load")
    if len(dims) == 1:
        if axis not in (0, 1):
            raise error(f"axis= of a 1-D tl.load is 0 (one value per row) or 1 (per column), got {axis!r}")
        ty = checked_type(RegisterVectorType, dims[0], element, "row" if axis == 0 else "col")
    elif len(dims) == 2:
        ty = checked_type(RegisterType, list(dims), element)
    else:
        raise error(f"tl.load makes 1-D vectors and 2-D tiles, got shape {dims}")
    return as_loaded(current().value(t.LoadOp(view.value, offsets, ty, other=fill), f"{view.name}_t"), view)


def _no_offsets(offsets: Any) -> bool:
    """Whether a load or store was given no offsets (``()`` or None; a traced value is never compared)."""
    return offsets is None or (isinstance(offsets, (tuple, list)) and len(offsets) == 0)


def _inside_window(view: View, offsets: Any, like: Tile | Vector) -> Tile | Vector:
    """Which elements of the window at ``offsets`` (of ``like``'s shape) lie inside the array: a load
    fills those outside with a number by itself; with a tile-valued ``other`` this chooses."""
    offsets = offsets if isinstance(offsets, (tuple, list)) else (offsets,)
    if isinstance(like, Vector):
        axis = 0 if like.orientation == "row" else 1
        at = iota(like.shape, 0, offsets[0], axis=axis)
        return (at >= 0) & (at < view.shape[0])
    rows = iota(like.shape, 0, offsets[0])
    cols = iota(like.shape, 1, offsets[1])
    return (rows >= 0) & (rows < view.shape[0]) & (cols >= 0) & (cols < view.shape[1])


def load_scalar(view: View, offsets: Sequence[Any] = ()) -> Scalar:
    """One element of an array argument at ``offsets`` (one index per dimension), the same for every
    thread (``tile.load_scalar``): a number the kernel reads from device memory, such as a per-tensor
    scale the host has not synchronised to read. Outside the array it reads 0. Its value multiplies
    tiles like any scalar, without a tile of copies in registers."""
    if not isinstance(view, View):
        raise error(f"tl.load_scalar reads an array argument of the kernel, got {_describe(view)}")
    if not (isinstance(view.type.element_type, (*FLOAT_TYPES, *FLOAT8_TYPES)) or view.dtype.is_int
            or holds_booleans(view.value)):
        raise error(f"tl.load_scalar reads float (FP8 to f64), integer or bool elements; {view.name!r} "
                    f"holds {view.type.element_type}")
    offsets = _offsets(view, offsets, "tl.load_scalar")
    return as_loaded(current().value(t.LoadScalarOp(view.value, offsets), f"{view.name}_s"), view)


def _load_shared(tile: Shared, offsets: Any, shape: Any) -> Tile:
    dims = tile.shape if shape is None else _static_shape(shape, "tl.load's shape")
    if len(dims) != 2:
        raise error(f"tl.load from a shared tile makes 2-D tiles, got shape {dims}")
    if _no_offsets(offsets) and tuple(dims) == tile.shape:
        indices: list[SSAValue] = []
    else:
        offsets = offsets if isinstance(offsets, (tuple, list)) else (offsets,)
        if len(offsets) != len(tile.shape):
            raise error(f"a window of {tile.describe()} needs {len(tile.shape)} offsets, got {len(offsets)}")
        if any(d > s for d, s in zip(dims, tile.shape)):
            raise error(f"a {dims} window does not fit in {tile.describe()}")
        indices = [index(o, f"tl.load offset {i}") for i, o in enumerate(offsets)]
    ty = checked_type(RegisterType, list(dims), tile.type.element_type)
    return wrap(current().value(t.LoadOp(tile.value, indices, ty)))


def alloc(shape: Any, dtype: Any, layout: Any = None) -> Shared:
    """A shared-memory tile of the block: row-major unless ``layout`` (a ``tilec.layout`` layout,
    possibly swizzled) places it; ``tile-swizzle`` chooses a swizzle for a row-major one."""
    dims = _static_shape(shape, "tl.alloc's shape")
    if len(dims) != 2:
        raise error(f"shared tiles are 2-D, got shape {dims}")
    dt = element_type(dtype)
    ty = checked_type(SharedType, list(dims), dt.ir, layout)
    tile = current().value(t.AllocOp(ty), "smem")
    return Shared(mark(tile) if dt.is_unsigned else tile)


def copy(src: View | Shared, src_offsets: Any, dst: View | Shared, dst_offsets: Any = (), *,
         tiled: Any = None) -> None:
    """The block copies a global window into a whole shared tile: ``tl.copy(x, (row, col), s)``.
    (Copies of a shared tile out to a window are not compiled yet: store a ``tl.load`` of the tile.)

    ``tiled``: a ``tilec.layout.make_tiled_copy(atom, thr, val)`` saying which thread moves which
    values (CuTe's tiled copy); by default 16-byte vectors along the rows, threads in row-major
    order over the tile. ``tile-pipeline`` turns the copies of a ``tl.range`` loop into multi-stage
    ``cp.async`` (or bulk tensor) copies when the kernel is compiled with ``num_stages``.
    """
    if isinstance(src, View) and isinstance(dst, Shared):
        shared, gl_offsets, glv = dst, src_offsets, src
    elif isinstance(src, Shared) and isinstance(dst, View):
        raise error(f"tl.copy from {_describe(src)} out to {dst.name!r}: copies from shared memory to an array are "
                    "not compiled yet; store the tile's values instead: tl.store(view, offsets, tl.load(shared))")
    else:
        raise error(f"tl.copy(src, src_offsets, dst) copies a window of an array argument into a shared tile, got "
                    f"src {_describe(src)} and dst {_describe(dst)}")
    if glv.type.element_type != shared.type.element_type:
        raise error(f"tl.copy between {glv.dtype} {glv.name!r} and a {shared.dtype} shared tile: the types differ")
    thr, val = _tiled_copy_layouts(tiled, shared)
    offsets = _offsets(glv, gl_offsets, "tl.copy")
    current().emit(t.CopyOp(src.value, offsets, dst.value, [], thr=thr, val=val))


def async_copy(src: View, offsets: Any, dst: Shared, *, tiled: Any = None) -> None:
    """``tl.copy`` from global to shared as ``cp.async``: it lands at the ``tl.async_wait`` that completes
    its group (for experts who stage by hand; ``num_stages`` pipelines ``tl.copy`` loops by itself)."""
    if not isinstance(src, View) or not isinstance(dst, Shared):
        raise error(f"tl.async_copy moves an array argument's window into a shared tile, got {_describe(src)} -> "
                    f"{_describe(dst)}")
    if src.type.element_type != dst.type.element_type:
        raise error(f"tl.async_copy from {src.dtype} {src.name!r} into a {dst.dtype} shared tile: the types differ")
    thr, val = _tiled_copy_layouts(tiled, dst)
    current().emit(t.AsyncCopyOp(src.value, _offsets(src, offsets, "tl.async_copy"), dst.value, thr=thr, val=val))


def async_commit() -> None:
    """Close the group of ``tl.async_copy`` issued since the last commit."""
    current().emit(t.AsyncCommitOp())


def async_wait(pending: int = 0) -> None:
    """Wait until at most ``pending`` committed groups are in flight (then ``tl.barrier()`` before reading
    what other threads copied)."""
    if not isinstance(pending, int) or isinstance(pending, bool) or not 0 <= pending <= 7:
        raise error(f"tl.async_wait's pending is an int from 0 to 7 (cp.async.wait_group), got {pending!r}")
    current().emit(t.AsyncWaitOp(pending))


def _tiled_copy_layouts(tiled: Any, shared: Shared):
    if tiled is not None:
        thr, val = getattr(tiled, "thr_layout", None), getattr(tiled, "val_layout", None)
        if thr is None or val is None:
            raise error("tl.copy(tiled=...) takes a tiled copy made by tilec.layout.make_tiled_copy(atom, thr, val)")
        return thr, val
    rows, cols = shared.shape
    per = builtins.max(1, 16 * 8 // element_bits(shared.type.element_type))
    while cols % per:
        per //= 2
    threads = current().num_threads
    across = math.gcd(cols // per, threads)  # divides both: the row's vectors and the block's threads
    down = builtins.min(rows, threads // across)
    while rows % down:
        down //= 2
    return Layout((down, across), (across, 1)), Layout((1, per), (1, 1))


def mma(a: Tile, b: Tile, acc: Tile, *, trans_a: bool = False, trans_b: bool = False, atom: Any = None) -> Tile:
    """``op(a) @ op(b) + acc`` on the tensor cores (``tile.mma``): f16/bf16 operands, an f32 accumulator;
    ``trans_b``: ``b`` is N x K (``q @ k.T`` of attention), ``trans_a``: ``a`` is K x M.

    ``atom``: the instruction (``"mma_m16n8k16_f16"``, or a ``tilec.layout`` tiled MMA of one
    atom per warp, whose atom is taken); by default the layout pass chooses.
    """
    for what, x in (("a", a), ("b", b), ("acc", acc)):
        if not isinstance(x, Tile):
            raise error(f"tl.mma's {what} must be a register tile, got {_describe(x)}")
    name = _mma_atom_name(atom)
    _check_atom_shape(a, b, trans_a, trans_b, name)
    op = t.MmaOp(a.value, b.value, acc.value, transpose_a=trans_a, transpose_b=trans_b, atom=name)
    return Tile(current().value(op))


def _check_atom_shape(a: Tile, b: Tile, trans_a: bool, trans_b: bool, name: Any) -> None:
    """An mma whose M, N, K are not multiples of its tensor-core atom's is refused here, at the user's
    line, rather than by the compiler alone (the tile interpreter would run it)."""
    if len(a.shape) != 2 or len(b.shape) != 2:
        return  # the op's verifier names the ranks
    m, k = a.shape[::-1] if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    if name is None:
        ty = a.type.element_type
        ty = "i8" if ty == IntegerType(8) else ty.name
        name = MMA_ATOMS[{"f16": "mma_m16n8k16_f16", "bf16": "mma_m16n8k16_bf16", "i8": "mma_m16n8k32_s8",
                          "f8E4M3FN": "mma_m16n8k32_e4m3", "f8E5M2": "mma_m16n8k32_e5m2"}.get(ty, "mma_m16n8k8_tf32")]
    atom = name  # an MMAAtom (what _mma_atom_name gives)
    if atom.name == "fma_f32":
        return
    am, an, ak = atom.shape_mnk
    if m % am or n % an or k % ak:
        raise error(f"a {m}x{n}x{k} (MxNxK) product does not split into {atom.name}'s {am}x{an}x{ak} steps: give "
                    f"the tiles multiples of them (a load past the array's edge reads zeros)")


def trans(x: Tile, *dims: Any) -> Tile:
    """``x`` transposed (``x.T``; Triton's ``tl.trans``): a register tile's rows become columns. No
    data moves: each lane keeps its values, held at swapped coordinates (``tile.transpose``); feeding
    the result to an mma that wants it held otherwise converts ``x`` first."""
    if hasattr(x, "trans") and not isinstance(x, Value):  # tl.join's (m, n, 2) value (tilec.lang.shapes.Joined)
        return x.trans(*dims)
    if not isinstance(x, Tile):
        raise error(f"tl.trans takes a register tile, got {_describe(x)}")
    if dims:
        return x.permute(*dims)
    if len(x.shape) != 2:
        raise error(f"tl.trans takes a 2-D register tile, got {x.describe()}")
    return x.T


def wgmma(a: Shared | Tile, row: Any, b: Shared, col: Any, acc: Tile, *, trans_b: bool = False,
          wait: bool = True) -> Tile:
    """sm_90a's warpgroup MMA (``tile.wgmma``): the four warps of a warpgroup multiply the 64-row
    band of shared ``a`` at ``row`` (all its K columns) by the band of ``b`` at column ``col``; each
    warp's ``acc`` is its 16 rows of the product (``16 x N``, f32).

    ``a`` may instead be each warp's own ``16 x K`` register tile (``row=None``), as attention's
    ``P @ V`` takes the softmax's output; ``trans_b``: ``b`` is stored ``N x K`` (``q @ k.T``), its
    band the rows at ``col``. ``wait=False`` leaves the MMA running (one wgmma group): the result
    may only go to :func:`wgmma_wait` (or be another async wgmma's ``acc``), and the operands must
    not change until then."""
    if not isinstance(b, Shared):
        raise error(f"tl.wgmma reads b from a shared tile, got {_describe(b)}")
    if isinstance(a, Tile):
        if row is not None:
            raise error("tl.wgmma with a register tile a takes row=None: each warp gives its own 16 rows")
        row_value = None
    elif isinstance(a, Shared):
        row_value = index(row, "tl.wgmma's row")
    else:
        raise error(f"tl.wgmma's a must be a shared tile or a warp's register tile, got {_describe(a)}")
    if not isinstance(acc, Tile):
        raise error(f"tl.wgmma's acc must be a register tile, got {_describe(acc)}")
    op = t.WgmmaOp(a.value, row_value, b.value, index(col, "tl.wgmma's col"), acc.value, transpose_b=trans_b,
                   is_async=not wait)
    return Tile(current().value(op))


def wgmma_wait(x: Tile, pending: int = 0) -> Tile:
    """``x`` (the result of ``tl.wgmma(..., wait=False)``) once at most ``pending`` of the warpgroup's
    newer wgmma groups are still running (``tile.wgmma_wait``; groups complete in the order issued)."""
    if not isinstance(x, Tile):
        raise error(f"tl.wgmma_wait waits for a tile from tl.wgmma(..., wait=False), got {_describe(x)}")
    if not isinstance(pending, int) or isinstance(pending, bool) or not 0 <= pending <= 7:
        raise error(f"tl.wgmma_wait's pending must be an int from 0 to 7, got {pending!r}")
    return Tile(current().value(t.WgmmaWaitOp(x.value, pending)))


def _mma_atom_name(atom: Any):
    if atom is None:
        return None
    if isinstance(atom, str):
        if atom not in MMA_ATOMS:
            raise error(f"unknown MMA atom {atom!r}; expected one of {', '.join(sorted(MMA_ATOMS))}")
        return MMA_ATOMS[atom]
    inner = getattr(atom, "atom", atom)
    layout = getattr(atom, "atom_layout", None)
    if layout is not None and getattr(layout, "size", lambda: 1)() != 1:
        raise error(f"tl.mma multiplies one warp's tiles: a tiled MMA of {layout} atoms spans several warps "
                    "(index the warp's tiles with tl.warp_id() and pass one atom)")
    if getattr(inner, "name", None) not in MMA_ATOMS:
        raise error(f"tl.mma's atom must be an MMA atom name or a tiled MMA, got {atom!r}")
    return MMA_ATOMS[inner.name]


_CACHE_MODIFIERS = ("", ".ca", ".cg", ".cv", ".cs", ".wb", ".wt", ".lu")
_EVICTION_POLICIES = ("", "evict_first", "evict_last", "evict_normal")


def _memory_hints(who: str, cache_modifier: Any, eviction_policy: Any) -> None:
    """Triton's cache hints: checked as Triton checks them, then left to the compiler (tilec chooses)."""
    if cache_modifier not in _CACHE_MODIFIERS:
        raise error(f"{who}'s cache_modifier is one of {', '.join(map(repr, _CACHE_MODIFIERS))}, got {cache_modifier!r}")
    if eviction_policy not in _EVICTION_POLICIES:
        raise error(f"{who}'s eviction_policy is one of {', '.join(map(repr, _EVICTION_POLICIES))}, got "
                    f"{eviction_policy!r}")


_NO_VALUE = object()


def filled(value: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """A value stored into a block: a number or scalar fills it (Triton broadcasts one to a block pointer's
    block); anything else as it is."""
    if isinstance(value, (int, float, Scalar)) and not isinstance(value, bool):
        return full(shape, value, dtype)
    return value


def store(view: Any, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None,
          cache_modifier: str = "", eviction_policy: str = "", boundary_check: Any = ()) -> None:
    """Write ``value`` (a tile, a vector into a 1-D array, or a scalar: one element) into ``view`` at
    ``offsets``; elements outside the array are dropped, and so are those where ``mask`` (a boolean
    tile, vector or scalar broadcast to the value, Triton's ``mask=``) is false."""
    _memory_hints("tl.store", cache_modifier, eviction_policy)
    if isinstance(view, View) and value is _NO_VALUE:  # tl.store(x_ptr, value): at its first element
        view = Pointer(view, 0)
    if isinstance(view, Pointer):  # Triton's tl.store(x_ptr + offsets, value, mask)
        if boundary_check:
            raise error("tl.store of pointers (x + offsets) takes mask=, not boundary_check")
        if value is not _NO_VALUE:  # tl.store(ptr, value, mask), positionally
            if mask is not None:
                raise error("tl.store(ptr, ...) got mask= twice (positionally and by name)")
            mask = value
        return pointers.store(view, offsets, mask)
    if isinstance(view, View) and pointers.has_index_tiles(offsets):  # numpy's x[rows, cols] = v with index tiles
        if value is _NO_VALUE:
            raise error("tl.store(view, offsets, value): the value to store is missing")
        return pointers.scatter(view, offsets, value, mask=mask)
    if hasattr(view, "__tl_window__"):  # tl.store(ptr, value): a block pointer's window
        value = offsets if value is _NO_VALUE else value
        if mask is not None:
            raise error("tl.store of a block pointer takes no mask: the pointer is the window")
        value = filled(value, view.block_shape, view.view.dtype)
        source, origin, _, _, transposed = view.__tl_window__(value, "tl.store", "")
        return store(source, origin, trans(value) if transposed else value)
    if value is _NO_VALUE:
        raise error("tl.store(view, offsets, value): the value to store is missing")
    if not isinstance(view, View):
        raise error(f"tl.store writes an array argument of the kernel, got {_describe(view)}")
    if isinstance(value, Expanded):  # v[None, :] into a 2-D array is a tile of one row (v[:, None]: one column)
        value = value.tile() if view.ndim == 2 else value.vector
    number = isinstance(value, (Scalar, int, float)) and not isinstance(value, bool)
    if number and isinstance(mask, (Tile, Vector)) and len(mask.shape) == view.ndim:
        value = filled(value, mask.shape, view.dtype)  # a number under a mask fills the mask's window (Triton's)
    elif number and isinstance(mask, (Vector, Expanded)) and view.ndim == 2:
        raise error("tl.store of a number under a vector mask into a 2-D array: the window's shape is not known "
                    "(Triton's comes from the pointers); give the value its shape, tl.full((BM, BN), x, dtype), or "
                    "a mask of that shape")
    elif number and view.ndim in (1, 2):
        # one element (a full reduction's result, a number)
        value = full((1,) * view.ndim, value, view.dtype)  # converted to the array's type, as Triton stores
    if not isinstance(value, (Tile, Vector)):
        raise error(f"tl.store writes a tile, a vector or a scalar, got {_describe(value)}")
    if value.type.element_type != view.type.element_type:  # converted to the array's type, as Triton stores
        value = stored_as(value, view)
    rank = 1 if isinstance(value, Vector) else 2
    if rank != view.ndim:
        raise error(f"tl.store of a {rank}-D value into {view.ndim}-D {view.name!r}")
    bits = True if mask is None else mask_bits(mask, value, "tl.store")
    if bits is False:
        return
    current().emit(t.StoreOp(value.value, view.value, _offsets(view, offsets, "tl.store"),
                             None if bits is True else bits.value))


_SEMANTICS = (None, "relaxed", "acquire", "release", "acq_rel")
_SCOPES = (None, "cta", "gpu")


def _atomic(kind: str, view: View, offsets: Sequence[Any], value: Any, cmp: Any = None,
            mask: Any = None, sem: Any = None, scope: Any = None) -> Tile | Vector | Scalar:
    """``tile.atomic`` of ``kind``; its old values in the value's form (a scalar for a scalar). Unused, the
    old values cost nothing: tile-distribute then combines with ``red.global`` where PTX has one.
    ``mask`` (Triton's ``mask=``): the elements where it is false are left alone, their old values 0."""
    who = f"tl.atomic_{kind}"
    # tilec's atomics are acquire-release at GPU scope (at least as strong as asked) where their old values
    # are read or sem= asks for an order, else relaxed (red.global: what a sum or a histogram needs)
    if sem not in _SEMANTICS or scope not in _SCOPES:
        raise error(f"{who}(sem={sem!r}, scope={scope!r}): tilec's atomics are acquire-release at GPU scope, which "
                    f"serves sem in {_SEMANTICS[1:]} and scope in {_SCOPES[1:]}")
    ordered = sem in ("acquire", "release", "acq_rel")
    target = view.view if isinstance(view, Pointer) else view
    if kind in ("max", "min") and isinstance(target, View) and target.dtype.is_unsigned:
        kind = f"u{kind}"  # the elements' bits compared as unsigned numbers (atom.max.u32)
    if isinstance(view, View) and value is _NO_VALUE:  # tl.atomic_max(x_ptr, v): at its first element
        view = Pointer(view, 0)
    if isinstance(view, Pointer):  # Triton's tl.atomic_add(x_ptr + offsets, value, mask), tl.atomic_cas(ptr, cmp, value)
        if kind == "cas":
            if value is not _NO_VALUE:
                raise error(f"{who}(pointer, cmp, value) takes two values after the pointer, got three")
            cmp, value = offsets, cmp
        else:
            if value is not _NO_VALUE:  # tl.atomic_add(ptr, value, mask), positionally
                if mask is not None:
                    raise error(f"{who}(ptr, ...) got mask= twice (positionally and by name)")
                mask = value
            value = offsets
        return pointers.atomic(kind, view.view, (view.offset,), value, cmp, mask, True, ordered, who)
    if value is _NO_VALUE:
        raise error(f"{who}(view, offsets, value): the value is missing")
    if isinstance(view, View) and pointers.has_index_tiles(offsets):  # numpy's np.add.at(x, (rows, cols), v)
        return pointers.atomic(kind, view, offsets, value, cmp, mask, False, ordered, who)
    if not isinstance(view, View):
        raise error(f"{who} combines into an array argument of the kernel, got {_describe(view)}")
    one = isinstance(value, (Scalar, int, float)) and not isinstance(value, bool)
    value = _atomic_operand(who, "value", view, value)
    if cmp is not None:
        cmp = _atomic_operand(who, "cmp", view, cmp)
        if cmp.shape != value.shape or type(cmp) is not type(value):
            raise error(f"{who}'s cmp ({cmp.describe()}) and value ({value.describe()}) must have one shape")
        if isinstance(cmp, Vector) and cmp.orientation != value.orientation:
            cmp = reoriented(cmp, value.orientation)
    kinds = t.ATOMIC_KINDS[kind]
    if view.type.element_type not in kinds:
        raise error(f"{who} combines {' or '.join(repr(dtype_of(k)) for k in kinds)} elements atomically; "
                    f"{view.name!r} holds {view.dtype}")
    rank = 1 if isinstance(value, Vector) else 2
    if rank != view.ndim:
        raise error(f"{who} of a {rank}-D value into {view.ndim}-D {view.name!r}")
    bits = True if mask is None else mask_bits(mask, value, who)
    if bits is False:
        old = zeros_like(value)
        return Scalar(current().value(t.ExtractOp(old.value))) if one else old
    op = t.AtomicOp(kind, value.value, view.value, _offsets(view, offsets, who),
                    None if cmp is None else cmp.value, returns=True, mask=None if bits is True else bits.value,
                    ordered=ordered)
    old = wrap(current().value(op))
    if one:  # a scalar's one element: Triton's scalar atomic gives a scalar
        return Scalar(current().value(t.ExtractOp(old.value)))
    return old


def _atomic_operand(who: str, what: str, view: View, value: Any) -> Tile | Vector:
    """An atomic's ``value`` or ``cmp`` as a tile or vector of the array's element type."""
    if isinstance(value, Expanded):
        value = value.tile() if view.ndim == 2 else value.vector
    if isinstance(value, (Scalar, int, float)) and not isinstance(value, bool) and view.ndim in (1, 2):
        value = full((1,) * view.ndim, value, view.dtype)  # one element, in the array's type
    if not isinstance(value, (Tile, Vector)):
        raise error(f"{who} combines a tile, a vector or a scalar, got {_describe(value)} as its {what}")
    if value.type.element_type != view.type.element_type:  # in the array's type, as Triton's atomics take it
        value = stored_as(value, view)
    return value


def atomic_add(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
               scope: Any = None) -> Tile | Vector | Scalar:
    """Add ``value`` (a tile, a vector or a scalar) into ``view`` at ``offsets`` atomically (Triton's
    ``tl.atomic_add``): f32, int32, f64 or int64 arrays. Each element is added once however many threads hold it:
    once a block for a value that is the same in every warp. Elements outside the array are dropped.
    f32 sums follow the order the blocks arrive in.

    Returns the elements' values from before (0 outside the array), in ``value``'s form: a scalar for
    a scalar. Used, the add is PTX's ``atom`` (acquire-release, GPU scope, as Triton's default); unused,
    a relaxed ``red`` unless ``sem=`` asks for an order (``"release"``, ``"acquire"``, ``"acq_rel"``: then
    ``atom``, e.g. a counter that tells another block this one's stores are done). ``mask=`` (every atomic takes it, as Triton's): the elements where it is false are
    left alone and give 0."""
    return _atomic("add", view, offsets, value, mask=mask, sem=sem, scope=scope)


def atomic_max(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
               scope: Any = None) -> Tile | Vector | Scalar:
    """The element-wise maximum of ``view`` at ``offsets`` and ``value``, atomically (int32, int64 and
    float32 arrays; a float as integer operations on its bits, chosen by its sign); the old values as
    :func:`atomic_add` gives them."""
    return _atomic("max", view, offsets, value, mask=mask, sem=sem, scope=scope)


def atomic_min(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
               scope: Any = None) -> Tile | Vector | Scalar:
    """The element-wise minimum, atomically (int32, int64 and float32 arrays); the old values."""
    return _atomic("min", view, offsets, value, mask=mask, sem=sem, scope=scope)


def atomic_xchg(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
                scope: Any = None) -> Tile | Vector | Scalar:
    """Write ``value`` into ``view`` at ``offsets`` atomically and give the old values (Triton's
    ``tl.atomic_xchg``; int32, int64, float32 and float64 arrays; always PTX's ``atom``, acquire-release: a lock's release)."""
    return _atomic("xchg", view, offsets, value, mask=mask, sem=sem, scope=scope)


def atomic_cas(view: View, offsets: Sequence[Any], cmp: Any, value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
               scope: Any = None) -> Tile | Vector | Scalar:
    """Compare and swap (Triton's ``tl.atomic_cas(pointer, cmp, val)``): where an element of ``view`` at
    ``offsets`` equals ``cmp`` (bit for bit), write ``value``; give the old values either way. int32
    and float32 arrays. A spin lock: ``while tl.atomic_cas(lock, (i,), 0, 1) == 1: pass``."""
    return _atomic("cas", view, offsets, value, cmp, mask=mask, sem=sem, scope=scope)


def atomic_and(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
               scope: Any = None) -> Tile | Vector | Scalar:
    """Bitwise and into an int32 or int64 array atomically; the old values."""
    return _atomic("and", view, offsets, value, mask=mask, sem=sem, scope=scope)


def atomic_or(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
              scope: Any = None) -> Tile | Vector | Scalar:
    """Bitwise or into an int32 or int64 array atomically; the old values."""
    return _atomic("or", view, offsets, value, mask=mask, sem=sem, scope=scope)


def atomic_xor(view: View, offsets: Sequence[Any], value: Any = _NO_VALUE, *, mask: Any = None, sem: Any = None,
               scope: Any = None) -> Tile | Vector | Scalar:
    """Bitwise exclusive or into an int32 or int64 array atomically; the old values."""
    return _atomic("xor", view, offsets, value, mask=mask, sem=sem, scope=scope)


def _offsets(view: View, offsets: Any, who: str) -> list[SSAValue]:
    if not isinstance(offsets, (tuple, list)):
        offsets = (offsets,)
    if len(offsets) != view.ndim:
        raise error(f"{who} of {view.name!r} ({view.ndim}-D) needs {view.ndim} offsets, got {len(offsets)}")
    return [index(o, f"{who} offset {i}") for i, o in enumerate(offsets)]


# ---------------------------------------------------------------- tiles from scratch


def zeros(shape: Any, dtype: Any = "float32", *, axis: int = 1) -> Tile | Vector:
    """A tile (2-D ``shape``) or vector (1-D; ``axis`` as in :func:`load`) of zeros."""
    out = current().value(t.ZerosOp(_register_type(shape, dtype, axis)))
    return wrap(mark(out) if element_type(dtype).is_unsigned else out)


def zeros_like(x: Tile | Vector) -> Tile | Vector:
    """Zeros of ``x``'s shape and element type (a vector keeps its orientation)."""
    return full_like(x, 0)


def full_like(x: Tile | Vector, value: Any) -> Tile | Vector:
    """``value`` in ``x``'s shape and element type (a vector keeps its orientation)."""
    if not isinstance(x, (Tile, Vector)):
        raise error(f"tl.full_like takes a tile or a vector, got {_describe(x)}")
    axis = 0 if isinstance(x, Vector) and x.orientation == "row" else 1
    return full(x.shape, value, x.dtype, axis=axis)


def full(shape: Any, value: Any, dtype: Any = "float32", *, axis: int = 1) -> Tile | Vector:
    """A tile or vector with every element ``value`` (a number or a scalar)."""
    ty = _register_type(shape, dtype, axis)
    dt = element_type(dtype)
    trace = current()
    if isinstance(value, Scalar):
        if value.dtype != dt:  # converted, or read with the other signedness
            value = value.to(dt)
        scalar = value.value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        scalar = trace.constant(value, ty.element_type, unsigned=dt.is_unsigned)
    else:
        raise error(f"tl.full's value must be a number or a scalar, got {_describe(value)}")
    out = trace.value(t.FillOp(scalar, ty))
    return wrap(mark(out) if dt.is_unsigned else out)


def arange(start: Any, end: int | None = None, *, axis: int = 1) -> Vector:
    """``start, start + 1, ... end - 1`` as an int32 vector (``arange(n)`` starts at 0), one value per
    column (``axis=1``) or per row (``axis=0``); a run-time start is :func:`iota`'s offset."""
    if end is None:
        start, end = 0, start
    if not isinstance(start, int) or not isinstance(end, int):
        raise error("tl.arange(start, end) takes Python ints; for a run-time start use tl.iota((n,), 0, start)")
    return iota((end - start,), 0, start, axis=axis)


def iota(shape: Any, dim: int, offset: Any = 0, *, axis: int = 1) -> Tile | Vector:
    """Each element's coordinate along ``dim`` plus ``offset`` (int32): with a window's origin as the
    offset, the element's row or column in the array, what a mask compares."""
    dims = _static_shape(shape, "tl.iota's shape")
    if dim not in range(len(dims)):
        raise error(f"dim {dim!r} is not a dimension of shape {dims}")
    ty = _register_type(dims, int32, axis)
    if isinstance(offset, int) and not -(1 << 31) <= offset <= (1 << 31) - dims[dim]:  # the last: offset + dims - 1
        raise error(f"tl.iota's offset {offset} makes coordinates past tl.int32 (its elements' type)")
    return wrap(current().value(t.IotaOp(index(offset, "tl.iota's offset"), dim, ty)))


def _register_type(shape: Any, dtype: Any, axis: int):
    dims = _static_shape(shape, "the shape")
    element = element_type(dtype).ir
    if len(dims) == 1:
        if axis not in (0, 1):
            raise error(f"axis= of a vector is 0 (one value per row) or 1 (per column), got {axis!r}")
        return checked_type(RegisterVectorType, dims[0], element, "row" if axis == 0 else "col")
    if len(dims) == 2:
        return checked_type(RegisterType, list(dims), element)
    raise error(f"register values are 1-D vectors or 2-D tiles, got shape {dims}")


# ---------------------------------------------------------------- reductions


_REDUCTION_OPS: dict[tuple[str, int], type[Operation]] = {
    ("sum", 1): t.RowSumOp, ("max", 1): t.RowMaxOp, ("min", 1): t.RowMinOp,
    ("sum", 0): t.ColSumOp, ("max", 0): t.ColMaxOp, ("min", 0): t.ColMinOp,
}


def _reduce(kind: str, x: Any, axis: Any) -> Vector | Scalar:
    """``x`` reduced along ``axis`` (1 or -1: each row; 0 or -2: each column) into a vector, or, with
    ``axis=None`` or a vector, entirely into a scalar. Masks count as int32 (``tl.sum(x > 0)``), as numpy's
    and Triton's booleans do; so do 8- and 16-bit integers (their maxima and minima in their own type)."""
    if isinstance(x, Expanded):  # v[:, None]: the tile of one column it stands for
        x = x.tile()
    if isinstance(x, (Tile, Vector)) and x.dtype.is_unsigned:
        return _unsigned_reduction(lambda y: _reduce(kind, y, axis), kind, x)
    if isinstance(x, (Tile, Vector)) and x.dtype in (int8, int16, float8_e4m3fn, float8_e5m2):
        narrow = x.dtype  # FP8 in f32: a maximum or minimum comes back exactly
        widened = _reduce(kind, x.to(int32 if narrow in (int8, int16) else float32), axis)
        return widened if kind == "sum" else widened.to(narrow)
    if isinstance(x, (Tile, Vector)) and x.dtype == int1:
        x = x.to(int32)
    if isinstance(x, Vector):
        if axis not in (None, 0, -1):
            raise error(f"tl.{kind} of a vector reduces its one axis (axis=None or 0), got axis={axis!r}")
        return _reduce_vector(kind, x)
    if not isinstance(x, Tile):
        raise error(f"tl.{kind} reduces a tile or a vector, got {_describe(x)}")
    if axis is None:
        return _reduce_vector(kind, _reduce(kind, x, 1))
    if isinstance(axis, bool) or axis not in (0, 1, -1, -2):
        raise error(f"tl.{kind}'s axis is 0 (down the columns), 1 (along the rows) or None (everything), "
                    f"got {axis!r}")
    _check_reducible(kind, x)
    return Vector(current().value(_REDUCTION_OPS[(kind, axis % 2)](x.value)))


def _unsigned_reduction(reduce: Callable[[Any], Any], kind: str, x: Tile | Vector) -> Any:
    """``reduce`` (a sum, maximum or minimum of signed integers, or a scan of ``kind``) of unsigned ``x``, as
    Triton's: 8- and 16-bit ones in uint32 (a sum stays uint32, an extreme comes back in x's type); a
    maximum or minimum with the sign bit flipped, which orders unsigned numbers as signed ones are
    ordered; a sum or product of the same bits."""
    if x.dtype.bits < 32:
        out = _unsigned_reduction(reduce, kind, x.to(uint32))
        return out if kind in ("sum", "prod") else out.to(x.dtype)
    if kind in ("max", "min"):
        sign = 1 << (x.dtype.bits - 1)
        flipped = reduce((x ^ sign).to(x.dtype.signed, bitcast=True))
        return flipped.to(x.dtype, bitcast=True) ^ sign
    return reduce(x.to(x.dtype.signed, bitcast=True)).to(x.dtype, bitcast=True)


def reduce(input: Tile | Vector, axis: Any, combine_fn: Callable[..., Any],  # noqa: A001, A002 - Triton's names
           keep_dims: bool = False) -> Any:
    """Triton's ``tl.reduce`` of one tile or vector with a function: ``combine_fn(a, b)`` (a ``@tl.func``
    or a plain function of two scalars returning one) folds ``axis`` (1 each row, 0 each column, None
    everything into a scalar), in the element type. Combined in a tree (registers, lanes, warps), so it
    must be associative and commutative, as Triton takes it. One ``tile.reduce`` an axis."""
    who = "tl.reduce"
    if isinstance(input, tuple):
        raise error(f"{who} of several tiles at once (a tuple) is not supported: reduce one tile")
    if not callable(combine_fn):
        raise error(f"{who}'s combine_fn must be a function, got {_describe(combine_fn)}")
    x = input.tile() if isinstance(input, Expanded) else input
    if isinstance(x, (Tile, Vector)) and x.dtype in (int8, int16, uint8, uint16):  # carried in 32 bits, combined in x's type
        wide = uint32 if x.dtype.is_unsigned else int32
        return reduce(x.to(wide), axis, _computed_in(combine_fn, x.dtype, wide), keep_dims).to(x.dtype)
    if isinstance(x, (Tile, Vector)) and x.dtype in (float8_e4m3fn, float8_e5m2):  # computed in f32
        return reduce(x.to(float32), axis, combine_fn, keep_dims)
    if isinstance(x, (Tile, Vector)) and x.dtype == int1:
        x = x.to(int32)
    if isinstance(x, Vector):
        if axis not in (None, 0, -1):
            raise error(f"{who} of a vector reduces its one axis (axis=None or 0), got axis={axis!r}")
        n, element = x.shape[0], x.type.element_type
        rows = x.orientation == "row"
        tile = wrap(current().value(t.BroadcastOp(x.value, RegisterType([n, 1] if rows else [1, n], element))))
        one = _reduce_with(tile, "col" if rows else "row", combine_fn, who)  # a vector of one element
        return Scalar(current().value(t.ExtractOp(one.value)))
    if not isinstance(x, Tile):
        raise error(f"{who} reduces a tile or a vector, got {_describe(x)}")
    if axis is None:
        return reduce(reduce(x, 1, combine_fn), None, combine_fn)
    if isinstance(axis, bool) or axis not in (0, 1, -1, -2):
        raise error(f"{who}'s axis is 0 (down the columns), 1 (along the rows) or None (everything), got {axis!r}")
    return _kept(x, _reduce_with(x, "row" if axis % 2 else "col", combine_fn, who), axis, keep_dims)


def _computed_in(combine_fn: Callable[..., Any], narrow: Any, wide: Any) -> Callable[..., Any]:
    """``combine_fn`` on values carried as ``wide`` (32 bits) but of the 8- or 16-bit type ``narrow``: it computes
    in ``narrow`` (wrapping where Triton's does), its result carried as ``wide`` again."""
    def combine(a: Scalar, b: Scalar) -> Any:
        out = combine_fn(a.to(narrow), b.to(narrow))
        return out.to(narrow).to(wide) if isinstance(out, Value) else out

    return combine


def _reduce_with(x: Tile, orientation: str, combine_fn: Callable[..., Any], who: str) -> Vector:
    if not (x.dtype.is_float or x.dtype in (int32, int64, uint32, uint64)):
        raise error(f"{who} reduces float or 32- or 64-bit integer values, got {x.describe()}")
    region = _combining_region(combine_fn, x.type.element_type, who, x.dtype.is_unsigned)
    return Vector(current().value(t.ReduceOp(x.value, orientation, region)))


def _check_reducible(kind: str, x: Tile | Vector) -> None:
    """Float values, or int32 / int64 (signed; sums wrap as the GPU's adds do)."""
    if not (x.dtype.is_float or x.dtype in (int32, int64)):
        raise error(f"tl.{kind} reduces float, int32 or int64 values, got {x.describe()}")


def _reduce_vector(kind: str, v: Vector) -> Scalar:
    """A vector reduced to a scalar: broadcast along a tile of one column (a row vector) or one row,
    reduced to a vector of one element, and that element (``tile.extract``): no op of its own below
    the language."""
    _check_reducible(kind, v)
    n, element = v.shape[0], v.type.element_type
    rows = v.orientation == "row"
    tile = current().value(t.BroadcastOp(v.value, RegisterType([n, 1] if rows else [1, n], element)))
    one = current().value(_REDUCTION_OPS[(kind, 0 if rows else 1)](tile))
    return Scalar(current().value(t.ExtractOp(one)))


def _kept(x: Any, result: Vector | Scalar, axis: Any, keep_dims: bool) -> Any:
    """Triton's ``keep_dims=True``: a tile's reduced axis kept as one of extent 1 (``v[:, None]`` for the
    rows' values, ``v[None, :]`` for the columns'); a total reduction stays a scalar, which broadcasts
    as a 1 x 1 would."""
    if not keep_dims or not isinstance(x, Tile) or not isinstance(result, Vector):
        return result
    return result[:, None] if axis % 2 else result[None, :]


def sum(x: Tile | Vector, axis: int | None = None, keep_dims: bool = False, dtype: Any = None) -> Any:  # noqa: A001
    """The sum along ``axis``: 1 gives one value per row (a ``row`` vector), 0 one per column; None
    (the default, as in Triton and numpy) the sum of every element, a scalar, as for a vector.
    ``keep_dims``: the reduced axis kept, of extent 1, as Triton's (:func:`_kept`); ``dtype``: the
    elements converted to it first, the sum computed in it (Triton's ``tl.sum(x, dtype=tl.float32)``)."""
    if dtype is not None and isinstance(x, (Value, Expanded)):
        x = x.to(dtype)
    return _kept(x, _reduce("sum", x, axis), axis, keep_dims)


def max(x: Tile | Vector, axis: int | None = None, return_indices: bool = False,  # noqa: A001
        return_indices_tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """The maximum along ``axis`` (see :func:`sum`); ``return_indices=True``: ``(max, argmax)`` as
    Triton's (the first of equal ones)."""
    return _extreme("max", x, axis, return_indices, return_indices_tie_break_left, keep_dims)


def min(x: Tile | Vector, axis: int | None = None, return_indices: bool = False,  # noqa: A001
        return_indices_tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """The minimum along ``axis`` (see :func:`max`)."""
    return _extreme("min", x, axis, return_indices, return_indices_tie_break_left, keep_dims)


def _extreme(kind: str, x: Any, axis: Any, return_indices: bool, tie_break_left: bool, keep_dims: bool) -> Any:
    value = _kept(x, _reduce(kind, x, axis), axis, keep_dims)
    if not return_indices:
        return value
    if not tie_break_left:
        raise error(f"tl.{kind}(return_indices_tie_break_left=False): tilec's arg{kind} gives the first of equal "
                    "values (the left one)")
    index = (argmax if kind == "max" else argmin)(x, axis, keep_dims)
    return value, index


def argmax(x: Tile | Vector, axis: int | None = None, tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """The index of the largest value along ``axis`` (int32; the first of equal ones, or the last with
    ``tie_break_left=False``; a NaN's if there is one: where the maximum is), like numpy's and Triton's
    ``argmax``; ``axis=None`` (or a vector): the index into the whole, row-major (a scalar). Two reductions
    and a mask below the language."""
    return _kept(x, _arg_extreme("max", x, axis, tie_break_left), axis, keep_dims)


def argmin(x: Tile | Vector, axis: int | None = None, tie_break_left: bool = True, keep_dims: bool = False) -> Any:
    """The index of the smallest value along ``axis`` (see :func:`argmax`)."""
    return _kept(x, _arg_extreme("min", x, axis, tie_break_left), axis, keep_dims)


# ---------------------------------------------------------------- scans


def _scan(kind: str, x: Any, axis: Any, reverse: bool, dtype: Any, who: str,
          combine_fn: Callable[..., Any] | None = None) -> Tile | Vector:
    """``x``'s inclusive scan with ``kind`` along ``axis`` (a tile's 0 or 1, negative from the end; a
    vector's 0), from the far end with ``reverse``; ``dtype`` converts ``x`` first, as Triton's. Masks
    and 8/16-bit integers are scanned as int32, as Triton promotes them. One ``tile.scan``."""
    if isinstance(x, Expanded):
        x = x.tile()
    if not isinstance(x, (Tile, Vector)):
        raise error(f"{who} scans a tile or a vector, got {_describe(x)}")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.is_fp8:  # FP8 computes in f32
        x = x.to(float32)
    if x.dtype.is_unsigned and combine_fn is None:
        return _unsigned_reduction(lambda y: _scan(kind, y, axis, reverse, None, who), kind, x)
    narrow = x.dtype if combine_fn is not None and x.dtype in (int8, int16, uint8, uint16) else None
    if x.dtype in (uint8, uint16):
        x = x.to(uint32)
    elif not x.dtype.is_float and x.dtype not in (int32, int64, uint32, uint64):
        x = x.to(int32)
    if not isinstance(reverse, bool):
        raise error(f"{who}'s reverse is True or False, got {reverse!r}")
    if isinstance(x, Vector):
        if isinstance(axis, bool) or axis not in (0, -1):
            raise error(f"{who} of a vector scans its one axis (axis=0), got axis={axis!r}")
        dim = 0
    else:
        if isinstance(axis, bool) or axis not in (0, 1, -1, -2):
            raise error(f"{who}'s axis is 0 (down the columns) or 1 (along the rows) of a tile, got {axis!r}")
        dim = axis % 2
    extent = x.shape[dim]
    if extent & (extent - 1):
        raise error(f"{who} scans an extent that is a power of two (Triton's block sizes), got {extent} along "
                    f"axis {dim} of {x.describe()}")
    if narrow is not None:
        combine_fn = _computed_in(combine_fn, narrow, x.dtype)
    region = None if combine_fn is None else _combining_region(combine_fn, x.type.element_type, who, x.dtype.is_unsigned)
    scanned = wrap(current().value(t.ScanOp(x.value, kind, dim, reverse, region)))
    return scanned if narrow is None else scanned.to(narrow)  # a combine function's scan keeps its type (Triton's)


def _combining_region(fn: Callable[..., Any], element: Any, who: str, unsigned: bool = False) -> Region:
    """``fn`` traced on two scalars of ``element`` (``unsigned``: read as unsigned) into a region (what came
    first, then the next)."""
    trace = current()
    block = Block(arg_types=[element, element])
    for arg in block.args if unsigned else ():
        mark(arg)
    with trace.inside(block, isolated=True):
        try:
            out = fn(Scalar(block.args[0]), Scalar(block.args[1]))
        except TypeError as e:  # most often a function of another number of arguments
            raise error(f"{who}'s combine_fn is called with two scalars (what came first, then the next): "
                        f"{e}") from None
        if isinstance(out, (int, float, bool)):
            out = Scalar(trace.constant(out, element))
        if not isinstance(out, Scalar):
            raise error(f"{who}'s combine_fn must return one scalar, got {type(out).__name__}")
        if out.type != element:
            out = out.to(dtype_of(element).unsigned if unsigned else dtype_of(element))
        trace.emit(t.YieldOp(out.value))
    return Region(block)


def associative_scan(input: Tile | Vector, axis: int, combine_fn: Callable[..., Any],  # noqa: A002 - Triton's
                     reverse: bool = False) -> Tile | Vector:
    """Triton's ``tl.associative_scan`` of one tile or vector: ``combine_fn(a, b)`` (``a`` what came first,
    a ``@tl.func`` or a plain function of two scalars returning one) accumulated along ``axis``, in the
    element type. It must be associative (the scan combines in a tree's order); it need not commute."""
    if isinstance(input, tuple):
        raise error("tl.associative_scan of several tiles at once (a tuple) is not supported: scan one tile")
    if not callable(combine_fn):
        raise error(f"tl.associative_scan's combine_fn must be a function, got {_describe(combine_fn)}")
    return _scan("combine", input, axis, reverse, None, "tl.associative_scan", combine_fn)


def cumsum(x: Tile | Vector, axis: int = 0, reverse: bool = False, dtype: Any = None) -> Tile | Vector:
    """Triton's ``tl.cumsum``: the running sum along ``axis`` (0 by default, as Triton's), each element
    the sum of those up to it (with ``reverse``, from it to the end)."""
    return _scan("sum", x, axis, reverse, dtype, "tl.cumsum")


def cumprod(x: Tile | Vector, axis: int = 0, reverse: bool = False, dtype: Any = None) -> Tile | Vector:
    """Triton's ``tl.cumprod``: the running product along ``axis`` (see :func:`cumsum`)."""
    return _scan("prod", x, axis, reverse, dtype, "tl.cumprod")


def cummax(x: Tile | Vector, axis: int = 0, reverse: bool = False) -> Tile | Vector:
    """The running maximum along ``axis`` (torch's ``cummax`` values; see :func:`cumsum`)."""
    return _scan("max", x, axis, reverse, None, "tl.cummax")


def cummin(x: Tile | Vector, axis: int = 0, reverse: bool = False) -> Tile | Vector:
    """The running minimum along ``axis`` (see :func:`cummax`)."""
    return _scan("min", x, axis, reverse, None, "tl.cummin")


def _method(reduce: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tile | Vector, axis: int | None = None, keep_dims: bool = False) -> Any:
        return reduce(self, axis, keep_dims=keep_dims)

    method.__name__, method.__doc__ = reduce.__name__, f"``tl.{reduce.__name__}(x, axis, keep_dims)`` as Triton's method."
    return method


def _scan_method(scan: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Tile | Vector, axis: int = 0, reverse: bool = False) -> Any:
        return scan(self, axis, reverse)

    method.__name__, method.__doc__ = scan.__name__, f"``tl.{scan.__name__}(x, axis, reverse)`` as Triton's method."
    return method


# Triton's tensor methods x.sum(axis), x.max(axis), x.cumsum(axis) ... (values.py, which these build on,
# cannot import them)
for _cls in (Tile, Vector):
    for _fn in (sum, max, min, argmax, argmin):
        setattr(_cls, _fn.__name__, _method(_fn))
    for _fn in (cumsum, cumprod):
        setattr(_cls, _fn.__name__, _scan_method(_fn))
del _cls, _fn


def _arg_extreme(kind: str, x: Any, axis: Any, first: bool = True) -> Vector | Scalar:
    who = f"tl.arg{kind}"
    if not isinstance(first, bool) and first not in (0, 1):
        raise error(f"{who}'s tie_break_left is a Python bool (a tl.constexpr), got {first!r}")
    if isinstance(x, Expanded):
        x = x.tile()
    if not isinstance(x, (Tile, Vector)):
        raise error(f"{who} takes a tile or a vector, got {_describe(x)}")
    if x.dtype == int1:
        x = x.to(int32)
    if isinstance(x, Vector):
        if axis not in (None, 0, -1):
            raise error(f"{who} of a vector has one axis (axis=None or 0), got axis={axis!r}")
        (n,) = x.shape
        index = iota((n,), 0, axis=0 if x.orientation == "row" else 1)
    elif axis is None:
        rows, cols = x.shape
        index = iota(x.shape, 0) * cols + iota(x.shape, 1)  # the row-major index into the whole tile
    else:
        if isinstance(axis, bool) or axis not in (0, 1, -1, -2):
            raise error(f"{who}'s axis is 0, 1 or None, got {axis!r}")
        index = iota(x.shape, axis % 2)
    extreme = _reduce(kind, x, axis)
    wide = extreme[:, None] if isinstance(x, Tile) and axis is not None and axis % 2 == 1 else \
        extreme[None, :] if isinstance(x, Tile) and axis is not None else extreme
    # a NaN is the maximum's (and minimum's) place
    at = (x == wide) | (x != x) if x.dtype.is_float or x.dtype.is_fp8 else x == wide
    if not first:  # the last of equal ones
        return _reduce("max", where(at, index, -1), axis)
    past = x.shape[axis % 2] if isinstance(x, Tile) and axis is not None else _size(x)
    return _reduce("min", where(at, index, past), axis)


def _size(x: Tile | Vector) -> int:
    n = 1
    for d in x.shape:
        n *= d
    return n


def row_sum(x: Tile) -> Vector:
    """One sum per row (ThunderKittens' ``row_sum``)."""
    return _reduce("sum", x, 1)


def row_max(x: Tile) -> Vector:
    """One maximum per row."""
    return _reduce("max", x, 1)


def row_min(x: Tile) -> Vector:
    """One minimum per row."""
    return _reduce("min", x, 1)


def col_sum(x: Tile) -> Vector:
    """One sum per column."""
    return _reduce("sum", x, 0)


def col_max(x: Tile) -> Vector:
    """One maximum per column."""
    return _reduce("max", x, 0)


def col_min(x: Tile) -> Vector:
    """One minimum per column."""
    return _reduce("min", x, 0)


# ---------------------------------------------------------------- math


def _unary(name: str) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return elementwise(name, x)

    fn.__name__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of a tile, vector or scalar."
    return fn


exp, exp2, log, log2 = _unary("exp"), _unary("exp2"), _unary("log"), _unary("log2")
sqrt, rsqrt, tanh, abs = _unary("sqrt"), _unary("rsqrt"), _unary("tanh"), _unary("abs")  # noqa: A001
erf, sin, cos = _unary("erf"), _unary("sin"), _unary("cos")
floor, ceil, trunc, rint = _unary("floor"), _unary("ceil"), _unary("trunc"), _unary("rint")


def clamp(x: Any, lo: Any, hi: Any) -> Any:
    """``x`` limited to ``[lo, hi]``, elementwise: ``minimum(maximum(x, lo), hi)`` (Triton's ``tl.clamp``)."""
    return minimum(maximum(x, lo), hi)


def cdiv(a: Any, b: Any) -> Any:
    """``ceil(a / b)`` of non-negative integers (ints or integer scalars): how many blocks of ``b`` cover ``a``."""
    return (a + b - 1) // b


def dot(a: Tile, b: Tile, acc: Tile | None = None, *, trans_a: bool = False, trans_b: bool = False,
        input_precision: str | None = None, allow_tf32: bool | None = None, out_dtype: Any = None,
        max_num_imprecise_acc: int | None = None) -> Tile:
    """Triton's ``tl.dot``: :func:`mma` with an f32 accumulator of zeros when ``acc`` is not given.

    Triton's keywords are taken where tilec does what they ask: ``out_dtype`` (float32, or float16 /
    bfloat16: the product is accumulated in f32 and the result rounded to it, so an f16 ``acc`` carried
    through a loop is rounded once a step, where Triton's f16 accumulator rounds every addition; an
    ``acc`` of those types without ``out_dtype`` gives its type, as Triton's), ``input_precision="tf32"``
    / ``allow_tf32=True`` (f32 operands are read as tf32 by the tensor cores, the default, as Triton's),
    ``input_precision="ieee"`` / ``allow_tf32=False`` (f32 operands multiplied exactly: the f32 FMA atom,
    one ``fma.rn.f32`` a product, on the CUDA cores), ``max_num_imprecise_acc`` (ignored: every product is
    accumulated in f32). Anything else is an error saying so."""
    if isinstance(a, Tile) and isinstance(b, Tile) and (a.dtype.is_unsigned or b.dtype.is_unsigned):
        raise error(f"tl.dot multiplies float or int8 tiles, got {a.describe()} and {b.describe()} (unsigned: "
                    "convert them, e.g. .to(tl.float16), or read uint8 as int8 where the values are below 128)")
    if isinstance(a, Tile) and isinstance(b, Tile) and (a.dtype == int8 or b.dtype == int8):
        return _int8_dot(a, b, acc, out_dtype, trans_a, trans_b)
    out = element_type(out_dtype) if out_dtype is not None else (acc.dtype if isinstance(acc, Tile) else float32)
    if out.name not in ("float32", "float16", "bfloat16"):
        raise error(f"tl.dot's out_dtype is float32, float16 or bfloat16, got {out!r}"
                    + ("" if out_dtype is not None else " (the type of acc)"))
    if isinstance(acc, Tile) and acc.dtype.name != "float32":
        acc = acc.to(float32)
    f32 = isinstance(a, Tile) and a.type.element_type.name == "f32"
    if input_precision not in (None, "tf32", "ieee", "tf32x3"):
        raise error(f"tl.dot's input_precision is 'tf32', 'ieee' or 'tf32x3', got {input_precision!r}")
    if f32 and input_precision == "tf32x3":
        raise error("tl.dot(input_precision='tf32x3') has no lowering in tilec: 'tf32' (the tensor cores, the "
                    "default) or 'ieee' (f32 fused multiply-adds, exact products)")
    ieee = f32 and (allow_tf32 is False or input_precision == "ieee")  # Triton's exact f32 dot: FMAs, not tf32
    if acc is None:
        if not isinstance(a, Tile) or not isinstance(b, Tile):
            raise error(f"tl.dot's a and b must be register tiles, got {_describe(a)} and {_describe(b)}")
        rows = a.shape[1] if trans_a else a.shape[0]
        cols = b.shape[0] if trans_b else b.shape[1]
        acc = zeros((rows, cols), "float32")
    result = mma(a, b, acc, trans_a=trans_a, trans_b=trans_b, atom="fma_f32" if ieee else None)
    return result if out.name == "float32" else result.to(out)


def _int8_dot(a: Tile, b: Tile, acc: Any, out_dtype: Any, trans_a: bool, trans_b: bool) -> Tile:
    """``tl.dot`` of int8 tiles: products summed in int32 (wrapping) on the 8-bit tensor-core atom, as Triton's."""
    if a.dtype != b.dtype:
        raise error(f"tl.dot of int8 multiplies two int8 tiles, got {a.describe()} and {b.describe()}")
    out = element_type(out_dtype) if out_dtype is not None else int32
    if out != int32:
        raise error(f"tl.dot of int8 tiles sums in int32 (out_dtype=tl.int32), got {out!r}")
    if acc is None:
        rows = a.shape[1] if trans_a else a.shape[0]
        cols = b.shape[0] if trans_b else b.shape[1]
        acc = zeros((rows, cols), "int32")
    if not isinstance(acc, Tile) or acc.dtype != int32:
        raise error(f"tl.dot of int8 tiles accumulates into an int32 tile, got {_describe(acc)}")
    return mma(a, b, acc, trans_a=trans_a, trans_b=trans_b)


static_range = builtins.range
"""Triton's ``tl.static_range``: a Python ``range``, so the loop unrolls while the kernel is traced."""


class PropagateNan:
    """Triton's ``tl.PropagateNan``: ``ALL`` (NaN if either operand is: tilec's default) or ``NONE`` (a NaN
    operand ignored, as C's ``fmax``)."""

    NONE = 0
    ALL = 0xFFFF


def _extreme_of_two(kind: str, a: Any, b: Any, propagate_nan: Any) -> Any:
    if propagate_nan not in (None, PropagateNan.ALL, PropagateNan.NONE):
        raise error(f"propagate_nan is tl.PropagateNan.ALL or NONE, got {propagate_nan!r}")
    both = elementwise(kind, a, b)
    if propagate_nan != PropagateNan.NONE or not isinstance(both, (Value, Expanded)) or not both.dtype.is_float:
        return both
    return where(a != a, b, where(b != b, a, both))  # a NaN operand ignored (NaN only if both are)


def maximum(a: Any, b: Any, propagate_nan: Any = None) -> Any:
    """The larger of ``a`` and ``b``, elementwise (NaN if either is, unless ``propagate_nan=NONE``)."""
    return _extreme_of_two("max", a, b, propagate_nan)


def minimum(a: Any, b: Any, propagate_nan: Any = None) -> Any:
    """The smaller of ``a`` and ``b``, elementwise (NaN if either is, unless ``propagate_nan=NONE``)."""
    return _extreme_of_two("min", a, b, propagate_nan)


def sigmoid(x: Any) -> Any:
    """``1 / (1 + e^-x)``, elementwise: one ``tile.map``."""
    return tile_map(lambda v: 1.0 / (1.0 + exp(-v)), x)


def map(fn: Callable[..., Any], *inputs: Any) -> Any:  # noqa: A001 - the op's name
    """``fn`` on each element of ``inputs`` (broadcast like the operators), as one ``tile.map``: ``fn``
    takes and returns scalars, built with the same operators and functions."""
    return tile_map(fn, *inputs)


__all__ = [
    "abs", "alloc", "arange", "async_commit", "async_copy", "async_wait", "barrier", "copy", "mma", "wgmma", "wgmma_wait", "block_id", "num_blocks", "num_programs", "cdiv", "clamp", "associative_scan", "col_max", "col_min", "col_sum", "cos", "cummax", "cummin", "cumprod", "cumsum", "dot", "erf", "exp", "exp2", "floor", "ceil", "full", "index",
    "iota", "lane_id", "load", "log", "log2", "map", "max", "maximum", "min", "minimum", "program_id", "reduce",
    "row_max", "row_min", "row_sum", "rsqrt", "sigmoid", "sin", "sqrt", "static_range", "store", "sum", "tanh", "thread_id",
    "warp_id", "where", "zeros",
]
