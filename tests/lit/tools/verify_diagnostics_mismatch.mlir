// RUN: not tile-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

// --verify-diagnostics fails (exit status 1) when an error has no matching
// annotation, or an annotation matches no error; both are reported.

func.func @wrong_text(%a: i32) -> i64 {
  // expected-error @+1 {{got [i16]}}
  func.return %a : i32
}
// CHECK:      verify_diagnostics_mismatch.mlir:[[# @LINE - 2]]:3: error: unexpected error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT:   func.return %a : i32
// CHECK-NEXT:   ^^^^^^^^^^^
// CHECK-NEXT: verify_diagnostics_mismatch.mlir:[[# @LINE - 6]]:6: error: expected error "got [i16]" at line [[# @LINE - 5]] was not produced

// -----

// expected-error @+1 {{never produced}}
func.func @valid() {
  func.return
}
// CHECK:      verify_diagnostics_mismatch.mlir:[[# @LINE - 4]]:4: error: expected error "never produced" at line [[# @LINE - 3]] was not produced

// -----

func.func @wrong_line(%a: i32) -> i64 {
  // expected-error @+2 {{got [i32]}}
  func.return %a : i32
}
// CHECK:      verify_diagnostics_mismatch.mlir:[[# @LINE - 2]]:3: error: unexpected error: {{.*}} got [i32]
// CHECK:      verify_diagnostics_mismatch.mlir:[[# @LINE - 4]]:6: error: expected error "got [i32]" at line [[# @LINE - 2]] was not produced
// CHECK-NOT:  Traceback
