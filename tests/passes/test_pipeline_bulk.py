"""tile-pipeline{bulk=true}: K loops on bulk tensor copies and transaction barriers (sm_90 TMA).

Meaning is checked with the tile interpreter, which lands a bulk copy only
when a wait completes its barrier's phase: a read before the right wait sees
NaN, a wait on a phase nobody arrived at or a byte count the copies do not
bring is an error (on the GPU: a hang).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import scf

from tilec.dialects.tile import ops as t
from tilec.interp import run
from tilec.interp.errors import TileInterpreterError
from tilec.layout.bulk import BulkBox, box_layout, bulk_box, choose_box
from tilec.layout import parse

from tests.passes.test_pipeline import KERNEL, gemm, loop_of, rel_err, transformed

ALIGNED = KERNEL.replace(
    "func.func @gemm(%a: !tile.gl<f16, [?, ?]>, %b: !tile.gl<f16, [?, ?]>,",
    "func.func @gemm(%a: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64}, "
    "%b: !tile.gl<f16, [?, ?]> {tile.aligned_rows = 16 : i64},",
)
# Rows of A (K) and B (N) a whole number of 16-byte vectors, as tile.aligned_rows promises.
SHAPES = [(64, 64, 32), (100, 72, 48), (17, 40, 200), (64, 64, 8), (20, 32, 0)]
SPECS = ["tile-pipeline{stages=2 bulk=true}", "tile-pipeline{stages=3 bulk=true}", "tile-pipeline{stages=4 bulk=true}",
         "tile-pipeline{stages=3 bulk=true reg-double-buffer=false}", "tile-swizzle,tile-pipeline{stages=3 bulk=true}",
         "tile-pipeline{stages=3 bulk=true release=false}", "tile-pipeline{stages=2 bulk=true release=false reg-double-buffer=false}"]


def bulk(spec: str):
    return transformed(spec, ALIGNED)


def ops_of(module, kind):
    return [o for o in module.walk() if isinstance(o, kind)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("spec", SPECS)
def test_meaning_preserved(spec, shape):
    module = bulk(spec)
    assert ops_of(module, t.BulkCopyOp) and not ops_of(module, t.AsyncCopyOp)
    c, ref = gemm(module, *shape)
    assert not np.isnan(c).any(), "NaN in the output: a stage was read before its phase completed"
    assert rel_err(c, ref) < 2e-3


@pytest.mark.parametrize("options", [{"async_mode": "eager"}, {"warp_order": "descending"}])
def test_other_schedules(options):
    c, ref = gemm(bulk("tile-pipeline{stages=3 bulk=true}"), 100, 72, 48, **options)
    assert not np.isnan(c).any() and rel_err(c, ref) < 2e-3


def test_structure():
    module = bulk("tile-pipeline{stages=3 bulk=true}")
    full, empty = ops_of(module, t.MbarInitOp)
    assert full.result.type.count.data == 3 and not full.result.type.per_warp
    assert empty.result.type.count.data == 3 and empty.result.type.per_warp
    # A 64x32 f16 tile: 64-byte rows, the 64-byte swizzle; B 32x64: 128-byte rows, the 128-byte one.
    layouts = sorted(str(o.result.type.layout) for o in ops_of(module, t.AllocOp))
    assert layouts == ["Sw<2,3,3> o 0 o (3,64,32):(2048,32,1)", "Sw<3,3,3> o 0 o (3,32,64):(2048,64,1)"]
    expects = ops_of(module, t.MbarExpectOp)
    assert {e.bytes.value.data for e in expects} == {64 * 32 * 2 + 32 * 64 * 2}
    loop = loop_of(module)
    body = list(loop.body.block.ops)
    # no block barrier in the loop: the warps release stages on the empty barriers
    assert not [o for o in loop.walk() if isinstance(o, t.BarrierOp)]
    (arrive,) = [o for o in body if isinstance(o, t.MbarArriveOp)]
    assert arrive.barriers is empty.result and arrive.index.name_hint == "rs"
    # ... right after the last read of the stage (the second step's loads, hoisted to the top)
    assert isinstance(body[body.index(arrive) - 1], t.LoadOp)
    later = body[body.index(arrive):]
    assert not any(isinstance(o, t.LoadOp) and o.source.owner.index is arrive.index for o in later)
    # the loop's copies are guarded: the issuer first waits for the stage's release, then announces the bytes
    issue = [o for o in loop.walk() if isinstance(o, t.BulkCopyOp)]
    assert issue and all(o.parent_op() is not loop for o in issue)
    guard = list(issue[0].parent_block().ops)
    assert isinstance(guard[0], t.MbarWaitOp) and guard[0].issuer is not None and guard[0].barriers is empty.result
    assert isinstance(guard[1], t.MbarExpectOp)
    # the wait for the next tile (carried fragments) runs only if there is a next tile
    (wait,) = [o for o in loop.walk() if isinstance(o, t.MbarWaitOp) and o.issuer is None]
    assert isinstance(wait.parent_op(), scf.IfOp) and wait.barriers is full.result
    assert not ops_of(module, t.AsyncWaitOp) and not ops_of(module, t.AsyncCommitOp)


def test_structure_with_a_block_barrier():
    module = bulk("tile-pipeline{stages=3 bulk=true release=false}")
    (init,) = ops_of(module, t.MbarInitOp)
    assert init.result.type.count.data == 3
    loop = loop_of(module)
    body = list(loop.body.block.ops)
    # the wait for the next tile (carried fragments) runs only if there is a next tile, then the barrier
    (wait,) = [o for o in loop.walk() if isinstance(o, t.MbarWaitOp)]
    guard = wait.parent_op()
    assert isinstance(guard, scf.IfOp) and isinstance(body[body.index(guard) + 1], t.BarrierOp)
    assert not ops_of(module, t.MbarArriveOp)


def test_unaligned_views_keep_cp_async():
    module = transformed("tile-pipeline{stages=3 bulk=true}")  # no tile.aligned_rows: no tensor map
    assert ops_of(module, t.AsyncCopyOp) and not ops_of(module, t.BulkCopyOp)


def _replace(op, new):
    op.parent_block().insert_op_before(new, op)
    for old, nv in zip(op.results, new.results):
        old.replace_all_uses_with(nv)
    op.detach()
    op.erase()


def test_wrong_parity_is_an_error():
    module = bulk("tile-pipeline{stages=3 bulk=true reg-double-buffer=false}")
    (wait,) = [o for o in loop_of(module).body.block.ops if isinstance(o, t.MbarWaitOp)]
    _replace(wait, t.MbarWaitOp(wait.barriers, wait.index, loop_of(module).body.block.args[0]))  # k: not a parity
    with pytest.raises(TileInterpreterError, match="parity"):
        gemm(module, 64, 64, 200)


def test_wrong_byte_count_is_an_error():
    module = bulk("tile-pipeline{stages=3 bulk=true}")
    for e in ops_of(module, t.MbarExpectOp):
        _replace(e, t.MbarExpectOp(e.barriers, e.index, e.bytes.value.data - 2))
    with pytest.raises(TileInterpreterError, match="never ends"):
        gemm(module, 64, 64, 200)


def test_waiting_on_the_write_stage_gives_nan_or_an_error():
    module = bulk("tile-pipeline{stages=3 bulk=true reg-double-buffer=false}")
    loop = loop_of(module)
    (wait,) = [o for o in loop.body.block.ops if isinstance(o, t.MbarWaitOp)]
    ws = loop.body.block.args[-1]
    _replace(wait, t.MbarWaitOp(wait.barriers, ws, wait.parity))
    try:
        c, _ = gemm(module, 64, 64, 200)
    except TileInterpreterError:
        return
    assert np.isnan(c).any()


def _issuer_wait(module):
    (wait,) = [o for o in loop_of(module).walk() if isinstance(o, t.MbarWaitOp) and o.issuer is not None]
    return wait


def test_refilling_a_stage_before_its_release_is_wrong():
    """Without the issuer's wait on the empty barrier, a copy overwrites a stage slow warps still read."""
    module = bulk("tile-pipeline{stages=3 bulk=true reg-double-buffer=false}")
    wait = _issuer_wait(module)
    wait.detach()
    wait.erase()
    try:
        c, ref = gemm(module, 64, 64, 200)
    except TileInterpreterError:
        return
    assert np.isnan(c).any() or rel_err(c, ref) > 1e-2


