// RUN: tile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: tile-opt %s --split-input-file --verify-diagnostics | tile-opt --split-input-file --verify-diagnostics | filecheck %s
// RUN: tile-opt %s --split-input-file --verify-diagnostics --print-op-generic | tile-opt --split-input-file --verify-diagnostics | filecheck %s

// tile.stage: stage %i of a multi-stage shared buffer (what tile-pipeline
// allocates). The buffer's first layout mode N:P is the stage; the stage's
// layout is the buffer's without it, swizzle kept, at element offset i*P.
// The verifier rejects a stage stride that is not a multiple of the swizzle's
// period (the stages would be swizzled differently), a stage layout that is not
// the buffer's slice, overlapping stages and a wrong stage shape.

func.func @stages(%i: index) {
  %buf = tile.alloc : !tile.st<3x64x32xf16, Sw<3,3,3> o 0 o (3,64,32):(2048,32,1)>
  %s = tile.stage %buf[%i] : !tile.st<3x64x32xf16, Sw<3,3,3> o 0 o (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, Sw<3,3,3> o 0 o (64,32):(32,1)>
  %p = tile.alloc : !tile.st<2x32x64xf16, (2,32,64):(2048,64,1)>
  %q = tile.stage %p[%i] : !tile.st<2x32x64xf16, (2,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
  func.return
}
// CHECK-LABEL: func.func @stages(%i: index) {
// CHECK-NEXT:    %buf = tile.alloc : !tile.st<3x64x32xf16, Sw<3,3,3> o 0 o (3,64,32):(2048,32,1)>
// CHECK-NEXT:    %s = tile.stage %buf[%i] : !tile.st<3x64x32xf16, Sw<3,3,3> o 0 o (3,64,32):(2048,32,1)> -> !tile.st<64x32xf16, Sw<3,3,3> o 0 o (64,32):(32,1)>
// CHECK-NEXT:    %p = tile.alloc : !tile.st<2x32x64xf16, (2,32,64):(2048,64,1)>
// CHECK-NEXT:    %q = tile.stage %p[%i] : !tile.st<2x32x64xf16, (2,32,64):(2048,64,1)> -> !tile.st<32x64xf16, (32,64):(64,1)>
// CHECK-NEXT:    func.return

// -----

func.func @period(%i: index) {
  %buf = tile.alloc : !tile.st<2x16x16xf16, Sw<3,3,3> o 0 o (2,16,16):(256,16,1)>
  // expected-error @+1 {{buffer !tile.st<2x16x16xf16, Sw<3,3,3> o 0 o (2,16,16):(256,16,1)> has no stages: stage stride 256 of Sw<3,3,3> o 0 o (2,16,16):(256,16,1) is not a multiple of the period 512 of Sw<3,3,3>: the swizzle would not be the same in every stage}}
  %s = tile.stage %buf[%i] : !tile.st<2x16x16xf16, Sw<3,3,3> o 0 o (2,16,16):(256,16,1)> -> !tile.st<16x16xf16, Sw<3,3,3> o 0 o (16,16):(16,1)>
  func.return
}

// -----

func.func @layout(%i: index) {
  %buf = tile.alloc : !tile.st<2x16x16xf16, (2,16,16):(256,16,1)>
  // expected-error @+1 {{a stage of !tile.st<2x16x16xf16, (2,16,16):(256,16,1)> has layout (16,16):(16,1), not (16,16):(1,16)}}
  %s = tile.stage %buf[%i] : !tile.st<2x16x16xf16, (2,16,16):(256,16,1)> -> !tile.st<16x16xf16, (16,16):(1,16)>
  func.return
}

// -----

func.func @overlap(%i: index) {
  %buf = tile.alloc : !tile.st<2x16x16xf16, (2,16,16):(128,16,1)>
  // expected-error @+1 {{stages of !tile.st<2x16x16xf16, (2,16,16):(128,16,1)> overlap: stride 128 is less than the stage's cosize 256}}
  %s = tile.stage %buf[%i] : !tile.st<2x16x16xf16, (2,16,16):(128,16,1)> -> !tile.st<16x16xf16, (16,16):(16,1)>
  func.return
}

// -----

func.func @shape(%i: index) {
  %buf = tile.alloc : !tile.st<2x16x16xf16>
  // expected-error @+1 {{a stage of 2x16x16 is 16x16, not 16x8}}
  %s = tile.stage %buf[%i] : !tile.st<2x16x16xf16> -> !tile.st<16x8xf16>
  func.return
}
