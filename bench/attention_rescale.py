"""tilec.attention's kernels with O rescaled every K/V tile or lazily (``LAZY``, FlashAttention-4's rule).

    cd bench && python attention_rescale.py [--json out.json]

For each shape (B S = 16k tokens, H D = 2048, bf16) both paths (the wgmma kernel, compiled for sm_90a,
and the mma.sync one) with ``LAZY`` 0 and 8, in two rounds taking turns, beside FlashAttention-2 and
cuDNN through torch's SDPA; each variant's output first checked against float64 on two heads
(NaN-poisoned). What :data:`tilec.kernels.attention.LAZY_RESCALE`'s choice rests on.
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from softmax import time_ms  # bench/softmax.py's timer (this folder is on sys.path)
from tilec.kernels import attention as A


def sdpa(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def launcher(q, k, v, out, causal: bool, arch: str, lazy: float):
    """A call of the kernel ``tilec.attention`` runs on ``arch``, with the rescale threshold ``lazy``."""
    kernel, target = A.path(arch, q.shape[-1])
    wgmma = kernel is not A.attention_fwd
    args, constexprs = A._arguments(q, k, v, out, None, causal, None, wgmma)
    constexprs["LAZY"] = lazy
    launch = kernel[A.grid(q, wgmma, causal)]
    return lambda: launch(*args, arch=target, num_warps=A.warps(constexprs), **constexprs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json")
    args = p.parse_args()
    print("GPU:", torch.cuda.get_device_name())
    rows = []
    for d in (128, 64):
        for s in (4096, 16384, 1024):
            for causal in (False, True):
                b, h = 16384 // s, 2048 // d
                q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
                flops = 4 * b * h * s * s * d / (2 if causal else 1)
                heads = [0, -1]
                want = sdpa(SDPBackend.MATH, *(x.flatten(0, 1)[heads][None].float() for x in (q, k, v)), causal)
                row = {"D": d, "S": s, "causal": causal}
                calls = {}
                for arch in ("sm_90a", "sm_80"):
                    for lazy in (0.0, 8.0):
                        out = torch.full_like(q, float("nan"))
                        call = calls[f"{arch} lazy {lazy:g}"] = launcher(q, k, v, out, causal, arch, lazy)
                        call()
                        err = ((out.flatten(0, 1)[heads][None].float() - want).abs().max() / want.abs().max()).item()
                        assert err < 1e-2, f"{arch} lazy {lazy}: relative error {err:.1e}"
                calls["FA2"] = lambda: sdpa(SDPBackend.FLASH_ATTENTION, q, k, v, causal)
                calls["cuDNN"] = lambda: sdpa(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)
                for _ in range(2):  # rounds taking turns
                    for name, call in calls.items():
                        row.setdefault(name, []).append(round(flops / time_ms(call, batches=10, batch=5) / 1e9, 1))
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