def test_a_missing_release_is_a_hang():
    module = bulk("tile-pipeline{stages=3 bulk=true}")
    (arrive,) = ops_of(module, t.MbarArriveOp)
    arrive.detach()
    arrive.erase()
    with pytest.raises(TileInterpreterError, match="never ends"):
        gemm(module, 64, 64, 200)


def test_first_write_parity_must_pass_on_a_fresh_barrier():
    """The first refill of stage N-1 waits with parity 1, which a fresh barrier passes; parity 0
    would wait for the stage's first release, which needs that very refill: a hang."""
    module = bulk("tile-pipeline{stages=3 bulk=true reg-double-buffer=false}")
    loop = loop_of(module)
    args = loop.body.block.args
    at = [a.name_hint for a in args].index("wph") - 1  # iter_args start after the induction variable
    assert _int(loop.iter_args[at]) == 1
    zero = loop.iter_args[at + 1]  # %ph's initial 0
    loop.operands = [*loop.operands[: 3 + at], zero, *loop.operands[4 + at:]]
    with pytest.raises(TileInterpreterError, match="never ends"):
        gemm(module, 64, 64, 200)


def _int(v):
    return v.owner.value.value.data


def test_removing_the_loop_wait_gives_nan():
    module = bulk("tile-pipeline{stages=3 bulk=true reg-double-buffer=false}")
    (wait,) = [o for o in loop_of(module).body.block.ops if isinstance(o, t.MbarWaitOp)]
    wait.detach()
    wait.erase()
    c, _ = gemm(module, 100, 72, 48)
    assert np.isnan(c).any()


