// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// With `expected-*` annotations, --verify-diagnostics works as in mlir-opt:
// each error (verifier or parse error) must match an annotation on the line it
// points at (`@+N`, `@-N`, `@above`, `@below`, or the same line) whose text is a
// substring of the message, and every annotation must be matched; then the
// exit status is 0. Chunks without errors are printed as usual.

// CHECK:      func.func @valid() {
// CHECK-NEXT:   func.return
// CHECK-NOT:  func.func @wrong_return
// CHECK-NOT:  func.func @undefined_value

func.func @valid() {
  func.return
}

// -----

func.func @wrong_return(%a: i32) -> i64 {
  // expected-error @+1 {{'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]}}
  func.return %a : i32
}

// -----

func.func @wrong_return_count(%a: i32) -> (i32, i32) {
  func.return %a : i32
  // expected-error @-1 {{expected [i32, i32], got [i32]}}
}

// -----

func.func @undefined_value(%a: i32) -> i32 {
  %r = arith.addi %a, %undefined : i32 // expected-error {{use of undefined value '%undefined'}}
  func.return %r : i32
}

// -----

func.func @wrong_operand_type(%a: i32, %b: i64) -> i32 {
  // expected-error @below {{'arith.addi' op operand 'rhs' at position 1 does not verify}}
  %r = "arith.addi"(%a, %b) : (i32, i64) -> i32
  func.return %r : i32
}
