"""Tiled copies and tiled MMAs (CuTe's TiledCopy / TiledMMA, MoYe.jl's): atoms repeated over a CTA's threads.

An atom (``tilec.layout.atoms``) says what one instruction does for its few
threads. A *tiled* copy or MMA repeats it over many threads and values so that
one tile of a tensor is moved or multiplied by the whole thread block; its
*thread slice* then cuts any tensor into the part one thread handles. All of it
is layout algebra on the tensor's layout (the engine is never touched), so the
same partition works on global memory, shared memory, registers and on an
identity tensor of coordinates.

Conventions are CuTe's: TV layouts map ``(thread, value)`` to the
column-major index of an element in the tile; MMA operands are ``A: M x K``,
``B: N x K``, ``C: M x N``; threads are numbered from 0 (MoYe numbers from 1).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from functools import cached_property

from tilec.layout.algebra import coalesce, composition, right_inverse
from tilec.layout.atoms import CopyAtom, MMAAtom, mma_atom
from tilec.layout.int_tuple import IntTuple, compact_idx, idx2crd, is_int, is_tuple, product
from tilec.layout.layout import Layout, append_modes, make_layout
from tilec.layout.tensor import Tensor, check_tiles_divide, make_fragment_like
from tilec.layout.tiling import logical_divide, raked_product, tiled_product, zipped_divide
from tilec.layout.tv import TVLayout

__all__ = [
    "ThrCopy",
    "ThrMMA",
    "TiledCopy",
    "TiledMMA",
    "copy_atom_universal",
    "make_tiled_copy",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tiled_copy_tv",
    "make_tiled_mma",
    "render_tiled",
]


# -- small helpers ---------------------------------------------------------------------


def _layout_arg(x: object, what: str) -> Layout:
    """A Layout from a Layout or a shape (compact column-major)."""
    if isinstance(x, Layout):
        return x
    if is_int(x) or isinstance(x, (tuple, list)):
        return Layout(x)
    raise TypeError(f"{what} must be a Layout or a shape (int or tuple of ints), got {x!r}")


def _thread_arg(thread: object, num_threads: int, what: str) -> int:
    if not is_int(thread):
        raise TypeError(f"{what}: thread must be an int, got {thread!r}")
    if not 0 <= thread < num_threads:
        raise ValueError(f"{what}: thread {thread} is outside 0..{num_threads - 1}")
    return thread


def _tensor_arg(x: object, what: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{what}: expected a Tensor (make_tensor, make_identity_tensor), got {x!r}")
    return x


def _as_modes(layout: Layout) -> Layout:
    """``layout`` with a tuple shape (a rank-1 int-shaped layout becomes a one-mode tuple)."""
    return layout if is_tuple(layout.shape) else Layout((layout.shape,), (layout.stride,))


def _slice_thread(layout: Layout, thread_crd: object, rest_rank: int, offset: int, engine: object) -> Tensor:
    """Fix the thread mode of ``((thread, value), (rest...))`` and keep ``(value, rest...)``."""
    sub, extra = layout.slice_and_offset(((thread_crd, None), (None,) * rest_rank))
    return Tensor(engine, sub, offset + extra)


_CACHED_PARTITIONS = 64
"""Partitioned layouts kept per tiled copy or MMA (a kernel partitions a handful of tensors)."""


def _remember(cache: dict, key: tuple, value: Layout) -> Layout:
    """Keep ``value`` for ``key``, forgetting the oldest entries past :data:`_CACHED_PARTITIONS`."""
    if len(cache) >= _CACHED_PARTITIONS:
        cache.pop(next(iter(cache)))
    cache[key] = value
    return value


def copy_atom_universal(copy_bits: int, elem_bits: int | None = None) -> CopyAtom:
    """One thread moving ``copy_bits`` of contiguous ``elem_bits`` elements with a plain load/store.

    CuTe's ``UniversalCopy<uint128_t>``: ``copy_atom_universal(128, 32)`` moves
    four f32 per instruction (a vectorised copy); ``copy_atom_universal(32)``
    one 32-bit element (the default element is one whole copy).
    """
    elem_bits = copy_bits if elem_bits is None else elem_bits
    for name, bits in (("copy_bits", copy_bits), ("elem_bits", elem_bits)):
        if not is_int(bits) or bits <= 0:
            raise ValueError(f"copy_atom_universal: {name} must be a positive int, got {bits!r}")
    if copy_bits % elem_bits:
        raise ValueError(
            f"copy_atom_universal: copy_bits {copy_bits} is not a whole number of {elem_bits}-bit elements"
        )
    n = copy_bits // elem_bits
    tv = TVLayout(Layout((1, n), (0, 1)), (n,))
    return CopyAtom(f"universal_copy_{copy_bits}_b{elem_bits}", f"ld/st.b{copy_bits}", elem_bits, tv, tv)


# -- tiled copy ---------------------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class TiledCopy:
    """``atom`` repeated so that ``num_threads`` threads move a tile of shape ``tiler``.

    ``layout_tv``: ``(thread, value) -> index in the tile`` on the destination
    side (CuTe's reference side); each thread's values come in runs of the
    atom's value count, one run per instruction. ``src``/``dst`` are the same
    assignment as TV layouts of the source and destination.
    """

    atom: CopyAtom
    layout_tv: Layout
    tiler: tuple[int, ...]
    thr_layout: Layout | None = None
    """The thread layout :func:`make_tiled_copy` was given (None when made from a TV layout)."""
    val_layout: Layout | None = None
    """The value layout :func:`make_tiled_copy` was given."""

    def __post_init__(self):
        if not isinstance(self.atom, CopyAtom):
            raise TypeError(f"TiledCopy: atom must be a CopyAtom, got {self.atom!r}")
        if not isinstance(self.layout_tv, Layout) or self.layout_tv.rank() != 2:
            raise ValueError(f"TiledCopy: layout_tv must be a rank-2 (thread, value) Layout, got {self.layout_tv}")
        tiler = (self.tiler,) if is_int(self.tiler) else tuple(self.tiler)
        if not tiler or not all(is_int(n) and n > 0 for n in tiler):
            raise ValueError(f"TiledCopy: tiler must be positive ints, one per tile mode, got {self.tiler!r}")
        object.__setattr__(self, "tiler", tiler)
        threads, values = self.layout_tv[0].size(), self.layout_tv[1].size()
        if threads % self.atom_threads:
            raise ValueError(
                f"TiledCopy: {threads} threads are not a whole number of {self.atom.name}'s {self.atom_threads}"
            )
        if values % self.atom_values:
            raise ValueError(
                f"TiledCopy: {values} values per thread are not a whole number of {self.atom.name}'s "
                f"{self.atom_values} per instruction"
            )
        TVLayout(self.layout_tv, tiler)  # checks every index lies in the tile

    @property
    def atom_threads(self) -> int:
        return self.atom.dst.num_threads

    @property
    def atom_values(self) -> int:
        """Values one thread moves per instruction (on the reference, destination side)."""
        return self.atom.dst.num_values

    @property
    def num_threads(self) -> int:
        return self.layout_tv[0].size()

    @property
    def num_values(self) -> int:
        """Values one thread moves per tile."""
        return self.layout_tv[1].size()

    @property
    def tile_shape(self) -> tuple[int, ...]:
        return self.tiler

    def _thrval_to_tile(self, ref_to_side: Layout) -> Layout:
        """``((thread), (value)) -> tile index`` with threads and values numbered as on one side.

        ``ref_to_side`` maps the atom's (thread, value) on that side to its
        (thread, value) index on the reference side, where ``layout_tv`` is
        defined; each instruction's block of ``layout_tv`` is re-indexed by it.
        """
        blocks = zipped_divide(self.layout_tv, (self.atom_threads, self.atom_values))
        # ((atom thread, atom value), (rest threads, rest values)) -> tile index
        side = composition(blocks, (ref_to_side, None))
        thread = make_layout(side[0][0], side[1][0])
        value = make_layout(side[0][1], side[1][1])
        return coalesce(make_layout(thread, value), (1, (1, 1)))

    @cached_property
    def _src_tv(self) -> Layout:
        return self._thrval_to_tile(composition(right_inverse(self.atom.dst.layout), self.atom.src.layout))

    @cached_property
    def _dst_tv(self) -> Layout:
        return self._thrval_to_tile(composition(right_inverse(self.atom.dst.layout), self.atom.dst.layout))

    @cached_property
    def src(self) -> TVLayout:
        """Which source element each (thread, value) reads."""
        return TVLayout(coalesce(self._src_tv, (1, 1)), self.tiler)

    @cached_property
    def dst(self) -> TVLayout:
        """Which destination element each (thread, value) writes."""
        return TVLayout(coalesce(self._dst_tv, (1, 1)), self.tiler)

    def get_slice(self, thread: int) -> "ThrCopy":
        return ThrCopy(self, _thread_arg(thread, self.num_threads, "TiledCopy.get_slice"))

    get_thread_slice = get_slice

    @cached_property
    def _frg_cache(self) -> dict:
        """Partitioned layouts by (tensor layout, side): every thread of a block partitions the same tensor."""
        return {}

    def _thrfrg(self, layout: Layout, side: str) -> Layout:
        """``layout`` as ``((thread, value), (rest modes...))`` for the source (S) or destination (D) side."""
        found = self._frg_cache.get((layout, side))
        if found is None:
            what = f"partition_{side}"
            modes = _as_modes(layout)
            check_tiles_divide(modes, self.tiler, what)
            tiles = zipped_divide(modes, self.tiler)  # ((tile modes), (rest modes))
            thrval = self._src_tv if side == "S" else self._dst_tv
            try:
                tv = composition(tiles, (thrval, None))
            except ValueError as err:  # e.g. a vector run that wraps from one column into the next
                raise ValueError(
                    f"{what}: the tensor's tile {tiles[0]} cannot be cut into this copy's (thread, value) "
                    f"runs {thrval}: {err}"
                ) from None
            found = _remember(self._frg_cache, (layout, side), tv)
        return found

    def _partition(self, tensor: Tensor, side: str, thread: int) -> Tensor:
        tensor = _tensor_arg(tensor, f"partition_{side}")
        tv = self._thrfrg(tensor.layout, side)
        return _slice_thread(tv, thread, len(tv.shape[1]), tensor.offset, tensor.engine)

    def retile(self, tensor: Tensor) -> Tensor:
        """A thread's fragment regrouped as ``((atom values, rest), modes...)``: one run per instruction.

        The fragment's values are taken in its own order (mode 0 first, then
        the next modes), so a fragment made for this copy, or for an MMA whose
        values come in the same order, gets a first mode this copy can use.
        """
        tensor = _tensor_arg(tensor, "retile")
        return tensor.with_layout(_group_values(_as_modes(tensor.layout), self.atom_values))

    def __str__(self) -> str:
        return f"TiledCopy({self.atom.name}, layout_tv={self.layout_tv}, tiler={self.tiler})"

    __repr__ = __str__


def _group_values(layout: Layout, atom_values: int) -> Layout:
    """``layout``'s mode 0 split (or widened into mode 1) so that it starts with ``atom_values`` values."""
    values = layout[0].size()
    if values % atom_values == 0:
        return make_layout(logical_divide(layout[0], atom_values), *list(layout)[1:])
    if atom_values % values == 0 and len(layout) > 1:
        need = atom_values // values
        if layout[1].size() % need:
            raise ValueError(
                f"retile: the fragment {layout} cannot be grouped into runs of {atom_values} values: "
                f"mode 1 has {layout[1].size()} elements, not a multiple of {need}"
            )
        taken = logical_divide(layout[1], need)  # (the part joining mode 0, what stays)
        return make_layout(make_layout(layout[0], taken[0]), taken[1], *list(layout)[2:])
    raise ValueError(f"retile: the fragment {layout} cannot be grouped into runs of {atom_values} values")


