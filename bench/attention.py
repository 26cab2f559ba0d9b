"""tilec.attention (forward) against torch SDPA's FlashAttention-2 and cuDNN backends, in one run.

    python bench/attention.py [--json out.json] [--quick]

FLOPs = 4 B H Sq Sk D (halved for causal); TFLOP/s from device time (the median of batches of
back-to-back calls, as bench/softmax.py times). Shapes: B S = 16k tokens, H D = 2048, S in {1k, 4k,
8k, 16k}, D in {64, 128}, causal and not, bf16 and f16 (``--quick``: S = 4k only). Triton: the
tutorial's fused-attention structure (``bench/triton_attention.py``, autotuned over a few block
sizes), on Triton's default path (wgmma on sm_90) and, with ``--triton-mma``, forced to mma.sync
(``DISABLE_MMA_V3=1``, set before Triton compiles anything). Each row's outputs (tilec's two paths and
Triton's) are checked against SDPA's f32 math first: every (batch, head) up to S = 4k, past it the
first and the last (the reference holds S^2 scores a head).
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import os
import sys

if "--triton-mma" in sys.argv:  # before Triton compiles anything: its mma.sync path, like tilec's today
    os.environ["DISABLE_MMA_V3"] = "1"

import tilec

from softmax import time_ms  # bench/softmax.py's timer (this folder is on sys.path)
from triton_attention import attention as triton_attention


def sdpa(backend):
    def run(q, k, v, causal):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--d", type=int, nargs="*", default=[64, 128], help="head dimensions (default 64 128)")
    p.add_argument("--triton-mma", action="store_true", help="Triton on mma.sync (DISABLE_MMA_V3=1)")
    args = p.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}")
    rows = []
    print("tilec: the GPU's path (wgmma on sm_90); tilec-mma: the mma.sync path (arch='sm_80') on the same GPU")
    print(f"{'dtype':>9} {'D':>4} {'S':>6} {'causal':>6} {'tilec':>7} {'t-mma':>7} {'FA2':>7} {'cuDNN':>7} "
          f"{'triton':>7} {'mma/FA2':>8} {'tilec/cuDNN':>11} {'tilec/triton':>12}  TFLOP/s")
    for dtype in (torch.bfloat16, torch.float16):
        for d in args.d:
            for s in ((4096,) if args.quick else (1024, 4096, 8192, 16384)):
                for causal in (False, True):
                    b, h = 16384 // s, 2048 // d
                    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype) for _ in range(3))
                    out = torch.empty_like(q)
                    flops = 4 * b * h * s * s * d / (2 if causal else 1)
                    out_mma = torch.empty_like(q)
                    tilec.attention(q, k, v, causal=causal, out=out)
                    tilec.attention(q, k, v, causal=causal, out=out_mma, arch="sm_80")
                    # the f32 reference holds B H S^2 scores: past S = 4k, the first and the last (batch, head)
                    heads = slice(None) if s <= 4096 else [0, -1]
                    qs, ks, vs = (x.flatten(0, 1)[heads][None].float() for x in (q, k, v))
                    want = sdpa(SDPBackend.MATH)(qs, ks, vs, causal)
                    rel = lambda x: ((x.flatten(0, 1)[heads][None].float() - want).abs().max()  # noqa: E731
                                     / want.abs().max()).item()
                    err, err_mma = rel(out), rel(out_mma)
                    triton_err = rel(triton_attention(q, k, v, causal))
                    assert triton_err < 3e-2, f"the Triton kernel is wrong here: {triton_err:.1e}"
                    del want, qs, ks, vs
                    fns = {"tilec": lambda: tilec.attention(q, k, v, causal=causal, out=out),
                           "tilec-mma": lambda: tilec.attention(q, k, v, causal=causal, out=out_mma, arch="sm_80"),
                           "FA2": lambda: sdpa(SDPBackend.FLASH_ATTENTION)(q, k, v, causal),
                           "cuDNN": lambda: sdpa(SDPBackend.CUDNN_ATTENTION)(q, k, v, causal),
                           "triton": lambda: triton_attention(q, k, v, causal)}
                    tf = {}
                    for name, fn in fns.items():
                        try:
                            tf[name] = flops / time_ms(fn, batches=10, batch=5) / 1e9
                        except RuntimeError as e:  # a backend that does not take this shape
                            tf[name] = float("nan")
                            print(f"  {name}: {str(e).splitlines()[0][:100]}")
                    rows.append({"dtype": str(dtype), "D": d, "S": s, "causal": causal, "max_rel_error": err,
                                 "max_rel_error_mma": err_mma, **{k: round(v, 1) for k, v in tf.items()}})
                    print(f"{str(dtype)[6:]:>9} {d:>4} {s:>6} {str(causal):>6} {tf['tilec']:>7.0f} {tf['tilec-mma']:>7.0f} "
                          f"{tf['FA2']:>7.0f} {tf['cuDNN']:>7.0f} {tf['triton']:>7.0f} {tf['tilec-mma'] / tf['FA2']:>8.2f} "
                          f"{tf['tilec'] / tf['cuDNN']:>11.2f} {tf['tilec'] / tf['triton']:>12.2f}  "
                          f"err {err:.1e} / {err_mma:.1e}")
                    if args.json:  # after every row: a run cut short keeps what it measured
                        with open(args.json, "w") as f:
                            json.dump({"gpu": torch.cuda.get_device_name(), "triton_mma_only": args.triton_mma,
                                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
