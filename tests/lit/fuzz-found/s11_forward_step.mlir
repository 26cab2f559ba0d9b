// RUN: not tile-opt %s  2>&1 | filecheck %s
// Found by the mutation fuzzer (bench/fuzz.py), minimized: an error, not an internal error or a hang.
// CHECK: s11_forward_step.mlir:7:3: error: 'scf.for' uses a value before it is defined (e.g. its own block argument)
// CHECK-NOT: internal error

func.func @f(%n: index) {
  scf.for %k = %n to %n step %k {
  }
  func.return
}
