// RUN: not tile-opt %s -p tile-to-llvm --split-input-file 2>&1 | filecheck %s

// What tile-to-llvm cannot lower is an error that names the op, where it is,
// and which pass must run first; the exit status is 1.

func.func @regs(%a: !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, %b: !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, %c: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %d = tile.mma %a, %b, %c transpose_b atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
  func.return
}
// CHECK: error: 'tile.mma' op at {{.*}}errors.mlir:7:8: is a tile-level op; it must be lowered to fragment-level (frag) ops first: run tile-layout and tile-distribute before tile-to-llvm
// CHECK: note: while running pass 'tile-to-llvm'

// -----

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f32, [?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}
// CHECK: error: 'tile.matmul' op at {{.*}}errors.mlir:16:3: is a whole-problem tile op; it must be lowered first: run tile-tiling, then tile-layout and tile-distribute, before tile-to-llvm

// -----

func.func @views(%a: !tile.gl<f16, [?, ?]>) {
  func.return
}
// CHECK: error: 'func.func' op at {{.*}}errors.mlir:26:1: has a value of type !tile.gl<f16, [?, ?]>, which has no llvm-level form

// -----

func.func @switch(%n: index) {
  %c0 = arith.constant 0 : index
  %r = scf.index_switch %n -> index
  case 1 {
    scf.yield %n : index
  }
  default {
    scf.yield %n : index
  }
  func.return
}
// CHECK: error: 'scf.index_switch' op at {{.*}}errors.mlir:35:8: has no lowering to llvm: only scf.for, scf.if and scf.while (with scf.yield) are supported

// -----

func.func @expm1(%x: f32) -> f32 {
  %y = math.expm1 %x : f32
  func.return %y : f32
}
// CHECK: error: 'math.expm1' op at {{.*}}errors.mlir:49:8: has no lowering to llvm in tile-to-llvm

// -----

func.func @shared() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %s = frag.shared "buf", 256, align 16 : !llvm.ptr<3>
  %d = frag.shared "buf", 0, align 16 : !llvm.ptr<3>
  func.return
}
// CHECK: error: 'frag.shared' op at {{.*}}errors.mlir:58:8: shared buffer "buf" is dynamic (0 bytes) here but static at {{.*}}errors.mlir:57:8

// -----

// An 8-bit float is a view's element, never a scalar parameter (found by the fuzzer: xDSL's
// function-type error without a line before).
func.func @f8_scalar(%x: f8E4M3FN) -> f8E4M3FN {
  func.return %x : f8E4M3FN
}
// CHECK: error: 'func.func' op at {{.*}}errors.mlir:{{[0-9]+}}:1: @f8_scalar takes or returns f8E4M3FN: 8-bit floats live in memory only
