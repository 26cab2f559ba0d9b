// RUN: tile-opt %s -p tile-to-llvm | filecheck %s

// arith (index is i64), math and 1-D vector ops at static positions.

func.func @arith(%i: index, %n: i32, %m: i64, %x: f32, %h: f16, %b: bf16, %v: vector<2xf32>) -> f32 {
  %c = arith.constant 7 : index
  %ci = arith.constant -3 : i32
  %t = arith.constant true
  %cf = arith.constant 1.5 : f32
  %cb = arith.constant 2.0 : bf16
  %cv = arith.constant dense<[1, 2]> : vector<2xindex>
  %a0 = arith.addi %i, %c : index
  %a1 = arith.subi %n, %ci : i32
  %a2 = arith.muli %m, %m : i64
  %a3 = arith.divsi %n, %ci : i32
  %a4 = arith.divui %i, %c : index
  %a5 = arith.remsi %n, %ci : i32
  %a6 = arith.remui %n, %ci : i32
  %a7 = arith.andi %n, %ci : i32
  %a8 = arith.ori %n, %ci : i32
  %a9 = arith.xori %n, %ci : i32
  %s0 = arith.shli %n, %ci : i32
  %s1 = arith.shrsi %n, %ci : i32
  %s2 = arith.shrui %n, %ci : i32
  %mn = arith.minsi %n, %ci : i32
  %mx = arith.maxui %i, %c : index
  %cd = arith.ceildivui %i, %c : index
  %f0 = arith.addf %x, %cf : f32
  %f1 = arith.subf %x, %cf : f32
  %f2 = arith.mulf %h, %h : f16
  %f3 = arith.divf %b, %cb : bf16
  %f4 = arith.negf %x : f32
  %f5 = arith.maxnumf %x, %cf : f32
  %f6 = arith.minimumf %x, %cf : f32
  %p0 = arith.cmpi ult, %i, %c : index
  %p1 = arith.cmpi sge, %n, %ci : i32
  %p2 = arith.cmpf olt, %x, %cf : f32
  %p3 = arith.cmpf true, %x, %cf : f32
  %sel = arith.select %p0, %x, %cf : f32
  %k0 = arith.index_cast %i : index to i32
  %k1 = arith.index_cast %n : i32 to index
  %k2 = arith.index_cast %m : i64 to index
  %e0 = arith.extsi %n : i32 to i64
  %e1 = arith.extui %p1 : i1 to i32
  %e2 = arith.trunci %m : i64 to i32
  %e3 = arith.extf %h : f16 to f32
  %e4 = arith.truncf %x : f32 to bf16
  %e5 = arith.sitofp %n : i32 to f32
  %e6 = arith.uitofp %n : i32 to f32
  %e7 = arith.fptosi %x : f32 to i32
  %e8 = arith.fptoui %x : f32 to i32
  %e9 = arith.bitcast %x : f32 to i32
  %m0 = math.fma %x, %cf, %x : f32
  %m1 = math.absf %x : f32
  %m2 = math.sqrt %x : f32
  %m3 = math.exp2 %x : f32
  %x0 = vector.extract %v[1] : f32 from vector<2xf32>
  %x1 = vector.insert %x, %v [0] : f32 into vector<2xf32>
  %x2 = vector.broadcast %x : f32 to vector<2xf32>
  %x3 = vector.bitcast %v : vector<2xf32> to vector<4xf16>
  func.return %sel : f32
}

