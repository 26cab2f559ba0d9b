// RUN: tile-opt %s -p tile-to-llvm -t 'ptx{arch=sm_80}' | filecheck %s

// math's rounding ops are PTX's exact cvt.r*i; sin and cos its approximate f32 instructions (16-bit
// values through f32).
func.func @m(%x: f32, %h: f16) -> f32 {
  %a = math.floor %x : f32
  %b = math.ceil %h : f16
  %c = math.trunc %x : f32
  %d = math.roundeven %x : f32
  %e = math.sin %x : f32
  %f = math.cos %h : f16
  %g = arith.extf %b : f16 to f32
  %k = arith.extf %f : f16 to f32
  %s1 = arith.addf %a, %g : f32
  %s2 = arith.addf %s1, %c : f32
  %s3 = arith.addf %s2, %d : f32
  %s4 = arith.addf %s3, %e : f32
  %s5 = arith.addf %s4, %k : f32
  func.return %s5 : f32
}

// CHECK: cvt.rmi.f32.f32
// CHECK: cvt.rpi.f32.f32
// CHECK: cvt.rn.f16.f32
// CHECK: cvt.rzi.f32.f32
// CHECK: cvt.rni.f32.f32
// CHECK: sin.approx.f32
// CHECK: cos.approx.f32
