"""xDSL dialects of tilec. ``get_all_dialects`` is the one list the tools load."""

from collections.abc import Callable

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Our dialects by name, imported lazily like xDSL's own registry.

    ``llvm`` is xDSL's with the ops of :mod:`tilec.dialects.llvm_ext`; it replaces xDSL's entry.
    """

    def tile() -> Dialect:
        # lazy: the tile dialect costs ~110 ms of import (measured); a context loads it on first use
        from tilec.dialects.tile import Tile

        return Tile

    def frag() -> Dialect:
        # lazy: the frag dialect costs ~150 ms of import (measured); a context loads it on first use
        from tilec.dialects.frag import Frag

        return Frag

    def llvm() -> Dialect:
        # lazy: xDSL's llvm dialect costs ~50 ms of import (measured); tile-level IR never needs it
        from tilec.dialects.llvm_ext import extended_llvm_dialect

        return extended_llvm_dialect()

    return {"tile": tile, "frag": frag, "llvm": llvm}
