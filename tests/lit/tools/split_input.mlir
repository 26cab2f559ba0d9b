// RUN: tile-opt %s --split-input-file | filecheck %s
// RUN: tile-opt %s --split-input-file -p canonicalize --print-op-generic | filecheck %s --check-prefix=GENERIC

// Each chunk is parsed and printed as its own module; the outputs are
// separated by the same separator line.

// CHECK:       builtin.module {
// CHECK-NEXT:    func.func @first() {
// CHECK:       {{^// [-]{5}$}}
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @second() {
// CHECK:       {{^// [-]{5}$}}
// CHECK-NEXT:  builtin.module {
// CHECK-NEXT:    func.func @third() {
// CHECK-NOT:   {{^// [-]{5}$}}

// GENERIC: "func.func"() <{sym_name = "first"
// GENERIC: {{^// [-]{5}$}}
// GENERIC: "func.func"() <{sym_name = "second"
// GENERIC: {{^// [-]{5}$}}
// GENERIC: "func.func"() <{sym_name = "third"

func.func @first() {
  func.return
}

// -----

func.func @second() {
  func.return
}

// -----

func.func @third() {
  func.return
}
