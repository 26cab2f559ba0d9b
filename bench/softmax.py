"""tilec.softmax against torch.softmax, torch.compile(softmax) (Triton) and a device copy, in one run.

    python bench/softmax.py [--json out.json]

Bandwidth = (bytes read + bytes written) / time, the median of many CUDA-event-timed calls after
warm-up; the copy (``torch.clone`` of the same tensor) is the ceiling a memory-bound kernel can
reach on this GPU. tilec's kernel reads its input twice (an online max and sum, then the output):
it moves 1.5x the counted bytes, so it cannot pass 2/3 of the copy's bandwidth by design.
"""

from __future__ import annotations

import argparse
import json
import statistics

import torch

import tilec

SHAPES = [(4096, 4096), (8192, 8192), (16384, 4096), (4096, 32768), (8192, 1024), (1024, 131072)]
DTYPES = [torch.float32, torch.bfloat16]


def time_ms(fn, reps: int = 50) -> float:
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    compiled = torch.compile(lambda t: torch.softmax(t, -1))
    print(f"GPU: {torch.cuda.get_device_name()}")
    print(f"{'shape':>16} {'dtype':>9} {'copy GB/s':>10} {'tilec':>8} {'torch':>8} {'compile':>8} "
          f"{'tilec/copy':>10} {'tilec/compile':>13}")
    rows = []
    for dtype in DTYPES:
        for shape in SHAPES:
            x = torch.randn(shape, device="cuda", dtype=dtype)
            out = torch.empty_like(x)
            moved = 2 * x.numel() * x.element_size()
            ref = torch.softmax(x.double(), -1)
            tilec.softmax(x, out=out)
            err = (out.double() - ref).abs().max().item()
            gbs = {}
            for name, fn in (("copy", lambda: x.clone()), ("tilec", lambda: tilec.softmax(x, out=out)),
                             ("torch", lambda: torch.softmax(x, -1)), ("compile", lambda: compiled(x))):
                gbs[name] = moved / time_ms(fn) / 1e6
            row = {"shape": list(shape), "dtype": str(dtype), "max_abs_error": err, **{k: round(v, 1) for k, v in gbs.items()}}
            rows.append(row)
            print(f"{str(shape):>16} {str(dtype)[6:]:>9} {gbs['copy']:>10.0f} {gbs['tilec']:>8.0f} {gbs['torch']:>8.0f} "
                  f"{gbs['compile']:>8.0f} {gbs['tilec'] / gbs['copy']:>10.2f} {gbs['tilec'] / gbs['compile']:>13.2f}"
                  f"   err {err:.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
