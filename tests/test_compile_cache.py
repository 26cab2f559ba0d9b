"""tilec.compile's on-disk compile cache (tilec.compile_cache), its faults, and when it verifies the IR.

No GPU and no ptxas needed: nothing here builds a cubin.
"""

from __future__ import annotations

import errno
import gc
import json
import os
import stat
from pathlib import Path

import pytest

import tilec
from tilec import api, compile_cache
from tilec.api import CompilationError
from tilec.compile_cache import compile_key
from tilec.ir.gc import GC_THRESHOLD, fewer_gc_pauses
from tilec.kernels.gemm import MatmulSpec, build_module
from tilec.kernels.gemm_config import MatmulConfig
from tilec.passes import registry
from tilec.runtime import CubinCache
from tilec.runtime import cache as runtime_cache
from tilec.runtime.cache import CacheWarning

REPO = Path(__file__).resolve().parents[1]
F16 = REPO / "examples" / "kernels" / "mma_f16.mlir"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache folder per test (never ~/.cache/tilec), the compile cache on, counters at 0."""
    d = tmp_path / "tilec-cache"
    monkeypatch.setenv("TILEC_CACHE_DIR", str(d))
    monkeypatch.delenv(compile_cache.ENV, raising=False)
    monkeypatch.setattr(runtime_cache, "_warned", set())  # each test sees its own once-per-process warnings
    compile_cache.reset_stats()
    return d


def entries(cache_dir: Path) -> list[Path]:
    return sorted((cache_dir / "kernels").rglob("*.json"))


def body(path: Path) -> dict:
    """The JSON of a stored entry (what follows its sha256 line)."""
    return json.loads(compile_cache.unseal(path.read_bytes()))


def counts() -> tuple[int, int, int]:
    s = compile_cache.stats()
    return s.hits, s.misses, s.compiles


def same_kernel(a: api.CompiledKernel, b: api.CompiledKernel) -> None:
    assert a.asm == b.asm
    assert (a.name, a.arch, a.pipeline) == (b.name, b.arch, b.pipeline)
    assert a.signature == b.signature
    assert a.gl_params == b.gl_params
    assert a.launch_defaults == b.launch_defaults


def _fail(*args, **kwargs):
    raise AssertionError("a cache hit must not compile")


def test_hit_returns_the_same_kernel_without_compiling(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = tilec.compile(F16, arch="sm_80")
    assert counts() == (0, 1, 1) and len(entries(cache_dir)) == 1
    monkeypatch.setattr(api, "_run_pipeline", _fail)
    monkeypatch.setattr(api, "compile_module", _fail)
    again = tilec.compile(F16, arch="sm_80")
    assert counts() == (1, 1, 1)
    same_kernel(first, again)
    # IR text, a path to it and the parsed module are one source
    assert tilec.compile(F16.read_text(), arch="sm_80").asm["ptx"] == first.asm["ptx"]
    assert counts()[0] == 2


def test_matmul_kernel_round_trips(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gl parameters, a dynamic grid and a ModuleOp source (keyed by its printed text)."""
    module = build_module(MatmulSpec("float32", "float32", bias_dtype="float32", activation="relu"))
    pipeline = MatmulConfig((64, 64, 8), stages=2, thread_tile=(4, 4))
    first = tilec.compile(module, pipeline=pipeline, arch="sm_80")
    assert first.gl_params and first.launch_defaults.grid[0] is None
    monkeypatch.setattr(api, "_run_pipeline", _fail)
    again = tilec.compile(module, pipeline=pipeline, arch="sm_80")
    same_kernel(first, again)
    assert tilec.compile(str(module), pipeline=pipeline, arch="sm_80").asm["ptx"] == first.asm["ptx"]
    assert counts() == (2, 1, 1)


def test_cache_false_bypasses_it(cache_dir: Path) -> None:
    a = tilec.compile(F16, arch="sm_80", cache=False)
    b = tilec.compile(F16, arch="sm_80", cache=False)
    assert a.asm["ptx"] == b.asm["ptx"]
    assert counts() == (0, 0, 0) and not entries(cache_dir)


def test_environment_turns_it_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compile_cache.ENV, "0")
    tilec.compile(F16, arch="sm_80")
    tilec.compile(F16, arch="sm_80")
    assert counts() == (0, 0, 0) and not entries(cache_dir)


def test_a_cubin_cache_object_brings_its_folder(tmp_path: Path, cache_dir: Path) -> None:
    other = tmp_path / "other"
    tilec.compile(F16, arch="sm_80", cache=CubinCache(other))
    assert not entries(cache_dir) and len(entries(other)) == 1
    tilec.compile(F16, arch="sm_80", cache=str(other))
    assert counts() == (1, 1, 1)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "a cubin", "ptx edited", "no sha256 line",
                                    "other key", "other format"])
