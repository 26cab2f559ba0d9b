"""Block sizes of tilec.attention's kernels, timed side by side on the GPU (one shape, each config).

    python bench/attention_configs.py [--d 128] [--s 4096] [--causal] [--path wgmma|overlap|mma]
                                      [--bm 64 128] [--bn 64 128] [--stages 2 3] [--bulk 0 1] [--wm 16 32]
                                      [--dtype float16] [--sdpa CUDNN_ATTENTION FLASH_ATTENTION]

Prints TFLOP/s (FLOPs = 4 B H S^2 D, halved for causal; B S = 16k tokens, H D = 2048, bf16 unless
``--dtype``) for each (BM, BN, num_warps, num_stages) the path can take, with the result checked
against SDPA first;
``--bulk 0 1`` times the wgmma kernels with ``cp.async`` copies and block barriers (0) beside bulk
tensor copies released per warp (1, the default of ``attention_fwd_wgmma``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from tilec.kernels import attention as A

from softmax import time_ms  # bench/softmax.py's timer (this folder is on sys.path)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--d", type=int, default=128)
    p.add_argument("--s", type=int, default=4096)
    p.add_argument("--causal", action="store_true")
    p.add_argument("--dtype", choices=("bfloat16", "float16"), default="bfloat16")
    p.add_argument("--sdpa", nargs="*", default=[], choices=("CUDNN_ATTENTION", "FLASH_ATTENTION"),
                   help="also time torch SDPA with these backends")
    p.add_argument("--path", choices=("wgmma", "overlap", "mma"), default="wgmma")
    p.add_argument("--bm", type=int, nargs="*", default=[64, 128])
    p.add_argument("--bn", type=int, nargs="*", default=[32, 64, 128])
    p.add_argument("--stages", type=int, nargs="*", default=[2, 3])
    p.add_argument("--wm", type=int, nargs="*", default=[None],
                   help="mma path: query rows a warp, 16 or 32 (default: config()'s)")
    p.add_argument("--heads", type=int, nargs="*", default=[None],
                   help="heads a group in the blocks' order (heads_per_group; default: order_heads()'s)")
    p.add_argument("--bulk", type=int, nargs="*", default=None, help="0: cp.async, 1: TMA (default: the kernel's)")
    p.add_argument("--producer", type=int, nargs="*", default=None,
                   help="with TMA: 1 gives the kernel a producer warpgroup (default: the kernel's)")
    args = p.parse_args()
    if args.wm != [None] and args.path != "mma":
        p.error("--wm is for --path mma (a warp of the wgmma kernels owns 16 rows)")
    d, s = args.d, args.s
    b, h = 16384 // s, 2048 // d
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=getattr(torch, args.dtype)) for _ in range(3))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
    flops = 4 * b * h * s * s * d / (2 if args.causal else 1)
    wgmma = args.path != "mma"
    if args.path == "overlap":  # examples/lang/attention_overlap.py's kernel (async wgmma)
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "lang"))
        from attention_overlap import attention_overlap

        kernel, arch = attention_overlap, "sm_90a"
    else:
        kernel, arch = A.path("sm_90a" if wgmma else "sm_80", d)  # what tilec.attention runs at this D
    print(f"GPU: {torch.cuda.get_device_name()}; {args.path}, D {d}, S {s}, causal {args.causal}, {args.dtype}")
    variants = {None: kernel}
    if args.bulk is not None or args.producer is not None:
        variants = {}
        for bk in args.bulk if args.bulk is not None else [int(kernel.bulk)]:
            for pr in (args.producer if args.producer is not None else [int(kernel.producer)]) if bk else [0]:
                variants[f"{bk}{' producer' if pr else ''}"] = kernel.with_options(
                    bulk=bool(bk), producer=bool(pr), bulk_store=kernel.bulk_store and bool(bk))
    for (bulk, kernel), bm, bn, stages, heads, wm in itertools.product(variants.items(), args.bm, args.bn, args.stages,
                                                                      args.heads, args.wm):
        name = f"BM {bm:>3} BN {bn:>3} stages {stages}" + ("" if bulk is None else f" bulk {bulk}")
        name += "" if heads is None else f" heads {heads:>2}"
        name += "" if wm is None else f" WM {wm}"
        out = torch.full_like(q, float("nan"))
        (qq, kk, vv, oo, lse, scale), ce = A._arguments(q, k, v, out, None, args.causal, None, wgmma)
        ce.update(BM=bm, BN=bn)
        if wm is not None:
            ce["WM"] = wm
        if heads is not None:
            ce["heads_per_group"] = heads
        g = (-(-s // bm), b * h)
        run = lambda: kernel[g](qq, kk, vv, oo, lse, scale, arch=arch, num_warps=A.warps(ce),
                                num_stages=stages, **ce)
        try:
            run()
            torch.cuda.synchronize()
        except Exception as e:  # a config past a budget: say why and go on
            print(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:150]}")
            continue
        err = ((out.float() - want.float()).abs().max() / want.float().abs().max()).item()
        tf = flops / time_ms(run, batches=10, batch=5) / 1e9
        print(f"{name}: {tf:7.1f} TFLOP/s  err {err:.1e}")
    for backend in args.sdpa:  # references in the same call
        def sdpa(backend=getattr(SDPBackend, backend)):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=args.causal)
        print(f"SDPA {backend}: {flops / time_ms(sdpa, batches=10, batch=5) / 1e9:7.1f} TFLOP/s")


if __name__ == "__main__":
    main()