@dataclass(frozen=True, repr=False)
class ThrCopy:
    """One thread's view of a tiled copy: what it reads and writes of any tensor."""

    tiled: TiledCopy
    thread: int

    def partition_S(self, tensor: Tensor) -> Tensor:
        """This thread's source elements: ``(CPY, CPY_M, CPY_N, ...)``, CPY = its values in one tile."""
        return self.tiled._partition(tensor, "S", self.thread)

    def partition_D(self, tensor: Tensor) -> Tensor:
        """This thread's destination elements: ``(CPY, CPY_M, CPY_N, ...)``."""
        return self.tiled._partition(tensor, "D", self.thread)

    def retile(self, tensor: Tensor) -> Tensor:
        return self.tiled.retile(tensor)

    retile_S = retile
    retile_D = retile

    def __repr__(self) -> str:
        return f"ThrCopy(thread {self.thread} of {self.tiled})"


def make_tiled_copy_tv(atom: CopyAtom, layout_tv: Layout, tiler: IntTuple) -> TiledCopy:
    """A tiled copy from its destination TV layout and tile shape (CuTe's ``make_tiled_copy_impl``)."""
    tiler = (tiler,) if is_int(tiler) else tuple(product(t) for t in tiler)
    return TiledCopy(atom, layout_tv, tiler)


