"""``@tl.kernel``: a Python function that builds tile IR, specialised per call like ``tilec.matmul``.

A call's arrays fix each array argument's element type, rank and row alignment (the
``tile.aligned_rows`` tilec.matmul's kernels are specialised on); ``tl.constexpr`` parameters are
Python values the function sees as such (shapes, block sizes); other numbers become ``i32``/``f32``
(``i64`` for an integer past int32, as Triton types it)
scalar arguments. For each such specialisation the function is traced once into a module
(:meth:`Kernel.ir`), which the usual passes compile (:meth:`Kernel.compile`, cached in memory and,
through :func:`tilec.compile`, on disk), the CPU interpreter runs (:meth:`Kernel.interpret`), and
``kernel[grid](...)`` launches.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.llvm import InlineAsmOp, LLVMPointerType
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, Float32Type, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from tilec.dialects.abi import ALIGNED_ROWS_ATTR, LAUNCH_ATTR
from tilec.dialects.tile.attributes import DYNAMIC, MAX_CLUSTER_BLOCKS, LaunchAttr
from tilec.dialects.tile.ops import AllocOp
from tilec.dialects.tile.types import GlobalType
from tilec.ir.parser import location_text
from tilec.lang import dtypes
from tilec.lang.loop import range as lang_range
from tilec.lang.source_rewrite import rewrite
from tilec.lang.tracing import LangError, Trace, is_tracing, located_type_error, tracing
from tilec.lang.unsigned import mark_array
from tilec.lang.values import Scalar, View, remove_dead_ops


class constexpr:  # noqa: N801 - the annotation users write: tl.constexpr
    """Annotates a parameter whose value is known when the kernel is built (a shape, a block size).
    Called, as Triton's kernels do to mark a value (``BLOCK: tl.constexpr = tl.constexpr(128)``), it gives
    the value back: a Python value is already known when the kernel is built."""

    def __new__(cls, value: Any = None) -> Any:
        return value


MAX_WARPS = 32

MAX_RANK = 4
"""Array arguments have 1 to 4 dimensions (loads and stores take windows of the last one or two)."""


@dataclass(frozen=True)
class ArraySpec:
    """What a kernel is specialised on for one array argument."""

    dtype: str
    rank: int
    align: int  # tile.aligned_rows in bytes, 0 for none
    unit_dim: int | None = None  # the dimension of stride 1 (a block pointer's order is read against it)


@dataclass(frozen=True)
class Specialization:
    """One compiled variant: each parameter's kind (an ArraySpec, "i32", "i64", "u64" (an int past 2^63), "f32", :data:`ONE`, None for an absent
    argument, or a constexpr's value), the warps, and the constexprs' types (``True == 1 == 1.0`` in
    Python, but a kernel may tell them apart)."""

    params: tuple[tuple[str, Any], ...]
    num_warps: int
    constexpr_types: tuple[str, ...] = ()

    def describe(self) -> str:
        return ", ".join(f"{n}={v}" for n, v in self.params)


ONE = "i32 = 1"
"""The kind of an integer argument equal to 1 (:meth:`Kernel.specialize`): an i32 the kernel reads as the constant."""


def _unspecialized(names: Sequence[str | int], params: list[str], kernel: str) -> frozenset[str]:
    """``do_not_specialize``'s parameters by name (positions allowed, as Triton's)."""
    if isinstance(names, (str, int)):
        names = (names,)
    out = set()
    for n in names:
        if isinstance(n, int) and not isinstance(n, bool) and 0 <= n < len(params):
            out.add(params[n])
        elif isinstance(n, str) and n in params:
            out.add(n)
        else:
            raise ValueError(f"{kernel}: do_not_specialize names a parameter ({', '.join(params)}) or its position, "
                             f"got {n!r}")
    return frozenset(out)


def _is_constexpr(annotation: Any) -> bool:
    if annotation is constexpr:
        return True
    return isinstance(annotation, str) and annotation.replace(" ", "").split(".")[-1] == "constexpr"


def _cluster_dims(cluster: Any, name: str) -> tuple[int, int, int]:
    """``cluster=`` of a kernel: blocks a thread-block cluster along x (an int) or (x, y, z), at most
    :data:`~tilec.dialects.tile.attributes.MAX_CLUSTER_BLOCKS` in all."""
    dims = (cluster,) if isinstance(cluster, int) and not isinstance(cluster, bool) else tuple(cluster) \
        if isinstance(cluster, (tuple, list)) else None
    if dims is None or not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1
                                                        for d in dims):
        raise ValueError(f"{name}: cluster must be a positive int or 1 to 3 of them (blocks a cluster along x, y, z), "
                         f"got {cluster!r}")
    dims = (*dims, *(1,) * (3 - len(dims)))
    if dims[0] * dims[1] * dims[2] > MAX_CLUSTER_BLOCKS:
        raise ValueError(f"{name}: cluster {list(dims)} has more than {MAX_CLUSTER_BLOCKS} blocks (the portable limit)")
    return dims


class Kernel:
    """A ``@tl.kernel`` function; see the module docstring."""

    def __init__(self, fn: Callable[..., Any], *, num_warps: int = 4, num_stages: int | None = None,
                 bulk: bool = False, producer: bool = False, bulk_store: bool = False, cluster: Any = 1,
                 do_not_specialize: Sequence[str | int] = ()):
        _check_warps(num_warps)
        self.cluster = _cluster_dims(cluster, fn.__name__)
        if producer and not bulk:
            raise ValueError(f"{fn.__name__}: producer=True feeds the K loops' bulk copies: give bulk=True too")
        if bulk_store and not bulk:
            raise ValueError(f"{fn.__name__}: bulk_store=True stores through tensor maps (sm_90): give bulk=True too")
        self.producer = producer
        self.bulk_store = bulk_store
        self.fn = fn
        self.name = fn.__name__
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.bulk = bulk
        self.signature = inspect.signature(fn)
        self.constexprs = frozenset(n for n, p in self.signature.parameters.items() if _is_constexpr(p.annotation))
        self.do_not_specialize = _unspecialized(do_not_specialize, list(self.signature.parameters), self.name)
        self._traced_fn: Callable[..., Any] | None = None
        self._modules: dict[tuple[Specialization, str | None], ModuleOp] = {}
        self._compiled: dict[tuple[Specialization, str | None], Any] = {}
        self._lock = threading.Lock()
        self._fast: dict[tuple, tuple[Any, tuple]] = {}
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<tl.kernel {self.name}{self.signature}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Called from another kernel while that one is traced: this function inline, as a ``@tl.func``
        (Triton calls one ``@triton.jit`` function from another so); its launch options do not apply."""
        if not is_tracing():
            raise TypeError(f"{self.name}: launch a kernel with {self.name}[grid](...) (or build it with "
                            f"{self.name}.compile(...)); called, it runs inline only inside another kernel")
        if self._traced_fn is None:
            self._traced_fn = rewrite(self.fn, (lang_range,))
        return self._traced_fn(*args, **kwargs)

    def with_options(self, **changes: Any) -> "Kernel":
        """The same function as a kernel with other compile defaults (``num_warps``, ``num_stages``,
        ``bulk``, ``producer``, ``bulk_store``, ``cluster``): a variant a library picks per problem,
        e.g. ``attention_fwd_wgmma.with_options(bulk_store=True)``. It traces and caches on its own."""
        options = dict(num_warps=self.num_warps, num_stages=self.num_stages, bulk=self.bulk, producer=self.producer,
                       bulk_store=self.bulk_store, cluster=self.cluster, do_not_specialize=tuple(self.do_not_specialize))
        unknown = sorted(set(changes) - set(options))
        if unknown:
            raise TypeError(f"{self.name}: with_options takes {', '.join(options)}; got {', '.join(unknown)}")
        return Kernel(self.fn, **{**options, **changes})

    # ---------------------------------------------------------------- specialising

    def _bind(self, args: tuple, kwargs: dict) -> inspect.BoundArguments:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.name}: {e}") from None
        bound.apply_defaults()
        return bound

    def specialize(self, *args: Any, num_warps: int | None = None, **kwargs: Any) -> Specialization:
        """The variant a call with these arguments runs (what the caches are keyed on)."""
        bound = self._bind(args, kwargs)
        params = []
        for name, value in bound.arguments.items():
            if value is None:
                params.append((name, None))  # an absent argument: `x is None` in the kernel, as in Triton
            elif name in self.constexprs:
                try:
                    hash(value)
                except TypeError:
                    raise TypeError(f"{self.name}: constexpr {name}={value!r} must be hashable") from None
                params.append((name, value))
            elif isinstance(value, (bool, np.bool_)):
                raise TypeError(f"{self.name}: argument {name}={value!r}: a bool must be a tl.constexpr")
            elif isinstance(value, (int, np.integer)):
                # Triton's rule: an i32 where the number fits, else an i64, else a uint64 (a variant each)
                if not -(2**63) <= int(value) < 2**64:
                    raise ValueError(f"{self.name}: argument {name}={value} does not fit an i64 or a uint64 (make "
                                     "it a tl.constexpr, or pass it as an array)")
                kind = "i32" if -(2**31) <= int(value) < 2**31 else "i64" if int(value) < 2**63 else "u64"
                params.append((name, ONE if int(value) == 1 and name not in self.do_not_specialize else kind))
            elif isinstance(value, (float, np.floating)):
                params.append((name, "f32"))
            else:
                params.append((name, _array_spec(self.name, name, value)))
        warps = self.num_warps if num_warps is None else num_warps
        _check_warps(warps)
        types = tuple(type(bound.arguments[n]).__name__ for n in self.signature.parameters if n in self.constexprs)
        return Specialization(tuple(params), warps, types)

    # ---------------------------------------------------------------- building

    def ir(self, *args: Any, num_warps: int | None = None, **kwargs: Any) -> ModuleOp:
        """The tile-level module of the variant these arguments select (traced once, then cached; a copy is
        returned, so passes run on it leave the variant's own for later calls)."""
        return self._module(self.specialize(*args, num_warps=num_warps, **kwargs)).clone()

    def module_for(self, spec: Specialization, name: str | None = None) -> ModuleOp:
        """The module of an explicit specialisation (a kernel family that plans its own launches, as
        ``tilec.softmax`` does), its function named ``name`` (default: the Python function's)."""
        names = [n for n, _ in spec.params]
        if names != list(self.signature.parameters):
            raise ValueError(f"{self.name}: a specialisation of {names}, expected one of each parameter "
                             f"{list(self.signature.parameters)} in order")
        return self._module(spec, name).clone()  # a copy: the cached one stays as traced

    def _module(self, spec: Specialization, name: str | None = None) -> ModuleOp:
        with self._lock:
            module = self._modules.get((spec, name))
            if module is None:
                module = self._modules[(spec, name)] = self._build(spec, name or self.name)
            return module

    def _build(self, spec: Specialization, kernel_name: str) -> ModuleOp:
        if self._traced_fn is None:
            self._traced_fn = rewrite(self.fn, (lang_range,))
        arg_types, align = [], []
        for name, kind in spec.params:
            if isinstance(kind, ArraySpec):
                arg_types.append(GlobalType(dtypes.array_element(kind.dtype), [DYNAMIC] * kind.rank))
                align.append(kind.align)
            elif kind in ("i32", "i64", "u64", "f32", ONE) and name not in self.constexprs:
                arg_types.append({"i32": IntegerType(32), ONE: IntegerType(32), "i64": IntegerType(64),
                                  "u64": IntegerType(64), "f32": Float32Type()}[kind])
                align.append(0)
        entry = Block(arg_types=arg_types)
        values: dict[str, Any] = {}
        args = iter(entry.args)
        trace = Trace(entry, 32 * spec.num_warps)
        for name, kind in spec.params:
            if name in self.constexprs or kind is None:
                values[name] = kind
                continue
            arg = next(args)
            arg.name_hint = name
            if kind == ONE:  # passed (the launch is the same) but read as the constant
                values[name] = Scalar(trace.constant(1, IntegerType(32)))
                continue
            if isinstance(kind, ArraySpec):
                mark_array(trace, arg, kind.dtype)
            if kind == "u64":  # past 2^63: a uint64, passed as the i64 of its bits (_as_passed)
                trace.unsigned.add(arg)
            values[name] = View(arg, name, kind.unit_dim) if isinstance(kind, ArraySpec) else Scalar(arg)
        with tracing(trace):
            try:
                result = self._traced_fn(**values)
            except (TypeError, AttributeError) as e:  # a call in the user's line with arguments the function
                located = located_type_error(e)  # does not take, or an attribute its value does not have
                if located is None:
                    raise
                raise located from None
            if result is not None:
                raise LangError(f"{_return_position(self.fn)}{self.name}: a kernel returns nothing (it stores its "
                                f"results); it returned {type(result).__name__}")
            trace.emit(func.ReturnOp())
        arg_attrs = None
        if any(align):
            arg_attrs = ArrayAttr([DictionaryAttr({ALIGNED_ROWS_ATTR: IntegerAttr(a, 64)} if a else {}) for a in align])
        fn = func.FuncOp(kernel_name, (arg_types, []), Region(entry), arg_attrs=arg_attrs)
        remove_dead_ops(fn.body)
        smem = sum(op.result.type.size_bytes for op in fn.walk() if isinstance(op, AllocOp))
        fn.attributes[LAUNCH_ATTR] = LaunchAttr([DYNAMIC] * 3, [32 * spec.num_warps, 1, 1], smem, self.cluster)
        module = ModuleOp([fn])
        try:
            module.verify()
        except (VerifyException, DiagnosticException) as e:
            raise LangError(_located(e, module)) from None
        return module

    # ---------------------------------------------------------------- compiling, running

    def compile(self, *args: Any, arch: str | None = None, num_warps: int | None = None,
                num_stages: int | None = None, bulk: bool | None = None, pipeline: str | None = None,
                **kwargs: Any) -> Any:
        """The :class:`~tilec.api.CompiledKernel` of the variant (no GPU needed with an ``arch``; without
        one, the GPU's, ``sm_90a`` on an sm_90 GPU: :func:`default_lang_arch`). An integer argument given as
        1 is the constant 1 in it (see :func:`kernel`): launched by hand, pass 1 there again (``kernel[grid]``
        picks the variant for you).

        ``num_stages``: the shared buffers of a ``tl.range`` loop's copies become that many
        stages of asynchronous copies (``tile-pipeline{stages=N}``, Triton's ``num_stages``);
        ``bulk``: those copies are sm_90's bulk tensor copies (TMA) with transaction barriers
        (``tile-pipeline{bulk=true}``); ``pipeline``: the passes, in ``tile-opt -p`` syntax
        (default: the block-level pipeline).
        """
        # lazy: tilec.api adds ~80 ms to importing tilec.lang (measured); tracing does not need it
        from tilec.api import CompilationError
        from tilec.api import compile as tilec_compile

        arch = arch or default_lang_arch()
        kwargs = self._stages_parameter(kwargs, num_stages)
        pipeline = self._pipeline(num_stages, bulk, pipeline, arch)
        spec = self.specialize(*args, num_warps=num_warps, **kwargs)
        key = (spec, arch, pipeline)
        with self._lock:
            compiled = self._compiled.get(key)
        if compiled is None:
            try:
                compiled = tilec_compile(self._module(spec), arch=arch, pipeline=pipeline)
            except CompilationError as e:
                raise CompilationError(_at_python_line(str(e), self.name), e.stage) from None
            with self._lock:
                self._compiled[key] = compiled
        return compiled

    def _stages_parameter(self, kwargs: dict[str, Any], num_stages: int | None) -> dict[str, Any]:
        """``kwargs`` with ``num_stages`` for a kernel parameter of that name too: Triton gives the compile
        option to the kernel's ``num_stages: tl.constexpr`` as well (its fused-softmax tutorial reads it
        in ``tl.range(..., num_stages=num_stages)``)."""
        if num_stages is not None and "num_stages" in self.signature.parameters and "num_stages" not in kwargs:
            return {**kwargs, "num_stages": num_stages}
        return kwargs

    def _pipeline(self, num_stages: int | None, bulk: bool | None, pipeline: str | None,
                  arch: str | None = None) -> str | None:
        """The pass pipeline of a compile with these options (None: chosen by the IR's level). For
        ``sm_90a``, ``tile-stage`` makes a block's ``tl.dot`` of staged tiles warpgroup MMAs."""
        # lazy: tilec.api adds ~80 ms to importing tilec.lang (measured); tracing does not need it
        from tilec.api import BLOCK_LEVEL_PIPELINE

        num_stages = self.num_stages if num_stages is None else num_stages
        bulk = self.bulk if bulk is None else bulk
        if (num_stages is not None or bulk) and pipeline is not None:
            raise ValueError(f"{self.name}: give num_stages/bulk or pipeline, not both")
        if pipeline is not None:
            return pipeline
        passes = BLOCK_LEVEL_PIPELINE
        if arch == "sm_90a":
            passes = passes.replace("tile-stage", "tile-stage{wgmma=true}")
        elif num_stages is None and not bulk:
            return None
        options = []
        if num_stages is not None:
            if not isinstance(num_stages, int) or isinstance(num_stages, bool) or num_stages < 1:
                raise ValueError(f"{self.name}: num_stages must be a positive int, got {num_stages!r}")
            options.append(f"stages={num_stages}")
        stores = ""
        if bulk and arch is not None and not arch.startswith(("sm_9", "sm_1")):
            raise ValueError(f"{self.name}: bulk=True makes the loops' copies sm_90's bulk tensor copies (TMA), "
                             f"which {arch} does not have: compile for arch='sm_90a', or without bulk")
        if bulk:
            options.append("bulk=true")
            if self.producer:
                options.append("producer=true")
            if self.bulk_store:
                stores = ",tile-bulk-store"
        if options:
            passes = passes.replace("tile-pipeline", f"tile-pipeline{{{' '.join(options)}}}")
        return passes.replace("tile-layout", f"tile-layout{stores}")

    def interpret(self, *args: Any, grid: Any, num_warps: int | None = None, after: str | None = None,
                  num_stages: int | None = None, bulk: bool | None = None, pipeline: str | None = None,
                  arch: str | None = None, **kwargs: Any) -> None:
        """Run the variant on the CPU interpreter: numpy arrays in and out (written in place; a strided
        view as itself, its strides the kernel's, as the launcher copies a host view with its strides).

        ``after``: a pass of the kernel's pipeline (``tile-layout``, ``tile-distribute`` ...): the
        IR that pass leaves is what runs (fragment-level IR lane by lane), so a pass can be checked
        on the user's own kernel, as Triton's interpreter cannot. ``arch``: the passes a compile for
        it runs (``sm_90a``: warpgroup MMAs).
        """
        # lazy: the interpreter adds ~280 ms (measured), for tests and debugging only
        from tilec.interp import run

        def as_stored(value: Any) -> Any:  # unsigned and bool arrays as the IR's signless integers hold them
            if isinstance(value, np.ndarray) and (value.dtype.kind == "u" or value.dtype == np.bool_):
                return value.view(np.int8 if value.dtype == np.bool_ else value.dtype.str.replace("u", "i"))
            return value

        kwargs = self._stages_parameter(kwargs, num_stages)
        spec = self.specialize(*args, num_warps=num_warps, **kwargs)
        bound = self._bind(args, kwargs)
        held = _HeldAsFloat32()
        runtime = [_as_passed(as_stored(held.values(v))) for n, v in bound.arguments.items()
                   if n not in self.constexprs and v is not None]
        module = self._module(spec)
        asm = next((op for op in module.walk() if isinstance(op, InlineAsmOp)), None)
        if asm is not None:
            raise LangError(f"{self.name}: tl.inline_asm_elementwise runs PTX ({asm.asm_string.data!r}), which the CPU "
                            "interpreters cannot: launch the kernel on the GPU")
        if after is not None:
            module = self._lowered(module, self._pipeline(num_stages, bulk, pipeline, arch), after)
            fn = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
            if any(isinstance(t, LLVMPointerType) for t in fn.function_type.inputs.data):
                # lazy: the runtime's argument expansion (~50 ms, measured), for lowered kernels only
                from tilec.dialects.abi import gl_params
                from tilec.runtime.gl_views import expand

                runtime = expand(gl_params(fn), *runtime, signature_length=len(fn.function_type.inputs.data))
        run(module, self.name, *runtime, grid=grid)
        held.write_back()  # FP8 values into their arrays

    def _lowered(self, module: ModuleOp, pipeline: str | None, after: str) -> ModuleOp:
        """A copy of ``module`` after the passes of ``pipeline`` up to and including ``after``."""
        # lazy: tilec.api and the passes add ~80 ms (measured); interpreting at tile level needs none of them
        from tilec.api import BLOCK_LEVEL_PIPELINE, CompilationError, _diagnostic
        from tilec.dialects.context import make_context
        from tilec.passes.registry import build_pipeline

        passes = list(build_pipeline(pipeline or BLOCK_LEVEL_PIPELINE).passes)
        names = [p.name for p in passes]
        if after not in names or after == "tile-to-llvm":
            runnable = ", ".join(n for n in names if n != "tile-to-llvm")
            raise ValueError(f"{self.name}: after={after!r}: the interpreter runs the IR after one of {runnable} "
                             "(tile-to-llvm's llvm dialect is the GPU's)")
        lowered = module.clone()
        ctx = make_context()
        for p in passes[: names.index(after) + 1]:
            try:
                p.apply(ctx, lowered)
            except DiagnosticException as e:  # as compile() reports it: at the user's line
                raise CompilationError(_at_python_line(_diagnostic(e, "<module>", ""), self.name), "pipeline") from None
        return lowered

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        """``kernel[grid](*args, **constexprs)``: compile the variant for this GPU (once) and launch it
        (``num_warps``, ``num_stages``, ``arch`` and ``pipeline`` as :meth:`compile` takes them).

        A call whose torch tensors have the kinds (shape, strides, dtype, device) of an earlier
        call's, with the same grid, numbers and constexprs, replays that call's prepared launch
        (:mod:`tilec.kernels.fast_path`): only the addresses and the stream are new.
        """
        g = (grid,) if isinstance(grid, int) else tuple(grid)
        if not 1 <= len(g) <= 3:
            raise ValueError(f"{self.name}: grid must be 1 to 3 block counts, got {grid!r}")
        g = g + (1,) * (3 - len(g))

        def launch(*args: Any, num_warps: int | None = None, num_stages: int | None = None, stream: Any = None,
                   arch: str | None = None, pipeline: str | None = None, **kwargs: Any) -> None:
            key = _call_key(g, (num_warps, num_stages, arch, pipeline), args, kwargs)
            fast = self._fast.get(key) if key is not None else None
            if fast is not None:
                call, where = fast
                pointers = tuple((args[i] if i >= 0 else kwargs[n]).data_ptr() for i, n in where)
                if call.launch(pointers, stream):
                    return
            self._launch_checked(g, args, kwargs, num_warps, num_stages, arch, stream, key, pipeline)

        return launch

    def _launch_checked(self, grid: tuple, args: tuple, kwargs: dict, num_warps: int | None,
                        num_stages: int | None, arch: str | None, stream: Any, key: tuple | None,
                        pipeline: str | None = None) -> None:
        # lazy: the launch path adds ~50 ms (measured) that compiling does not need
        from tilec.kernels.fast_path import prepare
        from tilec.runtime.arrays import is_torch_tensor
        from tilec.runtime.gl_views import expand

        kwargs = self._stages_parameter(kwargs, num_stages)
        compiled = self.compile(*args, num_warps=num_warps, num_stages=num_stages, arch=arch, pipeline=pipeline, **kwargs)
        bound = self._bind(args, kwargs)
        runtime = [_as_passed(v) for n, v in bound.arguments.items() if n not in self.constexprs and v is not None]
        flat = expand(compiled, *runtime)
        compiled(*flat, grid=grid, stream=stream)
        if key is None:
            return
        arrays = [(n, v) for n, v in bound.arguments.items() if n not in self.constexprs
                  and v is not None and not isinstance(v, (int, float))]
        if not arrays or not all(is_torch_tensor(v) for _, v in arrays):
            return
        names = list(self.signature.parameters)
        where = tuple((names.index(n), n) if names.index(n) < len(args) else (-1, n) for n, _ in arrays)
        try:
            call = prepare(compiled, flat, grid, [n for n, _ in arrays], [v.data_ptr() for _, v in arrays],
                           arrays[0][1].device, None)
        except Exception:  # launched; without a prepared call the next one is checked again
            return
        if call is not None:
            if len(self._fast) >= FAST_LIMIT:
                self._fast.clear()
            self._fast[key] = (call, where)


