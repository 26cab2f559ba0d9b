// RUN: not tile-opt %s 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 2027), minimized: xDSL's scf.while verifier raises a
// bare Exception for a block argument of the wrong type; tilec/ir/verify.py turns it into a located error.
// CHECK: s17_scf_while_arg_type.mlir:9:3: error: 'scf.while' op Block arguments with wrong type, expected i7, got index
// CHECK-NOT: internal error

func.func @loop(%n: index) {
  %c0 = arith.constant 0 : index
  scf.while (%i = %c0) : (index) -> i7 {
    %more = arith.cmpi slt, %i, %n : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    scf.yield %i : index
  }
  func.return
}
