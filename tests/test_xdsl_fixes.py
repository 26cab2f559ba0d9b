"""tilec.xdsl_fixes.verify: xDSL's verifier, same verdicts, blocks counted once per region."""

from __future__ import annotations

import threading

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects import test as test_dialect
from xdsl.ir import Block
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from tilec import xdsl_fixes
from tilec.xdsl_fixes import counting_blocks_once, verify


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
    original = xdsl_fixes._walking_len
    monkeypatch.setattr(xdsl_fixes, "_walking_len", lambda blocks: walks.append(1) or original(blocks))
    verify(module)
    assert len(walks) == 2  # the module's region and the test.op's region, once each


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
