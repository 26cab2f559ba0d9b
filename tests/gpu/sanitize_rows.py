"""The row kernels (softmax, layer norm, RMS norm) for compute-sanitizer (memcheck, racecheck, synccheck).

    compute-sanitizer --tool memcheck  --report-api-errors no --error-exitcode 3 python tests/gpu/sanitize_rows.py
    compute-sanitizer --tool racecheck --error-exitcode 3 python tests/gpu/sanitize_rows.py

(``--report-api-errors no``: torch and cuda-python probe the driver with ``cuGetProcAddress`` for
entry points it lacks; memcheck counts each refusal, 34 on an H100 with CUDA 13, as an error of
the program. They are host calls, not kernel accesses.)

One config of each path: one pass (a block's rows in registers, partials of its warps combined in
shared memory: 37 ragged rows of 3000 bf16, several rows a block of 700 f32) and two passes (rows
of 70000, the cross-warp reductions inside a loop). Fresh random inputs, outputs poisoned with NaN,
float64 references (torch). Exits 0 when every result is within tolerance, 1 on a mismatch
(printed), 2 without a GPU.
"""

from __future__ import annotations

import sys


def main() -> int:
    try:
        import torch
    except ImportError:
        print("torch is needed to make the inputs on the GPU")
        return 2
    if not torch.cuda.is_available():
        print("no GPU")
        return 2
    import tilec

    bad = 0
    for shape, dtype, tol in (((37, 3000), torch.bfloat16, 2e-2), ((9, 700), torch.float32, 1e-5),
                              ((3, 70000), torch.float32, 1e-5)):
        x = (torch.randn(shape, device="cuda") * 4 + 1).to(dtype)
        w, b = torch.randn(shape[1], device="cuda").to(dtype), torch.randn(shape[1], device="cuda").to(dtype)
        x64 = x.double()
        refs = {
            "softmax": torch.softmax(x64, -1),
            "layer_norm": torch.nn.functional.layer_norm(x64, shape[1:], w.double(), b.double(), 1e-5),
            "rms_norm": x64 * torch.rsqrt((x64 * x64).mean(-1, keepdim=True) + 1e-6) * w.double(),
        }
        calls = {
            "softmax": lambda out: tilec.softmax(x, out=out),
            "layer_norm": lambda out: tilec.layer_norm(x, w, b, 1e-5, out=out),
            "rms_norm": lambda out: tilec.rms_norm(x, w, 1e-6, out=out),
        }
        for name, call in calls.items():
            out = torch.full(shape, float("nan"), device="cuda", dtype=dtype)
            call(out)
            torch.cuda.synchronize()
            ref = refs[name]
            err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
            ok = not out.isnan().any().item() and err < tol
            print(f"{name:>10} {str(shape):>12} {str(dtype)[6:]:>9} rel err {err:.1e} {'ok' if ok else 'MISMATCH'}")
            bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
