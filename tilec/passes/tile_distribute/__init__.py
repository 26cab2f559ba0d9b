"""``tile-distribute``: fragment-typed tile IR → the ``frag`` dialect (per-lane registers).

One module per concern:

- :mod:`.kernel`: the driver (one kernel function at a time), values, control flow, elementwise ops;
- :mod:`.abi`: the kernel's parameters (global views → pointer, extents, strides, tensor maps);
- :mod:`.mma`: ``tile.mma`` (mma.sync atoms, the SIMT fused multiply-adds);
- :mod:`.memory`: loads, stores and copies between global, shared and registers;
- :mod:`.vectors`: register vectors in memory, the value of a load outside its view;
- :mod:`.reduce`: row and column reductions (registers, then shuffles over lane bits);
- :mod:`.convert`: layout conversions (renumbering, or through shared memory);
- :mod:`.bulk`: sm_90 bulk tensor copies and their mbarriers;
- :mod:`.wgmma`: sm_90a's warpgroup MMA;
- :mod:`.registers`: how a lane holds a tile (16-bit pairs packed or not);
- :mod:`.emit`: integer math with folding, layouts and swizzles as code;
- :mod:`.values`: what tile values become (pointers, registers);
- :mod:`.analysis`: divisibility, ranges and the register estimate.
"""

from tilec.passes.tile_distribute.kernel import TileDistributePass

__all__ = ["TileDistributePass"]
