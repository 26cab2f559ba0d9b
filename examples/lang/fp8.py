"""FP8 in tilec.lang: quantizing rows to 8-bit floats, and GEMMs of them on the tensor cores.

    python examples/lang/fp8.py      # the CPU interpreters against numpy, then the GPU if there is one

FP8 values (``tl.float8_e4m3fn`` / ``tl.float8_e5m2``; Triton's ``tl.float8e4nv`` / ``tl.float8e5``) are
loaded, stored, converted and multiplied by the tensor cores; arithmetic on them is typed as Triton
types it and computed in f32. A conversion into FP8 rounds to nearest and saturates (PTX's ``cvt.rn.satfinite``, as Triton's).
``tl.dot`` of FP8 tiles is sm_90a's FP8 warpgroup MMA where both operands are K-major (A M x K, B given
as the weights N x K), else ``mma.sync`` of FP8; the conversions and the mma.sync need sm_89 or later
(the sm_80 target refuses them by name). Numpy has no FP8: on the CPU the arrays are ``ml_dtypes``'.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

import tilec.lang as tl

# the tutorial's kernel is examples/lang/pointers.py's (loaded by path: these examples are scripts)
_spec = importlib.util.spec_from_file_location("lang_example_pointers", Path(__file__).with_name("pointers.py"))
_pointers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_pointers)


@tl.kernel(num_warps=4)
def quantize_rows(x, q, s, BM: tl.constexpr, N: tl.constexpr):
    """Per-row FP8 quantization: each row scaled so its largest magnitude is E4M3's largest value (448),
    its scale stored beside it (a row of zeros gives NaNs, as the division does)."""
    r = tl.program_id(0) * BM
    t = tl.load(x, (r, 0), shape=(BM, N)).to(tl.float32)
    scale = tl.max(tl.abs(t), axis=1) / 448.0
    tl.store(q, (r, 0), t / scale[:, None])  # converted into q's FP8 as it is stored
    tl.store(s, (r,), scale)


@tl.kernel(num_warps=4)
def dequantize_rows(q, s, y, BM: tl.constexpr, N: tl.constexpr):
    r = tl.program_id(0) * BM
    t = tl.load(q, (r, 0), shape=(BM, N)).to(tl.float32)
    tl.store(y, (r, 0), (t * tl.load(s, (r,), shape=(BM,))[:, None]).to(y.dtype))


matmul_kernel = _pointers.matmul_kernel.with_options(num_stages=3)
"""Triton's matmul tutorial (examples/lang/pointers.py's, as the tutorial writes it), run on FP8 as the
tutorial's FP8 run passes its operands: B K-major (``b.T``, so ``stride_bk`` is 1). tile-stage gathers B's
tile transposed, so both staged tiles are K-major and on sm_90a the dot is the FP8 warpgroup MMA."""


@tl.kernel(num_warps=8)
def linear(x, w, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """``x @ w.T`` on windows: a linear layer's FP8 weights N x K."""
    m, n = tl.program_id(0) * BM, tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, x.shape[1], BK):
        acc = tl.dot(tl.load(x, (m, k), shape=(BM, BK)), tl.trans(tl.load(w, (n, k), shape=(BN, BK))), acc)
    tl.store(c, (m, n), acc.to(c.dtype))


def tutorial_call(a, w, c, BM: int = 128, BN: int = 128, BK: int = 128):
    """The grid, arguments and constants of :func:`matmul_kernel` for ``c = a @ w.T`` (``a`` M x K, ``w``
    N x K: B = ``w.T``, K-major, as the tutorial's FP8 run passes it), blocks of ``BM x BN x BK`` (the
    default fits the kernel's four warps; bench/fp8_lang.py runs 128 x 256 x 128 with eight)."""
    m, k = a.shape
    n = w.shape[0]
    grid = (-(-m // BM), -(-n // BN))
    return grid, (a, w, c, m, n, k, k, 1, 1, k, n, 1), dict(BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK)


def main() -> int:
    try:
        import ml_dtypes
    except ImportError:
        print("ml_dtypes is not installed (pip install ml_dtypes, or the test extra): numpy has no FP8")
        return 0
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((64, 128)) * 3).astype(np.float16)
    q = np.zeros((64, 128), ml_dtypes.float8_e4m3fn)
    s = np.full(64, np.nan, np.float32)
    quantize_rows.interpret(x, q, s, grid=(4,), BM=16, N=128, after="tile-distribute")
    y = np.full((64, 128), np.nan, np.float16)
    dequantize_rows.interpret(q, s, y, grid=(4,), BM=16, N=128)
    round_trip = float(np.abs(y.astype(np.float64) - x).max() / np.abs(x).max())
    print(f"interpreter, quantize and dequantize rows (E4M3): max relative error {round_trip:.3f}")
    a = (rng.standard_normal((96, 160)) * 2).astype(ml_dtypes.float8_e4m3fn)
    w = rng.standard_normal((80, 160)).astype(ml_dtypes.float8_e4m3fn)
    c = np.full((96, 80), np.nan, np.float16)
    grid, args, consts = tutorial_call(a, w, c, BM=64, BN=64, BK=64)
    matmul_kernel.interpret(*args, grid=grid, arch="sm_90a", after="tile-distribute", **consts)
    ref = a.astype(np.float64) @ w.astype(np.float64).T
    err = float(np.abs(c - ref).max() / np.abs(ref).max())
    print(f"interpreter after tile-distribute (sm_90a), FP8 matmul 96x80x160: max relative error {err:.1e}")
    ptx = matmul_kernel.compile(*args, arch="sm_90a", **consts).asm["ptx"]
    print(f"PTX for sm_90a: {ptx.count('wgmma.mma_async')} wgmma.mma_async of e4m3")
    if round_trip > 2**-3 or err > 2e-3:
        return 1
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no GPU: not launched")
        return 0
    a = torch.randn(4096, 4096, device="cuda").to(torch.float8_e4m3fn)
    w = torch.randn(4096, 4096, device="cuda").to(torch.float8_e4m3fn)
    c = torch.full((4096, 4096), float("nan"), device="cuda", dtype=torch.float16)
    grid, args, consts = tutorial_call(a, w, c)
    matmul_kernel.with_options(num_warps=8, num_stages=4)[grid](*args, **consts)
    ref = a.double() @ w.double().T
    gpu_err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
    print(f"GPU, FP8 matmul 4096^3: max relative error {gpu_err:.1e}")
    return 0 if gpu_err < 1e-2 else 1  # the FP8 tensor cores keep fewer bits while they sum: ~4e-3 here


if __name__ == "__main__":
    raise SystemExit(main())
