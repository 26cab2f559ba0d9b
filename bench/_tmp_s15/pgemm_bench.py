import sys, importlib.util
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent)); sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch
import tilec, tilec.lang as tl
from softmax import time_ms
import pgemm
spec = importlib.util.spec_from_file_location("lm", Path(__file__).resolve().parents[2] / "examples/lang/matmul.py")
lm = importlib.util.module_from_spec(spec); spec.loader.exec_module(lm)
print(torch.cuda.get_device_name())
sms = torch.cuda.get_device_properties(0).multi_processor_count
pers_ws = lm.matmul_persistent
pers_nows = tl.Kernel(lm.matmul_persistent.fn, num_warps=8, num_stages=3, bulk=True, producer=False)
cfg = dict(BM=128, BN=256, BK=64)
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 1024), (2048, 2048, 2048), (8192, 1024, 8192), (1024, 1024, 1024), (8192, 28672, 4096)]
for m, n, k in shapes:
    a = torch.randn(m, k, device="cuda", dtype=torch.float16); b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ref = (a.float() @ b.float())
    fl = 2 * m * n * k
    tiles = -(-m // 128) * -(-n // 256)
    row = {}
    def check(c):
        return ((c.float() - ref).abs().max() / ref.abs().max()).item()
    for name, fn in [
        ("lang ws", lambda c: lm.matmul_wgmma[lm.grid(m, n, **cfg)](a, b, c, arch="sm_90a", **cfg)),
        ("pers ws", lambda c: pers_ws[(min(tiles, sms),)](a, b, c, min(tiles, sms), arch="sm_90a", **cfg)),
        ("pers nows", lambda c: pers_nows[(min(tiles, sms),)](a, b, c, min(tiles, sms), arch="sm_90a", **cfg)),
        ("tilec", lambda c: tilec.matmul(a, b, out=c)),
        ("cublas", lambda c: torch.matmul(a, b, out=c)),
    ]:
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
        try:
            fn(c); torch.cuda.synchronize()
        except Exception as e:
            print(name, type(e).__name__, str(e)[:200]); continue
        err = check(c)
        row[name] = fl / time_ms(lambda: fn(c), batches=20, batch=5) / 1e9
        if err > 1e-2: print(name, "ERR", err)
    print(f"{m}x{n}x{k}: " + "  ".join(f"{k_} {v:6.1f}" for k_, v in row.items()), flush=True)
