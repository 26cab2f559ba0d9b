"""``bench/gemm.py``'s rounds that take turns, on CPU: the timer is a stand-in (no torch, no GPU).

The ratio must say how much faster tilec is (>1: faster), the two implementations must alternate
which goes first, and the row's ratio must be the ratio of the TFLOP/s the table prints.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def gemm(monkeypatch: pytest.MonkeyPatch):
    spec = importlib.util.spec_from_file_location("bench_gemm", ROOT / "bench" / "gemm.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_gemm", module)  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def test_rounds_take_turns_and_the_ratio_is_tilecs_speed(gemm, monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    drift = iter(1.0 + 0.01 * i for i in range(100))  # the clock slows down over the run

    def fake_time_ms(fn, timing):
        name = fn()
        order.append(name)
        return {"median_ms": (1.0 if name == "tilec" else 1.5) * next(drift)}

    monkeypatch.setattr(gemm, "time_ms", fake_time_ms)
    out = gemm.interleaved({"tilec": lambda: "tilec", "cublas": lambda: "cublas"}, gemm.Timing(rounds=4), 2e9)
    assert order == ["tilec", "cublas", "cublas", "tilec", "tilec", "cublas", "cublas", "tilec"]
    assert len(out["tilec"]["round_ms"]) == len(out["cublas"]["round_ms"]) == 4
    assert out["cublas"]["tilec_speedup"] == pytest.approx(1.5, rel=0.02)  # tilec 1.5x faster
    assert out["tilec"]["tflops"] > out["cublas"]["tflops"]


def test_the_table_ratio_is_the_ratio_of_its_columns(gemm) -> None:
    row = {"dtype": "float16", "impls": {"tilec": {"tflops": 600.0}, "cublas": {"tflops": 500.0}},
           "tilec_over_cublas_median_of_rounds": 1.3}
    gemm.add_ratios([row], None)
    assert row["ratios"]["tilec/cublas"] == pytest.approx(1.2)


def test_rounds_must_be_positive(gemm) -> None:
    with pytest.raises(SystemExit):
        gemm.parse_args(["--rounds", "0"])
    assert gemm.parse_args(["--rounds", "1"]).rounds == 1
