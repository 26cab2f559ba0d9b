"""tilec.matmul on the GPU: the correctness matrix of the end-to-end GEMM.

    pytest tests/gpu/test_gemm.py -v -s                          # -s prints one table line per case
    TILEC_GEMM_REPORT=gemm.json pytest tests/gpu/test_gemm.py -s # and writes all rows as JSON

Cases (each a fresh ``torch.randn`` input on the GPU — never zeros — and an
output poisoned with NaN first, so an unwritten element fails):

- f16 and bf16 (mma.sync m16n8k16), f32 (SIMT FMA), tf32 (mma.sync m16n8k8,
  ``allow_tf32=True``); A and B each row- or column-major (column-major is
  ``x.T`` of a contiguous ``x``, which ``tilec.matmul`` hands over as a
  transpose, never copied); shapes 1x1x1, 17x33x65, 127x129x1000,
  1000x1000x1000 (all ragged against the 64x64 and 128x128 tiles);
- 4096^3 for f16 and bf16 (the large 128x128x32 configuration), row/row;
- the large configurations forced on the ragged 1000^3 (``config=``), and
  the sm_90 bulk-copy (TMA) configuration with every transpose of A and B, the persistent
  warpgroup-MMA kernels with thread-block clusters of 2 and 4 along M (B's tiles multicast) and
  of 2 along N (A's);
- rows of every alignment: 16 bytes (1000^3), 8 and 4 (130x132x1002), 2
  (17x33x65): ``tilec.matmul`` compiles a kernel per alignment of each
  operand's rows;
- non-contiguous strided views (``x[:, ::2]``) for A and for B, a strided
  output (the elements between must stay NaN);
- bias + ReLU per dtype, f16 in with f32 bias and f32 out, the output
  allocated by tilec.matmul, numpy inputs (copied in and out).

Each result is compared with a float64 reference computed by torch on the
GPU from the same (rounded) inputs: relative error ||C - ref|| / ||ref||,
with tolerances per output type (f16/bf16 outputs 1e-2, f32 output of
16-bit inputs 1e-4, tf32 5e-3, f32 SIMT 1e-5). The first case of each
kernel includes its compile (a few seconds), shown in the ``s`` column.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, replace
from itertools import product

import numpy as np
import pytest

import tilec
import tilec.kernels.gemm as gemm
from tilec.kernels.gemm_config import (BULK_CONFIG, CONFIGS, MID_WGMMA_CONFIG, THIN_WGMMA_CONFIGS, WGMMA_CONFIG,
                                      has_bulk_copies)
from tilec.runtime import has_device, no_device_reason

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}"),
]

TOLERANCE = {  # (case dtype, output dtype) -> max relative error
    ("f16", "float16"): 1e-2,
    ("bf16", "bfloat16"): 1e-2,
    ("f16", "float32"): 1e-4,
    ("bf16", "float32"): 1e-4,
    ("tf32", "float32"): 5e-3,
    ("f32", "float32"): 1e-5,
}
INPUT = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "tf32": "float32"}


@dataclass(frozen=True)
class Case:
    dtype: str  # f16, bf16, f32 (SIMT), tf32
    shape: tuple[int, int, int]
    a: str = "row"  # row, col (x.T of a contiguous x), strided (x[:, ::2])
    b: str = "row"
    bias: str | None = None  # dtype of the bias, or None
    activation: str | None = None  # relu, gelu, silu
    out_dtype: str | None = None
    out: str = "poisoned"  # poisoned (NaN-filled out=), strided (every other column of a NaN array), alloc
    config: tuple[str, str] | None = None  # force a CONFIGS entry
    numpy: bool = False  # numpy inputs and output (copied to the GPU and back)

    @property
    def id(self) -> str:
        m, n, k = self.shape
        parts = [self.dtype, f"{self.a}-{self.b}", f"{m}x{n}x{k}"]
        if self.bias:
            parts.append(f"bias_{self.bias}")
        if self.activation:
            parts.append(self.activation)
        if self.out_dtype:
            parts.append(f"out_{self.out_dtype}")
        if self.out != "poisoned":
            parts.append(f"out_{self.out}")
        if self.config:
            parts.append("cfg_" + "_".join(self.config))
        if self.numpy:
            parts.append("numpy")
        return "-".join(parts)


SHAPES = [(1, 1, 1), (17, 33, 65), (127, 129, 1000), (1000, 1000, 1000)]
CASES: list[Case] = []
for _dt in ("f16", "bf16", "f32", "tf32"):
    for _shape, (_a, _b) in product(SHAPES, product(("row", "col"), repeat=2)):
        CASES.append(Case(_dt, _shape, _a, _b))
    CASES += [
        Case(_dt, (127, 129, 1000), "strided", "row"),
        Case(_dt, (127, 129, 1000), "row", "strided"),
        Case(_dt, (127, 129, 1000), bias=INPUT[_dt], activation="relu"),
        Case(_dt, (1, 1, 1), bias=INPUT[_dt], activation="relu"),
    ]
CASES += [
    Case("f16", (4096, 4096, 4096)),
    Case("bf16", (4096, 4096, 4096)),
    Case("f16", (1000, 1000, 1000), config=("mma", "large")),
    Case("tf32", (1000, 1000, 1000), config=("tf32", "large")),
    Case("f32", (1000, 1000, 1000), config=("simt", "large")),
    # sm_90's bulk tensor copies (TMA), forced on ragged tiles, every transpose (tilec.matmul picks them
    # itself on an H100 for the 4096^3 cases above)
    *(Case(dt, (1000, 1000, 1000), a, b, config=("mma", "bulk")) for dt in ("f16", "bf16")
      for a, b in product(("row", "col"), repeat=2)),
    Case("f16", (1000, 1032, 1000), bias="float32", activation="relu", out_dtype="float32", config=("mma", "bulk")),
    # the same with empty barriers instead of a block barrier per K tile, and with 8 warps releasing
    Case("f16", (1000, 1032, 1000), "col", "row", config=("mma", "bulk-release")),
    *(Case(dt, (1000, 1032, 2000), config=("mma", "bulk-8-warps")) for dt in ("f16", "bf16")),
    # persistent kernels (one block an SM looping over C's tiles): the wgmma tile with a producer
    # warpgroup (sm_90), and the cp.async tile (any arch), ragged, with a bias and ReLU
    *(Case(dt, (1000, 1032, 1000), config=("mma", "wgmma-persistent")) for dt in ("f16", "bf16")),
    Case("f16", (3000, 1032, 520), bias="float32", activation="relu", out_dtype="float32", config=("mma", "wgmma-persistent")),
    Case("f16", (3000, 1000, 1000), config=("mma", "persistent")),
    # C through shared memory and bulk tensor stores (TMA), clipped at the ragged edges
    *(Case(dt, (1000, 1032, 1000), bias="float32", activation="relu", config=("mma", "wgmma-tma-store")) for dt in ("f16", "bf16")),
    Case("f16", (3000, 1032, 520), config=("mma", "wgmma-persistent-tma-store")),
    # the one-warpgroup 64x128 tile (wgmmas in flight) with its TMA-store epilogue: ragged, B given N x K,
    # a bias into bf16, and into f32 (whose larger buffers must still fit beside the four stages)
    Case("bf16", (200, 1000, 1040), bias="float32", activation="relu", config=("mma", "wgmma-thin")),
    Case("f16", (130, 1032, 1100), "row", "col", config=("mma", "wgmma-thin")),
    Case("f16", (333, 1000, 1040), bias="float32", activation="relu", out_dtype="float32", config=("mma", "wgmma-thin")),
    # the 128x128 tile: five stages, wgmmas in flight, C by TMA store
    Case("bf16", (500, 1000, 1040), bias="float32", activation="relu", config=("mma", "wgmma-mid")),
    Case("f16", (500, 1032, 2000), "row", "col", out_dtype="float32", config=("mma", "wgmma-mid")),
    # thread-block clusters of 2 (and 4) blocks along M multicasting B's tiles: ragged M (a last cluster
    # row of one real tile), odd tile rows, B given N x K, a bias, bf16
    Case("f16", (1000, 1032, 520), bias="float32", activation="relu", config=("mma", "wgmma-cluster-2")),
    Case("bf16", (333, 1000, 1000), "row", "col", config=("mma", "wgmma-cluster-2")),
    Case("f16", (129, 300, 64), config=("mma", "wgmma-cluster-2")),
    Case("f16", (1000, 1032, 1000), "row", "col", out_dtype="float32", config=("mma", "wgmma-cluster-4")),
    # clusters along N multicasting A's tiles: a ragged last cluster column (N = 1000: 8 columns of 128,
    # the last one partly real; 300: 3 of 128 in 2 clusters), B given N x K, a block a tile
    Case("f16", (1000, 1000, 520), bias="float32", activation="relu", config=("mma", "wgmma-cluster-1x2")),
    Case("bf16", (333, 300, 1000), "row", "col", config=("mma", "wgmma-cluster-1x2")),
    Case("f16", (200, 1000, 1000), config=("mma", "wgmma-cluster-1x2-tile")),
    # B given N x K (x @ w.T): the wgmma kernels read it K-major; the heuristic's pick at 4096^3
    *(Case(dt, (1000, 1032, 1000), "row", "col", bias="float32", activation="relu", config=("mma", "wgmma-persistent-tma-store"))
      for dt in ("f16", "bf16")),
    Case("bf16", (4096, 4096, 4096), "row", "col"),
    Case("f16", (127, 129, 1000), "col", "row", bias="float32", activation="relu", out_dtype="float32"),
    # rows of 4 and 8 bytes (A 2004 B, B and C 264 B): kernels with 4- and 8-byte cp.async
    Case("f16", (130, 132, 1002)),
    Case("bf16", (130, 132, 1002), "col", "col", bias="float32", activation="relu"),
    Case("f32", (130, 132, 1002)),
    Case("tf32", (130, 130, 1002)),
    Case("f16", (127, 129, 1000), out="alloc"),
    Case("f16", (17, 33, 65), out="strided"),
    Case("f16", (17, 33, 65), "col", "row", numpy=True),
    Case("f32", (17, 33, 65), "row", "col", bias="float32", activation="relu", numpy=True),
    # gelu (erf's polynomial in the epilogue) and silu on each epilogue path: mma.sync, SIMT, the persistent
    # wgmma kernel with its TMA-store epilogue
    *(Case("f16", (127, 129, 1000), bias="float32", activation=act) for act in ("gelu", "silu")),
    *(Case("f32", (130, 132, 200), activation=act) for act in ("gelu", "silu")),
    *(Case(dt, (1000, 1032, 1000), bias="float32", activation=act, config=("mma", "wgmma-persistent-tma-store"))
      for dt, act in (("bf16", "gelu"), ("f16", "silu"))),
]


FORCED = {
    **CONFIGS,
    ("mma", "bulk"): BULK_CONFIG,
    ("mma", "bulk-release"): replace(BULK_CONFIG, release=True),
    ("mma", "bulk-8-warps"): replace(BULK_CONFIG, block=(128, 256, 64), warps=(2, 4), release=True),
    ("mma", "wgmma-persistent"): replace(WGMMA_CONFIG, producer=True, persistent=True),
    ("mma", "persistent"): replace(CONFIGS[("mma", "large")], persistent=True),
    ("mma", "wgmma-tma-store"): replace(WGMMA_CONFIG, bulk_store=True),
    ("mma", "wgmma-thin"): THIN_WGMMA_CONFIGS[0],
    ("mma", "wgmma-mid"): MID_WGMMA_CONFIG,
    ("mma", "wgmma-persistent-tma-store"): replace(WGMMA_CONFIG, producer=True, persistent=True, bulk_store=True),
    ("mma", "wgmma-cluster-2"): replace(WGMMA_CONFIG, producer=True, persistent=True, bulk_store=True, cluster=2),
    ("mma", "wgmma-cluster-4"): replace(WGMMA_CONFIG, producer=True, persistent=True, cluster=4),
    ("mma", "wgmma-cluster-1x2"): replace(WGMMA_CONFIG, block=(128, 128, 64), producer=True, persistent=True,
                                          cluster=(1, 2)),
    ("mma", "wgmma-cluster-1x2-tile"): replace(WGMMA_CONFIG, block=(128, 64, 64), stages=4, producer=True,
                                               cluster=(1, 2)),
}

# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="the GPU GEMM tests make their inputs with torch on the GPU")


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    """Cubins go to a fresh folder, never the user's ~/.cache/tilec."""
    d = tmp_path_factory.mktemp("tilec-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TILEC_CACHE_DIR", str(d))
        yield d


