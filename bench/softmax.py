"""tilec.softmax against torch.softmax, torch.compile(softmax) (Triton) and a device copy, in one run.

    python bench/softmax.py [--json out.json]

Bandwidth = (bytes read + bytes written) / time: the median over 30 batches of 10 back-to-back
calls timed with CUDA events, after warm-up (the device's time: a call's host work overlaps the
previous call's kernel; the host cost of a call is reported on its own, ``host us``, from a tiny
input). The copy (``torch.clone`` of the same tensor) is the ceiling a memory-bound kernel can
reach on this GPU. Rows up to 32k elements are held in registers (one pass); longer rows are read
twice (1.5x the counted bytes: at most 2/3 of the copy's bandwidth by design).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

import tilec

SHAPES = [(4096, 4096), (16384, 4096), (4096, 8192), (8192, 8192), (4096, 16384), (8192, 16384), (4096, 32768),
          (16384, 32768), (16384, 1024), (65536, 256), (1024, 131072), (256, 262144)]
"""The issue's range (rows of 4k-32k, 4k-16k of them), then short rows (N <= 1024) and very long ones."""
DTYPES = [torch.float32, torch.bfloat16]


def time_ms(fn, batches: int = 30, batch: int = 10) -> float:
    """Milliseconds a call takes on the device: the median over ``batches`` of ``batch`` back-to-back calls."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / batch)
    return statistics.median(times)


def host_us(fn, calls: int = 200) -> float:
    """Microseconds of host time a call takes (on a tiny input, so the device never holds it back)."""
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    compiled = torch.compile(lambda t: torch.softmax(t, -1))
    print(f"GPU: {torch.cuda.get_device_name()}")
    tiny = torch.randn(4, 256, device="cuda")
    tiny_out = torch.empty_like(tiny)
    host = {"tilec": host_us(lambda: tilec.softmax(tiny, out=tiny_out)), "torch": host_us(lambda: torch.softmax(tiny, -1)),
            "compile": host_us(lambda: compiled(tiny))}
    print("host us per call: " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()))
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
            json.dump({"gpu": torch.cuda.get_device_name(), "host_us": host, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
