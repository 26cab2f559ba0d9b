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
