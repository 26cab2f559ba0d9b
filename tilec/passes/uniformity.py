"""Which values of a kernel may differ between the warps of a block (or the blocks of a cluster).

A value computed only from kernel arguments, block ids, constants and memory read at such
addresses is the same in every warp: a register tile of such values is one tile of the block,
and ``tile-layout`` may spread it over all the block's warps instead of giving each warp a copy.
A value that depends on ``tile.warp_id``, ``tile.lane_id`` or ``tile.thread_id`` (through data,
a loop's carried values, or a branch or loop bound that only some warps take) is *warp-varying*.

Plain Python over the IR, a fixpoint over the function (loop-carried values can become varying
through their yields).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import func, scf
from xdsl.ir import Attribute, Operation, SSAValue

from tilec.dialects.abi import CONSUMERS, LAUNCH_ATTR, ROLE_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.dialects.tile.types import RegisterType, RegisterVectorType
from tilec.layout.int_tuple import product
from tilec.passes.fragments import WARP

_SOURCES = (t.WarpIdOp, t.LaneIdOp, t.ThreadIdOp)


def _divergent(op: Operation, varying: set[SSAValue]) -> bool:
    """Whether ``op``'s regions run differently in different warps (a varying condition or bound)."""
    match op:
        case scf.IfOp():
            return op.cond in varying
        case scf.ForOp():
            return any(v in varying for v in (op.lb, op.ub, op.step))
        case scf.WhileOp():
            cond = while_condition(op)
            return cond is None or cond.condition in varying
    return False


def while_condition(op: scf.WhileOp) -> scf.ConditionOp | None:
    """The ``scf.condition`` that ends ``op``'s before region (None in IR still being built)."""
    term = op.before_region.block.last_op if op.before_region.blocks else None
    return term if isinstance(term, scf.ConditionOp) else None


def warp_varying(fn: func.FuncOp, sources: tuple[type[Operation], ...] | Callable[[Operation], bool] = _SOURCES,
                 within_roles: bool = False) -> set[SSAValue]:
    """Every value of ``fn`` that may differ between the warps of a block (``sources``: the ops whose
    results differ, by default the warp, lane and thread ids; or a test of an op). ``within_roles``:
    between the warps of one warp-specialised role (a role's region is not a branch then)."""
    varying: set[SSAValue] = set()
    is_source = sources if callable(sources) and not isinstance(sources, type) else lambda op: isinstance(op, sources)

    def mark(values) -> bool:
        new = [v for v in values if v not in varying]
        varying.update(new)
        return bool(new)

    def visit(block, divergent: bool) -> bool:
        changed = False
        for op in block.ops:
            branch = _divergent(op, varying) and not (within_roles and ROLE_ATTR in op.attributes)
            inside = divergent or is_source(op) or branch
            if inside or any(v in varying for v in op.operands):
                changed |= mark(op.results)
            if isinstance(op, scf.ForOp):
                body = op.body.block
                yielded = body.last_op.operands if isinstance(body.last_op, scf.YieldOp) else ()
                for i, init in enumerate(op.iter_args):
                    if inside or init in varying or (i < len(yielded) and yielded[i] in varying):
                        changed |= mark([body.args[i + 1], op.results[i]])
                if inside:
                    changed |= mark([body.args[0]])
            elif isinstance(op, scf.IfOp):
                for region in op.regions:
                    for b in region.blocks:
                        term = b.last_op
                        if isinstance(term, scf.YieldOp):
                            changed |= mark([r for r, y in zip(op.results, term.operands) if y in varying])
            elif isinstance(op, scf.WhileOp):
                # before's arguments: the initial values, then what the after region yields; after's
                # arguments and the results: what scf.condition passes on
                before, after = op.before_region.block, op.after_region.block
                yielded = after.last_op.operands if isinstance(after.last_op, scf.YieldOp) else ()
                for i, init in enumerate(op.arguments):
                    if inside or init in varying or (i < len(yielded) and yielded[i] in varying):
                        changed |= mark([before.args[i]])
                cond = while_condition(op)
                for i, v in enumerate(cond.args if cond is not None else ()):
                    if inside or v in varying:
                        changed |= mark([after.args[i], op.results[i]])
            elif inside:
                for region in op.regions:
                    for b in region.blocks:
                        changed |= mark(b.args)
            for region in op.regions:
                for b in region.blocks:
                    changed |= visit(b, inside)
                    term = b.last_op
                    if not isinstance(op, scf.ForOp | scf.IfOp | scf.WhileOp) and term is not None \
                            and any(v in varying for v in term.operands):
                        changed |= mark(op.results)  # e.g. a tile.map body that reads a varying value
        return changed

    while any([visit(block, False) for block in fn.body.blocks]):  # a list: every block each round
        pass
    return varying


