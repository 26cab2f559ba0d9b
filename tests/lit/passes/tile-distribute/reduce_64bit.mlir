// RUN: tile-opt %s -p tile-layout,tile-distribute | filecheck %s
// RUN: tile-opt %s -p tile-layout,tile-distribute,tile-to-llvm -t 'ptx{arch=sm_80}' | filecheck %s --check-prefix=PTX

// A reduction across lanes shuffles 32 bits at a time: a 64-bit value (i64, torch's index type,
// or f64) goes as its two halves, a shfl.sync each, and is put back together.
func.func @rows(%c: !tile.gl<f64, [?, ?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %z = tile.load %c[%c0, %c0] : !tile.gl<f64, [?, ?]> -> !tile.rt<16x16xf64>
  %s = tile.row_sum %z : !tile.rt<16x16xf64> -> !tile.rv<16xf64, row>
  %b = tile.broadcast %s : !tile.rv<16xf64, row> -> !tile.rt<16x16xf64>
  tile.store %b, %c[%c0, %c0] : !tile.rt<16x16xf64> -> !tile.gl<f64, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @rows
// CHECK:      %[[BITS:.*]] = arith.bitcast %{{.*}} : f64 to i64
// CHECK-NEXT: %[[LO:.*]] = arith.trunci %[[BITS]] : i64 to i32
// CHECK-NEXT: %[[UP:.*]] = arith.shrui %[[BITS]], %{{.*}} : i64
// CHECK-NEXT: %[[HI:.*]] = arith.trunci %[[UP]] : i64 to i32
// CHECK-NEXT: %[[SLO:.*]] = frag.shfl "bfly" %[[LO]], %{{.*}} : i32
// CHECK-NEXT: %[[XLO:.*]] = arith.extsi %[[SLO]] : i32 to i64
// CHECK-NEXT: %[[SHI:.*]] = frag.shfl "bfly" %[[HI]], %{{.*}} : i32
// CHECK-NEXT: %[[XHI:.*]] = arith.extsi %[[SHI]] : i32 to i64
// CHECK-NEXT: %[[CLO:.*]] = arith.andi %[[XLO]], %{{.*}} : i64
// CHECK-NEXT: %[[CHI:.*]] = arith.shli %[[XHI]], %{{.*}} : i64
// CHECK-NEXT: %[[BACK:.*]] = arith.ori %[[CLO]], %[[CHI]] : i64
// CHECK-NEXT: %{{.*}} = arith.bitcast %[[BACK]] : i64 to f64

// PTX-LABEL: .entry rows
// PTX-COUNT-8: shfl.sync.bfly.b32
// PTX: add.f64

// The largest element of each column of an i64 tile over four warps: shuffles within each warp,
// then the warps' partial results through shared memory.
func.func @cols(%c: !tile.gl<i64, [?, ?]>, %o: !tile.gl<i64, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %z = tile.load %c[%c0, %c0] : !tile.gl<i64, [?, ?]> -> !tile.rt<64x32xi64>
  %m = tile.col_max %z : !tile.rt<64x32xi64> -> !tile.rv<32xi64, col>
  tile.store %m, %o[%c0] : !tile.rv<32xi64, col> -> !tile.gl<i64, [?]>
  func.return
}
// CHECK-LABEL: func.func @cols
// CHECK: frag.shfl "bfly" %{{.*}}, %{{.*}} : i32
// CHECK: arith.maxsi %{{.*}}, %{{.*}} : i64
// CHECK: frag.store

// PTX-LABEL: .entry cols
// PTX: shfl.sync.bfly.b32
// PTX: max.s64