@pytest.fixture(scope="module")
def report():
    rows: list[dict] = []
    yield rows
    failed = [r for r in rows if not r["passed"]]
    print(f"\n{len(rows)} GEMM cases, {len(rows) - len(failed)} passed, {len(failed)} failed")
    path = os.environ.get("TILEC_GEMM_REPORT")
    if path:
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)
        print(f"wrote {path}")


# ---------------------------------------------------------------- making inputs


def _operand(torch, rows: int, cols: int, how: str, dtype):
    """A rows x cols matrix on the GPU, laid out as ``how``."""
    if how == "row":
        return torch.randn(rows, cols, device="cuda", dtype=dtype)
    if how == "col":
        x = torch.randn(cols, rows, device="cuda", dtype=dtype).T
        assert x.stride() == (1, rows)
        return x
    assert how == "strided"
    x = torch.randn(rows, 2 * cols, device="cuda", dtype=dtype)[:, ::2]
    assert not x.is_contiguous() and x.stride() == (2 * cols, 2)
    return x


def _to_numpy(x):
    return x.cpu().numpy()


@dataclass
class Row:
    case: str
    dtype: str
    layouts: str
    shape: list[int]
    config: str
    rel_error: float
    tolerance: float
    unwritten: int
    seconds: float
    passed: bool
    extra: dict = field(default_factory=dict)


