// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s

// tile.slice: a static window of a register tile. The verifier checks the rank, the element type
// and that the window lies inside the tile.

func.func @slice(%r: !tile.rt<16x64xf16>) -> !tile.rt<16x16xf16> {
  %s = tile.slice %r[0, 48] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>
  func.return %s : !tile.rt<16x16xf16>
}
// CHECK:      %s = tile.slice %r[0, 48] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>

// -----

func.func @outside(%r: !tile.rt<16x64xf16>) {
  // expected-error @+1 {{'tile.slice' window 16x32 at [0, 48] leaves !tile.rt<16x64xf16> along dimension 1}}
  %s = tile.slice %r[0, 48] : !tile.rt<16x64xf16> -> !tile.rt<16x32xf16>
  func.return
}

// -----

func.func @element(%r: !tile.rt<16x64xf16>) {
  // expected-error @+1 {{'tile.slice' keeps the element type: f16 in, f32 out}}
  %s = tile.slice %r[0, 0] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf32>
  func.return
}

// -----

func.func @rank(%r: !tile.rt<16x64xf16>) {
  // expected-error @+1 {{'tile.slice' takes one offset per dimension of !tile.rt<16x64xf16> and a result of its rank, got offsets [0]}}
  %s = tile.slice %r[0] : !tile.rt<16x64xf16> -> !tile.rt<16x16xf16>
  func.return
}
