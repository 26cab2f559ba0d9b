"""The tile dialect: global, shared and register tiles with CuTe layouts, and their ops."""

from xdsl.ir import Dialect

from tilec.dialects.tile.attributes import (
    DYNAMIC,
    CopyAtomAttr,
    LaunchAttr,
    LayoutAttr,
    MMAAtomAttr,
    SwizzleAttr,
    TVLayoutAttr,
)
from tilec.dialects.tile.ops import *  # noqa: F403 - the op classes are the dialect's API
from tilec.dialects.tile.ops import TILE_OPS
from tilec.dialects.tile.types import GlobalType, MbarType, RegisterType, RegisterVectorType, SharedType

Tile = Dialect(
    "tile",
    TILE_OPS,
    [
        LayoutAttr,
        SwizzleAttr,
        TVLayoutAttr,
        MMAAtomAttr,
        CopyAtomAttr,
        LaunchAttr,
        GlobalType,
        SharedType,
        RegisterType,
        RegisterVectorType,
        MbarType,
    ],
)
