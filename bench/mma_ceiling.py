"""The mma.sync ceiling: how fast m16n8k16 runs from registers alone, on this GPU.

    python bench/mma_ceiling.py [--json out.json]

A fragment-level kernel, built with xDSL's builders and compiled by tilec's
own pipeline (tile-to-llvm, LLVM NVPTX, the driver), keeps A and B fragments
in registers and chains ``chains`` independent accumulators through
``iters`` iterations of mma.sync; nothing touches memory inside the loop.
It is the roof a GEMM built on mma.sync can approach (issue: GEMM
performance). Reported: median TFLOP/s over many timed launches (CUDA
events), for a few occupancy/ILP settings, and the best.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from xdsl.builder import Builder
from xdsl.dialects import arith, func, llvm, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, IndexType, IntAttr, UnitAttr, ModuleOp, f32, i32
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

import tilec
from tilec.dialects import frag, tile
from tilec.dialects.abi import DTYPE_ATTR, LAUNCH_ATTR, OUTPUT_ATTR
from tilec.passes.lowering.llvm_build import offset
from tilec.layout import MMA_M16N8K16_F16

FLOPS_PER_MMA = 2 * 16 * 8 * 16


def ceiling_kernel(chains: int, block_threads: int) -> ModuleOp:
    """``out[thread] = sum of the accumulators`` after ``iters`` rounds of ``chains`` mma.sync."""
    out_t, iters_t = llvm.LLVMPointerType(IntAttr(1)), i32
    body = Block(arg_types=[out_t, iters_t])
    b = Builder(InsertPoint.at_end(body))
    out, iters = body.args
    tid = b.insert(tile.ThreadIdOp("x")).result
    tid32 = b.insert(arith.IndexCastOp(tid, i32)).result
    # Non-zero f16 pairs near 2^-10 (zeros can run faster than real data): each mma adds
    # about 16 * 2^-20 to an accumulator, so thousands of iterations stay finite.
    bits = b.insert(arith.ConstantOp.from_int_and_width(0x1400_1400, 32)).result
    a_reg = b.insert(arith.XOrIOp(bits, tid32)).result
    b_reg = b.insert(arith.OrIOp(bits, tid32)).result
    zero = b.insert(arith.ConstantOp(FloatAttr(0.0, f32))).result
    lo = b.insert(arith.ConstantOp.from_int_and_width(0, IndexType())).result
    one = b.insert(arith.ConstantOp.from_int_and_width(1, IndexType())).result
    hi = b.insert(arith.IndexCastOp(iters, IndexType())).result

    acc0 = [zero] * (4 * chains)
    loop_body = Block(arg_types=[IndexType(), *([f32] * len(acc0))])
    lb = Builder(InsertPoint.at_end(loop_body))
    accs = list(loop_body.args[1:])
    new = []
    for c in range(chains):
        mma = lb.insert(frag.MmaOp(MMA_M16N8K16_F16, [a_reg] * 4, [b_reg] * 2, accs[4 * c : 4 * c + 4]))
        new += list(mma.d)
    lb.insert(scf.YieldOp(*new))
    loop = b.insert(scf.ForOp(lo, hi, one, acc0, Region(loop_body)))

    total = loop.results[0]
    for v in loop.results[1:]:
        total = b.insert(arith.AddfOp(total, v)).result
    ptr = offset(b, out, tid32, f32)
    b.insert(frag.StoreOp(total, ptr))
    b.insert(func.ReturnOp())

    arg_attrs = ArrayAttr([DictionaryAttr({DTYPE_ATTR: f32, OUTPUT_ATTR: UnitAttr()}), DictionaryAttr({})])
    fn = func.FuncOp("mma_ceiling", ([out_t, iters_t], []), Region(body), arg_attrs=arg_attrs)
    fn.attributes[LAUNCH_ATTR] = tile.LaunchAttr([tile.DYNAMIC, 1, 1], [block_threads, 1, 1], 0)
    return ModuleOp([fn])


def measure(chains: int, warps: int, blocks_per_sm: int, iters: int, repeats: int) -> dict:
    import torch

    threads = 32 * warps
    kernel = tilec.compile(ceiling_kernel(chains, threads))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = sms * blocks_per_sm
    out = torch.full((grid * threads,), float("nan"), device="cuda", dtype=torch.float32)
    launch = lambda: kernel(out, iters, grid=(grid, 1, 1))  # noqa: E731
    for _ in range(3):
        launch()
    torch.cuda.synchronize()
    if torch.isnan(out[:threads]).any():
        raise RuntimeError("the ceiling kernel left its output unwritten")
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    median = statistics.median(times)
    flops = grid * warps * iters * chains * FLOPS_PER_MMA
    return {"chains": chains, "warps": warps, "blocks_per_sm": blocks_per_sm, "grid": grid,
            "median_s": median, "tflops": flops / median / 1e12}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("needs torch with CUDA", file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 1
    rows = [measure(c, w, s, args.iters, args.repeats) for c, w, s in [(4, 4, 2), (8, 4, 2), (8, 8, 1), (8, 8, 2), (16, 4, 2)]]
    print(f"mma.sync m16n8k16 f16->f32 from registers, {torch.cuda.get_device_name(0)}")
    print(f"{'chains':>6} {'warps':>5} {'blk/SM':>6} {'TFLOP/s':>8}")
    for r in rows:
        print(f"{r['chains']:>6} {r['warps']:>5} {r['blocks_per_sm']:>6} {r['tflops']:>8.1f}")
    best = max(r["tflops"] for r in rows)
    print(f"ceiling: {best:.1f} TFLOP/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "rows": rows, "ceiling_tflops": best}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
