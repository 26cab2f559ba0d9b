"""The GEMM's part in autotuning: a matmul problem's key, candidates, and how to check and time one.

:func:`tilec.autotune` (:func:`tilec.kernels.gemm.autotune`) hands the
shared tuner (:mod:`tilec.kernels.autotune`) a :class:`~tilec.kernels.autotune.Problem`
made here from a checked call (a :class:`~tilec.kernels.gemm_plan.MatmulPlan`):

1. **Checks** as :func:`tilec.matmul` does them (:func:`~tilec.kernels.gemm_plan.plan_matmul`).
2. **Key** (:class:`TuneKey`): the GPU's name, input and output dtypes, how A
   and B are given (``row``/``col``/``strided``, which fixes the kernel's
   transposes), the epilogue (bias dtype, activation), the math (``mma``,
   ``tf32``, ``simt``), M, N, K and the row alignments the kernel is
   specialised for. A key already tuned in this process (memory) or stored
   on disk (``<cache dir>/autotune/matmul.json``) is answered without timing.
3. **Candidates** (:func:`candidates_for`): the set of the math's kind
   (:func:`tilec.kernels.gemm_config.candidates`), without those whose shared
   memory the GPU cannot give a block or whose block is larger than the
   problem needs; the heuristic's choice always comes first (so it wins ties).
4. **Per candidate** (:func:`gpu_measure`, a :class:`~tilec.kernels.autotune.GpuMeasure`):
   compile (a candidate that does not compile, or whose registers spill, is
   skipped with a note); run once into an output poisoned with NaN and
   compare with the heuristic configuration's result (itself checked against
   float64 on a few rows, :func:`reference_error`); then time it: CUDA
   events (torch's for torch inputs, else the driver's), the median of
   ``reps`` repetitions after ``warmup`` launches.
5. **Store** the fastest in memory and in the file.

A stored record is used only if its config is valid for the problem (right
kind of math, shared memory that fits: :func:`stored_config`).

Nothing here imports :mod:`tilec.kernels.gemm`: the call that runs a config
and the compile come in as functions, so that ``tilec.matmul(...,
autotune=True)`` can tune without an import circle.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tilec.api import default_arch
from tilec.kernels.autotune import AutotuneError, GpuMeasure, Problem, Timer, copy, fill_nan, float64, rel_error
from tilec.kernels.autotune import winners_path as _winners_path
from tilec.kernels.autotune import driver_event_timer, torch_event_timer
from tilec.kernels.gemm_config import (
    MatmulConfig,
    SplitConfig,
    candidates,
    check_config,
    config_from_json,
    config_kind,
    does_math,
    config_to_json,
    has_bulk_copies,
    math_kind,
    shared_memory_bytes,
)
from tilec.kernels.gemm_ir import ACTIVATIONS, ITEMSIZE, SHORT
from tilec.kernels.splitk import MAX_SPLIT
from tilec.runtime import get_device, has_device
from tilec.runtime.arrays import is_torch_tensor

FAMILY = "matmul"
"""The winners file: ``<cache dir>/autotune/matmul.json``."""


@dataclass(frozen=True)
class TuneKey:
    """What a tuned winner is valid for."""

    gpu: str
    dtype: str
    out_dtype: str
    layouts: str
    """``row/col`` etc.: how A and B are given, which fixes the kernel's transposes."""
    epilogue: str
    """``none``, ``relu``, ``bias_f16``, ``bias_f32_relu``, ..."""
    math: str
    m: int
    n: int
    k: int
    rows: str = "any"
    """The row alignments the kernel is specialised for (:attr:`tilec.kernels.gemm_ir.MatmulSpec.rows`):
    configs need them (bulk copies and the warpgroup MMA 16-byte rows)."""
    splits: bool = False
    """Whether split-K candidates were timed (torch tensors on torch's current stream: where a split runs)."""

    @property
    def text(self) -> str:
        """The key of the record in the file."""
        return "|".join([self.gpu, self.dtype, self.out_dtype, self.layouts, self.epilogue, self.math,
                         f"{self.m}x{self.n}x{self.k}", self.rows] + (["split-k"] if self.splits else []))

    def fields(self) -> dict[str, Any]:
        fields = {"gpu": self.gpu, "dtype": self.dtype, "out_dtype": self.out_dtype, "layouts": self.layouts,
                  "epilogue": self.epilogue, "math": self.math, "m": self.m, "n": self.n, "k": self.k,
                  "rows": self.rows}
        return {**fields, "splits": True} if self.splits else fields


