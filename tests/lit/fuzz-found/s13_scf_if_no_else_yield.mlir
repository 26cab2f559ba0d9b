// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 13), minimized: an scf.if with a result and no yields
// (LLVM rejected a phi of the lowered branches, without a location).
// CHECK: s13_scf_if_no_else_yield.mlir:7:8: error: 'scf.if' has 1 result(s): its then region must end with an 'scf.yield' of them
// CHECK-NOT: internal error
func.func @f(%b: i1) -> i1 {
  %y = scf.if %b -> (i1) {
  }
  func.return %y : i1
}
