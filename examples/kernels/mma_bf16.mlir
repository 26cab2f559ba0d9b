// One warp, one tensor-core instruction: D (16x8, f32) = A (16x16, bf16) · B (16x8, bf16).
//
// Written by hand at the fragment level, i.e. what register allocation
// (tile-distribute) produces for a 16x8x16 tile. A, B and D are row-major.
// B row-major is K x N, the transpose of the "col" operand mma.sync wants,
// so its fragment is read with ldmatrix .trans. Launch: grid 1, block 32.
//
//   tile-opt examples/kernels/mma_bf16.mlir -p tile-to-llvm -t 'ptx{arch=sm_80}'
//
// Lane l, g = l / 4, q = l % 4:
//   global -> shared: cp.async, 16 bytes per lane (A: 32 chunks, B: 16 chunks = its 16 rows);
//   A fragment: ldmatrix.x4, lane l points at row l % 16, column 8 * (l / 16);
//   B fragment: ldmatrix.x2.trans, lane l < 16 points at row k = l of B (matrix l / 8
//     is rows k = 8 (l / 8) .. +7); .trans gives lane l the values B[2q][g], B[2q+1][g]
//     (and rows +8 in the second register), the mma's b0..b3;
//   D fragment: d0, d1 = D[g][2q], D[g][2q+1]; d2, d3 = D[g+8][2q], D[g+8][2q+1].

func.func @mma_bf16(%a: !llvm.ptr<1> {tile.dtype = bf16}, %b: !llvm.ptr<1> {tile.dtype = bf16},
                    %d: !llvm.ptr<1> {tile.dtype = f32, tile.output})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 768>} {
  %sa = frag.shared "sa", 512, align 128 : !llvm.ptr<3>
  %sb = frag.shared "sb", 256, align 128 : !llvm.ptr<3>
  %lane_index = tile.lane_id
  %lane = arith.index_cast %lane_index : index to i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c8 = arith.constant 8 : i32
  %c15 = arith.constant 15 : i32
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32

  // Global -> shared, 16 bytes per lane: all of A, B (16 rows of 16 bytes) with lanes 0..15.
  %chunk = arith.muli %lane, %c16 : i32
  %a_src = llvm.getelementptr %a[%chunk] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
  %a_dst = llvm.getelementptr %sa[%chunk] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  frag.cp_async "cg" %a_dst, %a_src, 16 : !llvm.ptr<3>, !llvm.ptr<1>
  %in_b = arith.cmpi ult, %lane, %c16 : i32
  scf.if %in_b {
    %b_src = llvm.getelementptr %b[%chunk] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i8
    %b_dst = llvm.getelementptr %sb[%chunk] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
    frag.cp_async "cg" %b_dst, %b_src, 16 : !llvm.ptr<3>, !llvm.ptr<1>
  }
  frag.cp_async_commit
  frag.cp_async_wait 0
  tile.barrier

  // A: row l % 16 (32 bytes per row), column block l / 16 (16 bytes).
  %a_row = arith.andi %lane, %c15 : i32
  %a_col = arith.shrui %lane, %c4 : i32
  %a_row_bytes = arith.muli %a_row, %c32 : i32
  %a_col_bytes = arith.muli %a_col, %c16 : i32
  %a_off = arith.addi %a_row_bytes, %a_col_bytes : i32
  %a_ptr = llvm.getelementptr %sa[%a_off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  %a0, %a1, %a2, %a3 = frag.ldmatrix %a_ptr x 4 : !llvm.ptr<3> -> i32, i32, i32, i32

  // B: row k = l % 16 (16 bytes per row); lanes 16..31 give no address (x2).
  %b_row = arith.andi %lane, %c15 : i32
  %b_off = arith.muli %b_row, %c16 : i32
  %b_ptr = llvm.getelementptr %sb[%b_off] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  %b0, %b1 = frag.ldmatrix %b_ptr x 2 trans : !llvm.ptr<3> -> i32, i32

  %zero = arith.constant 0.0 : f32
  %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k16_bf16> (%a0, %a1, %a2, %a3) (%b0, %b1) (%zero, %zero, %zero, %zero)
      : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32

  // D[g][2q..2q+1] and D[g+8][2q..2q+1], 8 floats per row.
  %g = arith.shrui %lane, %c2 : i32
  %q = arith.andi %lane, %c3 : i32
  %g8 = arith.muli %g, %c8 : i32
  %q2 = arith.muli %q, %c2 : i32
  %top = arith.addi %g8, %q2 : i32
  %c64 = arith.constant 64 : i32
  %bottom = arith.addi %top, %c64 : i32
  %top_ptr = llvm.getelementptr %d[%top] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %bottom_ptr = llvm.getelementptr %d[%bottom] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %empty = arith.constant dense<0.0> : vector<2xf32>
  %t0 = vector.insert %d0, %empty [0] : f32 into vector<2xf32>
  %t1 = vector.insert %d1, %t0 [1] : f32 into vector<2xf32>
  %u0 = vector.insert %d2, %empty [0] : f32 into vector<2xf32>
  %u1 = vector.insert %d3, %u0 [1] : f32 into vector<2xf32>
  frag.store %t1, %top_ptr : vector<2xf32>, !llvm.ptr<1>
  frag.store %u1, %bottom_ptr : vector<2xf32>, !llvm.ptr<1>
  func.return
}
