// Input of ../errors.mlir (not a test: lit.cfg excludes Inputs folders).

func.func @undefined(%a: i32) -> i32 {
  %r = arith.addi %a, %undefined : i32
  func.return %r : i32
}
