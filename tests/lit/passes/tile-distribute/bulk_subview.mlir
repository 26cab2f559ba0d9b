// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_90}' | filecheck %s --check-prefix=PTX

// A bulk copy from a subview: %kh is one head (b, h) of the rank-4 view %k
// (B, H, S, D). The tensor map is of %k itself, rank 4, with the box 64x64 over
// its last two dimensions (1 in the others); the copy addresses the box with
// four coordinates, innermost first: the column, the row, then the head and
// the batch the subview fixed. One map serves every head, and a (B, S, H, D)
// tensor transposed to (B, H, S, D) is the same map with other strides.

func.func @heads(%k: !tile.gl<f16, [?, ?, ?, ?]> {tile.aligned_rows = 16 : i64}) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 8192>} {
  %c0 = arith.constant 0 : index
  %b = tile.block_id y
  %h = tile.block_id z
  %row = tile.block_id x
  %kh = tile.subview %k[%b, %h] : !tile.gl<f16, [?, ?, ?, ?]> -> !tile.gl<f16, [?, ?]>
  %bars = tile.mbar_init : !tile.mbar<1>
  %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  tile.mbar_expect %bars[%c0], 8192 : !tile.mbar<1>
  tile.bulk_copy %kh[%row, %c0] -> %s, %bars[%c0] : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>, !tile.mbar<1>
  tile.mbar_wait %bars[%c0], %c0 : !tile.mbar<1>
  func.return
}

// CHECK-LABEL: func.func @heads
// CHECK-SAME:  %k_stride3: i64 {tile.gl = "k", tile.stride = 3 : i64}, %k_map0: !llvm.ptr {tile.gl = "k", tile.tensor_map = 0 : i64, tile.box = array<i64: 64, 64>, tile.swizzle = 128 : i64}
// CHECK:       %[[R:.*]] = arith.index_cast %row : index to i32
// CHECK-NEXT:  %[[H:.*]] = arith.index_cast %h : index to i32
// CHECK-NEXT:  %[[B:.*]] = arith.index_cast %b : index to i32
// CHECK:       scf.if
// CHECK:         frag.tma_load %s, %k_map0[%{{.*}}, %[[R]], %[[H]], %[[B]]], %bars

// PTX:         .param .align 64 .b8 heads_param_9[128]
// PTX:         cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r{{[0-9]+}}], [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}];
