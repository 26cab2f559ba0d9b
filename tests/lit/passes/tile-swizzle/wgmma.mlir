// RUN: tile-opt %S/../../../../examples/kernels/wgmma_rs_two_loops.mlir -p 'tile-swizzle{report=true}' | filecheck %s

// Tiles a tile.wgmma reads take the layout its descriptors read (128-byte rows
// under the tensor map's swizzle), not a bank-model choice: q's tile (an A,
// K-major) and k's (a B stored N x K, then a B stored K x N) alike.

// CHECK: %smem = tile.alloc {tile.bank_conflicts = "wgmma operand: stores 1-way"} : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK: %smem_1 = tile.alloc {tile.bank_conflicts = "wgmma operand: stores 1-way"} : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK: tile.wgmma %smem[%{{.*}}], %smem_1[%{{.*}}], %{{.*}} transpose_b : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
