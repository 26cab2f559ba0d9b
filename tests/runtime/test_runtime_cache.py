"""The on-disk cubin cache: keys, hits and misses, atomic concurrent writes."""

from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import pytest

from tilec.runtime import CubinCache, cache_key, default_cache, tool_versions
from tilec.runtime.cache import default_directory

FAKE_CUBIN = b"\x7fELF" + bytes(range(256)) * 4

BASE = dict(ir="tile.func @k() {}", pipeline="tile-tiling{block=128,128,32},tile-to-llvm", arch="sm_90",
            compiler="driver-jit/13000")


def test_key_is_stable_sha256():
    k1 = cache_key(**BASE)
    k2 = cache_key(**BASE)
    assert k1 == k2 and len(k1) == 64 and int(k1, 16) >= 0


@pytest.mark.parametrize(
    "change",
    [
        {"ir": "tile.func @k2() {}"},
        {"pipeline": "tile-tiling{block=64,64,32},tile-to-llvm"},
        {"arch": "sm_80"},
        {"compiler": "driver-jit/12040"},
        {"compiler": "ptxas/13.5.37"},
        {"extra": {"opt_level": 2}},
    ],
)
def test_any_key_change_is_a_different_key(change):
    assert cache_key(**{**BASE, **change}) != cache_key(**BASE)


@pytest.mark.parametrize("package", ["tilec", "xdsl", "llvmlite"])
def test_version_change_is_a_different_key(package):
    versions = tool_versions()
    bumped = {**versions, package: versions[package] + ".post1"}
    assert cache_key(**BASE, versions=bumped) != cache_key(**BASE, versions=versions)
    assert cache_key(**BASE) == cache_key(**BASE, versions=versions)


def test_hit_and_miss_counters(tmp_path):
    cache = CubinCache(tmp_path)
    key = cache_key(**BASE)
    builds = []

    def build():
        builds.append(1)
        return FAKE_CUBIN

    assert cache.get_or_build(key, build) == FAKE_CUBIN
    assert cache.stats.as_dict() == {"hits": 0, "misses": 1, "compiles": 1}
    assert cache.get_or_build(key, build) == FAKE_CUBIN
    assert cache.stats.as_dict() == {"hits": 1, "misses": 1, "compiles": 1}
    assert len(builds) == 1
    # a changed key misses and compiles again
    other = cache_key(**{**BASE, "arch": "sm_80"})
    cache.get_or_build(other, build)
    assert cache.stats.as_dict() == {"hits": 1, "misses": 2, "compiles": 2}
    # a second cache object on the same folder (another process, in effect) hits
    again = CubinCache(tmp_path)
    assert again.load(key) == FAKE_CUBIN and again.stats.hits == 1


def test_file_layout_and_no_temp_leftovers(tmp_path):
    cache = CubinCache(tmp_path)
    key = cache_key(**BASE)
    path = cache.store(key, FAKE_CUBIN)
    assert path == tmp_path / key[:2] / f"{key}.cubin"
    assert path.read_bytes() == FAKE_CUBIN
    assert sorted(p.name for p in path.parent.iterdir()) == [f"{key}.cubin"]


def test_damaged_file_is_a_miss_and_is_removed(tmp_path):
    cache = CubinCache(tmp_path)
    key = cache_key(**BASE)
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage")
    assert cache.load(key) is None
    assert not path.exists()
    assert cache.stats.misses == 1


def test_bad_keys_are_refused(tmp_path):
    with pytest.raises(ValueError):
        CubinCache(tmp_path).path_for("../../etc/passwd")


def test_env_var_location(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "here"))
    assert default_directory() == tmp_path / "here"
    cache = CubinCache()
    key = cache_key(**BASE)
    assert cache.store(key, FAKE_CUBIN).is_relative_to(tmp_path / "here")
    assert default_cache().directory == tmp_path / "here"
    monkeypatch.delenv("TILEC_CACHE_DIR")
    assert default_directory() == Path.home() / ".cache" / "tilec"


def test_unwritable_cache_still_returns_the_build(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = CubinCache(blocker)
    assert cache.get_or_build(cache_key(**BASE), lambda: FAKE_CUBIN) == FAKE_CUBIN
    assert cache.stats.compiles == 1


def test_clear(tmp_path):
    cache = CubinCache(tmp_path)
    key = cache_key(**BASE)
    cache.store(key, FAKE_CUBIN)
    cache.clear()
    assert cache.load(key) is None


# ------------------------------------------------- concurrent writers


def _payload(writer: int) -> bytes:
    # Large enough (512 KiB) that a non-atomic write could be seen half-done.
    return b"\x7fELF" + bytes([writer]) * (512 << 10)


def _writer(directory: str, key: str, writer: int, rounds: int, start) -> None:
    cache = CubinCache(directory)
    start.wait()
    for _ in range(rounds):
        cache.store(key, _payload(writer))


def _reader(directory: str, key: str, writers: int, start, stop, bad) -> None:
    cache = CubinCache(directory)
    valid = {_payload(w) for w in range(writers)}
    start.wait()
    while not stop.is_set():
        data = cache.load(key)
        if data is not None and data not in valid:
            bad.value += 1


@pytest.mark.parametrize("same_content", [True, False])
def test_concurrent_writers_leave_one_valid_file(tmp_path, same_content):
    ctx = mp.get_context("spawn")
    key = cache_key(**BASE)
    writers, rounds = 4, 5
    start = ctx.Barrier(writers + 1)
    stop = ctx.Event()
    bad = ctx.Value("i", 0)
    procs = [
        ctx.Process(target=_writer, args=(str(tmp_path), key, 0 if same_content else w, rounds, start))
        for w in range(writers)
    ]
    reader = ctx.Process(target=_reader, args=(str(tmp_path), key, writers, start, stop, bad))
    for p in procs + [reader]:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    stop.set()
    reader.join(60)
    assert reader.exitcode == 0
    assert bad.value == 0, "a reader saw a torn cubin"
    folder = tmp_path / key[:2]
    assert sorted(p.name for p in folder.iterdir()) == [f"{key}.cubin"], "temporary files were left behind"
    data = (folder / f"{key}.cubin").read_bytes()
    assert data in {_payload(w) for w in range(writers)}
    if same_content:
        assert data == _payload(0)
    assert os.path.getsize(folder / f"{key}.cubin") == len(_payload(0))


def test_versions_come_from_imported_packages(monkeypatch):
    """An imported package's __version__ is used (importlib.metadata costs milliseconds)."""
    import sys
    import types

    from tilec.runtime.cache import _version_of

    fake = types.ModuleType("xdsl")
    fake.__version__ = "9.9.9-test"
    monkeypatch.setitem(sys.modules, "xdsl", fake)
    assert _version_of("xdsl") == "9.9.9-test"
    assert _version_of("no-such-distribution-tilec-test") == "unknown"


def test_versions_of_packages_not_imported_match_their_metadata():
    """llvmlite and cuda-python are not imported by a warm-cache compile: their versions come from
    the names of their .dist-info folders, which must say what importlib.metadata says."""
    from importlib import metadata

    from tilec.runtime.cache import _MODULE_OF, _wheel_version

    for dist in ("xdsl", "llvmlite", "cuda-bindings", "numpy"):
        try:
            want = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
        assert _wheel_version(dist, _MODULE_OF.get(dist, dist)) in (None, want)
    assert _wheel_version("no-such-distribution-tilec-test", "no_such_module_tilec_test") is None
