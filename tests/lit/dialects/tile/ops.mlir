// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// Every tile op in its custom syntax; the printed form parses back to itself,
// and the generic form parses back to the same ops.

func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>) {
  tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [?]>) transpose_b : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32, %bv: f32):
    %s = arith.addf %acc, %bv : f32
    %h = arith.truncf %s : f32 to f16
    tile.yield %h : f16
  }
  func.return
}
func.func @block(%a: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 8192>} {
  %bx = tile.block_id x
  %nbx = tile.grid_dim y
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  tile.copy %a[%bx, %c0] -> %s thr <(16,8):(8,1)> val <(1,8):(0,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  tile.async_copy %a[%bx, %c0] -> %s : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %r = tile.load %s : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<64x64xf16>
  %z = tile.zeros : !tile.rt<64x64xf32>
  %d = tile.mma %r, %r, %z transpose_b atom <mma_m16n8k16_f16> : !tile.rt<64x64xf16>, !tile.rt<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
  %m = tile.row_max %d : !tile.rt<64x64xf32> -> !tile.rv<64xf32, row>
  %mb = tile.broadcast %m : !tile.rv<64xf32, row> -> !tile.rt<64x64xf32>
  %e = tile.sub %d, %mb : !tile.rt<64x64xf32>
  %x = tile.exp %e : !tile.rt<64x64xf32>
  %y = tile.relu %x : !tile.rt<64x64xf32>
  %h = tile.convert %y : !tile.rt<64x64xf32> -> !tile.rt<64x64xf16>
  tile.store %y, %o[%bx, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
func.func @frag(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> {
  func.return %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
}
func.func @convert_layout(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>, %v: !tile.rv<16xf32, row, ((4,8),2):((0,1),8)>) {
  %y = tile.convert_layout %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((16,1),(8,64))>
  %w = tile.convert_layout %v : !tile.rv<16xf32, row, ((4,8),2):((0,1),8)> -> !tile.rv<16xf32, row, (32,16):(0,1)>
  func.return
}
func.func @transpose(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>, %y: !tile.rt<32x16xf16>) {
  %t = tile.transpose %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<8x16xf32, ((4,8),(2,2)):((2,8),(1,64))>
  %u = tile.transpose %y : !tile.rt<32x16xf16> -> !tile.rt<16x32xf16>
  func.return
}
func.func @atomic(%v: !tile.rv<16xf32, row>, %t: !tile.rt<16x8xi32>, %g: !tile.gl<f32, [?]>, %h: !tile.gl<i32, [?, ?]>, %i: index) {
  tile.atomic "add" %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  tile.atomic "max" %t, %h[%i, %i] : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>
  %old = tile.atomic "xchg" %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]> returns !tile.rv<16xf32, row>
  %was = tile.atomic "cas" %t, %h[%i, %i] cmp %t : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]> returns !tile.rt<16x8xi32>
  tile.atomic "xor" %t, %h[%i, %i] : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>
  func.return
}
func.func @masked(%v: !tile.rv<16xf32, row>, %m: !tile.rv<16xi1, row>, %t: !tile.rt<16x8xi32>, %n: !tile.rt<16x8xi1>, %g: !tile.gl<f32, [?]>, %h: !tile.gl<i32, [?, ?]>, %i: index) {
  tile.store %v, %g[%i] mask %m : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>, !tile.rv<16xi1, row>
  tile.store %t, %h[%i, %i] mask %n : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>, !tile.rt<16x8xi1>
  %was = tile.atomic "cas" %t, %h[%i, %i] cmp %t mask %n : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>, !tile.rt<16x8xi1> returns !tile.rt<16x8xi32>
  tile.atomic "add" %v, %g[%i] mask %m : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>, !tile.rv<16xi1, row>
  tile.atomic "add" ordered %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  %s = tile.alloc : !tile.st<16x8xi32>
  tile.copy %h[%i, %i] -> %s mask %n : !tile.gl<i32, [?, ?]> -> !tile.st<16x8xi32, (16,8):(8,1)>, !tile.rt<16x8xi1>
  tile.async_copy %h[%i, %i] -> %s mask %n prefix : !tile.gl<i32, [?, ?]> -> !tile.st<16x8xi32, (16,8):(8,1)>, !tile.rt<16x8xi1>
  func.return
}
func.func @extract(%v: !tile.rv<1xf32, row>, %t: !tile.rt<1x1xbf16>) -> f32 {
  %s = tile.extract %v : !tile.rv<1xf32, row> -> f32
  %h = tile.extract %t : !tile.rt<1x1xbf16> -> bf16
  func.return %s : f32
}
func.func @plain_matmul(%a: !tile.gl<bf16, [?, 64]>, %b: !tile.gl<bf16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %r: !tile.gl<f32, [?, ?]>) {
  tile.matmul %a, %b -> %c epilogue(%r : !tile.gl<f32, [?, ?]>) transpose_a : !tile.gl<bf16, [?, 64]>, !tile.gl<bf16, [?, ?]> -> !tile.gl<f32, [?, ?]> {
  ^bb0(%acc: f32, %res: f32):
    %s = arith.addf %acc, %res : f32
    tile.yield %s : f32
  }
  func.return
}
func.func @more(%g: !tile.gl<f32, [?, ?]>, %v: f32) {
  %t = tile.thread_id y
  %w = tile.warp_id
  %l = tile.lane_id
  %c0 = arith.constant 0 : index
  %s = tile.alloc : !tile.st<32x32xf32, (32,32):(1,32)>
  tile.async_copy %g[%c0, %c0] -> %s thr <(8,4):(4,1)> val <(4,8):(8,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<32x32xf32, (32,32):(1,32)>
  %a = tile.load %g[%w, %l] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x32xf32>
  %f = tile.fill %v : f32 -> !tile.rt<32x32xf32>
  %b = tile.add %a, %f : !tile.rt<32x32xf32>
  %c = tile.mul %b, %a : !tile.rt<32x32xf32>
  %d = tile.div %c, %b : !tile.rt<32x32xf32>
  %e = tile.max %d, %a : !tile.rt<32x32xf32>
  %x = tile.exp2 %e : !tile.rt<32x32xf32>
  %rs = tile.row_sum %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, row>
  %cs = tile.col_sum %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, col>
  %cm = tile.col_max %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, col>
  %sc = tile.scan "sum" %x dim 1 : !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
  %sv = tile.scan "max" %cm dim 0 reverse : !tile.rv<32xf32, col> -> !tile.rv<32xf32, col>
  %sf = tile.scan "combine" %x dim 0 : !tile.rt<32x32xf32> -> !tile.rt<32x32xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.maximumf %p, %q : f32
    tile.yield %m : f32
  }
  %rf = tile.reduce %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, row> {
  ^bb0(%p2: f32, %q2: f32):
    %a2 = arith.addf %p2, %q2 : f32
    tile.yield %a2 : f32
  }
  %vs = tile.add %cs, %cm : !tile.rv<32xf32, col>
  %vh = tile.convert %vs : !tile.rv<32xf32, col> -> !tile.rv<32xf16, col>
  %cb = tile.broadcast %vs : !tile.rv<32xf32, col> -> !tile.rt<32x32xf32>
  tile.store %cb, %s : !tile.rt<32x32xf32> -> !tile.st<32x32xf32, (32,32):(1,32)>
  tile.copy %s -> %g[%t, %c0] : !tile.st<32x32xf32, (32,32):(1,32)> -> !tile.gl<f32, [?, ?]>
  func.return
}
func.func @fragments(%a: !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, %b: !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, %c: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> {
  %d = tile.mma %a, %b, %c transpose_b atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
  func.return %d : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
}

// CHECK:      func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>, %bias: !tile.gl<f32, [?]>) {
// CHECK-NEXT:   tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [?]>) transpose_b : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
// CHECK-NEXT:   ^bb0(%acc: f32, %bv: f32):
// CHECK-NEXT:     %s = arith.addf %acc, %bv : f32
// CHECK-NEXT:     %h = arith.truncf %s : f32 to f16
// CHECK-NEXT:     tile.yield %h : f16
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @block(%a: !tile.gl<f16, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) attributes {tile.launch = #tile.launch<grid = [?, ?, 1], block = [128, 1, 1], smem = 8192>} {
// CHECK-NEXT:   %bx = tile.block_id x
// CHECK-NEXT:   %nbx = tile.grid_dim y
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %s = tile.alloc : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK-NEXT:   tile.copy %a[%bx, %c0] -> %s thr <(16,8):(8,1)> val <(1,8):(0,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK-NEXT:   tile.async_copy %a[%bx, %c0] -> %s : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>
// CHECK-NEXT:   tile.async_commit
// CHECK-NEXT:   tile.async_wait 0
// CHECK-NEXT:   tile.barrier
// CHECK-NEXT:   %r = tile.load %s : !tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)> -> !tile.rt<64x64xf16>
// CHECK-NEXT:   %z = tile.zeros : !tile.rt<64x64xf32>
// CHECK-NEXT:   %d = tile.mma %r, %r, %z transpose_b atom <mma_m16n8k16_f16> : !tile.rt<64x64xf16>, !tile.rt<64x64xf16>, !tile.rt<64x64xf32> -> !tile.rt<64x64xf32>
// CHECK-NEXT:   %m = tile.row_max %d : !tile.rt<64x64xf32> -> !tile.rv<64xf32, row>
// CHECK-NEXT:   %mb = tile.broadcast %m : !tile.rv<64xf32, row> -> !tile.rt<64x64xf32>
// CHECK-NEXT:   %e = tile.sub %d, %mb : !tile.rt<64x64xf32>
// CHECK-NEXT:   %x = tile.exp %e : !tile.rt<64x64xf32>
// CHECK-NEXT:   %y = tile.relu %x : !tile.rt<64x64xf32>
// CHECK-NEXT:   %h = tile.convert %y : !tile.rt<64x64xf32> -> !tile.rt<64x64xf16>
// CHECK-NEXT:   tile.store %y, %o[%bx, %c0] : !tile.rt<64x64xf32> -> !tile.gl<f32, [?, ?]>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @frag(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> {
// CHECK-NEXT:   func.return %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
// CHECK-NEXT: }
// CHECK-NEXT: func.func @convert_layout(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>, %v: !tile.rv<16xf32, row, ((4,8),2):((0,1),8)>) {
// CHECK-NEXT:   %y = tile.convert_layout %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((16,1),(8,64))>
// CHECK-NEXT:   %w = tile.convert_layout %v : !tile.rv<16xf32, row, ((4,8),2):((0,1),8)> -> !tile.rv<16xf32, row, (32,16):(0,1)>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @transpose(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>, %y: !tile.rt<32x16xf16>) {
// CHECK-NEXT:   %t = tile.transpose %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<8x16xf32, ((4,8),(2,2)):((2,8),(1,64))>
// CHECK-NEXT:   %u = tile.transpose %y : !tile.rt<32x16xf16> -> !tile.rt<16x32xf16>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @atomic(%v: !tile.rv<16xf32, row>, %t: !tile.rt<16x8xi32>, %g: !tile.gl<f32, [?]>, %h: !tile.gl<i32, [?, ?]>, %i: index) {
// CHECK-NEXT:   tile.atomic "add" %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
// CHECK-NEXT:   tile.atomic "max" %t, %h[%i, %i] : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>
// CHECK-NEXT:   %old = tile.atomic "xchg" %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]> returns !tile.rv<16xf32, row>
// CHECK-NEXT:   %was = tile.atomic "cas" %t, %h[%i, %i] cmp %t : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]> returns !tile.rt<16x8xi32>
// CHECK-NEXT:   tile.atomic "xor" %t, %h[%i, %i] : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @masked(%v: !tile.rv<16xf32, row>, %m: !tile.rv<16xi1, row>, %t: !tile.rt<16x8xi32>, %n: !tile.rt<16x8xi1>, %g: !tile.gl<f32, [?]>, %h: !tile.gl<i32, [?, ?]>, %i: index) {
// CHECK-NEXT:   tile.store %v, %g[%i] mask %m : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>, !tile.rv<16xi1, row>
// CHECK-NEXT:   tile.store %t, %h[%i, %i] mask %n : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>, !tile.rt<16x8xi1>
// CHECK-NEXT:   %was = tile.atomic "cas" %t, %h[%i, %i] cmp %t mask %n : !tile.rt<16x8xi32> -> !tile.gl<i32, [?, ?]>, !tile.rt<16x8xi1> returns !tile.rt<16x8xi32>
// CHECK-NEXT:   tile.atomic "add" %v, %g[%i] mask %m : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>, !tile.rv<16xi1, row>
// CHECK-NEXT:   tile.atomic "add" ordered %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
// CHECK-NEXT:   %s = tile.alloc : !tile.st<16x8xi32, (16,8):(8,1)>
// CHECK-NEXT:   tile.copy %h[%i, %i] -> %s mask %n : !tile.gl<i32, [?, ?]> -> !tile.st<16x8xi32, (16,8):(8,1)>, !tile.rt<16x8xi1>
// CHECK-NEXT:   tile.async_copy %h[%i, %i] -> %s mask %n prefix : !tile.gl<i32, [?, ?]> -> !tile.st<16x8xi32, (16,8):(8,1)>, !tile.rt<16x8xi1>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @extract(%v: !tile.rv<1xf32, row>, %t: !tile.rt<1x1xbf16>) -> f32 {
// CHECK-NEXT:   %s = tile.extract %v : !tile.rv<1xf32, row> -> f32
// CHECK-NEXT:   %h = tile.extract %t : !tile.rt<1x1xbf16> -> bf16
// CHECK-NEXT:   func.return %s : f32
// CHECK-NEXT: }
// CHECK-NEXT: func.func @plain_matmul(%a: !tile.gl<bf16, [?, 64]>, %b: !tile.gl<bf16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>, %r: !tile.gl<f32, [?, ?]>) {
// CHECK-NEXT:   tile.matmul %a, %b -> %c epilogue(%r : !tile.gl<f32, [?, ?]>) transpose_a : !tile.gl<bf16, [?, 64]>, !tile.gl<bf16, [?, ?]> -> !tile.gl<f32, [?, ?]> {
// CHECK-NEXT:   ^bb0(%acc: f32, %res: f32):
// CHECK-NEXT:     %s = arith.addf %acc, %res : f32
// CHECK-NEXT:     tile.yield %s : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @more(%g: !tile.gl<f32, [?, ?]>, %v: f32) {
// CHECK-NEXT:   %t = tile.thread_id y
// CHECK-NEXT:   %w = tile.warp_id
// CHECK-NEXT:   %l = tile.lane_id
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %s = tile.alloc : !tile.st<32x32xf32, (32,32):(1,32)>
// CHECK-NEXT:   tile.async_copy %g[%c0, %c0] -> %s thr <(8,4):(4,1)> val <(4,8):(8,1)> : !tile.gl<f32, [?, ?]> -> !tile.st<32x32xf32, (32,32):(1,32)>
// CHECK-NEXT:   %a = tile.load %g[%w, %l] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x32xf32>
// CHECK-NEXT:   %f = tile.fill %v : f32 -> !tile.rt<32x32xf32>
// CHECK-NEXT:   %b = tile.add %a, %f : !tile.rt<32x32xf32>
// CHECK-NEXT:   %c = tile.mul %b, %a : !tile.rt<32x32xf32>
// CHECK-NEXT:   %d = tile.div %c, %b : !tile.rt<32x32xf32>
// CHECK-NEXT:   %e = tile.max %d, %a : !tile.rt<32x32xf32>
// CHECK-NEXT:   %x = tile.exp2 %e : !tile.rt<32x32xf32>
// CHECK-NEXT:   %rs = tile.row_sum %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, row>
// CHECK-NEXT:   %cs = tile.col_sum %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, col>
// CHECK-NEXT:   %cm = tile.col_max %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, col>
// CHECK-NEXT:   %sc = tile.scan "sum" %x dim 1 : !tile.rt<32x32xf32> -> !tile.rt<32x32xf32>
// CHECK-NEXT:   %sv = tile.scan "max" %cm dim 0 reverse : !tile.rv<32xf32, col> -> !tile.rv<32xf32, col>
// CHECK-NEXT:   %sf = tile.scan "combine" %x dim 0 : !tile.rt<32x32xf32> -> !tile.rt<32x32xf32> {
// CHECK-NEXT:   ^bb0(%p: f32, %q: f32):
// CHECK-NEXT:     %m = arith.maximumf %p, %q : f32
// CHECK-NEXT:     tile.yield %m : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %rf = tile.reduce %x : !tile.rt<32x32xf32> -> !tile.rv<32xf32, row> {
// CHECK-NEXT:   ^bb0(%p2: f32, %q2: f32):
// CHECK-NEXT:     %a2 = arith.addf %p2, %q2 : f32
// CHECK-NEXT:     tile.yield %a2 : f32
// CHECK-NEXT:   }
// CHECK-NEXT:   %vs = tile.add %cs, %cm : !tile.rv<32xf32, col>
// CHECK-NEXT:   %vh = tile.convert %vs : !tile.rv<32xf32, col> -> !tile.rv<32xf16, col>
// CHECK-NEXT:   %cb = tile.broadcast %vs : !tile.rv<32xf32, col> -> !tile.rt<32x32xf32>
// CHECK-NEXT:   tile.store %cb, %s : !tile.rt<32x32xf32> -> !tile.st<32x32xf32, (32,32):(1,32)>
// CHECK-NEXT:   tile.copy %s -> %g[%t, %c0] : !tile.st<32x32xf32, (32,32):(1,32)> -> !tile.gl<f32, [?, ?]>
// CHECK-NEXT:   func.return
// CHECK-NEXT: }
// CHECK-NEXT: func.func @fragments(%a: !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, %b: !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, %c: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> {
// CHECK-NEXT:   %d = tile.mma %a, %b, %c transpose_b atom <mma_m16n8k16_f16> : !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>, !tile.rt<8x16xf16, ((4,8),(2,2)):((16,1),(8,64))>, !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
// CHECK-NEXT:   func.return %d : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>
// CHECK-NEXT: }
