"""Temporary driver: time FA3-schedule variants beside attention_fwd_wgmma; dump PTX."""
import os, sys, subprocess
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch
import torch.nn.functional as F
import tilec.lang as tl
from tilec.kernels import attention as A
from softmax import time_ms
import variants as V

out_dir = Path(os.environ.get("OUT", "/tmp"))
print(torch.cuda.get_device_name())
kernels = {
    "base": (A.attention_fwd_wgmma, {}),
    "base_turns": (V.base_turns, {}),
    "ov": (V.ov, {}),
    "ov_fa3": (V.ov_fa3, {}),
    "ov_fa3_turns": (V.ov_fa3, {"TURNS": True}),
    "ov_fa3b": (V.ov_fa3b, {}),
    "ov_fa3b_turns": (V.ov_fa3b, {"TURNS": True}),
}
sel = sys.argv[1].split(",") if len(sys.argv) > 1 else list(kernels)
shapes = [(128, 4096, False), (128, 4096, True), (128, 16384, False)]
for d, s, causal in shapes:
    b, h = 16384 // s, 2048 // d
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    flops = 4 * b * h * s * s * d / (2 if causal else 1)
    for name in sel:
        kernel, extra = kernels[name]
        out = torch.full_like(q, float("nan"))
        (qq, kk, vv, oo, lse, scale), ce = A._arguments(q, k, v, out, None, causal, None, True)
        ce.update(BM=128, BN=128, **extra)
        g = (-(-s // 128), b * h)
        run = lambda: kernel[g](qq, kk, vv, oo, lse, scale, arch="sm_90a", num_warps=8, num_stages=2, **ce)
        try:
            run(); torch.cuda.synchronize()
        except Exception as e:
            print(f"D {d} S {s} causal {causal} {name}: {type(e).__name__}: {str(e)[:300]}")
            continue
        err = ((out.float() - want.float()).abs().max() / want.float().abs().max()).item()
        tf = flops / time_ms(run, batches=10, batch=5) / 1e9
        print(f"D {d} S {s} causal {int(causal)} {name:14s}: {tf:7.1f} TFLOP/s  err {err:.1e}", flush=True)
        if False:
            ptx = kernel.compile(qq, kk, vv, oo, lse, scale, arch="sm_90a", num_warps=8, num_stages=2, **ce).asm["ptx"]
            p = out_dir / f"{name}.ptx"
            p.write_text(ptx)
            subprocess.run(f"ptxas -arch=sm_90a -v {p} -o {out_dir}/{name}.cubin 2> {out_dir}/{name}.ptxas; "
                           f"cuobjdump -sass {out_dir}/{name}.cubin > {out_dir}/{name}.sass 2>&1 || "
                           f"nvdisasm {out_dir}/{name}.cubin > {out_dir}/{name}.sass 2>&1; rm -f {out_dir}/{name}.cubin",
                           shell=True)