def test_a_damaged_entry_is_compiled_again(cache_dir: Path, damage: str) -> None:
    """The checksum catches any change (an edited PTX text too, which ptxas would reject at every run);
    resealed, the key and format inside do. A warning, a miss, the entry rewritten whole."""
    first = tilec.compile(F16, arch="sm_80")
    (path,) = entries(cache_dir)
    data = path.read_bytes()
    text = data.partition(b"\n")[2]
    entry = json.loads(text)
    if damage == "garbage":
        path.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    elif damage == "a cubin":
        path.write_bytes(b"\x7fELF" + bytes(range(256)))
    elif damage == "ptx edited":  # valid JSON, the old sha256 line
        assert data.count(b".entry ") == 1
        path.write_bytes(data.replace(b".entry ", b".entry_broken ", 1))
    elif damage == "no sha256 line":  # an entry of format 2 was bare JSON
        path.write_bytes(text)
    else:
        if damage == "other key":
            entry["key"] = "0" * 64
        else:
            entry["format"] = -1
        path.write_bytes(compile_cache.seal(json.dumps(entry).encode()))
    with pytest.warns(CacheWarning, match="is damaged or not an entry of this tilec"):
        again = tilec.compile(F16, arch="sm_80")
    same_kernel(first, again)
    assert counts() == (0, 2, 2)
    assert body(path)["ptx"] == first.asm["ptx"]  # rewritten whole
    tilec.compile(F16, arch="sm_80")
    assert counts() == (1, 2, 2)


def test_every_input_is_in_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"source": "module {}", "pipeline": "tile-to-llvm", "arch": "sm_80", "opt_level": 3, "kernel": None}
    key = compile_key(**base)
    assert compile_key(**base) == key
    for change in [{"source": "module { }"}, {"pipeline": "tile-to-llvm,cse"}, {"arch": "sm_90"},
                   {"opt_level": 2}, {"kernel": "k"}]:
        assert compile_key(**{**base, **change}) != key, change
    monkeypatch.setattr(compile_cache, "compiler_fingerprint", lambda: "another tilec")
    assert compile_key(**base) != key


def test_one_pipeline_given_as_text_or_as_objects_is_one_entry(cache_dir: Path) -> None:
    """Text, the pass object, a MatmulConfig with the same options, and a list of passes: one key."""
    from tilec.passes.tile_to_ptx import TileToPTX

    module = build_module(MatmulSpec("float16", "float16"))
    config = MatmulConfig((64, 64, 32), (2, 2), 4)
    first = tilec.compile(module, pipeline=config, arch="sm_80")
    assert first.pipeline == ("tile-to-ptx{block=64,64,32 warps=2,2 stages=4 group=8 tf32=false thread_tile "
                              "bulk=false release=true wgmma=false producer=false persistent=false bulk_store=false cluster=1 "
                              "in_flight=true} "
                              "opt_level=3")
    for same in (str(config), "tile-to-ptx{block=64,64,32 warps=2,2 stages=4 group=8}",
                 TileToPTX(block=(64, 64, 32), warps=(2, 2), stages=4), [config]):
        again = tilec.compile(module, pipeline=same, arch="sm_80")
        same_kernel(first, again)
    assert counts() == (4, 1, 1) and len(entries(cache_dir)) == 1
    # the inner passes, spelled out, are another pipeline (another entry), but the same PTX
    inner = tilec.compile(module, pipeline=list(config.passes()), arch="sm_80")
    assert inner.asm["ptx"] == first.asm["ptx"] and counts() == (4, 2, 2)
    assert tilec.compile(module, pipeline=config.pipeline(), arch="sm_80").asm["ptx"] == first.asm["ptx"]


def test_a_config_compiles_to_the_ptx_of_its_text() -> None:
    """A config's passes are made from its values; its printed text gives byte-identical PTX."""
    module = build_module(MatmulSpec("bfloat16", "float32", transpose_b=True, bias_dtype="float32",
                                     activation="relu", align=(8, 16, 16, 16)))
    config = MatmulConfig((64, 64, 64), (2, 2), 4)
    by_object = tilec.compile(module, pipeline=config, arch="sm_80", cache=False)
    by_text = tilec.compile(module, pipeline=config.pipeline(), arch="sm_80", cache=False)
    assert by_object.asm["ptx"] == by_text.asm["ptx"]


def test_a_pipeline_of_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="pipeline must be -p text, a pass object or a sequence of them; got int"):
        tilec.compile(F16, arch="sm_80", pipeline=[3])


def test_different_pipelines_are_different_entries(cache_dir: Path) -> None:
    a = tilec.compile(F16, arch="sm_80")
    b = tilec.compile(F16, arch="sm_80", pipeline="tile-to-llvm,canonicalize")
    c = tilec.compile(F16, arch="sm_80", opt_level=2)
    assert counts() == (0, 3, 3) and len(entries(cache_dir)) == 3
    assert b.pipeline != a.pipeline and c.pipeline != a.pipeline


