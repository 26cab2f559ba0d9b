"""f32 (SIMT) and tf32 GEMMs at 4096^3 through tilec.matmul, checked against float64 (GPU only).

    python bench/gemm_check_large.py
"""
import sys

import torch

import tilec


def check(allow_tf32: bool, size: int = 4096) -> bool:
    a = torch.randn(size, size, device="cuda", dtype=torch.float32)
    b = torch.randn(size, size, device="cuda", dtype=torch.float32)
    out = torch.full((size, size), float("nan"), device="cuda", dtype=torch.float32)
    tilec.matmul(a, b, out=out, allow_tf32=allow_tf32)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((out.double() - ref).norm() / ref.norm()).item()
    tol = 5e-3 if allow_tf32 else 1e-5
    name = "tf32" if allow_tf32 else "f32 SIMT"
    ok = err < tol and not torch.isnan(out).any().item()
    print(f"{name:8s} {size}^3: rel err {err:.2e} (tol {tol:g}) unwritten {int(torch.isnan(out).sum())} {'PASS' if ok else 'FAIL'}")
    return ok


if __name__ == "__main__":
    sys.exit(0 if all([check(False), check(True)]) else 1)
