"""Kernel functions and shared-memory buffers in the `llvm` dialect.

A kernel is an `llvm.func` with external linkage carrying the `nvvm.kernel`
marker (and optionally `nvvm.maxntid`), which `tilec.codegen.llvm_translate`
turns into a PTX `.entry` with launch bounds. Static shared memory is an
internal `llvm.mlir.global` in address space 3 (PTX `.shared`), aligned so
that 16-byte cp.async and ldmatrix accesses are legal; dynamic shared memory
is an external zero-length one.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import llvm
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, UnitAttr, i8, i32
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from tilec.dialects.llvm_ext import KERNEL_ATTR, MAXNTID_ATTR
from tilec.ir import fast
from tilec.passes.lowering.llvm_build import SHARED, SHARED_PTR


def kernel(
    module: ModuleOp,
    name: str,
    arg_types: Sequence[Attribute],
    *,
    max_threads: int | Sequence[int] | None = None,
) -> tuple[llvm.FuncOp, Builder]:
    """Append an empty kernel `name(args)` to `module`.

    Returns the function and a builder at the end of its entry block (whose
    arguments are the kernel's parameters); the caller ends it with
    `llvm.return`. `max_threads` (x or (x, y, z)) becomes `.maxntid`.
    """
    entry = Block(arg_types=arg_types)
    attrs: dict[str, Attribute] = {KERNEL_ATTR: UnitAttr()}
    if max_threads is not None:
        dims = [max_threads] if isinstance(max_threads, int) else list(max_threads)
        if not 1 <= len(dims) <= 3 or any(d <= 0 for d in dims):
            raise ValueError(
                f"kernel @{name}: max_threads must be 1 to 3 positive sizes, got {dims}"
            )
        attrs[MAXNTID_ATTR] = DenseArrayBase.from_list(i32, dims)
    func = llvm.FuncOp(
        name,
        llvm.LLVMFunctionType(list(arg_types), llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("external"),
        body=Region(entry),
        extra_attrs=attrs,
    )
    module.body.block.add_op(func)
    return func, Builder(InsertPoint.at_end(entry))


def _add_global(module: ModuleOp, op: llvm.GlobalOp) -> None:
    """Globals go first, in creation order, where a reader looks for them."""
    block = module.body.block
    last_global = None
    for existing in block.ops:
        if not isinstance(existing, llvm.GlobalOp):
            break
        last_global = existing
    if last_global is not None:
        block.insert_op_after(op, last_global)
    elif block.first_op is not None:
        block.insert_op_before(op, block.first_op)
    else:
        block.add_op(op)


def shared_buffer(
    module: ModuleOp, name: str, size_bytes: int, *, align: int = 16
) -> llvm.GlobalOp:
    """Add a static `.shared` buffer of `size_bytes` bytes to `module`."""
    if size_bytes <= 0:
        raise ValueError(
            f"shared buffer @{name}: size must be positive, got {size_bytes}"
        )
    if align <= 0 or align & (align - 1):
        raise ValueError(
            f"shared buffer @{name}: align must be a power of two, got {align}"
        )
    buffer = llvm.GlobalOp(
        llvm.LLVMArrayType(size_bytes, i8),
        name,
        "internal",
        addr_space=SHARED,
        alignment=align,
    )
    _add_global(module, buffer)
    return buffer


def dynamic_shared_buffer(
    module: ModuleOp, name: str, *, align: int = 16
) -> llvm.GlobalOp:
    """Add the `extern .shared` buffer whose size is given at launch time."""
    buffer = llvm.GlobalOp(
        llvm.LLVMArrayType(0, i8),
        name,
        "external",
        addr_space=SHARED,
        alignment=align,
    )
    _add_global(module, buffer)
    return buffer


def shared_address(builder: Builder, buffer: llvm.GlobalOp | str) -> SSAValue:
    """The `!llvm.ptr<3>` address of a shared buffer."""
    name = buffer if isinstance(buffer, str) else buffer.sym_name.data
    return builder.insert(fast.addressof_op(name, SHARED_PTR)).result


def ret(builder: Builder) -> None:
    """End the kernel body: `llvm.return`."""
    builder.insert(fast.return_op())