def test_fingerprint_covers_the_sources() -> None:
    fp = compile_cache.compiler_fingerprint()
    assert len(fp) == 64 and compile_cache.compiler_fingerprint() is fp  # once per process


# ---------------------------------------------------------------- faults and trust


def the_entry(cache_dir: Path) -> Path:
    """Where the entry of F16 for sm_80 lives (compiled once, then removed)."""
    tilec.compile(F16, arch="sm_80")
    (path,) = entries(cache_dir)
    path.unlink()
    compile_cache.reset_stats()
    return path


def test_entries_are_private(cache_dir: Path) -> None:
    """Files 0600 and every folder made 0700, whatever the umask."""
    old = os.umask(0)
    try:
        tilec.compile(F16, arch="sm_80")
    finally:
        os.umask(old)
    (path,) = entries(cache_dir)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (path.parent, path.parent.parent, cache_dir):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_a_folder_where_the_entry_belongs_is_replaced(cache_dir: Path) -> None:
    path = the_entry(cache_dir)
    path.mkdir()
    with pytest.warns(CacheWarning, match="not a regular file"):
        first = tilec.compile(F16, arch="sm_80")
    assert path.is_file() and counts() == (0, 1, 1)
    same_kernel(first, tilec.compile(F16, arch="sm_80"))
    assert counts() == (1, 1, 1)


def test_a_full_folder_where_the_entry_belongs_only_stops_caching(cache_dir: Path) -> None:
    path = the_entry(cache_dir)
    (path / "something").mkdir(parents=True)
    with pytest.warns(CacheWarning) as seen:
        tilec.compile(F16, arch="sm_80")
        tilec.compile(F16, arch="sm_80")
    assert counts() == (0, 2, 0) and (path / "something").is_dir()
    messages = [str(w.message) for w in seen]  # each told once
    assert len(messages) == 2 and "not a regular file" in messages[0] and "cannot replace the folder" in messages[1]


@pytest.mark.parametrize("how", ["chmod", "read-only file system"])
def test_an_unwritable_cache_compiles_without_caching(cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                      how: str) -> None:
    if how == "chmod":
        if os.geteuid() == 0:
            pytest.skip("running as root, which writes into a 0500 folder anyway; the read-only file system case covers the same path")
        cache_dir.mkdir(mode=0o500)
    else:
        def read_only(path, data, **kwargs):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

        monkeypatch.setattr(runtime_cache, "atomic_write", read_only)
    with pytest.warns(CacheWarning, match="cannot write to .*: compiling without caching") as seen:
        for opt_level in (3, 2, 3):
            tilec.compile(F16, arch="sm_80", opt_level=opt_level)
    assert len(seen) == 1, "one warning per process"
    assert counts() == (0, 3, 0) and not entries(cache_dir)


def another_owner(monkeypatch: pytest.MonkeyPatch, kind: int) -> None:
    """Files (``stat.S_IFREG``) or folders (``stat.S_IFDIR``) of the cache look owned by uid 4242."""
    real = runtime_cache.owner_uid
    monkeypatch.setattr(runtime_cache, "owner_uid",
                        lambda st: 4242 if stat.S_IFMT(st.st_mode) == kind else real(st))


