// RUN: tile-opt %s -p 'tile-swizzle{report=true max_bits=2}' | filecheck %s

// With at most 2 swizzle bits (4 phases) nothing makes ldmatrix on 128-byte
// rows conflict-free; the pass takes the fewest wavefronts and says so.

func.func @k() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 8192>} {
  %s = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  func.return
}

// CHECK: %s = tile.alloc {tile.bank_conflicts = "stores 1-way -> 1-way, ldmatrix 8-way -> 2-way; no conflict-free swizzle, fewest wavefronts"} : !tile.st<64x64xf16, Sw<2,3,3> o 0 o (64,64):(64,1)>
