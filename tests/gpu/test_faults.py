"""A kernel that faults on the GPU: a Python exception naming it and saying the context is lost.

A user's view may claim more than its array holds (``GlView`` extents are trusted, as a pointer
is); a store far past the array faults. The fault surfaces at the next call that waits for the GPU:
tilec's :class:`~tilec.runtime.CudaError` then names the kernel launched last and says that the
error is sticky (every later call fails; restart the process). Run in a child process: the
context of the process that faults is lost for good.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tilec.runtime import has_device, no_device_reason

gpu = pytest.mark.skipif(not has_device(), reason=f"no CUDA device: {no_device_reason()}")

CHILD = textwrap.dedent('''
    import torch, tilec
    from tilec.runtime import CudaError, get_device
    from tilec.runtime.gl_views import GlView, expand

    kernel = tilec.compile("""
    func.func @reaches_too_far(%o: !tile.gl<f32, [?, ?]>, %row: index)
        attributes {tile.launch = #tile.launch<grid = [1, 1, 1], block = [32, 1, 1], smem = 0>} {
      %c0 = arith.constant 0 : index
      %t = tile.zeros : !tile.rt<16x8xf32>
      tile.store %t, %o[%row, %c0] : !tile.rt<16x8xf32> -> !tile.gl<f32, [?, ?]>
      func.return
    }""", cache=False)
    small = torch.zeros(16, 8, device="cuda")
    kernel(*expand(kernel, GlView(small, (1 << 40, 8), (8, 1)), 1 << 38), grid=(1, 1, 1))
    try:
        get_device().synchronize()
    except CudaError as e:
        print("FAULT:", e)
    try:
        kernel(*expand(kernel, GlView(small, (16, 8), (8, 1)), 0), grid=(1, 1, 1))
        get_device().synchronize()
    except CudaError as e:
        print("AFTER:", e)
''')


@gpu
@pytest.mark.gpu
def test_a_faulting_kernel_is_named_and_the_lost_context_said():
    child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    out = child.stdout
    assert "FAULT:" in out, child.stderr[-2000:]
    fault = out.split("FAULT:")[1].split("AFTER:")[0]
    assert "reaches_too_far" in fault and "the CUDA context is lost" in fault and "sticky" in fault
    assert "AFTER:" in out and "context is lost" in out.split("AFTER:")[1]
