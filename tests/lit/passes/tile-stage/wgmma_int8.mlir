// RUN: tile-opt %s -p 'tile-stage{wgmma=true}' | filecheck %s
// RUN: tile-opt %s -p 'tile-stage{wgmma=true},tile-swizzle,tile-pipeline{stages=2},tile-layout,tile-distribute,tile-to-llvm' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// An int8 GEMM with weights N x K (tl.lang's `acc += tl.dot(a_tile, w_tile.T)`, as the language
// traces it: the int32 add is a tile.map). tile-stage folds the add into the mma's accumulator,
// stages both operands and, both being whole staged tiles read K-major (A M x K, B N x K), makes
// the mma the block's warpgroup MMA of 8-bit integers: wgmma ... .s32.s8.s8 (K = 32 a step, no
// scale or transpose operands), its accumulators i32 registers.
  func.func @int8_matmul_nt(%a: !tile.gl<i8, [?, ?]> {tile.aligned_rows = 16 : i64}, %w: !tile.gl<i8, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<i32, [?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [2, 2, 1], block = [128, 1, 1], smem = 0>} {
    %0 = arith.constant 64 : index
    %a_dim1 = tile.dim %a, 1 : !tile.gl<i8, [?, ?]>
    %1 = arith.constant 0 : index
    %blockx = tile.block_id x
    %2 = arith.muli %blockx, %0 : index
    %blocky = tile.block_id y
    %3 = arith.muli %blocky, %0 : index
    %4 = tile.zeros : !tile.rt<64x64xi32>
    %acc = scf.for %k = %1 to %a_dim1 step %0 iter_args(%acc_1 = %4) -> (!tile.rt<64x64xi32>) {
      %a_t = tile.load %a[%2, %k] : !tile.gl<i8, [?, ?]> -> !tile.rt<64x64xi8>
      %w_t = tile.load %w[%3, %k] : !tile.gl<i8, [?, ?]> -> !tile.rt<64x64xi8>
      %5 = tile.transpose %w_t : !tile.rt<64x64xi8> -> !tile.rt<64x64xi8>
      %6 = tile.zeros : !tile.rt<64x64xi32>
      %7 = tile.mma %a_t, %5, %6 : !tile.rt<64x64xi8>, !tile.rt<64x64xi8>, !tile.rt<64x64xi32> -> !tile.rt<64x64xi32>
      %8 = tile.map %acc_1, %7 : !tile.rt<64x64xi32>, !tile.rt<64x64xi32> -> !tile.rt<64x64xi32> {
      ^bb0(%9: i32, %10: i32):
        %11 = arith.addi %9, %10 : i32
        tile.yield %11 : i32
      }
      scf.yield %8 : !tile.rt<64x64xi32>
    }
    tile.store %acc, %c[%2, %3] : !tile.rt<64x64xi32> -> !tile.gl<i32, [?, ?]>
    func.return
  }
// CHECK: %a_t_shared = tile.alloc : !tile.st<64x64xi8, (64,64):(64,1)>
// CHECK: %w_t_shared = tile.alloc : !tile.st<64x64xi8, (64,64):(64,1)>
// CHECK: scf.for
// CHECK: tile.wgmma %a_t_shared[%{{.*}}], %w_t_shared[%{{.*}}], %acc_1 transpose_b groups array<i64: 1, 1> : !tile.st<64x64xi8, (64,64):(64,1)>, !tile.st<64x64xi8, (64,64):(64,1)>, !tile.rt<64x64xi32> -> !tile.rt<64x64xi32>
// CHECK-NOT: tile.map
// CHECK-NOT: tile.mma

// PTX: wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%r{{[0-9]+}}, %r{{.*}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p;
// PTX: wgmma.commit_group.sync.aligned
