// RUN: not tile-opt %s -p 'tile-tiling{block=100,128,32}' 2>&1 | filecheck %s --check-prefix=BM
// RUN: not tile-opt %s -p 'tile-tiling{block=128,128,8}' 2>&1 | filecheck %s --check-prefix=BK
// RUN: not tile-opt %s -p 'tile-tiling{warps=8,8}' 2>&1 | filecheck %s --check-prefix=THREADS
// RUN: not tile-opt %s -p 'tile-tiling{block=256,256,256 warps=4,4}' 2>&1 | filecheck %s --check-prefix=SMEM
// RUN: not tile-opt %s -p 'tile-tiling{atom=fma_f32}' 2>&1 | filecheck %s --check-prefix=ATOM
// RUN: not tile-opt %s -p 'tile-tiling{block=64,64}' 2>&1 | filecheck %s --check-prefix=BLOCK

// Options that cannot tile the problem are errors naming the option and the
// numbers (exit status 1, no traceback), located at the function; the IR is not changed.
// Options that are wrong whatever the IR are refused with the pipeline, pointing into it.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}

// BM:      errors.mlir:{{[0-9]+}}:3: error: 'tile.matmul' op tile-tiling: block=100,128,32: BM=100 is not a multiple of warps × atom = 2·16 = 32 (warps=2,2, atom mma_m16n8k16_f16 is 16x8x16) (in @gemm)
// BM-NEXT: tile.matmul %a, %b -> %c
// BM:      note: while running pass 'tile-tiling'
// BM-NOT:  Traceback
// BK:      error: 'tile.matmul' op tile-tiling: block=128,128,8: BK=8 is not a multiple of the atom's K = 16 (mma_m16n8k16_f16) (in @gemm)
// THREADS: pass-pipeline:1:1: error: invalid options for pass 'tile-tiling': tile-tiling: warps=8,8 is 64 warps, 2048 threads per block; the limit is 1024
// SMEM:    error: 'tile.matmul' op tile-tiling: block=256,256,256: the shared tiles of A (256x256) and B (256x256) take 262144 bytes, more than the 232448 bytes (227 KB) of shared memory a block may use (in @gemm)
// ATOM:    error: 'tile.matmul' op tile-tiling: atom=fma_f32 multiplies f32 inputs, but a and b are f16 (in @gemm)
// BLOCK:   pass-pipeline:1:1: error: invalid options for pass 'tile-tiling': tile-tiling: block=64,64: expected 3 positive integers BM,BN,BK
