"""Layer norm's backward pass: examples/lang/layer_norm.py (Triton's tutorial structure in tilec.lang)
against that structure in Triton and against torch's kernel (``aten.native_layer_norm_backward``).

    python bench/layer_norm_backward.py [--json out.json]

Both tile kernels are two launches: dx per row with dw and db added into ``GROUP`` rows of partial
sums behind spin locks (``atomic_cas``), then a column-slice sum of those rows. Triton's choices are
the tutorial's: ``GROUP`` 128 / 96 / 64 by N, one row a program, ``num_warps = min(max(BN // 256, 1),
8)``, a final sum of 32 x 128 tiles; tilec runs the same. Each timed call zeroes the locks, the
counts and the partial sums first (as the tutorial's wrapper allocates them zeroed), the same for
both. Bandwidth = bytes of x, dy and dx (3 M N elements) / time, the tutorial's measure; the median of
batches of back-to-back calls (bench/softmax.py's timer). Each result is checked against torch's
float64 autograd first (outputs poisoned with NaN).
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

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "lang" / "layer_norm.py"
SHAPES = [(4096, 1024), (4096, 2048), (4096, 4096), (4096, 8192), (16384, 1024)]


@triton.jit
def triton_dx(dx_ptr, dy_ptr, dw_ptr, db_ptr, x_ptr, w_ptr, mean_ptr, rstd_ptr, lock_ptr, stride, n,
              GROUP: ttl.constexpr, BN: ttl.constexpr):
    """dx of a row, and its share of dw and db added into row ``row % GROUP`` of the partial sums."""
    row = ttl.program_id(0)
    cols = ttl.arange(0, BN)
    inside = cols < n
    x = ttl.load(x_ptr + row * stride + cols, mask=inside, other=0).to(ttl.float32)
    dy = ttl.load(dy_ptr + row * stride + cols, mask=inside, other=0).to(ttl.float32)
    w = ttl.load(w_ptr + cols, mask=inside).to(ttl.float32)
    rstd = ttl.load(rstd_ptr + row)
    xhat = ttl.where(inside, (x - ttl.load(mean_ptr + row)) * rstd, 0.0)
    wdy = ttl.where(inside, w * dy, 0.0)
    c1 = ttl.sum(xhat * wdy, axis=0) / n
    c2 = ttl.sum(wdy, axis=0) / n
    ttl.store(dx_ptr + row * stride + cols, (wdy - (xhat * c1 + c2)) * rstd, mask=inside)
    g = row % GROUP
    lock = lock_ptr + g
    count = lock_ptr + GROUP + g
    part_dw = dy * xhat
    part_db = dy
    while ttl.atomic_cas(lock, 0, 1) == 1:
        pass
    if ttl.load(count) == 0:
        ttl.atomic_xchg(count, 1)
    else:
        part_dw += ttl.load(dw_ptr + g * n + cols, mask=inside)
        part_db += ttl.load(db_ptr + g * n + cols, mask=inside)
    ttl.store(dw_ptr + g * n + cols, part_dw, mask=inside)
    ttl.store(db_ptr + g * n + cols, part_db, mask=inside)
    ttl.debug_barrier()
    ttl.atomic_xchg(lock, 0)


@triton.jit
def triton_dwdb(dw_ptr, db_ptr, out_dw, out_db, m, n, BM: ttl.constexpr, BN: ttl.constexpr):
    """The sum of the ``m`` partial rows over a slice of ``BN`` columns."""
    cols = ttl.program_id(0) * BN + ttl.arange(0, BN)
    acc_w = ttl.zeros((BM, BN), dtype=ttl.float32)
    acc_b = ttl.zeros((BM, BN), dtype=ttl.float32)
    for i in range(0, m, BM):
        rows = i + ttl.arange(0, BM)
        inside = (rows[:, None] < m) & (cols[None, :] < n)
        acc_w += ttl.load(dw_ptr + rows[:, None] * n + cols[None, :], mask=inside, other=0.0)
        acc_b += ttl.load(db_ptr + rows[:, None] * n + cols[None, :], mask=inside, other=0.0)
    ttl.store(out_dw + cols, ttl.sum(acc_w, axis=0), mask=cols < n)
    ttl.store(out_db + cols, ttl.sum(acc_b, axis=0), mask=cols < n)


def group_rows(n: int) -> int:
    """The tutorial's number of partial-sum rows for rows of ``n``."""
    return 128 if n <= 1024 else 96 if n <= 4096 else 64


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    spec = importlib.util.spec_from_file_location("lang_layer_norm", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    print(f"{torch.cuda.get_device_name()}; GB/s (3 M N elements / time)")
    print(f"{'shape':>14} {'dtype':>9} {'tilec':>7} {'triton':>7} {'torch':>7} {'t/triton':>8} {'t/torch':>7}  max rel err")
    rows = []
    for dtype in (torch.float16, torch.float32):
        for m, n in SHAPES:
            x = torch.randn(m, n, device="cuda", dtype=dtype) * 2 + 1
            w, b = (torch.randn(n, device="cuda", dtype=dtype) for _ in range(2))
            dy = torch.randn_like(x)
            x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
            torch.nn.functional.layer_norm(x64, (n,), w64, b64, 1e-5).backward(dy.double())
            mean = x.float().mean(1)
            rstd = torch.rsqrt(x.float().var(1, unbiased=False) + 1e-5)
            bn = 1 << (n - 1).bit_length()
            warps, group = min(max(bn // 256, 1), 8), group_rows(n)
            dx = torch.empty_like(x)
            dw, db = (torch.empty(group, n, device="cuda") for _ in range(2))
            locks = torch.empty(2 * group, device="cuda", dtype=torch.int32)
            fdw, fdb = torch.empty_like(w), torch.empty_like(w)
            dx_kernel = mod.layer_norm_backward_dx.with_options(num_warps=warps)

            def ours():
                locks.zero_()
                dw.zero_()
                db.zero_()
                dx_kernel[(m,)](dx, dy, dw, db, locks[group:], locks[:group], x, w, mean, rstd, GROUP=group, N=bn)
                mod.layer_norm_backward_dwdb[(-(-n // 128),)](dw, db, fdw, fdb, BM=32, BN=128)

            def theirs():
                locks.zero_()
                dw.zero_()
                db.zero_()
                triton_dx[(m,)](dx, dy, dw, db, x, w, mean, rstd, locks, n, n, GROUP=group, BN=bn, num_warps=warps)
                triton_dwdb[(-(-n // 128),)](dw, db, fdw, fdb, min(group, m), n, BM=32, BN=128)

            mean2, rstd2 = mean[:, None], rstd[:, None]

            def aten():
                return torch.ops.aten.native_layer_norm_backward(dy, x, [n], mean2, rstd2, w, b, [True, True, True])

            errors = {}
            for name, fn in (("tilec", ours), ("triton", theirs)):
                for t in (dx, fdw, fdb):
                    t.fill_(float("nan"))
                fn()
                errors[name] = max(((got.double() - ref).abs().max() / ref.abs().max()).item()
                                   for got, ref in zip((dx, fdw, fdb), (x64.grad, w64.grad, b64.grad)))
            gbs = lambda ms: 3 * m * n * x.element_size() / ms / 1e6  # noqa: E731
            times = {"tilec": gbs(time_ms(ours)), "triton": gbs(time_ms(theirs)), "torch": gbs(time_ms(aten))}
            row = {"shape": [m, n], "dtype": str(dtype), **{k: round(v, 1) for k, v in times.items()},
                   "tilec/triton": round(times["tilec"] / times["triton"], 3),
                   "tilec/torch": round(times["tilec"] / times["torch"], 3),
                   "max_rel_error": {k: float(f"{v:.2e}") for k, v in errors.items()}}
            rows.append(row)
            print(f"{str((m, n)):>14} {str(dtype)[6:]:>9} {times['tilec']:7.0f} {times['triton']:7.0f} "
                  f"{times['torch']:7.0f} {row['tilec/triton']:8.3f} {row['tilec/torch']:7.3f}  "
                  f"tilec {errors['tilec']:.1e}, triton {errors['triton']:.1e}")
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
