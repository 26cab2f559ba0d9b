"""Kernels built on the language's ``tl.gather`` and ``tl.topk``, against the same kernels in Triton and torch.

    python bench/gather_lang.py [--json out.json]

Each kernel (examples/lang/routing.py's) is written again for Triton (the same source but for the names), run
on fresh random inputs, checked first (NaN-poisoned outputs; against torch), then timed (the median of
batches of back-to-back calls: bench/softmax.py's timer). Rows, GB/s of the bytes read and written:

- ``nf4 dequant``: QLoRA's 4-bit NormalFloat weights decoded through their 16-value codebook
  (``tl.gather`` of a register vector by each nibble) and scaled by their group's absolute maximum, to f16,
  against Triton's ``tl.gather`` and torch's indexing (``codebook[codes] * absmax``);
- ``topk route``: a mixture-of-experts router (softmax over E experts' logits, the top K renormalised, and
  their experts' numbers: one ``tl.topk`` of keys packing both), against Triton's ``tl.topk`` and torch's
  ``softmax`` + ``topk``.
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

routing = _example("routing")  # the tilec kernels: examples/lang/routing.py


@triton.jit
def triton_nf4_dequant(packed_ptr, absmax_ptr, code_ptr, out_ptr, n_bytes, BLOCK: ttl.constexpr, GROUP: ttl.constexpr):
    offs = ttl.program_id(0) * BLOCK + ttl.arange(0, BLOCK)
    byte = ttl.load(packed_ptr + offs, mask=offs < n_bytes, other=0)
    codebook = ttl.load(code_ptr + ttl.arange(0, 16))
    high = ttl.gather(codebook, (byte >> 4).to(ttl.int32), 0)
    low = ttl.gather(codebook, (byte & 15).to(ttl.int32), 0)
    w = ttl.interleave(high, low)
    outs = ttl.program_id(0) * (2 * BLOCK) + ttl.arange(0, 2 * BLOCK)
    scale = ttl.load(absmax_ptr + outs // GROUP, mask=outs < 2 * n_bytes, other=0.0)
    ttl.store(out_ptr + outs, (w * scale).to(out_ptr.dtype.element_ty), mask=outs < 2 * n_bytes)


@triton.jit
def triton_topk_route(logits_ptr, weight_ptr, expert_ptr, tokens, E: ttl.constexpr, K: ttl.constexpr,
                      BT: ttl.constexpr):
    rows = ttl.program_id(0) * BT + ttl.arange(0, BT)
    cols = ttl.arange(0, E)
    inside = rows[:, None] < tokens
    x = ttl.load(logits_ptr + rows[:, None] * E + cols[None, :], mask=inside, other=0.0).to(ttl.float32)
    p = ttl.exp(x - ttl.max(x, axis=1)[:, None])
    p = p / ttl.sum(p, axis=1)[:, None]
    key = (p.to(ttl.int32, bitcast=True) & ~(E - 1)) | (E - 1 - cols[None, :])
    top = ttl.topk(key, K)
    expert = (E - 1) - (top & (E - 1))
    w = (top & ~(E - 1)).to(ttl.float32, bitcast=True)
    w = w / ttl.sum(w, axis=1)[:, None]
    outs = rows[:, None] * K + ttl.arange(0, K)[None, :]
    ttl.store(weight_ptr + outs, w, mask=inside)
    ttl.store(expert_ptr + outs, expert, mask=inside)


def _rate(nbytes: int, run) -> float:
    return round(nbytes / time_ms(run) / 1e6, 1)


def bench_nf4(n_bytes: int, block: int = 1024, group: int = 64) -> dict:
    packed = torch.randint(0, 256, (n_bytes,), device="cuda", dtype=torch.uint8)
    absmax = torch.rand(2 * n_bytes // group, device="cuda") + 0.5
    code = torch.tensor(routing.NF4, device="cuda")
    out = torch.full((2 * n_bytes,), float("nan"), device="cuda", dtype=torch.float16)
    grid = (-(-n_bytes // block),)

    def torch_dequant():
        codes = torch.stack([packed >> 4, packed & 15], -1).view(-1).long()
        return (code[codes] * absmax.repeat_interleave(group)).half()

    want = torch_dequant()
    runs = {"tilec": lambda: routing.nf4_dequant[grid](packed, absmax, code, out, n_bytes, BLOCK=block, GROUP=group),
            "triton": lambda: triton_nf4_dequant[grid](packed, absmax, code, out, n_bytes, BLOCK=block, GROUP=group),
            "torch": torch_dequant}
    row = {"kernel": "nf4 dequant", "shape": f"{2 * n_bytes} weights (groups of {group})"}
    for name, run in runs.items():
        if name != "torch":
            out.fill_(float("nan"))
            run()
            torch.cuda.synchronize()
            if not torch.equal(out, want):
                raise SystemExit(f"{name} nf4 dequant: wrong result")
        row[name] = _rate(n_bytes + 2 * n_bytes * 2 + absmax.numel() * 4, run)
    return row


def bench_route(tokens: int, e: int, k: int, bt: int = 16) -> dict:
    logits = torch.randn(tokens, e, device="cuda") * 3
    w = torch.full((tokens, k), float("nan"), device="cuda")
    ids = torch.full((tokens, k), -1, device="cuda", dtype=torch.int32)
    grid = (-(-tokens // bt),)
    want_w, want_ids = (torch.from_numpy(a).cuda() for a in routing.route_reference(logits.cpu().numpy(), k))

    def torch_route():
        top = torch.softmax(logits, -1).topk(k, -1)
        return top.values / top.values.sum(-1, keepdim=True), top.indices

    runs = {"tilec": lambda: routing.topk_route[grid](logits, w, ids, tokens, E=e, K=k, BT=bt),
            "triton": lambda: triton_topk_route[grid](logits, w, ids, tokens, E=e, K=k, BT=bt),
            "torch": torch_route}
    row = {"kernel": "topk route", "shape": f"{tokens} tokens, {e} experts, top {k}"}
    for name, run in runs.items():
        if name != "torch":
            w.fill_(float("nan"))
            ids.fill_(-1)
            run()
            torch.cuda.synchronize()
            if not torch.equal(ids, want_ids) or (w.double() - want_w).abs().max().item() > 2 * e * 2.0**-23:
                raise SystemExit(f"{name} topk route: wrong result")
        row[name] = _rate(tokens * e * 4 + tokens * k * 8, run)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    print(f"{torch.cuda.get_device_name()}; GB/s")
    rows = []
    for n_bytes in (1 << 22, 1 << 26):
        rows.append(bench_nf4(n_bytes))
        print(rows[-1])
    for tokens, e, k in ((16384, 64, 8), (16384, 128, 8), (65536, 8, 2), (16384, 256, 8)):
        rows.append(bench_route(tokens, e, k))
        print(rows[-1])
    for row in rows:
        row["tilec/triton"] = round(row["tilec"] / row["triton"], 3)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
