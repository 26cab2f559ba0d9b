"""tilec.ir.verify.verify: xDSL's verifier, same verdicts, blocks counted once per region, and
xDSL's ``RegionBlocks`` left as it is outside verifications."""

from __future__ import annotations

import threading

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects import test as test_dialect
from xdsl.ir import Block
from xdsl.ir.core import RegionBlocks
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from tilec.ir import verify as verify_module
from tilec.ir.verify import counting_blocks_once, verify


def _parse(text: str) -> ModuleOp:
    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(test_dialect.Test)
    return Parser(ctx, text).parse_module()


MULTI_BLOCK_NON_TERMINATOR = """
"test.op"() ({
^bb0:
  "test.op"() : () -> ()
^bb1:
  "test.termop"() : () -> ()
}) : () -> ()
"""

SINGLE_BLOCK_NON_TERMINATOR = """
"test.op"() ({
  "test.op"() : () -> ()
}) : () -> ()
"""

MANY_BLOCKS = (
    '"test.op"() ({\n' + "".join(f'^bb{i}:\n  "test.termop"() : () -> ()\n' for i in range(300)) + "}) : () -> ()"
)


@pytest.mark.parametrize("text", [MULTI_BLOCK_NON_TERMINATOR, SINGLE_BLOCK_NON_TERMINATOR])
def test_rejects_what_xdsl_rejects_with_the_same_message(text):
    module = _parse(text)
    with pytest.raises(VerifyException) as plain:
        module.verify()
    with pytest.raises(VerifyException) as ours:
        verify(module)
    assert str(ours.value) == str(plain.value)
    assert "is not a terminator" in str(ours.value)


def test_multi_block_region_non_terminator_is_rejected():
    with pytest.raises(VerifyException, match="terminates block in multi-block region but is not a terminator"):
        verify(_parse(MULTI_BLOCK_NON_TERMINATOR))


def test_accepts_a_region_of_many_blocks_counting_each_region_once(monkeypatch):
    module = _parse(MANY_BLOCKS)
    walks = []
    original = verify_module._walking_len
    monkeypatch.setattr(verify_module, "_walking_len", lambda blocks: walks.append(1) or original(blocks))
    verify(module)
    assert len(walks) == 2  # the module's region and the test.op's region, once each


XDSL_LEN = RegionBlocks.__len__


def test_xdsl_is_left_as_it_is_outside_verifications():
    assert XDSL_LEN is verify_module._walking_len  # what the class has between verifications
    seen = []

    class Spy(test_dialect.TestOp):
        def verify_(self) -> None:
            seen.append(RegionBlocks.__len__)

    module = _parse(MANY_BLOCKS)
    module.body.block.add_op(Spy.create())
    verify(module)
    assert seen == [verify_module._counted_len]  # in place while verifying
    assert RegionBlocks.__len__ is XDSL_LEN
    with pytest.raises(VerifyException):
        verify(_parse(MULTI_BLOCK_NON_TERMINATOR))
    assert RegionBlocks.__len__ is XDSL_LEN  # after a failure too
    with counting_blocks_once():
        with counting_blocks_once():
            pass
        assert RegionBlocks.__len__ is verify_module._counted_len  # until the outermost use leaves
    assert RegionBlocks.__len__ is XDSL_LEN


def test_xdsl_is_restored_when_the_last_of_concurrent_verifications_leaves():
    entered, release = threading.Event(), threading.Event()

    def other() -> None:
        with counting_blocks_once():
            entered.set()
            release.wait(10)

    worker = threading.Thread(target=other)
    worker.start()
    entered.wait(10)
    verify(_parse(MANY_BLOCKS))
    assert RegionBlocks.__len__ is verify_module._counted_len  # the other thread still counts
    release.set()
    worker.join()
    assert RegionBlocks.__len__ is XDSL_LEN


def test_counts_do_not_outlive_the_verification():
    terminated = MULTI_BLOCK_NON_TERMINATOR.replace('"test.op"() : () -> ()\n^bb1', '"test.termop"() : () -> ()\n^bb1')
    module = _parse(terminated)
    region = module.body.block.first_op.regions[0]
    verify(module)
    assert len(region.blocks) == 2
    region.add_block(Block([test_dialect.TestOp()]))
    assert len(region.blocks) == 3
    with counting_blocks_once():
        assert len(region.blocks) == 3
        with counting_blocks_once():  # nested: the outer counts
            assert len(region.blocks) == 3


def test_other_threads_count_by_walking():
    module = _parse(MULTI_BLOCK_NON_TERMINATOR)
    region = module.body.block.first_op.regions[0]
    seen = []
    with counting_blocks_once():
        assert len(region.blocks) == 2
        region.add_block(Block([test_dialect.TestOp()]))  # never done while verifying; here to see who counts anew
        worker = threading.Thread(target=lambda: seen.append(len(region.blocks)))
        worker.start()
        worker.join()
    assert seen == [3]
    assert len(region.blocks) == 3


