// RUN: not tile-opt %s -p tile-to-ptx -t ptx 2>&1 | filecheck %s
// A reproducer the session-19 fuzzing campaign found: a kernel launched in clusters, compiled for
// sm_80. The diagnostic named the cluster but no line: it now points at the kernel, whose attribute
// the cluster is.
// CHECK: fuzz-found/s19_cluster_for_sm80.mlir:7:1: error: 'llvm.func' op the module uses 'nvvm.cluster_dim', which needs sm_90 or newer; the target is sm_80

func.func @ragged() attributes {tile.launch = #tile.launch<grid = [2, 1, 1], block = [32, 1, 1], smem = 0, cluster = [2, 1, 1]>} {
  func.return
}
