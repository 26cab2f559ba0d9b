"""The kernel's parameters in ``tile-distribute``: global views become pointer, extents, strides.

Each ``!tile.gl<T, [d0, ..]>`` argument of rank r becomes ``1 + 2r`` parameters (and a tensor map
per bulk-copy box), named and marked with the attributes of :mod:`tilec.dialects.abi`, where the
ABI is described; other arguments (scalars) are kept. The old arguments map to
:class:`~tilec.passes.tile_distribute.values.GlobalArg` values for the rest of the pass.

**Specialising on alignment** (Triton's ``tt.divisibility``). A ``!tile.gl``
argument of the tile-level function may carry ``tile.aligned_rows = A``
(bytes, a power of two at least the element size): *every row of the view
is contiguous (innermost stride 1), starts at a multiple of A bytes and is
a multiple of A bytes long* (pointer, outer strides and the last extent
included). The kernel then knows every run of up to A bytes is a vector
that lies wholly inside or wholly outside the view, drops the prologue
checks and the element paths, and keeps one bounds predicate per run. It
moves nothing wider than A bytes (Triton's launcher likewise compiles for
what it was told): A = 8 or 4 gives 8- or 4-byte ``cp.async``, A below 4
element copies (whose stores to shared memory wait for the next wait when
they are part of an async copy). The attribute goes onto the pointer
parameter (``tile.aligned_rows = A``) so that the launcher checks the facts
before each launch (:func:`tilec.runtime.gl_views.check_aligned_rows`) and refuses a
view that breaks them. Other arguments are kept. The kernel gets ``tile.registers = N``, the estimated
32-bit registers per thread (loop-carried fragments + the largest mma's
operand fragments + an allowance for addresses); more than 255 is an error
that names the largest tile.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, DictionaryAttr, IndexType, IntAttr, IntegerAttr, IntegerType, StringAttr, UnitAttr, i64
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Block

from tilec.dialects.abi import ALIGNED_ROWS_ATTR, DIM_ATTR, DTYPE_ATTR, GL_ATTR, OUTPUT_ATTR, STRIDE_ATTR
from tilec.dialects.tile import ops as t
from tilec.dialects.tile.types import GlobalType, element_bits
from tilec.passes.tile_distribute.bulk import MIN_ALIGNED_ROWS, boxes_by_view, tensor_map_params
from tilec.passes.tile_distribute.memory import RegallocError
from tilec.passes.alignment import root_view
from tilec.passes.tile_distribute.values import GlobalArg


def _aligned_rows(fn_name: str, index: int, attrs: DictionaryAttr, ty: GlobalType) -> int:
    """The argument's ``tile.aligned_rows`` in bytes (0 when absent), checked."""
    attr = attrs.data.get(ALIGNED_ROWS_ATTR)
    if attr is None:
        return 0
    elem = element_bits(ty.element_type) // 8
    value = attr.value.data if isinstance(attr, IntegerAttr) else None
    if value is None or value < elem or value & (value - 1):
        raise RegallocError(
            f"@{fn_name}: argument #{index} ({ty}): {ALIGNED_ROWS_ATTR} must be an integer number of bytes, a power "
            f"of two and at least the element size {elem}, got {attr}"
        )
    return value


class AbiLowering:
    """Mixin of :class:`tilec.passes.tile_distribute.kernel.KernelLowering`: the new signature."""

    def signature(self) -> tuple[Block, list[Attribute], list[DictionaryAttr]]:
        written = set()
        for op in self.fn.walk():
            if isinstance(op, (t.StoreOp, t.BulkStoreOp, t.ScatterOp, *t.ATOMIC_OPS)):
                written.add(root_view(op.dest))
            elif isinstance(op, t.CopyOp) and isinstance(op.dest.type, GlobalType):
                written.add(root_view(op.dest))
        types: list[Attribute] = []
        attrs: list[DictionaryAttr] = []
        names: list[str] = []
        old_attrs = list(self.fn.arg_attrs.data) if self.fn.arg_attrs is not None else [DictionaryAttr({})] * len(
            self.fn.args
        )
        plan = []
        bulk_views = boxes_by_view(self.fn)
        self.tensor_maps = {}
        for i, arg in enumerate(self.fn.args):
            name = arg.name_hint or f"arg{i}"
            ty = arg.type
            if isinstance(ty, GlobalType):
                base = {DTYPE_ATTR: ty.element_type, GL_ATTR: StringAttr(name)}
                if arg in written:
                    base[OUTPUT_ATTR] = UnitAttr()
                aligned = _aligned_rows(self.name, i, old_attrs[i], ty)
                if aligned:
                    base[ALIGNED_ROWS_ATTR] = IntegerAttr(aligned, i64)
                types.append(LLVMPointerType(IntAttr(1)))
                attrs.append(DictionaryAttr(base))
                names.append(name)
                for d in range(ty.rank):
                    types.append(i64)
                    attrs.append(DictionaryAttr({GL_ATTR: StringAttr(name), DIM_ATTR: IntegerAttr(d, i64)}))
                    names.append(f"{name}_dim{d}")
                for d in range(ty.rank):
                    types.append(i64)
                    attrs.append(DictionaryAttr({GL_ATTR: StringAttr(name), STRIDE_ATTR: IntegerAttr(d, i64)}))
                    names.append(f"{name}_stride{d}")
                boxes = bulk_views.get(arg, [])
                if boxes and aligned < MIN_ALIGNED_ROWS:
                    raise RegallocError(
                        f"@{self.name}: argument #{i} ({ty}) is read by tile.bulk_copy or written by tile.bulk_store, "
                        "whose tensor map needs "
                        f"16-byte aligned rows: give it {ALIGNED_ROWS_ATTR} = 16 (or more), got {aligned or 'none'}"
                    )
                for pty, pattrs, pname in tensor_map_params(name, boxes):
                    types.append(pty)
                    attrs.append(pattrs)
                    names.append(pname)
                plan.append(("gl", arg, name, arg in written, aligned, boxes))
            elif isinstance(ty, IndexType | IntegerType | AnyFloat):
                types.append(ty)
                attrs.append(old_attrs[i])
                names.append(name)
                plan.append(("keep", arg, name, False, 0, []))
            else:
                raise RegallocError(f"@{self.name}: argument #{i} of type {ty} cannot be a kernel argument")
        block = Block(arg_types=types)
        for a, n in zip(block.args, names):
            a.name_hint = n
        pos = 0
        for kind, arg, name, out, aligned, boxes in plan:
            if kind == "gl":
                ty = arg.type
                r = ty.rank
                self.vmap[arg] = GlobalArg(
                    name, block.args[pos], ty.element_type, ty.dims,
                    list(block.args[pos + 1 : pos + 1 + r]), list(block.args[pos + 1 + r : pos + 1 + 2 * r]), out,
                    aligned,
                )
                pos += 1 + 2 * r
                for box in boxes:
                    self.tensor_maps[(arg, box)] = block.args[pos]
                    pos += 1
            else:
                self.vmap[arg] = block.args[pos]
                pos += 1
        return block, types, attrs
