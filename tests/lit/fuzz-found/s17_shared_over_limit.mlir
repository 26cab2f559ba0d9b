// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py, seed 2027), minimized: two 256x256 f16 tiles and the
// scratch tile-distribute plans need more shared memory than a block has; said at the kernel.
// CHECK: s17_shared_over_limit.mlir:7:1: error: tile-distribute: @k needs {{[0-9]+}} bytes of shared memory (its tiles, their stages and conversion scratch), more than the device limit of 232448
// CHECK-NOT: internal error

func.func @k(%d: !tile.gl<f16, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 16384>} {
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<256x256xf16, (256,256):(256,1)>
  %t = tile.alloc : !tile.st<256x256xf16, (256,256):(256,1)>
  %x = tile.load %s[%c0, %c0] : !tile.st<256x256xf16, (256,256):(256,1)> -> !tile.rt<16x256xf16>
  %y = tile.load %t[%c0, %c0] : !tile.st<256x256xf16, (256,256):(256,1)> -> !tile.rt<16x256xf16>
  %z = tile.add %x, %y : !tile.rt<16x256xf16>
  tile.store %z, %d[%c0, %c0] : !tile.rt<16x256xf16> -> !tile.gl<f16, [?, ?]>
  func.return
}
