// RUN: tile-opt %s -p tile-to-llvm | filecheck %s
// RUN: tile-opt %s -p tile-to-llvm -t 'ptx{arch=sm_80}' | filecheck %s --check-prefix=PTX

// frag.red is PTX's red.global (an atomic combine with no result), predicated when it has a
// predicate: f32 adds, and s32 adds, maxima and minima.
func.func @k(%a: !llvm.ptr<1>, %x: f32, %n: i32, %p: i1) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  frag.red "add" %x, %a : f32, !llvm.ptr<1>
  frag.red "add" %x, %a if %p : f32, !llvm.ptr<1>
  frag.red "add" %n, %a : i32, !llvm.ptr<1>
  frag.red "max" %n, %a if %p : i32, !llvm.ptr<1>
  frag.red "min" %n, %a : i32, !llvm.ptr<1>
  func.return
}
// CHECK: llvm.inline_asm has_side_effects "red.global.add.f32 [$0], $1;", "l,f" %a, %x
// CHECK: llvm.inline_asm has_side_effects "@$0 red.global.add.f32 [$1], $2;", "b,l,f" %p, %a, %x
// CHECK: llvm.inline_asm has_side_effects "red.global.add.s32 [$0], $1;", "l,r" %a, %n
// CHECK: llvm.inline_asm has_side_effects "@$0 red.global.max.s32 [$1], $2;", "b,l,r" %p, %a, %n
// CHECK: llvm.inline_asm has_side_effects "red.global.min.s32 [$0], $1;", "l,r" %a, %n
// PTX: red.global.add.f32 [%rd{{[0-9]+}}], %{{r|f}}{{[0-9]+}};
// PTX: @%p{{[0-9]+}} red.global.add.f32
// PTX: red.global.add.s32
// PTX: @%p{{[0-9]+}} red.global.max.s32
// PTX: red.global.min.s32

// A 16-bit float sum is `add.noftz.f16` (bf16: `.bf16`, sm_90's), the value passed as the i16 of its
// bits (inline asm's `h` registers hold integers); frag.atom's old value comes back the same way.
func.func @half(%a: !llvm.ptr<1>, %h: f16, %p: i1) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  frag.red "add" %h, %a if %p : f16, !llvm.ptr<1>
  %old = frag.atom "add" %h, %a : f16, !llvm.ptr<1>
  frag.store %old, %a : f16, !llvm.ptr<1>
  func.return
}
// CHECK-LABEL: llvm.func @half(
// CHECK: %[[BITS:.*]] = llvm.bitcast %h : f16 to i16
// CHECK: llvm.inline_asm has_side_effects "@$0 red.global.add.noftz.f16 [$1], $2;", "b,l,h" %p{{.*}}, %a{{.*}}, %[[BITS]]
// CHECK: %[[OLD:.*]] = llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.add.noftz.f16 $0, [$1], $2;", "=h,l,h"
// CHECK: llvm.bitcast %[[OLD]] : i16 to f16
// PTX: @%p{{[0-9]+}} red.global.add.noftz.f16
// PTX: atom.acq_rel.gpu.global.add.noftz.f16
