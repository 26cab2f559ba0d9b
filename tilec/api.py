"""The Python API: compile IR to a launchable kernel.

    import tilec
    k = tilec.compile("examples/kernels/mma_f16.mlir")   # IR text, a path, or a ModuleOp
    k.asm["ptx"]                                         # also "tile", "llvm"; "cubin" (built on access)
    k(a, b, d)                                           # grid/block/smem from #tile.launch

:func:`compile` parses the source with tilec's dialects, verifies it, runs a
pass pipeline and prints PTX for ``arch`` (default: the GPU's architecture,
else ``sm_80``). The pipeline is ``tile-opt -p`` text, a pass object (e.g.
``TileToPTX(stages=4)``, or a GEMM's ``MatmulConfig``) or a list of them;
without one it is chosen from the level of the IR (:func:`pipeline_for`):
a whole-problem ``tile.matmul`` gets ``tile-to-ptx``, a block-level kernel
the passes from ``tile-swizzle`` on, fragment-level IR ``tile-to-llvm``,
llvm-dialect IR nothing. The
result, a :class:`CompiledKernel`, knows its launch signature (derived from
the kernel's arguments) and launches through :class:`tilec.runtime.Kernel`;
its cubin is built once, on first need, through the on-disk cubin cache
keyed by (source IR text, pipeline, arch, tool versions), so another process
compiling the same source finds it there. ``k.asm["cubin"]`` builds it too.

The result itself is cached on disk too (:mod:`tilec.compile_cache`, next
to the cubins): compiling a source that was compiled before, by this
process or another, with the same pipeline, arch, opt level and kernel
choice and the same tilec sources, reads one file instead of running the
passes and LLVM (milliseconds instead of about a second). The pipeline's part
of the key is every option of every pass, so the same passes given as text
or as objects find the same entry.

The IR is verified as given and once after the whole pipeline (while LLVM
runs, in another thread); ``TILEC_VERIFY_EACH=1`` verifies it after every
pass instead (the test suite does), so that a pass that breaks the IR is
named.

Every problem with the source (unreadable file, parse error, invalid IR, a
pass that fails, no or several kernels) raises :class:`CompilationError`
whose message says what and where (``file:line:col`` for parse errors), not
a deep traceback.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tilec.ir  # noqa: F401  first: installs the lazy assembly formats (tilec/ir/lazy_formats.py)
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError

from tilec.codegen.arch import ACCEPTED_ARCHS, check_arch
from tilec.codegen.llvm_translate import KERNEL_ATTR
from tilec.codegen.ptx import TranslationError, compile_module
from tilec.codegen.targets import NotLLVMError, require_llvm_module
from tilec.compile_cache import CompileCache, compile_key
from tilec.compile_cache import enabled_by_env as compile_cache_enabled
from tilec.compile_cache import encode as encode_entry
from tilec.dialects.abi import (
    DTYPE_ATTR,
    GL_ATTR,
    LAUNCH_ATTR,
    OUTPUT_ATTR,
    TENSOR_MAP_ATTR,
    gl_params,
    is_view_pointer,
    tensor_map_attrs,
)
from tilec.dialects.tile.attributes import DYNAMIC, LaunchAttr
from tilec.dialects.context import make_context
from tilec.ir.gc import fewer_gc_pauses
from tilec.ir.parser import LocatingParser
from tilec.ir.verify import verify
from tilec.ir.verify_lowered import verify_memoized
from tilec.passes.registry import (
    VERIFY_EACH_ENV,
    PipelineSpecError,
    PipelinePass,
    build_pipeline,
    verify_each_requested,
    verifying_inner_passes,
)
from tilec.runtime import (
    CubinCache,
    Kernel,
    LaunchDefaults,
    NoDeviceError,
    Param,
    get_device,
    has_device,
    no_device_reason,
)
from tilec.runtime.args import check_whole_clusters
from tilec.runtime.gl_views import check_aligned_rows

BLOCK_LEVEL_PIPELINE = "tile-stage,tile-swizzle,tile-pipeline,tile-layout,tile-distribute,tile-to-llvm"
"""What a block-level kernel (``tile-tiling``'s output, or written by hand) still needs."""

FRAGMENT_LEVEL_PIPELINE = "tile-to-llvm"
"""Fragment level (``frag`` ops) → llvm."""

DEFAULT_PIPELINE = FRAGMENT_LEVEL_PIPELINE
"""What :func:`compile` ran unless told otherwise, before it chose by level; still the choice for IR
that is at no recognised level (e.g. plain ``func``/``arith`` kernels)."""


class CompilationError(Exception):
    """The source could not be compiled; the message names the problem and where.

    ``stage`` is one of ``read``, ``parse``, ``verify``, ``pipeline``,
    ``kernel`` (choosing the kernel), ``codegen``.
    """

    def __init__(self, message: str, stage: str):
        super().__init__(message)
        self.stage = stage


# ---------------------------------------------------------------- source


def _read(source: Any) -> tuple[str, str, ModuleOp | None]:
    """(IR text, name for messages, module if one was given)."""
    if isinstance(source, ModuleOp):
        return str(source), "<module>", source
    if isinstance(source, bytes):
        try:
            source = source.decode()
        except UnicodeDecodeError as e:
            raise CompilationError(f"<source>: error: the source is not UTF-8 text (byte {e.object[e.start]:#04x} at "
                                   f"offset {e.start})", "read") from None
    if isinstance(source, os.PathLike):
        return _read_file(Path(source))
    if isinstance(source, str):
        if "\n" not in source and (source.endswith(".mlir") or _names_a_file(source)):
            return _read_file(Path(source))
        return source, "<source>", None
    raise TypeError(
        f"tilec.compile: source must be IR text, a path or an xDSL ModuleOp, got {type(source).__name__}"
    )


def _names_a_file(text: str) -> bool:
    """Whether one line of text is the path of a file (a line of IR is no path the OS takes: too long, a NUL)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _read_file(path: Path) -> tuple[str, str, None]:
    try:
        return path.read_text(), str(path), None
    except OSError as e:
        raise CompilationError(f"cannot read '{path}': {e.strerror or e}", "read") from None


def _parse(ctx: Context, text: str, name: str) -> ModuleOp:
    try:
        return LocatingParser(ctx, text, name).parse_module()
    except ParseError as e:
        lines = e.span.print_with_context().splitlines()[1:]
        message = "\n".join([f"{e.span.get_location()}: error: {e.msg}", *lines])
        raise CompilationError(message, "parse") from None


def _diagnostic(e: DiagnosticException, name: str, what: str) -> str:
    notes = [n.strip() for n in getattr(e, "__notes__", []) if "\n" not in n.strip()]
    text = f"{name}: error: {what}{e}"
    return "\n".join([text, *(f"{name}: note: {n}" for n in notes)])


# ---------------------------------------------------------------- pipeline


@dataclass(frozen=True)
class Pipeline:
    """The passes :func:`compile` runs, as given in any form.

    ``text``: for messages (the text as given, else the passes printed);
    ``key``: every option of every pass, defaults included, for the compile
    cache (the same passes give the same key, as text or as objects).
    """

    passes: tuple[ModulePass, ...]
    text: str
    key: str

    @classmethod
    def of(cls, pipeline: str | ModulePass | Sequence[ModulePass]) -> Pipeline:
        """The passes of ``-p`` text, a pass object or a sequence of them (:class:`CompilationError`
        of stage ``pipeline`` for text that does not parse)."""
        if isinstance(pipeline, str):
            try:
                passes = build_pipeline(pipeline).passes
            except PipelineSpecError as e:
                raise CompilationError(f"invalid pipeline '{pipeline}':\n{e}", "pipeline") from None
            _check_tools(passes, pipeline)
            return cls(tuple(passes), pipeline, pipeline_key(passes))
        passes = (pipeline,) if isinstance(pipeline, ModulePass) else tuple(pipeline)
        bad = [p for p in passes if not isinstance(p, ModulePass)]
        if bad:
            raise TypeError(f"tilec.compile: pipeline must be -p text, a pass object or a sequence of them; "
                            f"got {type(bad[0]).__name__}")
        return cls(passes, ",".join(pass_text(p) for p in passes), pipeline_key(passes))


def pass_text(p: ModulePass, *, include_default: bool = False) -> str:
    """``name{options}`` of a pass object (xDSL's spelling; the options that differ from their defaults,
    or all of them with ``include_default``)."""
    return str(p.spec(include_default=include_default))


def pipeline_key(passes: Sequence[ModulePass]) -> str:
    """The passes' text with every option spelled out (defaults too): one text per pipeline."""
    return ",".join(pass_text(p, include_default=True) for p in passes)


def pipeline_for(module: ModuleOp) -> tuple[str, str]:
    """(pipeline text, level) for IR given without a pipeline, from the ops it holds.

    A whole-problem ``tile.matmul`` → ``tile-to-ptx``; ``frag`` ops (fragment
    level) → ``tile-to-llvm``; a kernel (``tile.launch``) with tile ops but no
    ``frag`` ops (block level) → :data:`BLOCK_LEVEL_PIPELINE`; only llvm ops →
    nothing; anything else (tile ops outside a kernel, plain ``func``/``arith``)
    → ``tile-to-llvm``, whose errors say what is missing.
    """
    dialects = set()
    kernels = False
    for op in module.walk():
        if op is module:
            continue
        dialects.add(op.name.split(".", 1)[0])
        if op.name == "tile.matmul":
            return "tile-to-ptx", "a whole-problem tile.matmul"
        kernels = kernels or LAUNCH_ATTR in op.attributes
    if "frag" in dialects:
        return FRAGMENT_LEVEL_PIPELINE, "fragment level (frag ops)"
    if "tile" in dialects and kernels:
        return BLOCK_LEVEL_PIPELINE, "a block-level kernel (tile ops, no frag ops)"
    if "tile" in dialects:
        return DEFAULT_PIPELINE, "tile ops outside a kernel (no tile.launch)"
    if dialects <= {"llvm"}:
        return "", "llvm dialect"
    return DEFAULT_PIPELINE, "no tile or frag ops"


def _check_tools(passes: Sequence[ModulePass], text: str) -> None:
    """A pass that runs an external program (xDSL's ``mlir-opt[...]``) needs it on PATH: a
    :class:`CompilationError` now rather than a bare ValueError from inside the pass."""
    for p in passes:
        tool = getattr(p, "executable", None)
        if p.name == "mlir-opt" and isinstance(tool, str) and shutil.which(tool) is None:
            raise CompilationError(f"invalid pipeline '{text}': pass 'mlir-opt' runs {tool}, which is not on PATH",
                                   "pipeline")


def _run_pipeline(ctx: Context, module: ModuleOp, pipeline: Pipeline | str, name: str,
                  verify_each: bool) -> str | None:
    """Run the passes; with ``verify_each`` verify the IR after each (inner passes too).

    Returns what produced the IR that is not verified yet (``"pass 'x'"`` or
    ``"pipeline 'x,y'"``; None with ``verify_each``): see :func:`_verify_output`.
    """
    if isinstance(pipeline, str):
        pipeline = Pipeline.of(pipeline)
    running: list[str] = []
    ran: list[str] = []

    def verify_after(previous: ModulePass | None, op: ModuleOp, next_: ModulePass | None) -> None:
        running[:] = []
        # a pipeline pass that verifies its inner passes has verified its output already
        if previous is not None and verify_each and not isinstance(previous, PipelinePass):
            try:
                verify(op)
            except DiagnosticException as e:
                e.add_note(f"the IR produced by pass '{previous.name}' does not verify")
                raise
        if previous is not None:
            ran.append(previous.name)
        if next_ is not None:
            running.append(next_.name)

    try:
        with verifying_inner_passes(verify_each):
            PassPipeline(pipeline.passes, verify_after).apply(ctx, module)
    except DiagnosticException as e:
        if running:
            e.add_note(f"while running pass '{running[0]}'")
        raise CompilationError(_diagnostic(e, name, ""), "pipeline") from None
    if verify_each or not ran:
        return None
    return f"pass '{ran[0]}'" if len(ran) == 1 else f"pipeline '{pipeline.text}'"


def _verify_output(module: ModuleOp, producer: str | None, name: str) -> None:
    """Verify what the pipeline produced (unless it was verified pass by pass): a
    :class:`CompilationError` of stage ``pipeline`` naming ``producer`` if it does not verify.

    Each signature of the thousands of plain llvm ops is verified once
    (:func:`tilec.ir.verify_lowered.verify_memoized`: the same verdict, in half the time).
    """
    if producer is None:
        return
    try:
        verify_memoized(module)
    except DiagnosticException as e:
        e.add_note(f"the IR produced by {producer} does not verify "
                   f"(set {VERIFY_EACH_ENV}=1 to verify after every pass)")
        raise CompilationError(_diagnostic(e, name, ""), "pipeline") from None


# ---------------------------------------------------------------- kernel


def _kernels(module: ModuleOp) -> list[llvm.FuncOp]:
    return [op for op in module.ops if isinstance(op, llvm.FuncOp) and KERNEL_ATTR in op.attributes]


def _select_kernel(module: ModuleOp, kernel: str | None, name: str) -> llvm.FuncOp:
    kernels = _kernels(module)
    names = [k.sym_name.data for k in kernels]
    if not kernels:
        raise CompilationError(
            f"{name}: error: no kernel: a kernel is a func.func with a #tile.launch attribute", "kernel"
        )
    if kernel is None:
        if len(kernels) > 1:
            raise CompilationError(
                f"{name}: error: the module has {len(kernels)} kernels ({', '.join(names)}); "
                "choose one with kernel=...",
                "kernel",
            )
        return kernels[0]
    for k in kernels:
        if k.sym_name.data == kernel:
            return k
    raise CompilationError(
        f"{name}: error: no kernel named '{kernel}'; the kernels are: {', '.join(names)}", "kernel"
    )


def _dtype_name(t: Attribute) -> str | None:
    match t:
        case IntegerType():
            return "bool" if t.width.data == 1 else f"int{t.width.data}"
        case Float16Type():
            return "float16"
        case BFloat16Type():
            return "bfloat16"
        case Float32Type():
            return "float32"
        case Float64Type():
            return "float64"
        case Float8E4M3FNType():
            return "float8_e4m3fn"
        case Float8E5M2Type():
            return "float8_e5m2"
        case _:
            return None


def derive_signature(fn: llvm.FuncOp) -> tuple[Param, ...]:
    """Launch parameters of a lowered kernel, from its argument types and attributes.

    ``!llvm.ptr<1>`` → a pointer parameter; its element type comes from the
    argument attribute ``tile.dtype`` (any dtype without it), ``tile.output``
    marks it written; a pointer with ``tile.gl`` (a global view, passed with
    its extents and strides) takes any strides, others must be C-contiguous.
    Integers and floats → scalar parameters. A generic ``!llvm.ptr`` with
    ``tile.tensor_map`` (and ``tile.gl``, ``tile.box``, ``tile.swizzle``) →
    a tensor-map parameter (a ``CUtensorMap`` by value) of that gl view,
    whose element type is its pointer's ``tile.dtype``.
    """
    kernel = fn.sym_name.data
    inputs = fn.function_type.inputs.data
    block = fn.body.blocks.first if fn.body.blocks else None
    arg_attrs = list(fn.arg_attrs.data) if fn.arg_attrs is not None else [DictionaryAttr({})] * len(inputs)
    views = {a.data[GL_ATTR].data: j for j, a in enumerate(arg_attrs) if is_view_pointer(a.data)}
    params: list[Param] = []
    for i, (t, attrs) in enumerate(zip(inputs, arg_attrs, strict=True)):
        hint = block.args[i].name_hint if block is not None else None
        pname = hint if hint and hint not in [p.name for p in params] else f"arg{i}"
        attrs = attrs.data
        if isinstance(t, llvm.LLVMPointerType) and TENSOR_MAP_ATTR in attrs:
            where, gl, space = f"kernel '{kernel}': argument #{i} '{pname}'", attrs.get(GL_ATTR), t.addr_space
            if isinstance(space, IntAttr) and space.data != 0:
                raise CompilationError(f"{where}: a tensor map is a generic !llvm.ptr, not !llvm.ptr<{space.data}>",
                                       "kernel")
            if not isinstance(gl, StringAttr) or gl.data not in views:
                raise CompilationError(f"{where}: a tensor map needs {GL_ATTR} naming a gl view with a pointer "
                                       f"argument, got {gl}", "kernel")
            view_dtype = _dtype_name(arg_attrs[views[gl.data]].data.get(DTYPE_ATTR, UnitAttr()))
            try:
                _, box, swizzle = tensor_map_attrs(attrs)
                params.append(Param.tensor_map(pname, gl.data, view_dtype or "none", box, swizzle,
                                               view_index=views[gl.data]))
            except ValueError as e:
                raise CompilationError(f"{where}: {e}", "kernel") from None
            continue
        if isinstance(t, llvm.LLVMPointerType):
            dtype_attr = attrs.get(DTYPE_ATTR)
            dtype = None
            if dtype_attr is not None:
                dtype = _dtype_name(dtype_attr)
                if dtype is None:
                    raise CompilationError(
                        f"kernel '{kernel}': argument #{i} '{pname}': {DTYPE_ATTR} = {dtype_attr} "
                        "is not an element type (e.g. f16, bf16, f32, i32)",
                        "kernel",
                    )
            # a gl view (tile-distribute's ABI) comes with its extents and strides: any strides will do
            contiguous = GL_ATTR not in attrs
            params.append(Param.pointer(pname, dtype, is_output=isinstance(attrs.get(OUTPUT_ATTR), UnitAttr),
                                        contiguous=contiguous))
            continue
        dtype = _dtype_name(t)
        if dtype is None:
            raise CompilationError(f"kernel '{kernel}': argument #{i} '{pname}' has type {t}, "
                                   "which cannot be passed from Python", "kernel")
        params.append(Param.scalar(pname, dtype))
    return tuple(params)


def _shared_memory(module: ModuleOp) -> tuple[int, bool]:
    """(bytes of static shared memory, whether there is dynamic shared memory)."""
    static, dynamic = 0, False
    for op in module.ops:
        if isinstance(op, llvm.GlobalOp) and op.addr_space.value.data == 3:
            t = op.global_type
            size = t.size.data if isinstance(t, llvm.LLVMArrayType) else 0
            if op.linkage.linkage.data == "external" and size == 0:
                dynamic = True
            else:
                static += size
    return static, dynamic


# ---------------------------------------------------------------- arch


def default_arch() -> str:
    """The GPU's architecture if there is a GPU (the newest we support up to it), else sm_80."""
    if not has_device():
        return "sm_80"
    major, minor = get_device(0).compute_capability
    cc = 10 * major + minor
    usable = [a for a in ACCEPTED_ARCHS if int(a[3:]) <= cc]
    if not usable:
        raise CompilationError(f"the GPU (sm_{cc}) is older than every supported architecture "
                               f"({', '.join(ACCEPTED_ARCHS)})", "codegen")
    return max(usable, key=lambda a: int(a[3:]))


def target_arch(arch: Any) -> str:
    """``arch`` checked (a ValueError naming it: ``''``, ``0`` or ``False`` are not targets), or the GPU's
    (:func:`default_arch`) when None: what every compile entry point targets."""
    return default_arch() if arch is None else check_arch(arch)


# ---------------------------------------------------------------- result


class KernelTexts(dict):
    """``CompiledKernel.asm``: the texts, and ``"cubin"``, which reading builds (:meth:`CompiledKernel.cubin`).

    ``"cubin" in asm`` and ``asm.get("cubin")`` do not build it: they say whether it is there.
    """

    def __init__(self, texts: dict[str, Any], build_cubin: Any):
        super().__init__(texts)
        self._build_cubin = build_cubin

    def __missing__(self, key: str) -> Any:
        if key == "cubin":
            return self._build_cubin()
        raise KeyError(key)


class CompiledKernel:
    """A compiled kernel: its texts (``asm``), name, signature, and a launcher.

    ``asm`` has ``"tile"`` (the source IR), ``"llvm"`` (LLVM IR), ``"ptx"``,
    and ``"cubin"``, built when it is first read (or by :meth:`cubin`, or on
    first launch): by the driver on a GPU, else by ptxas for ``arch``
    (a :class:`~tilec.runtime.PtxasError` says so when ptxas is missing).
    Call it as ``kernel(*args, grid=None, block=None, shared_mem=None,
    stream=None)``; the defaults come from ``#tile.launch``.

    ``gl_params`` lists the kernel's global views (the gl ABI of
    :mod:`tilec.dialects.abi`: pointer + extents + strides,
    :class:`~tilec.dialects.abi.GlParam`);
    ``tilec.runtime.gl_views.expand(kernel, a, b, c)`` makes the flat
    arguments from one array per view.
    """

    def __init__(self, *, name: str, asm: dict[str, Any], signature: Sequence[Param], arch: str,
                 launch: LaunchDefaults, pipeline: str, cache: CubinCache | bool | None,
                 gl_params: Sequence[Any] = ()):
        self.name = name
        self.gl_params = tuple(gl_params)
        self._aligned = tuple(g for g in self.gl_params if getattr(g, "aligned_rows", 0))
        self.asm = KernelTexts(asm, self.cubin)
        self.signature = tuple(signature)
        self.arch = arch
        self.launch_defaults = launch
        self.pipeline = pipeline
        self._cache = cache
        self._ptx_kernel = Kernel(asm["ptx"], name, self.signature, cache=cache,
                                  ir=asm["tile"], pipeline=pipeline)
        self._runtime: Kernel | None = None

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.describe()}{' (out)' if p.is_output else ''}" for p in self.signature)
        return f"CompiledKernel({self.name}({params}), {self.arch})"

    def cubin(self, arch: str | None = None) -> bytes:
        """The cubin, through the disk cache: for this machine's GPU (driver JIT), else ptxas for ``self.arch``.

        With ``arch`` (``sm_80`` ... ``sm_90a``): ptxas for that target, touching
        no GPU, as ``triton.compile`` does for a given target (an ahead-of-time
        build, or a cubin for another machine).
        """
        if arch is not None:
            check_arch(arch)
            return self._ptx_kernel.cubin(arch, backend="ptxas")
        cubin = dict.get(self.asm, "cubin")
        if cubin is None:
            cubin = self._ptx_kernel.cubin(None if has_device() else self.arch)
            self.asm["cubin"] = cubin
        return cubin

    def validate(self, *args: Any, stream: Any = None) -> None:
        """Check ``args`` against the signature (TypeError/ValueError), touching no GPU."""
        self._ptx_kernel.validate(*args, stream=stream)
        if self._aligned:
            check_aligned_rows(self._aligned, args, self.name)

    def _dims(self, grid: Any, block: Any) -> tuple[Any, Any]:
        """(grid, block): the given ones, else ``#tile.launch``'s (a TypeError when there are none)."""
        if grid is not None and block is not None:
            return grid, block
        d = self.launch_defaults
        if grid is None:
            if d.grid is None or any(g is None for g in d.grid):
                why = "has no #tile.launch" if d.grid is None else f"has a dynamic grid {d.grid}"
                raise TypeError(f"kernel {self.name!r} {why}: pass grid=...")
            grid = d.grid
        if block is None:
            if d.block is None:
                raise TypeError(f"kernel {self.name!r} has no #tile.launch: pass block=...")
            block = d.block
        return grid, block

    def launch(self, *args: Any, grid: Any = None, block: Any = None, shared_mem: int | None = None,
               stream: Any = None) -> None:
        """Check the arguments, then launch (building the cubin on first use).

        Until the kernel is loaded, the arguments are checked here first, so
        that a bad call fails before a cubin is built and before
        :class:`NoDeviceError`. After that the runtime kernel's launch checks
        them (once: on its fast path for torch tensors and Python numbers).
        """
        grid, block = self._dims(grid, block)
        if shared_mem is None:
            shared_mem = self.launch_defaults.shared_mem
        if self._aligned:
            check_aligned_rows(self._aligned, args, self.name)
        if self.launch_defaults.cluster != (1, 1, 1):
            check_whole_clusters(self.name, grid, self.launch_defaults.cluster)
        runtime = self._runtime
        if runtime is None:
            self.validate(*args, stream=stream)
            if not has_device():
                raise NoDeviceError(no_device_reason() or "no GPU")
            runtime = self._runtime = Kernel.from_cubin(self.cubin(), self.name, self.signature, cache=False)
        runtime.launch(*args, grid=grid, block=block, shared_mem=shared_mem, stream=stream)

    __call__ = launch

    def max_active_clusters(self) -> int:
        """Thread-block clusters of this kernel the GPU runs at once (its launch's block, shared memory
        and cluster; :meth:`tilec.runtime.Kernel.max_active_clusters`): what a persistent kernel
        with clusters launches at most."""
        if not has_device():
            raise NoDeviceError(no_device_reason() or "no GPU")
        runtime = self._runtime
        if runtime is None:
            runtime = self._runtime = Kernel.from_cubin(self.cubin(), self.name, self.signature, cache=False)
        d = self.launch_defaults
        return runtime.max_active_clusters(d.block, d.shared_mem, d.cluster)


