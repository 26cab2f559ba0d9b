"""The README's main command works: the example compiles to PTX (and runs where a GPU is)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_mma_one_warp_example_compiles_and_reports(tmp_path):
    env = {"TILEC_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "mma_one_warp.py"), "--arch", "sm_90"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "compiled mma_f16 for sm_90" in out.stdout
    assert "1 x mma.sync.aligned.m16n8k16" in out.stdout
    assert ("not run: no CUDA device" in out.stdout) or ("max relative error" in out.stdout)


def test_example_rejects_unknown_arch_without_traceback():
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "mma_one_warp.py"), "--arch", "sm_75"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2 and "invalid choice: 'sm_75'" in out.stderr and "Traceback" not in out.stderr


def test_gemm_example_compiles_the_whole_pipeline(tmp_path):
    env = {"TILEC_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "gemm.py"), "--arch", "sm_80", "--stages", "2"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "compiled gemm with tile-to-ptx{block=128,128,32 stages=2} for sm_80" in out.stdout
    assert "32 x mma.sync.aligned.m16n8k16" in out.stdout  # 8 warps of 32x64: 2x8 atoms, 2 K steps
    assert ("not run: no CUDA device" in out.stdout) or ("relative error" in out.stdout)


def test_the_language_examples_interpret_compile_and_report(tmp_path):
    """examples/lang/*.py: each checks itself on the CPU interpreter (exit 1 on a wrong result), then
    compiles; on a GPU each also runs and checks against float64."""
    env = {"TILEC_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    expected = {
        "vector_add.py": ["interpreter: max error", "PTX: "],
        "softmax.py": ["interpreter, softmax: max relative error", "interpreter, softmax_online"],
        "layer_norm.py": ["interpreter, layer_norm", "interpreter, rms_norm"],
        "matmul.py": ["interpreter: 200x136x72", "32 mma.sync", "wgmma.mma_async"],
        "attention_overlap.py": ["interpreter after tile-distribute, causal=True", "2 wgmma.wait_group 1"],
        "pointers.py": ["vector add (tile interpreter): max error 0.0", "embedding (lane by lane after tile-distribute): equal True"],
        "fp8.py": ["interpreter, quantize and dequantize rows (E4M3)", "2 wgmma.mma_async of e4m3"],
        "int4.py": ["interpreter after tile-distribute, dequantize", "W4A16 matmul 80x72x96", "mma.sync of f16"],
        "quantize.py": ["group_quantize of 1000: scales within 0.0e+00", "sort_rows 4x64: sorted"],
        "routing.py": ["nf4_dequant of 1000 bytes: exact", "top 8: right", "PTX for sm_80, nf4_dequant"],
    }
    for name, lines in expected.items():
        out = subprocess.run([sys.executable, str(REPO / "examples" / "lang" / name)], capture_output=True,
                             text=True, env=env, timeout=300)
        assert out.returncode == 0, f"{name}:\n{out.stdout}\n{out.stderr}"
        for line in lines:
            assert line in out.stdout, f"{name}: {line!r} not in\n{out.stdout}"
        assert ("no GPU: not launched" in out.stdout) or ("GPU" in out.stdout)
