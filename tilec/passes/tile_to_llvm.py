"""``tile-to-llvm``: fragment-level IR → the xDSL ``llvm`` dialect, ready for PTX.

Input: the fragment level (after register allocation): ``func.func`` kernels
(marked by ``tile.launch``) and device functions whose bodies hold ``frag``
ops, the tile dialect's structure ops (ids, ``tile.barrier``), ``arith``,
``math``, ``vector`` (1-D, static positions), ``scf.for``/``scf.if`` (with
``iter_args`` and results), ``cf`` and ``llvm`` ops. Output: only
``llvm.func`` and ``llvm.mlir.global``, which :mod:`tilec.codegen.ptx` turns
into LLVM IR and PTX.

The pass runs in steps, each over the whole module:

1. **check**: every op must have a lowering and every value an llvm-level
   type; otherwise a :class:`LoweringError` names the op, where it is, and
   which pass should have removed it (``tile.mma`` → ``tile-distribute``), and
   the module is left untouched;
2. **scf → branches** as xDSL's ``convert-scf-to-cf`` patterns lower them
   (nested loops, ``iter_args``, ``scf.if`` results become block arguments),
   branching with ``llvm.br``/``llvm.cond_br`` at once;
3. **retype**: ``index`` values (op results, block arguments) become ``i64``,
   so that every pattern after this sees final operand types;
4. **rewrite** in one walk, last op first, each op by the lowering of its
   class: those of :mod:`tilec.passes.lowering` (arith/math/vector/cf, tile
   structure and frag through :mod:`tilec.passes.lowering.nvvm`) and
   :data:`FUNC_LOWERINGS` here (``func.func`` → ``llvm.func``, return, call);
5. **globals**: one ``addrspace(3)`` ``llvm.mlir.global`` per ``frag.shared``
   symbol (the largest size and alignment asked for under that name;
   ``bytes = 0`` is the ``extern`` dynamic shared memory).

Kernels become ``llvm.func``s with external linkage, ``nvvm.kernel`` and
``nvvm.maxntid`` (the ``tile.launch`` block); they keep ``tile.launch`` and
their argument attributes (``tile.dtype``, ``tile.output``), which the Python
API reads to build the launch signature. Device functions keep their
visibility (private → internal linkage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, scf, vector
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.builder import Builder
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import BlockInsertPoint, InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from tilec.dialects import frag
from tilec.dialects.abi import LAUNCH_ATTR, PRODUCER_ATTR, TENSOR_MAP_ATTR, launch_registers
from tilec.dialects.llvm_ext import CLUSTER_DIM_ATTR, GRID_CONSTANT_ATTR, KERNEL_ATTR, MAXNREG_ATTR, MAXNTID_ATTR
from tilec.dialects.tile.attributes import LaunchAttr
from tilec.dialects.tile.types import FLOAT8_TYPES, GlobalType, RegisterType, RegisterVectorType, SharedType
from tilec.ir import fast
from tilec.ir.parser import location_text
from tilec.ir.walk import walk_ops
from tilec.passes.lowering import arith as arith_lowering
from tilec.passes.lowering import gpu as gpu_lowering
from tilec.passes.lowering import kernel as K
from tilec.passes.lowering.arith import Lowering, lower_op
from tilec.passes.lowering.types import convert_type, is_llvm_type, retype_module


class LoweringError(PassFailedException):
    """``tile-to-llvm`` cannot lower an op. ``op`` is the op, ``location`` its
    ``file:line:col`` when known; the message names both."""

    def __init__(self, op: Operation, message: str):
        self.op = op
        self.location = location_text(op)
        where = f" at {self.location}" if self.location else ""
        super().__init__(f"'{op.name}' op{where}: {message}")


# ---------------------------------------------------------------- step 1: check

_TILE_TILING_OPS = ("tile.matmul", "tile.yield")
"""Whole-problem ops: tiled into block programs by ``tile-tiling``."""

_STRUCTURE_OPS = {op_type.name for op_type in gpu_lowering.LOWERINGS if op_type.name.startswith("tile.")}

_PASS_THROUGH = {"builtin.module", "func.func", "func.return", "func.call", "scf.for", "scf.if", "scf.yield", "scf.while",
                 "scf.condition"}


def _unlowered_reason(op: Operation) -> str | None:
    """Why ``op`` cannot be lowered here, or None if it can."""
    name = op.name
    if name in _TILE_TILING_OPS:
        return (
            "is a whole-problem tile op; it must be lowered first: run tile-tiling, "
            "then tile-layout and tile-distribute, before tile-to-llvm"
        )
    if name.startswith("tile.") and name not in _STRUCTURE_OPS:
        return (
            "is a tile-level op; it must be lowered to fragment-level (frag) ops first: "
            "run tile-layout and tile-distribute before tile-to-llvm"
        )
    if name.startswith("llvm.") or name in _PASS_THROUGH:
        return None
    if type(op) in arith_lowering.LOWERINGS or type(op) in gpu_lowering.LOWERINGS:
        return None
    if name.startswith("scf."):
        return "has no lowering to llvm: only scf.for, scf.if and scf.while (with scf.yield) are supported"
    return "has no lowering to llvm in tile-to-llvm"


def check_lowerable(module: ModuleOp) -> None:
    """Raise :class:`LoweringError` for the first op the pass cannot lower.

    Ops without a lowering are reported before values of the wrong type (a
    ``tile.mma`` says more than the ``!tile.rt`` block argument it uses).
    """
    for top in module.body.block.ops:
        if not isinstance(top, func.FuncOp | llvm.FuncOp | llvm.GlobalOp):
            # what a top-level op lowers to would be outside every function: LLVM IR has no place for it
            raise LoweringError(top, "is at the top level of the module: ops run inside a function (func.func)")
    ops = walk_ops(module)
    reasons: dict[tuple[type[Operation], str], str | None] = {}  # the same for every op of a kind
    for op in ops:
        kind = (type(op), op.name)
        if kind not in reasons:
            reasons[kind] = _unlowered_reason(op)
        if reasons[kind] is not None:
            raise LoweringError(op, reasons[kind])
    llvm_types: dict[int, bool] = {}  # by the identity of the type attributes, which outlive the check
    for op in ops:
        _check_op(op, llvm_types)


_DETAILED = (func.FuncOp, func.CallOp, frag.MmaOp, vector.ExtractOp, vector.InsertOp, vector.BroadcastOp,
             arith.CeilDivUIOp)
"""The ops whose lowerings have limits of their own (:func:`_check_details`)."""


def _check_op(op: Operation, llvm_types: dict[int, bool]) -> None:
    values = list(op.results)
    if op.regions:
        values += [a for r in op.regions for b in r.blocks for a in b.args]
    for value in values:
        ok = llvm_types.get(id(value.type))
        if ok is None:
            ok = llvm_types[id(value.type)] = is_llvm_type(value.type)
        if not ok:
            raise LoweringError(
                op,
                f"has a value of type {value.type}, which has no llvm-level form; "
                "tiles and views must be lowered to fragments and pointers first (tile-layout, tile-distribute)",
            )
    if isinstance(op, func.FuncOp):  # results (and a declaration's parameters) are in no block
        for ty in (*op.function_type.inputs.data, *op.function_type.outputs.data):
            if isinstance(ty, GlobalType | SharedType | RegisterType | RegisterVectorType) and not op.body.blocks:
                raise LoweringError(op, f"declaration @{op.sym_name.data} takes {ty}; only a kernel with a body "
                                        "passes tile values (tile-distribute makes them pointers, extents, strides)")
            if not is_llvm_type(ty):
                raise LoweringError(op, f"@{op.sym_name.data} takes or returns {ty}, which has no llvm-level form")
            if isinstance(ty, FLOAT8_TYPES):
                raise LoweringError(op, f"@{op.sym_name.data} takes or returns {ty}: 8-bit floats live in memory "
                                        "only (a view's elements), not in parameters or registers")
    if isinstance(op, _DETAILED):
        _check_details(op)


def _check_details(op: Operation) -> None:
    """Limits of individual lowerings, checked before anything is rewritten."""
    match op:
        case func.FuncOp():
            launch = op.attributes.get(LAUNCH_ATTR)
            results = op.function_type.outputs.data
            if len(results) > 1:
                raise LoweringError(op, f"@{op.sym_name.data} returns {len(results)} values; llvm.func returns at most one")
            if launch is not None:
                if not isinstance(launch, LaunchAttr):
                    raise LoweringError(op, f"'{LAUNCH_ATTR}' must be a #tile.launch attribute, got {launch}")
                if results:
                    raise LoweringError(op, f"kernel @{op.sym_name.data} must not return values")
                if op.sym_visibility is not None and op.sym_visibility.data == "private":
                    raise LoweringError(op, f"kernel @{op.sym_name.data} must be public")
                if not op.body.blocks:
                    raise LoweringError(op, f"kernel @{op.sym_name.data} has no body")
        case func.CallOp() if len(op.results) > 1:
            raise LoweringError(op, "calls a function returning several values; llvm.call returns at most one")
        case frag.MmaOp() if op.atom.data.name not in gpu_lowering.SUPPORTED_MMA_ATOMS:
            raise LoweringError(op, f"has no lowering for the MMA atom {op.atom.data.name}")
        case vector.ExtractOp() | vector.InsertOp():
            source = op.vector if isinstance(op, vector.ExtractOp) else op.dest
            positions = list(op.static_position.iter_values())
            if op.dynamic_position or len(positions) != 1 or not isinstance(source.type, VectorType) \
                    or source.type.get_num_dims() != 1:
                raise LoweringError(op, "only one static position into a 1-D vector is supported")
        case vector.BroadcastOp() if isinstance(op.source.type, VectorType) and op.source.type != op.vector.type:
            raise LoweringError(op, "only a scalar can be broadcast at the llvm level")
        case arith.CeilDivUIOp() if isinstance(op.lhs.type, VectorType):
            raise LoweringError(op, "is supported on scalars only")
        case _:
            pass


def collect_shared(module: ModuleOp) -> dict[str, tuple[int, int]]:
    """``frag.shared`` symbols: name → (bytes, alignment), the largest asked for.

    A name used both for static (bytes > 0) and dynamic (bytes = 0) shared
    memory, or already taken by another symbol, is an error.
    """
    shared: dict[str, tuple[int, int]] = {}
    first: dict[str, frag.SharedOp] = {}
    for op in walk_ops(module):
        if not isinstance(op, frag.SharedOp):
            continue
        name, size, align = op.sym_name.data, op.bytes.value.data, op.align.value.data
        if name in shared:
            old_size, old_align = shared[name]
            if (old_size == 0) != (size == 0):
                kinds = {True: "dynamic (0 bytes)", False: "static"}
                raise LoweringError(
                    op,
                    f"shared buffer \"{name}\" is {kinds[size == 0]} here but {kinds[old_size == 0]} "
                    f"at {location_text(first[name]) or 'another frag.shared'}",
                )
            shared[name] = (max(size, old_size), max(align, old_align))
        else:
            shared[name] = (size, align)
            first[name] = op
    taken = {
        getattr(op, "sym_name").data
        for op in module.ops
        if isinstance(op, func.FuncOp | llvm.FuncOp | llvm.GlobalOp)
    }
    for name, op in first.items():
        if name in taken:
            raise LoweringError(op, f"shared buffer \"{name}\" has the name of another symbol of the module")
    return shared


# ---------------------------------------------------------------- func


def _linkage(op: func.FuncOp) -> str:
    if LAUNCH_ATTR in op.attributes or not op.body.blocks:
        return "external"
    private = op.sym_visibility is not None and op.sym_visibility.data == "private"
    return "internal" if private else "external"


TENSOR_MAP_BYTES, TENSOR_MAP_ALIGN = 128, 64


def _param_attrs(attrs: dict[str, Attribute]) -> dict[str, Attribute]:
    """A tensor-map parameter (``tile.tensor_map``) is passed by value and read in place, as in
    MLIR's NVVM: ``llvm.byval = !llvm.array<128 x i8>``, ``llvm.align = 64``, ``nvvm.grid_constant``
    (PTX ``.param .align 64 .b8 [128]``, whose address the bulk copies take with ``cvta.param``)."""
    if TENSOR_MAP_ATTR in attrs:
        attrs["llvm.byval"] = llvm.LLVMArrayType(TENSOR_MAP_BYTES, IntegerType(8))
        attrs["llvm.align"] = IntegerAttr(TENSOR_MAP_ALIGN, i64)
        attrs[GRID_CONSTANT_ATTR] = UnitAttr()
    return attrs


def _func(op: func.FuncOp, b: Builder) -> list[SSAValue]:
    """``func.func`` → ``llvm.func`` (kernels: ``nvvm.kernel`` + ``nvvm.maxntid``, and ``nvvm.cluster_dim``
    with clusters); the body moves over."""
    inputs = [convert_type(t) for t in op.function_type.inputs.data]
    outputs = [convert_type(t) for t in op.function_type.outputs.data]
    fn_type = llvm.LLVMFunctionType(inputs, outputs[0] if outputs else None)
    extra: dict[str, Attribute] = {}
    launch = op.attributes.get(LAUNCH_ATTR)
    if isinstance(launch, LaunchAttr):
        extra[KERNEL_ATTR] = UnitAttr()
        extra[MAXNTID_ATTR] = DenseArrayBase.from_list(i32, list(launch.block_dims))
        extra[LAUNCH_ATTR] = launch
        if launch.cluster_size > 1:
            extra[CLUSTER_DIM_ATTR] = DenseArrayBase.from_list(i32, list(launch.cluster_dims))
        if PRODUCER_ATTR in op.attributes:  # warp-specialised: the block starts with an even share
            extra[MAXNREG_ATTR] = DenseArrayBase.from_list(i32, [launch_registers(launch.threads)])
            extra[PRODUCER_ATTR] = op.attributes[PRODUCER_ATTR]
    props: dict[str, Attribute | None] = {}
    if op.arg_attrs is not None and any(d.data for d in op.arg_attrs):
        props["arg_attrs"] = ArrayAttr([DictionaryAttr(_param_attrs(dict(d.data))) for d in op.arg_attrs])
    new = llvm.FuncOp(
        op.sym_name.data,
        fn_type,
        linkage=llvm.LinkageAttr(_linkage(op)),
        body=Rewriter.move_region_contents_to_new_regions(op.body),
        other_props=props,
        extra_attrs=extra,
    )
    new.location = op.location
    b.insert(new)
    return []


def _return(op: func.ReturnOp, b: Builder) -> list[SSAValue]:
    b.insert(fast.return_op(op.arguments[0] if op.arguments else None))
    return []


def _call(op: func.CallOp, b: Builder) -> list[SSAValue]:
    result = op.results[0].type if op.results else None
    call = b.insert(fast.call_op(op.callee.string_value(), op.arguments, result))
    return list(call.results)


FUNC_LOWERINGS: dict[type[Operation], Lowering] = {func.FuncOp: _func, func.ReturnOp: _return, func.CallOp: _call}


# ---------------------------------------------------------------- the pass


def _add_shared_globals(module: ModuleOp, shared: dict[str, tuple[int, int]]) -> None:
    for name, (size, align) in shared.items():
        if size == 0:
            K.dynamic_shared_buffer(module, name, align=align)
        else:
            K.shared_buffer(module, name, size, align=align)


def _check_lowered(module: ModuleOp) -> None:
    for op in walk_ops(module):
        if op is module or op.name.startswith("llvm."):
            continue
        raise LoweringError(op, "was left unconverted by tile-to-llvm (a bug in tilec)")


def _scf_to_cf(module: ModuleOp, b: Builder) -> None:
    """Every ``scf.if``/``scf.for``/``scf.while`` to branches, each op before the ops nested in it (the
    order of xDSL's ``convert-scf-to-cf`` walker; the lowerings insert no scf)."""
    lowerings = {scf.IfOp: _lower_if, scf.ForOp: _lower_for, scf.WhileOp: _lower_while}
    for op in [op for op in walk_ops(module) if type(op) in lowerings]:
        lowerings[type(op)](op, b)


# xDSL's IfLowering and ForLowering (xdsl.transforms.convert_scf_to_cf), step for step, with two
# differences that change nothing in the pass's result: the branches are llvm.br/llvm.cond_br at
# once (xDSL's cf.br/cf.cond_br would become exactly those in step 4), and every op is built by
# the fast constructors and inserted through the pass's builder, as in step 4
# (tests/passes/test_tile_to_llvm.py compares the lowered modules).


def _lower_if(if_op: scf.IfOp, b: Builder) -> None:
    """Split the block at ``scf.if``, inline both regions before the continuation, branch."""
    condition_block = if_op.parent_block()
    assert condition_block is not None
    remaining = condition_block.split_before(if_op)
    if if_op.results:
        continue_block = Block(arg_types=if_op.result_types)
        region = condition_block.parent
        assert region is not None
        region.insert_block_before(continue_block, remaining)
        b.insert(fast.br_op(remaining), InsertPoint.at_end(continue_block))
    else:
        continue_block = remaining
    then_block = _inline_branch(if_op.true_region, continue_block, b)
    else_block = _inline_branch(if_op.false_region, continue_block, b) or continue_block
    b.insert(fast.cond_br_op(if_op.cond, then_block, (), else_block, ()), InsertPoint.at_end(condition_block))
    _replace(if_op, continue_block.args)


def _inline_branch(region: Region, continue_block: Block, b: Builder) -> Block | None:
    """Inline ``region`` before ``continue_block``, its ``scf.yield`` a branch there; its first block."""
    first = region.first_block
    if first is None:
        return None
    last = region.last_block
    assert last is not None and last.last_op is not None
    terminator = last.last_op
    b.insert(fast.br_op(continue_block, terminator.operands), InsertPoint.at_end(last))
    Rewriter.erase_op(terminator)
    Rewriter.inline_region(region, BlockInsertPoint.before(continue_block))
    return first


def _lower_for(for_op: scf.ForOp, b: Builder) -> None:
    """The loop's first body block becomes the condition block (induction variable and carried
    values as its arguments), the body follows it, the last body block steps and branches back."""
    init_block = for_op.parent_block()
    assert init_block is not None
    end_block = init_block.split_before(for_op)
    condition_block = for_op.body.first_block
    assert condition_block is not None and condition_block.first_op is not None
    first_body_block = condition_block.split_before(condition_block.first_op)
    last_body_block = for_op.body.last_block
    assert last_body_block is not None and last_body_block.last_op is not None
    Rewriter.inline_region(for_op.body, BlockInsertPoint.before(end_block))
    iv = condition_block.args[0]
    terminator = last_body_block.last_op
    stepped = b.insert(fast.arith_binary_op(arith.AddiOp, iv, for_op.step), InsertPoint.before(terminator))
    b.insert(fast.br_op(condition_block, (stepped.results[0], *terminator.operands)), InsertPoint.before(terminator))
    Rewriter.erase_op(terminator)
    b.insert(fast.br_op(condition_block, (for_op.lb, *for_op.iter_args)), InsertPoint.at_end(init_block))
    at_condition = InsertPoint.at_end(condition_block)
    comparison = b.insert(fast.cmpi_op("slt", iv, for_op.ub), at_condition)
    b.insert(fast.cond_br_op(comparison.results[0], first_body_block, (), end_block, ()), at_condition)
    _replace(for_op, condition_block.args[1:])


def _lower_while(while_op: scf.WhileOp, b: Builder) -> None:
    """The test's blocks, then the body's, inlined before the continuation: the op's block branches to
    the test with the initial values, ``scf.condition`` branches to the body or out (its values the
    body's arguments or the results), the body's ``scf.yield`` back to the test."""
    init_block = while_op.parent_block()
    assert init_block is not None
    remaining = init_block.split_before(while_op)
    continue_block = Block(arg_types=while_op.result_types)
    region = init_block.parent
    assert region is not None
    region.insert_block_before(continue_block, remaining)
    b.insert(fast.br_op(remaining), InsertPoint.at_end(continue_block))
    before, after = while_op.before_region.first_block, while_op.after_region.first_block
    assert before is not None and after is not None
    condition = while_op.before_region.last_block.last_op
    yield_op = while_op.after_region.last_block.last_op
    assert isinstance(condition, scf.ConditionOp) and isinstance(yield_op, scf.YieldOp)
    b.insert(fast.cond_br_op(condition.condition, after, condition.args, continue_block, condition.args),
             InsertPoint.before(condition))
    Rewriter.erase_op(condition)
    b.insert(fast.br_op(before, yield_op.operands), InsertPoint.before(yield_op))
    Rewriter.erase_op(yield_op)
    Rewriter.inline_region(while_op.before_region, BlockInsertPoint.before(continue_block))
    Rewriter.inline_region(while_op.after_region, BlockInsertPoint.before(continue_block))
    b.insert(fast.br_op(before, while_op.arguments), InsertPoint.at_end(init_block))
    _replace(while_op, continue_block.args)


def _replace(op: Operation, values: Sequence[SSAValue]) -> None:
    """``PatternRewriter.replace(op, [], values)``: uses and names move to ``values``; ``op`` goes."""
    for old, new in zip(op.results, values, strict=True):
        old.replace_all_uses_with(new)
        if not new.name_hint:
            new.name_hint = old.name_hint
    Rewriter.erase_op(op)


def _to_llvm(module: ModuleOp, builder: Builder) -> None:
    """Every op to llvm ops, in one walk over the ops as they are now (the lowerings
    insert only llvm ops, which need no visit).

    A direct walk, not xDSL's pattern walker: the walker's worklist, listeners and
    rewriter bookkeeping cost more than most lowerings themselves (one ``arith``
    op becomes one llvm op, thousands of times per kernel).

    Last op first: lowering a predicated load or store splits its block, moving
    the ops after it to a new block; visited in reverse, those are only the ops
    up to the next split, not the rest of the block again and again. Each op
    is rewritten on its own (see :mod:`tilec.passes.lowering`), so the order
    changes nothing in the result. A lowering that fails is reported as the
    pattern walker does (its message, the module printed with the op marked).
    """
    lowerings = {**arith_lowering.LOWERINGS, **gpu_lowering.LOWERINGS, **FUNC_LOWERINGS}
    # each op before the ops nested in it, the last op of a block first
    for op in walk_ops(module, reverse=True):
        lowering = lowerings.get(type(op))
        if lowering is None:
            continue
        try:
            lower_op(op, lowering, builder)
        except (ValueError, TypeError) as err:  # a lowering refusing its operands: name the op and its line
            where = location_text(op)
            if not where:
                op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
            raise type(err)(f"'{op.name}' at {where}: {err}") from None
        except Exception as err:
            op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)


@dataclass(frozen=True)
class TileToLLVMPass(ModulePass):
    """Lower fragment-level IR (frag, tile structure ops, arith, scf, func) to ``llvm``."""

    name = "tile-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        check_lowerable(op)
        shared = collect_shared(op)
        # No dead-code elimination: a lowering pass keeps every op it is given.
        builder = Builder(InsertPoint.at_end(op.body.block))  # every lowering sets its own point
        _scf_to_cf(op, builder)
        retype_module(op)
        try:
            _to_llvm(op, builder)
        except (ValueError, TypeError) as e:
            # A builder refused its operands (the walker names the op in a note).
            raise PassFailedException(f"tile-to-llvm: {e}") from None
        _add_shared_globals(op, shared)
        _check_lowered(op)


__all__ = ["FUNC_LOWERINGS", "LoweringError", "TileToLLVMPass", "check_lowerable", "collect_shared", "location_text"]
