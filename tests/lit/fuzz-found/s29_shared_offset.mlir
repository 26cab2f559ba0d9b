// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 2930), minimized: a shared layout's offset past any shared memory is the type's error, not an i64 overflow later.
// CHECK: s29_shared_offset.mlir:{{[0-9]+}}:30: error: tile.st: layout {{.*}} starts at element -9223372036854775808; shared offsets are 0 to 232448 bytes
// CHECK-NOT: internal error
func.func @unswizzled() attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16384>} {
  %sb = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o -9223372036854775808 o (64,64):(64,1)>
  func.return
}
