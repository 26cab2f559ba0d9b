// RUN: tile-opt %s -p tile-layout | filecheck %s

// tile.reshape and tile.join move no data where a layout says so: tile-layout gives the other side of
// each the fragment that holds the same elements in the same registers (reread in the new shape; both
// parts side by side; or, when the result is decided first, the parts of the result's).

// A row-major tile read as 32 x 32 and as 64 x 16: the results take the input's registers, reread.
func.func @reshaped(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %p: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %r = tile.reshape %t : !tile.rt<16x64xf32> -> !tile.rt<32x32xf32>
  %s = tile.reshape %t : !tile.rt<16x64xf32> -> !tile.rt<64x16xf32>
  tile.store %r, %o[%c0, %c0] : !tile.rt<32x32xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %s, %p[%c0, %c0] : !tile.rt<64x16xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @reshaped
// CHECK: %t = tile.load {{.*}} -> !tile.rt<16x64xf32, ((4,8),((2,2),(1,8))):((32,1),((16,8),(16,128)))>
// CHECK-NEXT: %r = tile.reshape %t : {{.*}} -> !tile.rt<32x32xf32, ((4,8),(2,2,4,2)):((64,2),(32,16,256,1))>
// CHECK-NEXT: %s = tile.reshape %t : {{.*}} -> !tile.rt<64x16xf32, ((4,8),(2,2,2,4)):((128,4),(64,32,512,1))>
// CHECK-NOT: convert_layout

// 4-bit weights two rows a byte: the low and high nibbles joined with their rows taking turns are the
// mma's B operand (K x N), whose threads hold rows k and k + 1 of a column as one pair. The parts get
// the fragment of the rows k / 2 those threads hold, and so does the byte tile they are computed from.
func.func @nibbles(%a: !tile.gl<f16, [?, ?]>, %w: !tile.gl<i8, [?, ?]>, %c: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.gl<f16, [?, ?]> -> !tile.rt<16x32xf16>
  %bytes = tile.load %w[%c0, %c0] : !tile.gl<i8, [?, ?]> -> !tile.rt<16x8xi8>
  %lo = tile.convert %bytes : !tile.rt<16x8xi8> -> !tile.rt<16x8xf16>
  %hi = tile.convert %bytes : !tile.rt<16x8xi8> -> !tile.rt<16x8xf16>
  %b = tile.join %lo, %hi dim 0 interleaved : !tile.rt<16x8xf16>, !tile.rt<16x8xf16> -> !tile.rt<32x8xf16>
  %z = tile.zeros : !tile.rt<16x8xf32>
  %d = tile.mma %ta, %b, %z : !tile.rt<16x32xf16>, !tile.rt<32x8xf16>, !tile.rt<16x8xf32> -> !tile.rt<16x8xf32>
  tile.store %d, %c[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @nibbles
// CHECK: %bytes = tile.load {{.*}} -> !tile.rt<16x8xi8, [[PART:[^>]*]]>
// CHECK: %lo = tile.convert %bytes : !tile.rt<16x8xi8, [[PART]]> -> !tile.rt<16x8xf16, [[PART]]>
// CHECK: %b = tile.join %lo, %hi dim 0 interleaved : !tile.rt<16x8xf16, [[PART]]>, !tile.rt<16x8xf16, [[PART]]> -> !tile.rt<32x8xf16, [[B:[^>]*]]>
// CHECK: tile.mma %ta, %b, %z : {{.*}}, !tile.rt<32x8xf16, [[B]]>,
// CHECK-NOT: convert_layout

// A split whose pairs are in other lanes (the default 32 x 32 fragment gives each thread rows of one
// parity): the input is converted first to the fragment with the pair bit in the value (paired_fragment),
// whose threads hold both rows of each pair; the parts take those elements.
func.func @pairs(%x: !tile.gl<f32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>, %p: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<32x32xf32>
  %lo, %hi = tile.split %t dim 0 interleaved : !tile.rt<32x32xf32> -> !tile.rt<16x32xf32>, !tile.rt<16x32xf32>
  tile.store %lo, %o[%c0, %c0] : !tile.rt<16x32xf32> -> !tile.gl<f32, [?, ?]>
  tile.store %hi, %p[%c0, %c0] : !tile.rt<16x32xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @pairs
// CHECK: %t = tile.load {{.*}} -> !tile.rt<32x32xf32, [[ROWS:[^>]*]]>
// CHECK-NEXT: %t_1 = tile.convert_layout %t : !tile.rt<32x32xf32, [[ROWS]]> -> !tile.rt<32x32xf32, [[PAIRED:[^>]*]]>
// CHECK-NEXT: %lo, %hi = tile.split %t_1 dim 0 interleaved : !tile.rt<32x32xf32, [[PAIRED]]> -> !tile.rt<16x32xf32, [[PART:[^>]*]]>, !tile.rt<16x32xf32, [[PART]]>

// tile.take: the result takes its index's fragment (element i picked at index i); the source keeps its own.
func.func @take(%x: !tile.gl<f32, [?, ?]>, %i: !tile.gl<i32, [?, ?]>, %o: !tile.gl<f32, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %src = tile.load %x[%c0, %c0] : !tile.gl<f32, [?, ?]> -> !tile.rt<16x64xf32>
  %idx = tile.load %i[%c0, %c0] : !tile.gl<i32, [?, ?]> -> !tile.rt<16x8xi32>
  %r = tile.take %src[%idx] axis 1 : !tile.rt<16x64xf32>[!tile.rt<16x8xi32>] -> !tile.rt<16x8xf32>
  tile.store %r, %o[%c0, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
  func.return
}
// CHECK-LABEL: func.func @take
// CHECK: %src = tile.load {{.*}} -> !tile.rt<16x64xf32, ((4,8),((2,2),(1,8))):((32,1),((16,8),(16,128)))>
// CHECK: %idx = tile.load {{.*}} -> !tile.rt<16x8xi32, [[F:.*]]>
// CHECK-NEXT: %r = tile.take %src[%idx] axis 1 : {{.*}} -> !tile.rt<16x8xf32, [[F]]>
// CHECK-NOT: convert_layout

// Two vectors taking turns (tl.interleave): the result holds both parts' registers side by side, value
// 2u + p being part p's value u, so lane t holds elements 2t and 2t + 1 of each run.
func.func @vector_join(%g: !tile.gl<f32, [?]>, %h: !tile.gl<f32, [?]>, %o: !tile.gl<f32, [?]>)
    attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
  %c0 = arith.constant 0 : index
  %a = tile.load %g[%c0] : !tile.gl<f32, [?]> -> !tile.rv<256xf32, col>
  %b = tile.load %h[%c0] : !tile.gl<f32, [?]> -> !tile.rv<256xf32, col>
  %j = tile.join %a, %b dim 0 interleaved : !tile.rv<256xf32, col>, !tile.rv<256xf32, col> -> !tile.rv<512xf32, col>
  tile.store %j, %o[%c0] : !tile.rv<512xf32, col> -> !tile.gl<f32, [?]>
  func.return
}
// CHECK-LABEL: func.func @vector_join
// CHECK: -> !tile.rv<512xf32, col, (32,(2,8)):(2,(1,64))>
// CHECK-NOT: convert_layout
