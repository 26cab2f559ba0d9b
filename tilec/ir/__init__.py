"""tilec's one place for what xDSL lacks or does slowly: the context, fast op creation,
verification, walks, garbage-collector pauses and lazily compiled assembly formats. Each
module says what gap it fills and how it was measured.

Importing this package installs :mod:`tilec.ir.lazy_formats`, so modules that define or
import dialects import ``tilec.ir`` before any ``xdsl.dialects`` module."""

from tilec.ir import lazy_formats

lazy_formats.install()
