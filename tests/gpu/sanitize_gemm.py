"""f16 GEMMs through tilec.matmul, for compute-sanitizer (memcheck, racecheck, synccheck).

    compute-sanitizer --tool memcheck  --error-exitcode 3 python tests/gpu/sanitize_gemm.py
    compute-sanitizer --tool racecheck --error-exitcode 3 python tests/gpu/sanitize_gemm.py
    compute-sanitizer --tool synccheck --error-exitcode 3 python tests/gpu/sanitize_gemm.py --only hopper
    python tests/gpu/sanitize_gemm.py --only small      # just the 33x65x47 cases

Runs (fresh random inputs, output poisoned with NaN, float64 reference):

- small 33x65x47 (ragged against every tile): row/row; B column-major with a
  strided A and a bias + ReLU (the element-wise copy paths and the bias loads);
- hopper (sm_90): bulk copies, wgmma (64-row tiles with wgmmas in flight, alone and in
  clusters of two), and the persistent warp-specialised kernel with its
  TMA-store epilogue on a ragged 1000x1032x520 with a bias, also with four stages (its stores in
  column chunks through a ring of two slots a warp); the persistent kernel on FP8 (e4m3)
  inputs with per-tensor scales (with torch);
- large 1024x1024x512: row/row with the configuration the heuristic picks
  (64x64x32 on a 132-SM GPU), and with the large 128x128x32 configuration
  forced (4 warps x 2, 4-stage cp.async pipeline, > 48 KB shared memory).

Exits 0 when every result is within 1e-2 relative error with nothing
unwritten, 1 on a mismatch (printed), 2 without a GPU. torch is used when it
is installed (inputs made on the GPU), else numpy (copied in and out).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _inputs(m, n, k, a_layout, b_layout, bias, rng):
    """numpy float16 operands: op(A) m x k and op(B) k x n in the given layouts."""

    def make(rows, cols, how):
        if how == "row":
            return rng.standard_normal((rows, cols)).astype(np.float16)
        if how == "col":
            return np.ascontiguousarray(rng.standard_normal((cols, rows)).astype(np.float16)).T
        return rng.standard_normal((rows, 2 * cols + 3)).astype(np.float16)[:, 1 : 2 * cols + 1 : 2]

    a, b = make(m, k, a_layout), make(k, n, b_layout)
    v = rng.standard_normal(n).astype(np.float16) if bias else None
    return a, b, v


def run_case(name, m, n, k, a_layout="row", b_layout="row", bias=False, config=None, use_torch=None) -> bool:
    import tilec
    import tilec.kernels.gemm as gemm

    rng = np.random.default_rng(m * 7919 + n * 31 + k)
    a, b, v = _inputs(m, n, k, a_layout, b_layout, bias, rng)
    act = "relu" if bias else None
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if v is not None:
        ref = np.maximum(ref + v.astype(np.float64), 0)
    if use_torch is not None:
        torch = use_torch

        def dev(x, how):
            """The numpy operand on the GPU in the same layout (column-major, strided)."""
            if x is None:
                return None
            if how == "col":
                return torch.from_numpy(np.ascontiguousarray(x.T)).cuda().T
            if how == "strided":
                wide = torch.zeros((x.shape[0], 2 * x.shape[1] + 3), dtype=torch.float16, device="cuda")
                wide[:, 1 : 2 * x.shape[1] + 1 : 2] = torch.from_numpy(np.ascontiguousarray(x)).cuda()
                return wide[:, 1 : 2 * x.shape[1] + 1 : 2]
            return torch.from_numpy(np.ascontiguousarray(x)).cuda()

        out = torch.full((m, n), float("nan"), dtype=torch.float16, device="cuda")
        ta, tb, tv = dev(a, a_layout), dev(b, b_layout), dev(v, "row")
        plan = gemm.plan_matmul(ta, tb, out=out, bias=tv, activation=act, config=config)
        tilec.matmul(ta, tb, out=out, bias=tv, activation=act, config=config)
        torch.cuda.synchronize()
        c = out.cpu().numpy()
    else:
        out = np.full((m, n), np.nan, np.float16)
        plan = gemm.plan_matmul(a, b, out=out, bias=v, activation=act, config=config)
        tilec.matmul(a, b, out=out, bias=v, activation=act, config=config)
        c = out
    unwritten = int(np.isnan(c).sum())
    err = float(np.linalg.norm(np.nan_to_num(c.astype(np.float64)) - ref) / np.linalg.norm(ref))
    ok = unwritten == 0 and err < 1e-2
    print(f"{name:28s} {m}x{n}x{k} {plan.layouts:16s} {plan.spec.kernel_name:30s} [{plan.config.describe()}] "
          f"rel_err={err:.2e} unwritten={unwritten} {'ok' if ok else 'MISMATCH'}", flush=True)
    return ok


def run_fp8_case(name, m, n, k, torch, config=None) -> bool:
    """An FP8 (e4m3) GEMM with per-tensor scales, a bias and ReLU into bf16: A M x K, B given as W.t()."""
    import tilec
    import tilec.kernels.gemm as gemm

    gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 31 + k)
    a = (2 * torch.randn(m, k, device="cuda", generator=gen)).to(torch.float8_e4m3fn)
    w = torch.randn(n, k, device="cuda", generator=gen).to(torch.float8_e4m3fn)
    sa, sb = torch.tensor(0.75, device="cuda"), torch.tensor(1.5, device="cuda")
    bias = torch.randn(n, device="cuda", generator=gen)
    out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
    kw = dict(out=out, bias=bias, activation="relu", scale_a=sa, scale_b=sb, config=config)
    plan = gemm.plan_matmul(a, w.t(), **kw)
    tilec.matmul(a, w.t(), **kw)
    torch.cuda.synchronize()
    ref = torch.relu(a.double() @ w.double().t() * 1.125 + bias.double())
    unwritten = int(torch.isnan(out).sum())
    err = ((out.double() - ref).norm() / ref.norm()).item()
    ok = unwritten == 0 and err < 1e-2
    print(f"{name:28s} {m}x{n}x{k} {plan.layouts:16s} {plan.spec.kernel_name:30s} [{plan.config.describe()}] "
          f"rel_err={err:.2e} unwritten={unwritten} {'ok' if ok else 'MISMATCH'}", flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("small", "large", "hopper"),
                        help="run only the small, the large or the sm_90 (bulk copies, wgmma) cases")
    parser.add_argument("--numpy", action="store_true", help="numpy inputs even when torch is installed")
    args = parser.parse_args()

    from tilec.kernels.gemm_config import BULK_CONFIG, CONFIGS, PERSISTENT_WGMMA_CONFIG, WGMMA_CONFIG
    from tilec.runtime import get_device
    from tilec.runtime import has_device, no_device_reason

    if not has_device():
        print(f"no CUDA device: {no_device_reason()}")
        return 2
    torch = None
    if not args.numpy:
        try:
            import torch
        except ImportError:
            torch = None
    print(f"inputs via {'torch' if torch is not None else 'numpy (copied)'}")
    ok = True
    if args.only in (None, "small"):
        ok &= run_case("small row/row", 33, 65, 47, use_torch=torch)
        ok &= run_case("small strided/col bias relu", 33, 65, 47, "strided", "col", bias=True, use_torch=torch)
    if args.only in (None, "large"):
        ok &= run_case("large row/row", 1024, 1024, 512, use_torch=torch)
        ok &= run_case("large row/row, large config", 1024, 1024, 512, config=CONFIGS[("mma", "large")],
                       use_torch=torch)
    if args.only in (None, "hopper") and get_device().compute_capability >= (9, 0):
        # sm_90's paths: TMA bulk copies into swizzled tiles with mbarriers, and wgmma (run with synccheck too)
        ok &= run_case("large bulk copies", 1024, 1024, 512, config=BULK_CONFIG, use_torch=torch)
        ok &= run_case("large wgmma", 1024, 1024, 512, config=WGMMA_CONFIG, use_torch=torch)
        # one warpgroup, wgmmas in flight across K steps: a stage is refilled one step late, by the
        # thread that released it (the 64x128 tile storing C by TMA); and the same in clusters of two
        # multicasting B's tiles
        from dataclasses import replace

        from tilec.kernels.gemm_config import THIN_WGMMA_CONFIGS

        ok &= run_case("thin wgmma in flight", 200, 1000, 1040, bias=True, config=THIN_WGMMA_CONFIGS[0],
                       use_torch=torch)
        ok &= run_case("thin wgmma in flight, clusters of 2", 200, 1000, 1040,
                       config=replace(THIN_WGMMA_CONFIGS[1], cluster=2), use_torch=torch)
        # the 128x128 tile: five stages, wgmmas in flight, C by TMA store
        from tilec.kernels.gemm_config import MID_WGMMA_CONFIG

        ok &= run_case("mid wgmma in flight, TMA store", 300, 1000, 1040, bias=True, config=MID_WGMMA_CONFIG,
                       use_torch=torch)
        # the persistent warp-specialised kernel with its TMA-store epilogue, fewer blocks than tiles
        # (the stage ring and each warp's store buffer reused from tile to tile), ragged edges
        ok &= run_case("persistent wgmma, TMA store", 1000, 1032, 520, bias=True,
                       config=PERSISTENT_WGMMA_CONFIG, use_torch=torch)
        # four stages: each warp stores its rows in 64-column chunks through a ring of two slots
        from tilec.kernels.gemm_config import DEEP_PERSISTENT_WGMMA_CONFIG

        ok &= run_case("persistent wgmma, chunked TMA store", 1000, 1032, 520, bias=True,
                       config=DEEP_PERSISTENT_WGMMA_CONFIG, use_torch=torch)
        if torch is not None:  # FP8 tensors come from torch: the persistent TMA-store kernel on e4m3 inputs
            from tilec.kernels.gemm_config import FP8_WGMMA_LADDER

            ok &= run_fp8_case("FP8 persistent, TMA store", 1000, 1032, 528, torch, config=FP8_WGMMA_LADDER[0])
    print("all results match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
