// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: tile-opt %s --split-input-file --verify-diagnostics --print-op-generic | tile-opt --split-input-file | filecheck %s

// tile.gather / tile.scatter / tile.scatter_atomic: elements at coordinates held in register tiles (numpy's x[i, j] with
// index tiles; linear: Triton's x_ptr + offsets, in elements of memory from the view's first one).
// The index tiles' types follow the view's in brackets; a mask's type after them. A linear
// tile.load_scalar reads one element the same way.

func.func @forms(%x: !tile.gl<f16, [?, ?]>, %y: !tile.gl<f32, [?]>, %i: !tile.rt<16x32xi32>, %j: !tile.rt<16x32xi64>,
                 %m: !tile.rt<16x32xi1>, %v: !tile.rv<32xi32, col>, %k: index) -> f32 {
  %a = tile.gather %x[%i, %j] : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>, !tile.rt<16x32xi64>] -> !tile.rt<16x32xf16>
  %b = tile.gather %y[%i] linear mask %m other(-1.0) : !tile.gl<f32, [?]>[!tile.rt<16x32xi32>], !tile.rt<16x32xi1> -> !tile.rt<16x32xf32>
  %c = tile.gather %y[%v] : !tile.gl<f32, [?]>[!tile.rv<32xi32, col>] -> !tile.rv<32xf32, col>
  %d = tile.gather %y[%i] linear mask %m fill %b : !tile.gl<f32, [?]>[!tile.rt<16x32xi32>], !tile.rt<16x32xi1> -> !tile.rt<16x32xf32>
  tile.scatter %a, %x[%i, %j] mask %m : !tile.rt<16x32xf16> -> !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>, !tile.rt<16x32xi64>], !tile.rt<16x32xi1>
  tile.scatter %c, %y[%v] linear : !tile.rv<32xf32, col> -> !tile.gl<f32, [?]>[!tile.rv<32xi32, col>]
  %s = tile.load_scalar %x[%k] linear : !tile.gl<f16, [?, ?]> -> f16
  %t = tile.load_scalar %y[%k] : !tile.gl<f32, [?]> -> f32
  tile.scatter_atomic "add" %b, %y[%i] linear mask %m : !tile.rt<16x32xf32> -> !tile.gl<f32, [?]>[!tile.rt<16x32xi32>], !tile.rt<16x32xi1>
  %o = tile.scatter_atomic "max" %c, %y[%v] : !tile.rv<32xf32, col> -> !tile.gl<f32, [?]>[!tile.rv<32xi32, col>] returns !tile.rv<32xf32, col>
  func.return %t : f32
}
// CHECK:      %a = tile.gather %x[%i, %j] : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>, !tile.rt<16x32xi64>] -> !tile.rt<16x32xf16>
// CHECK-NEXT: %b = tile.gather %y[%i] linear mask %m other(-1.000000e+00 : f64) : !tile.gl<f32, [?]>[!tile.rt<16x32xi32>], !tile.rt<16x32xi1> -> !tile.rt<16x32xf32>
// CHECK-NEXT: %c = tile.gather %y[%v] : !tile.gl<f32, [?]>[!tile.rv<32xi32, col>] -> !tile.rv<32xf32, col>
// CHECK-NEXT: %d = tile.gather %y[%i] linear mask %m fill %b : !tile.gl<f32, [?]>[!tile.rt<16x32xi32>], !tile.rt<16x32xi1> -> !tile.rt<16x32xf32>
// CHECK-NEXT: tile.scatter %a, %x[%i, %j] mask %m : !tile.rt<16x32xf16> -> !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>, !tile.rt<16x32xi64>], !tile.rt<16x32xi1>
// CHECK-NEXT: tile.scatter %c, %y[%v] linear : !tile.rv<32xf32, col> -> !tile.gl<f32, [?]>[!tile.rv<32xi32, col>]
// CHECK-NEXT: %s = tile.load_scalar %x[%k] linear : !tile.gl<f16, [?, ?]> -> f16
// CHECK-NEXT: %t = tile.load_scalar %y[%k] : !tile.gl<f32, [?]> -> f32
// CHECK-NEXT: tile.scatter_atomic "add" %b, %y[%i] linear mask %m : !tile.rt<16x32xf32> -> !tile.gl<f32, [?]>[!tile.rt<16x32xi32>], !tile.rt<16x32xi1>
// CHECK-NEXT: %o = tile.scatter_atomic "max" %c, %y[%v] : !tile.rv<32xf32, col> -> !tile.gl<f32, [?]>[!tile.rv<32xi32, col>] returns !tile.rv<32xf32, col>

// -----

func.func @count(%x: !tile.gl<f16, [?, ?]>, %i: !tile.rt<16x32xi32>) {
  // expected-error @+1 {{'tile.gather' takes 2 index tiles (one per dimension of !tile.gl<f16, [?, ?]>), got 1}}
  %a = tile.gather %x[%i] : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>] -> !tile.rt<16x32xf16>
  func.return
}

// -----

func.func @linear_count(%x: !tile.gl<f16, [?, ?]>, %i: !tile.rt<16x32xi32>) {
  // expected-error @+1 {{'tile.gather' takes one index tile (the elements' offsets in memory), got 2}}
  %a = tile.gather %x[%i, %i] linear : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>, !tile.rt<16x32xi32>] -> !tile.rt<16x32xf16>
  func.return
}

// -----

func.func @index_type(%x: !tile.gl<f16, [?]>, %i: !tile.rt<16x32xf32>) {
  // expected-error @+1 {{'tile.gather' index tiles are register tiles or vectors of i32 or i64, got !tile.rt<16x32xf32>}}
  %a = tile.gather %x[%i] : !tile.gl<f16, [?]>[!tile.rt<16x32xf32>] -> !tile.rt<16x32xf16>
  func.return
}