def _as_passed(value: Any) -> Any:
    """An argument as the kernel takes it: a Python int past 2^63 (a uint64 parameter) as the i64 of its bits."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and int(value) >= 2**63:
        return int(value) - 2**64
    return value


def _return_position(fn: Callable[..., Any]) -> str:
    """``file:line:col: error: `` of the first ``return`` with a value in ``fn``'s own body ('' if its source
    is not at hand)."""
    try:
        lines, start = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn)
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError):
        return ""
    indent = len(lines[0]) - len(lines[0].lstrip())
    todo = list(tree.body[0].body) if tree.body and isinstance(tree.body[0], ast.FunctionDef) else []
    found = []
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            found.append((node.lineno, node.col_offset))
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    if not found:
        return ""
    line, col = min(found)
    return f"{file}:{start + line - 1}:{col + indent + 1}: error: "


def default_lang_arch() -> str | None:
    """The target of a kernel compiled or launched without ``arch``: ``sm_90a`` on an sm_90 GPU (a block's
    ``tl.dot`` of staged tiles becomes warpgroup MMAs there, as Triton's does), else None (the compiler's
    default: the GPU's architecture, or sm_80 without one). Code compiled on a machine runs on its GPU,
    so the architecture-specific target is the right default there."""
    # lazy: tilec.runtime adds ~14 ms to importing tilec.lang (measured); compiling for an arch needs none
    from tilec.runtime import get_device, has_device

    return "sm_90a" if has_device() and get_device(0).compute_capability == (9, 0) else None


FAST_LIMIT = 1024
"""Prepared launches a kernel keeps (emptied when full)."""


def _call_key(grid: tuple, num_warps: Any, args: tuple, kwargs: dict) -> tuple | None:
    """What a launch's plan depends on, minus the tensors' addresses; None when an argument is not a
    torch tensor or a plain number/string (those calls take the checked path)."""
    # lazy: the fast path adds ~40 ms (measured) to importing tilec.lang; a no-op after the first launch
    from tilec.kernels.fast_path import tensor_key

    parts = []
    for name, value in (*enumerate(args), *kwargs.items()):
        if type(value) in (int, float, bool, str, type(None)):
            parts.append((name, type(value), value))
            continue
        k = tensor_key(value)
        if k is None:
            return None
        parts.append((name, k))
    return (grid, num_warps, tuple(parts))


def _check_warps(num_warps: Any) -> None:
    if not isinstance(num_warps, int) or isinstance(num_warps, bool) or not 1 <= num_warps <= MAX_WARPS:
        raise ValueError(f"num_warps must be an int from 1 to {MAX_WARPS}, got {num_warps!r}")


class _HeldAsFloat32:
    """``ml_dtypes``' FP8 (and bf16) numpy arrays as the interpreters hold those types: float32 copies of
    their values, one for each array (an array passed twice, in place, is one copy), written back after the
    run where the kernel changed a value's bits (-0.0 over 0.0 too; an array only read is left as it is,
    read-only ones included). A strided view's copy is a view of the same strides over a float32 copy of the
    memory the view spans, so strides given to the kernel read what they name."""

    NAMES = ("float8_e4m3fn", "float8_e5m2", "bfloat16")

    def __init__(self) -> None:
        self.copies: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def values(self, value: Any) -> Any:
        if not (isinstance(value, np.ndarray) and value.dtype.name in self.NAMES):
            return value
        for array, copy, _, _ in self.copies:
            if array is value or (array.__array_interface__ == value.__array_interface__):
                return copy
        item = value.itemsize
        steps = [s // item for s in value.strides]
        if value.size == 0 or any(s < 0 for s in steps):  # nothing to span (negative strides are refused later)
            span = value.reshape(-1) if value.size == 0 else np.ascontiguousarray(value).reshape(-1)
            flat = span.astype(np.float32)
            copy = flat.reshape(value.shape)
        else:  # the span through the bytes' unsigned view (numpy's as_strided does not take ml_dtypes' types)
            length = 1 + sum((n - 1) * s for n, s in zip(value.shape, steps))
            raw = value.view(np.uint8 if item == 1 else np.uint16)
            span = np.lib.stride_tricks.as_strided(raw, shape=(length,), strides=(item,)).view(value.dtype)
            flat = span.astype(np.float32)
            copy = np.ndarray(value.shape, np.float32, buffer=flat, strides=tuple(4 * s for s in steps))
        self.copies.append((value, copy, span, flat))
        return copy

    def write_back(self) -> None:
        for array, _, span, flat in self.copies:
            changed = flat.view(np.uint32) != span.astype(np.float32).view(np.uint32)
            if changed.any():
                if np.shares_memory(span, array):
                    span[changed] = flat[changed].astype(array.dtype)
                else:  # a contiguous copy of a view of negative strides: written back through the view
                    array[...] = flat.reshape(array.shape).astype(array.dtype)


def _array_spec(kernel: str, name: str, value: Any) -> ArraySpec:
    # lazy: tilec.kernels.gemm_plan adds ~90 ms (measured) to importing tilec.lang
    from tilec.kernels.gemm_plan import KernelView, describe_operand, row_alignment, staged_row_alignment

    op = describe_operand(name, value, kernel)
    if op.dtype not in dtypes.ARRAY_DTYPES:
        raise TypeError(f"{kernel}: {name} has dtype {op.dtype}; expected one of {', '.join(dtypes.ARRAY_DTYPES)}")
    shape = tuple(op.info.shape)
    if not 1 <= len(shape) <= MAX_RANK:
        raise ValueError(f"{kernel}: {name} has shape {shape}; kernels take 1-D to {MAX_RANK}-D arrays (windows are "
                         "1-D or 2-D: index the leading dimensions, x[b, h])")
    align = 0
    strides = tuple(op.strides)
    if len(shape) >= 2 and all(shape):
        # a host array is copied by the launcher from its first element into fresh device memory, its strides
        # kept (a transposed view stays one): its rows are aligned as their length and strides allow
        align = staged_row_alignment(shape, strides, op.info.itemsize) if op.on_host else \
            row_alignment(KernelView(op, shape, strides))
    units = [d for d, (n, s) in enumerate(zip(shape, strides)) if n > 1 and s == 1]
    unit_dim = units[-1] if len(units) == 1 else None
    return ArraySpec(op.dtype, len(shape), align, unit_dim)


def _located(e: Exception, module: ModuleOp) -> str:
    """A verifier error as ``file:line:col: error: ...`` at the Python line of the op that fails."""
    failing = None
    for op in module.walk():  # the first op (in order) whose own verifier fails: the one xDSL reported
        try:
            op.verify(verify_nested_ops=False)
        except (VerifyException, DiagnosticException):
            failing = op
            break
    where = location_text(failing) if failing is not None else None
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    text = " ".join(lines[:2])  # xDSL puts the reason of a constraint on its second line
    return f"{where}: error: {text}" if where else text


_OP_AT = re.compile(r"^<module>: error: (?P<pass>[\w-]+: )?(?P<op>'[\w.]+') at (?P<where>[^\n]+?:\d+:\d+): ")


def _at_python_line(message: str, kernel_name: str) -> str:
    """A pass's diagnostic on the kernel's module, led by the Python line of the op it names
    (``file.py:L:C: error: tile-distribute: 'tile.wgmma': ...``), and naming the kernel."""
    lines = message.splitlines()
    m = _OP_AT.match(lines[0]) if lines else None
    if m is None:
        return message.replace("<module>", f"@tl.kernel {kernel_name}")
    first = f"{m['where']}: error: {m['pass'] or ''}{m['op']}: {lines[0][m.end():]}"
    notes = [line.replace("<module>", f"@tl.kernel {kernel_name}") for line in lines[1:]]
    return "\n".join([first, *notes])


def kernel(fn: Callable[..., Any] | None = None, *, num_warps: int = 4, num_stages: int | None = None,
           bulk: bool = False, producer: bool = False, bulk_store: bool = False, cluster: Any = 1,
           do_not_specialize: Sequence[str | int] = ()) -> Any:
    """``@tl.kernel`` or ``@tl.kernel(num_warps=8, num_stages=4)`` on a Python function: a :class:`Kernel`
    (the options are the compile defaults; ``compile``/``kernel[grid]`` take them per call too).
    ``producer=True`` (with ``bulk=True``): one more warpgroup, after the ``num_warps`` warps, issues
    the ``tl.range`` loops' bulk copies ahead of them (warp specialisation, ``setmaxnreg``).
    ``bulk_store=True`` (with ``bulk=True``): each warp's ``tl.store`` of its own register tile to a
    view with 16-byte aligned rows goes through shared memory and a bulk tensor store
    (``tile-bulk-store``). ``cluster=2`` (or ``(x, y, z)``, sm_90): the grid runs in thread-block
    clusters of that many consecutive blocks (``tl.cluster_id``, ``tl.block_rank``,
    ``tl.cluster_barrier``); with ``bulk=True``, a ``tl.range`` loop's copies of a window that is the
    same in every block of the cluster are multicast (each block loads its share for all).

    An integer argument equal to 1 gets a variant of its own in which it is the constant 1 (Triton's
    specialisation: a stride of 1 makes ``x_ptr + offs * stride`` contiguous, so its accesses move as
    vectors); ``do_not_specialize`` names (or positions) the arguments that keep one variant for every
    value, as Triton's option does."""
    options = dict(num_warps=num_warps, num_stages=num_stages, bulk=bulk, producer=producer, bulk_store=bulk_store,
                   cluster=cluster, do_not_specialize=do_not_specialize)
    if fn is None:
        return lambda f: Kernel(f, **options)
    return Kernel(fn, **options)
