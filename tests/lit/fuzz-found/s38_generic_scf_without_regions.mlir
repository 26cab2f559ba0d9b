// RUN: not tile-opt %s --split-input-file 2>&1 | filecheck %s
// Reproducers session 38's fuzzing found (seeds 3802, 3803): scf.for / scf.if in the generic form with
// results and no regions. The parser's check that every region yields the results read the missing
// region (an IndexError); the op's region count is now checked first, at the op.
func.func @for_without_a_body(%i: index) -> index {
  %r = "scf.for"(%i, %i, %i) : (index, index, index) -> index
  func.return %r : index
}
// CHECK: s38_generic_scf_without_regions.mlir:6:8: error: 'scf.for' expects 1 region(s), got 0

// -----

func.func @if_without_branches(%c: i1, %x: f32) -> f32 {
  %r = "scf.if"(%c) : (i1) -> f32
  func.return %r : f32
}
// CHECK: s38_generic_scf_without_regions.mlir:14:8: error: 'scf.if' expects 2 region(s), got 0
// CHECK-NOT: Traceback
