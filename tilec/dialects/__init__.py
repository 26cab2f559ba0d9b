"""xDSL dialects of tilec. ``get_all_dialects`` is the one list the tools load."""

from collections.abc import Callable

from xdsl.ir import Dialect


def get_all_dialects() -> dict[str, Callable[[], Dialect]]:
    """Our dialects by name, imported lazily like xDSL's own registry."""

    def tile() -> Dialect:
        from tilec.dialects.tile import Tile

        return Tile

    def frag() -> Dialect:
        from tilec.dialects.frag import Frag

        return Frag

    return {"tile": tile, "frag": frag}
