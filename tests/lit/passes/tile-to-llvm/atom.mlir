// RUN: tile-opt %s -p tile-to-llvm | filecheck %s
// RUN: tile-opt %s -p tile-to-llvm -t 'ptx{arch=sm_80}' | filecheck %s --check-prefix=PTX

// frag.atom is PTX's atom.global with the acquire-release order at GPU scope (Triton's default for
// its atomics): the element's old value is its result. Predicated, the result is 0 where the
// predicate is false (a mov before the predicated atom). cas takes the compared value before the new.
func.func @k(%a: !llvm.ptr<1>, %x: f32, %n: i32, %c: i32, %p: i1) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %0 = frag.atom "add" %x, %a : f32, !llvm.ptr<1>
  %1 = frag.atom "add" %n, %a if %p : i32, !llvm.ptr<1>
  %2 = frag.atom "umax" %n, %a : i32, !llvm.ptr<1>
  %3 = frag.atom "cas" %n, %a cmp %c : i32, !llvm.ptr<1>
  %4 = frag.atom "exch" %x, %a if %p : f32, !llvm.ptr<1>
  %5 = frag.atom "xor" %n, %a : i32, !llvm.ptr<1>
  func.return
}
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.add.f32 $0, [$1], $2;", "=f,l,f" %a, %x : (!llvm.ptr<1>, f32) -> f32
// CHECK: llvm.inline_asm has_side_effects "mov.b32 $0, 0;\0A@$1 atom.acq_rel.gpu.global.add.u32 $0, [$2], $3;", "=r,b,l,r" %p, %a, %n
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.max.u32 $0, [$1], $2;", "=r,l,r" %a, %n
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.cas.b32 $0, [$1], $2, $3;", "=r,l,r,r" %a, %c, %n
// CHECK: llvm.inline_asm has_side_effects "mov.b32 $0, 0;\0A@$1 atom.acq_rel.gpu.global.exch.b32 $0, [$2], $3;", "=f,b,l,f" %p, %a, %x
// CHECK: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.xor.b32 $0, [$1], $2;", "=r,l,r" %a, %n
// PTX: atom.acq_rel.gpu.global.add.f32 %{{r|f}}{{[0-9]+}}, [%rd{{[0-9]+}}], %{{r|f}}{{[0-9]+}};
// PTX: @%p{{[0-9]+}} atom.acq_rel.gpu.global.add.u32
// PTX: atom.acq_rel.gpu.global.max.u32
// PTX: atom.acq_rel.gpu.global.cas.b32
// PTX: @%p{{[0-9]+}} atom.acq_rel.gpu.global.exch.b32
// PTX: atom.acq_rel.gpu.global.xor.b32