def tune_key(plan: Any, gpu: str, allow_tf32: bool, splits: bool = False) -> TuneKey:
    """The :class:`TuneKey` of a checked call (a :class:`~tilec.kernels.gemm_plan.MatmulPlan`) on the GPU ``gpu``;
    ``splits``: split-K candidates are timed too."""
    spec = plan.spec
    parts = [] if spec.bias_dtype is None else [f"bias_{SHORT[spec.bias_dtype]}"]
    if spec.activation is not None:
        parts.append(spec.activation)
    return TuneKey(gpu, spec.dtype, spec.out_dtype, plan.layouts, "_".join(parts) or "none",
                   math_kind(spec.dtype, allow_tf32), plan.m, plan.n, plan.k, spec.rows, splits)


SPLIT_TUNE_MIN_K_BYTES = 1024
"""A split candidate's slices keep at least this many bytes of K a row (512 f16: several K tiles)."""


def split_factors(plan: Any, sms: int) -> list[int]:
    """The slices of K worth timing for an unsplit plan: where its tiles leave SMs idle, each S from 2 to
    :data:`~tilec.kernels.splitk.MAX_SPLIT` whose slices are whole 16-byte rows of at least
    :data:`SPLIT_TUNE_MIN_K_BYTES` (a wider net than :func:`~tilec.kernels.splitk.choose_split`'s rule)."""
    size = ITEMSIZE[plan.spec.dtype]
    if plan.config.tiles(plan.m, plan.n) >= sms:
        return []
    return [s for s in range(2, MAX_SPLIT + 1)
            if plan.k % s == 0 and plan.k // s * size % 16 == 0 and plan.k // s * size >= SPLIT_TUNE_MIN_K_BYTES]


def gpu_name() -> str:
    """The name of GPU 0 (``no-gpu`` without one, for tuning with ``measure=``)."""
    return get_device(0).name if has_device() else "no-gpu"


def winners_path():
    """``<cache dir>/autotune/matmul.json`` (the cache dir follows ``$TILEC_CACHE_DIR`` at each call)."""
    return _winners_path(FAMILY)


def candidates_for(plan: Any, allow_tf32: bool, smem_limit: int,
                   splits: tuple[Sequence[SplitConfig], SplitConfig | None] = ((), None)
                   ) -> list[MatmulConfig | SplitConfig]:
    """:func:`~tilec.kernels.gemm_config.candidates` for a checked (unsplit) call and the ``splits``
    (candidates, the heuristic's if it splits); the heuristic's choice first."""
    arch = default_arch()
    bulk = plan.spec.aligned and has_bulk_copies(arch)
    wgmma = arch in ("sm_90", "sm_90a") and not plan.spec.transpose_a
    found = candidates(plan.spec.dtype, plan.m, plan.n, plan.k, allow_tf32=allow_tf32, smem_limit=smem_limit,
                       bulk=bulk, wgmma=wgmma)
    split_found, split_first = splits
    first = split_first if split_first is not None else plan.config
    return [first, *dict.fromkeys(c for c in [plan.config, *found, *split_found] if c != first)]


def checked_candidates(configs: Sequence[MatmulConfig | SplitConfig], plan: Any, allow_tf32: bool,
                       splits: bool = False) -> list[MatmulConfig | SplitConfig]:
    """Configs the caller gave, each checked against the problem's math and, for a
    :class:`SplitConfig`, against K and whether this call can split (``splits``) (ValueError/TypeError)."""
    configs = list(configs)
    if not configs:
        raise ValueError("tilec.autotune: candidates is empty")
    kind = math_kind(plan.spec.dtype, allow_tf32)
    size = ITEMSIZE[plan.spec.dtype]
    for c in configs:
        if isinstance(c, SplitConfig):
            if not splits:
                raise ValueError(f"tilec.autotune: candidate {c.describe()} splits K, which runs on torch tensors "
                                 "on torch's current stream (and allow_split=True) only")
            if plan.k % c.split_k or plan.k // c.split_k * size % 16:
                raise ValueError(f"tilec.autotune: candidate {c.describe()}: K = {plan.k} does not divide into "
                                 f"{c.split_k} slices of whole 16-byte rows")
            c = c.config
        check_config(c, plan.spec.dtype, allow_tf32, transpose_a=plan.spec.transpose_a)
        if not does_math(c, kind):
            raise ValueError(f"tilec.autotune: candidate {c.describe()} does {config_kind(c)} math, but the "
                             f"problem does {kind} ({plan.spec.dtype} inputs, allow_tf32={allow_tf32})")
    return configs


def stored_config(data: Any, key: TuneKey, allow_tf32: bool, smem_limit: int) -> MatmulConfig | SplitConfig:
    """The config of a stored record if it is usable for ``key``; ValueError/TypeError if not."""
    stored = config_from_json(data)
    if isinstance(stored, SplitConfig):
        s, size = stored.split_k, ITEMSIZE[key.dtype]
        if not key.splits or key.k % s or key.k // s * size % 16:
            raise ValueError(f"{stored.describe()} is not a split of K = {key.k} this call can run")
        config = stored.config
    else:
        config = stored
    check_config(config, key.dtype, allow_tf32)
    if not does_math(config, key.math):
        raise ValueError(f"a {config_kind(config)} config for a {key.math} problem")
    if shared_memory_bytes(config, key.dtype) > smem_limit:
        raise ValueError(f"{config.describe()} needs more shared memory than the GPU gives")
    return stored


def problem(plan: Any, key: TuneKey, *, allow_tf32: bool, smem_limit: int,
            configs: Sequence[MatmulConfig] | None, measure: Callable[[], Callable[[MatmulConfig], float]],
            splits: Callable[[], tuple[Sequence[SplitConfig], SplitConfig | None]] = lambda: ((), None)
            ) -> Problem[MatmulConfig | SplitConfig]:
    """The shared tuner's :class:`~tilec.kernels.autotune.Problem` for a checked call.

    ``configs``: the candidates (None: :func:`candidates_for`, with ``splits()``'s); ``measure``:
    makes ``config -> seconds`` when the problem is timed (e.g. :func:`gpu_measure`).
    """
    return Problem(
        family=FAMILY,
        key=key,
        candidates=(lambda: configs) if configs is not None else
        (lambda: candidates_for(plan, allow_tf32, smem_limit, splits())),
        measure=measure,
        to_json=config_to_json,
        from_json=lambda data: stored_config(data, key, allow_tf32, smem_limit),
        title=f"tilec.autotune {plan.m}x{plan.n}x{plan.k} {SHORT[plan.spec.dtype]} {plan.layouts}",
        describe=lambda c: c.describe(),
    )


# ---------------------------------------------------------------- checking and timing on the GPU


def reference_error(result: Any, a: Any, b: Any, *, trans_a: bool = False, trans_b: bool = False, bias: Any = None,
                    activation: str | None = None, rows: int = 8, scale_a: Any = None, scale_b: Any = None) -> float:
    """Relative error of ``result`` against float64 on its first and last ``rows`` rows (torch/cupy/numpy)."""
    opa = a.T if trans_a else a
    opb = float64(b.T if trans_b else b)
    m = opa.shape[0]
    errors = []
    for lo, hi in sorted({(0, min(rows, m)), (max(0, m - rows), m)}):
        ref = float64(opa[lo:hi]) @ opb
        for scale in (scale_a, scale_b):
            if scale is not None:
                ref = ref * float64(scale).reshape(())
        if bias is not None:
            ref = ref + float64(bias)
        if activation is not None:
            ref = reference_activation(activation, ref)
        errors.append(rel_error(result[lo:hi], ref))
    return math.nan if any(math.isnan(e) for e in errors) else max(errors)


def reference_activation(name: str, x: Any) -> Any:
    """The epilogue's activation (:data:`~tilec.kernels.gemm_ir.ACTIVATIONS`) on a float64 array, as torch
    defines it."""
    if name == "relu":
        return x.clip(min=0)
    torch_like = is_torch_tensor(x)
    if not torch_like:
        x = np.asarray(x.get() if hasattr(x, "get") else x)  # cupy: on the host
    if name == "gelu":
        erf = (x / math.sqrt(2.0)).erf() if torch_like else np.vectorize(math.erf)(x / math.sqrt(2.0))
        return 0.5 * x * (1.0 + erf)
    if name == "silu":
        return x / (1.0 + ((-x).exp() if torch_like else np.exp(-x)))
    raise ValueError(f"activation {name!r}: expected one of {ACTIVATIONS}")


CHECK_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "float32": 1e-3}
"""Between two configurations' results (only the order of the f32 sums differs), by output dtype."""
REFERENCE_TOLERANCE = {"float16": 1e-2, "bfloat16": 2e-2, "simt": 1e-5, "tf32": 5e-3, "mma": 1e-4, "fp8": 5e-3}
"""Against float64: by output dtype for 16-bit outputs, else by the math (as tests/gpu/test_gemm.py). FP8's
wgmma chains accumulate in the tensor cores' own precision over all of K (as cuBLASLt's fast mode), not in f32:
2e-3 at K = 4096 measured with a bf16 output (bench/NOTES.md, session 17)."""


