// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @ldmatrix_space(%p: !llvm.ptr<1>) {
  %r = frag.ldmatrix %p x 1 : !llvm.ptr<1> -> i32
  func.return
}
// CHECK: 'frag.ldmatrix' address must be a !llvm.ptr<3> address, got !llvm.ptr<1>

// -----

func.func @ldmatrix_count(%p: !llvm.ptr<3>) {
  %r0, %r1 = frag.ldmatrix %p x 4 : !llvm.ptr<3> -> i32, i32
  func.return
}
// CHECK: 'frag.ldmatrix' x4 gives 4 registers per lane, but has 2 results

// -----

func.func @mma_count(%a: i32, %c: f32) {
  %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k16_f16>(%a, %a) (%a, %a) (%c, %c, %c, %c) : (i32, i32) (i32, i32) -> f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.mma' mma_m16n8k16_f16 takes 4 A registers per lane, got 2

// -----

func.func @mma_types(%a: f32, %c: f32) {
  %d0, %d1, %d2, %d3 = frag.mma <mma_m16n8k8_tf32>(%a, %a, %a, %a) (%a, %a) (%c, %c, %c, %c) : (f32, f32, f32, f32) (f32, f32) -> f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.mma' mma_m16n8k8_tf32 A registers are i32, got f32

// -----

func.func @cp_async_cg(%s: !llvm.ptr<3>, %g: !llvm.ptr<1>) {
  frag.cp_async "cg" %s, %g, 8 : !llvm.ptr<3>, !llvm.ptr<1>
  func.return
}
// CHECK: 'frag.cp_async' cp.async.cg copies exactly 16 bytes, not 8

// -----

func.func @cp_async_dir(%s: !llvm.ptr<3>, %g: !llvm.ptr<1>) {
  frag.cp_async "ca" %g, %s, 4 : !llvm.ptr<1>, !llvm.ptr<3>
  func.return
}
// CHECK: 'frag.cp_async' destination must be a !llvm.ptr<3> address, got !llvm.ptr<1>

// -----

func.func @cp_async_both(%s: !llvm.ptr<3>, %g: !llvm.ptr<1>, %n: i32, %p: i1) {
  frag.cp_async "cg" %s, %g, 16, %n ignore_src %p : !llvm.ptr<3>, !llvm.ptr<1>
  func.return
}
// CHECK: 'frag.cp_async' takes src_bytes or ignore_src, not both

// -----

func.func @load_width(%g: !llvm.ptr<1>) {
  %v = frag.load %g : !llvm.ptr<1> -> vector<8xf32>
  func.return
}
// CHECK: 'frag.load' moves 1, 2, 4, 8 or 16 bytes per lane; vector<8xf32> is 32 bytes

// -----

func.func @pack_kind(%x: f32) {
  %p = frag.pack "f8x4" %x, %x
  func.return
}
// CHECK: 'frag.pack' kind must be f16x2 or bf16x2, got f8x4

// -----

func.func @arrive_space(%p: !llvm.ptr<1>) {
  frag.mbar_arrive_warp %p : !llvm.ptr<1>
  func.return
}
// CHECK: 'frag.mbar_arrive_warp' barrier must be a !llvm.ptr<3> address, got !llvm.ptr<1>

// -----

func.func @wgmma_count(%d: i64, %x: f32) {
  %r:2 = frag.wgmma "f16" n 8 %d, %d (%x, %x) : f32, f32
  func.return
}
// CHECK: 'frag.wgmma' m64n8 takes and gives 4 accumulator registers per lane, got 2 and 2

// -----

func.func @wgmma_n(%d: i64, %x: f32) {
  %r:6 = frag.wgmma "f16" n 12 %d, %d (%x, %x, %x, %x, %x, %x) : f32, f32, f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.wgmma' n must be a multiple of 8 from 8 to 256, got 12

// -----

func.func @wgmma_dtype(%d: i64, %x: f32) {
  %r:4 = frag.wgmma "f32" n 8 %d, %d (%x, %x, %x, %x) : f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.wgmma' dtype must be one of f16, bf16, e4m3, e5m2, s8, got 'f32'

// -----

func.func @wgmma_rs_a_count(%a: i32, %d: i64, %x: f32) {
  %r:4 = frag.wgmma_rs "bf16" n 8 (%a, %a, %a), %d (%x, %x, %x, %x) : f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.wgmma_rs' takes 4 A registers (i32) per lane, got 3

// -----

func.func @wgmma_rs_a_type(%a: i32, %h: f32, %d: i64, %x: f32) {
  %r:4 = "frag.wgmma_rs"(%a, %a, %a, %h, %d, %x, %x, %x, %x) <{dtype = "bf16", n = 8 : i64, operandSegmentSizes = array<i32: 4, 1, 4>}> : (i32, i32, i32, f32, i64, f32, f32, f32, f32) -> (f32, f32, f32, f32)
  func.return
}
// CHECK: 'frag.wgmma_rs' op operand 'a' at positions 0 to 3 does not verify:
// CHECK-NEXT: Expected attribute i32 but got f32

// -----

func.func @wgmma_rs_n(%a: i32, %d: i64, %x: f32) {
  %r:2 = frag.wgmma_rs "f16" n 4 (%a, %a, %a, %a), %d (%x, %x) : f32, f32
  func.return
}
// CHECK: 'frag.wgmma_rs' n must be a multiple of 8 from 8 to 256, got 4

// -----

func.func @wgmma_rs_count(%a: i32, %d: i64, %x: f32) {
  %r:2 = frag.wgmma_rs "f16" n 8 (%a, %a, %a, %a), %d (%x, %x) : f32, f32
  func.return
}
// CHECK: 'frag.wgmma_rs' m64n8 takes and gives 4 accumulator registers per lane, got 2 and 2

// -----

func.func @wgmma_desc_overlap(%p: !llvm.ptr<3>) {
  %d = frag.wgmma_desc %p, 4611686293305294849 : !llvm.ptr<3>
  func.return
}
// CHECK: 'frag.wgmma_desc' high bits 0x4000004000000001 overlap the 14-bit start address field

// -----

func.func @wgmma_wait_pending(%x: f32) {
  %r = frag.wgmma_wait 9(%x) : f32
  func.return
}
// CHECK: 'frag.wgmma_wait' pending must be 0 to 7, got 9

// -----

func.func @named_barrier_count(%id: i32) {
  frag.named_barrier_sync %id, 48
  func.return
}
// CHECK: 'frag.named_barrier_sync' count must be a multiple of 32 threads in 32 .. 1024, got 48

// -----

func.func @wgmma_fp8_transposed(%d: i64, %x: f32) {
  %r:4 = frag.wgmma "e4m3" n 8 %d, %d trans_b (%x, %x, %x, %x) : f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.wgmma' a e4m3 wgmma reads A and B K-major only: no trans_a or trans_b

// -----

func.func @wgmma_rs_fp8(%a: i32, %d: i64, %x: f32) {
  %r:4 = frag.wgmma_rs "e5m2" n 8 (%a, %a, %a, %a), %d (%x, %x, %x, %x) : f32, f32, f32, f32
  func.return
}
// CHECK: 'frag.wgmma_rs' register A is f16 or bf16 (the m16n8k16 A fragment), got e5m2

// -----

func.func @tensormap_prefetch_space(%m: !llvm.ptr<3>) {
  frag.tensormap_prefetch %m : !llvm.ptr<3>
  func.return
}
// CHECK: error: 'frag.tensormap_prefetch' tensor map must be a !llvm.ptr<0> address, got !llvm.ptr<3>

// -----

func.func @red_kind(%a: !llvm.ptr<1>, %x: f32) {
  frag.red "max" %x, %a : f32, !llvm.ptr<1>
  func.return
}
// CHECK: error: 'frag.red' max combines i32 or i64 values, not f32

// -----

func.func @red_shared(%a: !llvm.ptr<3>, %x: f32) {
  frag.red "add" %x, %a : f32, !llvm.ptr<3>
  func.return
}
// CHECK: error: 'frag.red' address must be a !llvm.ptr<1> address, got !llvm.ptr<3>

// -----

func.func @atom_exch_of_nothing(%a: !llvm.ptr<1>, %x: f32) {
  %o = frag.atom "max" %x, %a : f32, !llvm.ptr<1>
  func.return
}
// CHECK: error: 'frag.atom' max combines i32 or i64 values, not f32

// -----

func.func @atom_cas_without_cmp(%a: !llvm.ptr<1>, %n: i32) {
  %o = frag.atom "cas" %n, %a : i32, !llvm.ptr<1>
  func.return
}
// CHECK: error: 'frag.atom' cas takes the value to compare with
