"""CuTe's layout algebra in plain Python: no IR, no GPU.

Everything the compiler knows about where data lives is a value from here:
layouts (``shape:stride``), swizzles, composed (swizzled) layouts, thread–value
layouts and the tensor-core and copy atoms. The semantics are CuTe's, so a
CuTe user gets the same answers, and ``str`` prints CuTe's notation.
"""

from tilec.layout.algebra import coalesce, complement, composition, filter, filter_zeros, left_inverse, right_inverse
from tilec.layout.atoms import (
    COPY_ATOMS,
    FMA_F32,
    MMA_ATOMS,
    MMA_M16N8K8_TF32,
    MMA_M16N8K32_F8,
    MMA_M16N8K32_S8,
    MMA_M16N8K16_BF16,
    MMA_M16N8K16_F16,
    CopyAtom,
    MMAAtom,
    copy_atom,
    cp_async,
    ldmatrix,
    mma_atom,
)
from tilec.layout.int_tuple import crd2idx, idx2crd
from tilec.layout.layout import Layout, cosize, depth, make_layout, rank, shape, size, stride
from tilec.layout.parse import parse, parse_int_tuple, parse_layout
from tilec.layout.swizzle import ComposedLayout, Swizzle
from tilec.layout.tiling import (
    blocked_product,
    downcast,
    flat_divide,
    local_partition,
    local_tile,
    logical_divide,
    logical_product,
    raked_product,
    tiled_divide,
    tiled_product,
    upcast,
    zipped_divide,
    zipped_product,
)
from tilec.layout.tv import TVLayout
from tilec.layout.tensor import Coordinates, Tensor, copy, make_fragment_like, make_identity_tensor, make_tensor
from tilec.layout.tiled import (
    ThrCopy,
    ThrMMA,
    TiledCopy,
    TiledMMA,
    copy_atom_universal,
    make_tiled_copy,
    make_tiled_copy_A,
    make_tiled_copy_B,
    make_tiled_copy_C,
    make_tiled_copy_tv,
    make_tiled_mma,
    render_tiled,
)


def render(value, path, **options):
    """Draw a layout, swizzled layout or TV layout as SVG (or PNG for ``.png`` paths): :func:`tilec.layout.draw.render`;
    a tiled copy or tiled MMA as SVG (:func:`tilec.layout.tiled.render_tiled`).

    The drawing code lives in the submodule ``tilec.layout.draw``; it must not be called
    ``render``, or importing it would replace this function by the module (issue 17).
    """
    if isinstance(value, TiledCopy | TiledMMA):  # source | destination, or A | B | C, cells by thread
        if str(path).endswith(".png"):
            raise ValueError(f"render: a {type(value).__name__} is drawn as SVG; give a .svg path, got {path}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(render_tiled(value, **options))
        return path
    from tilec.layout.draw import render as _render  # lazy: saves ~5 ms of `import tilec.layout` (~12 ms)

    return _render(value, path, **options)


__all__ = [
    "COPY_ATOMS",
    "FMA_F32",
    "MMA_ATOMS",
    "MMA_M16N8K8_TF32",
    "MMA_M16N8K32_F8",
    "MMA_M16N8K32_S8",
    "MMA_M16N8K16_BF16",
    "MMA_M16N8K16_F16",
    "ComposedLayout",
    "CopyAtom",
    "Layout",
    "MMAAtom",
    "Swizzle",
    "TVLayout",
    "blocked_product",
    "coalesce",
    "complement",
    "composition",
    "copy_atom",
    "cosize",
    "cp_async",
    "crd2idx",
    "depth",
    "downcast",
    "filter",
    "filter_zeros",
    "flat_divide",
    "idx2crd",
    "ldmatrix",
    "left_inverse",
    "local_partition",
    "local_tile",
    "logical_divide",
    "logical_product",
    "make_layout",
    "mma_atom",
    "parse",
    "parse_int_tuple",
    "parse_layout",
    "raked_product",
    "rank",
    "render",
    "right_inverse",
    "shape",
    "size",
    "stride",
    "tiled_divide",
    "tiled_product",
    "upcast",
    "zipped_divide",
    "zipped_product",
    # tensors, tiled copies and tiled MMAs (tilec.layout.tensor, tilec.layout.tiled); the tensor-level
    # local_tile / local_partition are tilec.layout.tensor's (they also accept bare layouts)
    "Coordinates",
    "Tensor",
    "ThrCopy",
    "ThrMMA",
    "TiledCopy",
    "TiledMMA",
    "copy",
    "copy_atom_universal",
    "make_fragment_like",
    "make_identity_tensor",
    "make_tensor",
    "make_tiled_copy",
    "make_tiled_copy_A",
    "make_tiled_copy_B",
    "make_tiled_copy_C",
    "make_tiled_copy_tv",
    "make_tiled_mma",
    "render_tiled",
]
