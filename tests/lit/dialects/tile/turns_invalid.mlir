// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// A turn among fewer than 2 or more than 15 groups (one named barrier each;
// barrier 0 is tile.barrier's) is refused at the op.

func.func @one_group() {
  tile.turn_begin 1
  func.return
}
// CHECK: 'tile.turn_begin' groups must be 2 to 15 (one named barrier each), got 1

// -----

func.func @too_many() {
  tile.turn_end 16
  func.return
}
// CHECK: 'tile.turn_end' groups must be 2 to 15 (one named barrier each), got 16

// -----

func.func @barrier_threads() {
  tile.barrier threads 48
  func.return
}
// CHECK: 'tile.barrier' threads must be a multiple of 32 in 32 .. 1024, got 48

// -----

func.func @setmaxnreg_action() {
  tile.setmaxnreg "up" 240
  func.return
}
// CHECK: 'tile.setmaxnreg' action must be inc or dec, got 'up'

// -----

func.func @setmaxnreg_count() {
  tile.setmaxnreg "inc" 250
  func.return
}
// CHECK: 'tile.setmaxnreg' a warpgroup's registers per thread must be a multiple of 8 in 24 .. 256, got 250
