// RUN: not tile-opt %s -p 'tile-to-ptx{stages=3 stages=4}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not tile-opt %s -p 'tile-swizzle{max_bits=-1}' 2>&1 | filecheck %s --check-prefix=BITS
// RUN: not tile-opt %s -p 'tile-layout,tile-to-ptx{thread_tile=-1,4}' 2>&1 | filecheck %s --check-prefix=TT
// RUN: not tile-opt %s -p 'tile-to-ptx{block=4096,128,32}' 2>&1 | filecheck %s --check-prefix=BIG
// RUN: not tile-opt %s -p 'tile-to-ptx{block=256,256,64 warps=1,1}' 2>&1 | filecheck %s --check-prefix=REGS
// RUN: not tile-opt %s -p 'tile-to-ptx{tf32=true}' 2>&1 | filecheck %s --check-prefix=TF32

// Pass options that are wrong whatever the IR are refused when the pipeline is read, pointing
// into the pipeline text; options that do not fit this IR fail at the op they tile.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}

// TWICE: pass-pipeline:1:1: error: pass 'tile-to-ptx' is given option 'stages' twice
// BITS:  pass-pipeline:1:1: error: invalid options for pass 'tile-swizzle': max_bits=-1: expected 0 .. 5
// TT:    pass-pipeline:1:13: error: invalid options for pass 'tile-to-ptx': tile-tiling: thread_tile=-1,4: expected 2 positive integers TM,TN
// BIG:   pass-pipeline:1:1: error: invalid options for pass 'tile-to-ptx': tile-tiling: block=4096,128,32: each of BM,BN,BK must be at most 1024
// REGS:  pass_options.mlir:12:3: error: 'tile.matmul' op tile-tiling: block=256,256,64 warps=1,1: a 256x256 warp tile is 2048 accumulator registers a lane, more than 224
// TF32:  pass_options.mlir:12:3: error: 'tile.matmul' op tile-tiling: tf32=true rounds f32 operands to tf32 for the tensor cores, but a and b are f16 (in @gemm)
