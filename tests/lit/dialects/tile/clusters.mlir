// RUN: tile-opt %s --split-input-file | filecheck %s
// RUN: tile-opt %s --split-input-file -p 'tile-distribute,tile-to-llvm' -t llvm | filecheck %s --check-prefix=LLVM
// RUN: tile-opt %s --split-input-file -p 'tile-distribute,tile-to-llvm' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX

// Thread-block clusters (sm_90): a launch of clusters of two blocks along x, the block's cluster,
// the number of clusters and its rank in its cluster, and the cluster-wide barrier. They round-trip,
// and lower to the special registers, `barrier.cluster` and the kernel's cluster directives.

func.func @ids(%out: !tile.gl<f32, [?]>) attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 0, cluster = [2, 1, 1]>} {
  %cid = tile.cluster_id x
  %n = tile.cluster_count x
  %r = tile.block_rank
  tile.cluster_barrier
  func.return
}
// CHECK:      attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 0, cluster = [2, 1, 1]>}
// CHECK-NEXT:   %cid = tile.cluster_id x
// CHECK-NEXT:   %n = tile.cluster_count x
// CHECK-NEXT:   %r = tile.block_rank
// CHECK-NEXT:   tile.cluster_barrier

// LLVM: define ptx_kernel void @"ids"({{.*}}) "nvvm.maxntid"="32,1,1" "nvvm.cluster_dim"="2,1,1"
// LLVM: call i32 @"llvm.nvvm.read.ptx.sreg.clusterid.x"()
// LLVM: call i32 @"llvm.nvvm.read.ptx.sreg.nclusterid.x"()
// LLVM: call i32 @"llvm.nvvm.read.ptx.sreg.cluster.ctarank"()
// LLVM: call void @"llvm.nvvm.barrier.cluster.arrive"()
// LLVM: call void @"llvm.nvvm.barrier.cluster.wait"()

// PTX:      .explicitcluster
// PTX-NEXT: .reqnctapercluster 2, 1, 1
// PTX:      barrier.cluster.arrive;
// PTX-NEXT: barrier.cluster.wait;

// -----

// A launch without clusters prints none (cluster = [1, 1, 1] is the default).
func.func @plain() attributes {tile.launch = #tile.launch<grid = [4, 1, 1], block = [32, 1, 1], smem = 0, cluster = [1, 1, 1]>} {
  func.return
}
// CHECK: #tile.launch<grid = [4, 1, 1], block = [32, 1, 1], smem = 0>}
