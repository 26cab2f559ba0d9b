// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true persistent=true cluster=2}' | filecheck %s
// RUN: tile-opt %s -p 'tile-tiling{block=128,256,64 wgmma=true persistent=true cluster=2},tile-swizzle,tile-pipeline{stages=3 bulk=true producer=true}' | filecheck %s --check-prefix=WS
// RUN: tile-opt %s -p 'tile-tiling{block=64,64,128 wgmma=true cluster=2},tile-swizzle,tile-pipeline{stages=3 bulk=true}' | filecheck %s --check-prefix=PLAIN
// RUN: tile-opt %s -p 'tile-to-ptx{block=128,256,64 stages=3 bulk=true wgmma=true producer=true persistent=true cluster=2}' -t 'ptx{arch=sm_90a}' | filecheck %s --check-prefix=PTX
// RUN: tile-opt %s -p 'tile-tiling{block=128,64,64 wgmma=true cluster=1,2},tile-swizzle,tile-pipeline{stages=4 bulk=true}' | filecheck %s --check-prefix=ALONGN

// Thread-block clusters of two blocks along M. tile-tiling: cluster j of n (tile.cluster_id,
// tile.cluster_count) takes tiles j, j + n, ... of a grouped order of ceil(tiles_m / 2) x tiles_n
// tiles of two block rows each; the block of rank r (tile.block_rank) takes row r of them. So both
// blocks of a cluster read the same tile of B at the same K steps.
//
// tile-pipeline (WS): the producer multicasts that copy (its window is the same in every block of
// the cluster: tile-pipeline proves it from the values it is computed from) and issues A's, which
// depends on the rank, alone. A stage is refilled once the consumers of both blocks released it:
// the empty barriers count the warps of the cluster (cluster_warps). The cluster meets after the
// barriers are initialised and before it ends.
//
// Without a producer and a tile loop (PLAIN), block r of cluster j takes row r of the j-th tile of
// two block rows, and the one issuing thread of each block multicasts B's tiles: in the prologue and
// in the loop, once both blocks released the stage (one step late: the wgmmas stay in flight).
//
// Along N (cluster=1,2, ALONGN): the grouped order counts tiles of two block columns, the block of
// rank r takes column r of its cluster's, and the copies of A (the same rows in both blocks) are the
// ones multicast.
//
// The PTX has the kernel's cluster directives, four multicast boxes of 32 rows (B's 64-row boxes shared
// by two blocks), the remote arrivals on the empty barriers, and the two cluster barriers.

func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %c: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to f16
    tile.yield %0 : f16
  }
  func.return
}

// CHECK:       tile.launch = #tile.launch<grid = [?, 1, 1], block = [256, 1, 1], smem = 49152, cluster = [2, 1, 1]>
// CHECK-SAME:  tile.tiling = {{.*}}wgmma, persistent, cluster = array<i64: 2, 1>}
// CHECK:       %cluster_rows = arith.divui %mc_pad, %c2 : index
// CHECK-NEXT:  %tiles = arith.muli %cluster_rows, %tiles_n : index
// CHECK-NEXT:  %cluster = tile.cluster_id x
// CHECK-NEXT:  %clusters = tile.cluster_count x
// CHECK-NEXT:  %rank = tile.block_rank
// CHECK-NEXT:  scf.for %tile = %cluster to %tiles step %clusters {
// CHECK:         %left_m = arith.subi %cluster_rows, %first_m : index
// CHECK:         %pid_n = arith.divui %in_group, %group_m : index
// CHECK-NEXT:    %cluster_m = arith.muli %pid_m, %c2 : index
// CHECK-NEXT:    %pid_m_rank = arith.addi %cluster_m, %rank : index
// CHECK-NEXT:    %row0 = arith.muli %pid_m_rank, %c128 : index
// CHECK-NEXT:    %col0 = arith.muli %pid_n, %c256 : index

