// RUN: tile-opt %s -p 'tile-swizzle{report=true}' | filecheck %s

// report=true: each 2-D alloc says what the bank model counted, worst phase
// of each access pattern before -> after (stores: the 16-byte copy stores;
// ldmatrix: 8 rows x 16 bytes per phase; lds32: 32-bit fragment reads).

!A = !tile.st<32x32xf16, (32,32):(32,1)>
!T = !tile.st<64x64xf16, (64,64):(64,1)>
!F = !tile.st<32x32xf32, (32,32):(32,1)>
!S = !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
!E = !tile.st<32x64xf16, (32,64):(64,1)>

func.func private @use(!E)

func.func @report(%g: !tile.gl<f16, [?, ?]>, %h: !tile.gl<f32, [?, ?]>, %i: index) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 36864>} {
  // CHECK: %a = tile.alloc {tile.bank_conflicts = "stores 1-way -> 1-way, ldmatrix 4-way -> 1-way"} : !tile.st<32x32xf16, Sw<2,3,3> o 0 o (32,32):(32,1)>
  %a = tile.alloc : !A
  tile.copy %g[%i, %i] -> %a : !tile.gl<f16, [?, ?]> -> !A
  %ra = tile.load %a : !A -> !tile.rt<32x32xf16>

  // Threads ordered down the columns: each store phase writes 8 rows of one
  // 16-byte column, as conflicted as ldmatrix until swizzled.
  // CHECK: %t = tile.alloc {tile.bank_conflicts = "stores 8-way -> 1-way, ldmatrix 8-way -> 1-way"} : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %t = tile.alloc : !T
  tile.copy %g[%i, %i] -> %t thr <(16,8):(1,16)> val <(1,8):(0,1)> : !tile.gl<f16, [?, ?]> -> !T
  %rt = tile.load %t : !T -> !tile.rt<64x64xf16>

  // CHECK: %f = tile.alloc {tile.bank_conflicts = "stores 1-way -> 1-way, ldmatrix 8-way -> 1-way, lds32 8-way -> 1-way"} : !tile.st<32x32xf32, Sw<3,2,3> o 0 o (32,32):(32,1)>
  %f = tile.alloc : !F
  tile.copy %h[%i, %i] -> %f : !tile.gl<f32, [?, ?]> -> !F
  %rf = tile.load %f : !F -> !tile.rt<32x32xf32>

  // Already swizzled: kept, with its counts.
  // CHECK: %s = tile.alloc {tile.bank_conflicts = "kept: ldmatrix 1-way"} : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  %s = tile.alloc : !S
  %rs = tile.load %s : !S -> !tile.rt<64x64xf16>

  // Passed to a call: its type is part of the callee's signature, kept.
  // CHECK: %e = tile.alloc {tile.bank_conflicts = "kept: used by func.call"} : !tile.st<32x64xf16, (32,64):(64,1)>
  %e = tile.alloc : !E
  func.call @use(%e) : (!E) -> ()
  func.return
}
