// RUN: not tile-opt %s --split-input-file 2>&1 | filecheck %s

// An error in one chunk does not stop the others (as in mlir-opt); its
// location is a line of this file, not of the chunk; the exit status is 1.

// CHECK:       func.func @before()
// CHECK:       {{^// [-]{5}$}}
// CHECK-NEXT:  {{.*}}split_input_errors.mlir:[[# @LINE + 15]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// CHECK-NEXT:    func.return %a : i32
// CHECK-NEXT:    ^^^^^^^^^^^
// CHECK-NEXT:  {{^// [-]{5}$}}
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @after()
// CHECK-NOT:   Traceback

func.func @before() {
  func.return
}

// -----

func.func @bad(%a: i32) -> i64 {
  func.return %a : i32
}

// -----

func.func @after() {
  func.return
}