// -----

func.func @index_shape(%x: !tile.gl<f16, [?]>, %i: !tile.rt<16x16xi32>) {
  // expected-error @+1 {{'tile.gather' index tile !tile.rt<16x16xi32> must have the shape of !tile.rt<16x32xf16>}}
  %a = tile.gather %x[%i] : !tile.gl<f16, [?]>[!tile.rt<16x16xi32>] -> !tile.rt<16x32xf16>
  func.return
}

// -----

func.func @element(%x: !tile.gl<f16, [?]>, %i: !tile.rt<16x32xi32>) {
  // expected-error @+1 {{'tile.gather' element types differ: f16 vs f32 (use tile.convert)}}
  %a = tile.gather %x[%i] : !tile.gl<f16, [?]>[!tile.rt<16x32xi32>] -> !tile.rt<16x32xf32>
  func.return
}

// -----

func.func @scatter_mask(%x: !tile.gl<f16, [?]>, %i: !tile.rv<32xi32, col>, %v: !tile.rv<32xf16, col>, %m: !tile.rv<32xi1, row>) {
  // expected-error @+1 {{'tile.scatter' mask must be !tile.rv<32xi1, col> (i1 in the value's shape), got !tile.rv<32xi1, row>}}
  tile.scatter %v, %x[%i] mask %m : !tile.rv<32xf16, col> -> !tile.gl<f16, [?]>[!tile.rv<32xi32, col>], !tile.rv<32xi1, row>
  func.return
}

// -----

func.func @scalar_linear(%x: !tile.gl<f16, [?, ?]>, %k: index) {
  // expected-error @+1 {{'tile.load_scalar' linear takes one index (the element's offset in memory), got 2}}
  %s = tile.load_scalar %x[%k, %k] linear : !tile.gl<f16, [?, ?]> -> f16
  func.return
}

// -----

func.func @atomic_kind(%x: !tile.gl<i16, [?]>, %i: !tile.rv<32xi32, col>, %v: !tile.rv<32xi16, col>) {
  // expected-error @+1 {{'tile.scatter_atomic' add combines f32 or i32 or f64 or i64 or f16 or bf16 elements atomically, not i16}}
  tile.scatter_atomic "add" %v, %x[%i] : !tile.rv<32xi16, col> -> !tile.gl<i16, [?]>[!tile.rv<32xi32, col>]
  func.return
}

// -----

func.func @fill_and_other(%x: !tile.gl<f32, [?]>, %i: !tile.rv<32xi32, col>, %f: !tile.rv<32xf32, col>) {
  // expected-error @+1 {{'tile.gather' takes a number (other) or a tile (fill) for the elements it does not read, not both}}
  %a = tile.gather %x[%i] other(1.0) fill %f : !tile.gl<f32, [?]>[!tile.rv<32xi32, col>] -> !tile.rv<32xf32, col>
  func.return
}

// -----

// A gathering copy: tile.copy / tile.async_copy with offsets (each element's offset in memory from the
// view's first one, i32 or i64 in the tile's shape) in place of the source's indices; the offsets'
// type follows the view's in brackets, as a gather's index tiles do.
func.func @gathering_copies(%x: !tile.gl<f16, [?, ?]>, %o: !tile.rt<16x32xi32>, %p: !tile.rt<16x32xi64>,
                            %m: !tile.rt<16x32xi1>) {
  %s = tile.alloc : !tile.st<16x32xf16>
  tile.copy %x offsets %o -> %s mask %m prefix : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>] -> !tile.st<16x32xf16>, !tile.rt<16x32xi1>
  tile.async_copy %x offsets %p -> %s : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi64>] -> !tile.st<16x32xf16>
  func.return
}
// CHECK-LABEL: func.func @gathering_copies
// CHECK:      tile.copy %x offsets %o -> %s mask %m prefix : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>] -> !tile.st<16x32xf16{{.*}}>, !tile.rt<16x32xi1>
// CHECK-NEXT: tile.async_copy %x offsets %p -> %s : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi64>] -> !tile.st<16x32xf16{{.*}}>

// -----

func.func @copy_offsets_and_indices(%x: !tile.gl<f16, [?, ?]>, %o: !tile.rt<16x32xi32>, %k: index) {
  %s = tile.alloc : !tile.st<16x32xf16>
  // expected-error @+1 {{'tile.copy' takes the source's indices or offsets, not both (got 2 indices)}}
  tile.copy %x[%k, %k] offsets %o -> %s : !tile.gl<f16, [?, ?]>[!tile.rt<16x32xi32>] -> !tile.st<16x32xf16>
  func.return
}

// -----

func.func @copy_offsets_shape(%x: !tile.gl<f16, [?, ?]>, %o: !tile.rt<16x16xi32>) {
  %s = tile.alloc : !tile.st<16x32xf16>
  // expected-error @+1 {{'tile.async_copy' offsets must be !tile.rt<16x32xi32> or i64 (each element's offset in the copied tile's shape), got !tile.rt<16x16xi32>}}
  tile.async_copy %x offsets %o -> %s : !tile.gl<f16, [?, ?]>[!tile.rt<16x16xi32>] -> !tile.st<16x32xf16>
  func.return
}

// -----

func.func @copy_offsets_out(%x: !tile.gl<f16, [?, ?]>, %o: !tile.rt<16x32xi32>) {
  %s = tile.alloc : !tile.st<16x32xf16>
  // expected-error @+1 {{'tile.copy' gathers (offsets) from a global view into a whole shared tile only}}
  tile.copy %s offsets %o -> %x : !tile.st<16x32xf16>[!tile.rt<16x32xi32>] -> !tile.gl<f16, [?, ?]>
  func.return
}
