"""``tile-distribute`` for ``tile.turn_begin`` / ``tile.turn_end``: warp groups taking turns.

The block's warps (its consumer warps when a producer warpgroup feeds them: the producer, last in
the block, never takes a turn) form ``G`` equal groups of consecutive warps (group ``g`` = thread
index divided by the group's threads); group ``g``'s turn is named barrier ``1 + g`` (barrier 0 is
``tile.barrier``'s), each counting the ``2 * T`` threads of two groups (``T`` a group's):

- ``tile.turn_begin`` → ``bar.sync 1+g, 2T``: wait until the previous group hands the turn over;
- ``tile.turn_end`` → ``bar.arrive 1+(g+1)%G, 2T``: hand it to the next group, without waiting;
- at the kernel's start group ``G-1`` hands group 0 the first turn (``bar.arrive 1, 2T``), and
  before each return group 0 takes the last hand-over (``bar.sync 1, 2T``), so no barrier is left
  with arrivals when the block exits.

Every group passes each barrier once per round, so as long as the groups go through their turns
equally often (as every thread must reach a ``tile.barrier``), each ``bar.sync`` of group ``g``
pairs with one ``bar.arrive`` of group ``g-1``. The lane interpreter runs the named barriers
(:mod:`tilec.interp.lane_bulk`): a group that takes fewer turns than the others is a deadlock there.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Operation

from tilec.dialects import frag_fast
from tilec.dialects.abi import producer_threads
from tilec.dialects.tile import ops as t
from tilec.passes.tile_distribute.memory import RegallocError
from tilec.passes.tile_distribute.emit import i32

def synchronised_in_turns(fn: func.FuncOp, synchronises) -> list[tuple[Operation, t.TurnBeginOp]]:
    """``(op, turn)``: each op ``synchronises`` says waits for the whole block (a ``tile.barrier``, a move
    through shared memory) between a ``tile.turn_begin`` and its ``tile.turn_end``. Only the group whose
    turn it is runs there, the others wait for their turn: the op would wait for them forever."""
    found: list[tuple[Operation, t.TurnBeginOp]] = []

    def visit(block, turn):
        for op in block.ops:
            if isinstance(op, t.TurnBeginOp):
                turn = op
            elif isinstance(op, t.TurnEndOp):
                turn = None
            elif turn is not None and synchronises(op):
                found.append((op, turn))
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner, turn)

    for block in fn.body.blocks:
        visit(block, None)
    return found


FIRST_TURN_BARRIER = 1
"""Named barrier of group 0's turn (0 is ``bar.sync 0``, ``tile.barrier``)."""


class TurnLowering:
    """The turn ops, for :class:`tilec.passes.tile_distribute.kernel.KernelLowering` (``self.em``,
    ``self.tid``, ``self.threads``, ``self.if_then``, ``self.fn``)."""

    turn_groups: int | None = None

    def plan_turns(self) -> None:
        """The kernel's group count: its first turn op's (each op checks its own, :meth:`_check`)."""
        first = next((op for op in self.fn.walk() if isinstance(op, t.TurnBeginOp | t.TurnEndOp)), None)
        if first is not None:
            self.turn_groups = first.groups.value.data

    @property
    def turn_threads(self) -> int:
        """The threads that take turns: the block's, less a producer warpgroup's."""
        return self.threads - producer_threads(self.fn)

    def _fits(self) -> bool:
        g = self.turn_groups
        return self.turn_threads % g == 0 and (self.turn_threads // g) % 32 == 0

    def _check(self, op: t.TurnBeginOp | t.TurnEndOp) -> None:
        g = op.groups.value.data
        if g != self.turn_groups:
            raise RegallocError(f"takes turns among {g} groups, but the kernel's first turn op among "
                                f"{self.turn_groups}: a kernel has one set of turns")
        if not self._fits():
            raise RegallocError(f"{self.turn_threads} threads do not split into {g} groups of whole warps")

    def _group(self):
        """This thread's group, from its warp (:meth:`warp`): uniform in each warp, so ptxas keeps the
        turns' branches uniform."""
        em = self.em
        warps = self.turn_threads // self.turn_groups // 32  # whole warps a group (:meth:`_check`)
        return em.hoisted("turn-group", lambda: em.udiv(self.warp(), warps, i32))

    def _named(self, barrier, wait: bool) -> list:
        count = 2 * self.turn_threads // self.turn_groups
        self.em.insert(frag_fast.frag_named_barrier(self.em.value(barrier, i32), count, wait=wait))
        return []  # what a branch of ``if_then`` yields

    def first_turn(self) -> None:
        """At the kernel's start: the last group hands group 0 the first turn."""
        if self.turn_groups is not None and self._fits():
            last = self.em.cmp("eq", self._group(), self.turn_groups - 1, i32)
            self.if_then(last, lambda: self._named(FIRST_TURN_BARRIER, False))

    def last_turn(self, op: func.ReturnOp) -> None:
        """Before a return: group 0 takes the last hand-over (no barrier keeps arrivals at exit)."""
        if self.turn_groups is not None and self._fits():
            first = self.em.cmp("eq", self._group(), 0, i32)
            self.if_then(first, lambda: self._named(FIRST_TURN_BARRIER, True))

    def turn_begin(self, op: t.TurnBeginOp) -> None:
        self._check(op)
        self._named(self.em.add(self._group(), FIRST_TURN_BARRIER, i32), True)

    def turn_end(self, op: t.TurnEndOp) -> None:
        self._check(op)
        em, g = self.em, self._group()
        last = em.cmp("eq", g, self.turn_groups - 1, i32)
        self._named(em.select(last, FIRST_TURN_BARRIER, em.add(g, FIRST_TURN_BARRIER + 1, i32), i32), False)


__all__ = ["FIRST_TURN_BARRIER", "TurnLowering", "synchronised_in_turns"]
