// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s
// RUN: tile-opt %s --print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: tile-opt %s -o %t && filecheck %s --input-file %t

// Upstream IR (func, arith, scf) goes through tile-opt unchanged, and its
// printed form (custom or generic) parses back to the same thing.

// CHECK-LABEL: func.func @axpy(%a: i32, %x: i32, %y: i32) -> i32 {
// CHECK-NEXT:    %ax = arith.muli %a, %x : i32
// CHECK-NEXT:    %r = arith.addi %ax, %y : i32
// CHECK-NEXT:    func.return %r : i32
// CHECK-NEXT:  }
func.func @axpy(%a: i32, %x: i32, %y: i32) -> i32 {
  %ax = arith.muli %a, %x : i32
  %r = arith.addi %ax, %y : i32
  func.return %r : i32
}
// Every parsed op carries the location of its name in this file, printed with
// --print-debuginfo (as mlir-opt does).
// LOC:      %ax = arith.muli %a, %x : i32 loc("{{.*}}roundtrip.mlir":[[# @LINE - 6]]:9)
// LOC-NEXT: %r = arith.addi %ax, %y : i32 loc("{{.*}}roundtrip.mlir":[[# @LINE - 6]]:8)
// LOC-NEXT: func.return %r : i32 loc("{{.*}}roundtrip.mlir":[[# @LINE - 6]]:3)
// LOC-NEXT: } loc("{{.*}}roundtrip.mlir":[[# @LINE - 10]]:1)

// CHECK-LABEL: func.func @loop(%n: index) -> f32 {
// CHECK:         %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
// CHECK-NEXT:      %next = arith.addf %acc, %one : f32
// CHECK-NEXT:      scf.yield %next : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s : f32
func.func @loop(%n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %next = arith.addf %acc, %one : f32
    scf.yield %next : f32
  }
  func.return %s : f32
}
