// RUN: tile-opt %s -p canonicalize | filecheck %s --check-prefix=CANON
// RUN: tile-opt %s -p cse | filecheck %s --check-prefix=CSE
// RUN: tile-opt %s -p 'cse,canonicalize' --print-between-passes | filecheck %s --check-prefix=BETWEEN
// RUN: tile-opt %s -p 'canonicalize,cse' -t 'mlir{print-generic-format=true}' | filecheck %s --check-prefix=TARGET

// xDSL's own passes run through tile-opt's registry, with the same `-p` syntax
// (`a{opt=1 list=1,2},b`); the `-t` target takes options the same way.

func.func @fold() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %s = arith.addi %a, %b : i32
  %t = arith.addi %a, %b : i32
  %u = arith.muli %s, %t : i32
  func.return %u : i32
}

// canonicalize folds the arithmetic away.
// CANON-LABEL: func.func @fold() -> i32 {
// CANON-NEXT:    %u = arith.constant 9 : i32
// CANON-NEXT:    func.return %u : i32
// CANON-NEXT:  }

// cse only merges the two identical additions.
// CSE-LABEL: func.func @fold() -> i32 {
// CSE-NEXT:    %a = arith.constant 1 : i32
// CSE-NEXT:    %b = arith.constant 2 : i32
// CSE-NEXT:    %s = arith.addi %a, %b : i32
// CSE-NEXT:    %u = arith.muli %s, %s : i32
// CSE-NEXT:    func.return %u : i32

// BETWEEN:      IR after cse:
// BETWEEN:        %u = arith.muli %s, %s : i32
// BETWEEN:      %u = arith.constant 9 : i32

// TARGET: "func.func"() <{sym_name = "fold", function_type = () -> i32}> ({
// TARGET:   %u = "arith.constant"() <{value = 9 : i32}> : () -> i32
