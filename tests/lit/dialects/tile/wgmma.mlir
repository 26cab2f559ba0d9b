// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// tile.wgmma: a warpgroup's 64-row band of A (at %row) times the N-column band
// of B (at %col), both in shared memory; each warp holds 16 rows of the product.

!sa = !tile.st<128x64xbf16, Sw<3,3,3> o 0 o (128,64):(64,1)>
!sb = !tile.st<64x256xbf16, Sw<3,3,3> o 0 o (64,(64,4)):(64,(1,4096))>
func.func @k(%sa: !sa, %sb: !sb, %row: index, %col: index, %acc: !tile.rt<16x128xf32>) -> !tile.rt<16x128xf32> {
  %d = tile.wgmma %sa[%row], %sb[%col], %acc : !sa, !sb, !tile.rt<16x128xf32> -> !tile.rt<16x128xf32>
  func.return %d : !tile.rt<16x128xf32>
}

// CHECK: %d = tile.wgmma %sa[%row], %sb[%col], %acc : !tile.st<128x64xbf16, Sw<3,3,3> o 0 o (128,64):(64,1)>, !tile.st<64x256xbf16, Sw<3,3,3> o 0 o (64,(64,4)):(64,(1,4096))>, !tile.rt<16x128xf32> -> !tile.rt<16x128xf32>

// The block's form (groups [GM, GN]): the accumulator is the block's 128x256 tile, shared by two
// warpgroups along M (each one 64-row band and all 256 columns).
func.func @block(%sa: !sa, %sb: !sb, %c0: index, %acc: !tile.rt<128x256xf32>) -> !tile.rt<128x256xf32> {
  %d = tile.wgmma %sa[%c0], %sb[%c0], %acc groups array<i64: 2, 1> : !sa, !sb, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
  func.return %d : !tile.rt<128x256xf32>
}

// CHECK: %d = tile.wgmma %sa[%c0], %sb[%c0], %acc groups array<i64: 2, 1> : !tile.st<128x64xbf16, Sw<3,3,3> o 0 o (128,64):(64,1)>, !tile.st<64x256xbf16, Sw<3,3,3> o 0 o (64,(64,4)):(64,(1,4096))>, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