def gpu_measure(plan: Any, *, run: Callable[[MatmulConfig, Any], Any], compile: Callable[[MatmulConfig], Any],
                out: Any, allow_tf32: bool, timer: Timer | None, warmup: int, reps: int, smem_limit: int,
                reference_args: dict[str, Any]) -> GpuMeasure[MatmulConfig]:
    """``config -> seconds`` on the GPU for a checked call.

    ``run(config, out)`` runs the user's matmul with ``config`` into ``out``;
    the reference is the heuristic configuration's result (run once, into a
    copy of ``out``), checked against float64 on a few rows first
    (:class:`~tilec.kernels.autotune.AutotuneError` if it is off).
    """
    reference = copy(out)
    fill_nan(reference)
    run(plan.config, reference)
    err = reference_error(reference, **reference_args)
    out_dtype = plan.spec.out_dtype
    tol = REFERENCE_TOLERANCE[out_dtype if out_dtype != "float32" else math_kind(plan.spec.dtype, allow_tf32)]
    if not err <= tol:
        raise AutotuneError(f"tilec.autotune: the heuristic configuration ({plan.config.describe()}) gives a "
                            f"relative error of {err:.2e} against float64 (tolerance {tol:.0e}); not tuning")
    if timer is None:
        timer = torch_event_timer if is_torch_tensor(reference_args["a"]) else driver_event_timer
    return GpuMeasure(compile=compile, run=run, out=out, reference=reference,
                      tolerance=CHECK_TOLERANCE[out_dtype], timer=timer, warmup=warmup, reps=reps,
                      smem_limit=smem_limit)


__all__ = [
    "CHECK_TOLERANCE",
    "FAMILY",
    "REFERENCE_TOLERANCE",
    "SPLIT_TUNE_MIN_K_BYTES",
    "TuneKey",
    "candidates_for",
    "checked_candidates",
    "gpu_measure",
    "gpu_name",
    "problem",
    "reference_error",
    "split_factors",
    "stored_config",
    "tune_key",
    "winners_path",
]
