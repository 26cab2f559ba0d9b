import sys, numpy as np
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "lang"))
from attention_overlap import reference
import variants as V
rng = np.random.default_rng(0)
q = rng.standard_normal((1, 2, 150, 64)).astype(np.float16)
k, v = (rng.standard_normal((1, 1, 200, 64)).astype(np.float16) for _ in range(2))
for name, kern, extra in [(a, getattr(V, a.split("+")[0]), {"TURNS": True} if "+" in a else {}) for a in sys.argv[1].split(",")]:
    for causal in (False, True):
        for after in sys.argv[2].split(","):
            after = None if after == "none" else after
            o = np.full_like(q, np.nan)
            kern.interpret(q, k, v, o, None, 1 / 8.0, grid=(2, 2), after=after, num_warps=8,
                           BM=128, BN=64, D=64, GROUP=2, CAUSAL=causal, **extra)
            ref = reference(q, k, v, causal)
            print(name, causal, after, np.abs(o - ref).max() / np.abs(ref).max(), flush=True)