def _check(torch, case: Case, report: list[dict]) -> None:
    m, n, k = case.shape
    dtype = getattr(torch, INPUT[case.dtype])
    a = _operand(torch, m, k, case.a, dtype)
    b = _operand(torch, k, n, case.b, dtype)
    bias = None if case.bias is None else torch.randn(n, device="cuda", dtype=getattr(torch, case.bias))
    out_dtype = case.out_dtype or INPUT[case.dtype]
    tdt = getattr(torch, out_dtype)
    wide = None
    if case.out == "poisoned":
        out = torch.full((m, n), float("nan"), device="cuda", dtype=tdt)
    elif case.out == "strided":
        wide = torch.full((m, 2 * n), float("nan"), device="cuda", dtype=tdt)
        out = wide[:, ::2]
    else:
        out = None
    kwargs = dict(bias=bias, activation=case.activation, out_dtype=case.out_dtype,
                  allow_tf32=case.dtype == "tf32", config=FORCED[case.config] if case.config else None)
    if case.config and case.config[1].startswith(("bulk", "wgmma")) and not has_bulk_copies(tilec.api.default_arch()):
        pytest.skip(f"bulk tensor copies need sm_90; this GPU is {tilec.api.default_arch()}")

    if case.numpy:
        args = [_to_numpy(a), _to_numpy(b)]
        kwargs["bias"] = None if bias is None else _to_numpy(bias)
        out_np = None if out is None else _to_numpy(out)
        plan = gemm.plan_matmul(*args, out=out_np, **kwargs)
        start = time.perf_counter()
        got = tilec.matmul(*args, out=out_np, **kwargs)
        seconds = time.perf_counter() - start
        assert isinstance(got, np.ndarray) and (out_np is None or got is out_np)
        result = torch.from_numpy(got).cuda()
    else:
        plan = gemm.plan_matmul(a, b, out=out, **kwargs)
        start = time.perf_counter()
        got = tilec.matmul(a, b, out=out, **kwargs)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        assert out is None or got is out
        assert got.shape == (m, n) and got.dtype == tdt and got.device.type == "cuda"
        result = got

    ref = a.double() @ b.double()
    if bias is not None:
        ref = ref + bias.double()
    if case.activation is not None:  # torch's own: gelu is the exact (erf) one
        ref = {"relu": torch.relu, "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu}[case.activation](ref)
    unwritten = int(torch.isnan(result).sum().item())
    norm = ref.norm().item()
    err = ((result.double() - ref).norm().item() / norm) if norm > 0 else (result.double() - ref).norm().item()
    tol = TOLERANCE[(case.dtype, out_dtype)]
    extra = {}
    ok = unwritten == 0 and err < tol
    if wide is not None:
        untouched = bool(torch.isnan(wide[:, 1::2]).all().item())
        extra["gaps_untouched"] = untouched
        ok = ok and untouched
    row = Row(case.id, case.dtype, plan.layouts, [m, n, k], plan.config.describe(), err, tol, unwritten,
              round(seconds, 4), ok, extra)
    report.append(asdict(row))
    print(f"\n{case.dtype:4s} {plan.layouts:16s} {m:>4}x{n:<4}x{k:<5} {plan.spec.kernel_name:34s} "
          f"[{plan.config.describe()}] rel_err={err:.2e} tol={tol:.0e} unwritten={unwritten} "
          f"{seconds:7.3f}s {'PASS' if ok else 'FAIL'}{' ' + str(extra) if extra else ''}", end="")
    assert unwritten == 0, f"{case.id}: {unwritten} elements of C were never written"
    assert err < tol, f"{case.id}: relative error {err:.3e} >= {tol}"
    assert not extra or all(extra.values()), f"{case.id}: {extra}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gemm(case: Case, torch, report) -> None:
    _check(torch, case, report)


def test_repeat_launch_reuses_the_kernel(torch) -> None:
    """The second call compiles nothing and runs on new inputs."""
    a = torch.randn(300, 200, device="cuda", dtype=torch.float16)
    b = torch.randn(200, 100, device="cuda", dtype=torch.float16)
    tilec.matmul(a, b)
    kernels = len(gemm.cached_kernels())
    for _ in range(3):
        a.normal_()
        c = tilec.matmul(a, b)
        err = ((c.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm()).item()
        assert err < 1e-2
    assert len(gemm.cached_kernels()) == kernels


def test_bad_out_device_fails_before_launch(torch) -> None:
    a = torch.randn(8, 8, device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match="tilec.matmul: b: got a torch tensor on device 'cpu'"):
        tilec.matmul(a, torch.randn(8, 8, dtype=torch.float16))
    out = torch.full((8, 8), float("nan"), device="cuda", dtype=torch.float32)
    with pytest.raises(TypeError, match="out has dtype float32, expected float16"):
        tilec.matmul(a, a, out=out)
    assert torch.isnan(out).all()
