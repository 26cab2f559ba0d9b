"""The GEMM kernels whose PTX must not change by accident: every config table entry, with the
kernel variants the suite builds (plain, transposed with bias and ReLU, the row alignments).

``python tests/golden/gemm_ptx_cases.py --write`` records the sha256 of each kernel's PTX in
``gemm_ptx.json``; ``tests/golden/test_gemm_ptx.py`` compiles them again and compares. A change
that alters the PTX on purpose rewrites the file and says why in its commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from tilec.api import compile as tilec_compile
from tilec.kernels.gemm_config import (
    ALIGNED_CONFIGS,
    BULK_CONFIG,
    BULK_MEDIUM_CONFIG,
    CONFIGS,
    ELEMENT_ROWS_LARGE,
    WGMMA_CONFIG,
)
from tilec.kernels.gemm_ir import MatmulSpec, build_module

GOLDEN = Path(__file__).with_name("gemm_ptx.json")

_PLAIN16 = MatmulSpec("float16", "float16", align=16)
_EPI_BF16 = MatmulSpec("bfloat16", "float32", transpose_a=True, transpose_b=True, bias_dtype="float32",
                       activation="relu", align=16)

CASES: dict[str, tuple[MatmulSpec, object, str]] = {
    "aligned-wide-f16": (_PLAIN16, ALIGNED_CONFIGS["wide"], "sm_80"),
    "aligned-large-f16": (_PLAIN16, ALIGNED_CONFIGS["large"], "sm_90"),
    "aligned-large-bf16-epi": (_EPI_BF16, ALIGNED_CONFIGS["large"], "sm_80"),
    "aligned-medium-bf16-epi": (_EPI_BF16, ALIGNED_CONFIGS["medium"], "sm_90"),
    "aligned-short-f16": (_PLAIN16, ALIGNED_CONFIGS["short"], "sm_80"),
    "aligned-decode-f16-tn": (MatmulSpec("float16", "float16", transpose_b=True, align=16),
                              ALIGNED_CONFIGS["decode"], "sm_80"),
    "rows8-large": (MatmulSpec("float16", "float16", align=(8, 16, 16)), ALIGNED_CONFIGS["large"], "sm_80"),
    "rows4-medium-f32out": (MatmulSpec("float16", "float32", bias_dtype="float16", align=(16, 4, 4, 2)),
                            ALIGNED_CONFIGS["medium"], "sm_80"),
    "rows2-element-large": (MatmulSpec("float16", "float16", align=(2, 16, 16)), ELEMENT_ROWS_LARGE, "sm_80"),
    "generic-mma-large": (MatmulSpec("float16", "float16"), CONFIGS[("mma", "large")], "sm_80"),
    "generic-mma-small-epi": (MatmulSpec("bfloat16", "bfloat16", transpose_a=True, bias_dtype="float32",
                                         activation="relu"), CONFIGS[("mma", "small")], "sm_90"),
    "generic-tf32-large": (MatmulSpec("float32", "float32"), CONFIGS[("tf32", "large")], "sm_80"),
    "generic-tf32-small-tt": (MatmulSpec("float32", "float32", transpose_a=True, transpose_b=True),
                              CONFIGS[("tf32", "small")], "sm_90"),
    "generic-simt-large": (MatmulSpec("float32", "float32", bias_dtype="float32", activation="relu"),
                           CONFIGS[("simt", "large")], "sm_80"),
    "generic-simt-small-nt": (MatmulSpec("float32", "float16", transpose_b=True), CONFIGS[("simt", "small")], "sm_80"),
    "bulk-large": (_PLAIN16, BULK_CONFIG, "sm_90"),
    "bulk-medium-epi": (MatmulSpec("bfloat16", "bfloat16", bias_dtype="bfloat16", activation="relu", align=16),
                        BULK_MEDIUM_CONFIG, "sm_90"),
    "wgmma-f16": (_PLAIN16, WGMMA_CONFIG, "sm_90a"),
    "wgmma-bf16-epi": (MatmulSpec("bfloat16", "float32", bias_dtype="float32", activation="relu", align=16),
                       WGMMA_CONFIG, "sm_90a"),
}


def ptx_hash(name: str, pipeline: str | None = None) -> str:
    """sha256 of the case's PTX, through its config (the tile-to-ptx pass) or through ``pipeline`` (text)."""
    spec, config, arch = CASES[name]
    kernel = tilec_compile(build_module(spec), pipeline=pipeline or config, arch=arch, cache=False)
    return hashlib.sha256(kernel.asm["ptx"].encode()).hexdigest()


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__)
        return 2
    GOLDEN.write_text(json.dumps({name: ptx_hash(name) for name in CASES}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} hashes to {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