def cluster_varying(fn: func.FuncOp) -> set[SSAValue]:
    """Every value of ``fn`` that may differ between the blocks of a thread-block cluster (from
    ``tile.block_rank``, ``tile.block_id`` along an axis the cluster spans, or between warps): what
    is not in it, every block of the cluster computes alike (``tile.cluster_id``,
    ``tile.cluster_count`` and the block id along an axis of extent 1 in the cluster are such
    sources of nothing: a cluster of ``[2, 1, 1]`` blocks shares ``tile.block_id y``), and a loop
    whose induction variable is not in it runs alike in every block."""
    launch = fn.attributes.get(LAUNCH_ATTR)
    spans = launch.cluster_dims if isinstance(launch, LaunchAttr) else (1, 1, 1)

    def is_source(op: Operation) -> bool:
        if isinstance(op, t.BlockIdOp):
            return spans[op.axis.data] > 1
        return isinstance(op, (t.BlockRankOp, *_SOURCES))

    return warp_varying(fn, is_source)


def lane_varying(fn: func.FuncOp) -> set[SSAValue]:
    """Every value of ``fn`` that may differ between the lanes of a warp (from ``tile.lane_id`` or
    ``tile.thread_id``): a branch on one runs in only some lanes."""
    return warp_varying(fn, (t.LaneIdOp, t.ThreadIdOp))


__all__ = ["while_condition", "barriers_under_varying_ifs", "block_values_under_varying_branches", "cluster_varying", "lane_varying",
           "split_between_warps", "warp_varying"]


def barriers_under_varying_ifs(fn: func.FuncOp, synchronises: Callable[[Operation], bool] | None = None
                               ) -> list[tuple[Operation, scf.IfOp]]:
    """``(barrier, if)``: each block-wide ``tile.barrier`` (each op ``synchronises`` says lowers to one) nested
    in an ``scf.if`` (or ``scf.while``) whose condition may differ between the block's warps (not a
    warp-specialised role's region, whose barriers count only that role's threads). The warps that skip the
    branch never arrive: the block hangs."""
    varying = warp_varying(fn)
    found = []
    for op in fn.walk():
        if isinstance(op, scf.IfOp | scf.WhileOp) and ROLE_ATTR not in op.attributes and _divergent(op, varying):
            found += [(inner, op) for inner in op.walk() if isinstance(inner, t.BarrierOp) and inner.threads is None
                      or synchronises is not None and synchronises(inner)]
    return found


def run_by_every_warp(op: Operation, varying: set[SSAValue], consumers: bool = False) -> bool:
    """Whether every warp of the block runs ``op``: no enclosing region is one only some warps take
    (a warp-varying ``scf.if`` or loop bound, or a warp-specialised role). ``consumers``: the
    consumers' role counts as the block (its warps are the launch's own; the producer is extra)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        role = parent.attributes.get(ROLE_ATTR)
        if role is not None and not (consumers and getattr(role, "data", None) == CONSUMERS):
            return False
        if role is None and _divergent(parent, varying):
            return False
        parent = parent.parent_op()
    return True


def computed_from(value: SSAValue) -> set[SSAValue]:
    """``value`` and every value computed from it, through ops, loops (carried values) and ifs."""
    seen: set[SSAValue] = set()
    work = [value]
    while work:
        v = work.pop()
        if v in seen:
            continue
        seen.add(v)
        for use in v.uses:
            user = use.operation
            if isinstance(user, scf.YieldOp) and isinstance(user.parent_op(), scf.WhileOp):
                work.append(user.parent_op().before_region.block.args[use.index])  # the next test's
                continue
            if isinstance(user, scf.ConditionOp):
                if use.index > 0:  # passed on to the body and out of the loop
                    loop = user.parent_op()
                    work += [loop.after_region.block.args[use.index - 1], loop.results[use.index - 1]]
                continue
            if isinstance(user, scf.WhileOp):  # an initial carried value
                work.append(user.before_region.block.args[use.index])
                continue
            if isinstance(user, scf.YieldOp):
                parent = user.parent_op()
                if parent is not None and use.index < len(parent.results):
                    work.append(parent.results[use.index])
                    if isinstance(parent, scf.ForOp):
                        work.append(parent.body.block.args[use.index + 1])
                continue
            if isinstance(user, scf.ForOp) and use.index >= 3:  # an initial carried value
                work += [user.body.block.args[use.index - 2], user.results[use.index - 3]]
                continue
            work.extend(user.results)
    return seen


def flows_into_per_warp_code(value: SSAValue, varying: set[SSAValue], consumers: bool = False) -> bool:
    """Whether ``value``, or anything computed from it (through ops, loops and ifs), meets code that is
    each warp's own: a warp-varying value, an op some warps skip, or a store or atomic at warp-varying
    indices. A value split over the block's warps (each warp holding its part) must not.
    ``consumers``: as :func:`run_by_every_warp`'s."""
    for v in computed_from(value):
        if v in varying:
            return True
        for use in v.uses:
            user = use.operation
            if not run_by_every_warp(user, varying, consumers):
                return True
            indices = getattr(user, "indices", None)
            if indices is not None and any(i in varying for i in indices) and \
                    (not user.results or isinstance(user, t.ATOMIC_OPS)):
                return True  # a store or atomic each warp makes at its own place
    return False


