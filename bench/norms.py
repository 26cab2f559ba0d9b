"""tilec.layer_norm / tilec.rms_norm against torch (F.layer_norm, F.rms_norm), torch.compile of each and
a device copy, in one run.

    python bench/norms.py [--json out.json]

Bandwidth = (bytes of x read + bytes of y written) / time, timed as bench/softmax.py times (device
time of back-to-back calls); the copy (``torch.clone``) is the ceiling. Rows up to 32k elements are
held in registers (one pass); longer rows are read twice (at most 2/3 of the copy by design).
"""

from __future__ import annotations

import argparse
import json

import torch
import torch.nn.functional as F

import tilec

from softmax import host_us, time_ms  # noqa: E402 - the same timers as bench/softmax.py

SHAPES = [(4096, 4096), (16384, 4096), (8192, 8192), (4096, 16384), (4096, 32768), (16384, 1024), (1024, 131072)]
DTYPES = [torch.float32, torch.bfloat16]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}")
    tiny, tw, tb = torch.randn(4, 256, device="cuda"), torch.randn(256, device="cuda"), torch.randn(256, device="cuda")
    tiny_out = torch.empty_like(tiny)
    host = {"tilec": host_us(lambda: tilec.layer_norm(tiny, tw, tb, 1e-5, out=tiny_out)),
            "torch": host_us(lambda: F.layer_norm(tiny, (256,), tw, tb, 1e-5))}
    print("host us per layer_norm call: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()))
    print(f"{'norm':>6} {'shape':>14} {'dtype':>9} {'copy':>6} {'tilec':>6} {'torch':>6} {'compile':>7} "
          f"{'tilec/copy':>10} {'tilec/compile':>13}   (GB/s)")
    rows = []
    for kind in ("layer", "rms"):
        torch_fn = (lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5)) if kind == "layer" else \
            (lambda x, w, b: F.rms_norm(x, x.shape[-1:], w, 1e-6))
        compiled = torch.compile(torch_fn)
        for dtype in DTYPES:
            for shape in SHAPES:
                x = torch.randn(shape, device="cuda", dtype=dtype)
                w = torch.randn(shape[1], device="cuda", dtype=dtype)
                b = torch.randn(shape[1], device="cuda", dtype=dtype)
                out = torch.empty_like(x)
                ours = (lambda: tilec.layer_norm(x, w, b, 1e-5, out=out)) if kind == "layer" else \
                    (lambda: tilec.rms_norm(x, w, 1e-6, out=out))
                ours()
                ref = torch_fn(x.double(), w.double(), b.double())
                err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
                moved = 2 * x.numel() * x.element_size()
                gbs = {name: moved / time_ms(fn) / 1e6 for name, fn in (
                    ("copy", lambda: x.clone()), ("tilec", ours), ("torch", lambda: torch_fn(x, w, b)),
                    ("compile", lambda: compiled(x, w, b)))}
                rows.append({"norm": kind, "shape": list(shape), "dtype": str(dtype), "rel_error": err,
                             **{k: round(v, 1) for k, v in gbs.items()}})
                print(f"{kind:>6} {str(shape):>14} {str(dtype)[6:]:>9} {gbs['copy']:>6.0f} {gbs['tilec']:>6.0f} "
                      f"{gbs['torch']:>6.0f} {gbs['compile']:>7.0f} {gbs['tilec'] / gbs['copy']:>10.2f} "
                      f"{gbs['tilec'] / gbs['compile']:>13.2f}   err {err:.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "host_us": host, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