def make_tiled_copy(atom: CopyAtom, thr_layout: Layout | IntTuple, val_layout: Layout | IntTuple = 1) -> TiledCopy:
    """``thr_layout`` threads, each moving a ``val_layout`` block, tile a ``thr x val`` tile.

    Thread ``thr_layout(i, j)`` gets the block at block coordinate ``(i, j)``
    (CuTe's raked product): with ``thr = (2,3):(3,1)`` and ``val = (2,3)`` six
    threads copy a 4x9 tile, thread 1 the rows 0-1 of columns 3-5. Both layouts
    are the destination's; ``val_layout`` must hold whole instructions of ``atom``.
    """
    thr = _layout_arg(thr_layout, "make_tiled_copy: thr_layout")
    val = _layout_arg(val_layout, "make_tiled_copy: val_layout")
    mn = raked_product(thr, val)  # tile coordinate -> thread + num_threads * value
    inverse = right_inverse(mn)
    threads, values = thr.size(), val.size()
    if inverse.size() != threads * values:
        raise ValueError(
            f"make_tiled_copy: thr_layout {thr} and val_layout {val} must be one-to-one onto "
            f"0..{threads - 1} and 0..{values - 1}; their raked product {mn} is not"
        )
    layout_tv = composition(inverse, Layout((threads, values)))
    tiler = tuple(m.size() for m in mn) if is_tuple(mn.shape) else (mn.size(),)
    return TiledCopy(atom, layout_tv, tiler, thr, val)


