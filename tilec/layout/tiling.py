"""Divides and products: how tiles are cut out of layouts and repeated.

All of them are defined by composition and complement, exactly as in CuTe:
``logical_divide(A, B) = A o (B, complement(B, size(A)))`` and
``logical_product(A, B) = (A, complement(A, size(A)*cosize(B)) o B)``. The
zipped and tiled forms only regroup the modes of the logical ones.
"""

from __future__ import annotations

from tilec.layout.algebra import coalesce, complement, composition, expect_layout
from tilec.layout.int_tuple import IntTuple, compact_idx, idx2crd_strided, is_int, is_tuple, product, shape_div
from tilec.layout.layout import Layout, append_modes, make_layout


def _on_outer(fn, a, *args):
    """Apply a layout operation to the outer layout of a composed layout (a TypeError naming the operation
    for anything else that is not a layout)."""
    if isinstance(a, Layout):
        return None
    if not hasattr(a, "with_layout"):
        expect_layout(fn.__name__, a, "layout (a)")
    return a.with_layout(fn(a.layout, *args))


def logical_divide(a, tiler) -> Layout:
    """``A`` split into ``(tile, rest)`` per tiler; by mode for tuple tilers."""
    if (out := _on_outer(logical_divide, a, tiler)) is not None:
        return out
    if tiler is None:
        return a
    if is_int(tiler):
        tiler = Layout(tiler)
    if isinstance(tiler, tuple):
        if len(tiler) > len(a):
            raise ValueError(f"logical_divide: tiler {tiler} has more modes than layout {a}")
        modes = [logical_divide(a[i], t) for i, t in enumerate(tiler)]
        return make_layout(*modes, *(a[i] for i in range(len(tiler), len(a))))
    expect_layout("logical_divide", tiler, "tiler (an int, a Layout or a tuple of them)")
    return composition(a, make_layout(tiler, complement(tiler, a.size())))


def logical_product(a, b) -> Layout:
    """``(A, rest)``: ``A`` repeated in the pattern of ``B``; by mode for tuples."""
    if (out := _on_outer(logical_product, a, b)) is not None:
        return out
    if b is None:
        return a
    if is_int(b):
        b = Layout(b)
    if isinstance(b, tuple):
        if len(b) > len(a):
            raise ValueError(f"logical_product: {b} has more modes than layout {a}")
        modes = [logical_product(a[i], t) for i, t in enumerate(b)]
        return make_layout(*modes, *(a[i] for i in range(len(b), len(a))))
    expect_layout("logical_product", b, "pattern (b: an int, a Layout or a tuple of them)")
    return make_layout(a, composition(complement(a, a.size() * b.cosize()), b))


def _zip_split(split, a: Layout, tiler) -> Layout:
    """Apply a rank-2 ``split`` and gather to ``((tiles...), (rests..., untouched...))``."""
    if tiler is None:
        return make_layout(Layout(1, 0), a)
    if isinstance(tiler, tuple):
        if len(tiler) > len(a):
            raise ValueError(f"tiler {tiler} has more modes than layout {a}")
        parts = [_zip_split(split, a[i], t) for i, t in enumerate(tiler)]
        tiles = make_layout(*(p[0] for p in parts))
        rests = make_layout(*(p[1] for p in parts), *(a[i] for i in range(len(tiler), len(a))))
        return make_layout(tiles, rests)
    return split(a, tiler)


def zipped_divide(a, tiler) -> Layout:
    """``((tile modes), (rest modes))``: the tile first, then which tile."""
    if (out := _on_outer(zipped_divide, a, tiler)) is not None:
        return out
    return _zip_split(logical_divide, a, tiler)


def tiled_divide(a, tiler) -> Layout:
    """``((tile modes), rest0, rest1, ...)``."""
    if (out := _on_outer(tiled_divide, a, tiler)) is not None:
        return out
    z = zipped_divide(a, tiler)
    return make_layout(z[0], *z[1])


def flat_divide(a, tiler) -> Layout:
    """``(tile0, tile1, ..., rest0, rest1, ...)``."""
    z = zipped_divide(a, tiler)
    return make_layout(*z[0], *z[1])


def zipped_product(a, b) -> Layout:
    if (out := _on_outer(zipped_product, a, b)) is not None:
        return out
    return _zip_split(logical_product, a, b)


def tiled_product(a, b) -> Layout:
    if (out := _on_outer(tiled_product, a, b)) is not None:
        return out
    z = zipped_product(a, b)
    return make_layout(z[0], *z[1])


