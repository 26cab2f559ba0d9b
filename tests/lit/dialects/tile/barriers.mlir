// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// The sm_90 barrier ops in their custom syntax, both barrier kinds: transaction
// ("full") barriers, whose one arrival per phase announces the bytes of the
// phase's bulk copies, and per-warp ("empty") barriers, one arrival per warp.
// The generic form parses back to the same ops.

func.func @stage(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, %i: index, %p: index) {
  %full = tile.mbar_init : !tile.mbar<2>
  %empty = tile.mbar_init : !tile.mbar<2, warps>
  %s = tile.alloc : !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>
  tile.mbar_wait %empty[%i], %p issuer : !tile.mbar<2, warps>
  tile.mbar_expect %full[%i], 4096 : !tile.mbar<2>
  tile.bulk_copy %a[%i, %i] -> %s, %full[%i] : !tile.gl<f16, [?, ?]> -> !tile.st<32x64xf16, Sw<3,3,3> o 0 o (32,64):(64,1)>, !tile.mbar<2>
  tile.mbar_wait %full[%i], %p : !tile.mbar<2>
  tile.mbar_arrive %empty[%i] : !tile.mbar<2, warps>
  func.return
}

// CHECK-LABEL: func.func @stage
// CHECK-NEXT:    %full = tile.mbar_init : !tile.mbar<2>
// CHECK-NEXT:    %empty = tile.mbar_init : !tile.mbar<2, warps>
// CHECK-NEXT:    %s = tile.alloc
// CHECK-NEXT:    tile.mbar_wait %empty[%i], %p issuer : !tile.mbar<2, warps>
// CHECK-NEXT:    tile.mbar_expect %full[%i], 4096 : !tile.mbar<2>
// CHECK-NEXT:    tile.bulk_copy %a[%i, %i] -> %s, %full[%i]
// CHECK-NEXT:    tile.mbar_wait %full[%i], %p : !tile.mbar<2>
// CHECK-NEXT:    tile.mbar_arrive %empty[%i] : !tile.mbar<2, warps>
