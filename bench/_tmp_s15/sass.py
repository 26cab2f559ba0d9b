"""Temporary: PTX -> SASS locally, the consumer loop's key instructions in order."""
import os, re, subprocess, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import variants as V
from tilec.kernels import attention as A
os.environ["PATH"] = "/tmp/nvd/x/nvidia/cu13/bin:" + os.environ["PATH"]
name = sys.argv[1]
extra = dict(a.split("=") for a in sys.argv[2:])
extra = {k: (v == "1") for k, v in extra.items()}
kern = getattr(V, name) if hasattr(V, name) else A.attention_fwd_wgmma
q = np.zeros((1, 16, 4096, 128), np.float16).astype(np.float16)
ce = dict(BM=128, BN=128, D=128, GROUP=1, CAUSAL=False, **extra)
ptx = kern.compile(q, q, q, q, None, 0.1, arch="sm_90a", num_warps=8, num_stages=2, **ce).asm["ptx"]
Path(f"/tmp/{name}.ptx").write_text(ptx)
r = subprocess.run(f"ptxas -arch=sm_90a -v /tmp/{name}.ptx -o /tmp/{name}.cubin && cuobjdump -sass /tmp/{name}.cubin", shell=True, capture_output=True, text=True)
print(r.stderr.splitlines()[-2] if r.stderr else "")
lines = [l.split(";")[0].strip() for l in r.stdout.splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", l)]
key = re.compile(r"HGMMA|DEPBAR|WARPGROUP|MUFU|SHFL|BAR\.|SYNCS|BRA|FMNMX")
prev = None; n = 0
out = []
for l in lines:
    m = key.search(l)
    if not m:
        continue
    tag = m.group(0) if m.group(0) in ("MUFU", "SHFL", "FMNMX", "HGMMA") else l
    if tag == prev:
        n += 1; continue
    if prev is not None:
        out.append(f"{prev} x{n}" if n > 1 else prev)
    prev, n = tag, 1
out.append(prev)
print("\n".join(out))
