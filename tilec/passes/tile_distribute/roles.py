"""``tile-distribute`` for warp-specialised kernels: the regions ``tile-pipeline{producer=true}`` makes.

Such a kernel's block is its consumer warps followed by one producer warpgroup
(``tile.producer_threads``, :data:`tilec.dialects.abi.PRODUCER_ATTR`), and its body two
``scf.if`` regions marked ``tile.role``:

- ``"producer"``: the producer warpgroup's loops of bulk copies. The thread that issues them (and
  alone waits on the empty barriers) is the warpgroup's first, not the block's: :meth:`in_role`
  sets :attr:`leader_tid` while the region is lowered.
- ``"consumers"``: everything else. The producer warps never reach its barriers, so every
  ``tile.barrier`` in it, the program's and those tile-distribute adds (reductions, layout
  conversions through shared memory), counts the consumer threads only (``bar.sync 0, N``):
  :func:`tilec.dialects.tile.ops.limit_barriers`.

Per-warp (empty) barriers expect one arrival per consumer warp (:mod:`.bulk`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tilec.dialects.abi import PRODUCER, producer_threads


class RoleLowering:
    """For :class:`tilec.passes.tile_distribute.kernel.KernelLowering` (``self.threads``, ``self.fn``)."""

    leader_tid: int = 0
    """The thread that issues bulk copies in the region being lowered."""

    @contextmanager
    def in_role(self, role: str | None) -> Iterator[None]:
        saved = self.leader_tid
        if role == PRODUCER:
            self.leader_tid = self.threads - producer_threads(self.fn)
        try:
            yield
        finally:
            self.leader_tid = saved


__all__ = ["RoleLowering"]
