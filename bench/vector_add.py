"""1-D kernels in tilec.lang: examples/lang/vector_add.py against torch.add and Triton's tutorial vector add.

    python bench/vector_add.py [--json out.json]

Bandwidth = 3 x bytes of one operand (two read, one written) / time, the median of batches of
back-to-back calls timed as ``bench/softmax.py`` times them. BLOCK and num_warps are Triton's usual
choices; the same for the Triton kernel. Before session 31 every warp held the whole 1-D block (a
vector of no tile got a one-warp fragment), so 4 or 8 warps did the work 4 or 8 times over.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import torch
import triton
import triton.language as ttl

from softmax import time_ms  # bench/softmax.py's timer (this folder is on sys.path)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "lang" / "vector_add.py"
CONFIGS = [(512, 4), (1024, 4), (4096, 8)]  # (BLOCK, num_warps)


@triton.jit
def triton_add(a, b, c, n, BLOCK: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    mask = offs < n
    ttl.store(c + offs, ttl.load(a + offs, mask=mask) + ttl.load(b + offs, mask=mask), mask=mask)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    p.add_argument("--n", type=int, default=1 << 26)
    args = p.parse_args()
    spec = importlib.util.spec_from_file_location("lang_vector_add", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    n, rows = args.n, []
    print(f"{torch.cuda.get_device_name()}, n = {n}; GB/s")
    print(f"{'dtype':>9} {'BLOCK':>6} {'warps':>5} {'tilec':>7} {'triton':>7} {'torch':>7} {'t/torch':>7} {'t/triton':>8}  max err")
    for dtype in (torch.float32, torch.float16):
        a, b = (torch.randn(n, device="cuda", dtype=dtype) for _ in range(2))
        c = torch.full_like(a, float("nan"))
        gbs = lambda ms: 3 * n * a.element_size() / ms / 1e6  # noqa: E731
        torch_gbs = gbs(time_ms(lambda: torch.add(a, b, out=c)))
        for block, warps in CONFIGS:
            kernel = module.vector_add.with_options(num_warps=warps)
            run = lambda: kernel[(-(-n // block),)](a, b, c, BLOCK=block)  # noqa: E731
            c.fill_(float("nan"))
            run()
            err = (c.double() - (a.double() + b.double())).abs().max().item()
            ours = gbs(time_ms(run))
            theirs = gbs(time_ms(lambda: triton_add[(-(-n // block),)](a, b, c, n, BLOCK=block, num_warps=warps)))
            rows.append({"dtype": str(dtype), "block": block, "warps": warps, "tilec": round(ours, 1),
                         "triton": round(theirs, 1), "torch": round(torch_gbs, 1), "max_error": err})
            print(f"{str(dtype)[6:]:>9} {block:>6} {warps:>5} {ours:>7.0f} {theirs:>7.0f} {torch_gbs:>7.0f} "
                  f"{ours / torch_gbs:>7.2f} {ours / theirs:>8.2f}  {err:.1e}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
