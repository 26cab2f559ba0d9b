"""Kernels built on the language's reshapes, joins and sorts, against the same kernels in Triton and torch.

    python bench/shapes_lang.py [--json out.json]

Each kernel (examples/lang/quantize.py's) is written again for Triton (the same source but for the names), run
on fresh random inputs, checked first (NaN-poisoned outputs; against torch), then timed (the median of
batches of back-to-back calls: bench/softmax.py's timer). Rows, GB/s of the bytes read and written:

- ``sort rows``: every row of an (M, N) f32 array sorted (``tl.sort``, a bitonic network on
  ``tile.split`` / ``tile.join``), one row a program, against Triton's ``tl.sort`` and ``torch.sort``;
- ``group quantize``: per-group int8 quantization of an f32 vector (``tl.reshape`` of a block into its
  groups, a maximum per group, the block back), against Triton's and torch's (``amax`` of a view).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as ttl

from lang import _example  # bench/lang.py's loader of examples/lang (this folder is on sys.path)
from softmax import time_ms  # bench/softmax.py's timer

quantize = _example("quantize")  # the tilec kernels: examples/lang/quantize.py
sort_rows, group_quantize = quantize.sort_rows, quantize.group_quantize


@triton.jit
def triton_sort_rows(x_ptr, o_ptr, N: ttl.constexpr):
    offs = ttl.program_id(0) * N + ttl.arange(0, N)
    ttl.store(o_ptr + offs, ttl.sort(ttl.load(x_ptr + offs)))


@triton.jit
def triton_group_quantize(x_ptr, q_ptr, s_ptr, n, BLOCK: ttl.constexpr, GROUP: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    x = ttl.load(x_ptr + offs, mask=offs < n, other=0.0)
    groups = ttl.reshape(x, (BLOCK // GROUP, GROUP))
    scale = ttl.maximum(ttl.max(ttl.abs(groups), axis=1), 1e-8) / 127.0
    q = ttl.reshape(groups / scale[:, None], (BLOCK,))
    ttl.store(q_ptr + offs, ttl.extra.cuda.libdevice.rint(q).to(ttl.int8), mask=offs < n)
    g = ttl.program_id(0) * (BLOCK // GROUP) + ttl.arange(0, BLOCK // GROUP)
    ttl.store(s_ptr + g, scale, mask=g * GROUP < n)


def _rate(nbytes: int, run) -> float:
    return round(nbytes / time_ms(run) / 1e6, 1)


def bench_sort(m: int, n: int) -> dict:
    x = torch.randn(m, n, device="cuda")
    o = torch.full_like(x, float("nan"))
    want = torch.sort(x, dim=-1).values
    runs = {"tilec": lambda: sort_rows[(m,)](x, o, N=n), "triton": lambda: triton_sort_rows[(m,)](x, o, N=n),
            "torch": lambda: torch.sort(x, dim=-1)}
    row = {"kernel": "sort rows", "shape": f"{m}x{n}"}
    for name, run in runs.items():
        if name != "torch":
            o.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            if not torch.equal(o, want):
                raise SystemExit(f"{name} sort {m}x{n}: wrong result")
        row[name] = _rate(2 * x.numel() * 4, run)
    return row


def bench_quantize(n: int, block: int = 1024, group: int = 128) -> dict:
    x = torch.randn(n, device="cuda") * (torch.rand(n, device="cuda") * 10 + 0.1)
    q = torch.full((n,), 99, device="cuda", dtype=torch.int8)
    s = torch.full((n // group,), float("nan"), device="cuda")
    grid = (-(-n // block),)

    def torch_quantize():
        scale = x.view(-1, group).abs().amax(1).clamp_min(1e-8) / 127.0
        return torch.round(x.view(-1, group) / scale[:, None]).to(torch.int8), scale

    want_q, want_s = torch_quantize()
    runs = {"tilec": lambda: group_quantize[grid](x, q, s, n, BLOCK=block, GROUP=group),
            "triton": lambda: triton_group_quantize[grid](x, q, s, n, BLOCK=block, GROUP=group),
            "torch": torch_quantize}
    row = {"kernel": "group quantize", "shape": f"{n} (groups of {group})"}
    for name, run in runs.items():
        if name != "torch":
            s.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            if not torch.allclose(s, want_s, rtol=1e-6) or (q.view(-1, group).int() - want_q.int()).abs().max() > 1:
                raise SystemExit(f"{name} group quantize: wrong result")
        row[name] = _rate(n * 4 + n + (n // group) * 4, run)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    print(f"{torch.cuda.get_device_name()}; GB/s")
    rows = []
    for m, n in ((65536, 128), (32768, 256), (8192, 1024)):
        rows.append(bench_sort(m, n))
        print(rows[-1])
    for n in (1 << 24, 1 << 26):
        rows.append(bench_quantize(n))
        print(rows[-1])
    for row in rows:
        row["tilec/triton"] = round(row["tilec"] / row["triton"], 3)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