# -- tiled MMA -------------------------------------------------------------------------

_OPERAND_MODES = {"A": (0, 2), "B": (1, 2), "C": (0, 1)}
"""The (M, N, K) modes each operand's tile spans: A is M x K, B is N x K, C is M x N."""


def _permutation_arg(permutation: object) -> tuple:
    if permutation is None:
        return (None, None, None)
    if not isinstance(permutation, (tuple, list)) or len(permutation) > 3:
        raise ValueError(f"make_tiled_mma: permutation must be a tuple of up to 3 modes (M, N, K), got {permutation!r}")
    modes = []
    for p in permutation:
        if p is None or isinstance(p, Layout):
            modes.append(p)
        elif is_int(p) and p > 0:
            modes.append(Layout(p))
        else:
            raise ValueError(f"make_tiled_mma: permutation modes must be None, a positive int or a Layout, got {p!r}")
    return tuple(modes) + (None,) * (3 - len(modes))


@dataclass(frozen=True, repr=False)
class TiledMMA:
    """``atom`` repeated over an ``(M, N, K)`` grid of thread groups (``atom_layout``).

    ``atom_layout(m, n, k)`` numbers the atom instance at grid position
    ``(m, n, k)``; thread ``t`` of instance ``g`` is thread ``t + g * atom
    threads``. ``permutation`` (CuTe's ``PermutationMNK``) may widen or reorder
    each of M, N, K before the atoms are laid over the tile. ``a``, ``b``, ``c``
    are the whole tile's TV layouts, like the atom's.
    """

    atom: MMAAtom
    atom_layout: Layout
    permutation: tuple = (None, None, None)

    def __post_init__(self):
        if not isinstance(self.atom, MMAAtom):
            raise TypeError(f"TiledMMA: atom must be an MMAAtom, got {self.atom!r}")
        if not isinstance(self.atom_layout, Layout) or self.atom_layout.rank() != 3:
            raise ValueError(f"TiledMMA: atom_layout must be a rank-3 (M, N, K) Layout, got {self.atom_layout}")
        if self._thread_to_vmnk.size() != self.num_threads:
            raise ValueError(f"TiledMMA: atom_layout {self.atom_layout} must be one-to-one onto its thread groups")
        for i, name in enumerate("MNK"):
            step = self.atom.shape_mnk[i] * self.atom_layout[i].size()
            if self.tile_mnk[i] % step:
                raise ValueError(
                    f"TiledMMA: permutation {name} covers {self.tile_mnk[i]} elements, not a multiple of "
                    f"{step} (atom {name} x atom_layout {name})"
                )

    @cached_property
    def thr_layout_vmnk(self) -> Layout:
        """``(atom thread, m, n, k) -> thread index``."""
        return tiled_product(Layout(self.atom.threads), self.atom_layout)

    @property
    def num_threads(self) -> int:
        return self.thr_layout_vmnk.size()

    @cached_property
    def tile_mnk(self) -> tuple[int, int, int]:
        """The (M, N, K) extents one pass of all threads covers."""
        return tuple(
            p.size() if p is not None else self.atom.shape_mnk[i] * self.atom_layout[i].size()
            for i, p in enumerate(self.permutation)
        )

    def _group_sizes(self) -> tuple[int, int, int, int]:
        return (self.atom.threads, *(self.atom_layout[i].size() for i in range(3)))

    @cached_property
    def _thread_to_vmnk(self) -> Layout:
        """Thread index -> colexicographic index of its (v, m, n, k) coordinate."""
        return right_inverse(self.thr_layout_vmnk)

    def thread_vmnk(self, thread: int) -> tuple[int, int, int, int]:
        """Thread ``thread``'s (lane in the atom, m, n, k) in the grid of atoms."""
        thread = _thread_arg(thread, self.num_threads, "TiledMMA.thread_vmnk")
        crd = idx2crd(self._thread_to_vmnk(thread), self.thr_layout_vmnk.shape)
        return tuple(compact_idx(c, s) for c, s in zip(crd, self.thr_layout_vmnk.shape))

    @cached_property
    def _frg_cache(self) -> dict:
        """Partitioned layouts by (tensor layout, operand): every thread of a block partitions the same tensor."""
        return {}

    def _thrfrg(self, layout: Layout, operand: str) -> Layout:
        found = self._frg_cache.get((layout, operand))
        if found is None:
            modes = _as_modes(layout)
            i, j = _OPERAND_MODES[operand]
            check_tiles_divide(modes, (self.tile_mnk[i], self.tile_mnk[j]), f"partition_{operand}")
            found = _remember(self._frg_cache, (layout, operand), self._divide_for_threads(modes, operand))
        return found

    def _divide_for_threads(self, layout: Layout, operand: str) -> Layout:
        """``layout`` as ``((atom thread, (thr_i, thr_j)), (atom value, (rest_i, rest_j, other modes...)))``."""
        i, j = _OPERAND_MODES[operand]
        atom_tv = {"A": self.atom.a, "B": self.atom.b, "C": self.atom.c}[operand].layout
        permuted = logical_divide(layout, (self.permutation[i], self.permutation[j]))
        atoms = zipped_divide(permuted, (self.atom.shape_mnk[i], self.atom.shape_mnk[j]))
        # ((atom i, atom j), (rest i, rest j, ...)) -> ((atom thread, atom value), (rest ...))
        tv = composition(atoms, (atom_tv, None))
        groups = logical_divide(tv[1], (self.atom_layout[i].size(), self.atom_layout[j].size()))
        # ((thr_i, rest_i), (thr_j, rest_j), other modes...)
        thread = make_layout(tv[0][0], make_layout(groups[0][0], groups[1][0]))
        value = make_layout(tv[0][1], make_layout(groups[0][1], groups[1][1], *list(groups)[2:]))
        return make_layout(thread, value)

    def _thread_crd(self, thread: int, operand: str) -> tuple:
        vmnk = self.thread_vmnk(thread)
        i, j = _OPERAND_MODES[operand]
        return (vmnk[0], (vmnk[1 + i], vmnk[1 + j]))

    def _partition(self, tensor: Tensor, operand: str, thread: int) -> Tensor:
        tensor = _tensor_arg(tensor, f"partition_{operand}")
        frg = self._thrfrg(tensor.layout, operand)
        crd = self._thread_crd(thread, operand)
        rest_rank = len(frg.shape[1][1])
        sub, extra = frg.slice_and_offset((crd, (None, (None,) * rest_rank)))
        return Tensor(tensor.engine, sub, tensor.offset + extra)

    def _operand_tv(self, operand: str) -> TVLayout:
        """``(thread index, value) -> index in the operand's tile``; threads that share data share values."""
        i, j = _OPERAND_MODES[operand]
        tile = (self.tile_mnk[i], self.tile_mnk[j])
        frg = self._thrfrg(Layout(tile), operand)
        v, *grid = self._group_sizes()
        # (v, m, n, k) colexicographic index -> index in (v, i, j), dropping the third mode (broadcast)
        strides = [1, 0, 0, 0]
        strides[1 + i], strides[1 + j] = v, v * grid[i]
        project = Layout((v, *grid), tuple(strides))
        thread = composition(project, self._thread_to_vmnk)
        return TVLayout(coalesce(make_layout(composition(frg[0], thread), frg[1]), (1, 1)), tile)

    @cached_property
    def a(self) -> TVLayout:
        return self._operand_tv("A")

    @cached_property
    def b(self) -> TVLayout:
        return self._operand_tv("B")

    @cached_property
    def c(self) -> TVLayout:
        return self._operand_tv("C")

    def get_slice(self, thread: int) -> "ThrMMA":
        return ThrMMA(self, _thread_arg(thread, self.num_threads, "TiledMMA.get_slice"))

    get_thread_slice = get_slice

    def __str__(self) -> str:
        perm = "" if self.permutation == (None, None, None) else f", permutation={tuple(map(str, self.permutation))}"
        return f"TiledMMA({self.atom.name}, atom_layout={self.atom_layout}{perm}, tile={self.tile_mnk})"

    __repr__ = __str__


