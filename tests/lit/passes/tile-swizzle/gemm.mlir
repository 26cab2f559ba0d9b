// RUN: tile-opt %s -p tile-swizzle | filecheck %s

// A block-level GEMM step with plain row-major shared tiles. A (32x64 f16) and
// B (64x64 f16) have 128-byte rows: ldmatrix's 8 rows of a phase all start in
// bank 0 (8-way), so both get Sw<3,3,3> (Triton: vec=8, perPhase=1,
// maxPhase=8). Every use of the tiles carries the new type.

func.func @gemm_step(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %acc: !tile.rt<32x64xf32>, %i: index, %j: index, %k: index) -> !tile.rt<32x64xf32>
    attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 12288>} {
  %sa = tile.alloc : !tile.st<32x64xf16, (32,64):(64,1)>
  %sb = tile.alloc : !tile.st<64x64xf16, (64,64):(64,1)>
  tile.copy %a[%i, %k] -> %sa : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, (32,64):(64,1)>
  tile.async_copy %b[%k, %j] -> %sb : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, (64,64):(64,1)>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %ra = tile.load %sa : !tile.st<32x64xf16, (32,64):(64,1)> -> !tile.rt<32x64xf16>
  %rb = tile.load %sb : !tile.st<64x64xf16, (64,64):(64,1)> -> !tile.rt<64x64xf16>
  %d = tile.mma %ra, %rb, %acc : !tile.rt<32x64xf16>, !tile.rt<64x64xf16>, !tile.rt<32x64xf32> -> !tile.rt<32x64xf32>
  func.return %d : !tile.rt<32x64xf32>
}

// CHECK-LABEL: func.func @gemm_step
// CHECK:      %sa = tile.alloc : !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>
// CHECK-NEXT: %sb = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK-NEXT: tile.copy %a[%i, %k] -> %sa : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>
// CHECK-NEXT: tile.async_copy %b[%k, %j] -> %sb : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK:      %ra = tile.load %sa : !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)> -> !tile.rt<32x64xf16>
// CHECK-NEXT: %rb = tile.load %sb : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<64x64xf16>
// CHECK-NOT:  (32,64):(64,1)>
// CHECK-NOT:  tile.bank_conflicts

// Rows of 32 f16 (64 bytes: two rows per 128-byte phase) get Sw<2,3,3>, rows
// of 128 f16 on a flat layout Sw<3,3,4>, columns of a column-major tile the
// same as rows; bf16 is f16's width; f32 rows of 32 get Sw<3,2,3>.

func.func @widths() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 49152>} {
  %a = tile.alloc : !tile.st<64x32xf16, (64,32):(32,1)>
  %b = tile.alloc : !tile.st<16x128xbf16, (16,128):(128,1)>
  %c = tile.alloc : !tile.st<64x32xf16, (64,32):(1,64)>
  %d = tile.alloc : !tile.st<32x32xf32, (32,32):(32,1)>
  %e = tile.alloc : !tile.st<16x8xf16, (16,8):(8,1)>
  func.return
}

// CHECK-LABEL: func.func @widths
// CHECK-NEXT: %a = tile.alloc : !tile.st<64x32xf16, Sw<2,3,3> o 0 o (64,32):(32,1)>
// CHECK-NEXT: %b = tile.alloc : !tile.st<16x128xbf16, Sw<3,3,4> o 0 o (16,128):(128,1)>
// CHECK-NEXT: %c = tile.alloc : !tile.st<64x32xf16, Sw<3,3,3> o 0 o (64,32):(1,64)>
// CHECK-NEXT: %d = tile.alloc : !tile.st<32x32xf32, Sw<3,2,3> o 0 o (32,32):(32,1)>
// 16-byte rows: 8 rows already fill the 32 banks, nothing to do
// CHECK-NEXT: %e = tile.alloc : !tile.st<16x8xf16, (16,8):(8,1)>
