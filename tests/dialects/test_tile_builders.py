"""The tile dialect from Python: builders produce IR that verifies and prints in CuTe notation."""

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f16, f32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from tilec.dialects import tile
from tilec.layout import MMA_M16N8K16_F16, Layout, Swizzle, composition


def _module(arg_types, build):
    block = Block(arg_types=arg_types)
    build(block)
    block.add_op(func.ReturnOp())
    fn = func.FuncOp("f", (arg_types, []), Region(block))
    return ModuleOp([fn])


def test_matmul_builder_adds_the_converting_epilogue():
    gl16 = tile.GlobalType(f16, [tile.DYNAMIC, tile.DYNAMIC])
    module = _module([gl16, gl16, gl16], lambda b: b.add_op(tile.MatmulOp(*b.args, transpose_b=True)))
    module.verify()
    text = str(module)
    assert "tile.matmul %0, %1 -> %2 transpose_b" in text
    assert "arith.truncf" in text and "tile.yield" in text


def test_shared_type_defaults_to_row_major_and_prints_swizzles():
    assert str(tile.SharedType([128, 32], f16)) == "!tile.st<128x32xf16, (128,32):(32,1)>"
    swizzled = composition(Swizzle(3, 3, 3), Layout((64, 64), (64, 1)))
    t = tile.SharedType([64, 64], f16, swizzled)
    assert str(t) == "!tile.st<64x64xf16, Sw<3,3,3> o 0 o (64,64):(64,1)>"
    assert t.size_bytes == 64 * 64 * 2


def test_register_fragment_must_hold_every_element():
    frag = MMA_M16N8K16_F16.c.layout
    t = tile.RegisterType([16, 8], f32, frag)
    assert t.fragment.owner((9, 3)) == (MMA_M16N8K16_F16.c.owner((9, 3)))
    with pytest.raises(VerifyException, match=r"does not hold every element of the 16x8 tile"):
        tile.RegisterType([16, 8], f32, Layout(((4, 8), (2, 2)), ((32, 1), (16, 0))))
    # a thread holding one element in two values is no fragment either
    with pytest.raises(VerifyException, match=r"gives thread 0 an element of the 16x2 tile twice"):
        tile.RegisterType([16, 2], f32, Layout(((16,), (2, 2)), ((1,), (16, 0))))


def test_fragments_may_broadcast_over_threads():
    """The SIMT A operand: the lanes of a row of the lane grid hold the same values (stride 0)."""
    t = tile.RegisterType([8, 4], f32, Layout(((4, 8), (1, 4)), ((0, 1), (0, 8))))
    assert t.fragment.owners((3, 2)) == [(4 * 3 + i, 2) for i in range(4)]
    v = tile.RegisterVectorType(16, f32, "row", Layout(((4, 8), 2), ((0, 1), 8)))
    assert v.fragment.owners((9,)) == [(4 + i, 1) for i in range(4)]


def test_mma_and_reduction_builders_infer_result_types():
    a_t, b_t, c_t = tile.RegisterType([64, 32], f16), tile.RegisterType([64, 32], f16), tile.RegisterType([64, 64], f32)

    def build(block):
        mma = tile.MmaOp(*block.args, transpose_b=True, atom=MMA_M16N8K16_F16)
        row = tile.RowMaxOp(mma.result)
        col = tile.ColSumOp(mma.result)
        block.add_ops([mma, row, col])
        assert str(row.result.type) == "!tile.rv<64xf32, row>"
        assert str(col.result.type) == "!tile.rv<64xf32, col>"
        block.add_op(tile.BroadcastOp(row.result, c_t))

    _module([a_t, b_t, c_t], build).verify()


def test_mma_builder_rejects_wrong_k_with_numbers():
    a_t, b_t, c_t = tile.RegisterType([16, 16], f16), tile.RegisterType([32, 8], f16), tile.RegisterType([16, 8], f32)
    module = _module([a_t, b_t, c_t], lambda b: b.add_op(tile.MmaOp(*b.args)))
    with pytest.raises(VerifyException, match=r"'tile.mma' K differs: a gives 16, b gives 32"):
        module.verify()


def test_launch_attribute_checks_limits():
    assert tile.LaunchAttr([tile.DYNAMIC, 4, 1], [128, 1, 1], 1024).threads == 128
    with pytest.raises(VerifyException, match="2048 threads per block"):
        tile.LaunchAttr([1, 1, 1], [2048, 1, 1])


def test_fp8_in_memory_and_registers():
    """f8E4M3FN / f8E5M2 views, shared tiles and register tiles verify (one byte an element); an 8-bit
    integer of another signedness does not."""
    from xdsl.dialects.builtin import Float8E4M3FNType, Float8E5M2Type, IntegerType, Signedness

    for f8 in (Float8E4M3FNType(), Float8E5M2Type()):
        tile.GlobalType(f8, [tile.DYNAMIC, tile.DYNAMIC]).verify()
        st = tile.SharedType((128, 128), f8)
        st.verify()
        assert st.size_bytes == 128 * 128
        tile.RegisterType((16, 16), f8).verify()
        tile.RegisterVectorType(16, f8).verify()
    with pytest.raises(VerifyException, match="tile.rt: element type must be .* in registers, got ui8"):
        tile.RegisterType((16, 16), IntegerType(8, Signedness.UNSIGNED)).verify()
