"""Split-K: a GEMM whose tiles do not fill the GPU, cut along K into slices that run side by side.

A decode step's ``16 x 4096 x 4096`` has 64 tiles of C for 132 SMs: half the GPU idles on a problem
bound by reading B. Cutting K into ``S`` slices gives ``S`` times the blocks, each reading its slice
of A and B; the partial products are added afterwards, in a fixed order (the same bits every run):

1. **The slices are a batch.** Slice ``s`` of op(A) is the ``M x K/S`` view at column ``s K/S`` (the
   same rows, the batch stride ``K/S`` times K's stride), likewise for op(B): a batched
   ``tile.matmul`` (3-D views, block ``y`` = the slice) writes each slice's f32 product into a
   workspace ``S x M x N``. No new lowering: the batch is ``tile.subview``\\ s of strided views, and
   bulk tensor copies read them through 3-D tensor maps.
2. **The reduction** (``splitk_reduce`` in :mod:`tilec.kernels.splitk_ir`, in tilec.lang) adds the ``S`` partials in slice order,
   then applies the matmul's epilogue (scales, bias, ReLU, the output type).

:func:`choose_split` is the heuristic: split only where the tiles fill at most half the SMs, K
divides into slices whose rows stay 16-byte aligned, and each slice keeps a K loop worth running.
The split runs on torch's current stream (its workspace is allocated there each call); a call with
``stream=`` is not split.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_SPLIT = 4
"""At most this many slices: the workspace (S x M x N f32) and the reduction grow with S."""
SPLIT_MIN_K_BYTES = 4096
"""A slice keeps at least this many bytes of K per row (2048 f16, 4096 FP8) ..."""
SPLIT_MIN_K_BYTES_IDLE = 2048
"""... or this many where the tiles fill at most a quarter of the SMs (the split's gain is larger there)."""
REDUCE_TILE = (16, 128)
"""The reduction's block tile of C (f32, 4 warps: 16 values a thread)."""
REDUCE_WARPS = 4


@dataclass(frozen=True)
class ReduceSpec:
    """The reduction kernel of a split matmul: its output and epilogue, and the rows' alignments (bytes)
    of the workspace, ``c`` and the bias."""

    out_dtype: str
    bias_dtype: str | None = None
    activation: str | None = None
    scale_a: bool = False
    scale_b: bool = False
    align: tuple[int, int, int] = (16, 0, 0)

    @property
    def kernel_name(self) -> str:
        parts = ["splitk_reduce", self.out_dtype]
        if self.bias_dtype:
            parts.append(f"bias_{self.bias_dtype}")
        if self.activation:
            parts.append(self.activation)
        if self.scale_a or self.scale_b:
            parts.append("scaled" if self.scale_a and self.scale_b else "scale_" + ("a" if self.scale_a else "b"))
        return "_".join(parts) + "_a" + "_".join(map(str, self.align))

    def grid(self, m: int, n: int) -> int:
        bm, bn = REDUCE_TILE
        return -(-m // bm) * -(-n // bn)


def choose_split(m: int, n: int, k: int, itemsize: int, tiles: int, sms: int) -> int:
    """Slices of K for a problem whose chosen tiling has ``tiles`` tiles of C (1: no split).

    Only where the tiles fill at most half the SMs; up to two blocks an SM; the most slices whose rows
    keep :data:`SPLIT_MIN_K_BYTES` of K (:data:`SPLIT_MIN_K_BYTES_IDLE` at most a quarter full) and
    stay whole 16-byte vectors. Measured on the H200 (session 17, TFLOP/s, no split / the choice):
    16x4096x4096 f16 25.9 / 28.4 (2 slices); 128x1024x8192 f16 74 / 117 (4), FP8 107 / 162 (4);
    not split, as the rule says: FP8 16x4096x4096 39.8 (2 slices: 37.1), 128x4096x4096 f16 208 (162),
    1024^3 f16 190 (106), 16x8192x8192 f16 49.7 (46.5).
    """
    if tiles * 2 > sms:
        return 1
    least = SPLIT_MIN_K_BYTES_IDLE if tiles * 4 <= sms else SPLIT_MIN_K_BYTES
    for s in range(min(MAX_SPLIT, 2 * sms // tiles), 1, -1):
        if k % s == 0 and (k // s * itemsize) % 16 == 0 and k // s * itemsize >= least:
            return s
    return 1


__all__ = ["MAX_SPLIT", "REDUCE_TILE", "REDUCE_WARPS", "SPLIT_MIN_K_BYTES", "ReduceSpec", "choose_split"]
