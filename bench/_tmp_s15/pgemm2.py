import sys, importlib.util
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch
from softmax import time_ms
spec = importlib.util.spec_from_file_location("lm", Path(__file__).resolve().parents[2] / "examples/lang/matmul.py")
lm = importlib.util.module_from_spec(spec); spec.loader.exec_module(lm)
print(torch.cuda.get_device_name(), flush=True)
cfg = dict(BM=128, BN=256, BK=64)
for m, n, k in [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 8192, 1024)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16); b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    fl = 2 * m * n * k
    tiles = -(-m // 128) * -(-n // 256)
    out = []
    f = lambda: lm.matmul_wgmma[lm.grid(m, n, **cfg)](a, b, c, arch="sm_90a", **cfg)
    out.append(("lang", fl / time_ms(f, batches=20, batch=5) / 1e9))
    for blocks in (132, 264, tiles):
        for group in (8, 16):
            f = lambda: lm.matmul_persistent[(blocks,)](a, b, c, blocks, arch="sm_90a", GROUP=group, **cfg)
            out.append((f"p{blocks}g{group}", fl / time_ms(f, batches=20, batch=5) / 1e9))
    f = lambda: torch.matmul(a, b, out=c)
    out.append(("cublas", fl / time_ms(f, batches=20, batch=5) / 1e9))
    print(f"{m}x{n}x{k}: " + " ".join(f"{x} {y:.0f}" for x, y in out), flush=True)