# ---------------------------------------------------------------- verify_memoized

from xdsl.dialects import llvm  # noqa: E402
from xdsl.dialects.builtin import i32, i64  # noqa: E402
from xdsl.ir import Region  # noqa: E402
from xdsl.traits import NoMemoryEffect, Pure, SameOperandsAndResultType  # noqa: E402

from tilec.dialects import llvm_ext  # noqa: E402
from tilec.ir import fast  # noqa: E402
from tilec.ir.verify_lowered import LOCALLY_VERIFIED, locally_verified, verify_memoized  # noqa: E402


def _kernel(make_ops, blocks: int = 1) -> ModuleOp:
    """``llvm.func @f(i32, i32, i64)``: ``make_ops(args)`` then ``llvm.return`` (in the last of ``blocks``)."""
    entry = Block(arg_types=[i32, i32, i64])
    entry.add_ops(make_ops(entry.args))
    region = Region(entry)
    for _ in range(blocks - 1):
        region.add_block(Block())
    region.blocks.last.add_op(llvm.ReturnOp())
    return ModuleOp([llvm.FuncOp("f", llvm.LLVMFunctionType([i32, i32, i64]), body=region)])


def _same_verdict(module: ModuleOp) -> str | None:
    """Run both verifiers; they must agree (both pass, or both raise the same error); the error text."""
    try:
        verify(module)
    except (VerifyException, ValueError) as e:
        with pytest.raises(type(e)) as memo:
            verify_memoized(module)
        assert str(memo.value) == str(e)
        return str(e)
    verify_memoized(module)
    return None


def test_tilecs_own_ops_join_where_they_are_defined():
    assert {llvm_ext.ExtractElementOp, llvm_ext.AddrSpaceCastOp, llvm_ext.FPToSIOp, llvm_ext.FPToUIOp,
            llvm_ext.UIToFPOp} <= LOCALLY_VERIFIED
    assert llvm_ext.AtomicRMWOp not in LOCALLY_VERIFIED
    assert locally_verified(llvm.AddOp) is llvm.AddOp


def test_locally_verified_ops_read_nothing_but_their_signature():
    local_traits = (NoMemoryEffect, Pure, SameOperandsAndResultType)
    for op_type in LOCALLY_VERIFIED:
        definition = op_type.get_irdl_definition()
        assert not definition.regions and not definition.successors, op_type.name
        assert all(isinstance(t, local_traits) for t in definition.traits), (op_type.name, definition.traits)


def test_memoized_verifies_each_signature_once(monkeypatch):
    module = _kernel(lambda a: [fast.binary_op(llvm.AddOp, a[0], a[1]) for _ in range(50)]
                     + [fast.binary_op(llvm.AddOp, a[2], a[2]) for _ in range(50)])
    calls = []
    plain = llvm.AddOp.verify
    monkeypatch.setattr(llvm.AddOp, "verify", lambda self, *args, **kw: calls.append(1) or plain(self, *args, **kw))
    assert _same_verdict(module) is None
    calls.clear()
    verify_memoized(module)
    assert len(calls) == 2  # i32 and i64


def test_memoized_rejects_a_bad_op_after_good_ones():
    def ops(a):
        good = [fast.binary_op(llvm.AddOp, a[0], a[1]) for _ in range(3)]
        return [*good, llvm.AddOp.create(operands=(a[0], a[2]), result_types=(i32,),
                                         properties=dict(good[0].properties))]
    assert _same_verdict(_kernel(ops)) is not None


def test_memoized_checks_the_last_op_of_a_block():
    message = _same_verdict(_kernel(lambda a: [fast.binary_op(llvm.AddOp, a[0], a[1]) for _ in range(3)], blocks=2))
    assert message is not None and "is not a terminator" in message


def test_memoized_rejects_an_erased_operand_of_a_known_signature():
    def ops(a):
        first = fast.binary_op(llvm.AddOp, a[0], a[1])
        used = fast.binary_op(llvm.AddOp, a[0], a[1])
        user = fast.binary_op(llvm.AddOp, used.results[0], a[1])
        return [first, fast.binary_op(llvm.AddOp, first.results[0], a[1]), used, user]

    module = _kernel(ops)
    used = list(module.walk())[4]
    used.detach()
    used.erase(safe_erase=False)  # its user now reads an ErasedSSAValue
    message = _same_verdict(module)
    assert message is not None and "Erased SSA value" in message


def test_memoized_checks_empty_single_block_regions():
    module = ModuleOp([llvm.FuncOp("f", llvm.LLVMFunctionType([]), body=Region(Block()))])
    message = _same_verdict(module)
    assert message is not None and "empty block" in message
