"""``tile-distribute``: fragment-typed tile IR → the frag dialect (per-lane registers)."""
