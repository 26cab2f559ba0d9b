// RUN: not tile-opt %s --split-input-file 2>&1 | filecheck %s

// A register tile that no block's registers can hold is refused at its type, naming the limit.
func.func @huge_registers(%t: !tile.rt<1024x1024xf32>) {
  func.return
}
// CHECK: limits.mlir:4:39: error: tile.rt: 1024x1024 is 1048576 elements; registers hold at most 261120 (255 32-bit registers x 1024 threads)

// -----

// So is a shared tile past the largest block's shared memory.
func.func @huge_shared() {
  %s = tile.alloc : !tile.st<256x256xf32>
  func.return
}
// CHECK: limits.mlir:13:29: error: tile.st: a 256x256 tile of f32 takes 262144 bytes; a block has at most 232448 bytes of shared memory
