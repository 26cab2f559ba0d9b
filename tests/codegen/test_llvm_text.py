"""llvm_translate.module_text: the text llvmlite prints for translate_module, written directly."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Block, Region

from tilec.api import make_context
from tilec.codegen import llvm_translate as T
from tilec.codegen.ptx import llvm_ir
from tilec.kernels.gemm_config import BULK_CONFIG, CONFIGS, MatmulConfig
from tilec.kernels.gemm_ir import MatmulSpec, build_module
from tilec.passes.registry import build_pipeline
from tilec.ir.parser import LocatingParser

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kernels"


def _llvmlite_text(module: ModuleOp) -> str:
    return str(T.translate_module(module, triple=T.NVPTX_TRIPLE, data_layout="e-i64:64"))


def _assert_direct(module: ModuleOp, monkeypatch) -> None:
    """module_text writes the same text as llvmlite, without falling back to it."""
    expected = _llvmlite_text(module)
    monkeypatch.setattr(T, "translate_module", lambda *a, **k: pytest.fail("fell back to llvmlite"))
    assert T.module_text(module, triple=T.NVPTX_TRIPLE, data_layout="e-i64:64") == expected


@pytest.mark.parametrize("name", ["mma_f16", "mma_bf16", "mma_tf32"])
def test_sample_kernels(name, monkeypatch):
    path = EXAMPLES / f"{name}.mlir"
    module = LocatingParser(make_context(), path.read_text(), str(path)).parse_module()
    build_pipeline("tile-to-llvm").apply(make_context(), module)
    _assert_direct(module, monkeypatch)


GEMMS = [
    (MatmulSpec("float16", "float16"), CONFIGS[("mma", "small")]),
    (MatmulSpec("bfloat16", "float32", transpose_a=True, bias_dtype="float32", activation="relu", align=16),
     MatmulConfig((64, 64, 64), (2, 2), 4)),
    (MatmulSpec("float16", "float16", align=16), BULK_CONFIG),  # tensor-map parameters, mbarriers
    (MatmulSpec("float32", "float32"), CONFIGS[("tf32", "small")]),
    (MatmulSpec("float32", "float32", transpose_b=True, bias_dtype="float32", activation="relu"),
     CONFIGS[("simt", "small")]),
]


@pytest.mark.parametrize("spec, config", GEMMS, ids=lambda x: getattr(x, "kernel_name", None) or x.describe())
def test_gemm_kernels(spec, config, monkeypatch):
    module = build_module(spec)
    build_pipeline(config.pipeline()).apply(make_context(), module)
    _assert_direct(module, monkeypatch)


def _function(ops, blocks: int = 1) -> ModuleOp:
    entry = Block(arg_types=[f32, f32])
    entry.add_ops([*ops(entry.args), llvm.ReturnOp()])
    fn = llvm.FuncOp("f", llvm.LLVMFunctionType([f32, f32]), body=Region(entry))
    return ModuleOp([fn])


def test_an_op_it_does_not_write_is_left_to_llvmlite():
    module = _function(lambda a: [llvm.FCmpOp(a[0], a[1], "olt")])
    text = T.module_text(module, triple=T.NVPTX_TRIPLE)
    assert text == str(T.translate_module(module, triple=T.NVPTX_TRIPLE))
    assert "fcmp olt float" in text


def test_named_blocks_are_left_to_llvmlite():
    module = _function(lambda a: [])
    module.body.block.first_op.body.block.name_hint = "entry"
    text = T.module_text(module, triple=T.NVPTX_TRIPLE)
    assert text == str(T.translate_module(module, triple=T.NVPTX_TRIPLE)) and "entry:" in text


def test_ptx_llvm_ir_is_the_direct_text():
    module = _function(lambda a: [llvm.FAddOp(a[0], a[1]), llvm.ConstantOp(IntegerAttr(3, i32), i32)])
    assert llvm_ir(module).split("\n", 3)[3] == _llvmlite_text(module).split("\n", 3)[3]