AUTO_PIPELINE = "auto"
"""The pipeline's part of the compile cache key when :func:`compile` chooses it from the IR's level
(a function of the source, which is in the key too)."""


def compile(  # noqa: A001 - the public name the API promises
    source: str | os.PathLike[str] | bytes | ModuleOp,
    *,
    pipeline: str | ModulePass | Sequence[ModulePass] | None = None,
    arch: str | None = None,
    cache: CubinCache | str | os.PathLike[str] | bool | None = None,
    kernel: str | None = None,
    opt_level: int = 3,
) -> CompiledKernel:
    """Compile ``source`` (IR text, a path to a ``.mlir`` file, or a ModuleOp) to a kernel.

    ``pipeline``: passes in ``tile-opt -p`` syntax, a pass object
    (``TileToPTX(block=(64, 64, 32))``, a ``MatmulConfig``) or a sequence of
    them; None chooses by the IR's level (:func:`pipeline_for`). ``arch``:
    ``sm_80``, ``sm_86``, ``sm_89``, ``sm_90`` or ``sm_90a`` (default: the
    GPU's, else sm_80); ``cache``: a :class:`~tilec.runtime.CubinCache` or a
    folder for one, None for the default on-disk cache, False for none (the
    compile cache of :mod:`tilec.compile_cache` lives in the same folder and
    is off with it); ``kernel``: which kernel, when the module has several.
    A given ModuleOp is not modified (its printed text is the cache key's
    source).
    """
    if arch is not None:
        check_arch(arch)
    if isinstance(opt_level, bool) or not isinstance(opt_level, int) or opt_level not in (0, 1, 2, 3):
        raise ValueError(f"tilec.compile: opt_level must be an int from 0 to 3, got {opt_level!r}")
    if not (cache is None or isinstance(cache, (bool, str, os.PathLike, CubinCache))):
        raise TypeError(f"tilec.compile: cache must be a CubinCache, a folder, None or False, got "
                        f"{type(cache).__name__} {cache!r}")
    if not (pipeline is None or isinstance(pipeline, (str, ModulePass, Sequence))):
        raise TypeError(f"tilec.compile: pipeline must be tile-opt pass text, a pass or a sequence of passes, got "
                        f"{type(pipeline).__name__} {pipeline!r}")
    if isinstance(cache, (str, os.PathLike)):
        cache = CubinCache(cache)
    passes = Pipeline.of(pipeline) if pipeline is not None else None
    text, name, given = _read(source)
    arch = arch or default_arch()
    kernels = _compile_cache(cache)
    key = None
    if kernels is not None:
        key = compile_key(source=text, pipeline=passes.key if passes is not None else AUTO_PIPELINE, arch=arch,
                          opt_level=opt_level, kernel=kernel)
        entry = kernels.load(key)
        if entry is not None:
            return CompiledKernel(
                name=entry["name"],
                asm={"tile": text, "llvm": entry["llvm"], "ptx": entry["ptx"]},
                signature=entry["signature"],
                arch=arch,
                launch=entry["launch"],
                pipeline=entry["pipeline"],
                cache=cache,
                gl_params=entry["gl_params"],
            )
    with fewer_gc_pauses():
        result = _compile_uncached(text, name, given, pipeline=passes, arch=arch, cache=cache, kernel=kernel,
                                   opt_level=opt_level)
    if kernels is not None:
        kernels.store(key, encode_entry(key, name=result.name, asm=result.asm, signature=result.signature,
                                        launch=result.launch_defaults, gl_params=result.gl_params,
                                        pipeline=result.pipeline))
    return result


