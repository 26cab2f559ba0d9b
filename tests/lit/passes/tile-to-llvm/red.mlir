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
