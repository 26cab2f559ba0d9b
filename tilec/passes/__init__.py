"""tilec passes: one ``ModulePass`` per file, listed in :mod:`tilec.passes.registry`."""

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from tilec.passes.registry import (
    PipelinePass,
    build_pipeline,
    get_all_passes,
    get_all_targets,
)

__all__ = ["PipelinePass", "build_pipeline", "get_all_passes", "get_all_targets"]
