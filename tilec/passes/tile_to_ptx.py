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
(sm_90a, with ``bulk``) multiplies with the warpgroup MMA on shared tiles;
``producer`` (with ``bulk``) gives the kernel a producer warpgroup that issues
the copies (warp specialisation, :mod:`tilec.passes.tile_pipeline`).

The options are declared once, as the fields of :class:`TileToPTX`; a GEMM
configuration (:class:`tilec.kernels.gemm_config.MatmulConfig`) is this pass
with its options set. :meth:`TileToPTX.passes` makes the inner passes from
the option values directly; :meth:`TileToPTX.pipeline` prints the same passes
as text (``tile-opt``, messages). ``str(TileToPTX(...))`` is the pass's own
``tile-to-ptx{...}`` text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.passes import ModulePass

from tilec.passes.registry import PipelinePass, get_tilec_passes
from tilec.passes.tile_pipeline import TilePipelineError, check_stages
from tilec.passes.tiling_config import DEFAULT_BLOCK, DEFAULT_THREAD_TILE, check_cluster, check_options


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class TileToPTX(PipelinePass):
    """tile-tiling, tile-swizzle, tile-pipeline, tile-layout, tile-distribute, tile-to-llvm."""

    name: ClassVar[str] = "tile-to-ptx"

    block: tuple[int, ...] = DEFAULT_BLOCK
    warps: tuple[int, ...] | None = None
    stages: int = 3
    group: int = 8
    tf32: bool = False
    thread_tile: tuple[int, ...] | None = None
    """SIMT's per-lane tile of C; None: tile-tiling's default (8x8)."""
    bulk: bool = False
    release: bool = True
    wgmma: bool = False
    producer: bool = False
    """With ``bulk``: a producer warpgroup issues the K loop's copies (warp specialisation)."""
    persistent: bool = False
    """The blocks loop over C's tiles (``tile-tiling{persistent}``): launch at most one an SM."""
    bulk_store: bool = False
    """With ``bulk``: the warps store C through shared memory and bulk tensor stores (``tile-bulk-store``)."""
    cluster: tuple[int, ...] = (1,)
    """With ``bulk``: thread-block clusters of ``C`` blocks along M, which multicast B's tiles to
    each other, or (``1,C``) along N, multicasting A's (``tile-tiling{cluster}``, ``tile-pipeline``)."""
    in_flight: bool = True
    """With ``bulk``: the K loop's wgmmas stay in flight across K steps, each stage released (and,
    without a producer, refilled) one step later (``tile-pipeline{in_flight}``). False waits for each
    step's wgmmas: the refill comes a step sooner, which a kernel with few stages may need more."""

    def __post_init__(self):
        check_options(self.block, self.warps, self.group, self.thread_tile)
        check_stages(self.stages, self.bulk)
        object.__setattr__(self, "cluster", check_cluster(self.cluster))
        for option in ("producer", "bulk_store"):
            if getattr(self, option) and not self.bulk:
                raise TilePipelineError(f"{self.name}: {option}=true works on bulk tensor copies (sm_90): give bulk=true too")
        if self.cluster != (1,) and not (self.bulk and self.release):
            raise TilePipelineError(f"{self.name}: cluster={','.join(map(str, self.cluster))} multicasts bulk copies into stages the "
                                    "blocks release on empty barriers: give bulk=true (and release=true) too")

    def steps(self) -> tuple[tuple[str, dict[str, Any]], ...]:
        """(pass name, options) of each inner pass: the one list :meth:`passes` and :meth:`pipeline` read."""
        tiling: dict[str, Any] = {"block": tuple(self.block), "group": self.group,
                                  "thread_tile": tuple(self.thread_tile or DEFAULT_THREAD_TILE)}
        if self.warps is not None:
            tiling["warps"] = tuple(self.warps)
        if self.tf32:
            tiling["tf32"] = True
        if self.wgmma:
            tiling["wgmma"] = True
        if self.persistent:
            tiling["persistent"] = True
        if self.cluster != (1,):
            tiling["cluster"] = self.cluster
        pipeline: dict[str, Any] = {"stages": self.stages}
        if self.bulk:
            pipeline["bulk"] = True
            if not self.release:
                pipeline["release"] = False
            if self.producer:
                pipeline["producer"] = True
            if not self.in_flight:
                pipeline["in_flight"] = False
        stores = (("tile-bulk-store", {}),) if self.bulk and self.bulk_store else ()
        return (("tile-tiling", tiling), ("tile-swizzle", {}), ("tile-pipeline", pipeline), ("tile-layout", {}),
                *stores, ("tile-distribute", {}), ("tile-to-llvm", {}))

    def passes(self) -> tuple[ModulePass, ...]:
        """The inner passes, made from the option values (no text is parsed)."""
        registry = get_tilec_passes()
        return tuple(registry[name]()(**options) for name, options in self.steps())

    def pipeline(self) -> str:
        """The inner passes as ``-p`` text."""
        return ",".join(name + ("{" + " ".join(f"{k}={_value(v)}" for k, v in options.items()) + "}"
                                if options else "")
                        for name, options in self.steps())

    def passes_to(self, last: str) -> tuple[ModulePass, ...]:
        """The inner passes up to and including ``last`` (e.g. ``tile-distribute``: fragment level,
        for the CPU interpreter)."""
        names = [name for name, _ in self.steps()]
        if last not in names:
            raise ValueError(f"no pass {last!r} in {self.pipeline()}")
        return self.passes()[: names.index(last) + 1]

    def pipeline_to(self, last: str) -> str:
        """:meth:`passes_to` as ``-p`` text."""
        return ",".join(str(p) for p in self.passes_to(last))
