// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// A reproducer session 37's fuzzing found (seed 3701): a map's body yielding a value named in a sibling
// map's body. xDSL's parser resolves the name and checks no dominance; tile-distribute, copying the body
// once per element, then built an op on a value that does not exist (an AttributeError inside xDSL). A
// region of tile.map / tile.reduce / tile.scan now uses only its own values and those above the op.
func.func @sibling(%x: !tile.rt<32x32xi32>, %n: i32) -> !tile.rt<32x32xi1> {
  %a = tile.map %x : !tile.rt<32x32xi32> -> !tile.rt<32x32xi1> {
  ^bb0(%j: i32):
    tile.yield %lt : i1
  }
  %b = tile.map %x : !tile.rt<32x32xi32> -> !tile.rt<32x32xi1> {
  ^bb0(%j: i32):
    %lt = arith.cmpi slt, %j, %n : i32
    tile.yield %lt : i1
  }
  func.return %a : !tile.rt<32x32xi1>
}
// CHECK: fuzz-found/s37_map_uses_a_sibling_value.mlir:7:8: error: 'tile.map' its region uses %lt (i1), defined outside it and not above tile.map
// CHECK-NOT: Traceback
