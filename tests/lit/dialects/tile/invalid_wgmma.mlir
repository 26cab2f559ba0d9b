// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// tile.wgmma's verifier names the operand and the shape it expects.

func.func @k_differs(%sa: !tile.st<64x64xf16>, %sb: !tile.st<32x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<64x64xf16>, !tile.st<32x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' K differs: a is 64x64 (K = 64), b is 32x64 (K = 32)

// -----

func.func @band(%sa: !tile.st<32x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<32x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a has 32 rows, not a multiple of 64 (one warpgroup's band)

// -----

func.func @warp_rows(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<32x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<64x64xf16>, !tile.st<64x64xf16>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a warp's accumulator is 16xN, got 32x64

// -----

func.func @n_divides(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x48xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<64x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x48xf32> -> !tile.rt<16x48xf32>
  func.return
}
// CHECK: 'tile.wgmma' N = 48 must be a multiple of 8 up to 256 that divides b's 64 columns

// -----

func.func @f32_inputs(%sa: !tile.st<64x16xf32>, %sb: !tile.st<16x64xf32>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<64x16xf32>, !tile.st<16x64xf32>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a and b must both be f16, both bf16, both f8E4M3FN, both f8E5M2 or both i8, got f32 and f32

// -----

func.func @staged(%sa: !tile.st<2x64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<2x64x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a must be a 2-D tile, got !tile.st<2x64x64xf16

// -----

func.func @register_a_with_row(%a: !tile.rt<16x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %a[%i], %sb[%i], %acc : !tile.rt<16x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a register tile A is the warp's own rows: no [row] band

// -----

func.func @shared_a_without_row(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa, %sb[%i], %acc : !tile.st<64x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a shared A needs the [row] of its 64-row band

// -----

func.func @register_a_rows(%a: !tile.rt<32x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %a, %sb[%i], %acc : !tile.rt<32x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a register A is a warp's 16 rows, got 32x64

// -----

func.func @transposed_b_k(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x32xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc transpose_b : !tile.st<64x64xf16>, !tile.st<64x32xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' K differs: a is 64x64 (K = 64), b is 64x32 (K = 32, stored N x K)

// -----

func.func @async_read_early(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc async : !tile.st<64x64xf16>, !tile.st<64x64xf16>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  %e = tile.add %d, %d : !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' the result of an async tile.wgmma is still being written: 'tile.add' may not use it before a tile.wgmma_wait

// -----

func.func @wait_range(%acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma_wait %acc, 8 : !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma_wait' pending must be 0 to 7 (wgmma.wait_group's range), got 8

// -----

// FP8: both operands K-major (the wgmma has no transpose), K steps of 32
func.func @fp8_kn_b(%sa: !tile.st<64x64xf8E4M3FN>, %sb: !tile.st<64x64xf8E4M3FN>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc : !tile.st<64x64xf8E4M3FN>, !tile.st<64x64xf8E4M3FN>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' f8E4M3FN operands must both be shared and K-major: a shared A (M x K) and b stored N x K (transpose_b)

// -----

func.func @fp8_k(%sa: !tile.st<64x48xf8E5M2>, %sb: !tile.st<64x48xf8E5M2>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc transpose_b : !tile.st<64x48xf8E5M2>, !tile.st<64x48xf8E5M2>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' K = 48 is not a multiple of 32 (wgmma's K for f8E5M2)

// -----

func.func @fp8_mixed(%sa: !tile.st<64x64xf8E4M3FN>, %sb: !tile.st<64x64xf8E5M2>, %i: index, %acc: !tile.rt<16x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc transpose_b : !tile.st<64x64xf8E4M3FN>, !tile.st<64x64xf8E5M2>, !tile.rt<16x64xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a and b must both be f16, both bf16, both f8E4M3FN, both f8E5M2 or both i8, got f8E4M3FN and f8E5M2

// -----

func.func @groups_not_powers(%sa: !tile.st<192x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<192x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc groups array<i64: 3, 1> : !tile.st<192x64xf16>, !tile.st<64x64xf16>, !tile.rt<192x64xf32> -> !tile.rt<192x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' groups must be two powers of two [GM, GN], got [3, 1]

// -----

func.func @groups_bands(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<64x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc groups array<i64: 2, 1> : !tile.st<64x64xf16>, !tile.st<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' the block's accumulator 64x64 does not split into 2x1 warpgroups of 64-row bands and columns a multiple of 8

// -----

func.func @groups_rows(%sa: !tile.st<64x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<128x64xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc groups array<i64: 1, 1> : !tile.st<64x64xf16>, !tile.st<64x64xf16>, !tile.rt<128x64xf32> -> !tile.rt<128x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' the 128x64 product needs 128 rows of a (64x64), N = 64 dividing b's 64 columns, and at most 256 columns a warpgroup

// -----

func.func @groups_registers(%a: !tile.rt<16x64xf16>, %sb: !tile.st<64x64xf16>, %i: index, %acc: !tile.rt<64x64xf32>) {
  %d = tile.wgmma %a, %sb[%i], %acc groups array<i64: 1, 1> : !tile.rt<16x64xf16>, !tile.st<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  func.return
}
// CHECK: 'tile.wgmma' a register A of the block's product has its 64 rows, got 16x64

// -----

func.func @groups_threads(%sa: !tile.st<128x64xf16>, %sb: !tile.st<64x256xf16>, %i: index, %acc: !tile.rt<128x256xf32>) {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc groups array<i64: 2, 16> : !tile.st<128x64xf16>, !tile.st<64x256xf16>, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
  func.return
}
// CHECK: 'tile.wgmma' groups [2, 16] are 4096 threads; a block has at most 1024

// -----

func.func @groups_block(%sa: !tile.st<128x64xf16>, %sb: !tile.st<64x256xf16>, %i: index, %acc: !tile.rt<128x256xf32>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %d = tile.wgmma %sa[%i], %sb[%i], %acc groups array<i64: 2, 1> : !tile.st<128x64xf16>, !tile.st<64x256xf16>, !tile.rt<128x256xf32> -> !tile.rt<128x256xf32>
  func.return
}
// CHECK: 'tile.wgmma' groups [2, 1] need 256 threads; the kernel's block has 128
