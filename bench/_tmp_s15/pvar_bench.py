import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent)); sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch
from softmax import time_ms
import pvar
lm = pvar.lm
print(torch.cuda.get_device_name(), flush=True)
cfg = dict(BM=128, BN=256, BK=64)
for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16); b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    ref = a.float() @ b.float()
    fl = 2 * m * n * k
    g = lm.grid(m, n, **cfg)
    out = []
    for name, f in [("lang", lambda: lm.matmul_wgmma[g](a, b, c, arch="sm_90a", **cfg)),
                    ("once", lambda: pvar.once[g](a, b, c, arch="sm_90a", **cfg)),
                    ("hoisted", lambda: pvar.hoisted[g](a, b, c, arch="sm_90a", **cfg)),
                    ("pers", lambda: lm.matmul_persistent[g](a, b, c, g[0], arch="sm_90a", **cfg))]:
        c.fill_(float("nan")); f(); torch.cuda.synchronize()
        err = ((c.float() - ref).abs().max() / ref.abs().max()).item()
        out.append((name, fl / time_ms(f, batches=20, batch=5) / 1e9, err))
    print(f"{m}x{n}x{k}: " + "  ".join(f"{x} {y:.0f} ({e:.0e})" for x, y, e in out), flush=True)
