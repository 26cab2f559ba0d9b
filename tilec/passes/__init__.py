"""tilec passes: one ``ModulePass`` per file, listed in :mod:`tilec.passes.registry`."""

from tilec.passes.registry import (
    PipelinePass,
    build_pipeline,
    get_all_passes,
    get_all_targets,
)

__all__ = ["PipelinePass", "build_pipeline", "get_all_passes", "get_all_targets"]
