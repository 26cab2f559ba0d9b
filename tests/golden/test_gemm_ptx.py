"""The PTX of the GEMM kernels in ``gemm_ptx_cases.CASES`` is byte for byte what was recorded.

Refactors of the passes must not change the code they emit; a change that does on purpose
rewrites ``gemm_ptx.json`` (``python tests/golden/gemm_ptx_cases.py --write``) and says why.
"""

from __future__ import annotations

import json

import pytest
from gemm_ptx_cases import CASES, GOLDEN, ptx_hash

RECORDED = json.loads(GOLDEN.read_text())


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gemm_ptx_unchanged(name):
    assert ptx_hash(name) == RECORDED[name], f"the PTX of {name} changed"


@pytest.mark.parametrize("name", ["aligned-large-f16", "generic-simt-large", "wgmma-f16"])
def test_the_regalloc_alias_gives_the_same_ptx(name):
    """``tile-regalloc`` (kept for one release) is ``tile-layout,tile-distribute``: the same PTX."""
    _, config, _ = CASES[name]
    text = config.pipeline()
    assert "tile-layout,tile-distribute" in text
    assert ptx_hash(name, text.replace("tile-layout,tile-distribute", "tile-regalloc")) == RECORDED[name]
