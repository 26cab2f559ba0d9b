"""Time several matmul configurations on one shape (GPU), to see which knob matters.

    python bench/sweep_configs.py [--shape 4096,4096,4096] [--dtype float16]
        [--config 128x128x32/4x2/4[+aligned][+bulk] ...] [--cublas] [--json out.json]

``+aligned`` compiles the kernel with ``tile.aligned_rows = 16`` on every
view (the specialisation ``tilec.matmul`` picks for aligned, row-contiguous
operands); ``+bulk`` (sm_90, implies ``+aligned``) loads the K tiles with
bulk tensor copies (TMA) instead of ``cp.async``.

Each configuration is compiled through tilec's pipeline, checked once against
a float64 reference (NaN-poisoned output first), then timed: the median of
many CUDA-event-timed launches of the compiled kernel itself (the launcher's
host overhead is hidden by queueing launches back to back).  ``ptxas -v``'s
registers/spills are reported beside each time so a slow entry can be told
apart from a spilling one.  The mma.sync ceiling and the issue's targets live
in ``bench/gemm.py``; this is the quick lever-finding tool.
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
    from tilec.matmul_config import MatmulConfig

    base, *flags = text.split("+")
    block, warps, stages = base.split("/")
    return MatmulConfig(block=tuple(int(v) for v in block.split("x")),
                        warps=tuple(int(v) for v in warps.split("x")), stages=int(stages), bulk="bulk" in flags)


def aligned_kernel(dtype: str, config):
    """The row-major matmul kernel with ``tile.aligned_rows = 16`` on A, B and C (torch tensors are)."""
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, i64

    import tilec
    from tilec.matmul import MatmulSpec, build_module

    module = build_module(MatmulSpec(dtype, dtype))
    fn = next(iter(module.ops))
    fn.arg_attrs = ArrayAttr([DictionaryAttr({"tile.aligned_rows": IntegerAttr(16, i64)})] * 3)
    return tilec.compile(module, pipeline=config.pipeline())


def time_kernel(launch, reps: int = 50) -> float:
    """Median milliseconds of ``reps`` launches, each between two CUDA events."""
    import torch

    for _ in range(5):
        launch()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch()
        end.record()
        times.append((start, end))
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in times)


def measure(config_text: str, m: int, n: int, k: int, dtype: str) -> dict:
    import torch

    import tilec
    from tilec.codegen.ptxas import kernel_resources
    from tilec.matmul import plan_matmul

    config = parse_config(config_text)
    aligned = "+aligned" in config_text or "+bulk" in config_text  # bulk copies need aligned rows
    tdtype = getattr(torch, dtype)
    a = torch.randn(m, k, device="cuda", dtype=tdtype)
    b = torch.randn(k, n, device="cuda", dtype=tdtype)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=tdtype)
    row = {"config": config_text}
    try:
        kernel = aligned_kernel(dtype, config) if aligned else tilec.matmul_kernel(a, b, out=c, config=config)
        res = kernel_resources(kernel.asm["ptx"], kernel.arch)[kernel.name]
        row.update(registers=res.registers, spill_bytes=res.spill_stores + res.spill_loads)
    except Exception as e:  # a configuration the pipeline refuses is a result too
        row["error"] = f"{type(e).__name__}: {e}"[:300]
        return row
    plan = plan_matmul(a, b, out=c, config=config)
    args = plan.kernel_args(kernel, c)
    grid = (plan.grid, 1, 1)
    kernel(*args, grid=grid)
    torch.cuda.synchronize()
    rows = torch.randint(0, m, (256,), device="cuda")
    ref = a[rows].double() @ b.double()
    row["rel_error"] = ((c[rows].double() - ref).norm() / ref.norm()).item()
    ms = time_kernel(lambda: kernel(*args, grid=grid))
    row["ms"] = ms
    row["tflops"] = 2 * m * n * k / ms / 1e9
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="4096,4096,4096")
    p.add_argument("--dtype", default="float16")
    p.add_argument("--config", action="append")
    p.add_argument("--cublas", action="store_true", help="also time torch.matmul")
    p.add_argument("--json")
    args = p.parse_args()
    m, n, k = (int(v) for v in args.shape.split(","))
    out = []
    for text in args.config or DEFAULT_CONFIGS:
        row = measure(text, m, n, k, args.dtype)
        out.append(row)
        if "error" in row:
            print(f"{text:20s} ERROR {row['error']}", flush=True)
        else:
            print(f"{text:20s} {row['tflops']:7.1f} TFLOP/s  {row['ms']:.3f} ms  regs {row['registers']}"
                  f"  spills {row['spill_bytes']}  err {row['rel_error']:.1e}", flush=True)
    if args.cublas:
        import torch

        a = torch.randn(m, k, device="cuda", dtype=getattr(torch, args.dtype))
        b = torch.randn(k, n, device="cuda", dtype=getattr(torch, args.dtype))
        ms = time_kernel(lambda: torch.matmul(a, b))
        print(f"{'cuBLAS':20s} {2 * m * n * k / ms / 1e9:7.1f} TFLOP/s  {ms:.3f} ms", flush=True)
        out.append({"config": "cublas", "ms": ms, "tflops": 2 * m * n * k / ms / 1e9})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"shape": [m, n, k], "dtype": args.dtype, "rows": out}, f, indent=1)


if __name__ == "__main__":
    main()
