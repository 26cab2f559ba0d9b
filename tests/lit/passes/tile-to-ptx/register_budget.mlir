// RUN: not tile-opt %s -p 'tile-to-ptx{block=192,256,64 wgmma=true bulk=true producer=true}' -t 'ptx{arch=sm_90a}' 2>&1 | filecheck %s
// RUN: tile-opt %s -p 'tile-to-ptx{block=128,256,64 wgmma=true bulk=true producer=true}' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=FITS

// Three consumer warpgroups and a producer are 512 threads: at launch each has 65536 / 512 = 128
// registers, and ptxas allocates every instruction within that (setmaxnreg later moves registers
// between the roles, it does not raise the bound). A 64x256 f32 accumulator a warpgroup is 128 of
// them before any address: refused by tile-distribute, not by ptxas after the PTX is written.
// Two consumer warpgroups (384 threads, 168 registers) fit.

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64},
                %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}

// CHECK: error: tile-distribute: @gemm: the fragments need at least 152 registers per thread, more than the 128 each of 512 threads has of an SM's 65536
// FITS: .maxntid 384, 1, 1
// FITS: .maxnreg 168
