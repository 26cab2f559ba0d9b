import numpy as np
import tilec.lang as tl


def tile_origin(t, M, N, BM: int, BN: int, GROUP: int):
    tiles_m, tiles_n = (M + BM - 1) // BM, (N + BN - 1) // BN
    width = tiles_n * GROUP
    first_m = t // width * GROUP
    group_m = tl.minimum(tiles_m - first_m, GROUP)
    return (first_m + t % width % group_m) * BM, (t % width // group_m) * BN


@tl.kernel(num_warps=8, num_stages=3, bulk=True, producer=True)
def matmul_persistent(a, b, c, blocks, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP: tl.constexpr = 8):
    M, N, K = a.shape[0], b.shape[1], a.shape[1]
    tiles = ((M + BM - 1) // BM) * ((N + BN - 1) // BN)
    warp = tl.warp_id()
    sa, sb = tl.alloc((BM, BK), a.dtype), tl.alloc((BK, BN), b.dtype)
    for t in tl.range(tl.block_id(0), tiles, blocks):
        row0, col0 = tile_origin(t, M, N, BM, BN, GROUP)
        acc = tl.zeros((16, BN))
        for k in tl.range(0, K, BK):
            tl.copy(a, (row0, k), sa)
            tl.copy(b, (k, col0), sb)
            tl.barrier()
            acc = tl.wgmma(sa, warp // 4 * 64, sb, 0, acc)
            tl.barrier()
        tl.store(c, (row0 + warp * 16, col0), acc.to(c.dtype))
