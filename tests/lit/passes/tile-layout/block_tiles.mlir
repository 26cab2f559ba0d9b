// RUN: tile-opt %s -p tile-layout | filecheck %s
// RUN: tile-opt %s -p 'tile-layout{block_tiles=false}' | filecheck %s --check-prefix=WARP

// Four warps. %t is the same in every warp (its window starts at the block's row): a tile of the
// block, spread over all 128 threads, 4 consecutive f32 columns a thread, consecutive threads
// along the row. %w starts at the warp's row (tile.warp_id): each warp holds its own, in the
// default warp fragment (m16n8k16's C atom). The row vectors are the projections of each.
func.func @k(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %v: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %b = tile.block_id x
  %warp = tile.warp_id
  %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<2x1024xf32>
  %s = tile.row_sum %t : !tile.rt<2x1024xf32> -> !tile.rv<2xf32, row>
  tile.store %s, %v[%b] : !tile.rv<2xf32, row> -> !tile.gl<f32, [?]>
  %w = tile.load %x[%warp, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %m = tile.row_max %w : !tile.rt<16x64xf32> -> !tile.rv<16xf32, row>
  tile.store %m, %v[%warp] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK: %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<2x1024xf32, (128,(4,2,2)):(8,(2,1024,1))>
// CHECK: %s = tile.row_sum %t : {{.*}} -> !tile.rv<2xf32, row, (128,2):(0,1)>
// CHECK: %w = tile.load %x[%warp, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32, ((4,8),((2,2),(1,8))):((32,1),((16,8),(16,128)))>
// CHECK: %m = tile.row_max %w : {{.*}} -> !tile.rv<16xf32, row, ((4,8),2):((0,1),8)>

// With block_tiles=false every tile is a warp's.
// WARP: %t = tile.load %x[%b, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<2x1024xf32, (32,

// A vector of no tile is spread over the block as a tile of one row would be when it is the same
// in every warp: %x, 2048 f16, 8 consecutive elements (16 bytes) a thread, the 128 threads along
// it, then again 1024 further; not a copy in each warp. %p starts at the warp id: each warp's own,
// over its lanes. With block_tiles=false every vector is a warp's.
func.func @vectors(%a: !tile.gl<f16, [?]>, %c: !tile.gl<f16, [?]>)
    attributes {tile.launch = #tile.launch<grid = [?, 1, 1], block = [128, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %w = tile.warp_id
  %x = tile.load %a[%c0] : !tile.gl<f16, [?]> -> !tile.rv<2048xf16, col>
  %y = tile.add %x, %x : !tile.rv<2048xf16, col>
  tile.store %y, %c[%c0] : !tile.rv<2048xf16, col> -> !tile.gl<f16, [?]>
  %p = tile.load %a[%w] : !tile.gl<f16, [?]> -> !tile.rv<64xf16, col>
  tile.store %p, %c[%w] : !tile.rv<64xf16, col> -> !tile.gl<f16, [?]>
  func.return
}
// CHECK-LABEL: func.func @vectors
// CHECK: %x = tile.load %a[%c0] : !tile.gl<f16, [?]> -> !tile.rv<2048xf16, col, (128,(8,2)):(8,(1,1024))>
// CHECK: %y = tile.add %x, %x : !tile.rv<2048xf16, col, (128,(8,2)):(8,(1,1024))>
// CHECK: %p = tile.load %a[%w] : !tile.gl<f16, [?]> -> !tile.rv<64xf16, col, (32,2):(1,32)>
// WARP-LABEL: func.func @vectors
// WARP: %x = tile.load %a[%c0] : !tile.gl<f16, [?]> -> !tile.rv<2048xf16, col, (32,64):(1,32)>
