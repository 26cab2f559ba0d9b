"""Host launch overhead: microseconds per call for a 64^3 f16 GEMM, launched back to back.

    python bench/launch_overhead.py              # on a GPU (needs torch; Triton is timed if importable)
    python bench/launch_overhead.py --stub       # on any machine: the Python path alone, fake driver and torch

Rows (GPU mode), each ``n`` calls in a row, then one synchronize; the time
per call is host time (a 64^3 kernel runs in a few microseconds, so the
GPU waits for the host and the host's cost is what is measured):

- ``tilec.matmul(a, b, out=c)``: the whole user-facing path (fast path
  after the first call: cached plan, prepared parameters);
- ``tilec.matmul(a, b)``: the same, allocating the output with torch;
- ``CompiledKernel(*args)``: the compiled kernel called with its flat gl
  arguments (its own argument checks, no planning);
- ``PreparedLaunch.launch``: only the pointer stores and ``cuLaunchKernel``
  through cuda-python: the floor for tilec's design;
- ``torch.matmul(a, b, out=c)`` (cuBLAS) and a Triton ``@triton.jit``
  elementwise add of 64x64 (Triton's launcher; the kernel does no work
  worth counting).

``--stub`` runs the first three with the stand-ins of
``tests/test_launch_overhead.py`` (a fake driver whose launch does nothing,
a fake torch): the cost of tilec's Python alone, comparable across
machines without a GPU; plus ``CompiledKernel(*args)`` of the sm_90
bulk-copy kernel (1024^3 f16 on the fake sm_90 device: two tensor-map
parameters, their encoded maps from the map cache), on its fast path and,
for comparison, on the checked path (``bind_arguments`` every call).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def per_call_us(fn, n: int, sync=None, rounds: int = 5) -> float:
    """Best of ``rounds``: ``n`` calls of ``fn`` in a row (then ``sync``), in µs per call."""
    for _ in range(min(n, 200)):
        fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def gpu_rows(n: int) -> list[tuple[str, float]]:
    import torch

    import tilec
    import tilec.kernels.gemm as mm

    torch.manual_seed(0)
    a = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    b = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    c = torch.empty(64, 64, device="cuda", dtype=torch.float16)
    tilec.matmul(a, b, out=c)
    torch.cuda.synchronize()
    err = ((c.double() - a.double() @ b.double()).norm() / (a.double() @ b.double()).norm()).item()
    assert err < 1e-2, f"tilec.matmul is wrong here: relative error {err:.2e}"

    plan = mm.plan_matmul(a, b, out=c)
    kernel = mm.compile_matmul(plan.spec, plan.config)
    flat = plan.kernel_args(kernel, c)
    grid = (plan.grid, 1, 1)
    kernel(*flat, grid=grid)
    prepared = kernel._runtime.prepare(*flat, grid=grid, block=kernel.launch_defaults.block,
                                       shared_mem=kernel.launch_defaults.shared_mem)
    stream = torch.cuda.current_stream().cuda_stream
    pointers = (a.data_ptr(), b.data_ptr(), c.data_ptr())
    sync = torch.cuda.synchronize
    rows = [
        ("tilec.matmul(a, b, out=c)", per_call_us(lambda: tilec.matmul(a, b, out=c), n, sync)),
        ("tilec.matmul(a, b)", per_call_us(lambda: tilec.matmul(a, b), n, sync)),
        ("CompiledKernel(*args)", per_call_us(lambda: kernel(*flat, grid=grid), n, sync)),
        ("PreparedLaunch.launch (floor)", per_call_us(lambda: prepared.launch(stream, pointers), n, sync)),
        ("torch.matmul(a, b, out=c)", per_call_us(lambda: torch.matmul(a, b, out=c), n, sync)),
    ]
    triton_add = _triton_add()
    if triton_add is not None:
        x, y, z = (torch.randn(64 * 64, device="cuda") for _ in range(3))
        triton_add(x, y, z)
        rows.append(("triton add kernel (64x64)", per_call_us(lambda: triton_add(x, y, z), n, sync)))
    else:
        rows.append(("triton: not installed", float("nan")))
    return rows


def _triton_add():
    """A launcher of a trivial Triton kernel, or None without Triton."""
    if importlib.util.find_spec("triton") is None:
        return None
    import triton
    import triton.language as tl

    @triton.jit
    def add(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(z_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
                 mask=mask)

    def launch(x, y, z):
        add[(triton.cdiv(x.numel(), 1024),)](x, y, z, x.numel(), BLOCK=1024)

    return launch


def stub_rows(n: int) -> list[tuple[str, float]]:
    """The Python path on the stand-ins of tests/test_launch_overhead.py (no GPU, no torch)."""
    os.environ.setdefault("TILEC_CACHE_DIR", tempfile.mkdtemp(prefix="tilec-launch-overhead-"))
    sys.path.insert(0, str(REPO))
    spec = importlib.util.spec_from_file_location("launch_overhead_fakes", REPO / "tests" / "test_launch_overhead.py")
    fakes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fakes)
    from cuda.bindings import driver as cu

    from tilec.runtime import driver

    fake = fakes.load_fake_driver().FakeDriver(cu)
    fakes.instrument(fake)
    driver._reset_for_tests()
    driver._import_bindings = lambda: fake
    sys.modules["torch"] = fakes.fake_torch()
    rows = fakes.overhead_table(fake, n)
    rows[3:3] = _stub_tensor_map_rows(fakes, fake, n)
    return rows


def _stub_tensor_map_rows(fakes, fake, n: int) -> list[tuple[str, float]]:
    """``CompiledKernel(*args)`` of the bulk-copy kernel (tensor-map parameters): fast and checked path."""
    import tilec.kernels.gemm as mm

    a, b, c = fakes.f16(1024, 1024), fakes.f16(1024, 1024), fakes.f16(1024, 1024)
    plan = mm.plan_matmul(a, b, out=c)
    assert plan.config.bulk, f"1024^3 f16 on the fake sm_90 device took {plan.config.describe()}"
    kernel = mm.compile_matmul(plan.spec, plan.config)
    flat = plan.kernel_args(kernel, c)
    grid = (plan.grid, 1, 1)
    kernel(*flat, grid=grid)  # checked: loads, encodes the maps
    fake._enter = lambda name, args: None  # as overhead_table: no arity check, a launch that does nothing
    fake.timing = True
    try:
        fast = fakes.microseconds(lambda: kernel(*flat, grid=grid), n)
        runtime = kernel._runtime
        runtime._fast = None  # every call takes the checked path from here on
        checked = fakes.microseconds(lambda: kernel(*flat, grid=grid), max(1, n // 7))
    finally:
        del fake._enter
        fake.timing = False
    return [("CompiledKernel, tensor maps, fast path", fast),
            ("CompiledKernel, tensor maps, checked", checked)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stub", action="store_true", help="no GPU: time tilec's Python path with stand-ins")
    parser.add_argument("-n", type=int, default=2000, help="calls per round (default 2000)")
    args = parser.parse_args()
    rows = stub_rows(args.n) if args.stub else gpu_rows(args.n)
    where = "stub (fake driver, fake torch)" if args.stub else _device_name()
    print(f"host launch overhead, 64x64x64 f16, {where}")
    for name, us in rows:
        print(f"  {name:40s} {us:8.1f} us/call")


def _device_name() -> str:
    import torch

    return torch.cuda.get_device_name()


if __name__ == "__main__":
    main()
