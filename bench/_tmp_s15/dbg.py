import sys, importlib.util, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch, tilec.lang as tl
import pgemm
which, m, n, k = sys.argv[1], *map(int, sys.argv[2:5])
spec = importlib.util.spec_from_file_location("lm", Path(__file__).resolve().parents[2] / "examples/lang/matmul.py")
lm = importlib.util.module_from_spec(spec); spec.loader.exec_module(lm)
cfg = dict(BM=128, BN=256, BK=64)
a = torch.randn(m, k, device="cuda", dtype=torch.float16); b = torch.randn(k, n, device="cuda", dtype=torch.float16)
c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
tiles = -(-m // 128) * -(-n // 256)
g = min(tiles, 132)
t0 = time.time()
if which == "lang":
    kern = lm.matmul_wgmma; args = (a, b, c); grid = lm.grid(m, n, **cfg)
else:
    kern = tl.Kernel(pgemm.matmul_persistent.fn, num_warps=8, num_stages=3, bulk=True, producer=(which == "ws"))
    args = (a, b, c, g); grid = (g,)
ck = kern.compile(*args, arch="sm_90a", **cfg)
print(which, "compiled", round(time.time() - t0, 1), flush=True)
kern[grid](*args, arch="sm_90a", **cfg)
torch.cuda.synchronize()
ref = a.float() @ b.float()
print(which, m, n, k, "ran", round(time.time() - t0, 1), "err", ((c.float() - ref).abs().max() / ref.abs().max()).item(), flush=True)
