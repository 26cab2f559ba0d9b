// RUN: tile-opt %s | tile-opt | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// Every tile type, custom syntax, printed back the same way from both forms.

// CHECK: func.func @global(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<bf16, [128, ?]>, %c: !tile.gl<f32, [?]>, %d: !tile.gl<f64, [4, 4]>)
func.func @global(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<bf16, [128, ?]>, %c: !tile.gl<f32, [?]>, %d: !tile.gl<f64, [4, 4]>) {
  func.return
}

// A shared tile without a layout gets the compact row-major one.
// CHECK: func.func @shared(%a: !tile.st<128x32xf16, (128,32):(32,1)>, %b: !tile.st<64x64xbf16, Sw<3,3,3> o 0 o (64,64):(64,1)>, %c: !tile.st<16x16xf32, (16,16):(1,16)>, %d: !tile.st<8x64xf16, (8,(8,8)):(64,(1,8))>)
func.func @shared(%a: !tile.st<128x32xf16>, %b: !tile.st<64x64xbf16, Sw<3,3,3> o 0 o (64,64):(64,1)>, %c: !tile.st<16x16xf32, (16,16):(1,16)>, %d: !tile.st<8x64xf16, (8,(8,8)):(64,(1,8))>) {
  func.return
}

// CHECK: func.func @registers(%a: !tile.rt<64x64xf32>, %b: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>, %c: !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>)
func.func @registers(%a: !tile.rt<64x64xf32>, %b: !tile.rt<16x8xf32, ((4,8),(2,2)):((32,1),(16,8))>, %c: !tile.rt<16x16xf16, ((4,8),(2,2,2)):((32,1),(16,8,128))>) {
  func.return
}

// CHECK: func.func @vectors(%a: !tile.rv<64xf32, row>, %b: !tile.rv<32xbf16, col>)
func.func @vectors(%a: !tile.rv<64xf32, row>, %b: !tile.rv<32xbf16, col>) {
  func.return
}
