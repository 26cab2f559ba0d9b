"""Command-line tools of tilec: ``tile-opt`` (see :mod:`tilec.tools.tile_opt`)."""
