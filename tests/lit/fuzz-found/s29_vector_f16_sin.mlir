// RUN: not tile-opt %s -p tile-to-llvm -t llvm 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 2929), minimized: the lowering's refusal names the op's line.
// CHECK: s29_vector_f16_sin.mlir:{{[0-9]+}}:8: error: tile-to-llvm: 'math.sin' at {{.*}}s29_vector_f16_sin.mlir:{{[0-9]+}}:8: no f32 approximation of a vector<4xf16> value
// CHECK-NOT: internal error
func.func @m(%x: vector<4xf16>, %h: f16) -> vector<4xf16> {
  %a = math.floor %x : vector<4xf16>
  %b = math.ceil %h : f16
  %c = math.trunc %x : vector<4xf16>
  %d = math.roundeven %x : vector<4xf16>
  %e = math.sin %x : vector<4xf16>
  %f = math.cos %h : f16
  %g = arith.extf %b : f16 to vector<4xf16>
  %k = arith.extf %f : f16 to vector<4xf16>
  %s1 = arith.addf %a, %g : vector<4xf16>
  %s2 = arith.addf %s1, %c : vector<4xf16>
  %s3 = arith.addf %s2, %d : vector<4xf16>
  %s4 = arith.addf %s3, %e : vector<4xf16>
  %s5 = arith.addf %s4, %k : vector<4xf16>
  func.return %s5 : vector<4xf16>
}
