"""tilec: a compiler for GPU tile programs, built on xDSL."""

__version__ = "0.1.0"