def _interleaved_product(a: Layout, b: Layout, block_first: bool) -> Layout:
    name = "blocked_product" if block_first else "raked_product"
    expect_layout(name, a, "block (a)")
    expect_layout(name, b, "repetition (b)")
    r = max(len(a), len(b))
    a, b = append_modes(a, r), append_modes(b, r)
    prod = logical_product(a, b)
    block, reps = prod[0], prod[1]
    modes = [make_layout(block[i], reps[i]) if block_first else make_layout(reps[i], block[i]) for i in range(r)]
    return coalesce(make_layout(*modes), (1,) * r)


def blocked_product(a: Layout, b: Layout) -> Layout:
    """Mode by mode ``(block_i, b_i)``: ``a`` stays contiguous, repeated as ``b``."""
    return _interleaved_product(a, b, block_first=True)


def raked_product(a: Layout, b: Layout) -> Layout:
    """Mode by mode ``(b_i, block_i)``: ``a``'s elements interleaved with ``b``'s repeats."""
    return _interleaved_product(a, b, block_first=False)


def _tile_shape(tiler) -> tuple:
    if isinstance(tiler, Layout):
        return tiler.shape if is_tuple(tiler.shape) else (tiler.shape,)
    return tiler if isinstance(tiler, tuple) else (tiler,)


def local_tile(a, tiler, coord) -> tuple:
    """The tile of ``a`` at tile-coordinate ``coord``: ``(tile layout, offset)``.

    CuTe's ``local_tile(tensor, tiler, coord)`` on the tensor's layout: divide by
    the tiler, keep the tile modes, fix the rest modes at ``coord``.
    """
    z = zipped_divide(a, tiler)
    if is_tuple(coord):
        coord = tuple(coord) + (None,) * (len(z[1]) - len(coord))
    tile = (None,) * len(z[0]) if is_tuple(z[0].shape) else None  # CuTe's repeat<R0>(_)
    return z.slice_and_offset((tile, coord))


def local_partition(a, thr_layout: Layout, thr_idx: int) -> tuple:
    """What thread ``thr_idx`` of ``thr_layout`` owns of ``a``: ``(layout, offset)``.

    ``a`` is cut into tiles of ``thr_layout``'s shape; the thread's coordinate in
    that tile (found by inverting ``thr_layout``) is fixed, the tile repeats stay.
    """
    if not 0 <= thr_idx < thr_layout.size():
        raise ValueError(f"local_partition: thread {thr_idx} is outside thread layout {thr_layout}")
    tile = tuple(product(s) for s in _tile_shape(thr_layout))
    crd = _flat_coord(thr_layout, thr_idx)
    z = zipped_divide(a, tile)
    return z.slice_and_offset((crd, (None,) * len(z[1])))


def _flat_coord(layout: Layout, idx: int) -> tuple:
    """The per-mode coordinate whose offset in ``layout`` is ``idx`` (CuTe's get_flat_coord)."""
    hier = idx2crd_strided(idx, layout.shape, layout.stride)
    if not is_tuple(layout.shape):
        return (hier,)
    return tuple(compact_idx(c, s) for c, s in zip(hier, layout.shape))


def upcast(layout: Layout, n: int) -> Layout:
    """The layout in units of ``n`` elements (e.g. f16 offsets → 128-bit words, n=8)."""
    expect_layout("upcast", layout)
    if n <= 0:
        raise ValueError(f"upcast: factor {n} must be positive")

    def leaf(s: int, d: int) -> tuple[int, int]:
        if d == 0:
            return s, 0
        if abs(d) >= n:
            if d % n:
                raise ValueError(f"upcast of {layout} by {n}: stride {d} is not a multiple of {n}")
            return s, d // n
        if n % abs(d) or s % (n // abs(d)):
            raise ValueError(f"upcast of {layout} by {n}: mode {s}:{d} does not pack into words of {n}")
        return shape_div(s, n // abs(d)), (1 if d > 0 else -1)

    return _map_leaves(layout, leaf)


def downcast(layout: Layout, n: int) -> Layout:
    """The layout in units of ``1/n`` of an element (e.g. 32-bit words → f16, n=2)."""
    expect_layout("downcast", layout)
    if n <= 0:
        raise ValueError(f"downcast: factor {n} must be positive")
    return _map_leaves(layout, lambda s, d: (s * n, d) if abs(d) == 1 else (s, d * n))


def _map_leaves(layout: Layout, leaf) -> Layout:
    def walk(s: IntTuple, d: IntTuple) -> tuple:
        if is_tuple(s):
            pairs = [walk(x, y) for x, y in zip(s, d)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return leaf(s, d)

    new_shape, new_stride = walk(layout.shape, layout.stride)
    return Layout(new_shape, new_stride)
