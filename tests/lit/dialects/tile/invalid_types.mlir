// RUN: tile-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Types and attributes are checked where they are written: each error points
// at the text and names the numbers.

func.func @shared_layout_size() {
  %s = tile.alloc : !tile.st<64x32xf16, (64,16):(16,1)>
  func.return
}
// CHECK: invalid_types.mlir:{{[0-9]+}}:{{[0-9]+}}
// CHECK: tile.st: layout (64,16):(16,1) covers 64x16 elements, expected the tile's 64x32

// -----

func.func @shared_layout_rank() {
  %s = tile.alloc : !tile.st<64x32xf16, 2048:1>
  func.return
}
// CHECK: tile.st: layout 2048:1 has rank 1, the 64x32 tile has rank 2

// -----

func.func @fragment_twice(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,0))>) {
  func.return
}
// CHECK: tile.rt: fragment ((4,8),(2,2)):((32,1),(16,0)) does not hold every element of the 16x8 tile

// -----

func.func @fragment_outside(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,64))>) {
  func.return
}
// CHECK: tile.rt: TV layout ((4,8),(2,2)):((32,1),(16,64)): offset {{[0-9]+}} falls outside the tile (16, 8) of 128 elements

// -----

func.func @launch() attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [2048, 1, 1], smem = 0>} {
  func.return
}
// CHECK: tile.launch: 2048 threads per block, the limit is 1024

// -----

func.func @smem() attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 300000>} {
  func.return
}
// CHECK: tile.launch: 300000 bytes of shared memory, more than the device limit of 232448

// -----

func.func @bad_layout_text() attributes {l = #tile.layout<(8,4):(1)>} {
  func.return
}
// CHECK: layout (8,4):(1): shape and stride have different ranks or nesting

// -----

func.func @zero_extent() attributes {l = #tile.layout<(8,0):(1,8)>} {
  func.return
}
// CHECK: layout (8,0):(1,8): every extent of the shape must be positive

// -----

func.func @bad_swizzle() attributes {s = #tile.swizzle<3,3,2>} {
  func.return
}
// CHECK: Sw<3,3,2>: |shift| must be at least bits so the masks do not overlap

// -----

func.func @unknown_atom() attributes {a = #tile.mma_atom<mma_m16n8k32_f16>} {
  func.return
}
// CHECK: unknown MMA atom 'mma_m16n8k32_f16', expected one of fma_f32, mma_m16n8k16_bf16, mma_m16n8k16_f16, mma_m16n8k32_e4m3, mma_m16n8k32_e4m3_e5m2, mma_m16n8k32_e5m2, mma_m16n8k32_e5m2_e4m3, mma_m16n8k32_s8, mma_m16n8k8_tf32

// -----

func.func @orientation(%v: !tile.rv<64xf32, diagonal>) {
  func.return
}
// CHECK: register vector orientation must be 'row' or 'col', got 'diagonal'

// -----

func.func @tv_rank() attributes {t = #tile.tv<32:1>} {
  func.return
}
// CHECK: TV layout 32:1 must have two modes (thread, value)

// -----

func.func @barrier_kind() {
  %b = tile.mbar_init : !tile.mbar<2, lanes>
  func.return
}
// CHECK: invalid_types.mlir:{{[0-9]+}}:{{[0-9]+}}
// CHECK: tile.mbar: arrivals must be 'tx', 'warps' or 'cluster_warps', got 'lanes'

// -----

// More barriers than a block's shared memory holds (a fuzzed count: tile-distribute then looped over
// 2**31 of them) is refused at the type, naming the limit.
func.func @too_many_barriers() {
  %bars = tile.mbar_init : !tile.mbar<2147483648, warps>
  func.return
}
// CHECK: invalid_types.mlir:{{[0-9]+}}:{{[0-9]+}}
// CHECK: tile.mbar: 2147483648 barriers of 8 bytes do not fit in the 232448 bytes of a block's shared memory
