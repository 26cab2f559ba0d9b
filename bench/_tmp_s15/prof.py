import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import torch, torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
from tilec.kernels import attention as A
which = sys.argv[1]
d, s = 128, 4096
b, h = 16384 // s, 2048 // d
q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
out = torch.empty_like(q)
for _ in range(3):
    if which == "cudnn":
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            F.scaled_dot_product_attention(q, k, v)
    else:
        bn = int(which)
        (qq, kk, vv, oo, lse, scale), ce = A._arguments(q, k, v, out, None, False, None, True)
        ce.update(BM=128, BN=bn)
        A.attention_fwd_wgmma[(s // 128, b * h)](qq, kk, vv, oo, lse, scale, arch="sm_90a", num_warps=8, num_stages=2, **ce)
torch.cuda.synchronize()
