"""Time several matmul configurations on one shape (GPU), to see which knob matters.

    python bench/sweep_configs.py [--shape 4096,4096,4096] [--dtype float16]
        [--config 128x128x32/4x2/4[+aligned][+bulk|+bulksync][+wgmma][+producer][+persistent][+tmastore][+gN][+cN] ...] [--repeat R] [--flush]
        [--cublas] [--b-layout row|col] [--json out.json]

Every kernel is the one ``tilec.matmul`` picks for these row-major torch
operands: the specialisation for rows aligned to 16 bytes (``+aligned`` is
accepted and changes nothing). ``+bulk`` (sm_90) loads the K tiles with
bulk tensor copies (TMA) instead of ``cp.async``, the warps releasing stages
on empty barriers; ``+bulksync`` is the same with a block barrier per K tile
instead (``tile-pipeline{release=false}``). ``+wgmma`` (sm_90a, with a bulk
flag) multiplies with the warpgroup MMA; its warps are ``BM/16 x 1`` (write
``-`` for them: ``128x256x64/-/3+bulk+wgmma``); ``+producer`` (with ``+bulk``)
adds a producer warpgroup that issues the copies (warp specialisation). ``+persistent`` launches
one block an SM, each looping over C's tiles (``tile-tiling{persistent}``). ``+tmastore`` (with
``+bulk``) stores C through shared memory and bulk tensor stores (``tile-bulk-store``). ``+gN``
groups N block rows along M for L2 reuse (default 8). ``+cN`` (with ``+bulk``) runs thread-block
clusters of N blocks along M that multicast B's tiles (sm_90); ``+c1xN`` clusters along N, multicasting A's.
``+serial`` waits for each K step's wgmmas (``in_flight=False``; by default they stay in flight).

Each configuration is compiled through tilec's pipeline, checked once against
a float64 reference (NaN-poisoned output first), then timed: the median of
many CUDA-event-timed calls of ``tilec.matmul`` with that configuration (its
prepared launch; the host overhead of a few microseconds is hidden by
queueing calls back to back, except on the smallest problems).  ``ptxas -v``'s
registers/spills are reported beside each time so a slow entry can be told
apart from a spilling one. ``--repeat R`` times every configuration R times,
round-robin, and reports the median with the range: differences smaller
than a kernel's own range are noise (clocks move by several percent). The
mma.sync ceiling and the issue's targets live in ``bench/gemm.py``; this is
the quick lever-finding tool.
"""

from __future__ import annotations

import argparse
import json
import statistics

DEFAULT_CONFIGS = [
    "128x128x32/4x2/4", "128x128x32/2x2/4", "128x128x64/4x2/3", "128x128x64/2x2/3",
    "128x256x32/2x4/3", "128x256x32/2x4/4", "256x128x32/4x2/3", "128x256x64/2x4/3", "64x128x32/2x2/4",
]


def parse_config(text: str):
    """``BMxBNxBK/WMxWN/stages`` → MatmulConfig."""
    from tilec.kernels.gemm_config import MatmulConfig

    base, *flags = text.split("+")
    block, warps, stages = base.split("/")
    group = next((int(f[1:]) for f in flags if f[:1] == "g" and f[1:].isdigit()), 8)
    cluster = next((tuple(int(c) for c in f[1:].split("x")) for f in flags
                    if f[:1] == "c" and f[1:].replace("x", "").isdigit()), (1,))
    return MatmulConfig(block=tuple(int(v) for v in block.split("x")),
                        warps=None if warps == "-" else tuple(int(v) for v in warps.split("x")),
                        stages=int(stages), group=group,
                        bulk="bulk" in flags or "bulksync" in flags, release="bulksync" not in flags,
                        wgmma="wgmma" in flags, producer="producer" in flags, persistent="persistent" in flags,
                        bulk_store="tmastore" in flags, cluster=cluster, in_flight="serial" not in flags)


def time_kernel(launch, reps: int = 50, flush=None) -> float:
    """Median milliseconds of ``reps`` launches, each between two CUDA events.

    ``flush`` (a large device tensor): zeroed before each launch, outside the
    events, as ``bench/gemm.py`` and ``triton.testing.do_bench`` do. The L2 is
    then cold, and the GPU is busy with the memset while the host submits the
    launch, so a small problem's time is the kernel's, not the host's.
    """
    import torch

    for _ in range(5):
        launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        if flush is not None:
            flush.zero_()
        start.record()
        launch()
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in times)


