import sys, importlib.util
from pathlib import Path
import torch
spec = importlib.util.spec_from_file_location("lm", Path(__file__).resolve().parents[2] / "examples/lang/matmul.py")
lm = importlib.util.module_from_spec(spec); spec.loader.exec_module(lm)
cfg = dict(BM=128, BN=256, BK=64)
m = n = k = 8192
a = torch.randn(m, k, device="cuda", dtype=torch.float16); b = torch.randn(k, n, device="cuda", dtype=torch.float16)
c = torch.empty(m, n, device="cuda", dtype=torch.float16)
tiles = 2048
for _ in range(3):
    if sys.argv[1] == "lang":
        lm.matmul_wgmma[lm.grid(m, n, **cfg)](a, b, c, arch="sm_90a", **cfg)
    else:
        bl = int(sys.argv[1])
        lm.matmul_persistent[(bl,)](a, b, c, bl, arch="sm_90a", **cfg)
torch.cuda.synchronize()