def _shape_tensor(x: object, what: str) -> Tensor:
    """A tensor to partition for its shape only: a Tensor as is, a Layout or shape as an index tensor."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, Layout):
        return Tensor(None, x)
    if is_int(x) or isinstance(x, (tuple, list)):
        return Tensor(None, Layout(x))
    raise TypeError(f"{what}: expected a Tensor, Layout or shape, got {x!r}")


@dataclass(frozen=True, repr=False)
class ThrMMA:
    """One thread's view of a tiled MMA: its share of A (M x K), B (N x K) and C (M x N)."""

    tiled: TiledMMA
    thread: int

    def partition_A(self, tensor: Tensor) -> Tensor:
        """``(MMA, MMA_M, MMA_K, ...)``: this thread's A elements, MMA = its values per atom."""
        return self.tiled._partition(tensor, "A", self.thread)

    def partition_B(self, tensor: Tensor) -> Tensor:
        """``(MMA, MMA_N, MMA_K, ...)``."""
        return self.tiled._partition(tensor, "B", self.thread)

    def partition_C(self, tensor: Tensor) -> Tensor:
        """``(MMA, MMA_M, MMA_N, ...)``."""
        return self.tiled._partition(tensor, "C", self.thread)

    def partition_fragment_A(self, x: Tensor | Layout | IntTuple) -> Tensor:
        """A zeroed fragment holding this thread's A values of ``x`` (a tensor, layout or shape)."""
        return make_fragment_like(self.partition_A(_shape_tensor(x, "partition_fragment_A")))

    def partition_fragment_B(self, x: Tensor | Layout | IntTuple) -> Tensor:
        return make_fragment_like(self.partition_B(_shape_tensor(x, "partition_fragment_B")))

    def partition_fragment_C(self, x: Tensor | Layout | IntTuple) -> Tensor:
        return make_fragment_like(self.partition_C(_shape_tensor(x, "partition_fragment_C")))

    def __repr__(self) -> str:
        return f"ThrMMA(thread {self.thread} of {self.tiled})"


