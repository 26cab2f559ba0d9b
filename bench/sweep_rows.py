"""Sweep the row kernels' tiling (bytes of a row a thread loads, :data:`tilec.kernels.row_tiling.TARGET_BYTES`)
per shape, against a device copy in the same run: what :func:`~tilec.kernels.row_tiling.row_tiling` should pick.

    python bench/sweep_rows.py [--json out.json]
"""

from __future__ import annotations

import argparse
import json

import torch

import tilec
import tilec.kernels.row_tiling as rt
from tilec.kernels import norms, softmax

from softmax import time_ms  # noqa: E402 - the same timer as bench/softmax.py

SHAPES = [(16384, 4096), (8192, 8192), (4096, 16384), (4096, 32768)]
TARGETS = [16, 32, 64, 128]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the results here too")
    args = p.parse_args()
    print(f"GPU: {torch.cuda.get_device_name()}")
    rows = []
    default = rt.TARGET_BYTES
    for dtype in (torch.float32, torch.bfloat16):
        for shape in SHAPES:
            x = torch.randn(shape, device="cuda", dtype=dtype)
            w, b = torch.randn(shape[1], device="cuda", dtype=dtype), torch.randn(shape[1], device="cuda", dtype=dtype)
            out = torch.empty_like(x)
            moved = 2 * x.numel() * x.element_size()
            copy = moved / time_ms(lambda: x.clone()) / 1e6
            for name, fn in (("softmax", lambda: tilec.softmax(x, out=out)),
                             ("layer", lambda: tilec.layer_norm(x, w, b, 1e-5, out=out)),
                             ("rms", lambda: tilec.rms_norm(x, w, 1e-6, out=out))):
                found = {}
                for target in TARGETS:
                    rt.TARGET_BYTES = target
                    softmax._FAST.clear()
                    norms._FAST.clear()
                    found[target] = round(moved / time_ms(fn) / 1e6 / copy, 3)
                rt.TARGET_BYTES = default
                rows.append({"kernel": name, "shape": list(shape), "dtype": str(dtype), "of_copy": found})
                print(f"{name:>8} {str(shape):>14} {str(dtype)[6:]:>9} copy {copy:6.0f} GB/s  " +
                      "  ".join(f"{t}B {v:.2f}" for t, v in found.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
