// RUN: tile-opt %s --split-input-file --verify-diagnostics

// Clusters: the grid is whole clusters of at most 8 blocks; multicast copies and cluster-wide
// barriers need a launch with clusters; a multicast splits each box's rows into whole swizzle
// periods, one share per block. (--verify-diagnostics fails the run unless each error is the annotated one.)

// expected-error @+1 {{the grid is whole clusters: its extent 3 along x is not a multiple of the cluster's 2}}
func.func @ragged() attributes {tile.launch = #tile.launch<grid = [3, 1, 1], block = [32, 1, 1], smem = 0, cluster = [2, 1, 1]>} {
  func.return
}

// -----

// expected-error @+1 {{at most 8 blocks in all (the portable limit), got [4, 4, 1]}}
func.func @big() attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 0, cluster = [4, 4, 1]>} {
  func.return
}

// -----

func.func @no_cluster(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %i: index) attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 9000>} {
  %full = tile.mbar_init : !tile.mbar<1>
  %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  // expected-error @+1 {{'tile.bulk_copy' multicast copies into every block of a thread-block cluster: its kernel's tile.launch needs cluster = [c, ...] with c > 1 blocks}}
  tile.bulk_copy %a[%i, %i] -> %s, %full[%i] multicast : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>, !tile.mbar<1>
  func.return
}

// -----

func.func @thin(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %i: index) attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 9000, cluster = [4, 1, 1]>} {
  %full = tile.mbar_init : !tile.mbar<1>
  %s = tile.alloc : !tile.st<16x64xf16, Sw<3,3,3> o 0 o (16,64):(64,1)>
  // expected-error @+1 {{multicast splits each 16-row box among the cluster's 4 blocks: the rows must divide into 4 parts of whole 1024-byte swizzle periods}}
  tile.bulk_copy %a[%i, %i] -> %s, %full[%i] multicast : !tile.gl<f16, [?, ?]> -> !tile.st<16x64xf16, Sw<3,3,3> o 0 o (16,64):(64,1)>, !tile.mbar<1>
  func.return
}

// -----

func.func @cluster_empty() attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [32, 1, 1], smem = 64>} {
  // expected-error @+1 {{'tile.mbar_init' !tile.mbar<2, cluster_warps> counts the warps of every block of a thread-block cluster}}
  %empty = tile.mbar_init : !tile.mbar<2, cluster_warps>
  func.return
}
