"""Which ``tile-to-ptx`` configuration :func:`tilec.matmul` compiles for a problem.

A :class:`MatmulConfig` is the ``tile-to-ptx`` pass with its options set
(block tile, warps, stages, group, tf32, SIMT thread tile, bulk copies,
wgmma: the fields of :class:`~tilec.passes.tile_to_ptx.TileToPTX`, declared
there once): ``tilec.compile(module, pipeline=config)`` runs it, ``str(config)``
is its ``tile-to-ptx{...}`` text. :func:`choose_config` picks one per
(M, N, K, dtype) from a small table, two entries per kind of math:

==========  ============================================  =========================  =============
kind        config                                        ptxas regs sm_80 / sm_90   shared memory
==========  ============================================  =========================  =============
mma large   128x128x32, warps 4x2, 4 stages (f16, bf16)   161-169 / 161-169          64 KB
mma small   64x64x32, warps 2x2, 3 stages                 96-122 / 96-118            24 KB
tf32 large  128x128x16, warps 4x2, 3 stages               184-200 / 192-210          48 KB
tf32 small  64x64x16, warps 2x2, 3 stages                 124-145 / 119-122          24 KB
simt large  128x128x8, thread tile 8x8 (4x2 warps), 3 st  165-248 / 163-225          24 KB
simt small  64x64x8, thread tile 4x4 (4x2 warps), 3 st    80-127 / 79-125            12 KB
==========  ============================================  =========================  =============

**Aligned operands** (every row contiguous, 16-byte aligned and a whole
number of 16-byte vectors: :func:`tilec.matmul` checks and then compiles the
kernel with ``tile.aligned_rows = 16``, which has no element paths and
needs fewer registers) get their own f16/bf16 table, :data:`ALIGNED_CONFIGS`,
measured on an H100 (``bench/sweep_configs.py``, ``bench/NOTES.md``). So do
rows of A, B and C aligned to 8 or 4 bytes (``tile.aligned_rows = 8, 4``:
cp.async of 8 or 4 bytes, no element paths either; the table assembles
without spills, ``tests/test_matmul.py``, but for the large entry with
4-byte rows, which takes the general table), but not the bulk copies and
warpgroup MMA below, which need 16. Rows of an odd number of f16/bf16
(element copies) take :data:`ELEMENT_ROWS_LARGE` where the general table
would take its large tile. H100, ``bench/sweep_configs.py``: 4096x4096x4098
(4-byte rows of A) 353 TFLOP/s with the wide entry against 210 with the
general large tile, 4096x4096x2050 313 against 206:

=======  =========================================  ==============================================
size     config                                     when (and what it measured, f16)
=======  =========================================  ==============================================
wide     128x256x64, warps 2x4, 3 stages (254 regs)  K >= 2048 and the grid of wide tiles fills the SMs
                                                    (8192³: 436 vs 407 for large; on an H200
                                                    8192x1024x8192: 483 vs 461)
large    128x128x64, warps 2x2, 3 stages (254 regs)  the grid of large tiles fills the SMs (4096³: 446;
                                                    on an H200 8192x8192x1024: 404 vs 332 for wide)
medium   64x64x64, warps 2x2, 4 stages              M > 128, fewer large tiles than SMs
short    32x64x128, warps 1x2, 4 stages             16 < M <= 128 (128x4096x4096, cold L2: 157.5
                                                    TFLOP/s vs 137.0 for 32x64x64)
decode   16x64x128, warps 1x2, 4 stages             M <= 16 (16x4096x4096: 20 TFLOP/s, memory bound)
=======  =========================================  ==============================================

**On sm_90** (``arch`` given to :func:`choose_config`), an aligned f16/bf16
problem whose grid of 128x128 tiles fills the SMs takes :data:`BULK_CONFIG`:
the large tile with its K tiles loaded by bulk tensor copies (TMA, one
thread per block issues them, ``tile-pipeline{bulk=true}``), 225 registers;
a problem that takes the medium tile takes :data:`BULK_MEDIUM_CONFIG`, the
same tile fed by bulk copies (1024³, cold L2: 165 TFLOP/s vs 152). Row-major
operands take the warpgroup MMA instead where its tiles fill the SMs: the
widest tile of :data:`WGMMA_LADDER` whose grid does.

(``ptxas -v``; no spills and no stack in any of the 96 kernels swept: every
entry x the four kernel transposes x {plain; bias + ReLU with f32 output;
bias + ReLU with f16 output}, f16 and bf16 for mma. The SIMT large tile's
248 is B given N x K, whose thread tile is read from shared memory with
scalar loads. ``tests/test_matmul.py`` re-checks each entry on its heaviest
variant for sm_80 and sm_90.)

**Large vs small.** The large tile is used when the grid of large tiles
already has a block for every SM (``ceil(M/BM) * ceil(N/BN) >= SMs``: 4096²
→ 1024 blocks); otherwise the small tile quarters the block size so that
more SMs get work (1000² → 64 large blocks but 256 small ones; 17x33 → 1).
The SM count is the GPU's, or 132 (an H100 SXM) without one, so that the
choice is deterministic on machines with no GPU.

Configurations that were tried and rejected: f16 128x128x32 with 2x2 warps
(226 registers with the plain epilogue, but 253-255 with a bias and ReLU,
and an f32 output with both operands transposed spills on sm_90), tf32
128x128x32 with 2x2 warps (spills 400 bytes), tf32 64x64x32 with 3 stages
(spills on sm_90). 4 stages for the large f16 tile: ``bench/NOTES.md``
measured 3 → 4 stages as +29% at 4096³ (with 2x2 warps).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from tilec.kernels.splitk import MAX_SPLIT
from tilec.passes.tile_to_ptx import TileToPTX
from tilec.passes.tiling_config import TilingConfigError, check_cluster, cluster_shape
from tilec.runtime import dtypes as _dtypes
from tilec.runtime import get_device, has_device

MMA_DTYPES = ("float16", "bfloat16")
FLOAT_DTYPES = ("float16", "bfloat16", "float32")
FP8_DTYPES = ("float8_e4m3fn", "float8_e5m2")
"""OCP FP8 inputs (torch's names): multiplied by sm_90a's wgmma only, A M x K and B N x K (both K-major)."""
INPUT_DTYPES = FLOAT_DTYPES + FP8_DTYPES
"""What a matmul's A and B may be; the output and the bias are among FLOAT_DTYPES."""
DEFAULT_SM_COUNT = 132
ALIGNED_TABLE_MIN_ROWS = 4
"""The fewest bytes the rows of A, B and C must be aligned to (``tile.aligned_rows``) for
:data:`ALIGNED_CONFIGS` (every copy a cp.async), but for the entries of :data:`ALIGNED_MIN_ROWS`."""
ALIGNED_MIN_ROWS = {"large": 8}
"""Entries of :data:`ALIGNED_CONFIGS` that need wider rows: with 4-byte rows (twice the cp.async of
8-byte rows) the large entry spills 4 bytes at 255 registers on its heaviest variant; such problems
take the general table."""


@dataclass(frozen=True)
class MatmulConfig(TileToPTX):
    """The ``tile-to-ptx`` options of one matmul kernel: the pass itself, with ``block`` required.

    ``warps`` None: tile-tiling's default (2x2, or as many as the SIMT thread
    tile needs). ``thread_tile``: SIMT only (f32 without tf32), each lane
    computes a TM x TN block of C. ``bulk``: sm_90, the K loop's copies are
    bulk tensor copies (TMA) where the operands allow (``tile-pipeline{bulk}``).
    ``release``: with ``bulk``, warps release stages on empty barriers (no
    block barrier in the K loop); False keeps one block barrier per K tile
    (``tile-pipeline{release=false}``). ``wgmma``: with ``bulk``, sm_90a, the
    warpgroup MMA on shared tiles (``tile-tiling{wgmma}``): warps ``BM/16 x 1``.
    """

    block: tuple[int, ...] = field()  # required (the pass has a default)

    def __post_init__(self):
        if len(self.block) != 3 or any(not isinstance(v, int) or v <= 0 for v in self.block):
            raise ValueError(f"MatmulConfig: block must be three positive ints BM,BN,BK, got {self.block!r}")
        if self.warps is not None and (len(self.warps) != 2 or any(v <= 0 for v in self.warps)):
            raise ValueError(f"MatmulConfig: warps must be two positive ints WM,WN, got {self.warps!r}")
        if self.stages < 1:
            raise ValueError(f"MatmulConfig: stages must be >= 1, got {self.stages}")
        if self.tf32 and self.thread_tile is not None:
            raise ValueError("MatmulConfig: tf32 (tensor cores) and thread_tile (SIMT) exclude each other")
        if self.wgmma and not self.bulk:
            raise ValueError("MatmulConfig: wgmma reads shared tiles in the layouts bulk copies write: it needs bulk=True")
        for option in ("producer", "bulk_store"):
            if getattr(self, option) and not self.bulk:
                raise ValueError(f"MatmulConfig: {option}=True works on bulk tensor copies (sm_90): it needs bulk=True")
        try:
            object.__setattr__(self, "cluster", check_cluster(self.cluster))
        except TilingConfigError as e:
            raise ValueError(f"MatmulConfig: {str(e).removeprefix('tile-tiling: ')}") from None
        if self.cluster != (1,) and not (self.bulk and self.release):
            raise ValueError("MatmulConfig: cluster > 1 multicasts bulk copies into stages released on empty "
                             "barriers (sm_90): it needs bulk=True and release=True")
        object.__setattr__(self, "block", tuple(self.block))
        if self.warps is not None:
            object.__setattr__(self, "warps", tuple(self.warps))
        if self.thread_tile is not None:
            object.__setattr__(self, "thread_tile", tuple(self.thread_tile))

    @property
    def is_simt(self) -> bool:
        return self.thread_tile is not None

    def tiles(self, m: int, n: int) -> int:
        """Block tiles of C: ``ceil(M/BM) * ceil(N/BN)``."""
        return -(-m // self.block[0]) * -(-n // self.block[1])

    def grid(self, m: int, n: int, sm_count: int | None = None) -> int:
        """Blocks of the 1-D grid: one a tile, or for a persistent kernel one an SM (``sm_count``, the
        GPU's by default) but never more than there are tiles; whole clusters (a ragged last row of
        tiles still takes a cluster's blocks)."""
        cm, cn = cluster_shape(self.cluster)  # whole clusters: cm block rows of one column of tiles, or cn columns
        c = cm * cn
        cluster_tiles = -(-m // (self.block[0] * cm)) * -(-n // (self.block[1] * cn))
        if not self.persistent:
            return c * cluster_tiles
        sms = device_sm_count() if sm_count is None else sm_count
        return c * max(1, min(cluster_tiles, sms // c))

    def describe(self) -> str:
        bm, bn, bk = self.block
        if self.is_simt:
            kind = f"SIMT thread tile {self.thread_tile[0]}x{self.thread_tile[1]}"
        else:
            kind = "wgmma" if self.wgmma else "tf32 mma" if self.tf32 else "mma"
        warps = f", warps {self.warps[0]}x{self.warps[1]}" if self.warps else ""
        copies = (", bulk copies" + ("" if self.release else ", block barrier")) if self.bulk else ""
        copies += ", producer warpgroup" if self.producer else ""
        copies += ", one K step's wgmmas at a time" if self.wgmma and not self.in_flight else ""
        copies += ", TMA store" if self.bulk_store else ""
        persistent = ", persistent" if self.persistent else ""
        cm, cn = cluster_shape(self.cluster)
        persistent += f", clusters of {cm} along M" if cm > 1 else f", clusters of {cn} along N" if cn > 1 else ""
        return f"{bm}x{bn}x{bk}{warps}, {self.stages} stages{copies}, {kind}{persistent}"


ALIGNED_CONFIGS: dict[str, MatmulConfig] = {
    "wide": MatmulConfig(block=(128, 256, 64), warps=(2, 4), stages=3),
    "large": MatmulConfig(block=(128, 128, 64), warps=(2, 2), stages=3),
    "medium": MatmulConfig(block=(64, 64, 64), warps=(2, 2), stages=4),
    "short": MatmulConfig(block=(32, 64, 128), warps=(1, 2), stages=4),
    "decode": MatmulConfig(block=(16, 64, 128), warps=(1, 2), stages=4),
}
"""f16/bf16 configs for aligned operands (``tile.aligned_rows``): size → config (see the module docstring)."""

BULK_CONFIG = MatmulConfig(block=(128, 128, 64), warps=(2, 2), stages=3, bulk=True, release=False)
"""sm_90, aligned f16/bf16, at least one block per SM: the large tile fed by bulk tensor copies
(TMA). Measured on the H100 (bench/NOTES.md, session 5): 477 TFLOP/s at 4096^3 against 442-451
for the cp.async kernels; three stages keep two blocks per SM (four stages: 391). One block
barrier per K tile, not empty barriers (session 6: a tie at 2048^3-8192^3 for this 4-warp tile,
and 416 vs 391 TFLOP/s at 8192x8192x1024; the empty barriers pay for 8-warp tiles, +9%)."""

BULK_MEDIUM_CONFIG = MatmulConfig(block=(64, 64, 64), warps=(2, 2), stages=4, bulk=True)
"""sm_90, aligned f16/bf16, the medium tile fed by bulk tensor copies (session 6, H100, cold L2:
1024^3 165 TFLOP/s against 152 for its cp.async kernel)."""

WGMMA_CONFIG = MatmulConfig(block=(128, 256, 64), stages=3, bulk=True, wgmma=True)
"""sm_90(a), aligned f16/bf16 A (M x K) and B (K x N) row-major, at least one block per SM: the
warpgroup MMA on shared tiles fed by bulk tensor copies, two warpgroups of 64 x 256, stages
released on empty barriers. Session 7: H200 4096^3 606 TFLOP/s against 421 for BULK_CONFIG
(128x128x64 wgmma tiles 440-471); H100 4096^3 588/616 (f16/bf16) in bench/gemm.py, and at
2048^3 (128 blocks, 132 SMs) 321 against 254 for BULK_CONFIG in bench/sweep_configs.py."""

PERSISTENT_WGMMA_CONFIG = MatmulConfig(block=(128, 256, 64), stages=3, bulk=True, wgmma=True, producer=True,
                                       persistent=True, bulk_store=True)
"""WGMMA_CONFIG as a persistent, warp-specialised kernel with a TMA-store epilogue: one block an SM
loops over C's tiles (``tile-tiling{persistent}``), a producer warpgroup issues the bulk copies
and runs ahead into the next tile's K steps, the two consumer warpgroups keep their wgmmas in
flight and store C through shared memory with bulk tensor stores (``tile-bulk-store``: whole
lines written, the warp free at once; an f32 C's whole-tile buffers do not fit, and it stores column
chunks through a ring of two slots a warp, see :data:`DEEP_PERSISTENT_WGMMA_CONFIG`).
Session 16, H200, f16 (``bench/sweep_configs.py --repeat 3``, TFLOP/s, one call), against
WGMMA_CONFIG, WGMMA_CONFIG with the TMA store, the persistent kernel without it, and cuBLAS:

=================  ===========  ==========  ==========  ==========  ======
shape              WGMMA        +TMA store  persistent  this        cuBLAS
=================  ===========  ==========  ==========  ==========  ======
8192x8192x1024     490          595         490         626         658
4096^3             652          688         681         727         676
8192^3             596          597         633         656         658
2048^3             520          604         531         635         547
8192x1024x8192     698          704         723         731         692
8192x28672x4096    570          602         605         649         650
=================  ===========  ==========  ==========  ==========  ======

With a bias into bf16 the consumers spill 28 bytes (loop-invariant values reloaded once a tile)."""

DEEP_PERSISTENT_WGMMA_CONFIG = dataclasses.replace(PERSISTENT_WGMMA_CONFIG, stages=4)
""":data:`PERSISTENT_WGMMA_CONFIG` with four stages (192 KB), for more tiles than SMs. The 64 KB of
whole-tile store buffers no longer fit beside them: ``tile-bulk-store`` stores each warp's 16 x 256
rows as four 64-column chunks through a ring of two 2 KB slots (32 KB). Session 25, H200, bf16,
cold L2 (``sweep_configs.py --flush --repeat 3``, TFLOP/s, one call), three stages / four / cuBLAS:
8192x1024x8192 774 / 788 / 777, 8192x8192x1024 693 / 705 / 672, 4096^3 764 / 769 / 732; 2048^3 (128
tiles, one a block) 611 / 607 / 611, where each block stores its one tile with nothing to overlap:
three stages stay there. Clusters of two (multicast B or A) still lose: 4096^3 749 / 735, 2048^3
602 / 591."""

WGMMA_MIN_FILL = 0.75
"""A tile of :data:`WGMMA_LADDER` past the first is taken from this many blocks per SM on."""

PERSISTENT_MIN_FILL = 0.5
"""The first tile of :data:`WGMMA_LADDER` (the persistent kernel) is taken from this many 128x256
tiles per SM on: 1536^3 (72 tiles on 132 SMs, one partial wave) ran at 329 TFLOP/s against 289
for the half-width tile (144 tiles, two waves at one block an SM or one at two), while 512x4096x4096
(64 tiles) ran at 358 against 416 (H200, cold L2, session 16)."""

MID_WGMMA_CONFIG = MatmulConfig(block=(128, 128, 64), stages=5, bulk=True, wgmma=True, bulk_store=True)
"""sm_90(a): WGMMA_CONFIG's half-width tile, for problems whose 128x256 tiles do not fill the SMs (so
at most about one wave of these: one block an SM costs nothing). Five stages, wgmmas in flight across
K steps, C stored by TMA: 160 KB of stages and 32 KB of store buffers. Session 19 kept three stages
and one K step at a time (the refill one step later came too late with three: 512x4096x4096 386 in
flight against 421); with five the early refill has room, and the direct stores were what a tile
then waited for. Session 20, H200, cold L2, f16 TFLOP/s (``sweep_configs.py --flush --repeat 3``),
three stages one step at a time (before) / 4 stages in flight + TMA store / 5 / 6 / 128x128x128 with
3 / cuBLAS: 512x4096x4096 416 / 504 / 540 / 532 / 491 / 610 (bf16 423 / 503 / 543 / - / - / 616),
1024x2048x2048 355 / 436 / 447 / 439 / 432 / 491, 1024x2048x8192 491 / 583 / 607 / 599 / 546 / 703,
640x4096x2048 - / 318 / 329 / 323 / 318. Three stages with the TMA store: 449 (one step at a time)
and 406 (in flight) at 512x4096x4096."""

NARROW_WGMMA_CONFIG = MatmulConfig(block=(128, 64, 128), stages=4, bulk=True, wgmma=True, producer=True)
"""sm_90(a): two warpgroups of 64 x 64 fed by a producer warpgroup, K steps of 128: where the 128x128
tiles do not fill the SMs but 128x64 ones do (cuBLAS's kernel for 1024^3 is a 128x64 warp-specialised
one). Session 16, H200, cold L2, f16 (TFLOP/s; without the producer / the 64x128x128 tile taken
before / cuBLAS): 1024^3 197 (185 / 183 / 223), 256x4096x4096 324 (334 / 319 / 368), 128x8192x8192
352 (357 / 348 / 385)."""

THIN_WGMMA_CONFIGS: tuple[MatmulConfig, ...] = (
    MatmulConfig(block=(64, 128, 128), stages=4, bulk=True, wgmma=True, bulk_store=True),
    MatmulConfig(block=(64, 64, 128), stages=6, bulk=True, wgmma=True),
)
"""sm_90(a): one warpgroup of 64 rows, K steps of 128, as many stages as shared memory holds: for
fewer rows still (a decode step's batch), from :data:`THIN_MIN_K` on. Their wgmmas stay in flight
across K steps (the issuing thread refills a stage once the next step's wait completed its reads):
session 19, H200, cold L2, f16 TFLOP/s, in flight / not, for the 64x128 tile: 1024^3 202 / 186,
256x4096x4096 348 / 320, 128x4096x4096 183 / 168 (the 64x64 tile there 211 / 211). The 64x128 tile
so beats :data:`NARROW_WGMMA_CONFIG` (190 at 1024^3, 326 at 256x4096x4096, same call), and comes
before it in :data:`WGMMA_LADDER`.

The 64x128 tile stores C through shared memory and bulk tensor stores (``tile-bulk-store``: 16 KB of
buffers beside its 192 KB of stages, still one block an SM). With its wgmmas in flight the direct
stores had become what a tile waits for: session 20, H200, cold L2, f16 TFLOP/s (``sweep_configs.py
--flush --repeat 3``, one call), direct / TMA store / cuBLAS: 1024^3 201 / 226 / 229 (bf16 197 / 219 /
222), 256x4096x4096 350 / 368 / 369, 128x8192x8192 366 / 372 / 387, 1536x1024x1024 201 / 222,
2048x512x2048 291 / 308, 1024x1024x4096 395 / 412, 384x4096x4096 331 / 339. The 64x64 tile keeps its
direct stores (TMA store -3% to +6% on the same shapes)."""

WGMMA_LADDER: tuple[MatmulConfig, ...] = (PERSISTENT_WGMMA_CONFIG, MID_WGMMA_CONFIG, THIN_WGMMA_CONFIGS[0],
                                          NARROW_WGMMA_CONFIG, THIN_WGMMA_CONFIGS[1])
"""The warpgroup-MMA tiles from the widest down: an aligned row-major f16/bf16 problem on sm_90 takes
the first whose grid of tiles fills WGMMA_MIN_FILL of the SMs, PERSISTENT_MIN_FILL for the first
(past the first only with more than 16 rows: fewer keep the mma.sync ``decode`` tile). The first is
the persistent kernel with a TMA-store epilogue (2048^3 has 128 of its 128x256 tiles: 635 TFLOP/s
against 604 for the same tile launched a block a tile). Since session 20 so do the 128x128 tile (five
stages in flight: +22-30%, see :data:`MID_WGMMA_CONFIG`) and the 64x128 tile (+2% to +12%, see
:data:`THIN_WGMMA_CONFIGS`): both are taken only for about one wave of tiles, where the buffers cost
no block an SM (session 16 had seen the 128x128 tile's buffers halve the blocks an SM holds at 1536^3,
289 -> 242, a shape the persistent kernel takes). The 128x64 and 64x64 tiles keep their direct
stores. Session 16 put :data:`NARROW_WGMMA_CONFIG`
between the 128x128 and the 64-row tiles (it now takes 1024^3, 256x4096x4096 and 128x8192x8192 of
the table below). H200, cold L2 (``bench/sweep_configs.py --flush
--repeat 3``, session 15, f16 TFLOP/s), against what was taken before:

=================  ==========  ==================================  ======
shape              taken now   before                              cuBLAS
=================  ==========  ==================================  ======
1536^3             284 (mid)   210 (BULK_CONFIG)                   456
512x4096x4096      417 (mid)   282 (BULK_MEDIUM_CONFIG)            605
256x4096x4096      320 (thin)  260 (BULK_MEDIUM_CONFIG)            367
1024^3             184 (thin)  165 (BULK_MEDIUM_CONFIG)            225
128x8192x8192      349 (thin)  214 (``short``)                     388
128x4096x4096      207 (thin)  178 (``short``)                     226
64x4096x4096       no tile fills: ``short`` (100; 106 for 64x64x128)  124
=================  ==========  ==================================  ======
"""

def as_fp8(config: MatmulConfig) -> MatmulConfig:
    """A wgmma config of f16/bf16 made for FP8 inputs: twice the K elements a step, so the same bytes per
    stage, shared tile rows and swizzle (128-byte rows), the same registers and barriers."""
    bm, bn, bk = config.block
    return dataclasses.replace(config, block=(bm, bn, 2 * bk))


FP8_WGMMA_LADDER: tuple[MatmulConfig, ...] = tuple(as_fp8(c) for c in WGMMA_LADDER)
"""The same tiles for FP8 inputs (:func:`as_fp8`: K steps of 128 or 256 one-byte elements)."""

FP8_THIN_CONFIGS: tuple[MatmulConfig, ...] = tuple(as_fp8(c) for c in THIN_WGMMA_CONFIGS)
"""The thin tiles for FP8 inputs: a decode step (16 rows or fewer) takes one of them or the first rung."""

THIN_MIN_K = 1024
"""The thin tiles' K steps of 128 want a few of them to pipeline: below this K they are not taken."""

WIDE_MIN_K = 2048
"""The wide aligned tile (half the global and shared traffic per flop of the large one)
pays for its longer prologue and epilogue from this K on (8192x8192x1024 is faster with
the large tile)."""

CONFIGS: dict[tuple[str, str], MatmulConfig] = {
    ("mma", "large"): MatmulConfig(block=(128, 128, 32), warps=(4, 2), stages=4),
    ("mma", "small"): MatmulConfig(block=(64, 64, 32), warps=(2, 2), stages=3),
    ("tf32", "large"): MatmulConfig(block=(128, 128, 16), warps=(4, 2), stages=3, tf32=True),
    ("tf32", "small"): MatmulConfig(block=(64, 64, 16), warps=(2, 2), stages=3, tf32=True),
    ("simt", "large"): MatmulConfig(block=(128, 128, 8), stages=3, thread_tile=(8, 8)),
    ("simt", "small"): MatmulConfig(block=(64, 64, 8), stages=3, thread_tile=(4, 4)),
}
"""(kind, size) → config; kind is ``mma`` (f16/bf16), ``tf32`` or ``simt`` (f32)."""

ELEMENT_ROWS_LARGE = MatmulConfig(block=(128, 128, 64), warps=(4, 2), stages=3)
"""f16/bf16 whose rows of A, B or C are aligned to 2 bytes only (an odd number of elements:
element copies, double buffered by ``tile-pipeline``), the rest aligned, when the grid of large
tiles fills the SMs. H100 (``bench/sweep_configs.py``): 4095^3 127.5 TFLOP/s against 101.0 for
the general large tile; 4096x4096x4095 171.5 against 121.8. 204-244 registers, no spills."""


def math_kind(dtype: str, allow_tf32: bool = False) -> str:
    """``mma`` for f16/bf16 inputs, ``fp8`` for FP8 (wgmma only), ``tf32`` or ``simt`` for f32."""
    if dtype in MMA_DTYPES:
        return "mma"
    if dtype in FP8_DTYPES:
        return "fp8"
    if dtype == "float32":
        return "tf32" if allow_tf32 else "simt"
    raise ValueError(f"no matmul for inputs of dtype {dtype}; expected one of {', '.join(INPUT_DTYPES)}")


def device_sm_count() -> int:
    """The GPU's SM count, or :data:`DEFAULT_SM_COUNT` without a GPU."""
    if not has_device():
        return DEFAULT_SM_COUNT
    return get_device(0).sm_count  # a failing query on a present GPU is an error worth seeing


def has_bulk_copies(arch: str | None) -> bool:
    """Whether ``arch`` (``sm_XY``) has bulk tensor copies (TMA): sm_90 and later."""
    return arch is not None and arch.startswith("sm_") and int(arch[3:5]) >= 90


def choose_config(m: int, n: int, k: int, dtype: str, *, allow_tf32: bool = False,
                  sm_count: int | None = None, aligned: bool = False, row_align: int = 0, arch: str | None = None,
                  transpose_a: bool = False) -> MatmulConfig:
    """The configuration for an ``M x N x K`` matmul of ``dtype`` inputs (see the module docstring).

    ``row_align``: the smallest ``tile.aligned_rows`` of the kernel's arguments (A, B, C and the
    bias; bytes; ``aligned`` means 16). From :data:`ALIGNED_TABLE_MIN_ROWS` bytes the aligned table applies;
    bulk copies and the warpgroup MMA need 16.
    ``arch``: the target; on sm_90 large aligned problems take bulk tensor copies, and without
    ``transpose_a`` (A stored K x M) the warpgroup MMA (B may be K x N or N x K).
    """
    kind = math_kind(dtype, allow_tf32)
    sms = device_sm_count() if sm_count is None else sm_count
    row_align = max(row_align, 16 if aligned else 0)
    aligned = row_align >= 16
    if kind == "fp8":
        return _fp8_config(m, n, k, sms, aligned, transpose_a, arch)
    if kind == "mma" and aligned and not transpose_a and arch in ("sm_90", "sm_90a"):
        for config in WGMMA_LADDER if m > 16 else WGMMA_LADDER[:1]:
            if config.block[2] > 64 and k < THIN_MIN_K:
                continue
            if config.block[0] > -(-m // 64) * 64:  # a warpgroup's 64 rows with nothing to compute
                continue
            if config.tiles(m, n) >= (PERSISTENT_MIN_FILL if config is WGMMA_LADDER[0] else WGMMA_MIN_FILL) * sms:
                if config is PERSISTENT_WGMMA_CONFIG and config.tiles(m, n) > sms:
                    return DEEP_PERSISTENT_WGMMA_CONFIG
                return config
    if kind == "mma" and aligned and has_bulk_copies(arch) and BULK_CONFIG.tiles(m, n) >= sms:
        return BULK_CONFIG
    if kind == "mma" and row_align >= ALIGNED_TABLE_MIN_ROWS:
        size = _aligned_size(m, n, k, sms)
        if row_align >= ALIGNED_MIN_ROWS.get(size, ALIGNED_TABLE_MIN_ROWS):
            return BULK_MEDIUM_CONFIG if size == "medium" and aligned and has_bulk_copies(arch) \
                else ALIGNED_CONFIGS[size]
    large = CONFIGS[(kind, "large")]
    size = "large" if large.tiles(m, n) >= sms else "small"
    if kind == "mma" and 0 < row_align < ALIGNED_TABLE_MIN_ROWS and size == "large":
        return ELEMENT_ROWS_LARGE
    return CONFIGS[(kind, size)]


def _fp8_config(m: int, n: int, k: int, sms: int, aligned: bool, transpose_a: bool, arch: str | None) -> MatmulConfig:
    """:data:`FP8_WGMMA_LADDER`'s rung for the problem, as :func:`choose_config` picks from WGMMA_LADDER (the
    thin tiles also below THIN_MIN_K when nothing else fills the SMs: FP8 has no mma.sync kernel to fall
    back to); ValueError where FP8 has no kernel."""
    if arch not in ("sm_90", "sm_90a"):
        raise ValueError(f"tilec.matmul: FP8 inputs are multiplied by the warpgroup MMA of sm_90 (wgmma); the "
                         f"target is {arch}")
    if transpose_a:
        raise ValueError("tilec.matmul: FP8 wgmma reads A K-major: a must be M x K with contiguous rows (not the "
                         "transpose of a K x M array)")
    if not aligned:
        raise ValueError("tilec.matmul: FP8 operands are read by bulk tensor copies: the rows of a, b and the "
                         "output must start at 16-byte aligned addresses and be multiples of 16 bytes long")
    fallback = None
    for config in FP8_WGMMA_LADDER if m > 16 else (FP8_WGMMA_LADDER[0], *FP8_THIN_CONFIGS):
        if config.block[0] > -(-m // 64) * 64:
            continue
        fallback = config
        if config.block[2] > 128 and k < THIN_MIN_K:
            continue
        if config.tiles(m, n) >= (PERSISTENT_MIN_FILL if config is FP8_WGMMA_LADDER[0] else WGMMA_MIN_FILL) * sms:
            return config
    return fallback or FP8_WGMMA_LADDER[-1]


def _aligned_size(m: int, n: int, k: int, sms: int) -> str:
    """The entry of :data:`ALIGNED_CONFIGS` for a problem (see the module docstring)."""
    if k >= WIDE_MIN_K and ALIGNED_CONFIGS["wide"].tiles(m, n) >= sms:
        return "wide"
    if ALIGNED_CONFIGS["large"].tiles(m, n) >= sms:
        return "large"
    if m <= 16:
        return "decode"
    return "short" if m <= 128 else "medium"



def check_config(config: MatmulConfig, dtype: str, allow_tf32: bool, transpose_a: bool = False) -> None:
    """TypeError/ValueError when ``config`` does not do the math of ``dtype`` inputs (with ``allow_tf32``),
    or reads A in a way it cannot (``transpose_a``: op(a) is stored K x M)."""
    if not isinstance(config, MatmulConfig):
        raise TypeError(f"tilec.matmul: config must be a tilec.MatmulConfig, got {type(config).__name__}")
    if config.wgmma and transpose_a:
        raise ValueError(f"tilec.matmul: config: {config.describe()} reads A as M x K rows (row-major) and op(a) "
                         "is stored K x M (trans_a=True or a transposed view): copy it with .contiguous() or "
                         "take a config without wgmma")
    kind = math_kind(dtype, allow_tf32 or config.tf32)
    if kind == "fp8" and not config.wgmma:
        raise ValueError(f"tilec.matmul: config: {dtype} inputs are multiplied by wgmma only (a config with "
                         f"wgmma=True, bulk=True), got {config.describe()}")
    if kind == "mma" and (config.tf32 or config.is_simt):
        raise ValueError(f"tilec.matmul: config: {config.describe()} is for float32 inputs, a and b are {dtype}")
    if kind == "tf32" and not config.tf32:
        raise ValueError(f"tilec.matmul: config: allow_tf32=True but the config is {config.describe()}")
    if kind == "simt" and not config.is_simt:
        raise ValueError("tilec.matmul: config: float32 inputs without tf32 need a SIMT config (thread_tile=...), "
                         f"got {config.describe()}")


def config_kind(config: MatmulConfig) -> str:
    """``simt``, ``tf32`` or ``mma``: the math a config does (compare :func:`math_kind`)."""
    return "simt" if config.is_simt else "tf32" if config.tf32 else "mma"


def does_math(config: MatmulConfig, kind: str) -> bool:
    """Whether ``config`` does the math ``kind`` (:func:`math_kind`): FP8 is any wgmma config's."""
    return config.wgmma if kind == "fp8" else config_kind(config) == kind


# ---------------------------------------------------------------- what the autotuner times

_C = MatmulConfig
MMA_CANDIDATES: tuple[MatmulConfig, ...] = (
    _C((128, 128, 32), (4, 2), 4),
    _C((128, 128, 32), (4, 2), 3),
    _C((128, 256, 32), (2, 4), 3),
    _C((128, 128, 64), (4, 2), 3),
    _C((64, 128, 32), (2, 2), 4),
    _C((128, 64, 32), (2, 2), 4),
    _C((64, 64, 32), (2, 2), 3),
    _C((64, 64, 32), (2, 2), 4),
    _C((64, 64, 64), (2, 2), 3),
)
"""f16/bf16 (mma.sync m16n8k16). No spills on sm_80 or sm_90 with the plain and the heaviest epilogue
(``ptxas -v``, 2026-11); rejected: 128x128x32 with 2x2 warps and 256x128x32 with 4x2 (spill on sm_90)."""

BULK_CANDIDATES: tuple[MatmulConfig, ...] = (
    BULK_CONFIG,
    _C((128, 128, 64), (2, 2), 3, bulk=True),
    _C((128, 256, 64), (2, 4), 3, bulk=True),
    _C((256, 128, 64), (4, 2), 3, bulk=True),
    BULK_MEDIUM_CONFIG,
    _C((128, 64, 64), (2, 2), 3, bulk=True),
    _C((64, 128, 64), (2, 2), 4, bulk=True),
)
"""f16/bf16 on sm_90 with aligned operands: K tiles by bulk tensor copies (TMA); the large tile with a
block barrier per K tile and with empty barriers, the 8-warp tiles (empty barriers), smaller ones for
grids that do not fill the SMs (``bench/NOTES.md``, session 6). No spills on sm_90."""

WGMMA_CANDIDATES: tuple[MatmulConfig, ...] = (
    *WGMMA_LADDER,
    DEEP_PERSISTENT_WGMMA_CONFIG,
    WGMMA_CONFIG,
    _C((128, 256, 64), None, 3, bulk=True, wgmma=True, bulk_store=True),
    _C((128, 256, 64), None, 3, bulk=True, wgmma=True, producer=True, persistent=True),
    _C((128, 128, 64), None, 3, bulk=True, wgmma=True, in_flight=False),
    _C((64, 128, 128), None, 4, bulk=True, wgmma=True),
)
"""f16/bf16 on sm_90a with aligned row-major A and B: the warpgroup MMA's tiles (:data:`WGMMA_LADDER`,
the persistent kernel with four stages and its stores in chunks, and the 128x256 tile launched a
block a tile with and without the TMA store and persistent without it; the 128x128 tile of three stages one K step at a time and the 64x128 tile, both with direct
stores: two blocks an SM where a grid has more than one wave of them, which their TMA-store rungs
give up). No spills on sm_90a with an f32 C; with a bf16 C and a bias the persistent kernel spills 28
bytes (see :data:`PERSISTENT_WGMMA_CONFIG`)."""

TF32_CANDIDATES: tuple[MatmulConfig, ...] = (
    _C((128, 128, 16), (4, 2), 3, tf32=True),
    _C((128, 128, 16), (4, 2), 4, tf32=True),
    _C((64, 128, 16), (2, 2), 3, tf32=True),
    _C((128, 64, 16), (2, 2), 3, tf32=True),
    _C((64, 64, 16), (2, 2), 3, tf32=True),
    _C((64, 64, 16), (2, 2), 4, tf32=True),
)
"""f32 with ``allow_tf32`` (mma.sync m16n8k8); rejected: 128x128x32 with 4x2 warps (spills ~190 bytes)."""

SIMT_CANDIDATES: tuple[MatmulConfig, ...] = (
    _C((128, 128, 8), None, 3, thread_tile=(8, 8)),
    _C((128, 128, 8), None, 4, thread_tile=(8, 8)),
    _C((128, 64, 8), None, 3, thread_tile=(8, 4)),
    _C((64, 128, 8), None, 3, thread_tile=(4, 8)),
    _C((64, 64, 8), None, 3, thread_tile=(4, 4)),
    _C((64, 64, 16), None, 3, thread_tile=(4, 4)),
)
"""f32 on FMAs; rejected: 128x128x16 with an 8x8 thread tile (tile-distribute: ~376 registers)."""

FP8_CANDIDATES: tuple[MatmulConfig, ...] = tuple(dict.fromkeys(as_fp8(c) for c in WGMMA_CANDIDATES))
"""FP8 on sm_90a (A M x K, B N x K, aligned): :data:`WGMMA_CANDIDATES` with twice the K elements a step."""

_BY_KIND = {"mma": MMA_CANDIDATES, "tf32": TF32_CANDIDATES, "simt": SIMT_CANDIDATES, "fp8": ()}

SMEM_LIMIT = 227 * 1024
"""Shared memory per block without a GPU to ask (an H100's opt-in maximum, 232448 bytes)."""


def shared_memory_bytes(config: MatmulConfig, dtype: str) -> int:
    """The pipeline's shared memory per block: ``stages`` buffers of an A and a B tile."""
    bm, bn, bk = config.block
    return config.stages * (bm * bk + bk * bn) * (_dtypes.itemsize(dtype) or 4)


def device_smem_limit() -> int:
    """Shared memory a block may have: the GPU's opt-in maximum, else :data:`SMEM_LIMIT`."""
    return get_device(0).max_shared_per_block_optin if has_device() else SMEM_LIMIT


def _pow2_at_least(x: int) -> int:
    return 1 << max(0, (max(x, 1) - 1).bit_length())


def candidates(dtype: Any, m: int, n: int, k: int, *, allow_tf32: bool = False,
               smem_limit: int | None = None, bulk: bool = False, wgmma: bool = False) -> list[MatmulConfig]:
    """The configurations worth timing for an ``M x N x K`` matmul of ``dtype`` inputs.

    The set of the math's kind (:data:`MMA_CANDIDATES`, :data:`TF32_CANDIDATES`,
    :data:`SIMT_CANDIDATES`) without those that need more shared memory than
    ``smem_limit`` (default: the GPU's opt-in maximum per block, else 227 KB)
    and those with a block dimension larger than the problem needs: BM beyond
    both M rounded up to a power of two and the smallest BM of the set (the
    same for BN with N and BK with K), so tiny problems time small tiles only.
    ``bulk`` (sm_90, aligned operands): f16/bf16 also time :data:`BULK_CANDIDATES`; ``wgmma``
    (with ``bulk``, A and B row-major) :data:`WGMMA_CANDIDATES` too.
    """
    name = _dtypes.canonical(dtype)
    kind = math_kind(name, allow_tf32)
    pool = _BY_KIND[kind] + (BULK_CANDIDATES if bulk and kind == "mma" else ())
    pool += WGMMA_CANDIDATES if bulk and wgmma and kind == "mma" else ()
    pool += FP8_CANDIDATES if bulk and wgmma and kind == "fp8" else ()
    limit = device_smem_limit() if smem_limit is None else smem_limit
    floor = [min(c.block[i] for c in pool) for i in range(3)]
    need = [max(floor[i], _pow2_at_least(x)) for i, x in enumerate((m, n, k))]
    return [c for c in pool
            if shared_memory_bytes(c, name) <= limit and all(c.block[i] <= need[i] for i in range(3))]


# ---------------------------------------------------------------- a config on slices of K


@dataclass(frozen=True)
class SplitConfig:
    """``config`` run on ``split_k`` slices of K, added in order afterwards (split-K,
    :mod:`tilec.kernels.splitk`): a candidate the autotuner times beside the unsplit configs, and
    what ``tilec.matmul(config=...)`` takes to run one (the same as ``config=config, split_k=split_k``)."""

    config: MatmulConfig
    split_k: int

    def __post_init__(self):
        if not isinstance(self.config, MatmulConfig):
            raise TypeError(f"SplitConfig: config must be a tilec.MatmulConfig, got {type(self.config).__name__}")
        if type(self.split_k) is not int or not 2 <= self.split_k <= MAX_SPLIT:
            raise ValueError(f"SplitConfig: split_k must be an int from 2 to {MAX_SPLIT}, got {self.split_k!r}")

    def describe(self) -> str:
        return f"{self.config.describe()}, K in {self.split_k} slices"


# ---------------------------------------------------------------- a config in the autotuner's file

_CONFIG_FIELDS = ("block", "warps", "stages", "group", "tf32", "thread_tile")
_COPY_FIELDS = {"bulk": False, "release": True, "wgmma": False, "producer": False, "persistent": False,
                "bulk_store": False, "in_flight": True}
"""Written only where they differ from the default, so that records of configs without bulk copies
keep the format they had before bulk configs were tuned."""


def config_to_json(config: MatmulConfig | SplitConfig) -> dict[str, Any]:
    if isinstance(config, SplitConfig):
        return {**config_to_json(config.config), "split_k": config.split_k}
    data = {"block": list(config.block), "warps": None if config.warps is None else list(config.warps),
            "stages": config.stages, "group": config.group, "tf32": config.tf32,
            "thread_tile": None if config.thread_tile is None else list(config.thread_tile)}
    data.update({f: getattr(config, f) for f, default in _COPY_FIELDS.items() if getattr(config, f) != default})
    if config.cluster != (1,):  # C along M (as before 2-D shapes), else [1, C]
        data["cluster"] = config.cluster[0] if len(config.cluster) == 1 else list(config.cluster)
    return data


def _ints(value: Any, count: int) -> bool:
    return isinstance(value, list) and len(value) == count and all(type(v) is int for v in value)


def config_from_json(data: Any) -> MatmulConfig | SplitConfig:
    """The :class:`MatmulConfig` (with ``split_k``: :class:`SplitConfig`) of a stored record's ``config``;
    ValueError if it is not a valid one."""
    if isinstance(data, dict) and "split_k" in data:
        rest = {f: v for f, v in data.items() if f != "split_k"}
        try:
            return SplitConfig(config_from_json(rest), data["split_k"])
        except TypeError as e:
            raise ValueError(str(e)) from None
    if not isinstance(data, dict) or not set(_CONFIG_FIELDS) <= set(data) <= {*_CONFIG_FIELDS, *_COPY_FIELDS, "cluster"}:
        raise ValueError(f"a config has the fields {', '.join(_CONFIG_FIELDS)} (and maybe "
                         f"{', '.join(_COPY_FIELDS)}), got {data!r}")
    ok = (_ints(data["block"], 3) and (data["warps"] is None or _ints(data["warps"], 2))
          and type(data["stages"]) is int and type(data["group"]) is int and data["group"] >= 1
          and type(data["tf32"]) is bool and (data["thread_tile"] is None or _ints(data["thread_tile"], 2))
          and all(type(data.get(f, default)) is bool for f, default in _COPY_FIELDS.items())
          and (type(data.get("cluster", 1)) is int or _ints(data.get("cluster"), 2)))
    if not ok:
        raise ValueError(f"malformed config {data!r}")
    try:
        return MatmulConfig(block=tuple(data["block"]), warps=None if data["warps"] is None else tuple(data["warps"]),
                            stages=data["stages"], group=data["group"], tf32=data["tf32"],
                            thread_tile=None if data["thread_tile"] is None else tuple(data["thread_tile"]),
                            cluster=tuple(c) if isinstance(c := data.get("cluster", 1), list) else c,
                            **{f: data.get(f, default) for f, default in _COPY_FIELDS.items()})
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from None


__all__ = [
    "ALIGNED_CONFIGS",
    "ALIGNED_MIN_ROWS",
    "ALIGNED_TABLE_MIN_ROWS",
    "BULK_CANDIDATES",
    "BULK_CONFIG",
    "BULK_MEDIUM_CONFIG",
    "CONFIGS",
    "DEFAULT_SM_COUNT",
    "FP8_CANDIDATES",
    "FP8_DTYPES",
    "FP8_THIN_CONFIGS",
    "FP8_WGMMA_LADDER",
    "INPUT_DTYPES",
    "ELEMENT_ROWS_LARGE",
    "MMA_CANDIDATES",
    "SIMT_CANDIDATES",
    "SMEM_LIMIT",
    "TF32_CANDIDATES",
    "MID_WGMMA_CONFIG",
    "NARROW_WGMMA_CONFIG",
    "PERSISTENT_MIN_FILL",
    "PERSISTENT_WGMMA_CONFIG",
    "DEEP_PERSISTENT_WGMMA_CONFIG",
    "THIN_MIN_K",
    "THIN_WGMMA_CONFIGS",
    "WGMMA_CANDIDATES",
    "WGMMA_CONFIG",
    "WGMMA_LADDER",
    "MatmulConfig",
    "SplitConfig",
    "as_fp8",
    "candidates",
    "check_config",
    "choose_config",
    "config_from_json",
    "config_kind",
    "does_math",
    "config_to_json",
    "device_sm_count",
    "device_smem_limit",
    "has_bulk_copies",
    "math_kind",
    "shared_memory_bytes",
]
