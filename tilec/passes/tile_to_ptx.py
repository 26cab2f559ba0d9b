"""The named pipelines: the passes in order, with the options users reach for.

``tile-to-ptx`` takes a whole-problem ``tile.matmul`` to the llvm dialect
(then ``-t ptx`` or ``tilec.compile`` make PTX of it)::

    tile-opt examples/gemm.mlir -p tile-to-ptx -t 'ptx{arch=sm_90}'
    tile-opt examples/gemm.mlir -p 'tile-to-ptx{block=64,128,32 warps=2,2 stages=4}' -t ptx

Its options are the tiling's (``block``, ``warps``, ``group``, ``tf32``,
``thread_tile``) and the pipeline's ``stages``, ``bulk`` (sm_90 bulk
tensor copies for views with ``tile.aligned_rows``) and ``release`` (with
``bulk``: stages released on empty barriers, no block barrier in the K loop);
``stages=1`` skips software pipelining, the swizzle always runs. ``wgmma``
(sm_90a, with ``bulk``) multiplies with the warpgroup MMA on shared tiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tilec.passes.registry import PipelinePass
from tilec.passes.tiling_config import DEFAULT_BLOCK, DEFAULT_THREAD_TILE


def _tuple(values: tuple[int, ...]) -> str:
    return ",".join(str(v) for v in values)


@dataclass(frozen=True)
class TileToPTX(PipelinePass):
    """tile-tiling, tile-swizzle, tile-pipeline, tile-regalloc, tile-to-llvm."""

    name: ClassVar[str] = "tile-to-ptx"

    block: tuple[int, ...] = DEFAULT_BLOCK
    warps: tuple[int, ...] | None = None
    group: int = 8
    stages: int = 3
    tf32: bool = False
    thread_tile: tuple[int, ...] = DEFAULT_THREAD_TILE
    bulk: bool = False
    release: bool = True
    wgmma: bool = False

    def pipeline(self) -> str:
        tiling = [f"block={_tuple(self.block)}", f"group={self.group}", f"thread_tile={_tuple(self.thread_tile)}"]
        if self.warps is not None:
            tiling.append(f"warps={_tuple(self.warps)}")
        if self.tf32:
            tiling.append("tf32=true")
        if self.wgmma:
            tiling.append("wgmma=true")
        pipeline = f"stages={self.stages}" + (" bulk=true" if self.bulk else "")
        if self.bulk and not self.release:
            pipeline += " release=false"
        return (
            f"tile-tiling{{{' '.join(tiling)}}},tile-swizzle,tile-pipeline{{{pipeline}}},"
            "tile-regalloc,tile-to-llvm"
        )