// CHECK:      llvm.func @arith(%i: i64, %n: i32, %m: i64, %x: f32, %h: f16, %b: bf16, %v: vector<2xf32>) -> f32 {
// CHECK-NEXT:   %c = llvm.mlir.constant(7) : i64
// CHECK-NEXT:   %ci = llvm.mlir.constant(-3 : i32) : i32
// CHECK-NEXT:   %t = llvm.mlir.constant(true) : i1
// CHECK-NEXT:   %cf = llvm.mlir.constant(1.500000e+00 : f32) : f32
// CHECK-NEXT:   %cb = llvm.mlir.constant(2.000000e+00 : bf16) : bf16
// CHECK-NEXT:   %cv = llvm.mlir.constant(dense<[1, 2]> : vector<2xi64>) : vector<2xi64>
// CHECK-NEXT:   %a0 = llvm.add %i, %c : i64
// CHECK-NEXT:   %a1 = llvm.sub %n, %ci : i32
// CHECK-NEXT:   %a2 = llvm.mul %m, %m : i64
// CHECK-NEXT:   %a3 = llvm.sdiv %n, %ci : i32
// CHECK-NEXT:   %a4 = llvm.udiv %i, %c : i64
// CHECK-NEXT:   %a5 = llvm.srem %n, %ci : i32
// CHECK-NEXT:   %a6 = llvm.urem %n, %ci : i32
// CHECK-NEXT:   %a7 = llvm.and %n, %ci : i32
// CHECK-NEXT:   %a8 = llvm.or %n, %ci : i32
// CHECK-NEXT:   %a9 = llvm.xor %n, %ci : i32
// CHECK-NEXT:   %s0 = llvm.shl %n, %ci : i32
// CHECK-NEXT:   %s1 = llvm.ashr %n, %ci : i32
// CHECK-NEXT:   %s2 = llvm.lshr %n, %ci : i32
// CHECK-NEXT:   %[[LT:.*]] = llvm.icmp "slt" %n, %ci : i32
// CHECK-NEXT:   %mn = llvm.select %[[LT]], %n, %ci : i1, i32
// CHECK-NEXT:   %[[GT:.*]] = llvm.icmp "ugt" %i, %c : i64
// CHECK-NEXT:   %mx = llvm.select %[[GT]], %i, %c : i1, i64
// ceildivui: a == 0 ? 0 : (a - 1) / b + 1
// CHECK-NEXT:   %[[Z:.*]] = llvm.mlir.constant(0) : i64
// CHECK-NEXT:   %[[O:.*]] = llvm.mlir.constant(1) : i64
// CHECK-NEXT:   %[[EQ:.*]] = llvm.icmp "eq" %i, %[[Z]] : i64
// CHECK-NEXT:   %[[DEC:.*]] = llvm.sub %i, %[[O]] : i64
// CHECK-NEXT:   %[[Q:.*]] = llvm.udiv %[[DEC]], %c : i64
// CHECK-NEXT:   %[[INC:.*]] = llvm.add %[[Q]], %[[O]] : i64
// CHECK-NEXT:   %cd = llvm.select %[[EQ]], %[[Z]], %[[INC]] : i1, i64
// add, sub and mul may contract into an fma (Triton's and CUDA's default):
// CHECK-NEXT:   %f0 = llvm.fadd %x, %cf {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT:   %f1 = llvm.fsub %x, %cf {fastmathFlags = #llvm.fastmath<contract>} : f32
// CHECK-NEXT:   %f2 = llvm.fmul %h, %h {fastmathFlags = #llvm.fastmath<contract>} : f16
// CHECK-NEXT:   %f3 = llvm.fdiv %b, %cb : bf16
// CHECK-NEXT:   %f4 = llvm.fneg %x : f32
// CHECK-NEXT:   %f5 = llvm.intr.maxnum(%x, %cf) : (f32, f32) -> f32
// CHECK-NEXT:   %f6 = llvm.call_intrinsic "llvm.minimum.f32"(%x, %cf) : (f32, f32) -> f32
// CHECK-NEXT:   %p0 = llvm.icmp "ult" %i, %c : i64
// CHECK-NEXT:   %p1 = llvm.icmp "sge" %n, %ci : i32
// CHECK-NEXT:   %p2 = llvm.fcmp "olt" %x, %cf : f32
// CHECK-NEXT:   %p3 = llvm.mlir.constant(true) : i1
// CHECK-NEXT:   %sel = llvm.select %p0, %x, %cf : i1, f32
// CHECK-NEXT:   %k0 = llvm.trunc %i : i64 to i32
// CHECK-NEXT:   %k1 = llvm.sext %n : i32 to i64
// index_cast i64 -> index is no op at all: %k2 is %m.
// CHECK-NEXT:   %e0 = llvm.sext %n : i32 to i64
// CHECK-NEXT:   %e1 = llvm.zext %p1 : i1 to i32
// CHECK-NEXT:   %e2 = llvm.trunc %m : i64 to i32
// CHECK-NEXT:   %e3 = llvm.fpext %h : f16 to f32
// CHECK-NEXT:   %e4 = llvm.fptrunc %x : f32 to bf16
// CHECK-NEXT:   %e5 = llvm.sitofp %n : i32 to f32
// CHECK-NEXT:   %e6 = llvm.uitofp %n : i32 to f32
// CHECK-NEXT:   %e7 = llvm.fptosi %x : f32 to i32
// CHECK-NEXT:   %e8 = llvm.fptoui %x : f32 to i32
// CHECK-NEXT:   %e9 = llvm.bitcast %x : f32 to i32
// CHECK-NEXT:   %m0 = llvm.intr.fma(%x, %cf, %x) : (f32, f32, f32) -> f32
// CHECK-NEXT:   %m1 = llvm.intr.fabs(%x) : (f32) -> f32
// CHECK-NEXT:   %m2 = llvm.intr.sqrt(%x) : (f32) -> f32
// exp2 is MUFU.EX2 with denormals flushed (CUDA fast-math exp2f), not the guarded llvm.exp2:
// CHECK-NEXT:   %m3 = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%x) : (f32) -> f32
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %x0 = llvm.extractelement %v[%[[ONE]] : i32] : vector<2xf32>
// CHECK-NEXT:   %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %x1 = llvm.insertelement %x, %v[%[[ZERO]] : i32] : vector<2xf32>
// CHECK-NEXT:   %[[U:.*]] = llvm.mlir.undef : vector<2xf32>
// CHECK-NEXT:   %[[I0:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT:   %[[B0:.*]] = llvm.insertelement %x, %[[U]][%[[I0]] : i32] : vector<2xf32>
// CHECK-NEXT:   %[[I1:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %x2 = llvm.insertelement %x, %[[B0]][%[[I1]] : i32] : vector<2xf32>
// CHECK-NEXT:   %x3 = llvm.bitcast %v : vector<2xf32> to vector<4xf16>
// CHECK-NEXT:   llvm.return %sel : f32
// CHECK-NEXT: }
