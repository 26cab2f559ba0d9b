"""GPU smoke test of the whole pipeline: examples/gemm.mlir through tile-to-ptx, launched by hand with the gl ABI."""
import time, numpy as np, torch, tilec
def run(m, n, k, block=(128,128,32), stages=3):
    t = time.time()
    pipe = f"tile-to-ptx{{block={block[0]},{block[1]},{block[2]} stages={stages}}}"
    kern = tilec.compile("examples/gemm.mlir", pipeline=pipe)
    ct = time.time() - t
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    args = []
    for x in (a, b, c):
        args += [x, x.shape[0], x.shape[1], x.stride(0), x.stride(1)]
    grid = ((m + block[0] - 1) // block[0]) * ((n + block[1] - 1) // block[1])
    kern(*args, grid=(grid, 1, 1))
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = ((c.double() - ref).norm() / ref.norm()).item()
    nan = torch.isnan(c).sum().item()
    # timing
    for _ in range(3): kern(*args, grid=(grid, 1, 1))
    torch.cuda.synchronize()
    ts = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); kern(*args, grid=(grid, 1, 1)); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ms = sorted(ts)[len(ts)//2]
    print(f"{m}x{n}x{k} block={block} stages={stages}: rel err {err:.2e} nan {nan} compile {ct:.1f}s  {2*m*n*k/ms/1e9:.1f} TFLOP/s ({ms:.3f} ms)")
for shape in [(1,1,1),(17,33,65),(127,129,1000),(1000,1000,1000),(4096,4096,4096)]:
    run(*shape)
run(4096,4096,4096, block=(128,128,32), stages=4)
run(4096,4096,4096, block=(64,128,32), stages=3)