def make_tiled_mma(
    atom: MMAAtom | str, atom_layout: Layout | IntTuple = (1, 1, 1), permutation: tuple | None = None
) -> TiledMMA:
    """``atom`` tiled over an ``(M, N, K)`` grid of thread groups.

    ``make_tiled_mma(FMA_F32, (16, 16))`` is 256 threads each computing one
    element of a 16x16 C tile (MoYe's UniversalFMA example);
    ``make_tiled_mma(MMA_M16N8K16_F16, (2, 2))`` is four warps on a 32x16x16
    tile. ``permutation``: up to three of None / int / Layout, one per M, N, K.
    """
    if isinstance(atom, str):
        atom = mma_atom(atom)
    if not isinstance(atom, MMAAtom):
        raise TypeError(f"make_tiled_mma: atom must be an MMAAtom or an atom name, got {atom!r}")
    layout = _layout_arg(atom_layout, "make_tiled_mma: atom_layout")
    if layout.rank() > 3:
        raise ValueError(f"make_tiled_mma: atom_layout {layout} has rank {layout.rank()}; expected at most 3 (M, N, K)")
    return TiledMMA(atom, append_modes(_as_modes(layout), 3), _permutation_arg(permutation))


def _mma_copy(atom: CopyAtom, mma: TiledMMA, operand: str) -> TiledCopy:
    if not isinstance(mma, TiledMMA):
        raise TypeError(f"make_tiled_copy_{operand}: mma must be a TiledMMA, got {mma!r}")
    tv = {"A": mma.a, "B": mma.b, "C": mma.c}[operand]
    return TiledCopy(atom, tv.layout, tv.tile)