// WS:       %empty = tile.mbar_init : !tile.mbar<3, cluster_warps>
// WS-NEXT:  tile.cluster_barrier
// WS:       scf.if
// WS:         tile.mbar_wait %empty[%ws], %wph issuer : !tile.mbar<3, cluster_warps>
// WS:         tile.bulk_copy %a[%row0{{.*}}, %k] -> %sa_w, %full[%ws] : !tile.gl
// WS:         tile.bulk_copy %b[%k, %col0{{.*}}] -> %sb_w, %full[%ws] multicast : !tile.gl
// WS:       }{tile.role = "producer"}
// WS:       tile.mbar_arrive %empty[{{.*}}] : !tile.mbar<3, cluster_warps>
// WS:       }{tile.role = "consumers"}
// WS-NEXT:  tile.cluster_barrier
// WS-NEXT:  func.return

// PTX:      .explicitcluster
// PTX-NEXT: .reqnctapercluster 2, 1, 1
// PTX:      barrier.cluster.arrive;
// PTX-NEXT: barrier.cluster.wait;
// PTX-COUNT-4: .multicast::cluster
// PTX:      mapa.shared::cluster.u32 remote
// PTX-NEXT: @lead mbarrier.arrive.shared::cluster.b64
// PTX:      barrier.cluster.arrive;
// PTX-NEXT: barrier.cluster.wait;

// PLAIN:      %cluster = tile.cluster_id x
// PLAIN:      %rank = tile.block_rank
// PLAIN:      %empty = tile.mbar_init : !tile.mbar<3, cluster_warps>
// PLAIN:      tile.cluster_barrier
// PLAIN:      tile.bulk_copy %a[%row0, %c0] -> %sa_w0, %full[%c0] : !tile.gl
// PLAIN:      tile.bulk_copy %b[%c0, %col0] -> %sb_w0, %full[%c0] multicast : !tile.gl
// PLAIN:      scf.for %k
// PLAIN:        tile.mbar_arrive %empty[%rs_prev] : !tile.mbar<3, cluster_warps>
// PLAIN:        tile.mbar_wait %empty[%ws], %wph issuer : !tile.mbar<3, cluster_warps>
// PLAIN:        tile.bulk_copy %b[%k_next, %col0] -> %sb_w, %full[%ws] multicast : !tile.gl
// PLAIN:      tile.mbar_arrive %empty[%rs_prev_1] : !tile.mbar<3, cluster_warps>
// PLAIN:      tile.cluster_barrier
// PLAIN-NEXT: func.return

// ALONGN:      cluster = [2, 1, 1]>, tile.tiling = {{.*}}cluster = array<i64: 1, 2>}
// ALONGN:      %cluster_cols = arith.divui %nc_pad, %c2 : index
// ALONGN-NEXT: %cluster_width = arith.muli %cluster_cols, %c8 : index
// ALONGN-NEXT: %cluster = tile.cluster_id x
// ALONGN-NEXT: %rank = tile.block_rank
// ALONGN:      %pid_n = arith.divui %in_group, %group_m : index
// ALONGN-NEXT: %cluster_n = arith.muli %pid_n, %c2 : index
// ALONGN-NEXT: %pid_n_rank = arith.addi %cluster_n, %rank : index
// ALONGN:      %col0 = arith.muli %pid_n_rank, %c64 : index
// ALONGN:      tile.bulk_copy %a[%row0, %c0] -> %sa_w0, %full[%c0] multicast : !tile.gl
// ALONGN:      tile.bulk_copy %b[%c0, %col0] -> %sb_w0, %full[%c0] : !tile.gl
// ALONGN:      scf.for %k
// ALONGN:        tile.bulk_copy %a[%row0, %k_next] -> %sa_w, %full[%ws] multicast : !tile.gl
// ALONGN:        tile.bulk_copy %b[%k_next, %col0] -> %sb_w, %full[%ws] : !tile.gl
