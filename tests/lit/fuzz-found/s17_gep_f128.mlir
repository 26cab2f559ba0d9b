// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 2027), minimized: a type LLVM's NVPTX path lacks in
// an op's attribute; the translation error now points at the op.
// CHECK: s17_gep_f128.mlir:10:3: error: 'llvm.getelementptr' op Type not supported: f128
// CHECK-NOT: internal error

func.func @k(%a: !llvm.ptr<1> {tile.dtype = f32, tile.output})
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c16 = arith.constant 16 : i32
  llvm.getelementptr %a[%c16] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f128
  func.return
}