def prepare(config_text: str, m: int, n: int, k: int, dtype: str, flush=None, b_layout: str = "row"):
    """Compile and check one configuration: its result row, and a function timing one round (None on error).

    The kernel is the one ``tilec.matmul`` runs for these operands (torch
    tensors with 16-byte aligned rows: the aligned specialisation), and it is
    timed through ``tilec.matmul`` itself, whose prepared launch costs a few
    microseconds of host time per call (the checked ``kernel(*args)`` launch
    binds every argument and encodes tensor maps: on a small problem it, not
    the GPU, would be timed).
    """
    import torch

    import tilec
    from tilec.codegen.ptxas import kernel_resources

    config = parse_config(config_text)
    tdtype = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=tdtype)
    b = torch.randn(n, k, device="cuda", dtype=tdtype).t() if b_layout == "col" else \
        torch.randn(k, n, device="cuda", dtype=tdtype)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=tdtype)
    row = {"config": config_text}
    try:
        kernel = tilec.matmul_kernel(a, b, out=c, config=config)
        res = kernel_resources(kernel.asm["ptx"], kernel.arch)[kernel.name]
        row.update(registers=res.registers, spill_bytes=res.spill_stores + res.spill_loads)
        tilec.matmul(a, b, out=c, config=config)
    except Exception as e:  # a configuration the pipeline refuses is a result too
        row["error"] = f"{type(e).__name__}: {e}"[:300]
        return row, None
    torch.cuda.synchronize()
    rows = torch.randint(0, m, (256,), device="cuda")
    ref = a[rows].double() @ b.double()
    row["rel_error"] = ((c[rows].double() - ref).norm() / ref.norm()).item()
    return row, lambda: time_kernel(lambda: tilec.matmul(a, b, out=c, config=config), flush=flush)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="4096,4096,4096")
    p.add_argument("--dtype", default="float16")
    p.add_argument("--config", action="append")
    p.add_argument("--repeat", type=int, default=1,
                   help="rounds over all configurations, interleaved (a kernel's spread between rounds is the noise)")
    p.add_argument("--cublas", action="store_true", help="also time torch.matmul")
    p.add_argument("--flush", action="store_true",
                   help="zero 256 MB before each launch (cold L2, host cost hidden: for small problems)")
    p.add_argument("--b-layout", choices=("row", "col"), default="row",
                   help="B row-major K x N (default) or column-major (an N x K tensor transposed: x @ w.T)")
    p.add_argument("--json")
    args = p.parse_args()
    m, n, k = (int(v) for v in args.shape.split(","))
    flop = 2 * m * n * k
    flush = None
    if args.flush:
        import torch

        flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    entries = [(text, *prepare(text, m, n, k, args.dtype, flush, args.b_layout)) for text in args.config or DEFAULT_CONFIGS]
    if args.cublas:
        import torch

        a = torch.randn(m, k, device="cuda", dtype=getattr(torch, args.dtype))
        b = torch.randn(n, k, device="cuda", dtype=getattr(torch, args.dtype)).t() if args.b_layout == "col" else \
            torch.randn(k, n, device="cuda", dtype=getattr(torch, args.dtype))
        entries.append(("cuBLAS", {"config": "cublas"}, lambda: time_kernel(lambda: torch.matmul(a, b), flush=flush)))
    for _ in range(args.repeat):
        for _, row, timer in entries:
            if timer is not None:
                row.setdefault("ms_rounds", []).append(timer())
    out = []
    for text, row, timer in entries:
        out.append(row)
        if timer is None:
            print(f"{text:28s} ERROR {row['error']}", flush=True)
            continue
        runs = row["ms_rounds"]
        row["ms"] = statistics.median(runs)
        row["tflops"] = flop / row["ms"] / 1e9
        spread = f"  [{flop / max(runs) / 1e9:.1f} .. {flop / min(runs) / 1e9:.1f}]" if len(runs) > 1 else ""
        detail = (f"  regs {row['registers']}  spills {row['spill_bytes']}  err {row['rel_error']:.1e}"
                  if "registers" in row else "")
        print(f"{text:28s} {row['tflops']:7.1f} TFLOP/s{spread}  {row['ms']:.3f} ms{detail}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"shape": [m, n, k], "dtype": args.dtype, "repeat": args.repeat, "flush": args.flush,
                       "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
