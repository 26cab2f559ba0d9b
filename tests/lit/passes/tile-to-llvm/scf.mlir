// RUN: tile-opt %s -p tile-to-llvm | filecheck %s

// scf.for (nested, with iter_args), scf.if (with results) and scf.while become blocks,
// llvm.br and llvm.cond_br; loop-carried values are block arguments.

func.func @loops(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x, %cnt = %c0) -> (f32, index) {
    %inner = scf.for %j = %c0 to %c4 step %c1 iter_args(%a = %acc) -> (f32) {
      %a2 = arith.addf %a, %a : f32
      scf.yield %a2 : f32
    }
    %cnt2 = arith.addi %cnt, %i : index
    scf.yield %inner, %cnt2 : f32, index
  }
  %big = arith.cmpi sgt, %r#1, %c4 : index
  %y = scf.if %big -> (f32) {
    %neg = arith.negf %r#0 : f32
    scf.yield %neg : f32
  } else {
    scf.yield %r#0 : f32
  }
  scf.if %big {
    %unused = arith.mulf %y, %y : f32
  }
  func.return %y : f32
}

// CHECK:      llvm.func @loops(%n: i64, %x: f32) -> f32 {
// CHECK-NEXT:   %c0 = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %c1 = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %c4 = llvm.mlir.constant(4) : i64
// CHECK-NEXT:   llvm.br ^[[OUTER:.*]](%c0, %x, %c0 : i64, f32, i64)
// CHECK-NEXT: ^[[OUTER]](%i: i64, %acc: f32, %cnt: i64):
// CHECK-NEXT:   %[[MORE:.*]] = llvm.icmp "slt" %i, %n : i64
// CHECK-NEXT:   llvm.cond_br %[[MORE]], ^[[OBODY:.*]], ^[[OEXIT:.*]]
// CHECK-NEXT: ^[[OBODY]]:
// CHECK-NEXT:   llvm.br ^[[INNER:.*]](%c0, %acc : i64, f32)
// CHECK-NEXT: ^[[INNER]](%j: i64, %a: f32):
// CHECK-NEXT:   %[[IMORE:.*]] = llvm.icmp "slt" %j, %c4 : i64
// CHECK-NEXT:   llvm.cond_br %[[IMORE]], ^[[IBODY:.*]], ^[[IEXIT:.*]]
// CHECK-NEXT: ^[[IBODY]]:
// CHECK-NEXT:   %a2 = llvm.fadd %a, %a {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT:   %[[JN:.*]] = llvm.add %j, %c1 : i64
// CHECK-NEXT:   llvm.br ^[[INNER]](%[[JN]], %a2 : i64, f32)
// CHECK-NEXT: ^[[IEXIT]]:
// CHECK-NEXT:   %cnt2 = llvm.add %cnt, %i : i64
// CHECK-NEXT:   %[[IN:.*]] = llvm.add %i, %c1 : i64
// CHECK-NEXT:   llvm.br ^[[OUTER]](%[[IN]], %a, %cnt2 : i64, f32, i64)
// CHECK-NEXT: ^[[OEXIT]]:
// CHECK-NEXT:   %big = llvm.icmp "sgt" %cnt, %c4 : i64
// CHECK-NEXT:   llvm.cond_br %big, ^[[THEN:.*]], ^[[ELSE:.*]]
// CHECK-NEXT: ^[[THEN]]:
// CHECK-NEXT:   %neg = llvm.fneg %acc : f32
// CHECK-NEXT:   llvm.br ^[[MERGE:.*]](%neg : f32)
// CHECK-NEXT: ^[[ELSE]]:
// CHECK-NEXT:   llvm.br ^[[MERGE]](%acc : f32)
// CHECK-NEXT: ^[[MERGE]](%y: f32):
// CHECK-NEXT:   llvm.br ^[[REST:.*]]
// CHECK-NEXT: ^[[REST]]:
// CHECK-NEXT:   llvm.cond_br %big, ^[[THEN2:.*]], ^[[AFTER:.*]]
// CHECK-NEXT: ^[[THEN2]]:
// CHECK-NEXT:   %unused = llvm.fmul %y, %y {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT:   llvm.br ^[[AFTER]]
// CHECK-NEXT: ^[[AFTER]]:
// CHECK-NEXT:   llvm.return %y : f32
// CHECK-NEXT: }

// scf.while: the op's block branches to the test with the initial values; scf.condition branches
// to the body or out (its values the body's arguments, or the continuation's: the results); the
// body's scf.yield branches back to the test.
func.func @countdown(%count: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %r:2 = scf.while (%k = %count, %s = %zero) : (i32, i32) -> (i32, i32) {
    %more = arith.cmpi sgt, %k, %zero : i32
    scf.condition(%more) %k, %s : i32, i32
  } do {
  ^bb0(%k2: i32, %s2: i32):
    %s3 = arith.addi %s2, %k2 : i32
    %k3 = arith.subi %k2, %one : i32
    scf.yield %k3, %s3 : i32, i32
  }
  func.return %r#1 : i32
}
// CHECK:      llvm.func @countdown(%count: i32) -> i32 {
// CHECK-NEXT:   %zero = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %one = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   llvm.br ^[[TEST:.*]](%count, %zero : i32, i32)
// CHECK-NEXT: ^[[TEST]](%k: i32, %s: i32):
// CHECK-NEXT:   %more = llvm.icmp "sgt" %k, %zero : i32
// CHECK-NEXT:   llvm.cond_br %more, ^[[BODY:.*]](%k, %s : i32, i32), ^[[EXIT:.*]](%k, %s : i32, i32)
// CHECK-NEXT: ^[[BODY]](%k2: i32, %s2: i32):
// CHECK-NEXT:   %s3 = llvm.add %s2, %k2 : i32
// CHECK-NEXT:   %k3 = llvm.sub %k2, %one : i32
// CHECK-NEXT:   llvm.br ^[[TEST]](%k3, %s3 : i32, i32)
// CHECK-NEXT: ^[[EXIT]](%{{.*}}: i32, %[[S:.*]]: i32):
// CHECK-NEXT:   llvm.br ^[[REST:.*]]
// CHECK-NEXT: ^[[REST]]:
// CHECK-NEXT:   llvm.return %[[S]] : i32
// CHECK-NEXT: }
