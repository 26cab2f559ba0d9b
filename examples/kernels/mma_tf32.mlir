// One warp, one tensor-core instruction: D (16x8, f32) = A (16x8, tf32) · B (8x8, tf32).
//
// Written by hand at the fragment level, i.e. what register allocation
// (tile-distribute) produces for a 16x8x8 tf32 tile. A, B and D are f32,
// row-major, in global memory; the mma rounds A and B to tf32
// (cvt.rna.tf32.f32) and accumulates in f32. Launch: grid 1, block 32.
//
//   tile-opt examples/kernels/mma_tf32.mlir -p tile-to-llvm -t 'ptx{arch=sm_80}'
//
// Lane l, g = l / 4, q = l % 4 (PTX ISA, mma.m16n8k8 .tf32 fragments):
//   global -> shared: cp.async, 16 bytes per lane (A: 32 chunks, B: 16 chunks);
//   A fragment (scalar loads from shared): a0 = A[g][q], a1 = A[g+8][q],
//     a2 = A[g][q+4], a3 = A[g+8][q+4];
//   B fragment: b0 = B[q][g], b1 = B[q+4][g];
//   D fragment: d0, d1 = D[g][2q], D[g][2q+1]; d2, d3 = D[g+8][2q], D[g+8][2q+1].

func.func @mma_tf32(%a: !llvm.ptr<1> {tile.dtype = f32}, %b: !llvm.ptr<1> {tile.dtype = f32},
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
  %c16 = arith.constant 16 : i32
  %c32 = arith.constant 32 : i32
  %c64 = arith.constant 64 : i32

  // Global -> shared, 16 bytes per lane: all of A (512 bytes), B (256 bytes) with lanes 0..15.
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

  %g = arith.shrui %lane, %c2 : i32
  %q = arith.andi %lane, %c3 : i32

  // A (8 floats per row): elements g*8+q, +64 (row g+8), +4 (column q+4), +68.
  %g8 = arith.muli %g, %c8 : i32
  %a_e0 = arith.addi %g8, %q : i32
  %a_e1 = arith.addi %a_e0, %c64 : i32
  %a_e2 = arith.addi %a_e0, %c4 : i32
  %a_e3 = arith.addi %a_e1, %c4 : i32
  %a_p0 = llvm.getelementptr %sa[%a_e0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %a_p1 = llvm.getelementptr %sa[%a_e1] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %a_p2 = llvm.getelementptr %sa[%a_e2] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %a_p3 = llvm.getelementptr %sa[%a_e3] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %a_f0 = frag.load %a_p0 : !llvm.ptr<3> -> f32
  %a_f1 = frag.load %a_p1 : !llvm.ptr<3> -> f32
  %a_f2 = frag.load %a_p2 : !llvm.ptr<3> -> f32
  %a_f3 = frag.load %a_p3 : !llvm.ptr<3> -> f32
  %a0 = frag.tf32 %a_f0
  %a1 = frag.tf32 %a_f1
  %a2 = frag.tf32 %a_f2
  %a3 = frag.tf32 %a_f3

  // B (8 floats per row): elements q*8+g and (q+4)*8+g = +32.
  %q8 = arith.muli %q, %c8 : i32
  %b_e0 = arith.addi %q8, %g : i32
  %b_e1 = arith.addi %b_e0, %c32 : i32
  %b_p0 = llvm.getelementptr %sb[%b_e0] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %b_p1 = llvm.getelementptr %sb[%b_e1] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
  %b_f0 = frag.load %b_p0 : !llvm.ptr<3> -> f32
  %b_f1 = frag.load %b_p1 : !llvm.ptr<3> -> f32
  %b0 = frag.tf32 %b_f0
  %b1 = frag.tf32 %b_f1

  %zero = arith.constant 0.0 : f32
  %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k8_tf32> (%a0, %a1, %a2, %a3) (%b0, %b1) (%zero, %zero, %zero, %zero)
      : (i32, i32, i32, i32) (i32, i32) -> f32, f32, f32, f32

  // D[g][2q..2q+1] and D[g+8][2q..2q+1], 8 floats per row.
  %q2 = arith.muli %q, %c2 : i32
  %top = arith.addi %g8, %q2 : i32
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