AtomicCombiners = str
"""Which holders of an element a ``tile.atomic`` combines from: ``"every thread"`` (its indices differ
between lanes), ``"every warp"`` (its value, indices, compared values or mask differ between warps, or
it is under a branch or loop only some warps take: each warp that runs it combines its own, its lanes'
copies once) or ``"the block"`` (once a block)."""


def atomic_combiners(op: Operation, lane_varying: set[SSAValue], warp_varying_values: set[SSAValue]) -> AtomicCombiners:
    """:data:`AtomicCombiners` of a ``tile.atomic``, from the values that differ between lanes (computed
    from ``tile.lane_id`` / ``tile.thread_id``) and between warps (any id): tile-distribute and the tile
    interpreter both decide by this."""
    indices = list(op.indices)
    if any(i in lane_varying for i in indices):
        return "every thread"
    # what each element is combined with (the value, cas's compared value, the mask) or where: one warp's
    # copy stands for the others' only where all are the same in every warp, and where every warp runs
    # the atomic (not under a branch or loop only some warps take: there each warp that runs it combines)
    operands = [op.value, *indices, *(v for v in (getattr(op, "cmp", None), getattr(op, "mask", None)) if v is not None)]
    if any(v in warp_varying_values for v in operands) or not run_by_every_warp(op, warp_varying_values):
        return "every warp"
    return "the block"


def _under_divergent_region(op: Operation, varying: set[SSAValue]) -> bool:
    """Whether ``op`` is inside an ``scf.if``, ``scf.for`` or ``scf.while`` that the warps of a block run
    differently (a condition or bound in ``varying``)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if _divergent(parent, varying):
            return True
        parent = parent.parent_op()
    return False


def lane_varying(fn: func.FuncOp) -> set[SSAValue]:
    """Values that may differ between the lanes of a warp (computed from the lane or thread id)."""
    return warp_varying(fn, (t.LaneIdOp, t.ThreadIdOp))


def split_between_warps(ty: Attribute) -> bool:
    """Whether ``ty`` is a register tile or vector whose elements are spread over the block's warps
    (some held by some warps only), rather than each warp's own or copies in every warp."""
    tv = ty.fragment if isinstance(ty, RegisterType | RegisterVectorType) else None
    if tv is None or tv.num_threads <= WARP:
        return False
    offsets, threads = tv.layout.values(), tv.num_threads
    first_warp = {o for i, o in enumerate(offsets) if i % threads < WARP}
    return len(first_warp) < product(tv.tile)


def block_values_under_varying_branches(fn: func.FuncOp) -> list[tuple[Operation, SSAValue, Operation]]:
    """``(op, value, branch)``: each op inside a region that only some of the block's warps run (an
    ``scf.if`` on a warp-varying condition, or an ``scf.for`` with warp-varying bounds; not a
    warp-specialised role's region) whose operand or result ``value`` is a register tile or vector
    spread over the block's warps. Each warp handles its own part of such a value, so where only some
    warps run the op the others' parts are not stored, reduced or converted (and a reduction across
    warps waits at a barrier the others never reach). A value of a role's warps is spread over them."""
    varying = warp_varying(fn, within_roles=True)
    found: list[tuple[Operation, SSAValue, Operation]] = []

    def visit(op: Operation, branch: Operation | None) -> None:
        if branch is not None:
            for value in (*op.operands, *op.results):
                if split_between_warps(value.type):
                    found.append((op, value, branch))
                    break
        if branch is None and ROLE_ATTR not in op.attributes and _divergent(op, varying):
            branch = op
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    visit(inner, branch)

    for block in fn.body.blocks:
        for op in block.ops:
            visit(op, None)
    return found