def _compile_uncached(text: str, name: str, given: ModuleOp | None, *, pipeline: Pipeline | None, arch: str,
                      cache: CubinCache | bool | None, kernel: str | None, opt_level: int) -> CompiledKernel:
    """Parse (or clone), verify, run the pipeline, choose the kernel, make PTX: :func:`compile` without its cache.

    Without a ``pipeline`` it is chosen by level, and an error says which was chosen and why.
    """
    ctx = make_context()
    module = given.clone() if given is not None else _parse(ctx, text, name)
    try:
        verify(module)
    except DiagnosticException as e:
        raise CompilationError(_diagnostic(e, name, "invalid IR: "), "verify") from None
    if pipeline is not None:
        return _lower(ctx, module, text, name, pipeline, arch=arch, cache=cache, kernel=kernel, opt_level=opt_level)
    chosen, level = pipeline_for(module)
    try:
        return _lower(ctx, module, text, name, Pipeline.of(chosen), arch=arch, cache=cache, kernel=kernel,
                      opt_level=opt_level)
    except CompilationError as e:
        note = (f"{name}: note: no pipeline= was given; the IR is {level}, so the pipeline was "
                f"'{chosen}'; pass pipeline=... to choose another")
        raise CompilationError(f"{e}\n{note}", e.stage) from None


