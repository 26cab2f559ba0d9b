"""The FP8 kernels of examples/lang/fp8.py for compute-sanitizer (memcheck, racecheck).

    compute-sanitizer --tool memcheck  --report-api-errors no --error-exitcode 3 python tests/gpu/sanitize_fp8_lang.py
    compute-sanitizer --tool racecheck --error-exitcode 3 python tests/gpu/sanitize_fp8_lang.py

(``--report-api-errors no``: torch's driver probes, see sanitize_rows.py.)

Triton's matmul tutorial on FP8 (B K-major, gathered transposed) on the FP8 warpgroup MMA over cp.async
stages (sm_90a) and on mma.sync of FP8 (sm_90), ragged (300x520x333: rows not 16-byte aligned, masked
edges) and whole blocks; the row quantizer on ragged rows; the window form on bulk tensor copies. Fresh
random inputs, outputs poisoned with NaN, float64 references. Exits 0 when every result is within
tolerance, 1 on a mismatch (printed), 2 without a GPU.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def main() -> int:
    try:
        import torch
    except ImportError:
        print("torch is needed to make the inputs on the GPU")
        return 2
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() < (9, 0):
        print("no sm_90 GPU")
        return 2
    spec = importlib.util.spec_from_file_location("fp8", Path(__file__).resolve().parents[2] / "examples" / "lang" / "fp8.py")
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    bad = 0

    def check(name: str, got, ref, tol: float) -> None:
        nonlocal bad
        err = ((got.double() - ref).abs().max() / ref.abs().max()).item() if not got.isnan().any() else float("nan")
        ok = err < tol
        bad += not ok
        print(f"{name}: relative error {err:.2e} {'ok' if ok else 'MISMATCH'}")

    for (m, n, k), arch in (((300, 520, 333), "sm_90a"), ((256, 384, 256), "sm_90a"), ((300, 520, 333), "sm_90")):
        a = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        block = (128, 256, 128) if arch == "sm_90a" else (128, 128, 64)
        grid, args, consts = ex.tutorial_call(a, w, c, *block)
        warps, stages = (8, 4) if arch == "sm_90a" else (4, 3)
        ex.matmul_kernel.with_options(num_warps=warps, num_stages=stages)[grid](*args, **consts, arch=arch)
        check(f"tutorial {m}x{n}x{k} {arch}", c, a.double() @ w.double().T, 5e-3)
    x = torch.randn(1000, 256, device="cuda", dtype=torch.bfloat16) * 5
    q = torch.full((1000, 256), float("nan"), device="cuda").to(torch.float8_e4m3fn)
    s = torch.full((1000,), float("nan"), device="cuda")
    ex.quantize_rows[(-(-1000 // 16),)](x, q, s, BM=16, N=256)
    check("quantize_rows 1000x256", q.double() * s.double()[:, None], x.double(), 2**-3)
    xl = torch.randn(256, 512, device="cuda").to(torch.float8_e4m3fn)
    wl = torch.randn(512, 512, device="cuda").to(torch.float8_e4m3fn)
    cl = torch.full((256, 512), float("nan"), device="cuda")
    ex.linear.with_options(num_stages=4, bulk=True)[(2, 2)](xl, wl, cl, BM=128, BN=256, BK=128, arch="sm_90a")
    check("linear 256x512x512 bulk", cl, xl.double() @ wl.double().T, 5e-3)
    torch.cuda.synchronize()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
