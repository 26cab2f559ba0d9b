"""tilec.attention and the language GEMM for compute-sanitizer (memcheck, racecheck).

    compute-sanitizer --tool memcheck  --report-api-errors no --error-exitcode 3 python tests/gpu/sanitize_attention.py
    compute-sanitizer --tool racecheck --error-exitcode 3 python tests/gpu/sanitize_attention.py

(``--report-api-errors no``: torch and cuda-python probe the driver with ``cuGetProcAddress`` for
entry points it lacks; memcheck counts each refusal, 34 on an H100 with CUDA 13, as an error of
the program. They are host calls, not kernel accesses.)

One config of each path, small (the sanitizers are slow): attention with GQA, a ragged sequence and
causal masking (D = 64 and 128: K/V tiles staged by a cp.async pipeline, warp-level reductions),
on the mma.sync kernel (``arch="sm_80"``) and, on sm_90, the wgmma kernel (two K loops sharing
the stages, P from registers; at D = 128, and with long queries (blocks of 192 rows), a producer
warpgroup issues the K/V copies), and
examples/lang/matmul.py's GEMMs on ragged sizes: mma.sync, and on sm_90 the wgmma GEMM with its
producer warpgroup and wgmmas in flight across K steps, and the persistent GEMM (three blocks
looping over six tiles, with and without a producer). Fresh random inputs, outputs
poisoned with NaN, float64 references. Exits 0 when every result is within tolerance, 1 on a
mismatch (printed), 2 without a GPU.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path


def main() -> int:
    try:
        import torch
    except ImportError:
        print("torch is needed to make the inputs on the GPU")
        return 2
    if not torch.cuda.is_available():
        print("no GPU")
        return 2
    import tilec
    import tilec.lang as tl

    bad = 0
    archs = ["sm_80"] + (["sm_90"] if torch.cuda.get_device_capability() == (9, 0) else [])
    cases = [(arch, *shape) for arch in archs
             for shape in ((1, 4, 2, 70, 300, 64, True), (1, 2, 1, 33, 200, 128, False), (1, 2, 2, 200, 200, 128, True))]
    if "sm_90" in archs:  # long queries: blocks of 192 rows, three consumer warpgroups and the producer
        cases += [("sm_90", 1, 2, 1, 8200, 130, 64, True), ("sm_90", 1, 1, 1, 4100, 200, 128, False)]
    for arch, b, hq, hkv, sq, sk, d, causal in cases:
        q = torch.randn(b, hq, sq, d, device="cuda").half()
        k, v = (torch.randn(b, hkv, sk, d, device="cuda").half() for _ in range(2))
        out = torch.full_like(q, float("nan"))
        tilec.attention(q, k, v, causal=causal, out=out, arch=arch)
        torch.cuda.synchronize()
        kk, vv = (x.double().repeat_interleave(hq // hkv, 1) for x in (k, v))
        s = q.double() @ kk.transpose(-1, -2) / math.sqrt(d)
        if causal:
            s = s.masked_fill(~torch.ones(sq, sk, dtype=torch.bool, device="cuda").tril(), float("-inf"))
        ref = torch.softmax(s, -1) @ vv
        err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
        ok = not out.isnan().any().item() and err < 3e-3
        print(f"attention {arch} {(b, hq, hkv, sq, sk, d)} causal={causal} rel err {err:.1e} {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    spec = importlib.util.spec_from_file_location("lang_matmul", Path(__file__).resolve().parents[2] / "examples" /
                                                  "lang" / "matmul.py")
    mm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mm)
    m, n, kdim = 200, 136, 72
    a, bm = torch.randn(m, kdim, device="cuda").half(), torch.randn(kdim, n, device="cuda").half()
    c = torch.full((m, n), float("nan"), device="cuda").half()
    ref = a.double() @ bm.double()
    runs = [("mma.sync", lambda: mm.matmul[mm.grid(m, n)](a, bm, c, **mm.CONFIG))]
    if torch.cuda.get_device_capability() == (9, 0):  # the producer warpgroup, wgmmas in flight
        runs.append(("wgmma + producer", lambda: mm.matmul_wgmma[mm.grid(m, n, **mm.CONFIG_WGMMA)](
            a, bm, c, arch="sm_90a", **mm.CONFIG_WGMMA)))
        cfg = dict(BM=128, BN=64, BK=32)  # 6 tiles over 3 blocks: the persistent loop goes round
        for producer in (True, False):
            kernel = tl.Kernel(mm.matmul_persistent.fn, num_warps=8, num_stages=3, bulk=True, producer=producer)
            runs.append((f"persistent{' + producer' if producer else ''}",
                         lambda kernel=kernel: kernel[(3,)](a, bm, c, arch="sm_90a", **cfg)))
    for name, run in runs:
        c.fill_(float("nan"))
        run()
        torch.cuda.synchronize()
        err = ((c.double() - ref).abs().max() / ref.abs().max()).item()
        ok = not c.isnan().any().item() and err < 3e-3
        print(f"language matmul ({name}) {(m, n, kdim)} rel err {err:.1e} {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