def make_tiled_copy_A(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    """A copy that delivers A exactly as ``mma``'s threads hold it (e.g. ldmatrix into MMA fragments)."""
    return _mma_copy(atom, mma, "A")


def make_tiled_copy_B(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    return _mma_copy(atom, mma, "B")


def make_tiled_copy_C(atom: CopyAtom, mma: TiledMMA) -> TiledCopy:
    return _mma_copy(atom, mma, "C")


# -- pictures ---------------------------------------------------------------------------


def render_tiled(obj: TiledCopy | TiledMMA, *, labels: bool | None = None, dpi: int = 100) -> str:
    """An SVG picture (as text) of a tiled copy (source | destination) or a tiled MMA (A | B | C).

    Cells are labelled ``T#V#`` and coloured by thread, as ``tilec.layout.render``
    draws atoms; B is drawn K x N, as CuTe and the PTX ISA draw it.
    """
    # lazy: draw.py costs ~5 ms of `import tilec.layout`, and matplotlib (imported by draw on use) ~0.7 s
    from tilec.layout import draw

    if isinstance(obj, TiledCopy):
        title = f"{obj.atom.name}  tiled {'x'.join(map(str, obj.tiler))}, {obj.num_threads} threads"
        bits = f"{obj.atom.elem_bits}-bit elements"
        panels = [
            draw._tv_panel(obj.src, [f"src = {obj.src.layout}", f"{'x'.join(map(str, obj.tiler))} of {bits}"], False),
            draw._tv_panel(obj.dst, [f"dst = {obj.dst.layout}", f"{'x'.join(map(str, obj.tiler))} of {bits}"], False),
        ]
    elif isinstance(obj, TiledMMA):
        m, n, k = obj.tile_mnk
        title = f"{obj.atom.name}  tiled {m}x{n}x{k}, {obj.num_threads} threads"
        panels = [
            draw._tv_panel(obj.a, [f"A = {obj.a.layout}", f"M x K = {m}x{k} ({obj.atom.a_type})"], False),
            draw._tv_panel(obj.b, [f"B = {obj.b.layout}", f"drawn K x N = {k}x{n} ({obj.atom.b_type})"], False)
            .transposed(),
            draw._tv_panel(obj.c, [f"C = {obj.c.layout}", f"M x N = {m}x{n} ({obj.atom.c_type})"], False),
        ]
    else:
        raise TypeError(f"render_tiled: expected a TiledCopy or TiledMMA, got {obj!r}")
    draw._check_positive(dpi, "dpi", "render_tiled")
    draw._check_size(str(obj), panels, "render_tiled")
    buffer = io.BytesIO()
    draw._save(draw._figure(title, panels, labels, None), buffer, "svg", dpi)
    return buffer.getvalue().decode("utf-8")

