// RUN: tile-opt %s --verify-diagnostics | filecheck %s

// Without `expected-*` annotations, --verify-diagnostics works as in xdsl-opt:
// the verifier error is printed on stdout (with xDSL's dump of the IR marking
// the op) and the exit status is 0, so the error is checked with FileCheck.

func.func @wrong_return(%a: i32) -> i64 {
  func.return %a : i32
}

// CHECK:      verify_diagnostics_xdsl.mlir:[[# @LINE - 3]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT:   func.return %a : i32
// CHECK-NEXT:   ^^^^^^^^^^^
// CHECK:      "func.return"(%a) : (i32) -> ()
// CHECK-NEXT: ^^^^^^^^^^^^^
// CHECK-NEXT: | Operation does not verify: Expected arguments to have the same types as the function output types: expected [i64], got [i32]
