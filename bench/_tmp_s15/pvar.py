import tilec.lang as tl
import importlib.util
from pathlib import Path
spec = importlib.util.spec_from_file_location("lm", Path(__file__).resolve().parents[2] / "examples/lang/matmul.py")
lm = importlib.util.module_from_spec(spec); spec.loader.exec_module(lm)


@tl.kernel(num_warps=8, num_stages=3, bulk=True, producer=True)
def once(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr = 8):
    M, N, K = a.shape[0], b.shape[1], a.shape[1]
    warp = tl.warp_id()
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    pid = tl.block_id(0)
    for tile in tl.range(pid, pid + 1, 1):
        row0, col0 = lm.block_origin(M, N, BM, BN, GROUP, tile)
        acc = tl.zeros((16, BN))
        for k in tl.range(0, K, BK):
            tl.copy(a, (row0, k), sa)
            tl.copy(b, (k, col0), sb)
            tl.barrier()
            acc = tl.wgmma(sa, warp // 4 * 64, sb, 0, acc)
            tl.barrier()
        tl.store(c, (row0 + warp * 16, col0), acc.to(c.dtype))


@tl.kernel(num_warps=8, num_stages=3, bulk=True, producer=True)
def hoisted(a, b, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr = 8):
    M, N, K = a.shape[0], b.shape[1], a.shape[1]
    warp = tl.warp_id()
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    pid = tl.block_id(0)
    row0, col0 = lm.block_origin(M, N, BM, BN, GROUP, pid)
    for tile in tl.range(pid, pid + 1, 1):
        acc = tl.zeros((16, BN))
        for k in tl.range(0, K, BK):
            tl.copy(a, (row0, k), sa)
            tl.copy(b, (k, col0), sb)
            tl.barrier()
            acc = tl.wgmma(sa, warp // 4 * 64, sb, 0, acc)
            tl.barrier()
        tl.store(c, (row0 + warp * 16, col0), acc.to(c.dtype))
