// RUN: tile-opt %s -p tile-to-llvm | filecheck %s

// math.erf has no PTX instruction: Abramowitz and Stegun 7.1.26 in f32, t = 1 / (1 + p|x|), a degree-5
// polynomial in t times e^(-x^2) (one ex2.approx), the sign of x put back with a select.
func.func @erf(%x: f32) -> f32 {
  %y = math.erf %x : f32
  func.return %y : f32
}

// CHECK:      llvm.func @erf(%x: f32) -> f32 {
// CHECK-NEXT:   %[[AX:.*]] = llvm.intr.fabs(%x) : (f32) -> f32
// CHECK:        %[[T:.*]] = llvm.fdiv %{{.*}}, %{{.*}} : f32
// CHECK-COUNT-4: llvm.intr.fma(%{{.*}}, %[[T]], %{{.*}})
// CHECK:        llvm.fmul %[[AX]], %[[AX]] : f32
// CHECK:        llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK:        %[[NEG:.*]] = llvm.fcmp "olt" %x, %{{.*}} : f32
// CHECK:        %y = llvm.select %[[NEG]], %{{.*}}, %{{.*}} : i1, f32