# -- the layout a tensor map writes ------------------------------------------------------


def test_box_layouts():
    b = choose_box((64, 256), 2)
    assert b == BulkBox(64, 64, 2, 128) and b.alignment() == 1024
    assert str(box_layout(b, 256)) == "Sw<3,3,3> o 0 o (64,(64,4)):(64,(1,4096))"
    assert choose_box((128, 64), 2) == BulkBox(128, 64, 2, 128)
    assert choose_box((64, 32), 2) == BulkBox(64, 32, 2, 64)
    assert choose_box((64, 32), 4) == BulkBox(64, 32, 4, 128)
    assert choose_box((300, 64), 2) is None
    assert str(BulkBox(8, 32, 4, 128).swizzle_function()) == "Sw<3,2,3>"


def test_box_layout_is_the_tensor_maps_swizzle():
    """Byte address of element (r, c) of a 128-byte-swizzled box: chunk (c*e/16) XOR (r mod 8), as the PTX ISA says."""
    box = BulkBox(16, 64, 2, 128)
    layout = box_layout(box, 128)
    for r in range(16):
        for c in range(128):
            blk, cc = divmod(c, 64)
            byte = blk * box.nbytes + r * 128 + ((cc * 2 // 16) ^ (r % 8)) * 16 + (cc * 2) % 16
            assert layout((r, c)) * 2 == byte


def test_bulk_box_recognises_only_tensor_map_layouts():
    assert bulk_box(parse("Sw<3,3,3> o 0 o (128,64):(64,1)"), (128, 64), 2) == BulkBox(128, 64, 2, 128)
    assert bulk_box(parse("Sw<3,3,5> o 0 o (64,256):(256,1)"), (64, 256), 2) is None
    assert bulk_box(parse("(16,8):(8,1)"), (16, 8), 2) == BulkBox(16, 8, 2, 0)


BAD_BULK = """
func.func @k(%a: !tile.gl<f16, [?, ?]>) {
  %c0 = arith.constant 0 : index
  %bars = tile.mbar_init : !tile.mbar<1>
  %s = tile.alloc : !tile.st<64x32xf16, (64,32):(1,64)>
  tile.bulk_copy %a[%c0, %c0] -> %s, %bars[%c0] : !tile.gl<f16, [?, ?]> -> !tile.st<64x32xf16, (64,32):(1,64)>, !tile.mbar<1>
  func.return
}
"""


def test_bulk_copy_verifier_names_the_layout():
    from xdsl.utils.exceptions import VerifyException

    from tilec.interp import parse_module

    module = parse_module(BAD_BULK.replace("(64,32):(1,64)", "(64,32):(32,1)"))
    module.verify()  # 64-byte rows, unswizzled: a tensor map writes that (swizzle none)
    with pytest.raises(VerifyException, match=r"a tensor map cannot write the layout \(64,32\):\(1,64\)"):
        parse_module(BAD_BULK).verify()


def test_more_stages_than_wait_groups_hold():
    """Bulk copies complete on transaction barriers, so their loops take up to 16 stages (cp.async's
    wait groups hold 9): twelve stages over a K loop of seven tiles (the ring not yet full) and of
    fifteen (wrapping). The same option on views without a tensor map falls back to cp.async with 9."""
    module = bulk("tile-pipeline{stages=12 bulk=true}")
    buffers = [op.result.type for op in ops_of(module, t.AllocOp) if len(op.result.type.dims) == 3]
    assert buffers and {ty.dims[0] for ty in buffers} == {12}
    for shape in ((17, 40, 200), (64, 72, 480)):
        c, ref = gemm(module, *shape)
        assert not np.isnan(c).any() and rel_err(c, ref) < 2e-3
    fallback = transformed("tile-pipeline{stages=12 bulk=true}")  # no tile.aligned_rows: no tensor map
    assert ops_of(fallback, t.AsyncCopyOp) and max(w.pending.value.data for w in ops_of(fallback, t.AsyncWaitOp)) == 7
    c, ref = gemm(fallback, 100, 70, 45)
    assert rel_err(c, ref) < 2e-3


def test_loops_sharing_tiles_agree_on_their_stages(monkeypatch):
    """Loops linked by shared tiles (directly or through others) take one stage count: the largest
    asked, within the smallest limit among them. A chain cp.async - bulk - bulk, where the first and
    last share nothing, settles at 9 for all three (pairwise agreement would cycle forever)."""
    from types import SimpleNamespace

    import tilec.passes.tile_pipeline as tp

    monkeypatch.setattr(tp, "bulk_boxes", lambda plan: [] if plan.bulk else None)
    monkeypatch.setattr(tp, "element_copies_only", lambda plan: plan.elements)

    def plan(allocs: str, bulk: bool = True, elements: bool = False):
        return SimpleNamespace(allocs=list(allocs), bulk=bulk, elements=elements)

    chain = [plan("x", bulk=False), plan("xy"), plan("y")]
    assert tp._shared_stages(chain, 12, bulk=True) == [9, 9, 9]
    assert tp._shared_stages(chain[::-1], 12, bulk=True) == [9, 9, 9]
    apart = [plan("x", bulk=False), plan("y"), plan("yz"), plan("w", elements=True, bulk=False)]
    assert tp._shared_stages(apart, 12, bulk=True) == [9, 12, 12, 2]
    assert tp._shared_stages(apart, 12, bulk=False) == [9, 9, 9, 2]
    # an element-copy loop sharing a tile with a cp.async one takes its count (one buffer)
    assert tp._shared_stages([plan("x", elements=True, bulk=False), plan("x", bulk=False)], 4) == [4, 4]
