// RUN: not tile-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not tile-opt %s -p canonicalize,no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not tile-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not tile-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not tile-opt %s -t no-such-target 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not tile-opt %s.does-not-exist 2>&1 | filecheck %s --check-prefix=NOFILE
// RUN: not tile-opt %S/Inputs/parse_error.mlir 2>&1 | filecheck %s --check-prefix=PARSE

// Invalid IR and bad command lines give one diagnostic with a location (in the
// input, or in the -p text) on stderr and exit status 1 -- never a Python
// traceback.

func.func @wrong_return(%a: i32) -> i64 {
  func.return %a : i32
}

// VERIFY:      errors.mlir:[[# @LINE - 3]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types: expected [i64], got [i32]
// VERIFY-NEXT:   func.return %a : i32
// VERIFY-NEXT:   ^^^^^^^^^^^
// VERIFY-NOT:  Traceback

// PASS:      pass-pipeline:1:14: error: unknown pass 'no-such-pass'
// PASS-NEXT: canonicalize,no-such-pass
// PASS-NEXT: {{^             \^{12}$}}
// PASS-NOT:  Traceback

// OPTION:      pass-pipeline:1:1: error: invalid options for pass 'canonicalize': Provided arguments ["no_such_option"] not found
// OPTION-NOT:  Traceback

// SYNTAX:      pass-pipeline:1:5: error: Expected argument name here
// SYNTAX-NEXT: cse{
// SYNTAX-NOT:  Traceback

// TARGET:      tile-opt: error: unknown target 'no-such-target' (available: {{.*}}mlir
// TARGET-NOT:  Traceback

// NOFILE:      tile-opt: error: cannot read input file '{{.*}}errors.mlir.does-not-exist': No such file or directory
// NOFILE-NOT:  Traceback

// PARSE:      parse_error.mlir:4:23: error: use of undefined value '%undefined'
// PARSE-NEXT:   %r = arith.addi %a, %undefined : i32
// PARSE-NEXT: {{^                      \^{10}$}}
// PARSE-NOT:  Traceback
