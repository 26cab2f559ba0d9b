// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// tile.turn_begin / tile.turn_end G: the block's warps, as G equal groups of
// consecutive warps, run what is between them one group at a time, in turn
// (what `with tl.turns(G):` traces). The generic form parses back to the same ops.

func.func @pingpong(%x: !tile.rt<16x64xf32>) -> !tile.rt<16x64xf32> {
  tile.turn_begin 2
  %y = tile.add %x, %x : !tile.rt<16x64xf32>
  tile.turn_end 2
  func.return %y : !tile.rt<16x64xf32>
}

// CHECK-LABEL: func.func @pingpong
// CHECK-NEXT:    tile.turn_begin 2
// CHECK-NEXT:    %{{.*}} = tile.add
// CHECK-NEXT:    tile.turn_end 2

// A warp-specialised kernel's ops at tile level: a barrier of the block's first N threads
// (the consumers) and a warpgroup's register count.
func.func @roles() {
  tile.barrier threads 256
  tile.setmaxnreg "dec" 24
  tile.setmaxnreg "inc" 240
  func.return
}

// CHECK-LABEL: func.func @roles
// CHECK-NEXT:    tile.barrier threads 256
// CHECK-NEXT:    tile.setmaxnreg "dec" 24
// CHECK-NEXT:    tile.setmaxnreg "inc" 240