def test_an_entry_of_another_user_is_not_loaded(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tilec.compile(F16, arch="sm_80")
    another_owner(monkeypatch, stat.S_IFREG)
    monkeypatch.setattr(compile_cache, "decode", _fail)
    with pytest.warns(CacheWarning, match="is owned by uid 4242"):
        tilec.compile(F16, arch="sm_80")
    assert counts() == (0, 2, 2)  # compiled again, and replaced by one of ours


@pytest.mark.parametrize("folder", ["cache", "kernels", "kernels/<key[:2]>"])
@pytest.mark.parametrize("why", ["writable by others", "another owner"])
def test_an_untrusted_folder_is_not_used(cache_dir: Path, monkeypatch: pytest.MonkeyPatch, folder: str,
                                         why: str) -> None:
    first = tilec.compile(F16, arch="sm_80")
    (path,) = entries(cache_dir)
    target = {"cache": cache_dir, "kernels": cache_dir / "kernels", "kernels/<key[:2]>": path.parent}[folder]
    before = path.read_bytes()
    if why == "writable by others":
        target.chmod(0o777)
    else:
        real = runtime_cache.owner_uid
        monkeypatch.setattr(runtime_cache, "owner_uid", lambda st: 4242 if os.path.samestat(st, target.stat())
                            else real(st))
    monkeypatch.setattr(compile_cache, "decode", _fail)
    with pytest.warns(CacheWarning, match=f"not using {target}: "):
        again = tilec.compile(F16, arch="sm_80")
        tilec.compile(F16, arch="sm_80")
    same_kernel(first, again)
    assert counts() == (0, 3, 1) and path.read_bytes() == before  # neither read nor written


def test_a_sticky_folder_others_can_write_is_trusted(cache_dir: Path) -> None:
    tilec.compile(F16, arch="sm_80")
    (cache_dir / "kernels").chmod(0o1777)
    tilec.compile(F16, arch="sm_80")
    assert counts() == (1, 1, 1)


def test_an_entry_others_can_write_is_not_loaded(cache_dir: Path) -> None:
    tilec.compile(F16, arch="sm_80")
    (path,) = entries(cache_dir)
    path.chmod(0o666)
    with pytest.warns(CacheWarning, match="other users can write to it"):
        tilec.compile(F16, arch="sm_80")
    assert counts() == (0, 2, 2) and stat.S_IMODE(path.stat().st_mode) == 0o600  # replaced
    tilec.compile(F16, arch="sm_80")
    assert counts() == (1, 2, 2)


# ---------------------------------------------------------------- verification


BREAK_PASS = '''
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class BreakLLVM(ModulePass):
    """Leaves invalid IR: an llvm.return first in every llvm.func."""

    name = "test-break-llvm"

    def apply(self, ctx, op):
        for fn in [o for o in op.walk() if isinstance(o, llvm.FuncOp)]:
            block = fn.body.blocks.first
            block.insert_op_before(llvm.ReturnOp(), block.first_op)
'''


@pytest.fixture
def break_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tilec_test_break_llvm.py").write_text(BREAK_PASS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.PASSES, "test-break-llvm", "tilec_test_break_llvm:BreakLLVM")


@pytest.mark.parametrize("each", ["0", "1"])
def test_broken_output_is_a_pipeline_error(break_pass: None, monkeypatch: pytest.MonkeyPatch, each: str) -> None:
    monkeypatch.setenv(registry.VERIFY_EACH_ENV, each)
    pipeline = "tile-to-llvm,test-break-llvm,canonicalize"
    with pytest.raises(CompilationError) as info:
        tilec.compile(F16, arch="sm_80", pipeline=pipeline, cache=False)
    assert info.value.stage == "pipeline"
    message = str(info.value)
    assert "'llvm.return' must be the last operation in its parent block" in message
    if each == "1":
        assert "the IR produced by pass 'test-break-llvm' does not verify" in message
    else:
        assert f"the IR produced by pipeline '{pipeline}' does not verify" in message
        assert "TILEC_VERIFY_EACH=1" in message


def test_verifying_once_or_after_each_pass_gives_the_same_ptx(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = []
    for each in ("0", "1"):
        monkeypatch.setenv(registry.VERIFY_EACH_ENV, each)
        texts.append(tilec.compile(F16, arch="sm_80", cache=False).asm["ptx"])
    assert texts[0] == texts[1]


def test_pipeline_passes_verify_inner_passes_unless_told() -> None:
    assert registry.verifies_inner_passes()  # tile-opt's default
    with registry.verifying_inner_passes(False):
        assert not registry.verifies_inner_passes()
    assert registry.verifies_inner_passes()


def test_the_gc_thresholds_come_back(break_pass: None) -> None:
    before = gc.get_threshold()
    tilec.compile(F16, arch="sm_80", cache=False)
    assert gc.get_threshold() == before
    with pytest.raises(CompilationError):
        tilec.compile(F16, arch="sm_80", pipeline="tile-to-llvm,test-break-llvm", cache=False)
    assert gc.get_threshold() == before
    with fewer_gc_pauses():
        assert gc.get_threshold()[0] == GC_THRESHOLD
        with fewer_gc_pauses():
            assert gc.get_threshold()[0] == GC_THRESHOLD
        assert gc.get_threshold()[0] == GC_THRESHOLD
    assert gc.get_threshold() == before


def test_sources_fingerprint_sees_an_edit(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__pycache__").mkdir()
    source = tmp_path / "pkg" / "m.py"
    source.write_text("x = 1\n")
    before = compile_cache.sources_fingerprint(tmp_path)
    (tmp_path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"ignored")
    (tmp_path / "notes.txt").write_text("not a source")
    assert compile_cache.sources_fingerprint(tmp_path) == before
    os.utime(source, ns=(0, source.stat().st_mtime_ns + 1))  # same size, another time
    assert compile_cache.sources_fingerprint(tmp_path) != before
    touched = compile_cache.sources_fingerprint(tmp_path)
    source.write_text("x = 10\n")  # another size
    assert compile_cache.sources_fingerprint(tmp_path) != touched
    (tmp_path / "pkg" / "n.py").write_text("")
    assert compile_cache.sources_fingerprint(tmp_path) not in (before, touched)
