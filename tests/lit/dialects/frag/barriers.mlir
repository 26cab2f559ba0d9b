// RUN: tile-opt %s | filecheck %s
// RUN: tile-opt %s --print-op-generic | tile-opt | filecheck %s

// The sm_90 barrier and bulk-copy ops at fragment level (what tile-distribute
// emits for tile.mbar_* and tile.bulk_copy, and the tensor-map prefetch at a kernel's entry), one PTX instruction family each,
// and the named barriers of tile.turn_* (bar.sync/bar.arrive id, count).

func.func @k(%map: !llvm.ptr, %p: i32, %x: i32) attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [64, 1, 1], smem = 5120>} {
  %bars = frag.shared "bars", 16, align 8 : !llvm.ptr<3>
  %s = frag.shared "s", 4096, align 1024 : !llvm.ptr<3>
  frag.tensormap_prefetch %map : !llvm.ptr
  frag.mbar_init %bars, 2 : !llvm.ptr<3>
  frag.mbar_init_fence
  frag.mbar_expect_tx %bars, 4096 : !llvm.ptr<3>
  frag.tma_load %s, %map[%x, %x], %bars : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
  frag.mbar_wait %bars, %p : !llvm.ptr<3>
  frag.mbar_arrive_warp %bars : !llvm.ptr<3>
  frag.named_barrier_sync %x, 256
  frag.named_barrier_arrive %p, 128
  func.return
}

// CHECK-LABEL: func.func @k
// CHECK:         frag.tensormap_prefetch %map : !llvm.ptr
// CHECK-NEXT:    frag.mbar_init %bars, 2 : !llvm.ptr<3>
// CHECK-NEXT:    frag.mbar_init_fence
// CHECK-NEXT:    frag.mbar_expect_tx %bars, 4096 : !llvm.ptr<3>
// CHECK-NEXT:    frag.tma_load %s, %map[%x, %x], %bars : !llvm.ptr<3>, !llvm.ptr, !llvm.ptr<3>
// CHECK-NEXT:    frag.mbar_wait %bars, %p : !llvm.ptr<3>
// CHECK-NEXT:    frag.mbar_arrive_warp %bars : !llvm.ptr<3>
// CHECK-NEXT:    frag.named_barrier_sync %x, 256
// CHECK-NEXT:    frag.named_barrier_arrive %p, 128
