// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each verifier error names the op, the numbers and what was expected.

func.func @matmul_k(%a: !tile.gl<f16, [64, 32]>, %b: !tile.gl<f16, [16, 64]>, %c: !tile.gl<f16, [64, 64]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [64, 32]>, !tile.gl<f16, [16, 64]> -> !tile.gl<f16, [64, 64]> {
  ^bb0(%acc: f32):
    %h = arith.truncf %acc : f32 to f16
    tile.yield %h : f16
  }
  func.return
}
// CHECK: 'tile.matmul' K of a and b differ: 32 vs 16 (a is 64x32, b is 16x64, c is 64x64)

// -----

func.func @matmul_types(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<bf16, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<bf16, [?, ?]> -> !tile.gl<f32, [?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}
// CHECK: 'tile.matmul' a and b must share an element type among f16, bf16, f32, f8E4M3FN, f8E5M2; got f16 and bf16

// -----

func.func @matmul_epilogue(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f16, [?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}
// CHECK: 'tile.matmul' epilogue must end with 'tile.yield' of one f16 value (the element of c)

// -----

func.func @matmul_bias(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, 64]>, %c: !tile.gl<f32, [?, 64]>, %bias: !tile.gl<f32, [32]>) {
  tile.matmul %a, %b -> %c epilogue(%bias : !tile.gl<f32, [32]>) : !tile.gl<f16, [?, ?]>, !tile.gl<f16, [?, 64]> -> !tile.gl<f32, [?, 64]> {
  ^bb0(%acc: f32, %x: f32):
    tile.yield %acc : f32
  }
  func.return
}
// CHECK: 'tile.matmul' epilogue input 0 has 32 elements, expected N = 64

// -----

func.func @mma_k(%a: !tile.rt<16x16xf16>, %b: !tile.rt<32x8xf16>, %c: !tile.rt<16x8xf32>) {
  %d = tile.mma %a, %b, %c : !tile.rt<16x16xf16>, !tile.rt<32x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.mma' K differs: a gives 16, b gives 32 (a is 16x16, b is 32x8)

// -----

func.func @mma_transposed(%a: !tile.rt<16x16xf16>, %b: !tile.rt<16x8xf16>, %c: !tile.rt<16x8xf32>) {
  %d = tile.mma %a, %b, %c transpose_b : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.mma' K differs: a gives 16, b gives 8 (a is 16x16, b is 16x8)

// -----

func.func @mma_acc(%a: !tile.rt<16x16xf16>, %b: !tile.rt<16x8xf16>, %c: !tile.rt<16x8xf16>) {
  %d = tile.mma %a, %b, %c : !tile.rt<16x16xf16>, !tile.rt<16x8xf16>, !tile.rt<16x8xf16> -> !tile.rt<16x8xf16>
  func.return
}
// CHECK: 'tile.mma' accumulates in f32, got f16

// -----

func.func @mma_atom(%a: !tile.rt<16x8xf16>, %b: !tile.rt<8x8xf16>, %c: !tile.rt<16x8xf32>) {
  %d = tile.mma %a, %b, %c atom <mma_m16n8k16_f16> : !tile.rt<16x8xf16>, !tile.rt<8x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.mma' atom mma_m16n8k16_f16 (16x8x16) does not tile 16x8x8

// -----

// An atom reads its registers as its own input type: f16 bits are not bf16 numbers.
func.func @mma_atom_type(%a: !tile.rt<16x16xbf16>, %b: !tile.rt<16x8xbf16>, %c: !tile.rt<16x8xf32>) {
  %d = tile.mma %a, %b, %c atom <mma_m16n8k16_f16> : !tile.rt<16x16xbf16>, !tile.rt<16x8xbf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.mma' atom mma_m16n8k16_f16 multiplies f16 by f16, but a and b are bf16 and bf16

// -----

func.func @mma_atom_tf32(%a: !tile.rt<16x8xf16>, %b: !tile.rt<8x8xf16>, %c: !tile.rt<16x8xf32>) {
  %d = tile.mma %a, %b, %c atom <mma_m16n8k8_tf32> : !tile.rt<16x8xf16>, !tile.rt<8x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.mma' atom mma_m16n8k8_tf32 multiplies tf32 by tf32, but a and b are f16 and f16

// -----

func.func @load_shape(%s: !tile.st<64x32xf16>) {
  %r = tile.load %s : !tile.st<64x32xf16> -> !tile.rt<32x32xf16>
  func.return
}
// CHECK: 'tile.load' source !tile.st<64x32xf16, (64,32):(32,1)> is 64x32, expected 32x32

// -----

func.func @load_indices(%g: !tile.gl<f16, [?, ?]>, %i: index) {
  %r = tile.load %g[%i] : !tile.gl<f16, [?, ?]> -> !tile.rt<32x32xf16>
  func.return
}
// CHECK: 'tile.load' source !tile.gl<f16, [?, ?]> needs 2 indices (the tile's origin), got 1

// -----

func.func @store_types(%r: !tile.rt<32x32xf32>, %g: !tile.gl<f16, [?, ?]>, %i: index) {
  tile.store %r, %g[%i, %i] : !tile.rt<32x32xf32> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK: 'tile.store' element types differ: f32 vs f16 (use tile.convert)

// -----

func.func @copy_global_to_global(%g: !tile.gl<f16, [?, ?]>, %i: index) {
  tile.copy %g[%i, %i] -> %g[%i, %i] : !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK: 'tile.copy' copies between a global view and a shared tile, got !tile.gl<f16, [?, ?]> -> !tile.gl<f16, [?, ?]>

// -----

func.func @copy_thread_layout(%g: !tile.gl<f16, [?, ?]>, %s: !tile.st<64x64xf16>, %i: index) {
  tile.copy %g[%i, %i] -> %s thr <(16,8):(8,1)> val <(1,3):(0,1)> : !tile.gl<f16, [?, ?]> -> !tile.st<64x64xf16>
  func.return
}
// CHECK: 'tile.copy' thread layout (16,8):(8,1) times value layout (1,3):(0,1) covers 16x24, which does not tile 64x64

// -----

func.func @async_wait() {
  tile.async_wait 9
  func.return
}
// CHECK: 'tile.async_wait' pending must be between 0 and 7 (cp.async.wait_group), got 9

// -----

func.func @scan_kind(%x: !tile.rt<64x32xf32>) {
  %r = tile.scan "xor" %x dim 1 : !tile.rt<64x32xf32> -> !tile.rt<64x32xf32>
  func.return
}
// CHECK: 'tile.scan' scans with one of sum, prod, max, min, combine, not 'xor'

// -----

func.func @scan_region(%x: !tile.rt<64x32xf32>) {
  %r = tile.scan "combine" %x dim 1 : !tile.rt<64x32xf32> -> !tile.rt<64x32xf32> {
  ^bb0(%p: f16, %q: f16):
    tile.yield %p : f16
  }
  func.return
}
// CHECK: 'tile.scan' region takes (f16, f16), expected (f32, f32)

// -----

func.func @reduce_region(%x: !tile.rt<64x32xf32>) {
  %r = tile.reduce %x : !tile.rt<64x32xf32> -> !tile.rv<64xf32, row> {
  ^bb0(%p: f32, %q: f32):
    %c = arith.cmpf olt, %p, %q : f32
    tile.yield %c : i1
  }
  func.return
}
// CHECK: 'tile.reduce' region must end with 'tile.yield' of one f32 value

// -----

func.func @scan_no_region(%x: !tile.rt<64x32xf32>) {
  %r = tile.scan "combine" %x dim 1 : !tile.rt<64x32xf32> -> !tile.rt<64x32xf32>
  func.return
}
// CHECK: 'tile.scan' has a combining region exactly when its kind is 'combine'

// -----

func.func @scan_extent(%x: !tile.rt<48x32xf32>) {
  %r = tile.scan "sum" %x dim 0 : !tile.rt<48x32xf32> -> !tile.rt<48x32xf32>
  func.return
}
// CHECK: 'tile.scan' scans an extent that is a power of two, got 48 along dim 0 of !tile.rt<48x32xf32>

// -----

func.func @scan_dim(%x: !tile.rv<32xi32, col>) {
  %r = tile.scan "sum" %x dim 1 : !tile.rv<32xi32, col> -> !tile.rv<32xi32, col>
  func.return
}
// CHECK: 'tile.scan' dim 1 is not a dimension of !tile.rv<32xi32, col>

// -----

func.func @reduce(%x: !tile.rt<64x32xf32>) {
  %r = tile.row_sum %x : !tile.rt<64x32xf32> -> !tile.rv<32xf32, row>
  func.return
}
// CHECK: 'tile.row_sum' reducing !tile.rt<64x32xf32> gives !tile.rv<64xf32, row>, not !tile.rv<32xf32, row>

// -----

func.func @broadcast(%v: !tile.rv<32xf32, col>) {
  %r = tile.broadcast %v : !tile.rv<32xf32, col> -> !tile.rt<32x64xf32>
  func.return
}
// CHECK: 'tile.broadcast' a col vector !tile.rv<32xf32, col> does not fit tile !tile.rt<32x64xf32>: expected length 64 of f32

// -----

func.func @convert(%x: !tile.rt<64x32xf32>) {
  %r = tile.convert %x : !tile.rt<64x32xf32> -> !tile.rt<32x64xf16>
  func.return
}
// CHECK: 'tile.convert' converts !tile.rt<64x32xf32> to !tile.rt<32x64xf16>: shapes differ

// -----

func.func @convert_layout_type(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) {
  %r = tile.convert_layout %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<16x8xf16, ((4,8),(2,2)):((16,1),(8,64))>
  func.return
}
// CHECK: 'tile.convert_layout' converts !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> to !tile.rt<16x8xf16, ((4,8),(2,2)):((16,1),(8,64))>: a layout conversion keeps the element type

// -----

func.func @convert_layout_kind(%x: !tile.rt<16x8xf32>) {
  %r = tile.convert_layout %x : !tile.rt<16x8xf32> -> !tile.rv<16xf32, row>
  func.return
}
// CHECK: 'tile.convert_layout' converts !tile.rt<16x8xf32> to !tile.rv<16xf32, row>: both must be register tiles or both register vectors

// -----

func.func @fill(%v: f16) {
  %r = tile.fill %v : f16 -> !tile.rt<16x16xf32>
  func.return
}
// CHECK: 'tile.fill' fills a tile of f32 with a f16 value

// -----

func.func @dim_range(%g: !tile.gl<f16, [?, ?]>) {
  %d = tile.dim %g, 2 : !tile.gl<f16, [?, ?]>
  func.return
}
// CHECK: 'tile.dim' dimension 2 is out of range for !tile.gl<f16, [?, ?]> of rank 2

// -----

func.func @window(%s: !tile.st<64x32xf16>, %i: index) {
  %r = tile.load %s[%i, %i] : !tile.st<64x32xf16> -> !tile.rt<32x64xf16>
  func.return
}
// CHECK: 'tile.load' a 32x64 window does not fit in source !tile.st<64x32xf16, (64,32):(32,1)>

// -----

func.func @vector_from_2d(%g: !tile.gl<f32, [?, ?]>, %i: index) {
  %r = tile.load %g[%i, %i] : !tile.gl<f32, [?, ?]> -> !tile.rv<32xf32, row>
  func.return
}
// CHECK: 'tile.load' loads a register vector only from a rank-1 view or shared tile, got !tile.gl<f32, [?, ?]> -> !tile.rv<32xf32, row>

// -----

func.func @vector_to_2d(%g: !tile.gl<f32, [?, ?]>, %v: !tile.rv<32xf32, row>, %i: index) {
  tile.store %v, %g[%i, %i] : !tile.rv<32xf32, row> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: 'tile.store' stores a register vector only to a rank-1 view or shared tile, got !tile.rv<32xf32, row> -> !tile.gl<f32, [?, ?]>

// -----

func.func @map_body(%x: !tile.rt<16x16xf32>) {
  %y = tile.map %x : !tile.rt<16x16xf32> -> !tile.rt<16x16xf16> {
  ^bb0(%v: f32):
    tile.yield %v : f32
  }
  func.return
}
// CHECK: 'tile.map' body must end with 'tile.yield' of one f16 value

// -----

func.func @iota_dim(%i: index) {
  %r = tile.iota %i dim 2 : !tile.rt<16x8xi32>
  func.return
}
// CHECK: 'tile.iota' dim 2 is not a dimension of !tile.rt<16x8xi32>

// -----

func.func @iota_type(%i: index) {
  %r = tile.iota %i dim 0 : !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.iota' coordinates are i32, got !tile.rt<16x8xf32>

// -----

func.func @int_add(%x: !tile.rt<16x8xi32>) {
  %r = tile.add %x, %x : !tile.rt<16x8xi32>
  func.return
}
// CHECK: 'tile.add' computes on floats, got !tile.rt<16x8xi32>: integer and i1 tiles go through tile.map with arith ops

// -----

func.func @map_shapes(%t: !tile.rt<16x8xf32>, %v: !tile.rv<16xf32, row>) {
  %r = tile.map %t, %v : !tile.rt<16x8xf32>, !tile.rv<16xf32, row> -> !tile.rt<16x8xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tile.yield %s : f32
  }
  func.return
}
// CHECK: 'tile.map' input 1 is !tile.rv<16xf32, row>, the result is !tile.rt<16x8xf32>: shapes differ (broadcast the vector first)


// -----

func.func @subview_all(%q: !tile.gl<f16, [?, ?]>, %i: index) {
  %x = "tile.subview"(%q, %i, %i) : (!tile.gl<f16, [?, ?]>, index, index) -> !tile.gl<f16, [?]>
  func.return
}
// CHECK: 'tile.subview' fixes 1 to 1 leading coordinates of !tile.gl<f16, [?, ?]>, got 2

// -----

func.func @subview_type(%q: !tile.gl<f16, [2, 3, ?]>, %i: index) {
  %x = tile.subview %q[%i] : !tile.gl<f16, [2, 3, ?]> -> !tile.gl<f16, [2, ?]>
  func.return
}
// CHECK: 'tile.subview' the view of !tile.gl<f16, [2, 3, ?]> at 1 leading coordinates is !tile.gl<f16, [3, ?]>, not !tile.gl<f16, [2, ?]>

// -----

func.func @batch_rank(%a: !tile.gl<f16, [?, ?, ?]>, %b: !tile.gl<f16, [?, ?]>, %c: !tile.gl<f32, [?, ?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [?, ?, ?]>, !tile.gl<f16, [?, ?]> -> !tile.gl<f32, [?, ?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}
// CHECK: 'tile.matmul' operand b must be a 3-D global view (a batch, as c is), got !tile.gl<f16, [?, ?]>

// -----

func.func @batch_extent(%a: !tile.gl<f16, [2, ?, ?]>, %b: !tile.gl<f16, [3, ?, ?]>, %c: !tile.gl<f32, [?, ?, ?]>) {
  tile.matmul %a, %b -> %c : !tile.gl<f16, [2, ?, ?]>, !tile.gl<f16, [3, ?, ?]> -> !tile.gl<f32, [?, ?, ?]> {
  ^bb0(%acc: f32):
    tile.yield %acc : f32
  }
  func.return
}
// CHECK: 'tile.matmul' a, b and c must have one batch extent, got 2, 3 and ?

// -----

func.func @bulk_store_wait_pending() {
  tile.bulk_store_wait pending 8
  func.return
}
// CHECK: 'tile.bulk_store_wait' pending must be 0 to 7 (bulk groups a warp leaves reading), got 8

// -----

func.func @transpose_dims(%x: !tile.rt<16x8xf32>) {
  %t = tile.transpose %x : !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.transpose' of !tile.rt<16x8xf32> gives a tile of 8x16, not !tile.rt<16x8xf32>

// -----

func.func @transpose_type(%x: !tile.rt<16x8xf32>) {
  %t = tile.transpose %x : !tile.rt<16x8xf32> -> !tile.rt<8x16xf16>
  func.return
}
// CHECK: 'tile.transpose' keeps the element type: f32 in, f16 out

// -----

func.func @transpose_fragments(%x: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>) {
  %t = tile.transpose %x : !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))> -> !tile.rt<8x16xf32, ((4,8),(2,2)):((32,1),(16,8))>
  func.return
}
// CHECK: 'tile.transpose' result fragment ((4,8),(2,2)):((32,1),(16,8)) is not the transpose of the input's ((4,8),(2,2)):((32,1),(16,8)): each lane keeps its values, so it holds the swapped elements

// -----

func.func @extract_many(%x: !tile.rv<16xf32, row>) {
  %s = tile.extract %x : !tile.rv<16xf32, row> -> f32
  func.return
}
// CHECK: 'tile.extract' takes a tile or vector of one element, got !tile.rv<16xf32, row>: reduce it first

// -----

func.func @extract_type(%x: !tile.rt<1x1xf16>) {
  %s = tile.extract %x : !tile.rt<1x1xf16> -> f32
  func.return
}
// CHECK: 'tile.extract' gives the element type of !tile.rt<1x1xf16>, f16, not f32

// -----

func.func @atomic_kind(%v: !tile.rv<16xf32, row>, %g: !tile.gl<f32, [?]>, %i: index) {
  tile.atomic "mul" %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK: 'tile.atomic' kind must be one of add, max, min, umax, umin, xchg, cas, and, or, xor, got 'mul'

// -----

func.func @atomic_type(%v: !tile.rv<16xf16, row>, %g: !tile.gl<f16, [?]>, %i: index) {
  tile.atomic "max" %v, %g[%i] : !tile.rv<16xf16, row> -> !tile.gl<f16, [?]>
  func.return
}
// CHECK: 'tile.atomic' max combines f32 or i32 or i64 elements atomically, not f16

// -----

func.func @atomic_rank(%v: !tile.rv<16xf32, row>, %g: !tile.gl<f32, [?, ?]>, %i: index) {
  tile.atomic "add" %v, %g[%i, %i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK: 'tile.atomic' combines a register vector only into a rank-1 view, got !tile.rv<16xf32, row> -> !tile.gl<f32, [?, ?]>

// -----

func.func @atomic_cas_without_cmp(%v: !tile.rv<16xi32, row>, %g: !tile.gl<i32, [?]>, %i: index) {
  tile.atomic "cas" %v, %g[%i] : !tile.rv<16xi32, row> -> !tile.gl<i32, [?]>
  func.return
}
// CHECK: 'tile.atomic' cas takes the values to compare with ('cmp %c')

// -----

func.func @atomic_cmp_on_add(%v: !tile.rv<16xi32, row>, %g: !tile.gl<i32, [?]>, %i: index) {
  tile.atomic "add" %v, %g[%i] cmp %v : !tile.rv<16xi32, row> -> !tile.gl<i32, [?]>
  func.return
}
// CHECK: 'tile.atomic' takes values to compare with only for cas, not add

// -----

func.func @atomic_bits_of_floats(%v: !tile.rv<16xf32, row>, %g: !tile.gl<f32, [?]>, %i: index) {
  %o = tile.atomic "or" %v, %g[%i] : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]> returns !tile.rv<16xf32, row>
  func.return
}
// CHECK: 'tile.atomic' or combines i32 or i64 elements atomically, not f32

// -----

func.func @store_mask_shape(%t: !tile.rt<16x8xf32>, %m: !tile.rt<16x16xi1>, %g: !tile.gl<f32, [?, ?]>, %i: index) {
  tile.store %t, %g[%i, %i] mask %m : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>, !tile.rt<16x16xi1>
  func.return
}
// CHECK: 'tile.store' mask must be !tile.rt<16x8xi1> (i1 in the value's shape), got !tile.rt<16x16xi1>

// -----

func.func @store_mask_type(%v: !tile.rv<16xf32, row>, %m: !tile.rv<16xf32, row>, %g: !tile.gl<f32, [?]>, %i: index) {
  tile.store %v, %g[%i] mask %m : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>, !tile.rv<16xf32, row>
  func.return
}
// CHECK: 'tile.store' mask must be !tile.rv<16xi1, row> (i1 in the value's shape), got !tile.rv<16xf32, row>

// -----

func.func @store_mask_shared(%t: !tile.rt<16x8xf32>, %m: !tile.rt<16x8xi1>, %s: !tile.st<16x8xf32>) {
  tile.store %t, %s mask %m : !tile.rt<16x8xf32> -> !tile.st<16x8xf32>, !tile.rt<16x8xi1>
  func.return
}
// CHECK: 'tile.store' masks stores into a global view only, not into !tile.st<16x8xf32

// -----

func.func @atomic_mask_orientation(%v: !tile.rv<16xf32, row>, %m: !tile.rv<16xi1, col>, %g: !tile.gl<f32, [?]>, %i: index) {
  tile.atomic "add" %v, %g[%i] mask %m : !tile.rv<16xf32, row> -> !tile.gl<f32, [?]>, !tile.rv<16xi1, col>
  func.return
}
// CHECK: 'tile.atomic' mask must be !tile.rv<16xi1, row> (i1 in the value's shape), got !tile.rv<16xi1, col>

// -----

// FP8 values are converted, selected and bitcast in a map's body, not computed on (PTX has no FP8 arithmetic).
func.func @fp8_arith(%x: !tile.rt<16x16xf8E4M3FN>) {
  %y = tile.map %x : !tile.rt<16x16xf8E4M3FN> -> !tile.rt<16x16xf8E4M3FN> {
  ^bb0(%a: f8E4M3FN):
    %b = arith.addf %a, %a : f8E4M3FN
    tile.yield %b : f8E4M3FN
  }
  func.return
}
// CHECK: 'tile.map' its body computes on an 8-bit float (arith.addf of f8E4M3FN, f8E4M3FN): FP8 values are converted

// -----

func.func @reshape_count(%x: !tile.rt<16x64xf32>) {
  %r = tile.reshape %x : !tile.rt<16x64xf32> -> !tile.rt<16x32xf32>
  func.return
}
// CHECK: 'tile.reshape' of !tile.rt<16x64xf32> (1024 elements) to !tile.rt<16x32xf32> (512): a reshape keeps the number of elements

// -----

func.func @reshape_type(%x: !tile.rv<64xf32, col>) {
  %r = tile.reshape %x : !tile.rv<64xf32, col> -> !tile.rt<8x8xf16>
  func.return
}
// CHECK: 'tile.reshape' reshapes !tile.rv<64xf32, col> to !tile.rt<8x8xf16>: a reshape keeps the element type

// -----

func.func @join_parts(%a: !tile.rt<16x32xf32>, %b: !tile.rt<16x16xf32>) {
  %r = tile.join %a, %b dim 1 : !tile.rt<16x32xf32>, !tile.rt<16x16xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.join' joins two tiles of one shape and element type, got !tile.rt<16x32xf32> and !tile.rt<16x16xf32>

// -----

func.func @join_result(%a: !tile.rt<16x32xf32>) {
  %r = tile.join %a, %a dim 0 interleaved : !tile.rt<16x32xf32>, !tile.rt<16x32xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.join' of two !tile.rt<16x32xf32> along dim 0 gives a tile of 32x32xf32, not !tile.rt<16x64xf32>

// -----

func.func @join_dim(%a: !tile.rt<16x32xf32>) {
  %r = tile.join %a, %a dim 2 : !tile.rt<16x32xf32>, !tile.rt<16x32xf32> -> !tile.rt<16x64xf32>
  func.return
}
// CHECK: 'tile.join' dim 2 is not a dimension of !tile.rt<16x32xf32>

// -----

func.func @split_parts(%x: !tile.rt<32x8xf32>) {
  %a, %b = tile.split %x dim 1 : !tile.rt<32x8xf32> -> !tile.rt<16x8xf32>, !tile.rt<16x8xf32>
  func.return
}
// CHECK: 'tile.split' of !tile.rt<32x8xf32> along dim 1 gives two tiles of 32x4xf32, not !tile.rt<16x8xf32>

// -----

func.func @split_odd(%x: !tile.rt<3x8xf32>) {
  %a, %b = tile.split %x dim 0 : !tile.rt<3x8xf32> -> !tile.rt<1x8xf32>, !tile.rt<1x8xf32>
  func.return
}
// CHECK: 'tile.split' of !tile.rt<3x8xf32> along dim 0: an extent of 3 has no halves

// -----

func.func @take_extents(%x: !tile.rt<16x64xf32>, %i: !tile.rt<8x8xi32>) {
  %r = tile.take %x[%i] axis 1 : !tile.rt<16x64xf32>[!tile.rt<8x8xi32>] -> !tile.rt<8x8xf32>
  func.return
}
// CHECK: 'tile.take' index !tile.rt<8x8xi32> must have the extents of !tile.rt<16x64xf32> but along axis 1

// -----

func.func @take_result(%x: !tile.rt<16x64xf32>, %i: !tile.rt<16x8xi32>) {
  %r = tile.take %x[%i] axis 1 : !tile.rt<16x64xf32>[!tile.rt<16x8xi32>] -> !tile.rt<16x8xf16>
  func.return
}
// CHECK: 'tile.take' gives a value of the index's shape and the source's element type (f32), not !tile.rt<16x8xf16>