def _lower(ctx: Context, module: ModuleOp, text: str, name: str, pipeline: Pipeline, *, arch: str,
           cache: CubinCache | bool | None, kernel: str | None, opt_level: int) -> CompiledKernel:
    """Run ``pipeline`` on the verified ``module``, choose the kernel, make PTX."""
    producer = _run_pipeline(ctx, module, pipeline, name, verify_each_requested())
    pending = [producer is not None]

    def verify_output() -> None:
        # once: the pipeline's output when it was not verified pass by pass
        if pending[0]:
            pending[0] = False
            _verify_output(module, producer, name)

    try:
        try:
            require_llvm_module(module, "ptx")
        except NotLLVMError as e:
            raise CompilationError(f"{name}: error: after pipeline '{pipeline.text}': {e}", "codegen") from None
        fn = _select_kernel(module, kernel, name)
        signature = derive_signature(fn)
        try:
            views = gl_params(fn)
        except ValueError as e:
            raise CompilationError(f"{name}: error: {e}", "kernel") from None
        launch_attr = fn.attributes.get(LAUNCH_ATTR)
        static, dynamic = _shared_memory(module)
        if isinstance(launch_attr, LaunchAttr):
            grid = tuple(None if g == DYNAMIC else g for g in launch_attr.grid_dims)
            defaults = LaunchDefaults(grid, launch_attr.block_dims, launch_attr.smem.data, static, dynamic,
                                      launch_attr.cluster_dims)
        else:
            defaults = LaunchDefaults(None, None, 0, static, dynamic)
        # LLVM runs in another thread meanwhile the output is verified (once, here)
        try:
            compiled = compile_module(module, arch, opt_level=opt_level,
                                      alongside=verify_output if pending[0] else None)
        except TranslationError as e:
            raise CompilationError(_diagnostic(e, name, ""), "codegen") from None
    except Exception:
        verify_output()  # invalid IR explains whatever failed on it
        raise
    return CompiledKernel(
        name=fn.sym_name.data,
        asm={"tile": text, "llvm": compiled.llvm_ir, "ptx": compiled.ptx},
        signature=signature,
        arch=arch,
        launch=defaults,
        pipeline=f"{pipeline.key} opt_level={opt_level}".lstrip(),
        cache=cache,
        gl_params=views,
    )


def _compile_cache(cache: CubinCache | bool | None) -> CompileCache | None:
    """The compile cache next to the cubin cache ``cache`` (None: off)."""
    if cache is False or not compile_cache_enabled():
        return None
    if isinstance(cache, CubinCache):
        return CompileCache(cache.directory)
    return CompileCache()


__all__ = [
    "BLOCK_LEVEL_PIPELINE",
    "DEFAULT_PIPELINE",
    "FRAGMENT_LEVEL_PIPELINE",
    "CompilationError",
    "CompiledKernel",
    "LaunchDefaults",
    "Pipeline",
    "compile",
    "default_arch",
    "derive_signature",
    "make_context",
    "pipeline_for",
    "pass_text",
    "pipeline_key",
]
